"""Mark scoring and analysis runs whose worker died as failed.

A worker killed mid-run (SIGKILL, a reboot, out of memory) never writes
"failed", so its run would show "running" forever. Workers write
``heartbeat_at`` whenever they record progress; a running run whose last sign
of life is older than the threshold is marked failed with a message saying
so, and can be started again. Run ``manage.py reap_stale_runs`` from cron or
a systemd timer (docs/deploy.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.models import AnalysisRun, RunStatus, ScoringRun
from annotate.services.database import backend_cancel

STALE_ERROR = "worker stopped: no progress for more than {minutes:g} minutes (the run can be started again)"
ERR_THRESHOLD = "older_than must be a positive duration; got {value!r}"


@dataclass(frozen=True)
class ReapResult:
    """Ids of the runs marked failed, and how many of their database queries were cancelled."""

    scoring_runs: list[int]
    analysis_runs: list[int]
    queries_cancelled: int = 0

    @property
    def total(self) -> int:
        return len(self.scoring_runs) + len(self.analysis_runs)


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
    return ReapResult(scoring_runs=reaped[0], analysis_runs=reaped[1], queries_cancelled=cancelled)
