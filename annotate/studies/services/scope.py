"""A study's scope: its datasets, subjects and pairs, sampled and stored.

The pairs are drawn from the scoring run's questions (stratified by subject,
or adaptive), seeded per stream so that a scope drawn again from the same
settings is the same; the scope may change until the study's first judgment
and freezes then (:func:`study_scope_guard`, :data:`ERR_SCOPE_FROZEN`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from annotate.core import counted, pairs_analyze
from annotate.models import (
    AdaptivePoolQuestion,
    Assignment,
    Dataset,
    Pair,
    PairStrategy,
    ScoringRun,
    Study,
    Subject,
)
from annotate.studies.selectors.studies import (
    study_judgment_count,
    study_scope_frozen,
)
from annotate.studies.selectors.study_scope import ScopeCandidates, study_scope_candidates
from scoring.attention_checks import (
    TooFewAttentionChecks,
    attention_check_count,
    max_attention_check_share,
    select_attention_checks,
)
from scoring.methods import difficulty_methods, get_method
from scoring.pair_sampling import sample_pairs

#: Second element of the seed sequence that draws each pair's order.
ORIENTATION_STREAM = 1


#: Second element of the seed sequence that breaks ties among attention checks and orients them.
ATTENTION_STREAM = 2


#: Second element of the seed sequence of a subject's sampler when pairs are drawn per subject.
SUBJECT_STREAM = 3


ERR_NO_DATASETS = "datasets must name at least one dataset"


ERR_ATTENTION_FEASIBLE = "{message} (at most {share:.0%} with these pairs)"


ERR_ADAPTIVE_PER_SUBJECT = (
    "an adaptive study takes n_pairs (the pairs each evaluator judges), not pairs_per_subject; "
    "got pairs_per_subject={value!r}"
)


ERR_ADAPTIVE_NO_PAIR = (
    "run {run_id} has no two eligible questions of one subject (and one component of the model-question graph) "
    "in the chosen datasets and subjects, so an adaptive study has no pair to offer"
)


ERR_ADAPTIVE_TOO_MANY = (
    "n_pairs must be at most {n_possible:,} in this adaptive study: it is the pairs each evaluator judges, each "
    "pair at most once, and its pool of {pool} holds {possible}; "
    "got {value:,}"
)


ERR_SUBJECTS_OUTSIDE = "subjects {names} have no question of the chosen datasets in run {run_id}"


ERR_NO_QUESTIONS = "run {run_id} has no question with a subject in the chosen datasets and subjects"


ERR_PAIRS_MODE = (
    "give exactly one of n_pairs and pairs_per_subject; got n_pairs={n_pairs!r}, pairs_per_subject={per_subject!r}"
)


ERR_SUBJECT_PAIRS = "subject {name!r}: {reason}"


ERR_SCOPE_FROZEN = (
    "study {name!r} (id {study_id}) is frozen: it has {n_judgments} judgment(s), so its datasets, subjects and "
    "pairs can no longer change; to judge a different scope, create a new study"
)


# Difficulty columns handed to the pair sampler: EIP's pi_Q is the reference,
# the difficulty of every other registered method a baseline it is compared with.
REFERENCE_COLUMN = "eip"


def _baseline_columns() -> tuple[str, ...]:
    return tuple(m.difficulty_column for m in difficulty_methods() if m.key != "eip" and m.difficulty_column)


def _as_harder(column: str, values: np.ndarray) -> np.ndarray:
    """A sampler column's values signed so that higher = harder (its method's registry ``higher_is_harder``)."""
    method = next((m for m in difficulty_methods() if column in m.question_columns), None)
    return values if method is None else method.as_harder(values)


def _column_tolerances() -> dict[str, float]:
    """Each sampler column's relative tie tolerance, from the method registry."""
    out = {REFERENCE_COLUMN: get_method("eip").tie_tolerance}
    out.update((m.difficulty_column, m.tie_tolerance) for m in difficulty_methods()
               if m.key != "eip" and m.difficulty_column)
    return out


class StudyScopeFrozenError(ValueError):
    """The study has a judgment, so its datasets, subjects and pairs are fixed."""


