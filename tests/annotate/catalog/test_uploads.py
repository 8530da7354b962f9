"""The one upload service behind the admin upload page, the API and ``load_responses``.

Cast: ``uploader`` (staff with the add/view response set permissions, signed in to
the admin through the test client) and ``script`` (a staff user's API token client).
Every test stores uploads in its own ``UPLOAD_ROOT`` under ``tmp_path``.
"""
from __future__ import annotations

import io
import os
import re
import stat
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.catalog.loaders.base import LoadError
from annotate.catalog.loaders.harness import _common
from annotate.catalog.services import (
    load_plan as plan,
    loading,
    upload_store as ustore,
    uploads as service,
)
from annotate.models import (
    Dataset,
    LanguageModel,
    Question,
    ResponseSet,
    ResponseSetQuestion,
    ScoringRun,
    Subject,
    UploadJob,
)
from scoring.methods import methods as registered_methods
from tests.annotate.factories import all_stored_responses, make_user, stored_responses
from tests.annotate.harness_fixtures import (
    assert_same_matrix,
    lm_expected_for,
    stored_cells,
    write_inspect_json,
    write_lm_eval_logs,
    write_lm_eval_many,
    zip_folder,
)

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet, ResponseSetQuestion)
EMPTY = {model.__name__: 0 for model in TABLES}
RESPONSES = b"question_id,m1,m2\nq1,1,0\nq2,,0.5\n"


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def wipe() -> None:
    """A fresh catalog: the next load starts from an empty database."""
    for model in reversed(TABLES):
        model.objects.all().delete()


def leftovers(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) if root.exists() else []


