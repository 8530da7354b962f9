"""Database reads behind the alignment report.

Turns a study into plain numbers once, so the statistics of
:mod:`annotate.reports.services` never touch the ORM: the study's pairs (in
their stored order ``question_a``, ``question_b``), every judgment as a
canonical verdict, the evaluators, and each method's difficulty for the pair
questions from one scoring run. Also the few other reads of the report: the
question metadata behind difficulty labels, a run's values per dataset, the
cache fingerprint and the stored model-pool analysis.

Selectors never import services.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from django.db.models import Count, Max

from annotate.models import (
    AnalysisKind,
    AnalysisRun,
    Choice,
    ExclusionEvent,
    Judgment,
    MethodResult,
    Pair,
    Participation,
    Question,
    QuestionResult,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Study,
)
from scoring import FIRST, SECOND, SKIP, UNDEFINED, Verdict
from scoring.methods import difficulty_methods

ERR_CHOICE = "choice must be one of {choices}; got {value!r}"
ERR_LEFT = "left_question_id {left} is neither question of the pair ({a}, {b})"

REFERENCE_METHOD = "eip"
_CHOICES = frozenset(Choice.values)  # Choice.values rebuilds a list on every access


@dataclass(frozen=True)
class MethodSpec:
    """A difficulty method of a scoring run: report key, display label, the
    stored score it reads, its relative tie tolerance (registry
    ``tie_tolerance``: two scores within ``tie_tolerance * spread`` of each
    other are a tie, see :func:`scoring.harder_of_pairs`), for a stochastic
    method the columns of its replicate fits (MIRT: one per seed), the
    direction of its scores (registry ``higher_is_harder``), and
    ``bounds_param``: the key of the fit's stored parameters holding the box
    its difficulty is confined to (registry ``question_bounds``), None when
    unbounded."""

    key: str
    label: str
    column: str
    tie_tolerance: float = 0.0
    replicate_columns: tuple[str, ...] = ()
    higher_is_harder: bool = True
    bounds_param: str | None = None

    def as_harder(self, values: np.ndarray) -> np.ndarray:
        """``values`` of this method signed so that higher = harder
        (:meth:`scoring.methods.DifficultyMethod.as_harder`)."""
        arr = np.asarray(values, dtype=np.float64)
        return arr if self.higher_is_harder else -arr


def report_methods() -> tuple[MethodSpec, ...]:
    """The registry's difficulty methods (:func:`scoring.methods.difficulty_methods`)
    in report order. EIP reads ``eip_scaled``, so questions every model solved
    (0) or failed (100) still rank, at the ends of the scale."""
    return tuple(MethodSpec(m.key, m.label, m.difficulty_column, m.tie_tolerance, m.replicate_columns,
                            m.higher_is_harder, m.question_bounds.get(m.difficulty_column))
                 for m in difficulty_methods())


def _spec(key: str) -> MethodSpec:
    """The report's spec of method ``key`` (:func:`report_methods`)."""
    return next(m for m in report_methods() if m.key == key)


def verdict_from_display(*, choice: str, left_question_id: int, question_a_id: int, question_b_id: int) -> Verdict:
    """Translate what an evaluator pressed back to the canonical pair order.

    Parameters
    ----------
    choice : {"left", "right", "skip"}
        The button pressed (``Judgment.choice``).
    left_question_id : int
        The question displayed on the left.
    question_a_id, question_b_id : int
        The pair's questions in their stored order.

    Returns
    -------
    Verdict
        ``FIRST`` when ``question_a`` was called harder, ``SECOND`` when
        ``question_b`` was, ``SKIP`` for a skip.

    Raises
    ------
    ValueError
        If ``choice`` is unknown or ``left_question_id`` is neither question.

    Examples
    --------
    >>> int(verdict_from_display(choice="left", left_question_id=9, question_a_id=4, question_b_id=9))
    1
    """
    if choice not in _CHOICES:
        raise ValueError(ERR_CHOICE.format(choices=Choice.values, value=choice))
    if left_question_id not in (question_a_id, question_b_id):
        raise ValueError(ERR_LEFT.format(left=left_question_id, a=question_a_id, b=question_b_id))
    if choice == Choice.SKIP:
        return SKIP
    a_on_left = left_question_id == question_a_id
    pressed_left = choice == Choice.LEFT
    return FIRST if a_on_left == pressed_left else SECOND


