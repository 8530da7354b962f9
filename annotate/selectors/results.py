"""Reads behind the results pages: response sets and their runs, a run's
methods, the model leaderboard and the question list."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.db.models import F, Prefetch, QuerySet
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
from annotate.services.scoring import METHODS

METHOD_LABELS = {
    "eip": "EIP",
    "simple_rank": "Simple rank",
    "accuracy": "Accuracy",
    "weighted_accuracy": "Dataset-weighted accuracy",
    "irt_1pl": "1PL IRT",
    "irt_2pl": "2PL IRT",
    "irt_mirt": "MIRT",
}
RESIDUAL_LABELS = {
    "eip": "L1 residual",
    "irt_1pl": "projected gradient (max-norm)",
    "irt_2pl": "projected gradient (max-norm)",
}


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


def run_methods(*, run: ScoringRun) -> list[MethodRow]:
    """The run's MethodResults in ``METHODS`` order."""
    order = {name: k for k, name in enumerate(METHODS)}
    results = sorted(MethodResult.objects.filter(run=run), key=lambda m: order.get(m.method, len(order)))
    return [MethodRow(METHOD_LABELS.get(m.method, m.method), m, RESIDUAL_LABELS.get(m.method, "")) for m in results]


@dataclass(frozen=True)
class LeaderboardRow:
    """One model: every method's score, and its EIP and accuracy ranks.

    Ranks are 1 = best, ties share the smaller rank ("competition" ranking).
    ``rank_change = accuracy_rank - eip_rank``: positive when EIP places the
    model higher than accuracy does.
    """

    name: str
    family: str
    parameters_b: float | None
    access: str
    n_observed: int
    eip: float
    eip_scaled: float
    accuracy: float
    weighted_accuracy: float | None
    irt_1pl: float | None
    irt_2pl: float | None
    irt_mirt: float | None
    eip_rank: int
    accuracy_rank: int
    rank_change: int


def _ranks(values: list[float]) -> np.ndarray:
    return rankdata(-np.asarray(values, dtype=np.float64), method="min").astype(int)


def run_leaderboard(*, run: ScoringRun) -> list[LeaderboardRow]:
    """Models of a run, best EIP competency first (ties by name)."""
    results = list(ModelResult.objects.filter(run=run).select_related("model"))
    if not results:
        return []
    eip_rank = _ranks([r.eip for r in results])
    accuracy_rank = _ranks([r.accuracy for r in results])
    rows = [
        LeaderboardRow(
            name=r.model.name, family=r.model.family, parameters_b=r.model.parameters_b,
            access=r.model.get_access_display(), n_observed=r.n_observed, eip=r.eip, eip_scaled=r.eip_scaled,
            accuracy=r.accuracy, weighted_accuracy=r.weighted_accuracy, irt_1pl=r.irt_1pl, irt_2pl=r.irt_2pl,
            irt_mirt=r.irt_mirt, eip_rank=int(e), accuracy_rank=int(a), rank_change=int(a - e),
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
    return results.order_by(F("eip_scaled").desc(nulls_last=True), "question_id")


@dataclass(frozen=True)
class QuestionRow:
    result: QuestionResult
    excluded: str  # "", "all solved" or "all failed"


def question_rows(*, results: Iterable[QuestionResult]) -> list[QuestionRow]:
    """Label excluded questions: EIP drops a question every observed model
    solved (display value 0) or failed (display value 100)."""
    rows = []
    for r in results:
        label = "" if r.kept else ("all solved" if r.eip_scaled == 0 else "all failed")
        rows.append(QuestionRow(r, label))
    return rows
