"""Reads behind the results pages: response sets and their runs, a run's
methods, the model leaderboard and the question list."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.db.models import FloatField, Prefetch, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast
from scipy.stats import rankdata

from annotate.models import (
    Dataset,
    MethodResult,
    ModelResult,
    QuestionResult,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Subject,
)
from scoring.methods import DifficultyMethod, get_method, method_keys
from scoring.methods import methods as registered_methods


@dataclass(frozen=True)
class ScoreColumn:
    """One stored column shown in a results table (from :mod:`scoring.methods`)."""

    column: str
    method: str
    header: str
    decimals: int
    note: str = ""


@dataclass(frozen=True)
class ScoreCell:
    """A stored value (None = undefined) and the decimals it is shown with."""

    value: float | None
    decimals: int


def _cells(result: QuestionResult | ModelResult, columns: list[ScoreColumn]) -> tuple[ScoreCell, ...]:
    return tuple(ScoreCell(result.score(c.column), c.decimals) for c in columns)


def question_score_columns() -> list[ScoreColumn]:
    """Every stored per-question column, in registry order."""
    return [ScoreColumn(c, m.key, m.column_label(c), m.decimals(c))
            for m in registered_methods() for c in m.question_columns]


def model_score_columns() -> list[ScoreColumn]:
    """Every stored per-model column, in registry order; a method's competency
    column is headed by its competency label (with its footnote)."""
    out = []
    for m in registered_methods():
        for c in m.model_columns:
            competency = c == m.competency_column
            header = m.competency_header if competency and m.competency_label else m.column_label(c)
            out.append(ScoreColumn(c, m.key, header, m.decimals(c), m.competency_note if competency else ""))
    return out


@dataclass(frozen=True)
class ResponseSetRuns:
    response_set: ResponseSet
    runs: tuple[ScoringRun, ...]


def response_sets_with_runs() -> list[ResponseSetRuns]:
    """Every response set (by name, newest version first) with its runs, newest first."""
    runs = ScoringRun.objects.select_related("created_by").order_by("-created_at", "-pk")
    sets = ResponseSet.objects.order_by("name", "-version").prefetch_related(Prefetch("scoring_runs", queryset=runs))
    return [ResponseSetRuns(rs, tuple(rs.scoring_runs.all())) for rs in sets]


def runs_active(*, groups: Iterable[ResponseSetRuns]) -> bool:
    """Is any run queued or running (the list page then refreshes itself)?"""
    return any(run.status in (RunStatus.QUEUED, RunStatus.RUNNING) for g in groups for run in g.runs)


@dataclass(frozen=True)
class MethodRow:
    label: str
    result: MethodResult
    residual_label: str


def _method_or_none(key: str) -> DifficultyMethod | None:
    try:
        return get_method(key)
    except KeyError:  # a method stored by an older version and since removed
        return None


def run_methods(*, run: ScoringRun) -> list[MethodRow]:
    """The run's MethodResults in registry order (unknown methods last)."""
    order = {name: k for k, name in enumerate(method_keys())}
    results = sorted(MethodResult.objects.filter(run=run), key=lambda m: order.get(m.method, len(order)))
    rows = []
    for r in results:
        method = _method_or_none(r.method)
        rows.append(MethodRow(method.label if method else r.method, r, method.residual_label if method else ""))
    return rows


@dataclass(frozen=True)
class LeaderboardRow:
    """One model: every method's competency, and its EIP and accuracy ranks.

    ``scores`` is aligned with :func:`model_score_columns` (None where
    undefined). Ranks are 1 = best, ties share the smaller rank
    ("competition" ranking). ``rank_change = accuracy_rank - eip_rank``:
    positive when EIP places the model higher than accuracy does.
    """

    model_id: int
    name: str
    family: str
    parameters_b: float | None
    access: str
    n_observed: int
    scores: tuple[ScoreCell, ...]
    eip_rank: int
    accuracy_rank: int
    rank_change: int


def _ranks(values: list[float | None]) -> np.ndarray:
    x = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return rankdata(-np.nan_to_num(x, nan=-np.inf), method="min").astype(int)


def run_leaderboard(*, run: ScoringRun) -> list[LeaderboardRow]:
    """Models of a run, best EIP competency first (ties by name)."""
    results = list(ModelResult.objects.filter(run=run).select_related("model"))
    if not results:
        return []
    columns = model_score_columns()
    eip_rank = _ranks([r.score(get_method("eip").competency_column) for r in results])
    accuracy_rank = _ranks([r.score(get_method("accuracy").competency_column) for r in results])
    rows = [
        LeaderboardRow(
            model_id=r.model_id, name=r.model.name, family=r.model.family, parameters_b=r.model.parameters_b,
            access=r.model.get_access_display(), n_observed=r.n_observed,
            scores=_cells(r, columns),
            eip_rank=int(e), accuracy_rank=int(a), rank_change=int(a - e),
        )
        for r, e, a in zip(results, eip_rank, accuracy_rank)
    ]
    return sorted(rows, key=lambda row: (row.eip_rank, row.name))


def run_datasets_and_subjects(*, run: ScoringRun) -> tuple[QuerySet[Dataset], QuerySet[Subject]]:
    """Datasets and subjects of the questions a run scored (the filter choices)."""
    scored = QuestionResult.objects.filter(run=run)
    datasets = Dataset.objects.filter(pk__in=scored.values("question__dataset_id")).order_by("name")
    subjects = Subject.objects.filter(pk__in=scored.values("question__subject_id")).order_by("name")
    return datasets, subjects


def run_questions(
    *, run: ScoringRun, dataset: Dataset | None = None, subject: Subject | None = None
) -> QuerySet[QuestionResult]:
    """A run's question results, hardest by EIP first (excluded questions by
    their 0/100 display value, ties by question id), optionally of one dataset
    and/or subject."""
    results = QuestionResult.objects.filter(run=run).select_related("question__dataset", "question__subject")
    if dataset is not None:
        results = results.filter(question__dataset=dataset)
    if subject is not None:
        results = results.filter(question__subject=subject)
    column = get_method("eip").difficulty_column
    return results.order_by(Cast(KT(f"scores__{column}"), FloatField()).desc(nulls_last=True), "question_id")


@dataclass(frozen=True)
class QuestionRow:
    result: QuestionResult
    excluded: str  # "", "all solved" or "all failed"
    scores: tuple[ScoreCell, ...]  # aligned with question_score_columns()


def question_rows(*, results: Iterable[QuestionResult]) -> list[QuestionRow]:
    """Label excluded questions: EIP drops a question every observed model
    solved (display value 0) or failed (display value 100)."""
    columns = question_score_columns()
    scaled = get_method("eip").difficulty_column
    rows = []
    for r in results:
        label = "" if r.kept else ("all solved" if r.score(scaled) == 0 else "all failed")
        rows.append(QuestionRow(r, label, _cells(r, columns)))
    return rows
