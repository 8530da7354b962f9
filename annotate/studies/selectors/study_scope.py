"""Reads behind a study's scope: which questions of a scoring run a new study
may pair, why the others are left out, and how many pairs that allows.

:func:`study_scope_candidates` is the one candidate selection: the service
that samples a study's pairs (:mod:`annotate.studies.services.studies`) and the
creation page's live counts both read it, so the counts shown are the
questions the sampler will draw from.

A question is eligible when all of these hold, checked in this order (a
question left out is counted under the first reason it fails):

1. it has question text (not empty, not only whitespace): evaluators cannot
   judge a blank box, whatever the study's settings;
2. it is ``kept`` in the run (some model solved it and some failed it),
   unless the study includes unkept questions;
3. at least the run's ``min_models`` models answered it, unless the study
   includes low-coverage questions.

Questions without a subject are never candidates (pairs are same-subject).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import BooleanField, Case, Q, QuerySet, Value, When
from numpy.typing import NDArray

from annotate.models import Dataset, QuestionResult, RunStatus, ScoringRun, Subject
from annotate.studies.selectors.studies import RESEARCHER_GROUP
from scoring.diagnostics import DEFAULT_MIN_MODELS
from scoring.pair_sampling import count_possible_pairs

#: A character other than whitespace (SQLite's REGEXP is Python's ``re``; PostgreSQL's ``~`` knows ``\S`` too).
HAS_TEXT_PATTERN = r"\S"

REASON_NO_TEXT = "no question text"
REASON_UNKEPT = "every model solved it or every model failed it"
REASON_LOW_COVERAGE = "answered by fewer than {min_models} models"
REASONS = (REASON_NO_TEXT, REASON_UNKEPT, REASON_LOW_COVERAGE)


@dataclass(frozen=True)
class ScopeCandidates:
    """The questions of a run, datasets and subjects, in question-id order.

    ``question_ids``, ``subject_ids``, ``eligible`` and (when the run stored
    them) ``components`` have shape ``(n_questions,)``; ``difficulty`` maps a
    score column to a float64 array of that shape (NaN = no score).
    ``reason`` gives, per question, the index into :data:`REASONS` of the
    first rule it fails, or -1 when eligible; ``excluded`` counts the
    questions left out by reason (see the module). ``subjects_present``
    are the ids of every subject with a question of the datasets in the run
    (before the subject filter).
    """

    question_ids: NDArray[np.int64]
    subject_ids: NDArray[np.int64]
    eligible: NDArray[np.bool_]
    components: NDArray[np.int64] | None
    difficulty: dict[str, NDArray[np.float64]]
    reason: NDArray[np.int64]
    subjects_present: frozenset[int]
    min_models: int

    def excluded_counts(self, mask: NDArray[np.bool_] | None = None) -> dict[str, int]:
        """Questions left out (among ``mask``, default all), by reason, in rule order."""
        reason = self.reason if mask is None else self.reason[mask]
        return {
            label.format(min_models=self.min_models): int((reason == k).sum()) for k, label in enumerate(REASONS)
        }

    @property
    def excluded(self) -> dict[str, int]:
        return self.excluded_counts()


def run_min_models(*, run: ScoringRun) -> int:
    """The run's ``min_models`` (its diagnostics, else its params, else the default 3)."""
    return int(run.diagnostics.get("min_models", run.params.get("min_models", DEFAULT_MIN_MODELS)))


def study_scope_candidates(
    *,
    run: ScoringRun,
    datasets: Sequence[Dataset],
    subjects: Sequence[Subject] | None = None,
    include_unkept: bool = False,
    include_low_coverage: bool = False,
    columns: Sequence[str] = (),
) -> ScopeCandidates:
    """Every question of ``run`` in ``datasets`` (and ``subjects``, default all)
    with a subject, whether a study may pair it, and its ``columns`` scores.

    Parameters
    ----------
    run : ScoringRun
    datasets : sequence of Dataset
    subjects : sequence of Subject, optional
        Restrict to these; default every subject present.
    include_unkept, include_low_coverage : bool, default False
        As :func:`annotate.studies.services.studies.study_create`.
    columns : sequence of str
        Score columns to read into ``difficulty`` (missing = NaN).

    Returns
    -------
    ScopeCandidates
    """
    rows = QuestionResult.objects.filter(run=run, question__dataset__in=list(datasets), question__subject__isnull=False)
    present = frozenset(rows.values_list("question__subject_id", flat=True).distinct())
    if subjects is not None:
        rows = rows.filter(question__subject__in=list(subjects))
    rows = rows.annotate(
        has_text=Case(When(Q(question__text__regex=HAS_TEXT_PATTERN), then=Value(True)), default=Value(False),
                      output_field=BooleanField())
    )
    values = list(rows.order_by("question_id").values_list(
        "question_id", "question__subject_id", "kept", "scores", "n_observed", "component", "has_text"
    ))
    min_models = run_min_models(run=run)
    has_text = np.array([bool(v[6]) for v in values], dtype=bool)
    kept = np.array([bool(v[2]) for v in values], dtype=bool) if not include_unkept else np.ones(len(values), bool)
    covered = (
        np.array([v[4] >= min_models for v in values], dtype=bool) if not include_low_coverage
        else np.ones(len(values), bool)
    )
    reason = np.full(len(values), -1, dtype=np.int64)
    reason[~covered] = 2
    reason[~kept] = 1
    reason[~has_text] = 0
    # Runs older than the diagnostics have no component: one block then.
    components = (
        None if any(v[5] is None for v in values) else np.array([v[5] for v in values], dtype=np.int64)
    )
    return ScopeCandidates(
        question_ids=np.array([v[0] for v in values], dtype=np.int64),
        subject_ids=np.array([v[1] for v in values], dtype=np.int64),
        eligible=has_text & kept & covered,
        components=components,
        difficulty={
            c: np.array([v[3].get(c, math.nan) for v in values], dtype=np.float64) for c in columns
        },
        reason=reason,
        subjects_present=present,
        min_models=min_models,
    )


