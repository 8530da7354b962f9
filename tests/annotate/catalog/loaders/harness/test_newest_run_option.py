"""The newest-run choice from the outside: ``load_responses --newest-run``, the
upload form's "Keep the newest run" and the upload service's ``UploadOptions``
all reach ``parse_harness_logs(duplicates=...)``; the default refuses."""
from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils.datastructures import MultiValueDict

from annotate.catalog import forms as upload_forms
from annotate.catalog.loaders.base import LoadError
from annotate.catalog.loaders.harness import _common
from annotate.catalog.services.uploads import UploadOptions, UploadSource, upload_parse
from annotate.management.commands import load_responses
from annotate.models import ResponseSet
from tests.annotate.harness_fixtures import matrix, stored_cells, write_lm_eval_run

JAN = "2025-01-01T10-00-00.000001"
FEB = "2025-02-01T09-30-00.000002"


@pytest.fixture
def two_runs(tmp_path):
    """One task run twice by one model; doc 1 is 1 in January and 0 in February."""
    logs = tmp_path / "logs"
    write_lm_eval_run(logs / "b_first", model="org/m", task="t", date=JAN, lines=[(0, 1.0), (1, 1.0)])
    write_lm_eval_run(logs / "a_rerun", model="org/m", task="t", date=FEB, lines=[(0, 1.0), (1, 0.0)])
    return logs


def _load(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("load_responses", *args, stdout=out, stderr=err)
    return out.getvalue()


@pytest.mark.django_db
def test_the_command_refuses_conflicting_runs_by_default_naming_both_files(two_runs):
    with pytest.raises(CommandError) as err:
        _load("--logs", str(two_runs), "--name", "runs")
    conflict = _common.CONFLICTING_RECORDS.format(
        what="sample 't/1' of model 'org/m'", first_credit=0.0,
        first=f"a_rerun/samples_t_{FEB}.jsonl, row 2, column 'acc'", credit=1.0)
    assert f"b_first/samples_t_{JAN}.jsonl, row 2, column 'acc': {conflict}" in str(err.value)
    assert not ResponseSet.objects.exists()


@pytest.mark.django_db
def test_the_command_loads_the_newest_run_when_asked(two_runs):
    stdout = _load("--logs", str(two_runs), "--name", "runs", "--newest-run")
    assert stdout.startswith("Loaded runs v1: 2 responses")
    assert stored_cells(ResponseSet.objects.get()) == {("t", "t/0", "org/m"): 1.0, ("t", "t/1", "org/m"): 0.0}


@pytest.mark.django_db
def test_the_command_refuses_newest_run_without_logs(tmp_path):
    (tmp_path / "r.csv").write_text("question_id,model,credit\nq1,m,1\n")
    with pytest.raises(CommandError) as err:
        _load("--responses", str(tmp_path / "r.csv"), "--dataset", "d", "--newest-run")
    assert str(err.value) == load_responses.LOGS_ONLY_OPTION.format(option="newest-run")


def test_the_upload_service_passes_the_choice_to_the_parser(two_runs):
    source = UploadSource(logs=(two_runs,))
    assert UploadOptions.of({}).newest_run is False
    newest = UploadOptions.of({"newest_run": "on"})
    assert newest.newest_run is True and newest.as_dict()["newest_run"] is True
    parsed = upload_parse(source=source, options=newest)
    assert matrix(parsed) == {("t", "t/0", "org/m"): 1.0, ("t", "t/1", "org/m"): 0.0}
    with pytest.raises(LoadError):
        upload_parse(source=source, options=UploadOptions.of({}))


def test_the_upload_form_offers_the_choice_for_logs_only():
    logs = MultiValueDict({"logs": [SimpleUploadedFile("log.json", b"{}")]})
    form = upload_forms.ResponseUploadForm({"file_format": "auto", "newest_run": "on"}, logs)
    assert form.is_valid(), form.errors
    assert UploadOptions.of(form.cleaned_data).newest_run is True
    responses = MultiValueDict({"responses": [SimpleUploadedFile("r.csv", b"question_id,model,credit\n")]})
    form = upload_forms.ResponseUploadForm({"file_format": "auto", "newest_run": "on", "dataset": "d"}, responses)
    assert not form.is_valid()
    assert form.errors["newest_run"] == [upload_forms.LOGS_ONLY.format(field="Keep the newest run")]


@pytest.mark.django_db
def test_the_api_takes_the_newest_run_option_too(two_runs, settings):
    import zipfile

    from django.test import Client
    from django.urls import reverse

    from annotate.api.services import api_token_create
    from tests.annotate.factories import make_user

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(two_runs.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(two_runs.parent))
    client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('owner', staff=True))[1]}")
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}  # load inline

    def post(**fields):
        upload = SimpleUploadedFile("logs.zip", archive.getvalue(), content_type="application/zip")
        return client.post(reverse("annotate:api_response_sets"), {"logs": upload, "name": "runs", **fields})

    refused = post()
    assert refused.status_code == 202 and refused.json()["state"] == "failed" and not ResponseSet.objects.exists()
    [problem] = refused.json()["problems"]
    assert problem["message"].startswith("sample 't/1' of model 'org/m' is logged twice with different scores: 0 at ")
    loaded = post(newest_run="true")
    assert loaded.status_code == 202 and loaded.json()["state"] == "done", loaded.content
    assert stored_cells(ResponseSet.objects.get()) == {("t", "t/0", "org/m"): 1.0, ("t", "t/1", "org/m"): 0.0}
