"""Loads in short transactions: the set stays hidden until its last commit, and a
batch that meets a locked database is written again."""
from __future__ import annotations

import pytest
from django.db import OperationalError

from annotate.api.selectors import response_set_get, response_sets_list
from annotate.catalog.matrix_store import store_path
from annotate.catalog.selectors.catalog import response_set_by_key, response_set_labels, response_sets_loaded
from annotate.catalog.services import loading
from annotate.catalog.services.uploads import UploadOptions, UploadSource, upload_check, upload_load
from annotate.models import ResponseSet, ResponseSetQuestion, ResponseSetStatus
from annotate.runs.selectors.results import response_sets_with_runs
from annotate.runs.services.scoring import ERR_STILL_LOADING, scoring_run_create
from tests.annotate.factories import n_stored_responses

# 3 models x 4 questions, all observed: 12 responses, written in batches of 2 questions (6 cells each)
CSV = "model,question_id,credit\n" + "".join(f"m{m},q{q},{(m + q) % 2}\n" for q in range(4) for m in range(3))


@pytest.fixture
def checked(tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", 2)
    path = tmp_path / "batches.csv"
    path.write_text(CSV)
    return upload_check(source=UploadSource(responses=path), options=UploadOptions(dataset="batches"))


@pytest.mark.django_db
def test_a_loading_set_is_hidden_from_every_selector_until_its_last_commit(checked):
    seen = []

    def progress(done, total):
        loading_set = ResponseSet.objects.get(name="batches")
        seen.append((done, total, loading_set.status,
                     ResponseSetQuestion.objects.filter(response_set=loading_set).count(),
                     response_sets_list(), response_set_get(response_set_id=loading_set.pk),
                     list(response_sets_loaded()), response_set_by_key(key="batches"), response_set_labels(),
                     response_sets_with_runs()))
        assert not store_path(loading_set).exists()  # still a temporary store
        with pytest.raises(ValueError, match="still loading") as error:
            scoring_run_create(response_set=loading_set)
        assert str(error.value) == ERR_STILL_LOADING.format(value=loading_set)

    response_set = upload_load(checked=checked, progress=progress)
    assert seen == [(done, 12, ResponseSetStatus.LOADING, done // 3, [], None, [], None, [], [])
                    for done in (6, 12)]
    assert store_path(response_set).is_dir()  # in place once loaded
    assert response_set.status == ResponseSetStatus.LOADED
    assert response_set_by_key(key="batches") == response_set and response_sets_list() == [response_set]
    assert "created_by_load" not in ResponseSet.objects.get().summary  # the bookkeeping is gone once loaded


@pytest.mark.django_db(transaction=True)
def test_a_batch_that_meets_a_locked_database_is_written_again(checked, monkeypatch):
    monkeypatch.setattr(loading, "LOCKED_WAIT_S", 0)
    real, calls = loading._write_response_batch, []

    def locked_once(*args):
        calls.append(len(args[2]))  # questions of the batch
        if len(calls) == 2:
            raise OperationalError("database is locked")
        real(*args)

    monkeypatch.setattr(loading, "_write_response_batch", locked_once)
    response_set = upload_load(checked=checked)
    assert calls == [2, 2, 2]  # the second batch twice
    assert n_stored_responses(response_set) == 12
    assert ResponseSet.objects.get().status == ResponseSetStatus.LOADED


@pytest.mark.django_db
def test_an_upload_whose_worker_died_is_marked_failed(tmp_path):
    from datetime import timedelta

    from django.utils import timezone

    from annotate.catalog.services.upload_jobs import ERR_ABANDONED, upload_jobs_reap_stale
    from annotate.models import UploadJob, UploadState

    old = timezone.now() - timedelta(minutes=20)
    for k, state in enumerate((UploadState.LOADING, UploadState.PARSING, UploadState.QUEUED, UploadState.DONE)):
        UploadJob.objects.create(token=f"{k:032x}", state=state)
    fresh = UploadJob.objects.create(token="f" * 32, state=UploadState.LOADING)
    UploadJob.objects.exclude(pk=fresh.pk).update(updated_at=old)
    assert upload_jobs_reap_stale(stale_s=15 * 60) == 2
    assert list(UploadJob.objects.order_by("pk").values_list("state", flat=True)) == [
        "failed", "failed", "queued", "done", "loading"]
    assert UploadJob.objects.filter(state="failed").first().error == ERR_ABANDONED.format(minutes=15)


@pytest.mark.django_db(transaction=True)
def test_a_failure_in_what_is_published_with_the_set_leaves_nothing_loaded(checked):
    def published(response_set):
        raise RuntimeError("the job row could not be written")

    with pytest.raises(RuntimeError, match="job row"):
        upload_load(checked=checked, published=published)
    assert ResponseSet.objects.count() == 0 and ResponseSetQuestion.objects.count() == 0
    assert response_sets_list() == []
