"""Task functions run by the django-tasks worker (``manage.py run_worker``).

Arguments are JSON-serialisable ids; each task loads its rows and calls a
service. Services enqueue them by name (:mod:`annotate.task_names`, e.g. through
:func:`annotate.services.scoring.scoring_run_enqueue`), not directly.
"""
from __future__ import annotations

from django_tasks import task

from annotate.models import AnalysisRun, ScoringRun, UploadJob
from annotate.services.analyses import analysis_run_execute
from annotate.services.deletion import response_set_delete
from annotate.services.scoring import scoring_run_execute
from annotate.services.upload_jobs import upload_job_run


@task()
def load_upload(job_id: int) -> dict:
    """Parse, check and load stored upload ``job_id`` (see
    :func:`annotate.services.upload_jobs.upload_job_run`).

    Returns ``{"job_id": ..., "state": "done" | "failed", "response_set": id or None}``.
    """
    job = upload_job_run(job=UploadJob.objects.get(pk=job_id))
    return {"job_id": job.pk, "state": str(job.state), "response_set": job.response_set_id}


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


@task()
def run_analysis(analysis_id: int) -> dict:
    """Execute queued analysis run ``analysis_id`` (see
    :func:`annotate.services.analyses.analysis_run_execute`).

    Returns ``{"analysis_id": ..., "status": "done"}``; a failing analysis
    raises (the run is stored as failed with its error text).
    """
    run = AnalysisRun.objects.select_related("response_set").get(pk=analysis_id)
    run = analysis_run_execute(run=run)
    return {"analysis_id": run.pk, "status": str(run.status)}


@task()
def delete_response_set(response_set_id: int) -> dict:
    """Delete response set ``response_set_id`` with its responses, runs and results
    (see :func:`annotate.services.deletion.response_set_delete`).

    Returns ``{"response_set": "<name vN>", "n_responses": ...}``; a set a study
    uses raises (nothing deleted).
    """
    outcome = response_set_delete(response_set_id=response_set_id)
    return {"response_set": outcome.response_set, "n_responses": outcome.n_responses}