class PairInfo(NamedTuple):
    """One study pair as the report reads it (a named tuple: a study can have 10**5-10**6 pairs)."""

    pair_id: int
    position: int
    question_a_id: int
    question_b_id: int
    external_a: str
    external_b: str
    subject: str
    dataset_a: str  # each side's own dataset: two datasets may share external ids
    dataset_b: str


@dataclass(frozen=True)
class EvaluatorInfo:
    participation_id: int
    short: str  # "V1", "V2", ... in order of joining
    pseudonym: str
    field_of_study: str
    education_level: str
    group: str = ""  # an imported study's evaluator group; "" = none
    simulated: bool = False  # votes made by a simulation, not a person


@dataclass(frozen=True)
class ExcludedEvaluator:
    """An evaluator the researcher excluded from analyses: their judgments are
    kept but enter no statistic."""

    participation_id: int
    pseudonym: str
    excluded_at: str  # ISO 8601
    excluded_by: str  # username; "" when the account is gone
    reason: str
    n_judgments: int  # votes and skips on the study's (non attention-check) pairs


@dataclass(frozen=True)
class StudyData:
    """Everything the statistics need, as plain Python and numpy.

    Attributes
    ----------
    study, run : Study, ScoringRun
    pairs : tuple of PairInfo
        In study order (``Pair.position``).
    evaluators : tuple of EvaluatorInfo
        Participations with at least one judgment (vote or skip), in order
        of joining (``created_at``, then id).
    judgment_array : ndarray of int64, shape (n_judgments, 3)
        Rows ``(pair_id, participation_id, verdict)``, verdicts
        ``FIRST``/``SECOND``/``SKIP`` in canonical order, sorted.
    judgments : tuple of (pair_id, participation_id, int verdict)
        The same rows as Python tuples (built when first asked for).
    human : ndarray of int8, shape (n_evaluators, n_pairs)
        The same as a matrix; ``UNDEFINED`` (-1) where the evaluator has no
        judgment on the pair.
    question_ids : ndarray of int64, shape (n_questions,)
        The distinct questions of the pairs, ascending.
    pair_index : ndarray of int64, shape (n_pairs, 2)
        Rows of ``question_ids`` of each pair's ``(question_a, question_b)``.
    difficulty : dict of str to ndarray of float64, shape (n_questions,)
        Per method key, the run's value for each question as stored (in the
        method's own direction); NaN when the run has none (no
        ``QuestionResult`` row, or no stored value). Comparisons read
        :meth:`harder`.
    replicates : dict of str to ndarray of float64, shape (n_questions, n_replicates)
        Per method key with replicate columns (MIRT), each replicate fit's
        value as stored (columns in ``replicate_columns`` order; NaN where
        not stored). Comparisons read :meth:`harder_replicates`.
    bounds : dict of str to (float, float)
        Per method key whose difficulty a fit confines to a box, the box the
        run's fit stored (absent when the method did not run).
    datasets, subjects : tuple of str
        Names of the study's datasets and subjects, sorted.
    excluded : tuple of ExcludedEvaluator
        Evaluators excluded from analyses, in order of joining. Their
        judgments are in none of the fields above.
    n_attention_checks : int
        Attention-check pairs of the study, left out of ``pairs`` (their
        answer is known by construction, so they say nothing about agreement).
    """

    study: Study
    run: ScoringRun
    pairs: tuple[PairInfo, ...]
    evaluators: tuple[EvaluatorInfo, ...]
    judgment_array: np.ndarray
    human: np.ndarray
    question_ids: np.ndarray
    pair_index: np.ndarray
    difficulty: dict[str, np.ndarray]
    datasets: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    replicates: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = dataclasses.field(default_factory=dict)
    excluded: tuple[ExcludedEvaluator, ...] = ()
    n_attention_checks: int = 0

    @functools.cached_property
    def judgments(self) -> tuple[tuple[int, int, int], ...]:
        """:attr:`judgment_array` as a tuple of ``(pair_id, participation_id, verdict)`` tuples."""
        return tuple(map(tuple, self.judgment_array.tolist()))

    def harder(self, key: str) -> np.ndarray:
        """:attr:`difficulty` of method ``key`` signed so that higher = harder
        (the registry's ``higher_is_harder``): what every comparison with
        people, labels and the human scale reads."""
        return _spec(key).as_harder(self.difficulty[key])

    def harder_replicates(self, key: str) -> np.ndarray | None:
        """:attr:`replicates` of method ``key`` signed so that higher = harder;
        None for a method without replicate fits."""
        replicates = self.replicates.get(key)
        return None if replicates is None else _spec(key).as_harder(replicates)

    def align(self, question_ids: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Re-align ``values`` (one per id of the ascending ``question_ids``) to
        :attr:`question_ids`; NaN for a question missing from ``question_ids``."""
        return align_values(self.question_ids, question_ids, values)


def index_of(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position in ``ids`` (distinct, any order) of each of ``values`` (each must be among them)."""
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids[order], values)]


