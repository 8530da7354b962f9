"""The upload pages count the set and the catalog the same way, and a models file's
name column can be chosen (page, command, loader)."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.catalog.loaders import _tabular_common as common
from annotate.catalog.loaders.metadata import read_models_file
from annotate.models import LanguageModel, Question, ResponseSet

pytestmark = pytest.mark.django_db

# q3 is in the questions file but nobody answered it.
RESPONSES = b"question_id,m-1,m-2\nq1,1,0\nq2,,0.5\n"
QUESTIONS = (b"question_id,category,question\nq1,math,What is 2+2?\nq2,law,Is it legal?\n"
             b"q3,law,Is it fair?\n")
# LiveCodeBench's layout: the names the responses file uses are in model_repr,
# and a column called "model" holds something else (a display name).
MODELS = (b"model_repr,model,family\nm-1,Model One,alpha\nm-2,Model Two,beta\n")


def upload(client, **fields):
    data = {
        "responses": SimpleUploadedFile("scores.csv", RESPONSES, content_type="text/csv"),
        "questions": SimpleUploadedFile("questions.csv", QUESTIONS, content_type="text/csv"),
        "models": SimpleUploadedFile("models.csv", MODELS, content_type="text/csv"),
        "file_format": "wide", "dataset": "Demo", "subject_column": "category", "keep_columns": "",
        "id_column": "question_id", "name": "", **fields,
    }
    return client.post(reverse("admin:annotate_responseset_upload"), data)


def test_preview_and_done_page_give_the_same_counts_of_the_set_and_the_catalog(client, uploader):
    posted = upload(client, model_column="model_repr")
    assert posted.status_code == 302
    page = client.get(posted["Location"])
    html = page.content.decode()
    preview = page.context["preview"]
    # in the set: q1, q2 (3 cells); the catalog gains q1, q2, q3; q3 has no response
    assert (preview.n_questions, preview.questions_new, preview.questions_without_response) == (2, 3, 1)
    assert ('<tr><th scope="row">questions</th><td>2</td><td>3</td><td>0</td></tr>') in html
    assert ('<tr><th scope="row">models</th><td>2</td><td>2</td><td>0</td></tr>') in html
    assert ('<p id="preview-unanswered">1 question of the files has no response in this upload: stored with its '
            'text, not part of this set.</p>') in html
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    done = client.get(client.post(posted["Location"], {"token": token})["Location"])
    text = done.content.decode()
    response_set = ResponseSet.objects.get()
    assert (response_set.n_questions, response_set.n_models, response_set.n_responses) == (2, 2, 3)
    assert "3 responses, 2 questions, 2 models;\n  1 more question of the files stored with its text" in text
    assert Question.objects.count() == 3
    # the chosen column names the models; the file's "model" column is kept as metadata
    stored = {m.name: (m.family, m.metadata.get("model")) for m in LanguageModel.objects.all()}
    assert stored == {"m-1": ("alpha", "Model One"), "m-2": ("beta", "Model Two")}


def test_a_models_file_without_the_chosen_column_is_refused_with_the_way_out(client, uploader):
    posted = upload(client, models=SimpleUploadedFile("models.csv", b"model_repr,family\nm-1,a\nm-2,b\n"))
    page = client.get(posted["Location"])
    assert page.status_code == 400
    shown = [str(p) for p in page.context["problems"]]
    assert shown[0].startswith("models.csv, row 1: missing column(s) 'model'")
    assert shown[1] == "models.csv, row 1: " + common.MODEL_COLUMN_HINT
    assert ResponseSet.objects.count() == 0 and Question.objects.count() == 0


def test_a_blank_model_column_field_means_model(client, uploader):
    posted = upload(client, model_column="  ", models=SimpleUploadedFile("models.csv", b"model\nm-1\nm-2\n"))
    assert client.get(posted["Location"]).status_code == 200


def test_the_command_takes_the_model_column(tmp_path):
    for name, data in (("r.csv", RESPONSES), ("q.csv", QUESTIONS), ("m.csv", MODELS)):
        (tmp_path / name).write_bytes(data)
    summary = call_command("load_responses", responses=str(tmp_path / "r.csv"), questions=str(tmp_path / "q.csv"),
                           models=str(tmp_path / "m.csv"), dataset="Demo", subject_column="category",
                           model_column="model_repr", verbosity=0)
    assert "3 responses (2 questions x 2 models with a response); new: 3 questions, 2 models" in summary
    assert sorted(LanguageModel.objects.values_list("name", flat=True)) == ["m-1", "m-2"]
    with pytest.raises(CommandError, match="--model-column"):
        call_command("load_responses", logs=[str(tmp_path / "r.csv")], model_column="model_repr", verbosity=0)


def test_a_blank_or_non_string_model_column_is_a_value_error(tmp_path):
    (tmp_path / "m.csv").write_bytes(MODELS)
    for bad in ("", "   ", None, 3):
        with pytest.raises(ValueError, match="model_column must be a non-blank string"):
            read_models_file(tmp_path / "m.csv", model_column=bad)


def test_real_livecodebench_snapshot_loads_with_model_repr_and_counts_agree(shared_data, tmp_path):
    """LiveCodeBench's first snapshot: 400 questions answered, 1,055 in problems.csv."""
    folder = shared_data / "livecodebench"
    with (folder / "models.csv").open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["snapshot"] == "2024-04-17"]
    models = tmp_path / "models.csv"
    with models.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with (folder / "pass1_2024-04-17.csv").open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split(",")
        answered = sum(1 for line in handle if line.strip())
    with (folder / "problems.csv").open(encoding="utf-8") as handle:
        listed = sum(1 for line in handle if line.strip()) - 1
    err = io.StringIO()
    summary = call_command("load_responses", responses=str(folder / "pass1_2024-04-17.csv"),
                           questions=str(folder / "problems.csv"), models=str(models), dataset="LiveCodeBench",
                           subject_column="platform", model_column="model_repr", stderr=err)
    cells = answered * (len(header) - 1)
    assert f"0 of {cells:,} model-question cells not observed" in summary  # thousands separated
    # problems.csv holds no question text: the suggestion says so instead of "none of 0"
    assert "question text of LiveCodeBench: suggested plain text with math: the files hold no question text" \
        in err.getvalue()
    response_set = ResponseSet.objects.get()
    assert (response_set.n_questions, response_set.n_models) == (answered, len(header) - 1)
    assert Question.objects.count() == listed
    from annotate.catalog.selectors.uploads import response_set_unanswered_questions
    assert response_set_unanswered_questions(response_set=response_set) == listed - answered
    assert set(LanguageModel.objects.values_list("name", flat=True)) == set(header[1:])


@pytest.mark.parametrize("value", ["model\x00repr", "m" * 10_000, "99999999999999999999"])
def test_a_hostile_model_column_is_a_clear_refusal_and_writes_nothing(client, uploader, value):
    posted = upload(client, model_column=value)
    if posted.status_code == 302:  # the form took it: the loader names the missing column
        page = client.get(posted["Location"])
        assert page.status_code == 400
        assert f"missing column(s) {value!r}" in str(page.context["problems"][0])
    else:
        assert posted.status_code == 400 and "model_column" in posted.context["form"].errors
    assert ResponseSet.objects.count() == 0 and Question.objects.count() == 0
