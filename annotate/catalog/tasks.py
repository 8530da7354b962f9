"""Background tasks of the catalog: uploads and deletions (run by ``manage.py run_worker``).

Arguments are JSON-serialisable ids; each task loads its rows and calls a
service. Services enqueue them by name (:mod:`annotate.core.task_names`), not
directly.
"""
from __future__ import annotations

from django_tasks import task

from annotate.catalog.services.deletion import response_set_delete
from annotate.catalog.services.upload_jobs import upload_job_run
from annotate.models import UploadJob


@task()
def load_upload(job_id: int) -> dict:
    """Parse, check and load stored upload ``job_id`` (see
    :func:`annotate.catalog.services.upload_jobs.upload_job_run`).

    Returns ``{"job_id": ..., "state": "done" | "failed", "response_set": id or None}``.
    """
    job = upload_job_run(job=UploadJob.objects.get(pk=job_id))
    return {"job_id": job.pk, "state": str(job.state), "response_set": job.response_set_id}


@task()
def delete_response_set(response_set_id: int) -> dict:
    """Delete response set ``response_set_id`` with its responses, runs and results
    (see :func:`annotate.catalog.services.deletion.response_set_delete`).

    Returns ``{"response_set": "<name vN>", "n_responses": ...}``; a set a study
    uses raises (nothing deleted).
    """
    outcome = response_set_delete(response_set_id=response_set_id)
    return {"response_set": outcome.response_set, "n_responses": outcome.n_responses}