def align_values(target_ids: np.ndarray, source_ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values[i]`` belongs to ``source_ids[i]`` (ascending); return them in the
    order of ``target_ids``, NaN where a target id is not among ``source_ids``."""
    target_ids = np.asarray(target_ids, dtype=np.int64)
    source_ids = np.asarray(source_ids, dtype=np.int64)
    out = np.full(target_ids.size, np.nan)
    if source_ids.size == 0:
        return out
    pos = np.minimum(np.searchsorted(source_ids, target_ids), source_ids.size - 1)
    hit = source_ids[pos] == target_ids
    out[hit] = np.asarray(values, dtype=np.float64)[pos[hit]]
    return out


def study_alignment_data(*, study: Study, run: ScoringRun) -> StudyData:
    """Read a study's pairs, judgments, evaluators and the run's difficulties.

    Attention-check pairs and the judgments of excluded evaluators are left
    out here, once, so no statistic of the report can count them; the
    excluded evaluators are listed in :attr:`StudyData.excluded`."""
    pairs = tuple(map(PairInfo._make, Pair.objects.filter(study=study, attention_check=False)
                      .order_by("position")
                      .values_list(
                          "pk", "position", "question_a_id", "question_b_id", "question_a__external_id",
                          "question_b__external_id", "question_a__subject__name", "question_a__dataset__name",
                          "question_b__dataset__name",
                      )))
    pair_by_id = {p.pair_id: p for p in pairs}
    excluded_rows = list(
        Participation.objects.filter(study=study, excluded_at__isnull=False).order_by("created_at", "pk")
        .values_list("pk", "user__username", "excluded_at", "excluded_by__username", "exclusion_reason")
    )
    excluded_ids = {row[0] for row in excluded_rows}
    rows = list(Judgment.objects.filter(pair__study=study, pair__attention_check=False)
                .values_list("pair_id", "participation_id", "choice", "left_question_id"))
    n_excluded_judgments = dict.fromkeys(excluded_ids, 0)
    pair_col, part_col, choice_col, left_col = (
        (np.array(c) for c in zip(*rows, strict=True)) if rows else (np.empty(0, np.int64) for _ in range(4)))
    pair_col, part_col, left_col = (np.asarray(c, dtype=np.int64) for c in (pair_col, part_col, left_col))
    if excluded_ids:
        out = np.isin(part_col, np.fromiter(excluded_ids, np.int64, len(excluded_ids)))
        for pk, k in zip(*np.unique(part_col[out], return_counts=True), strict=True):
            n_excluded_judgments[int(pk)] = int(k)
        pair_col, part_col, choice_col, left_col = pair_col[~out], part_col[~out], choice_col[~out], left_col[~out]
    # the verdict depends only on the choice and whether the left question is a and/or b: translate each
    # combination once, by the first judgment that has it (an invalid one raises, naming that judgment's ids)
    pair_ids_sorted = np.array(sorted(pair_by_id), dtype=np.int64)
    a_of = np.array([pair_by_id[p].question_a_id for p in pair_ids_sorted.tolist()], dtype=np.int64)
    b_of = np.array([pair_by_id[p].question_b_id for p in pair_ids_sorted.tolist()], dtype=np.int64)
    at = np.searchsorted(pair_ids_sorted, pair_col)
    choices, choice_code = np.unique(choice_col.astype(str), return_inverse=True)
    key = choice_code.reshape(-1) * 4 + (left_col == a_of[at]) * 2 + (left_col == b_of[at])
    verdict_col = np.empty(key.size, dtype=np.int64)
    distinct, first = np.unique(key, return_index=True)
    for k, j in zip(distinct.tolist(), first.tolist(), strict=True):
        verdict_col[key == k] = int(verdict_from_display(
            choice=str(choices[k // 4]), left_question_id=int(left_col[j]), question_a_id=int(a_of[at[j]]),
            question_b_id=int(b_of[at[j]]),
        ))
    order = np.lexsort((verdict_col, part_col, pair_col))  # sorted as (pair_id, participation_id, verdict)
    judgment_array = np.column_stack([pair_col[order], part_col[order], verdict_col[order]]).reshape(-1, 3)
    judged_by = set(np.unique(part_col).tolist())
    evaluators = tuple(
        EvaluatorInfo(pk, f"V{k}", username, field or "", level or "", group or "", bool(simulated))
        for k, (pk, username, field, level, group, simulated) in enumerate(
            (row for row in Participation.objects.filter(study=study)
             .order_by("created_at", "pk")
             .values_list("pk", "user__username", "field_of_study", "education_level", "group", "is_simulated")
             if row[0] in judged_by),
            start=1,
        )
    )
    human = np.full((len(evaluators), len(pairs)), int(UNDEFINED), dtype=np.int8)
    if judgment_array.size:  # one judgment per evaluator and pair (a unique constraint): no cell is written twice
        row_idx = index_of(np.array([e.participation_id for e in evaluators], dtype=np.int64), judgment_array[:, 1])
        col_idx = index_of(np.array([p.pair_id for p in pairs], dtype=np.int64), judgment_array[:, 0])
        human[row_idx, col_idx] = judgment_array[:, 2]

    pair_questions = np.column_stack([np.fromiter((p.question_a_id for p in pairs), np.int64, len(pairs)),
                                      np.fromiter((p.question_b_id for p in pairs), np.int64, len(pairs))])
    question_ids = np.unique(pair_questions)
    pair_index = np.searchsorted(question_ids, pair_questions)
    specs = report_methods()
    rows = list(
        QuestionResult.objects.filter(run=run, question_id__in=question_ids.tolist())
        .order_by("question_id")
        .values_list("question_id", "scores")
    )
    found = np.array([r[0] for r in rows], dtype=np.int64)
    table = np.array([[scores.get(m.column, np.nan) for m in specs] for _, scores in rows], dtype=np.float64).reshape(
        len(rows), len(specs)
    )
    difficulty = {m.key: align_values(question_ids, found, table[:, k]) for k, m in enumerate(specs)}
    replicates = {
        m.key: np.column_stack([
            align_values(question_ids, found, np.array([scores.get(c, np.nan) for _, scores in rows], dtype=np.float64))
            for c in m.replicate_columns
        ]).reshape(question_ids.size, len(m.replicate_columns))
        for m in specs if m.replicate_columns
    }
    stored_params = dict(MethodResult.objects.filter(run=run, method__in=[m.key for m in specs if m.bounds_param])
                         .values_list("method", "params"))
    bounds = {m.key: (float(box[0]), float(box[1])) for m in specs if m.bounds_param
              for box in [(stored_params.get(m.key) or {}).get(m.bounds_param)] if box is not None}
    return StudyData(
        study=study, run=run, pairs=pairs, evaluators=evaluators, judgment_array=judgment_array, human=human,
        question_ids=question_ids, pair_index=pair_index, difficulty=difficulty, replicates=replicates, bounds=bounds,
        datasets=tuple(sorted(study.datasets.values_list("name", flat=True))),
        subjects=tuple(sorted(study.subjects.values_list("name", flat=True))),
        excluded=tuple(
            ExcludedEvaluator(pk, username, at.isoformat(), by or "", reason, n_excluded_judgments[pk])
            for pk, username, at, by, reason in excluded_rows
        ),
        n_attention_checks=Pair.objects.filter(study=study, attention_check=True).count(),
    )


#: Columns of the raw judgments download, in order.
JUDGMENT_COLUMNS = (
    "study", "pair_id", "pair_position", "subject", "dataset_a", "question_a", "dataset_b", "question_b",
    "left_dataset", "left_question", "right_dataset", "right_question", "choice", "harder_dataset",
    "harder_question", "verdict", "evaluator", "field_of_study", "education_level", "shown_at", "submitted_at",
    "seconds", "client_seconds", "attention_check", "evaluator_excluded", "platform_participant_id",
    "platform_study_id", "platform_session_id",
)


def study_judgment_rows(*, study: Study) -> list[dict[str, Any]]:
    """:func:`study_judgment_rows_iter` as a list."""
    return list(study_judgment_rows_iter(study=study))


def study_judgment_rows_iter(*, study: Study) -> Iterator[dict[str, Any]]:
    """One dict per judgment or skip (keys :data:`JUDGMENT_COLUMNS`), by pair then evaluator,
    read from the database in chunks (a streamed download never holds them all).

    Every question is named by its dataset and external id (``dataset_a`` and
    ``question_a``, ``left_dataset`` and ``left_question``, ...): two datasets
    may use the same external ids. ``verdict`` is the canonical reading ("a" =
    ``question_a`` harder, "b", or "skip"); times are ISO 8601.
    """
    fields = (
        "pair_id", "pair__position", "pair__question_a_id", "pair__question_b_id", "pair__question_a__external_id",
        "pair__question_b__external_id", "pair__question_a__subject__name", "pair__question_a__dataset__name",
        "pair__question_b__dataset__name", "left_question_id", "choice", "participation__user__username",
        "participation__field_of_study", "participation__education_level", "shown_at", "submitted_at", "seconds",
        "client_seconds", "pair__attention_check", "participation__excluded_at",
        "participation__platform_participant_id", "participation__platform_study_id",
        "participation__platform_session_id",
    )
    queryset = (Judgment.objects.filter(pair__study=study)
                .order_by("pair__position", "participation__created_at", "participation_id").values_list(*fields)
                .iterator(chunk_size=2000))
    names = {int(FIRST): "a", int(SECOND): "b", int(SKIP): "skip"}
    for (pair_id, position, a_id, b_id, a_ext, b_ext, subject, a_dataset, b_dataset, left_id, choice, user, field,
         level, shown_at, submitted_at, seconds, client_seconds, check, excluded_at, pid, platform_study,
         platform_session) in queryset:
        verdict = verdict_from_display(choice=choice, left_question_id=left_id, question_a_id=a_id, question_b_id=b_id)
        a, b = (a_dataset, a_ext), (b_dataset, b_ext)
        left, right = (a, b) if left_id == a_id else (b, a)
        harder = {FIRST: a, SECOND: b}.get(verdict, ("", ""))
        yield {
            "study": study.name, "pair_id": pair_id, "pair_position": position, "subject": subject or "",
            "dataset_a": a_dataset, "question_a": a_ext, "dataset_b": b_dataset, "question_b": b_ext,
            "left_dataset": left[0], "left_question": left[1], "right_dataset": right[0], "right_question": right[1],
            "choice": choice, "harder_dataset": harder[0], "harder_question": harder[1],
            "verdict": names[int(verdict)], "evaluator": user, "field_of_study": field or "",
            "education_level": level or "", "shown_at": shown_at.isoformat(), "submitted_at": submitted_at.isoformat(),
            "seconds": seconds, "client_seconds": client_seconds, "attention_check": int(check),
            "evaluator_excluded": int(excluded_at is not None), "platform_participant_id": pid,
            "platform_study_id": platform_study, "platform_session_id": platform_session,
        }


def question_metadata_by_id(*, question_ids: list[int]) -> dict[int, dict]:
    """``Question.metadata`` of each id (ids without a question are absent)."""
    return dict(Question.objects.filter(pk__in=question_ids).values_list("pk", "metadata"))


def run_label_rows(*, run: ScoringRun, study: Study) -> list[tuple[dict, dict]]:
    """``(question metadata, stored scores)`` of every question the run scored
    in the study's datasets and subjects (for the Spearman correlations)."""
    return list(
        QuestionResult.objects.filter(
            run=run, question__dataset__in=study.datasets.all(), question__subject__in=study.subjects.all(),
        ).values_list("question__metadata", "scores")
    )


def run_dataset_scores(*, run: ScoringRun) -> list[tuple[str, dict]]:
    """``(dataset name, stored scores)`` of every question the run scored, by question id."""
    return list(QuestionResult.objects.filter(run=run).order_by("question_id")
                .values_list("question__dataset__name", "scores"))


def study_report_fingerprint(*, study: Study) -> list[int | None]:
    """Counts and newest ids of the study's judgments, participations and
    exclusion events: any new judgment, evaluator, deleted evaluator,
    exclusion or reversal changes it."""
    judgments = Judgment.objects.filter(pair__study=study).aggregate(n=Count("id"), last=Max("id"))
    evaluators = Participation.objects.filter(study=study).aggregate(
        n=Count("id"), last_user=Max("user_id"), last=Max("id")
    )
    events = ExclusionEvent.objects.filter(participation__study=study).aggregate(n=Count("id"), last=Max("id"))
    return [judgments["n"], judgments["last"], evaluators["n"], evaluators["last_user"], evaluators["last"],
            events["n"], events["last"]]


def run_model_names(*, run: ScoringRun) -> tuple[str, ...]:
    """Names of the models the run scored (``models_used``), sorted; empty when not recorded."""
    return tuple(sorted(run.models_used.values_list("name", flat=True)))


def pools_analysis_latest(
    *, response_set: ResponseSet, alpha: float, statuses: tuple[str, ...] = (RunStatus.DONE,)
) -> AnalysisRun | None:
    """The newest stored model-pool analysis (``AnalysisKind.POOLS``) of
    ``response_set`` computed with EIP damping ``alpha`` and without the
    excluded questions (``include_excluded`` false), in one of ``statuses``;
    None when there is none."""
    candidates = (AnalysisRun.objects.filter(kind=AnalysisKind.POOLS, response_set=response_set, status__in=statuses)
                  .order_by("-created_at", "-id").values_list("pk", "params"))
    for pk, params in candidates:
        params = params if isinstance(params, dict) else {}
        if params.get("alpha") == alpha and not params.get("include_excluded", False):
            return AnalysisRun.objects.get(pk=pk)
    return None


def pools_analysis_fingerprint(*, response_set: ResponseSet) -> list[list]:
    """``[id, status]`` of every pools analysis of ``response_set``: changes when
    one is queued, starts, finishes or fails."""
    return [list(row) for row in AnalysisRun.objects.filter(kind=AnalysisKind.POOLS, response_set=response_set)
            .order_by("pk").values_list("pk", "status")]
