"""Reads of upload jobs (the worker's loads of stored uploads)."""
from __future__ import annotations

from django.db.models import QuerySet

from annotate.models import LanguageModel, ResponseSet, UploadJob


def upload_job_get(*, job_id: int) -> UploadJob | None:
    """The upload job ``job_id`` (its response set loaded), or None."""
    return UploadJob.objects.select_related("response_set").filter(pk=job_id).first()


def response_set_models(*, response_set: ResponseSet) -> QuerySet[LanguageModel]:
    """The models with a response in ``response_set``, by name."""
    return LanguageModel.objects.filter(response_set_columns__response_set=response_set).order_by("name")
