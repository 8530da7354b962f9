"""Reads of the catalog (datasets, subjects, questions, models, response sets)."""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from django.db.models import Count, Max

from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject


def dataset_ids_by_name(*, names: Iterable[str]) -> dict[str, int]:
    """Ids of the datasets among ``names`` that exist (name -> id)."""
    return dict(Dataset.objects.filter(name__in=list(names)).values_list("name", "id"))


def subject_ids_by_name(*, names: Iterable[str]) -> dict[str, int]:
    """Ids of the subjects among ``names`` that exist (name -> id)."""
    return dict(Subject.objects.filter(name__in=list(names)).values_list("name", "id"))


def question_table(*, dataset_ids: Iterable[int]) -> pd.DataFrame:
    """Every question of the given datasets.

    Returns
    -------
    DataFrame with columns ``id``, ``dataset`` (name), ``external_id``,
    ``subject`` (name or None) and ``text``; one row per question, in id order.
    """
    rows = (
        Question.objects.filter(dataset_id__in=list(dataset_ids))
        .order_by("id")
        .values_list("id", "dataset__name", "external_id", "subject__name", "text")
    )
    return pd.DataFrame(list(rows), columns=["id", "dataset", "external_id", "subject", "text"])


def model_table(*, names: Iterable[str]) -> pd.DataFrame:
    """The language models among ``names`` that exist.

    Returns
    -------
    DataFrame with columns ``id``, ``name``, ``family``, ``parameters_b``
    (float, NaN = unknown), ``access`` and ``metadata``.
    """
    rows = LanguageModel.objects.filter(name__in=list(names)).values_list(
        "id", "name", "family", "parameters_b", "access", "metadata"
    )
    frame = pd.DataFrame(list(rows), columns=["id", "name", "family", "parameters_b", "access", "metadata"])
    frame["parameters_b"] = pd.to_numeric(frame["parameters_b"], errors="coerce").astype(float)
    return frame


def response_set_by_checksum(*, checksum: str) -> ResponseSet | None:
    """The response set loaded from files with this SHA-256 checksum, if any."""
    return ResponseSet.objects.filter(checksum=checksum).first()


def response_set_latest(*, name: str) -> ResponseSet | None:
    """The highest version of the response set called ``name``, if any."""
    return ResponseSet.objects.filter(name=name).order_by("-version").first()


def catalog_stamp() -> tuple[tuple[int, int], ...]:
    """A cheap fingerprint of the catalog a load plan depends on.

    Returns
    -------
    tuple of (count, highest id) pairs
        For datasets, subjects, questions, language models and response sets,
        in that order (0 for the id of an empty table). Any row added or
        deleted changes it (ids are never reused); an edit of an existing row
        does not.
    """
    stamp = []
    for model in (Dataset, Subject, Question, LanguageModel, ResponseSet):
        numbers = model.objects.aggregate(n=Count("id"), top=Max("id"))
        stamp.append((int(numbers["n"]), int(numbers["top"] or 0)))
    return tuple(stamp)
