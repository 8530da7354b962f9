"""Reads of upload jobs (the worker's loads of stored uploads)."""
from __future__ import annotations

from annotate.models import UploadJob


def upload_job_get(*, job_id: int) -> UploadJob | None:
    """The upload job ``job_id`` (its response set loaded), or None."""
    return UploadJob.objects.select_related("response_set").filter(pk=job_id).first()