@pytest.fixture(autouse=True)
def _loads_run_inline(settings):
    """The worker's load runs inline (the admin confirm and the API queue it)."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture(autouse=True)
def upload_root(tmp_path, monkeypatch):
    root = tmp_path / "uploads"
    monkeypatch.setattr(ustore, "UPLOAD_ROOT", root)
    return root


@pytest.fixture
def admin_client():
    user = make_user("uploader", staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["add_responseset", "view_responseset"]))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def script():
    owner = make_user("owner", staff=True)
    return Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=owner)[1]}")


def as_upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/octet-stream")


def admin_post(client: Client, files: list[Path], **fields):
    data = {"logs": [as_upload(f) for f in files], "file_format": "auto", **fields}
    return client.post(reverse("admin:annotate_responseset_upload"), data)


def admin_load(client: Client, files: list[Path], **fields):
    """Upload, preview and confirm through the admin; returns (preview page, confirm answer)."""
    posted = admin_post(client, files, **fields)
    assert posted.status_code == 302
    page = client.get(posted["Location"])
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    return page, client.post(posted["Location"], {"token": token})


def api_post(client: Client, files: list[Path], **fields):
    return client.post(reverse("annotate:api_response_sets"), {"logs": [as_upload(f) for f in files], **fields})


def content(response_set: ResponseSet) -> dict:
    """What a response set holds, by names only (no ids): its counts, every
    question with dataset, external id, subject and text, every model, and the
    credit of each cell."""
    return {
        "set": (response_set.name, response_set.version, response_set.file_format, response_set.checksum,
                response_set.n_questions, response_set.n_models, response_set.n_responses),
        "questions": sorted(Question.objects.values_list("dataset__name", "external_id", "subject__name", "text")),
        "models": sorted(LanguageModel.objects.values_list("name", "family", "parameters_b", "access")),
        "cells": sorted((question.dataset.name, question.external_id, model, credit)
                        for external_id, model, credit in stored_responses(response_set)
                        for question in Question.objects.filter(
                            external_id=external_id, response_set_rows__response_set=response_set)),
    }


def lm_eval_logs(tmp_path: Path) -> tuple[list[Path], list[Path], dict]:
    """lm-eval logs of 3 models: (uploaded: one .zip of the model folders, command: the folder, expected)."""
    generated = write_lm_eval_logs(tmp_path / "outputs", np.random.default_rng(31))
    return [zip_folder(generated.root, tmp_path / "outputs.zip")], [generated.root], generated.expected


def inspect_log(tmp_path: Path) -> tuple[list[Path], list[Path], dict]:
    """One Inspect .json log: 3 samples, sample 2 over two epochs (C then I = 0.5 credit)."""
    path = tmp_path / "2025-05-01_quiz_m.json"
    expected = write_inspect_json(path, model="lab/model-7b", task="quiz", samples=[
        (1, 1, "C", "one?"), (2, 1, "C", "two?"), (2, 2, "I", "two?"), (3, 1, "I", "three?")])
    return [path], [path], expected


# -- one log, three doors, one response set ------------------------------------------------


@pytest.mark.parametrize("make_logs", [lm_eval_logs, inspect_log], ids=["lm-eval zip", "inspect json"])
def test_one_harness_log_gives_the_same_response_set_through_admin_api_and_command(
        make_logs, tmp_path, admin_client, script, upload_root):
    uploaded, on_disk, expected = make_logs(tmp_path)
    loaded = {}

    page, confirmed = admin_load(admin_client, uploaded, name="same log")
    assert page.status_code == 200 and confirmed.status_code == 302
    loaded["admin"] = content(ResponseSet.objects.get())
    assert_same_matrix(stored_cells(ResponseSet.objects.get()), expected)
    wipe()

    answer = api_post(script, uploaded, name="same log")
    assert answer.status_code == 202 and answer.json()["state"] == "done", answer.content
    loaded["api"] = content(ResponseSet.objects.get(pk=answer.json()["response_set"]))
    wipe()

    call_command("load_responses", logs=on_disk, name="same log", verbosity=0)
    loaded["command"] = content(ResponseSet.objects.get())

    assert loaded["admin"] == loaded["api"] == loaded["command"]
    # the cells are the hand-built matrix's observed cells (stored_cells adds NaN for unobserved ones)
    assert {(d, e, m): c for d, e, m, c in loaded["command"]["cells"]} == expected
    assert leftovers(upload_root) == []


def test_the_api_takes_the_log_options_of_the_admin_form(tmp_path, script, upload_root):
    generated = write_lm_eval_logs(tmp_path / "outputs", np.random.default_rng(32))
    samples = sorted(generated.root.glob("org__*/*_gsm8k_mini_*.jsonl"))
    results = sorted(generated.root.glob("org__*/results_2025-01-0*.json"))
    answer = api_post(script, samples + results, file_format="lm-eval", metric="exact_match",
                      log_filter="flexible-extract", name="flexible")
    assert answer.status_code == 202 and answer.json()["state"] == "done", answer.content
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="flexible")),
                       lm_expected_for(generated, task="gsm8k_mini", filter="flexible-extract", metric="exact_match"))
    assert leftovers(upload_root) == []


def test_the_api_skips_invalid_values_when_asked(tmp_path, script):
    generated = write_lm_eval_many(tmp_path / "runs", np.random.default_rng(33), models=("org/m-1b",), n_docs=4)
    samples = next((tmp_path / "runs" / "org__m-1b").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[0] = lines[0].replace('"acc": 1.0', '"acc": null').replace('"acc": 0.0', '"acc": null')
    samples.write_text("\n".join(lines) + "\n")
    files = sorted((tmp_path / "runs" / "org__m-1b").iterdir())
    refused = api_post(script, files, name="skipped")
    assert refused.status_code == 202 and refused.json()["state"] == "failed" and counts() == EMPTY
    answer = api_post(script, files, name="skipped", skip_invalid="true")
    assert answer.status_code == 202 and answer.json()["state"] == "done"
    assert "1 value that is not a score was skipped (null: 1)" in script.get(
        answer.json()["response_set_url"]).json()["notes"]
    expected = {k: v for k, v in generated.expected.items() if k[1] != "arith_big/0"}
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="skipped")), expected)


# -- a bad upload leaves nothing behind ------------------------------------------------------


def bad_lm_eval_logs(tmp_path: Path) -> tuple[Path, Path, str]:
    """One model's logs whose fourth sample line holds a list where a score belongs."""
    write_lm_eval_many(tmp_path / "runs", np.random.default_rng(34), models=("org/m-1b",), n_docs=5)
    samples = next((tmp_path / "runs" / "org__m-1b").glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[3] = lines[3].replace('"acc": 1.0', '"acc": [1, 0]').replace('"acc": 0.0', '"acc": [1, 0]')
    samples.write_text("\n".join(lines) + "\n")
    message = _common.LIST_NOT_A_SCORE.format(value="[1, 0]")
    return zip_folder(tmp_path / "runs", tmp_path / "runs.zip"), tmp_path / "runs", message


def test_a_bad_log_through_the_admin_leaves_nothing(tmp_path, admin_client, upload_root):
    archive, _, message = bad_lm_eval_logs(tmp_path)
    page = admin_client.get(admin_post(admin_client, [archive])["Location"])
    assert page.status_code == 400
    assert [(p.row, p.column, p.message) for p in page.context["problems"]] == [(4, "acc", message)]
    assert counts() == EMPTY
    assert leftovers(upload_root) == []


def test_a_bad_log_through_the_api_leaves_nothing(tmp_path, script, upload_root):
    archive, _, message = bad_lm_eval_logs(tmp_path)
    answer = api_post(script, [archive])
    assert answer.status_code == 202 and answer.json()["state"] == "failed"
    [problem] = answer.json()["problems"]
    assert problem["file"].startswith("runs.zip/org__m-1b/samples_")  # the uploaded name, not the upload folder
    assert (problem["row"], problem["column"], problem["message"]) == (4, "acc", message)
    assert counts() == EMPTY
    assert leftovers(upload_root) == []


def test_a_bad_log_through_the_command_leaves_nothing(tmp_path, upload_root):
    _, folder, message = bad_lm_eval_logs(tmp_path)
    with pytest.raises(CommandError, match=re.escape(f"row 4, column 'acc': {message}")):
        call_command("load_responses", logs=[folder], verbosity=0)
    assert counts() == EMPTY
    assert leftovers(upload_root) == []


def test_an_unsafe_zip_through_the_api_leaves_nothing(tmp_path, script, upload_root):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok.json", "{}")
        zf.writestr("../escape.json", "{}")
    answer = api_post(script, [archive])
    assert answer.status_code == 400
    assert answer.json()["problems"] == [{"file": "bad.zip", "row": None, "column": None,
                                          "message": ustore.ZIP_UNSAFE_MEMBER.format(member="../escape.json")}]
    assert counts() == EMPTY
    assert leftovers(upload_root) == []
    assert not (upload_root.parent / "escape.json").exists()


# -- parsed once, checked once ---------------------------------------------------------------


@pytest.fixture
def calls(monkeypatch):
    """Counts of parser runs (harness and tabular) and of load plans (``plan._plan``)."""
    counted = {"parse": 0, "plan": 0}

    def counting(key, real):
        def wrapper(*args, **kwargs):
            counted[key] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(service, "parse_harness_logs", counting("parse", service.parse_harness_logs))
    monkeypatch.setattr(service, "parse_files", counting("parse", service.parse_files))
    monkeypatch.setattr(loading, "_plan", counting("plan", plan._plan))
    return counted


def test_the_admin_parses_and_plans_once_for_preview_and_confirm(tmp_path, admin_client, calls, upload_root):
    uploaded, _, expected = lm_eval_logs(tmp_path)
    posted = admin_post(admin_client, uploaded, name="once")
    assert calls == {"parse": 0, "plan": 0}  # storing reads nothing
    assert admin_client.get(posted["Location"]).status_code == 200
    assert calls == {"parse": 1, "plan": 1}
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    assert {p.name for p in (upload_root / token).iterdir()} == {"logs", ustore.CACHE_FILE, ustore.CACHE_KEY_FILE}
    assert admin_client.get(posted["Location"]).status_code == 200  # the page reloaded: the kept plan is shown
    assert calls == {"parse": 1, "plan": 1}
    assert admin_client.post(posted["Location"], {"token": token}).status_code == 302
    assert calls == {"parse": 1, "plan": 1}  # confirm neither parsed nor checked again
    assert_same_matrix(stored_cells(ResponseSet.objects.get(name="once")), expected)
    assert leftovers(upload_root) == []


def test_the_api_and_the_command_parse_and_plan_once(tmp_path, script, calls):
    uploaded, on_disk, _ = lm_eval_logs(tmp_path)
    assert api_post(script, uploaded, name="by api").json()["state"] == "done"
    assert calls == {"parse": 1, "plan": 1}
    wipe()
    call_command("load_responses", logs=on_disk, name="by command", verbosity=0)
    assert calls == {"parse": 2, "plan": 2}


def test_confirm_checks_again_when_the_catalog_changed_since_the_preview(tmp_path, admin_client, calls):
    uploaded, on_disk, _ = lm_eval_logs(tmp_path)
    posted = admin_post(admin_client, uploaded, name="admin")
    admin_client.get(posted["Location"])
    # meanwhile the same logs are loaded by the command: 1 parse + 1 plan more
    call_command("load_responses", logs=on_disk, name="command", verbosity=0)
    assert calls == {"parse": 2, "plan": 2}
    before = counts()
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    page = admin_client.post(posted["Location"], {"token": token})
    assert calls == {"parse": 2, "plan": 3}  # the kept parse, but a fresh check (in the worker)
    job = UploadJob.objects.get()
    assert page.status_code == 302 and page["Location"] == reverse("admin:annotate_responseset_upload_job",
                                                                   args=[job.pk])
    first = ResponseSet.objects.get()
    assert (job.state, job.error) == ("failed", "nothing was loaded")
    assert [p["message"] for p in job.problems] == [plan.ALREADY_LOADED.format(existing="command v1", pk=first.pk)]
    progress = admin_client.get(page["Location"])
    assert [str(p) for p in progress.context["problems"]] == [
        f"{job.problems[0]['file']}: " + plan.ALREADY_LOADED.format(existing="command v1", pk=first.pk)]
    assert counts() == before


def test_confirm_parses_again_when_the_stored_bytes_changed(admin_client, calls, upload_root):
    data = {"responses": SimpleUploadedFile("scores.csv", RESPONSES), "file_format": "wide", "dataset": "D",
            "id_column": "question_id", "name": ""}
    posted = admin_client.post(reverse("admin:annotate_responseset_upload"), data)
    admin_client.get(posted["Location"])
    assert calls == {"parse": 1, "plan": 1}
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    (upload_root / token / "responses" / "scores.csv").write_bytes(RESPONSES.replace(b"q1,1,0", b"q1,0,0"))
    assert admin_client.post(posted["Location"], {"token": token}).status_code == 302
    assert calls == {"parse": 2, "plan": 2}  # the kept parse no longer matches the checksum
    assert all_stored_responses() == [
        ("q1", "m1", 0.0), ("q1", "m2", 0.0), ("q2", "m2", 0.5)]


def test_a_load_refuses_a_plan_made_for_another_parse(tmp_path):
    _uploaded, on_disk, _ = inspect_log(tmp_path)
    options = service.UploadOptions(name="x")
    checked = service.upload_check(source=service.UploadSource(logs=tuple(on_disk)), options=options)
    other = service.upload_parse(source=service.UploadSource(logs=tuple(on_disk)), options=options)
    with pytest.raises(ValueError, match=loading.PLAN_MISMATCH):
        loading.response_set_load(parsed=other, name="x", plan=checked.plan)
    assert counts() == EMPTY


# -- storing files ---------------------------------------------------------------------------


class FakeUpload:
    """A client-side file with an arbitrary (hostile) name."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def chunks(self, chunk_size=None):
        yield self._data


def test_stored_files_get_safe_base_names_in_a_private_folder(upload_root):
    upload = ustore.upload_store(files={"responses": FakeUpload("..\\..\\C:\\x\\evil\x00.csv", RESPONSES),
                                         "questions": FakeUpload("..", b"question_id\nq1\n")},
                                  options=service.UploadOptions(file_format="wide", dataset="D"))
    folder = upload_root / upload.token
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert leftovers(upload_root) == [upload.token, f"{upload.token}/questions", f"{upload.token}/questions/questions",
                                      f"{upload.token}/responses", f"{upload.token}/responses/evil.csv"]
    assert upload.options.name == "evil"  # the default name: the responses file's stem
    assert len(upload.checksum) == 64
    # the same upload, JSON-safe for a session and back
    assert service.StoredUpload.from_session(upload.token, upload.as_session()) == upload


def test_a_store_needs_a_responses_file_or_logs_not_both(upload_root):
    options = service.UploadOptions()
    with pytest.raises(ValueError, match=ustore.NO_FILES):
        ustore.upload_store(files={"questions": FakeUpload("q.csv", b"q\n")}, options=options)
    with pytest.raises(ValueError, match=ustore.RESPONSES_OR_LOGS):
        ustore.upload_store(files={"responses": FakeUpload("r.csv", b"q\n")}, logs=[FakeUpload("l.json", b"{}")],
                             options=options)
    assert leftovers(upload_root) == []


def test_a_store_keeps_nothing_when_a_zip_is_unsafe(tmp_path, upload_root):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("/etc/escape.json", "{}")
    with pytest.raises(LoadError):
        ustore.upload_store(logs=[FakeUpload("good.json", b"{}"), FakeUpload("bad.zip", buffer.getvalue())],
                             options=service.UploadOptions())
    assert leftovers(upload_root) == []


def test_the_sweep_removes_only_stale_uploads(upload_root):
    options = service.UploadOptions(file_format="wide", dataset="D")
    old = ustore.upload_store(files={"responses": FakeUpload("old.csv", RESPONSES)}, options=options)
    day_ago = time.time() - ustore.UPLOAD_MAX_AGE_S - 60
    os.utime(upload_root / old.token, (day_ago, day_ago))
    new = ustore.upload_store(files={"responses": FakeUpload("new.csv", RESPONSES)}, options=options)  # sweeps
    assert sorted(p.name for p in upload_root.iterdir()) == [new.token]
    assert ustore.uploads_sweep(max_age_s=0) == 1
    assert list(upload_root.iterdir()) == []


def test_a_token_that_is_not_one_is_refused():
    with pytest.raises(ValueError, match="token must be 32 lowercase hex digits"):
        ustore.upload_discard(token="../../etc")


# -- the checksum comes before any parsing; "score now" after the load ---------------------


def test_bytes_already_loaded_are_refused_before_any_parsing(tmp_path, admin_client, script, calls, upload_root):
    path = tmp_path / "scores.csv"
    path.write_bytes(RESPONSES)
    call_command("load_responses", responses=path, dataset="D", verbosity=0)
    assert calls == {"parse": 1, "plan": 1}
    existing = ResponseSet.objects.get()
    message = plan.ALREADY_LOADED.format(existing=str(existing), pk=existing.pk)
    answer = script.post(reverse("annotate:api_response_sets"),
                         {"responses": SimpleUploadedFile("scores.csv", RESPONSES), "dataset": "D"})
    assert answer.status_code == 400 and answer.json()["problems"][0]["message"] == message
    data = {"responses": SimpleUploadedFile("again.csv", RESPONSES), "file_format": "wide", "dataset": "D",
            "id_column": "question_id", "name": ""}
    posted = admin_client.post(reverse("admin:annotate_responseset_upload"), data)
    page = admin_client.get(posted["Location"])  # the preview
    assert page.status_code == 400 and [p.message for p in page.context["problems"]] == [message]
    with pytest.raises(CommandError, match="already loaded"):
        call_command("load_responses", responses=path, dataset="D", name="other", verbosity=0)
    assert calls == {"parse": 1, "plan": 1}  # none of the three parsed anything
    assert leftovers(upload_root) == [] and UploadJob.objects.count() == 0


def test_score_now_starts_a_scoring_run_with_the_chosen_methods_alpha_and_models(admin_client, upload_root):
    data = {"responses": SimpleUploadedFile("scores.csv", RESPONSES), "file_format": "wide", "dataset": "D",
            "id_column": "question_id", "name": ""}
    posted = admin_client.post(reverse("admin:annotate_responseset_upload"), data)
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    admin_client.get(posted["Location"])
    progress_url = admin_client.post(posted["Location"], {"token": token})["Location"]
    job = UploadJob.objects.get()
    m2 = LanguageModel.objects.get(name="m2")
    page = admin_client.get(progress_url)
    assert [m.name for m in page.context["form"].fields["models"].queryset] == ["m1", "m2"]
    refused = admin_client.post(progress_url, {"methods": ["simple_rank"], "alpha": "1", "models": [m2.pk]})
    assert refused.status_code == 400 and refused.context["form"].errors == {
        "alpha": ["alpha must be strictly between 0 and 1"]}
    assert ScoringRun.objects.count() == 0
    started = admin_client.post(progress_url, {"methods": ["simple_rank"], "alpha": "0.5", "models": [m2.pk]})
    run = ScoringRun.objects.get()
    # lands on the site's run page, not the admin's change form
    assert started.status_code == 302
    assert started["Location"] == reverse("annotate:run_detail", kwargs={"run_id": run.pk})
    assert (run.response_set, run.status, run.params["alpha"]) == (job.response_set, "done", 0.5)  # ran inline
    required = [m.key for m in registered_methods() if m.required]
    assert run.params["methods"] == [m.key for m in registered_methods() if m.key in {"simple_rank", *required}]
    assert list(run.models_used.all()) == [m2]
