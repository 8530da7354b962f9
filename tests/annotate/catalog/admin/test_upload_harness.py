"""The admin upload page with evaluation-harness logs: several files and/or a .zip
of log folders -> preview -> confirm, with the same rules as tabular uploads."""
from __future__ import annotations

import stat
import zipfile

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils.datastructures import MultiValueDict

from annotate.catalog import forms as upload_forms
from annotate.catalog.loaders.base import LoadError
from annotate.catalog.loaders.harness import _common
from annotate.catalog.services import (
    load_plan as load_plan_module,
    upload_store as ustore,
)
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, ResponseSetQuestion, Subject, UploadJob
from tests.annotate.harness_fixtures import (
    assert_same_matrix,
    lm_expected_for,
    stored_cells,
    write_helm_suite,
    write_inspect_logs,
    write_lm_eval_logs,
    write_lm_eval_many,
    zip_folder,
)

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet, ResponseSetQuestion)


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def as_upload(path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes(), content_type="application/octet-stream")


def post_logs(client, files: list, **fields):
    data = {"logs": files, "file_format": "auto", "name": "", **fields}
    return client.post(reverse("admin:annotate_responseset_upload"), data)


def confirm(client, posted):
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    return client.post(posted["Location"], {"token": token})


# -- round trips -----------------------------------------------------------------------------------


def test_a_zip_of_lm_eval_model_folders_previews_then_loads_the_hand_built_matrix(client, uploader, tmp_path,
                                                                                   upload_root):
    generated = write_lm_eval_logs(tmp_path / "outputs", np.random.default_rng(21))
    archive = zip_folder(generated.root, tmp_path / "lm-runs.zip")
    posted = post_logs(client, [as_upload(archive)])
    assert posted.status_code == 302
    page = client.get(posted["Location"])
    html = page.content.decode()
    assert page.status_code == 200 and counts() == dict.fromkeys(counts(), 0)
    preview = page.context["preview"]
    # 3 models; questions: algebra 4 + biology 3 + gsm8k_mini 3 = 10; 2 datasets, 3 subjects
    assert (preview.name, preview.file_format, preview.models_new, preview.questions_new, preview.datasets_new,
            preview.subjects_new) == ("lm-runs", "lm-eval", 3, 10, 2, 3)
    assert page.context["scores_read"] == [("gsm8k_mini", "exact_match", "strict-match"),
                                           ("mmlu_mini_algebra", "acc", "none"),
                                           ("mmlu_mini_biology", "acc", "none")]
    filter_note = ("lm-eval logged filters strict-match, flexible-extract for gsm8k_mini; used 'strict-match' "
                   "(the first in the task's filter_list); choose another with filter=")
    assert filter_note in preview.notes and filter_note.replace("'", "&#x27;") in html
    assert "mmlu_mini_algebra/0" in html  # the first rows are shown
    loaded = confirm(client, posted)
    response_set = ResponseSet.objects.get()
    job = UploadJob.objects.get()
    assert loaded.status_code == 302 and loaded["Location"] == reverse("admin:annotate_responseset_upload_job",
                                                                     args=[job.pk])
    assert (job.state, job.response_set) == ("done", response_set)
    assert_same_matrix(stored_cells(response_set), generated.expected)
    assert list(upload_root.iterdir()) == []  # the unpacked files are gone after the load


def test_several_inspect_files_at_once_load_with_epochs_as_partial_credit(client, uploader, tmp_path):
    generated = write_inspect_logs(tmp_path, np.random.default_rng(22))
    files = sorted(generated.root.glob("*.eval")) + sorted(generated.root.glob("*.json"))
    assert len(files) == 6  # 3 models x 2 tasks: deflated .eval, Zstandard .eval, .json
    posted = post_logs(client, [as_upload(f) for f in files], name="inspect upload")
    preview = client.get(posted["Location"]).context["preview"]
    # mini_math: 4 samples x 3 epochs x 3 models = 12 cells averaged; mini_arc 5 x 3 = 15 single
    assert ("12 of 27 responses had several samples (epochs or repeats, up to 3 per cell); "
            "their mean was used as partial credit") in preview.notes
    confirm(client, posted)
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="inspect upload")), generated.expected)


def test_a_zip_of_a_helm_suite_loads_with_its_run_folders(client, uploader, tmp_path):
    generated = write_helm_suite(tmp_path, np.random.default_rng(23))
    archive = zip_folder(generated.root, tmp_path / "helm.zip", prefix="v1/")  # run folder names hold ":"
    posted = post_logs(client, [as_upload(archive)], file_format="helm")
    confirm(client, posted)
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="helm")), generated.expected)


