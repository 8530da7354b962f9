"""Background tasks of the scoring runs (run by ``manage.py run_worker``).

Arguments are JSON-serialisable ids; each task loads its rows and calls a
service. Services enqueue them by name (:mod:`annotate.core.task_names`), not
directly.
"""
from __future__ import annotations

from django_tasks import task

from annotate.models import ScoringRun
from annotate.runs.services.scoring import scoring_run_execute


@task()
def run_scoring(run_id: int) -> dict:
    """Execute queued scoring run ``run_id``.

    Returns ``{"run_id": ..., "status": "done"}``. A failing method raises
    (the run is then stored as failed with its error text, and the task result
    records the traceback).
    """
    run = ScoringRun.objects.select_related("response_set").get(pk=run_id)
    run = scoring_run_execute(run=run)
    return {"run_id": run.pk, "status": str(run.status)}
