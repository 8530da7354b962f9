"""Uploads loaded by the task worker, with their progress.

The admin confirm and the API store an upload (:func:`annotate.catalog.services.upload_store.upload_store`),
then :func:`upload_job_submit` refuses at once files whose bytes are already
loaded (a SHA-256 of the stored bytes, before any parsing) and queues the rest
for ``manage.py run_worker`` (``annotate.catalog.tasks.load_upload``).
:func:`upload_job_run` parses, checks and loads there, writing the job's state
(queued -> parsing -> loading -> done or failed) and its counts as it goes; the
upload's files are removed whatever happens.
"""
from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.services.load_plan import ALREADY_LOADED
from annotate.catalog.services.loading import LOAD_STALE_S, response_sets_abandoned_remove, with_lock_retries
from annotate.catalog.services.upload_store import (
    checked_upload,
    relabeled_error,
    stored_bytes_checksum,
    stored_source,
    upload_discard,
)
from annotate.catalog.services.uploads import StoredUpload, upload_check_limits, upload_load, upload_refuse_loaded
from annotate.core import LOAD_UPLOAD, task_enqueue
from annotate.models import ResponseSet, UploadJob, UploadState

logger = logging.getLogger(__name__)

ERR_LOAD = "nothing was loaded"
ERR_UNEXPECTED = "the load stopped on an unexpected error ({kind}); nothing was loaded"
ERR_ABANDONED = "the worker stopped while loading this upload (no progress for {minutes:g} minutes); nothing was loaded"


def upload_jobs_reap_stale(*, stale_s: float = LOAD_STALE_S) -> int:
    """Mark uploads whose worker died (no progress for ``stale_s`` seconds) failed,
    and remove the rows of loads that died (see
    :func:`annotate.catalog.services.loading.response_sets_abandoned_remove`).

    Returns
    -------
    int
        How many upload jobs were marked failed.
    """
    response_sets_abandoned_remove(stale_s=stale_s)
    cutoff = timezone.now() - timedelta(seconds=stale_s)
    return UploadJob.objects.filter(state__in=[UploadState.PARSING, UploadState.LOADING],
                                    updated_at__lt=cutoff).update(
        state=UploadState.FAILED, error=ERR_ABANDONED.format(minutes=stale_s / 60), updated_at=timezone.now())


def _update(job: UploadJob, **fields: object) -> None:
    """Write ``fields`` and ``updated_at`` (every progress write is the job's heartbeat for the reaper)."""
    fields = {**fields, "updated_at": timezone.now()}
    for name, value in fields.items():
        setattr(job, name, value)
    with_lock_retries(lambda: UploadJob.objects.filter(pk=job.pk).update(**fields))


def _refuse_loaded_logs(upload: StoredUpload, checksum: str) -> None:
    """Harness logs: the same stored bytes already loaded by an earlier job."""
    if upload.files.get("logs") is None:
        return
    earlier = (UploadJob.objects.filter(checksum=checksum, state=UploadState.DONE, response_set__isnull=False)
               .select_related("response_set").first())
    if earlier is not None:
        existing: ResponseSet = earlier.response_set
        raise LoadError([Problem(file=str(upload.options.name or "upload"), message=ALREADY_LOADED.format(
            existing=str(existing), pk=existing.pk))])


def upload_job_submit(*, upload: StoredUpload, user: AbstractBaseUser | None = None) -> UploadJob:
    """Queue a stored upload for the worker, after a checksum check that parses nothing.

    Parameters
    ----------
    upload : StoredUpload
        From :func:`annotate.catalog.services.upload_store.upload_store` (the admin's
        preview may have kept its parse; the worker reuses it).
    user : User or None
        Stored as ``uploaded_by`` of the response set.

    Returns
    -------
    UploadJob
        State "queued" (or already "done"/"failed" with ``TASKS_BACKEND=immediate``).

    Raises
    ------
    LoadError
        Over the size or cell limits (:func:`annotate.catalog.services.uploads.upload_check_limits`,
        counted from the stored bytes), or the same bytes are already loaded
        (``ALREADY_LOADED``, naming the response set); the upload's files are
        removed.
    """
    upload_jobs_reap_stale()
    try:
        upload_check_limits(source=stored_source(upload), options=upload.options)
        checksum = stored_bytes_checksum(upload=upload)
        upload_refuse_loaded(source=stored_source(upload))
        _refuse_loaded_logs(upload, checksum)
    except BaseException:
        upload_discard(token=upload.token)
        raise
    job = UploadJob.objects.create(token=upload.token, files=upload.files, options=upload.options.as_dict(),
                                   checksum=checksum, created_by=user)
    task_enqueue(LOAD_UPLOAD, job.pk)
    job.refresh_from_db()
    return job


def upload_job_run(*, job: UploadJob) -> UploadJob:
    """Parse, check and load a queued upload, recording its progress (the worker's task).

    A job that is not queued is returned unchanged (a task delivered twice).
    Failures are stored on the job (``error`` and, for a refused upload, every
    problem with file, row and column), never raised, except unexpected ones,
    which are stored and then raised for the task's record.

    Returns
    -------
    UploadJob
        "done" with its ``response_set``, or "failed".
    """
    if job.state != UploadState.QUEUED:
        return job
    upload = StoredUpload.from_session(job.token, {"files": job.files, "options": job.options})
    try:
        _update(job, state=UploadState.PARSING)
        checked = checked_upload(upload)
        total = checked.preview.n_responses
        _update(job, state=UploadState.LOADING, n_total=total, n_done=0)
        try:
            # "done" is written in the transaction that makes the set visible: never listed while "loading"
            response_set = upload_load(
                checked=checked, user=job.created_by, progress=lambda done, _total: _update(job, n_done=done),
                published=lambda loaded: _update(job, state=UploadState.DONE, n_done=total, response_set=loaded),
                text_format=upload.options.text_format)
        except (LoadError, ValueError) as error:
            raise relabeled_error(error, upload) from None
        _update(job, state=UploadState.DONE, n_done=total, response_set=response_set)
    except LoadError as error:
        _update(job, state=UploadState.FAILED, error=ERR_LOAD,
                problems=[dataclasses.asdict(p) if isinstance(p, Problem) else {"message": str(p)}
                          for p in error.listed()])
    except ValueError as error:
        _update(job, state=UploadState.FAILED, error=str(error))
    except Exception as error:
        _update(job, state=UploadState.FAILED, error=ERR_UNEXPECTED.format(kind=type(error).__name__))
        raise
    finally:
        upload_discard(token=upload.token)
    return job