def test_the_admin_picks_the_filter_and_metric(client, uploader, tmp_path):
    generated = write_lm_eval_logs(tmp_path / "outputs", np.random.default_rng(24))
    samples = sorted(generated.root.glob("org__*/*_gsm8k_mini_*.jsonl"))
    results = sorted(generated.root.glob("org__*/results_2025-01-0*.json"))
    posted = post_logs(client, [as_upload(f) for f in samples + results], file_format="lm-eval",
                       metric="exact_match", log_filter="flexible-extract", name="flexible")
    page = client.get(posted["Location"])
    assert page.context["scores_read"] == [("gsm8k_mini", "exact_match", "flexible-extract")]
    confirm(client, posted)
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="flexible")),
                       lm_expected_for(generated, task="gsm8k_mini", filter="flexible-extract", metric="exact_match"))


# -- the loader's rules ----------------------------------------------------------------------------


def test_a_bad_value_shows_file_line_and_key_and_writes_nothing(client, uploader, tmp_path, upload_root):
    write_lm_eval_many(tmp_path / "runs", np.random.default_rng(25), models=("org/m-1b",), n_docs=5)
    samples = next((tmp_path / "runs" / "org__m-1b").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[3] = lines[3].replace('"acc": 1.0', '"acc": [1, 0]').replace('"acc": 0.0', '"acc": [1, 0]')
    samples.write_text("\n".join(lines) + "\n")
    posted = post_logs(client, [as_upload(zip_folder(tmp_path / "runs", tmp_path / "runs.zip"))])
    page = client.get(posted["Location"])
    assert page.status_code == 400
    # the fourth line holds doc 3
    expected = (f"runs.zip/org__m-1b/{samples.name}, row 4, column 'acc': "
                + _common.LIST_NOT_A_SCORE.format(value="[1, 0]"))
    assert [str(p) for p in page.context["problems"]] == [expected]
    assert counts() == dict.fromkeys(counts(), 0)
    assert list(upload_root.iterdir()) == []


def test_the_same_logs_are_refused_whether_loaded_by_command_or_admin(client, uploader, tmp_path):
    generated = write_lm_eval_logs(tmp_path / "outputs", np.random.default_rng(26))
    call_command("load_responses", "--logs", str(generated.root), "--name", "by command", verbosity=0)
    before = counts()
    posted = post_logs(client, [as_upload(zip_folder(generated.root, tmp_path / "again.zip"))])
    page = client.get(posted["Location"])
    first = ResponseSet.objects.get()
    assert page.status_code == 400
    assert [p.message for p in page.context["problems"]] == [
        load_plan_module.ALREADY_LOADED.format(existing="by command v1", pk=first.pk)]
    assert counts() == before


def test_skip_invalid_on_the_form_loads_the_rest(client, uploader, tmp_path):
    generated = write_lm_eval_many(tmp_path / "runs", np.random.default_rng(27), models=("org/m-1b",), n_docs=4)
    samples = next((tmp_path / "runs" / "org__m-1b").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[0] = lines[0].replace('"acc": 1.0', '"acc": null').replace('"acc": 0.0', '"acc": null')
    samples.write_text("\n".join(lines) + "\n")
    posted = post_logs(client, [as_upload(f) for f in sorted((tmp_path / "runs" / "org__m-1b").iterdir())],
                       skip_invalid="on", name="skipped")
    assert "1 value that is not a score was skipped (null: 1)" in client.get(posted["Location"]).context[
        "preview"].notes
    confirm(client, posted)
    expected = {k: v for k, v in generated.expected.items() if k[1] != "arith_big/0"}
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="skipped")), expected)


# -- safe unpacking --------------------------------------------------------------------------------


def write_zip(path, members: list[tuple[str, bytes]], *, link: str | None = None):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


@pytest.mark.parametrize(("members", "link", "message"), [
    ([("ok.json", b"{}"), ("../escape.json", b"{}")], None,
     ustore.ZIP_UNSAFE_MEMBER.format(member="../escape.json")),
    ([("a/../../escape.json", b"{}")], None, ustore.ZIP_UNSAFE_MEMBER.format(member="a/../../escape.json")),
    ([("/tmp/escape.json", b"{}")], None, ustore.ZIP_UNSAFE_MEMBER.format(member="/tmp/escape.json")),
    ([("C:/escape.json", b"{}")], None, ustore.ZIP_UNSAFE_MEMBER.format(member="C:/escape.json")),
    ([("ok.json", b"{}")], "logs/link.json", ustore.ZIP_LINK_MEMBER.format(member="logs/link.json")),
])
def test_an_unsafe_zip_is_refused_and_nothing_is_unpacked(client, uploader, tmp_path, upload_root, members, link,
                                                          message):
    archive = write_zip(tmp_path / "bad.zip", members, link=link)
    page = post_logs(client, [as_upload(archive)])
    assert page.status_code == 400
    assert [str(p) for p in page.context["problems"]] == [f"bad.zip: {message}"]
    assert list(upload_root.iterdir()) == []  # the whole upload folder is gone
    assert not (upload_root.parent / "escape.json").exists() and not (tmp_path / "escape.json").exists()
    assert counts() == dict.fromkeys(counts(), 0)


