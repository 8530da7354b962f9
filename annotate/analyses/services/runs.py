"""Analysis runs: create (queued), execute (inline or in the task worker),
enqueue, and find a stored result.

Rules
-----
- Parameters are checked and stored complete (defaults filled in); runs with
  the same kind, response set and parameters share a ``params_key``.
- Only a queued run can be executed; claiming it is one conditional UPDATE,
  so two workers never execute the same run.
- Progress (0..1 and a message) is written to the row while the run works,
  at most every ``PROGRESS_INTERVAL_S`` seconds, so a page can show it.
- The result is stored in the same UPDATE that marks the run done. A failure
  leaves the run "failed" with a sentence (:func:`annotate.core.run_failure_text`) and no result;
  the exception is re-raised.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping

from django.utils import timezone

from annotate.analyses.selectors import analysis_data, analysis_run_by_params_key
from annotate.analyses.services.compute import COMPUTE, plain
from annotate.analyses.services.human_labels import check_label
from annotate.analyses.services.params import NEEDS_RESPONSE_SET, READS_OWN_DATA, check_kind, check_params, params_key
from annotate.core import RUN_ANALYSIS, backend_pid, run_failure_text, task_enqueue
from annotate.models import AnalysisKind, AnalysisRun, ResponseSet, RunStatus

Progress = Callable[[float, str], None]

PROGRESS_INTERVAL_S = 0.5
ERR_RESPONSE_SET_NEEDED = "the {kind} analysis needs a saved response set; got {value!r}"
ERR_RESPONSE_SET_UNUSED = "the {kind} analysis simulates its data and takes no response set; got {value!r}"
ERR_NOT_QUEUED = "analysis run {run_id} is {status!r}; only a queued run can be executed"


def _check_response_set(kind: str, response_set) -> ResponseSet | None:
    if kind in NEEDS_RESPONSE_SET:
        if not isinstance(response_set, ResponseSet) or response_set.pk is None:
            raise ValueError(ERR_RESPONSE_SET_NEEDED.format(kind=kind, value=response_set))
        return response_set
    if response_set is not None:
        raise ValueError(ERR_RESPONSE_SET_UNUSED.format(kind=kind, value=response_set))
    return None


def analysis_run_create(
    *, kind: str, response_set: ResponseSet | None = None, params: Mapping | None = None, user=None
) -> AnalysisRun:
    """Create a queued analysis run (nothing is computed yet).

    Parameters
    ----------
    kind : str
        An :class:`annotate.models.AnalysisKind` value.
    response_set : ResponseSet or None
        Required for the analyses of stored data; must be None for
        ``scaling`` and ``case_study``, which simulate theirs.
    params : mapping, optional
        The kind's parameters (see ``annotate.analyses.services.params.SPECS``);
        missing ones take their defaults.
    user : User, optional
        Stored as ``created_by``.

    Returns
    -------
    AnalysisRun
        Status "queued", progress 0, ``params`` complete and sorted.

    Raises
    ------
    ValueError
        On an unknown kind, a missing or unexpected response set, or a bad
        parameter (the messages are the ``ERR_*`` constants here and in
        ``params``).
    """
    kind = check_kind(kind)
    response_set = _check_response_set(kind, response_set)
    checked = check_params(kind, params)
    if kind == AnalysisKind.HUMAN_LABELS and response_set is not None:
        check_label(response_set=response_set, label=checked["label"])
    return AnalysisRun.objects.create(
        kind=kind, response_set=response_set, params=checked,
        params_key=params_key(kind, None if response_set is None else response_set.pk, checked),
        status=RunStatus.QUEUED, created_by=user,
    )


def analysis_run_enqueue(*, run: AnalysisRun):
    """Hand a queued run to the task worker (``annotate.analyses.tasks.run_analysis``).

    Returns the django-tasks ``TaskResult``. With the database backend the
    run waits for ``manage.py run_worker``; with ``TASKS_BACKEND=immediate`` it
    runs before this returns (reload ``run`` to see the outcome).

    Raises
    ------
    ValueError
        If the run is not queued.
    """
    if run.status != RunStatus.QUEUED:
        raise ValueError(ERR_NOT_QUEUED.format(run_id=run.pk, status=str(run.status)))
    return task_enqueue(RUN_ANALYSIS, run.pk)


def analysis_run_start(
    *, kind: str, response_set: ResponseSet | None = None, params: Mapping | None = None, user=None
) -> tuple[AnalysisRun, bool]:
    """Start a run for a web request: reuse a queued or running run with the
    same kind, response set and parameters, else create one and enqueue it.

    Returns
    -------
    (AnalysisRun, bool)
        The run and whether it was created by this call.

    Raises
    ------
    ValueError
        As :func:`analysis_run_create`.
    """
    kind = check_kind(kind)
    response_set = _check_response_set(kind, response_set)
    active = analysis_run_latest(kind=kind, response_set=response_set, params=params,
                                 statuses=(RunStatus.QUEUED, RunStatus.RUNNING))
    if active is not None:
        return active, False
    run = analysis_run_create(kind=kind, response_set=response_set, params=params, user=user)
    analysis_run_enqueue(run=run)
    run.refresh_from_db()
    return run, True


class _Reporter:
    """Writes progress to the row (throttled) and passes it on."""

    def __init__(self, run: AnalysisRun, progress: Progress | None) -> None:
        self.run, self.progress, self.last = run, progress, 0.0

    def __call__(self, fraction: float, message: str) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        now = time.monotonic()
        if now - self.last >= PROGRESS_INTERVAL_S or fraction in (0.0, 1.0):
            self.last = now
            AnalysisRun.objects.filter(pk=self.run.pk, status=RunStatus.RUNNING).update(
                progress=fraction, message=message[:200], heartbeat_at=timezone.now())
        self.run.progress, self.run.message = fraction, message[:200]
        if self.progress is not None:
            self.progress(fraction, message)


def analysis_run_execute(*, run: AnalysisRun, progress: Progress | None = None) -> AnalysisRun:
    """Compute a queued run and store its result.

    Parameters
    ----------
    run : AnalysisRun
        A queued run (see :func:`analysis_run_create`).
    progress : callable (fraction, message) -> None, optional
        Called as the analysis advances (fraction in [0, 1]); the same values
        are written to ``run.progress``/``run.message`` (throttled).

    Returns
    -------
    AnalysisRun
        Status "done", progress 1, ``result`` the JSON-able dict of
        ``annotate.analyses.services.compute``, ``duration_s`` the computing
        wall time.

    Raises
    ------
    ValueError
        If the run is not queued (``ERR_NOT_QUEUED``; the run is unchanged).
    Exception
        Whatever the analysis raised: the run is then "failed", ``error``
        holds a sentence (:func:`annotate.core.run_failure_text`), ``result`` stays NULL, and the
        exception is re-raised.

    References
    ----------
    EIP paper, sections 3.2-3.5 and 4, appendices E and G (see
    :mod:`scoring.analyses`).
    """
    started_at = timezone.now()
    claimed = AnalysisRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, progress=0.0, message="starting", error="", started_at=started_at,
        heartbeat_at=started_at, db_backend_pid=backend_pid())
    if not claimed:
        run.refresh_from_db()
        raise ValueError(ERR_NOT_QUEUED.format(run_id=run.pk, status=str(run.status)))
    run.status, run.started_at = RunStatus.RUNNING, started_at
    reporter = _Reporter(run, progress)
    t0 = time.perf_counter()
    try:
        data = None
        if run.kind in READS_OWN_DATA:
            data = run.response_set
        elif run.kind in NEEDS_RESPONSE_SET:
            reporter(0.0, "reading the response matrix")
            data = analysis_data(response_set=run.response_set)
        result = plain(COMPUTE[run.kind](data, dict(run.params), reporter))
        json.dumps(result, allow_nan=False)  # strict JSON or fail here, not in the database
        duration = time.perf_counter() - t0
        AnalysisRun.objects.filter(pk=run.pk).update(
            status=RunStatus.DONE, progress=1.0, message="done", result=result, finished_at=timezone.now(),
            duration_s=duration)
    except BaseException as exc:  # also Ctrl-C in a command: never leave it "running"
        AnalysisRun.objects.filter(pk=run.pk).update(
            status=RunStatus.FAILED, error=run_failure_text(exc, step="computing the analysis"), result=None,
            finished_at=timezone.now(), duration_s=time.perf_counter() - t0)
        run.refresh_from_db()
        raise
    run.refresh_from_db()
    if progress is not None:
        progress(1.0, "done")
    return run


# --- reads ---------------------------------------------------------------------------


def analysis_run_latest(
    *, kind: str, response_set: ResponseSet | None = None, params: Mapping | None = None,
    statuses: tuple[str, ...] = (RunStatus.DONE,),
) -> AnalysisRun | None:
    """The newest run of ``kind`` on ``response_set`` with these parameters
    (defaults filled in) in one of ``statuses``, or None."""
    kind = check_kind(kind)
    checked = check_params(kind, params)
    key = params_key(kind, None if response_set is None else response_set.pk, checked)
    return analysis_run_by_params_key(params_key=key, statuses=statuses)


def kind_label(kind: str) -> str:
    return AnalysisKind(check_kind(kind)).label


def analysis_run_delete(*, entry: AnalysisRun) -> None:
    """Delete a stored analysis run (from the admin); a report that read it reads the next stored one, or none."""
    entry.delete()