@dataclass(frozen=True)
class _Scope:
    """A study's sampled scope, not yet stored: its datasets, its subjects, its
    pairs as ``(question_a_id, question_b_id, stratum)`` in sampler order, and
    its attention checks as ``(question_a_id, question_b_id, expected_harder_id)``."""

    datasets: list[Dataset]
    subjects: list[Subject]
    pairs: list[tuple[int, int, int | None]]
    checks: list[tuple[int, int, int]] = dataclasses.field(default_factory=list)
    #: Adaptive study: the pool as ``(question_id, block)``, and the pairs each evaluator judges.
    pool: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    per_evaluator: int | None = None

    @property
    def n_pairs(self) -> int:
        """The study's ``n_pairs``: its pairs, or an adaptive study's pairs per evaluator."""
        return len(self.pairs) if self.per_evaluator is None else self.per_evaluator


def _sample_scope(
    *,
    run: ScoringRun,
    datasets: list[Dataset],
    subjects: Sequence[Subject] | None,
    n_pairs: int | None,
    seed: int,
    strategy: str,
    include_unkept: bool,
    include_low_coverage: bool = False,
    pairs_per_subject: int | None = None,
    attention_check_share: float = 0.0,
) -> _Scope:
    """Draw the pairs of a scope (reads only; raises ``ValueError`` as :func:`study_create`).

    With an ``attention_check_share`` above 0, attention checks are added on
    top of the regular pairs so that they make up that share of all pairs
    (:func:`scoring.attention_checks.attention_check_count`), chosen by the
    rule of :mod:`scoring.attention_checks` from the same eligible questions
    by the run's EIP difficulty (percentile ranks at least 0.5 apart), never
    repeating a regular pair."""
    candidates = study_scope_candidates(
        run=run, datasets=datasets, subjects=subjects, include_unkept=include_unkept,
        include_low_coverage=include_low_coverage, columns=(REFERENCE_COLUMN, *_baseline_columns()),
    )
    present = candidates.subjects_present
    if subjects is not None:
        subjects = list(subjects)
        outside = sorted(s.name for s in subjects if s.pk not in present)
        if outside:
            raise ValueError(ERR_SUBJECTS_OUTSIDE.format(names=outside, run_id=run.pk))
    if not len(candidates.question_ids):
        raise ValueError(ERR_NO_QUESTIONS.format(run_id=run.pk))
    used = list(subjects) if subjects is not None else list(Subject.objects.filter(pk__in=present).order_by("pk"))
    if strategy == PairStrategy.ADAPTIVE:
        return _adaptive_scope(candidates, datasets=datasets, subjects=used, run=run, per_evaluator=n_pairs,
                               pairs_per_subject=pairs_per_subject, seed=seed,
                               attention_check_share=attention_check_share)
    if pairs_per_subject is None:
        if n_pairs is None:
            raise ValueError(ERR_PAIRS_MODE.format(n_pairs=n_pairs, per_subject=pairs_per_subject))
        pairs, labels = _draw(candidates, np.ones(len(candidates.question_ids), dtype=bool), n_pairs=n_pairs,
                              strategy=strategy, rng=np.random.default_rng(seed))
    else:
        drawn = []
        for subject in sorted(used, key=lambda s: s.pk):
            try:
                drawn.append(_draw(candidates, candidates.subject_ids == subject.pk, n_pairs=pairs_per_subject,
                                   strategy=strategy, rng=np.random.default_rng([seed, SUBJECT_STREAM, subject.pk])))
            except ValueError as exc:
                raise ValueError(ERR_SUBJECT_PAIRS.format(name=subject.name, reason=exc)) from None
        pairs = np.concatenate([d[0] for d in drawn])
        labels = None if any(d[1] is None for d in drawn) else np.concatenate([d[1] for d in drawn])
    # Randomly ordered pairs: which question is "a" comes from a stream of its
    # own (seeded by the study's seed), so the sampled set does not change.
    oriented = pairs.copy()
    flip = np.random.default_rng([seed, ORIENTATION_STREAM]).random(len(oriented)) < 0.5
    oriented[flip] = oriented[flip][:, ::-1]
    rows = [
        (int(a), int(b), None if labels is None else int(labels[k])) for k, (a, b) in enumerate(oriented.tolist())
    ]
    checks = []
    n_checks = attention_check_count(len(rows), attention_check_share)
    if n_checks:
        stream = np.random.default_rng([seed, ATTENTION_STREAM])
        # Like the regular pairs, a check never spans two blocks of the model-question graph.
        blocks = _blocks(candidates)
        try:
            chosen = select_attention_checks(
                candidates.question_ids, blocks, candidates.difficulty[REFERENCE_COLUMN], n_checks=n_checks,
                eligible=candidates.eligible, exclude=pairs, rng=stream,
            )
        except TooFewAttentionChecks as error:
            raise ValueError(ERR_ATTENTION_FEASIBLE.format(
                message=error, share=max_attention_check_share(len(rows), error.n_possible))) from None
        flip = stream.random(n_checks) < 0.5
        for (easy, hard), swap in zip(chosen.pairs.tolist(), flip.tolist(), strict=True):
            checks.append((hard, easy, hard) if swap else (easy, hard, hard))
    return _Scope(datasets=datasets, subjects=used, pairs=rows, checks=checks)


