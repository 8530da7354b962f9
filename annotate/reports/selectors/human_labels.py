"""Reads of the human-label analysis: the scoring run
to compare, its questions with their subjects, a metadata label and every
method's stored values, and the matrix of a human response set."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from annotate.catalog import response_matrix
from annotate.models import QuestionResult, ResponseSet, ResponseSetStatus, RunStatus, ScoringRun

#: Result rows read per query by :func:`run_questions`.
READ_CHUNK = 20_000
_ABSENT = object()

ERR_NO_RUN = "response set {response_set} has no finished scoring run; score it first"
ERR_RUN = "scoring run {run_id} is not a finished run of response set {response_set}"
ERR_HUMAN_SET = "response set {value!r} is not a loaded response set marked as human"


@dataclass(frozen=True)
class RunQuestions:
    """The questions a scoring run scored, in ascending ``Question.id``.

    Attributes
    ----------
    run_id : int
    question_ids : ndarray of int64, shape (n_questions,)
    subjects : ndarray of object, shape (n_questions,)
        "dataset / subject" (so pairs never mix datasets); "dataset" alone
        when the question has no subject. Equal strings are one object.
    raw_labels : list
        ``Question.metadata[key]`` as stored (None when absent); empty
        without a key. Equal strings are one object.
    scores : dict of str to ndarray of float64, shape (n_questions,)
        For each requested stored column (see :mod:`scoring.methods`) that
        at least one question's stored values hold (even as null): its
        values, NaN where a question's are missing or null.
    """

    run_id: int
    question_ids: np.ndarray
    subjects: np.ndarray
    raw_labels: list
    scores: dict[str, np.ndarray]


def scoring_runs_for_labels(*, response_set: ResponseSet | None = None) -> list[ScoringRun]:
    """The finished scoring runs a label analysis may read: ``response_set``'s (every model set's when None),
    newest first, with their response sets."""
    runs = ScoringRun.objects.filter(status=RunStatus.DONE, response_set__is_human=False)
    if response_set is not None:
        runs = runs.filter(response_set=response_set)
    return list(runs.select_related("response_set").order_by("-finished_at", "-id"))


def scoring_run_for_labels(*, response_set: ResponseSet, run_id: int = 0) -> ScoringRun:
    """Scoring run ``run_id`` of ``response_set`` (0 = its newest finished run).

    Raises
    ------
    ValueError
        ``ERR_NO_RUN`` / ``ERR_RUN``.
    """
    runs = ScoringRun.objects.filter(response_set=response_set, status=RunStatus.DONE)
    if run_id:
        run = runs.filter(pk=run_id).first()
        if run is None:
            raise ValueError(ERR_RUN.format(run_id=run_id, response_set=response_set))
        return run
    run = runs.order_by("-finished_at", "-id").first()
    if run is None:
        raise ValueError(ERR_NO_RUN.format(response_set=response_set))
    return run


def run_questions(*, run: ScoringRun, metadata_key: str | None, columns: Sequence[str] = (),
                  chunk_size: int = READ_CHUNK) -> RunQuestions:
    """Every question ``run`` scored with its subject, label and the stored values of ``columns``.

    Rows are read ``chunk_size`` at a time and turned into arrays a block at
    a time; no row's stored values are kept, so memory is a few numbers a
    question.
    """
    fields = ["question_id", "question__dataset__name", "question__subject__name"]
    if columns:
        fields.append("scores")
    if metadata_key is not None:
        fields.append(f"question__metadata__{metadata_key}")
    rows = (QuestionResult.objects.filter(run=run).order_by("question_id").values_list(*fields)
            .iterator(chunk_size=chunk_size))
    ids: list[np.ndarray] = []
    subjects: list[str] = []
    labels: list = []
    values: dict[str, list[np.ndarray]] = {c: [] for c in columns}
    present: set[str] = set()
    shared: dict = {}  # one object per distinct subject string and label value
    while block := list(islice(rows, chunk_size)):
        ids.append(np.array([row[0] for row in block], dtype=np.int64))
        for row in block:
            subject = f"{row[1]} / {row[2]}" if row[2] else str(row[1])
            subjects.append(shared.setdefault(subject, subject))
        if metadata_key is not None:
            labels.extend(shared.setdefault(row[-1], row[-1]) if isinstance(row[-1], str) else row[-1]
                          for row in block)
        for column, out in values.items():
            got = [row[3].get(column, _ABSENT) for row in block]
            if any(value is not _ABSENT for value in got):
                present.add(column)
            out.append(np.array([np.nan if value is None or value is _ABSENT else value for value in got],
                                dtype=np.float64))
    return RunQuestions(
        run_id=run.pk, question_ids=np.concatenate(ids) if ids else np.empty(0, dtype=np.int64),
        subjects=np.array(subjects, dtype=object), raw_labels=labels,
        scores={c: np.concatenate(v).reshape(-1) for c, v in values.items() if c in present},
    )


def human_response_set(*, response_set_id: int) -> ResponseSet:
    """The loaded human response set ``response_set_id`` (``ERR_HUMAN_SET`` otherwise)."""
    found = ResponseSet.objects.filter(pk=response_set_id, is_human=True, status=ResponseSetStatus.LOADED).first()
    if found is None:
        raise ValueError(ERR_HUMAN_SET.format(value=response_set_id))
    return found


def human_matrix(*, response_set: ResponseSet) -> tuple[np.ndarray, np.ndarray]:
    """``(R, question_ids)``: people's credit, shape (n_questions, n_persons),
    rows ascending ``Question.id`` (questions are matched to a model set's by
    dataset and external id, which is what a ``Question`` row is)."""
    m = response_matrix(response_set=response_set)
    return np.asarray(m.R), np.asarray(m.question_ids)


def question_names(*, question_ids: np.ndarray) -> dict[int, tuple[str, str]]:
    """``Question.id -> (dataset name, the dataset's own question id)`` for ``question_ids``."""
    from annotate.models import Question

    ids = [int(q) for q in question_ids]
    found: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), 10_000):
        for pk, dataset, external in Question.objects.filter(pk__in=ids[start:start + 10_000]).values_list(
                "pk", "dataset__name", "external_id"):
            found[pk] = (dataset, external)
    return found


def question_metadata_of_set(*, response_set: ResponseSet) -> list[dict]:
    """``Question.metadata`` of every question of ``response_set``."""
    from annotate.models import Question

    return list(Question.objects.filter(response_set_rows__response_set=response_set)
                .values_list("metadata", flat=True))


def response_sets_human_queryset():
    """Loaded response sets marked as human, newest first (a queryset, for form choices)."""
    return ResponseSet.objects.filter(is_human=True, status=ResponseSetStatus.LOADED).order_by("-created_at")


def response_sets_human() -> list[ResponseSet]:
    """Loaded response sets marked as human, newest first."""
    return list(ResponseSet.objects.filter(is_human=True, status=ResponseSetStatus.LOADED).order_by("-created_at"))


def analysis_run_get(*, analysis_id: int):
    """The analysis run ``analysis_id`` or None."""
    from annotate.models import AnalysisRun

    return AnalysisRun.objects.filter(pk=analysis_id).first()
