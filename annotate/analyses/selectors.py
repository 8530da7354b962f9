"""Reads of the paper's analyses: the response matrix and the labels of its
rows (datasets, subjects, question metadata) and columns (model names,
families, access, sizes). The analysis services (annotate/analyses/services/)
compute on what these return; they do not query the database themselves."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from django.db.models import QuerySet

from annotate.catalog import NO_SUBJECT, response_matrix
from annotate.core import ascii_int
from annotate.models import (
    AnalysisRun,
    Dataset,
    LanguageModel,
    ModelAccess,
    Question,
    ResponseSet,
    ResponseSetStatus,
    RunStatus,
    Subject,
)

#: ``group_by`` values besides ``metadata:<key>``.
GROUP_BY_FIXED = ("dataset", "subject")
GROUP_BY_PATTERN = re.compile(r"^(dataset|subject|metadata:[A-Za-z0-9_.\-]{1,100})$")
NO_LABEL = "(none)"
UNKNOWN_FAMILY = "(unknown family)"
#: LanguageModel.access -> the labels :func:`scoring.analyses.access_pools` reads.
ACCESS_LABELS = {ModelAccess.OPEN_WEIGHT: "open-weight", ModelAccess.PROPRIETARY: "proprietary",
                 ModelAccess.UNKNOWN: None}


@dataclass(frozen=True)
class AnalysisData:
    """A response set as the analyses see it.

    Attributes
    ----------
    R : ndarray of float64, shape (n_questions, n_models)
        Credit in [0, 1], NaN = not observed (rows ascending ``Question.id``,
        columns ascending ``LanguageModel.id``; see ``response_matrix``).
    question_ids, model_ids : ndarray of int64
    model_names : tuple of str
    families : tuple of str
        ``LanguageModel.family``, or "(unknown family)" when blank.
    access : tuple of str or None
        "open-weight", "proprietary" or None (unknown).
    parameters_b : tuple of float or None
        Parameter counts in billions; None when unknown.
    dataset_labels, subject_labels : ndarray of object, shape (n_questions,)
        Dataset and subject names per row ("(none)" for a question without a
        subject).
    response_set : str
    """

    R: np.ndarray
    question_ids: np.ndarray
    model_ids: np.ndarray
    model_names: tuple[str, ...]
    families: tuple[str, ...]
    access: tuple[str | None, ...]
    parameters_b: tuple[float | None, ...]
    dataset_labels: np.ndarray
    subject_labels: np.ndarray
    response_set: str

    @property
    def shape(self) -> tuple[int, int]:
        return self.R.shape


def analysis_data(*, response_set: ResponseSet) -> AnalysisData:
    """Read ``response_set`` into an :class:`AnalysisData` (three small queries
    besides the matrix)."""
    m = response_matrix(response_set=response_set)
    models = {row["pk"]: row for row in LanguageModel.objects.filter(pk__in=m.model_ids.tolist())
              .values("pk", "name", "family", "access", "parameters_b")}
    ordered = [models[int(pk)] for pk in m.model_ids]
    dataset_names = dict(Dataset.objects.filter(pk__in=np.unique(m.question_datasets).tolist())
                         .values_list("pk", "name"))
    subject_names = dict(Subject.objects.filter(pk__in=np.unique(m.question_subjects).tolist())
                         .values_list("pk", "name"))
    subject_names[NO_SUBJECT] = NO_LABEL
    return AnalysisData(
        R=m.R,
        question_ids=m.question_ids,
        model_ids=m.model_ids,
        model_names=tuple(row["name"] for row in ordered),
        families=tuple(row["family"] or UNKNOWN_FAMILY for row in ordered),
        access=tuple(ACCESS_LABELS.get(row["access"]) for row in ordered),
        parameters_b=tuple(row["parameters_b"] for row in ordered),
        dataset_labels=np.array([dataset_names[int(d)] for d in m.question_datasets], dtype=object),
        subject_labels=np.array([subject_names[int(s)] for s in m.question_subjects], dtype=object),
        response_set=str(response_set),
    )


def group_labels(*, data: AnalysisData, group_by: str) -> np.ndarray:
    """Label of every row for ``group_by``: "dataset", "subject" or
    "metadata:<key>" (``Question.metadata[key]``, "(none)" when absent or blank)."""
    if group_by == "dataset":
        return data.dataset_labels
    if group_by == "subject":
        return data.subject_labels
    key = group_by.split(":", 1)[1]
    metadata = dict(Question.objects.filter(pk__in=data.question_ids.tolist()).values_list("pk", "metadata"))
    labels = []
    for pk in data.question_ids.tolist():
        value = (metadata.get(pk) or {}).get(key)
        labels.append(NO_LABEL if value is None or str(value).strip() == "" else str(value))
    return np.array(labels, dtype=object)


def distinct_groups(*, response_set: ResponseSet, group_by: str) -> int:
    """How many distinct datasets (``group_by="dataset"``) or subjects
    (``"subject"``, questions without one count as one group) the questions
    answered in ``response_set`` fall in."""
    field = {"dataset": "dataset_id", "subject": "subject_id"}[group_by]
    return (Question.objects.filter(response_set_rows__response_set=response_set)
            .values_list(field, flat=True).distinct().order_by().count())


def analysis_run_by_params_key(
    *, params_key: str, statuses: tuple[str, ...] = (RunStatus.DONE,),
) -> AnalysisRun | None:
    """The newest analysis run with this ``params_key`` (kind, response set and
    complete parameters; see ``annotate.analyses.services.params.params_key``)
    in one of ``statuses``, or None."""
    return (AnalysisRun.objects.select_related("response_set").filter(params_key=params_key, status__in=statuses)
            .order_by("-created_at", "-id").first())


def analysis_runs_recent(*, kind: str | None = None, limit: int = 50) -> QuerySet[AnalysisRun]:
    """The newest analysis runs, of ``kind`` or of every kind (None), newest first."""
    runs = AnalysisRun.objects.select_related("response_set", "created_by")
    if kind is not None:
        runs = runs.filter(kind=kind)
    return runs.order_by("-created_at", "-id")[:limit]


def label_response_set(*, value: str | None) -> ResponseSet | None:
    """The loaded model response set a human-label page is about.

    ``value`` is a response set id from the page's query; when it names no
    loaded model set (or is None), the newest loaded model set with a finished
    scoring run, else the newest loaded model set; None when none is loaded.
    """
    loaded = ResponseSet.objects.filter(status=ResponseSetStatus.LOADED, is_human=False).order_by("-created_at")
    if value and ascii_int(value) is not None:
        chosen = loaded.filter(pk=ascii_int(value)).first()
        if chosen is not None:
            return chosen
    return loaded.filter(scoring_runs__status=RunStatus.DONE).first() or loaded.first()
