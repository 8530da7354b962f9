"""Background tasks of the paper's analyses (run by ``manage.py run_worker``).

Arguments are JSON-serialisable ids; each task loads its rows and calls a
service. Services enqueue them by name (:mod:`annotate.core.task_names`), not
directly.
"""
from __future__ import annotations

from django_tasks import task

from annotate.analyses.services import analysis_run_execute
from annotate.models import AnalysisRun


@task()
def run_analysis(analysis_id: int) -> dict:
    """Execute queued analysis run ``analysis_id`` (see
    :func:`annotate.analyses.services.analysis_run_execute`).

    Returns ``{"analysis_id": ..., "status": "done"}``; a failing analysis
    raises (the run is stored as failed with its error text).
    """
    run = AnalysisRun.objects.select_related("response_set").get(pk=analysis_id)
    run = analysis_run_execute(run=run)
    return {"analysis_id": run.pk, "status": str(run.status)}
