"""Several ``manage.py run_worker`` processes share one queue on PostgreSQL.

django-tasks-db claims a task with ``SELECT ... FOR UPDATE SKIP LOCKED`` (its
``DBTaskResultQuerySet.get_locked``) inside a transaction that marks it
running with the worker's id, so two workers never claim the same task; the
services then claim their run once more (a scoring or analysis run goes from
queued to running in one ``UPDATE ... WHERE status = 'queued'``, an upload
job likewise), so a task delivered twice would still run once.

Checked here with real worker processes on the test database:

* 40 queued jobs (scoring runs, upload loads, analysis runs) run by 4
  workers: every job ran exactly once (one task result each, succeeded, one
  worker id; every run done) and the work spread over the workers; each
  worker logged that it was warm before the jobs were released, and exited
  with code 0 on SIGTERM (the start-up and drain times of one and of four
  workers on the same 40 jobs are printed; ``python -m bench workers``
  measures them);
* a worker killed (SIGKILL) while it runs a job loses only that job: the
  other worker runs every other job, and the reaper
  (:func:`annotate.runs.services.stale_runs.runs_reap_stale`) fails the one left
  "running".

PostgreSQL only: SQLite's test database is private to the test process (and
there the claim is ``BEGIN EXCLUSIVE``, one writer at a time).
"""
from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from tests.annotate.faults.many_workers import (
    DATABASE,
    Round,
    queue_jobs,
    run_round,
    start_workers,
    stop_workers,
    task_results,
    wide_csv,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("several worker processes need a database server (DATABASE_URL=postgres://...)")


def _run_round(tmp_path: Path, n_workers: int, tag: str, seed: int) -> Round:
    done = run_round(tmp_path, n_workers, tag, seed)
    assert done.codes == [0] * n_workers, done.logs
    assert all(s is not None and s > 0 for s in done.startup_s), done.logs  # each logged that it was warm
    return done


def _check_each_ran_once(results: list[dict], ids: dict[str, list[int]]) -> None:
    from annotate.models import AnalysisRun, RunStatus, ScoringRun, UploadJob, UploadState

    assert len(results) == 40
    assert [r["status"] for r in results] == ["SUCCESSFUL"] * 40, [r for r in results if r["status"] != "SUCCESSFUL"]
    assert all(len(r["worker_ids"]) == 1 for r in results)  # claimed once, by one worker
    by_task = {}
    for r in results:
        key = (r["task_path"].rsplit(".", 1)[-1], r["args_kwargs"]["args"][0])
        assert key not in by_task  # one task per job
        by_task[key] = r
    assert sorted(k for t, k in by_task if t == "run_scoring") == sorted(ids["scoring"])
    assert sorted(k for t, k in by_task if t == "load_upload") == sorted(ids["upload"])
    assert sorted(k for t, k in by_task if t == "run_analysis") == sorted(ids["analysis"])
    assert set(ScoringRun.objects.filter(pk__in=ids["scoring"]).values_list("status", flat=True)) == {RunStatus.DONE}
    assert set(AnalysisRun.objects.filter(pk__in=ids["analysis"]).values_list("status", flat=True)) == {RunStatus.DONE}
    jobs = UploadJob.objects.filter(pk__in=ids["upload"])
    assert set(jobs.values_list("state", flat=True)) == {UploadState.DONE}
    assert len(set(jobs.values_list("response_set_id", flat=True))) == 12  # one response set per upload


def test_four_workers_run_forty_jobs_each_exactly_once(tmp_path, capsys):
    one = _run_round(tmp_path, 1, "one", seed=1)
    _check_each_ran_once(one.results, one.ids)
    four = _run_round(tmp_path, 4, "four", seed=2)
    _check_each_ran_once(four.results, four.ids)
    per_worker = {w: sum(r["worker_ids"] == [w] for r in four.results) for w in ("w0", "w1", "w2", "w3")}
    with capsys.disabled():
        print(f"\n40 jobs (16 scoring, 12 upload, 12 analysis), drained by warm workers: 1 worker "
              f"{one.drain_s:.1f} s, 4 workers {four.drain_s:.1f} s (ratio {four.drain_s / one.drain_s:.2f}); "
              f"start-up {max(one.startup_s):.1f} s and {max(four.startup_s):.1f} s; jobs per worker {per_worker}")
    assert sum(n > 0 for n in per_worker.values()) >= 2  # the work was shared
    # The times are printed, not asserted: another job's load can reverse them. ``python -m bench
    # workers`` times these 40 jobs with 1, 2 and 4 workers, interleaved and repeated.


def test_a_killed_worker_loses_only_its_job_which_the_reaper_fails(tmp_path):
    from annotate.models import RunStatus, ScoringRun
    from annotate.runs.services.stale_runs import runs_reap_stale

    ids = queue_jobs(tmp_path, n_scoring=8, n_uploads=0, n_analyses=0, tag="kill", seed=3,
                 methods=("eip", "accuracy", "irt_1pl", "irt_2pl"))
    workers = start_workers(2, batch=False)
    try:
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline:
            for r in task_results():
                if r["status"] == "RUNNING":
                    run_id = r["args_kwargs"]["args"][0]
                    if ScoringRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
                        victim = (int(r["worker_ids"][0][1:]), run_id)
                        break
            time.sleep(0.05)
        assert victim is not None, "no job was seen running"
        killed, lost_run = victim
        os.killpg(workers[killed].pid, signal.SIGKILL)
        workers[killed].wait(30)
        survivor = workers[1 - killed].process
        deadline = time.monotonic() + 300
        others = [pk for pk in ids["scoring"] if pk != lost_run]
        while time.monotonic() < deadline and ScoringRun.objects.filter(pk__in=others).exclude(
                status=RunStatus.DONE).exists():
            assert survivor.poll() is None, workers[1 - killed].log()
            time.sleep(0.2)
    finally:
        stop_workers(workers)
    assert set(ScoringRun.objects.filter(pk__in=others).values_list("status", flat=True)) == {RunStatus.DONE}
    assert ScoringRun.objects.get(pk=lost_run).status == RunStatus.RUNNING  # nobody could say it failed
    reaped = runs_reap_stale(older_than=timedelta(minutes=60), now=timezone.now() + timedelta(minutes=61))
    assert reaped.scoring_runs == [lost_run]
    lost = ScoringRun.objects.get(pk=lost_run)
    assert lost.status == RunStatus.FAILED and lost.error.startswith("worker stopped: no progress")
    assert set(ScoringRun.objects.filter(pk__in=others).values_list("status", flat=True)) == {RunStatus.DONE}


def test_the_claim_is_a_row_lock_that_skips_locked_rows():
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext
    from django_tasks_db.models import DBTaskResult

    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        DBTaskResult.objects.ready().get_locked()
    assert any("FOR UPDATE SKIP LOCKED" in q["sql"] for q in queries.captured_queries), queries.captured_queries


def test_a_worker_killed_mid_load_leaves_an_upload_job_that_the_reaper_fails_and_cleans(tmp_path):
    from annotate.catalog.services.upload_jobs import upload_job_submit
    from annotate.catalog.services.upload_store import _folder, upload_store
    from annotate.catalog.services.uploads import UploadOptions
    from annotate.models import ResponseSet, ResponseSetStatus, UploadJob, UploadState
    from annotate.runs.services.stale_runs import STALE_UPLOAD_ERROR, runs_reap_stale

    with override_settings(TASKS=DATABASE):
        upload = upload_store(
            files={"responses": SimpleUploadedFile("big.csv", wide_csv(30_000, 40, seed=11))},
            options=UploadOptions(file_format="wide", dataset="Killed", name="killed-mid-load"))
        job = upload_job_submit(upload=upload)
    token = UploadJob.objects.get(pk=job.pk).token
    assert _folder(token).exists()
    workers = start_workers(1, batch=False)
    try:
        state = None
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            state = UploadJob.objects.values_list("state", flat=True).get(pk=job.pk)
            if state == UploadState.LOADING or (state == UploadState.PARSING and time.monotonic() > deadline - 170):
                break
            assert state in (UploadState.QUEUED, UploadState.PARSING), state
            time.sleep(0.02)
        assert state in (UploadState.PARSING, UploadState.LOADING), "the load was never seen under way"
        os.killpg(workers[0].pid, signal.SIGKILL)
        workers[0].wait(30)
    finally:
        stop_workers(workers)
    killed_in = UploadJob.objects.get(pk=job.pk)
    assert killed_in.state in (UploadState.PARSING, UploadState.LOADING)  # nobody could say it failed
    reaped = runs_reap_stale(older_than=timedelta(minutes=60), now=timezone.now() + timedelta(minutes=61))
    assert reaped.upload_jobs == [job.pk]
    failed = UploadJob.objects.get(pk=job.pk)
    word = "parsing" if killed_in.state == UploadState.PARSING else "loading"
    assert failed.state == UploadState.FAILED
    assert failed.error == STALE_UPLOAD_ERROR.format(state=word, minutes=60)
    assert not _folder(token).exists()  # its files are removed
    assert not ResponseSet.objects.filter(status=ResponseSetStatus.LOADING).exists()  # no half-written set left
    assert not ResponseSet.objects.filter(name="killed-mid-load").exists()
