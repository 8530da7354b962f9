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


def response_set_unanswered_questions(*, response_set: ResponseSet) -> int:
    """Questions the load's files named that have no response in ``response_set``
    (stored in the catalog with their text, not counted in ``n_questions``); 0
    when the load's summary does not say (sets loaded before it was kept)."""
    summary = response_set.summary or {}
    named = summary.get("questions_new", 0) + summary.get("questions_existing", 0)
    return max(int(named) - response_set.n_questions, 0) if named else 0
