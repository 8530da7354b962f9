"""Look-alike names: cleaned on load (NFC, zero-width and format characters, no-break spaces); case variants
refused or merged (issue 13)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.catalog.loaders.names import clean_name
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.services import name_variants as nv
from annotate.catalog.services.loading import response_set_load
from annotate.catalog.services.uploads import UploadOptions, UploadSource, upload_check, upload_load
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject
from tests.annotate.factories import all_stored_responses, n_stored_responses, stored_responses

pytestmark = pytest.mark.django_db

NFD_E = "e\u0301"  # e + combining acute: NFC is "\u00e9"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def load_long(tmp_path: Path, text: str, name: str = "set", merge: bool = False, file: str = "r.csv"):
    path = write(tmp_path, file, "dataset,question_id,subject,model,credit\n" + text)
    options = UploadOptions(file_format="long", name=name, merge_case_variants=merge)
    checked = upload_check(source=UploadSource(responses=path), options=options)
    return upload_load(checked=checked)


@pytest.mark.parametrize(("raw", "clean"), [
    (f"caf{NFD_E}", "caf\u00e9"),                 # NFD -> NFC
    ("Llama\u00a03", "Llama 3"),                  # no-break space
    ("Llama\u202f3", "Llama 3"),                  # narrow no-break space
    ("gpt\u200b-4", "gpt-4"),                     # zero-width space
    ("gpt\u200c-4\u200d", "gpt-4"),               # zero-width non-joiner / joiner
    ("\ufeffgpt-4\u2060", "gpt-4"),               # byte-order mark, word joiner
    ("  two   spaces\u00a0 ", "two spaces"),      # strip and collapse
])
def test_clean_name_gives_the_canonical_spelling(raw, clean):
    assert clean_name(raw) == clean


@pytest.mark.parametrize("variant", [f"caf{NFD_E}", "caf\u00e9\u200b", "\ufeffcaf\u00e9"])
def test_look_alike_model_dataset_subject_and_question_names_load_as_the_existing_rows(tmp_path, variant):
    first = load_long(tmp_path, "caf\u00e9,q\u00e9,caf\u00e9,caf\u00e9,1\n", name="one")
    second = load_long(tmp_path, f"{variant},q{NFD_E},{variant},{variant},0\n", name="two", file="s.csv")
    assert (Dataset.objects.count(), Subject.objects.count(), LanguageModel.objects.count(),
            Question.objects.count()) == (1, 1, 1, 1)
    assert LanguageModel.objects.get().name == "caf\u00e9" and Question.objects.get().external_id == "q\u00e9"
    assert sorted((rs.name, c) for rs in ResponseSet.objects.all() for _, _, c in stored_responses(rs)) == [
        ("one", 1.0), ("two", 0.0)]
    assert first.pk != second.pk
    # two distinct changed spellings: the variant (dataset, subject, model) and the NFD question id
    assert any(note.startswith("2 name(s) were normalised") for note in second.summary["notes"])


def test_a_no_break_space_in_a_model_name_is_the_same_model(tmp_path):
    load_long(tmp_path, "D,q1,,Llama 3,1\nD,q2,,Llama\u00a03,0\n")
    assert list(LanguageModel.objects.values_list("name", flat=True)) == ["Llama 3"]
    assert n_stored_responses() == 2


def test_case_variants_in_one_file_are_refused_naming_both_rows(tmp_path):
    with pytest.raises(nv.LoadError) as caught:
        load_long(tmp_path, "D,q1,,GPT-4,1\nD,q2,,gpt-4,0\nD,Q1,,GPT-4,1\n")
    messages = [str(p) for p in caught.value.problems]
    assert messages == [
        "r.csv, row 3: " + nv.CASE_VARIANT_IN_UPLOAD.format(kind="model", given="gpt-4", other="GPT-4",
                                                           where="r.csv, row 2"),
        "r.csv, row 4: " + nv.CASE_VARIANT_IN_UPLOAD.format(kind="question id (dataset 'D')", given="Q1",
                                                           other="q1", where="r.csv, row 2"),
    ]
    assert ResponseSet.objects.count() == 0 and LanguageModel.objects.count() == 0


def test_case_variants_of_stored_names_are_refused_naming_the_stored_spelling(tmp_path):
    load_long(tmp_path, "Bench,q1,Math,GPT-4,1\n", name="one")
    with pytest.raises(nv.LoadError) as caught:
        load_long(tmp_path, "bench,q2,MATH,gpt-4,0\n", name="two", file="s.csv")
    assert [str(p) for p in caught.value.problems] == [
        "s.csv, row 2: " + nv.CASE_VARIANT_STORED.format(kind=kind, given=given, other=other)
        for kind, given, other in (("dataset", "bench", "Bench"), ("subject", "MATH", "Math"),
                                   ("model", "gpt-4", "GPT-4"))
    ]
    assert ResponseSet.objects.count() == 1


def test_merge_case_variants_keeps_the_stored_spelling_and_says_so(tmp_path):
    load_long(tmp_path, "Bench,q1,Math,GPT-4,1\n", name="one")
    loaded = load_long(tmp_path, "bench,Q1,MATH,gpt-4,0\nbench,q2,math,Gpt-4o,1\n", name="two", file="s.csv",
                       merge=True)
    assert list(Dataset.objects.values_list("name", flat=True)) == ["Bench"]
    assert list(Subject.objects.values_list("name", flat=True)) == ["Math"]
    assert sorted(LanguageModel.objects.values_list("name", flat=True)) == ["GPT-4", "Gpt-4o"]
    assert sorted(Question.objects.values_list("external_id", flat=True)) == ["q1", "q2"]
    assert stored_responses(loaded) == [
        ("q1", "GPT-4", 0.0), ("q2", "Gpt-4o", 1.0)]
    assert loaded.options["merge_case_variants"] is True
    assert nv.MERGED_NOTE.format(count=5, examples="'bench' -> 'Bench', 'MATH' -> 'Math', 'math' -> 'Math', "
                                                   "'gpt-4' -> 'GPT-4', 'Q1' -> 'q1'") in loaded.summary["notes"]


def test_merging_two_spellings_of_one_cell_is_refused_as_a_second_credit(tmp_path):
    with pytest.raises(nv.LoadError, match="a second credit for question 'q1' and model 'GPT-4'"):
        load_long(tmp_path, "D,q1,,GPT-4,1\nD,q1,,gpt-4,0\n", merge=True)
    assert ResponseSet.objects.count() == 0


def test_the_command_flag_merges_case_variants(tmp_path):
    path = write(tmp_path, "w.csv", "question_id,GPT-4,gpt-4\nq1,1,\nq2,,0\n")
    with pytest.raises(CommandError, match="model 'gpt-4' differs only by case from 'GPT-4'"):
        call_command("load_responses", "--responses", str(path), "--dataset", "D", stdout=io.StringIO(),
                     stderr=io.StringIO())
    call_command("load_responses", "--responses", str(path), "--dataset", "D", "--merge-case-variants",
                 stdout=io.StringIO(), stderr=io.StringIO())
    assert all_stored_responses() == [
        ("q1", "GPT-4", 1.0), ("q2", "GPT-4", 0.0)]


def test_service_level_loads_without_the_upload_service_are_refused_too(tmp_path):
    path = write(tmp_path, "w.csv", "question_id,m1,M1\nq1,1,0\n")
    parsed = parse_files(responses=path, file_format="wide", dataset="D")
    with pytest.raises(nv.LoadError, match=r"model 'M1' differs only by case from 'm1' at w\.csv"):
        response_set_load(parsed=parsed, name="x")


def test_the_admin_form_and_the_api_carry_the_merge_option(tmp_path, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from django.urls import reverse

    from annotate.api.services import api_token_create
    from annotate.catalog.forms import ResponseUploadForm
    from tests.annotate.factories import make_user

    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}  # load inline
    content = b"question_id,GPT-4,gpt-4\nq1,1,\nq2,,0\n"
    form = ResponseUploadForm({"dataset": "D", "file_format": "wide", "merge_case_variants": "on"},
                              {"responses": SimpleUploadedFile("w.csv", content)})
    assert form.is_valid(), form.errors
    assert UploadOptions.of(form.cleaned_data).merge_case_variants is True
    client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('owner', staff=True))[1]}")
    # the upload is accepted (202) and loaded by the worker; the refusal is the job's state
    refused = client.post(reverse("annotate:api_response_sets"),
                          {"responses": SimpleUploadedFile("w.csv", content), "dataset": "D"})
    assert refused.status_code == 202, refused.content
    status = client.get(refused["Location"]).json()
    assert status["state"] == "failed"
    assert "model 'gpt-4' differs only by case from 'GPT-4'" in str(status)
    assert LanguageModel.objects.count() == 0 and n_stored_responses() == 0
    merged = client.post(reverse("annotate:api_response_sets"),
                         {"responses": SimpleUploadedFile("w.csv", content), "dataset": "D",
                          "merge_case_variants": "true"})
    assert merged.status_code == 202, merged.content
    assert client.get(merged["Location"]).json()["state"] == "done"
    assert list(LanguageModel.objects.values_list("name", flat=True)) == ["GPT-4"]
    assert n_stored_responses() == 2