def _blocks(candidates: ScopeCandidates) -> np.ndarray:
    """Each candidate's block: its subject and its component of the model-question graph."""
    subject_ids, components = candidates.subject_ids, candidates.components
    return subject_ids if components is None else subject_ids * (int(components.max()) + 1) + components


def _adaptive_scope(
    candidates: ScopeCandidates, *, datasets: list[Dataset], subjects: list[Subject], run: ScoringRun,
    per_evaluator: int | None, pairs_per_subject: int | None, seed: int, attention_check_share: float,
) -> _Scope:
    """An adaptive study's scope: its pool (the eligible candidates) and its attention checks."""
    if pairs_per_subject is not None:
        raise ValueError(ERR_ADAPTIVE_PER_SUBJECT.format(value=pairs_per_subject))
    if per_evaluator is None:
        raise ValueError(ERR_PAIRS_MODE.format(n_pairs=per_evaluator, per_subject=pairs_per_subject))
    blocks = _blocks(candidates)
    eligible = candidates.eligible
    _, counts = np.unique(blocks[eligible], return_counts=True)
    if not (counts >= 2).any():
        raise ValueError(ERR_ADAPTIVE_NO_PAIR.format(run_id=run.pk))
    # An evaluator judges a pair at most once, and pairs never cross a block.
    n_possible = int((counts * (counts - 1) // 2).sum())
    if per_evaluator > n_possible:
        raise ValueError(ERR_ADAPTIVE_TOO_MANY.format(
            n_possible=n_possible, value=per_evaluator, pool=counted(int(counts.sum()), 'question'),
            possible=counted(n_possible, 'distinct same-subject pair')))
    pool = [(int(q), int(b)) for q, b in zip(candidates.question_ids[eligible].tolist(),
                                              blocks[eligible].tolist(), strict=True)]
    checks = []
    # Each evaluator meets every check once, so they make up the share of what each evaluator judges.
    n_checks = attention_check_count(per_evaluator, attention_check_share)
    if n_checks:
        stream = np.random.default_rng([seed, ATTENTION_STREAM])
        chosen = select_attention_checks(
            candidates.question_ids, blocks, candidates.difficulty[REFERENCE_COLUMN], n_checks=n_checks,
            eligible=eligible, exclude=np.empty((0, 2), dtype=np.int64), rng=stream,
        )
        flip = stream.random(len(chosen.pairs)) < 0.5
        for (easy, hard), swap in zip(chosen.pairs.tolist(), flip.tolist(), strict=True):
            checks.append((hard, easy, hard) if swap else (easy, hard, hard))
    return _Scope(datasets=datasets, subjects=subjects, pairs=[], checks=checks, pool=pool,
                  per_evaluator=per_evaluator)


def _draw(
    candidates: ScopeCandidates, mask: np.ndarray, *, n_pairs: int, strategy: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray | None]:
    """Sample ``n_pairs`` among the candidates in ``mask``; (pairs, stratum or disagreement labels)."""
    difficulty = {column: _as_harder(column, values[mask]) for column, values in candidates.difficulty.items()}
    sample = sample_pairs(
        candidates.question_ids[mask],
        candidates.subject_ids[mask],
        n_pairs=n_pairs,
        strategy=strategy,
        difficulty=difficulty if strategy != PairStrategy.UNIFORM else None,
        kept=candidates.eligible[mask],
        components=None if candidates.components is None else candidates.components[mask],
        reference=REFERENCE_COLUMN,
        tie_tolerance=_column_tolerances(),
        rng=rng,
    )
    return sample.pairs, (sample.stratum if sample.stratum is not None else sample.n_disagree)


def _clear_scope(*, study: Study) -> None:
    Assignment.objects.filter(pair__study=study).delete()
    Pair.objects.filter(study=study).delete()
    AdaptivePoolQuestion.objects.filter(study=study).delete()


def _store_scope(*, study: Study, scope: _Scope) -> None:
    study.datasets.set(scope.datasets)
    study.subjects.set(scope.subjects)
    AdaptivePoolQuestion.objects.bulk_create(
        AdaptivePoolQuestion(study=study, question_id=q, block=b) for q, b in scope.pool
    )
    Pair.objects.bulk_create(
        Pair(study=study, position=k, question_a_id=a, question_b_id=b, stratum=stratum)
        for k, (a, b, stratum) in enumerate(scope.pairs)
    )
    # Attention checks follow the regular pairs; each evaluator's own order mixes them in.
    Pair.objects.bulk_create(
        Pair(study=study, position=len(scope.pairs) + k, question_a_id=a, question_b_id=b,
             attention_check=True, expected_harder_id=harder)
        for k, (a, b, harder) in enumerate(scope.checks)
    )
    pairs_analyze()


def study_scope_guard(*, study: Study) -> None:
    """Refuse when ``study``'s scope is frozen (see
    :func:`annotate.studies.selectors.studies.study_scope_frozen`).

    Raises
    ------
    StudyScopeFrozenError
        A ``ValueError`` whose message is :data:`ERR_SCOPE_FROZEN`: it names the
        study and says the way forward is a new study.
    """
    if study_scope_frozen(study=study):
        raise StudyScopeFrozenError(
            ERR_SCOPE_FROZEN.format(name=study.name, study_id=study.pk, n_judgments=study_judgment_count(study=study))
        )


def _scope_of(
    *, study: Study, datasets: Sequence[Dataset], subjects: Sequence[Subject] | None, n_pairs: int | None
) -> _Scope:
    study_scope_guard(study=study)
    datasets = list(datasets)
    if not datasets:
        raise ValueError(ERR_NO_DATASETS)
    per_subject = study.pairs_per_subject if n_pairs is None else None
    return _sample_scope(
        run=study.scoring_run, datasets=datasets, subjects=subjects,
        n_pairs=None if per_subject else (study.n_pairs if n_pairs is None else n_pairs), seed=study.seed,
        strategy=str(study.strategy), include_unkept=study.include_unkept,
        include_low_coverage=study.include_low_coverage, pairs_per_subject=per_subject,
        attention_check_share=study.attention_check_share,
    )


def study_scope_validate(
    *, study: Study, datasets: Sequence[Dataset], subjects: Sequence[Subject] | None = None, n_pairs: int | None = None
) -> None:
    """Check, without writing, that :func:`study_scope_update` would accept these
    arguments (forms call it to show the reason next to the fields).

    Raises
    ------
    StudyScopeFrozenError, ValueError
        As :func:`study_scope_update`.
    """
    _scope_of(study=study, datasets=datasets, subjects=subjects, n_pairs=n_pairs)


@transaction.atomic
def study_scope_update(
    *, study: Study, datasets: Sequence[Dataset], subjects: Sequence[Subject] | None = None, n_pairs: int | None = None
) -> Study:
    """Change a not-yet-judged study's datasets, subjects or number of pairs.

    The pairs are drawn again from the study's run with its seed and strategy,
    exactly as :func:`study_create` would draw them for this scope; pairs that
    were on an evaluator's screen (assigned, never answered) are withdrawn.

    Parameters
    ----------
    study : Study
        A study without any judgment.
    datasets : sequence of Dataset
        The new datasets (at least one).
    subjects : sequence of Subject, optional
        The new subjects; default every subject of ``datasets``' questions in
        the study's run (as in :func:`study_create`).
    n_pairs : int, optional
        The new number of pairs in all (the study then no longer draws per
        subject); default the study's current number, or per subject as before.

    Returns
    -------
    Study

    Raises
    ------
    StudyScopeFrozenError
        The study has a judgment (vote or skip); its message is
        :data:`ERR_SCOPE_FROZEN`. Nothing changes.
    ValueError
        A bad scope (messages as :func:`study_create`). Nothing changes.
    """
    study = Study.objects.select_for_update().select_related("scoring_run").get(pk=study.pk)
    scope = _scope_of(study=study, datasets=datasets, subjects=subjects, n_pairs=n_pairs)
    # A judgment refers to its pair (on_delete=PROTECT), so a judgment that
    # slips in concurrently makes this delete fail and the whole change roll back.
    _clear_scope(study=study)
    study.n_pairs = scope.n_pairs
    if n_pairs is not None:
        study.pairs_per_subject = None
    study.save(update_fields=["n_pairs", "pairs_per_subject"])
    _store_scope(study=study, scope=scope)
    return study