@dataclass(frozen=True)
class SubjectCount:
    """One subject's candidates: questions, eligible questions, possible pairs."""

    subject_id: int
    name: str
    n_questions: int
    n_eligible: int
    n_possible_pairs: int


@dataclass(frozen=True)
class ScopeCounts:
    """What the creation page shows: per subject present in the datasets, and
    totals over the chosen subjects (all when none is chosen)."""

    subjects: tuple[SubjectCount, ...]
    n_questions: int
    n_eligible: int
    n_possible_pairs: int
    excluded: dict[str, int]


def study_scope_counts(
    *,
    run: ScoringRun,
    datasets: Sequence[Dataset],
    subjects: Sequence[Subject] | None = None,
    include_unkept: bool = False,
    include_low_coverage: bool = False,
) -> ScopeCounts:
    """Counts of eligible questions and distinct same-subject pairs (within a
    connected component of the run, as the sampler pairs them), per subject.

    The pair counts are those of the uniform strategy; the difficulty-based
    strategies also need a finite EIP difficulty (every finished run has one
    for every kept question).
    """
    every = study_scope_candidates(
        run=run, datasets=datasets, include_unkept=include_unkept, include_low_coverage=include_low_coverage,
    )
    chosen = {s.pk for s in subjects} if subjects else set(every.subjects_present)
    names = dict(Subject.objects.filter(pk__in=every.subjects_present).values_list("pk", "name"))
    rows = []
    for subject_id in sorted(every.subjects_present, key=lambda pk: names[pk]):
        mask = every.subject_ids == subject_id
        eligible = mask & every.eligible
        labels = every.components[eligible] if every.components is not None else np.zeros(int(eligible.sum()))
        rows.append(SubjectCount(
            subject_id=subject_id, name=names[subject_id], n_questions=int(mask.sum()),
            n_eligible=int(eligible.sum()), n_possible_pairs=count_possible_pairs(labels),
        ))
    in_scope = np.isin(every.subject_ids, np.array(sorted(chosen), dtype=np.int64))
    picked = [r for r in rows if r.subject_id in chosen]
    return ScopeCounts(
        subjects=tuple(rows),
        n_questions=sum(r.n_questions for r in picked),
        n_eligible=sum(r.n_eligible for r in picked),
        n_possible_pairs=sum(r.n_possible_pairs for r in picked),
        excluded=every.excluded_counts(in_scope),
    )


# --- choices of the study form ----------------------------------------------------------


def scoring_runs_finished() -> QuerySet[ScoringRun]:
    """Finished ("done") scoring runs, newest first, with their response sets:
    the runs a study may draw its pairs from."""
    return (ScoringRun.objects.filter(status=RunStatus.DONE).select_related("response_set")
            .order_by("-created_at", "-pk"))


def datasets_of_finished_runs() -> QuerySet[Dataset]:
    """Datasets with a question result in some finished run, by name."""
    scored = QuestionResult.objects.filter(run__status=RunStatus.DONE).values("question__dataset_id")
    return Dataset.objects.filter(pk__in=scored).order_by("name")


def subjects_of_datasets(*, datasets: QuerySet[Dataset]) -> QuerySet[Subject]:
    """Subjects with a question in ``datasets``, by name."""
    return Subject.objects.filter(questions__dataset__in=datasets).distinct().order_by("name")


def researchers_except(*, user: AbstractBaseUser | None) -> QuerySet[AbstractBaseUser]:
    """Active researchers (the "researcher" group; staff need no membership) other than ``user``, by username."""
    found = get_user_model().objects.filter(is_active=True, groups__name=RESEARCHER_GROUP)
    if user is not None:
        found = found.exclude(pk=user.pk)
    return found.distinct().order_by("username")


def derive_prerequisites_missing() -> tuple[bool, bool]:
    """What a study from people's answers still lacks: (no set marked as human, no finished scoring run)."""
    from annotate.reports import response_sets_human_queryset

    return not response_sets_human_queryset().exists(), not scoring_runs_finished().exists()


def import_example_questions() -> tuple[str, str, str] | None:
    """Two questions of one dataset of the newest finished run, as (dataset name, id, id), for the
    judgment-import page's example; None when no finished run has two questions of one dataset."""
    run = scoring_runs_finished().first()
    if run is None:
        return None
    rows = list(QuestionResult.objects.filter(run=run).order_by("question_id")
                .values_list("question__dataset__name", "question__external_id")[:50])
    for dataset, first in rows:
        second = next((q for d, q in rows if d == dataset and q != first), None)
        if second is not None:
            return dataset, first, second
    return None