def test_a_zip_that_unpacks_past_the_cap_is_refused(client, uploader, tmp_path, upload_root, settings):
    settings.EIP_UPLOAD_MAX_UNPACKED_BYTES = 1000
    # 600 + 600 bytes: each member fits, together they pass 1000 while unpacking
    archive = write_zip(tmp_path / "big.zip", [("a.json", b" " * 600), ("b.json", b" " * 600)])
    page = post_logs(client, [as_upload(archive)])
    assert [str(p) for p in page.context["problems"]] == [
        "big.zip: " + ustore.ZIP_TOO_LARGE.format(limit=1000)]
    assert list(upload_root.iterdir()) == []


def test_a_zip_with_too_many_members_is_refused(tmp_path):
    archive = write_zip(tmp_path / "many.zip", [(f"f{i}.json", b"{}") for i in range(4)])
    with pytest.raises(LoadError) as error:
        ustore.zip_unpack(archive=archive, destination=tmp_path / "out", max_members=3)
    assert [p.message for p in error.value.problems] == [ustore.ZIP_TOO_MANY.format(limit=3)]
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_zip_is_refused(client, uploader, tmp_path):
    page = post_logs(client, [SimpleUploadedFile("logs.zip", b"not a zip at all")])
    assert page.status_code == 400
    assert [p.message for p in page.context["problems"]] == [
        ustore.ZIP_UNREADABLE.format(error="File is not a zip file")]


def test_unpacking_keeps_folders_and_skips_macos_metadata(tmp_path):
    archive = write_zip(tmp_path / "ok.zip", [("m1/results.json", b"{}"), ("m1/sub/s.jsonl", b"x"),
                                              ("__MACOSX/m1/._results.json", b"junk"), ("m2/", b"")])
    written = ustore.zip_unpack(archive=archive, destination=tmp_path / "out")
    assert [p.relative_to(tmp_path / "out").as_posix() for p in written] == ["m1/results.json", "m1/sub/s.jsonl"]
    assert (tmp_path / "out" / "m1" / "sub" / "s.jsonl").read_bytes() == b"x"
    assert not (tmp_path / "out" / "__MACOSX").exists()


# -- the form --------------------------------------------------------------------------------------


def form_errors(data: dict, files: dict) -> dict:
    form = upload_forms.ResponseUploadForm({"file_format": "auto", **data}, MultiValueDict(files))
    assert not form.is_valid()
    return form.errors


def log_file(name: str = "log.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, b"{}")


def test_the_form_takes_either_a_responses_file_or_logs():
    both = form_errors({}, {"responses": [SimpleUploadedFile("r.csv", b"q,m\n")], "logs": [log_file()]})
    assert both["__all__"] == [upload_forms.RESPONSES_OR_LOGS]
    assert form_errors({}, {})["__all__"] == [upload_forms.NOTHING_UPLOADED]


def test_the_form_refuses_tabular_options_with_logs_and_log_options_with_a_file():
    errors = form_errors({"subject_column": "category", "file_format": "wide"},
                         {"logs": [log_file()], "questions": [SimpleUploadedFile("q.csv", b"q\n")]})
    assert errors["subject_column"] == [upload_forms.NOT_FOR_LOGS.format(field="Subject column")]
    assert errors["questions"] == [upload_forms.NOT_FOR_LOGS.format(field="Questions file")]
    assert errors["file_format"] == [upload_forms.WRONG_FORMAT.format(value="wide", kind="tabular",
                                                                      what="harness logs")]
    errors = form_errors({"metric": "acc", "file_format": "inspect"},
                         {"responses": [SimpleUploadedFile("r.csv", b"q,m\n")]})
    assert errors["metric"] == [upload_forms.LOGS_ONLY.format(field="Metric")]
    assert errors["file_format"] == [upload_forms.WRONG_FORMAT.format(value="inspect", kind="harness-log",
                                                                      what="a responses file")]


def test_the_form_refuses_a_filter_for_another_harness_and_two_files_of_one_name():
    errors = form_errors({"file_format": "helm", "log_filter": "strict-match"}, {"logs": [log_file()]})
    assert errors["log_filter"] == [upload_forms.FILTER_LM_EVAL_ONLY.format(value="helm")]
    errors = form_errors({}, {"logs": [log_file("results.json"), log_file("results.json")]})
    assert errors["logs"] == [upload_forms.SAME_FILE_NAME.format(name="results.json")]


def test_the_upload_page_offers_a_multiple_file_input_and_the_log_formats(client, uploader):
    html = client.get(reverse("admin:annotate_responseset_upload")).content.decode()
    assert 'type="file" name="logs" multiple' in html
    for value in ("lm-eval", "inspect", "helm", "opencompass"):
        assert f'<option value="{value}">' in html
