"""Upload jobs whose worker died end: the reaper marks them failed with a
message, removes their stored files, the rows of the half-written set and
stale scratch blocks, without waiting for the next upload.

The worker is a real process, killed with SIGKILL while its job is
"loading" and its response set half written; the rows it left are the
ones a killed load leaves (a "loading" set naming the dead process).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotate.catalog.loaders.limits import scratch_dir
from annotate.catalog.services import upload_store as ustore
from annotate.models import ResponseSet, ResponseSetStatus, UploadJob, UploadState
from annotate.runs.services.stale_runs import STALE_UPLOAD_ERROR, runs_reap_stale

pytestmark = pytest.mark.django_db


def killed_worker_pid() -> int:
    """The pid of a process started and killed with SIGKILL (it never wrote "failed")."""
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    return worker.pid


def test_a_job_whose_worker_was_killed_mid_load_is_failed_and_cleaned(tmp_path, monkeypatch):
    monkeypatch.setattr(ustore, "UPLOAD_ROOT", tmp_path / "uploads")
    now = timezone.now()
    dead = UploadJob.objects.create(token="a" * 32, state=UploadState.LOADING, n_total=100, n_done=40)
    parsing = UploadJob.objects.create(token="b" * 32, state=UploadState.PARSING)
    alive = UploadJob.objects.create(token="c" * 32, state=UploadState.LOADING)
    queued = UploadJob.objects.create(token="d" * 32, state=UploadState.QUEUED)
    UploadJob.objects.exclude(pk=alive.pk).update(updated_at=now - timedelta(minutes=20))
    for job in (dead, parsing, alive, queued):
        folder = tmp_path / "uploads" / job.token
        folder.mkdir(parents=True)
        (folder / "responses.csv").write_text("question,model,score\n")
    half = ResponseSet.objects.create(name="half", file_name="r.csv", checksum="e" * 64, file_format="csv",
                                      status=ResponseSetStatus.LOADING,
                                      loader=f"{socket.gethostname()[:100]}:{killed_worker_pid()}",
                                      heartbeat_at=now - timedelta(minutes=20))
    old_blocks = scratch_dir() / "eip-wide-test-dead"
    old_blocks.mkdir(exist_ok=True)
    (old_blocks / "block-0.npy").write_bytes(b"\0" * 16)
    stale = time.time() - 30 * 60
    for path in (old_blocks / "block-0.npy", old_blocks):
        os.utime(path, (stale, stale))
    live_blocks = scratch_dir() / "eip-wide-test-live"
    live_blocks.mkdir(exist_ok=True)
    try:
        result = runs_reap_stale(older_than=timedelta(minutes=15), now=now)
        assert result.upload_jobs == [dead.pk, parsing.pk]
        states = dict(UploadJob.objects.values_list("pk", "state"))
        assert states == {dead.pk: "failed", parsing.pk: "failed", alive.pk: "loading", queued.pk: "queued"}
        assert UploadJob.objects.get(pk=dead.pk).error == STALE_UPLOAD_ERROR.format(state="loading", minutes=15)
        assert UploadJob.objects.get(pk=parsing.pk).error == STALE_UPLOAD_ERROR.format(state="parsing", minutes=15)
        assert not ResponseSet.objects.filter(pk=half.pk).exists()  # the half-written set is gone
        assert not old_blocks.exists() and live_blocks.exists()
    finally:
        shutil.rmtree(live_blocks, ignore_errors=True)
        shutil.rmtree(old_blocks, ignore_errors=True)


@pytest.mark.django_db(transaction=True)
def test_the_files_of_a_reaped_job_go_after_the_commit(tmp_path, monkeypatch):
    monkeypatch.setattr(ustore, "UPLOAD_ROOT", tmp_path / "uploads")
    job = UploadJob.objects.create(token="f" * 32, state=UploadState.LOADING)
    UploadJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(hours=2))
    folder = tmp_path / "uploads" / job.token
    folder.mkdir(parents=True)
    (folder / "responses.csv").write_text("x\n")
    out = StringIO()
    call_command("reap_stale_runs", "--minutes", "60", stdout=out)
    assert f"upload jobs [{job.pk}]" in out.getvalue()
    assert not folder.exists()
    assert UploadJob.objects.get(pk=job.pk).state == UploadState.FAILED
