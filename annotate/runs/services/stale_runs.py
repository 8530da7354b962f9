"""Mark scoring and analysis runs, and upload jobs, whose worker died as failed.

A worker killed mid-run (SIGKILL, a reboot, out of memory) never writes
"failed", so its run would show "running" forever. Workers write
``heartbeat_at`` whenever they record progress; a running run whose last sign
of life is older than the threshold is marked failed with a message saying
so, and can be started again. An upload job (parsing or loading) whose last
progress write is older than the threshold is marked failed too, its stored
files and any scratch blocks of a parse that stopped are removed, and the
rows of the half-written response set go (the next upload is not needed for
this). Run ``manage.py reap_stale_runs`` from cron or a systemd timer
(docs/deploy.md).
"""
from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.catalog import response_sets_abandoned_remove, scratch_dir, upload_discard
from annotate.core import backend_cancel
from annotate.models import AnalysisRun, RunStatus, ScoringRun, UploadJob, UploadState

STALE_ERROR = "worker stopped: no progress for more than {minutes:g} minutes (the run can be started again)"
STALE_UPLOAD_ERROR = (
    "the worker stopped while {state} this upload (no progress for more than {minutes:g} minutes); nothing was "
    "loaded: upload the files again"
)
ERR_THRESHOLD = "older_than must be a positive duration; got {value!r}"


@dataclass(frozen=True)
class ReapResult:
    """Ids of the runs marked failed, and how many of their database queries were cancelled."""

    scoring_runs: list[int]
    analysis_runs: list[int]
    queries_cancelled: int = 0
    upload_jobs: list[int] = dataclasses.field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.scoring_runs) + len(self.analysis_runs) + len(self.upload_jobs)


@transaction.atomic
def runs_reap_stale(*, older_than: timedelta, now: datetime | None = None) -> ReapResult:
    """Fail every running scoring or analysis run silent for longer than ``older_than``.

    Parameters
    ----------
    older_than : timedelta
        How long a running run may go without a progress write (its
        ``heartbeat_at``, or when it was created/started if it never wrote one).
    now : datetime, optional
        The current time (tests); default ``timezone.now()``.

    Returns
    -------
    ReapResult
        Ids of the runs marked failed. Queued and finished runs are never touched.
        On PostgreSQL, the query a reaped run's worker may still have running
        (its backend, recorded as ``db_backend_pid`` when the run started) is
        cancelled with ``pg_cancel_backend``, unless that pid now belongs to a
        connection opened after the run's last sign of life;
        ``queries_cancelled`` counts them.

    Raises
    ------
    ValueError
        If ``older_than`` is not a positive timedelta.
    """
    if not isinstance(older_than, timedelta) or older_than <= timedelta(0):
        raise ValueError(ERR_THRESHOLD.format(value=older_than))
    now = timezone.now() if now is None else now
    cutoff = now - older_than
    error = STALE_ERROR.format(minutes=older_than.total_seconds() / 60)
    reaped, backends = [], []
    for model, fallback in ((ScoringRun, "created_at"), (AnalysisRun, "started_at")):
        stale = (
            model.objects.select_for_update()
            .annotate(last_seen=Coalesce("heartbeat_at", fallback, "created_at"))
            .filter(Q(status=RunStatus.RUNNING) & Q(last_seen__lt=cutoff))
        )
        rows = sorted(stale.values_list("pk", "db_backend_pid", "last_seen"))
        ids = [pk for pk, _, _ in rows]
        model.objects.filter(pk__in=ids, status=RunStatus.RUNNING).update(
            status=RunStatus.FAILED, error=error, finished_at=now
        )
        reaped.append(ids)
        backends.extend((pid, seen) for _, pid, seen in rows if pid is not None)
    cancelled = sum(backend_cancel(pid=pid, started_before=seen) for pid, seen in backends)
    jobs = _reap_upload_jobs(cutoff=cutoff, now=now, minutes=older_than.total_seconds() / 60)
    return ReapResult(scoring_runs=reaped[0], analysis_runs=reaped[1], queries_cancelled=cancelled,
                      upload_jobs=jobs)


def _reap_upload_jobs(*, cutoff: datetime, now: datetime, minutes: float) -> list[int]:
    """Fail the parsing or loading upload jobs silent since ``cutoff``; remove
    their files, the rows of loads that died and scratch blocks older than ``cutoff``."""
    stale = list(UploadJob.objects.select_for_update()
                 .filter(state__in=[UploadState.PARSING, UploadState.LOADING], updated_at__lt=cutoff)
                 .order_by("pk").values_list("pk", "token", "state"))
    for pk, token, state in stale:
        UploadJob.objects.filter(pk=pk, state=state).update(
            state=UploadState.FAILED, updated_at=now,
            error=STALE_UPLOAD_ERROR.format(state="parsing" if state == UploadState.PARSING else "loading",
                                            minutes=minutes))
        transaction.on_commit(lambda token=token: upload_discard(token=token))
    response_sets_abandoned_remove(stale_s=max(0.0, (now - cutoff).total_seconds()))
    _scratch_remove_older(cutoff_s=time.time() - (now - cutoff).total_seconds())
    return [pk for pk, _, _ in stale]


def _scratch_remove_older(*, cutoff_s: float) -> None:
    """Remove the scratch folders (dense blocks of a parse) in which nothing
    was written since ``cutoff_s`` (seconds since the epoch): a live parse
    writes blocks as it goes."""
    root = scratch_dir()
    for folder in root.iterdir():
        if not folder.is_dir():
            continue
        newest = max((entry.stat().st_mtime for entry in folder.rglob("*")), default=folder.stat().st_mtime)
        if max(newest, folder.stat().st_mtime) < cutoff_s:
            shutil.rmtree(folder, ignore_errors=True)
