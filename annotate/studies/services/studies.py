"""Writes for studies: create one from a scoring run, change its scope until
its first judgment, open/close it, manage invitations, create evaluators and
record their onboarding.

A study's scope (datasets, subjects, pairs) freezes at its first judgment
(:func:`annotate.studies.selectors.studies.study_scope_frozen`); every path that would
change it (admin, commands) goes through :func:`study_scope_update`, which
refuses with :data:`ERR_SCOPE_FROZEN`.

Business rules live here; views and management commands only call these.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from annotate.core import pairs_analyze, storable_text_problem
from annotate.models import (
    AdaptivePoolQuestion,
    Assignment,
    ConsentDecline,
    Dataset,
    EducationLevel,
    FieldOfStudy,
    Invitation,
    OnboardingQuestion,
    Pair,
    PairStrategy,
    Participation,
    ResumeByParticipantId,
    RunStatus,
    ScoringRun,
    Study,
    StudyStatus,
    Subject,
)
from annotate.models.studies import (
    DEFAULT_ADAPTIVE_MIN_COMPARISONS,
    DEFAULT_ADAPTIVE_RANDOM_SHARE,
    DEFAULT_CONSENT,
    DEFAULT_GUIDELINES,
)
from annotate.studies.selectors.studies import (
    EVALUATOR_GROUP,
    RESEARCHER_GROUP,
    study_judgment_count,
    study_scope_frozen,
    user_is_evaluator,
)
from annotate.studies.selectors.study_scope import ScopeCandidates, study_scope_candidates
from annotate.studies.services.study_quality import study_quality_settings_update
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

ERR_NAME_EMPTY = "name must not be empty"
ERR_NAME_TAKEN = "a study named {name!r} already exists"
ERR_RUN_NOT_DONE = "scoring run {run_id} is {status!r}; pairs come only from a finished ('done') run"
ERR_NO_DATASETS = "datasets must name at least one dataset"
ERR_STRATEGY = "strategy must be one of {choices}; got {strategy!r}"
ERR_TARGET = "target_judgments_per_pair must be an integer >= 1; got {value!r}"
ERR_SEED = "seed must be a non-negative integer; got {value!r}"
ERR_SEED_RANGE = "seed must be at most {limit} (2**63 - 1); got {value!r}"
ERR_NAME_LONG = "name must be at most {limit} characters; got {length}"
ERR_COUNT_RANGE = "{field} must be at most {limit}; got {value!r}"
#: Longest study name (the column's length).
NAME_MAX = 200
#: Largest seed a study stores (a signed 64-bit column).
SEED_MAX = 2**63 - 1
#: Largest pair count, target or per-subject count (a positive integer column on every database).
COUNT_MAX = 2**31 - 1
ERR_ATTENTION_FEASIBLE = "{message} (at most {share:.0%} with these pairs)"
ERR_ATTENTION_SHARE = "attention_check_share must be a number in [0, 0.5]; got {value!r}"
ERR_ADAPTIVE_MIN = "adaptive_min_comparisons must be an integer >= 0 (0: no exposure floor); got {value!r}"
ERR_ADAPTIVE_SHARE = "adaptive_random_share must be a number in [0, 1]; got {value!r}"
ERR_ADAPTIVE_PER_SUBJECT = (
    "an adaptive study takes n_pairs (the pairs each evaluator judges), not pairs_per_subject; "
    "got pairs_per_subject={value!r}"
)
ERR_ADAPTIVE_NO_PAIR = (
    "run {run_id} has no two eligible questions of one subject (and one component of the model-question graph) "
    "in the chosen datasets and subjects, so an adaptive study has no pair to offer"
)
ERR_SUBJECTS_OUTSIDE = "subjects {names} have no question of the chosen datasets in run {run_id}"
ERR_NO_QUESTIONS = "run {run_id} has no question with a subject in the chosen datasets and subjects"
ERR_USERNAME_TAKEN = "username {username!r} is already taken"
ERR_USERNAME_EMPTY = "username must not be empty"
ERR_USERNAME_INVALID = (
    "username {username!r} is not allowed: use at most {limit} letters, digits and the characters @ . + - _ "
    "(no spaces)"
)
ERR_INVITATION_REVOKED = "this invitation link has been revoked"
ERR_STUDY_CLOSED = "study {name!r} is closed"
ERR_PAIRS_MODE = (
    "give exactly one of n_pairs and pairs_per_subject; got n_pairs={n_pairs!r}, pairs_per_subject={per_subject!r}"
)
ERR_PER_SUBJECT = "pairs_per_subject must be an integer >= 1; got {value!r}"
ERR_SUBJECT_PAIRS = "subject {name!r}: {reason}"
ERR_ONBOARDING = "onboarding_questions must be distinct values of {choices}; got {value!r}"
ERR_NOT_ASKED = "{name} is not one of the study's onboarding questions"
ERR_STATUS = "status must be one of {choices}; got {status!r}"
ERR_FIELD = "field_of_study must be one of {choices}; got {value!r}"
ERR_LEVEL = "education_level must be one of {choices}; got {value!r}"
ERR_QUALIFIED = "qualified_subjects must be subjects of the study; {names} are not"
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


class StudyClosedError(Exception):
    """The study does not accept new evaluators or judgments."""


class InvitationRevokedError(Exception):
    """The invitation link was revoked."""


class StudyScopeFrozenError(ValueError):
    """The study has a judgment, so its datasets, subjects and pairs are fixed."""


def _group(name: str) -> Group:
    group, _ = Group.objects.get_or_create(name=name)
    return group


def ensure_role_groups() -> tuple[Group, Group]:
    """Create the "researcher" and "evaluator" groups if missing."""
    return _group(RESEARCHER_GROUP), _group(EVALUATOR_GROUP)


# --- studies --------------------------------------------------------------------


def _check_settings(
    *,
    name: str,
    run: ScoringRun,
    datasets: Sequence[Dataset],
    strategy: str,
    target_judgments_per_pair: int,
    seed: int,
    n_pairs: int | None,
    pairs_per_subject: int | None,
    onboarding_questions: Sequence[str],
    status: str,
    study: Study | None = None,
    adaptive_min_comparisons: int = DEFAULT_ADAPTIVE_MIN_COMPARISONS,
    adaptive_random_share: float = DEFAULT_ADAPTIVE_RANDOM_SHARE,
) -> str:
    """Check a study's settings (not its scope); the stripped name."""
    name = (name or "").strip()
    if not name:
        raise ValueError(ERR_NAME_EMPTY)
    if len(name) > NAME_MAX:
        raise ValueError(ERR_NAME_LONG.format(limit=NAME_MAX, length=len(name)))
    for field, value in (("target_judgments_per_pair", target_judgments_per_pair), ("n_pairs", n_pairs),
                         ("pairs_per_subject", pairs_per_subject),
                         ("adaptive_min_comparisons", adaptive_min_comparisons)):
        if isinstance(value, int) and value > COUNT_MAX:
            raise ValueError(ERR_COUNT_RANGE.format(field=field, limit=COUNT_MAX, value=value))
    if isinstance(seed, int) and seed > SEED_MAX:
        raise ValueError(ERR_SEED_RANGE.format(limit=SEED_MAX, value=seed))
    if Study.objects.filter(name=name).exclude(pk=getattr(study, "pk", None)).exists():
        raise ValueError(ERR_NAME_TAKEN.format(name=name))
    if run.status != RunStatus.DONE:
        raise ValueError(ERR_RUN_NOT_DONE.format(run_id=run.pk, status=str(run.status)))
    if not list(datasets):
        raise ValueError(ERR_NO_DATASETS)
    if strategy not in PairStrategy.values:
        raise ValueError(ERR_STRATEGY.format(choices=PairStrategy.values, strategy=strategy))
    if not _positive_int(target_judgments_per_pair):
        raise ValueError(ERR_TARGET.format(value=target_judgments_per_pair))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(ERR_SEED.format(value=seed))
    if (n_pairs is None) == (pairs_per_subject is None):
        raise ValueError(ERR_PAIRS_MODE.format(n_pairs=n_pairs, per_subject=pairs_per_subject))
    if pairs_per_subject is not None and not _positive_int(pairs_per_subject):
        raise ValueError(ERR_PER_SUBJECT.format(value=pairs_per_subject))
    unknown = [q for q in onboarding_questions if q not in OnboardingQuestion.values]
    if unknown or len(set(onboarding_questions)) != len(list(onboarding_questions)):
        raise ValueError(ERR_ONBOARDING.format(choices=OnboardingQuestion.values, value=list(onboarding_questions)))
    if status not in StudyStatus.values:
        raise ValueError(ERR_STATUS.format(choices=StudyStatus.values, status=status))
    if strategy == PairStrategy.ADAPTIVE and pairs_per_subject is not None:
        raise ValueError(ERR_ADAPTIVE_PER_SUBJECT.format(value=pairs_per_subject))
    if not _positive_int(adaptive_min_comparisons + 1 if isinstance(adaptive_min_comparisons, int)
                         else adaptive_min_comparisons):
        raise ValueError(ERR_ADAPTIVE_MIN.format(value=adaptive_min_comparisons))
    share = adaptive_random_share
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise ValueError(ERR_ADAPTIVE_SHARE.format(value=share))
    return name


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@transaction.atomic
def study_create(
    *,
    name: str,
    run: ScoringRun,
    datasets: Sequence[Dataset],
    n_pairs: int | None = None,
    seed: int,
    subjects: Sequence[Subject] | None = None,
    strategy: str = PairStrategy.UNIFORM,
    target_judgments_per_pair: int = 20,
    include_unkept: bool = False,
    include_low_coverage: bool = False,
    guidelines: str | None = None,
    created_by: AbstractBaseUser | None = None,
    pairs_per_subject: int | None = None,
    consent_text: str | None = None,
    onboarding_questions: Sequence[str] | None = None,
    members: Sequence[AbstractBaseUser] = (),
    status: str = StudyStatus.OPEN,
    attention_check_share: float = 0.0,
    crowd_settings: Mapping[str, object] | None = None,
    adaptive_min_comparisons: int = DEFAULT_ADAPTIVE_MIN_COMPARISONS,
    adaptive_random_share: float = DEFAULT_ADAPTIVE_RANDOM_SHARE,
) -> Study:
    """Create a study whose pairs are fixed now, from one scoring run.

    Parameters
    ----------
    name : str
        Unique study name (shown to evaluators).
    run : ScoringRun
        A finished run; its ``QuestionResult`` rows give the questions, their
        ``kept`` flags and the difficulties the strategies use.
    datasets : sequence of Dataset
        Questions come from these datasets only.
    n_pairs : int, optional
        Number of pairs, >= 1. Give this or ``pairs_per_subject``, not both.
    seed : int
        Seed of the pair sampler (the same inputs and seed give the same pairs).
    subjects : sequence of Subject, optional
        Restrict to these subjects; default every subject of the chosen
        datasets' questions in the run. Questions without a subject are never
        paired.
    strategy : {"uniform", "stratified_gap", "methods_disagree", "adaptive"}, default "uniform"
        See :func:`scoring.pair_sampling.sample_pairs`. ``"adaptive"`` draws
        no pair now: the study keeps the eligible questions of its scope as
        its pool (:class:`~annotate.models.AdaptivePoolQuestion`) and each
        evaluator's next pair is chosen when it is served
        (:func:`annotate.studies.services.judging.judging_assign_next`, kernel
        :mod:`scoring.adaptive_pairs`); ``n_pairs`` is then the number of
        regular pairs each evaluator judges, and ``pairs_per_subject`` is
        refused.
    target_judgments_per_pair : int, default 20
        Votes after which a pair is no longer offered to new evaluators.
    include_unkept : bool, default False
        Also pair questions every model solved or failed (``kept`` False).
    include_low_coverage : bool, default False
        Also pair questions observed by fewer models than the run's
        ``min_models`` (default 3; see :mod:`scoring.diagnostics`). Whatever
        this says, a pair's two questions always lie in the same connected
        component of the run's model-question graph, and a question without
        text is never paired (:mod:`annotate.studies.selectors.study_scope`).
    guidelines : str, optional
        Markdown text of the guidelines page; default :data:`DEFAULT_GUIDELINES`.
    created_by : User, optional
        The study's owner.
    pairs_per_subject : int, optional
        Draw this many pairs in each subject instead (each subject with a
        sampler of its own, seeded by ``[seed, subject id]``); the study's
        ``n_pairs`` is then this times the number of subjects.
    consent_text : str, optional
        Markdown shown on the invitation page; evaluators agree or decline
        before anything is stored. Default (None or empty):
        :data:`~annotate.models.studies.DEFAULT_CONSENT`.
    onboarding_questions : sequence of str, optional
        :class:`~annotate.models.OnboardingQuestion` values; default all.
    members : sequence of User, default ()
        Researchers added to the study (they manage it as its owner does).
    status : {"draft", "open", "closed"}, default "open"
        The creation page makes drafts, launched later; the command opens at once.
    attention_check_share : float, default 0
        Share in [0, 0.5] of all pairs that are attention checks: pairs whose
        harder question is known (see :func:`_sample_scope` and
        :mod:`scoring.attention_checks`), added on top of the ``n_pairs``
        regular pairs, served blind and left out of agreement statistics.
    crowd_settings : mapping, optional
        Keyword arguments of
        :func:`annotate.studies.services.study_quality.study_quality_settings_update`
        (``speeder_seconds``, the three platform parameter names,
        ``completion_code``, ``completion_url``), applied in the same
        transaction; default: the model's defaults (Prolific's names, 5 s).
    adaptive_min_comparisons : int, default 5
        Adaptive study: the exposure floor: while a question of the pool
        (with a pair the evaluator has not seen) has fewer votes than this,
        the informative choice must include such a question; an integer
        >= 0 (0: no floor).
    adaptive_random_share : float, default 0.1
        Adaptive study: share in [0, 1] of the pairs chosen uniformly at random
        among those the evaluator has not seen (keeps the design unbiased).

    Returns
    -------
    Study
        With ``n_pairs`` Pair rows; each pair's order (which question is
        ``question_a``) is a fair coin from the study's seed.

    Raises
    ------
    ValueError
        On a bad argument (messages are this module's ``ERR_*`` constants) or
        when fewer distinct same-subject pairs are possible than requested (the
        sampler's message says how many are).

    References
    ----------
    EIP paper, section 5 and appendix H.3 (70 same-subject pairs, blind).
    """
    questions = list(OnboardingQuestion.values) if onboarding_questions is None else list(onboarding_questions)
    name = _check_settings(
        name=name, run=run, datasets=datasets, strategy=strategy, target_judgments_per_pair=target_judgments_per_pair,
        seed=seed, n_pairs=n_pairs, pairs_per_subject=pairs_per_subject, onboarding_questions=questions,
        status=status, adaptive_min_comparisons=adaptive_min_comparisons, adaptive_random_share=adaptive_random_share,
    )
    datasets = list(datasets)
    _check_share(attention_check_share)
    scope = _sample_scope(
        run=run, datasets=datasets, subjects=subjects, n_pairs=n_pairs, seed=seed, strategy=str(strategy),
        include_unkept=include_unkept, include_low_coverage=include_low_coverage, pairs_per_subject=pairs_per_subject,
        attention_check_share=attention_check_share,
    )
    study = Study.objects.create(
        name=name,
        scoring_run=run,
        strategy=strategy,
        seed=seed,
        n_pairs=scope.n_pairs,
        pairs_per_subject=pairs_per_subject,
        include_unkept=include_unkept,
        include_low_coverage=include_low_coverage,
        target_judgments_per_pair=target_judgments_per_pair,
        guidelines=guidelines if guidelines is not None else DEFAULT_GUIDELINES,
        consent_text=consent_text or DEFAULT_CONSENT,
        onboarding_questions=questions,
        status=status,
        created_by=created_by,
        attention_check_share=attention_check_share,
        adaptive_min_comparisons=adaptive_min_comparisons,
        adaptive_random_share=adaptive_random_share,
    )
    study.members.set(members)
    _store_scope(study=study, scope=scope)
    if crowd_settings is not None:
        _apply_crowd_settings(study=study, crowd_settings=crowd_settings)
    return study


@transaction.atomic
def study_edit(
    *,
    study: Study,
    name: str,
    run: ScoringRun,
    datasets: Sequence[Dataset],
    n_pairs: int | None = None,
    seed: int,
    subjects: Sequence[Subject] | None = None,
    strategy: str = PairStrategy.UNIFORM,
    target_judgments_per_pair: int = 20,
    include_unkept: bool = False,
    include_low_coverage: bool = False,
    guidelines: str,
    pairs_per_subject: int | None = None,
    consent_text: str | None = None,
    onboarding_questions: Sequence[str] | None = None,
    members: Sequence[AbstractBaseUser] = (),
    attention_check_share: float = 0.0,
    crowd_settings: Mapping[str, object] | None = None,
    adaptive_min_comparisons: int = DEFAULT_ADAPTIVE_MIN_COMPARISONS,
    adaptive_random_share: float = DEFAULT_ADAPTIVE_RANDOM_SHARE,
) -> Study:
    """Change every setting of a study that has no judgment yet, drawing its
    pairs again exactly as :func:`study_create` would for these arguments
    (pairs on an evaluator's screen, never answered, are withdrawn). The
    owner, status and creation time stay.

    Parameters
    ----------
    study : Study
        A study without any judgment.
    name, run, datasets, n_pairs, seed, subjects, strategy, target_judgments_per_pair
        As :func:`study_create`.
    include_unkept, include_low_coverage, guidelines, pairs_per_subject
        As :func:`study_create`.
    consent_text, onboarding_questions, members, attention_check_share, crowd_settings
        As :func:`study_create` (``crowd_settings`` None leaves those settings as they are).

    Returns
    -------
    Study

    Raises
    ------
    StudyScopeFrozenError
        The study has a judgment; its message is :data:`ERR_SCOPE_FROZEN`. Nothing changes.
    ValueError
        As :func:`study_create`. Nothing changes.
    """
    study = Study.objects.select_for_update().get(pk=study.pk)
    study_scope_guard(study=study)
    questions = list(OnboardingQuestion.values) if onboarding_questions is None else list(onboarding_questions)
    name = _check_settings(
        name=name, run=run, datasets=datasets, strategy=strategy, target_judgments_per_pair=target_judgments_per_pair,
        seed=seed, n_pairs=n_pairs, pairs_per_subject=pairs_per_subject, onboarding_questions=questions,
        status=str(study.status), study=study, adaptive_min_comparisons=adaptive_min_comparisons,
        adaptive_random_share=adaptive_random_share,
    )
    _check_share(attention_check_share)
    scope = _sample_scope(
        run=run, datasets=list(datasets), subjects=subjects, n_pairs=n_pairs, seed=seed, strategy=str(strategy),
        include_unkept=include_unkept, include_low_coverage=include_low_coverage, pairs_per_subject=pairs_per_subject,
        attention_check_share=attention_check_share,
    )
    _clear_scope(study=study)
    study.name, study.scoring_run, study.strategy, study.seed = name, run, strategy, seed
    study.n_pairs, study.pairs_per_subject = scope.n_pairs, pairs_per_subject
    study.adaptive_min_comparisons, study.adaptive_random_share = adaptive_min_comparisons, adaptive_random_share
    study.include_unkept, study.include_low_coverage = include_unkept, include_low_coverage
    study.target_judgments_per_pair, study.attention_check_share = target_judgments_per_pair, attention_check_share
    study.guidelines, study.onboarding_questions = guidelines, questions
    study.consent_text = consent_text or DEFAULT_CONSENT
    study.save()
    study.members.set(members)
    _store_scope(study=study, scope=scope)
    if crowd_settings is not None:
        _apply_crowd_settings(study=study, crowd_settings=crowd_settings)
    return study


def _apply_crowd_settings(*, study: Study, crowd_settings: Mapping[str, object]) -> None:
    # study_quality owns these checks; its ValueError rolls the caller's transaction back.
    study_quality_settings_update(study=study, **crowd_settings)


def _check_share(share: object) -> None:
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 0.5:
        raise ValueError(ERR_ATTENTION_SHARE.format(value=share))


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


# --- a study's scope: changeable until its first judgment ------------------------


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


@transaction.atomic
def study_set_status(*, study: Study, status: str) -> Study:
    """Open or close a study. Closing stops new judgments; nothing is deleted."""
    if status not in StudyStatus.values:
        raise ValueError(ERR_STATUS.format(choices=StudyStatus.values, status=status))
    study.status = status
    study.closed_at = timezone.now() if status == StudyStatus.CLOSED else None
    study.save(update_fields=["status", "closed_at"])
    return study


#: Settings of a study that may change at any time, judged or not (the admin's change form edits them).
STUDY_SETTINGS = ("name", "target_judgments_per_pair", "guidelines", "consent_text", "onboarding_questions")
ERR_SETTING = "{field!r} is not a setting that can change here; these can: {fields}"
ERR_STUDY_HAS_EVALUATORS = (
    "study {name!r} (id {study_id}) has {n} evaluator(s) and is never deleted, so no judgment is lost; close it instead"
)


@transaction.atomic
def study_settings_update(
    *, study: Study, changes: Mapping[str, object], members: Sequence[AbstractBaseUser] | None = None,
    status: str | None = None,
) -> Study:
    """Change a study's plain settings, its co-researchers and its status.

    Parameters
    ----------
    study : Study
    changes : mapping of str to object
        New values of fields among :data:`STUDY_SETTINGS` (checked by the
        caller's form: field types, lengths, the onboarding choices).
    members : sequence of User, optional
        The study's co-researchers; None leaves them as they are.
    status : str, optional
        A :class:`~annotate.models.StudyStatus` value; None or the current
        status leaves it. A change goes through :func:`study_set_status`, so
        closing stamps ``closed_at`` and reopening clears it, as on the
        manage page.

    Returns
    -------
    Study
        The study as stored.

    Raises
    ------
    ValueError
        A field outside :data:`STUDY_SETTINGS` (:data:`ERR_SETTING`), an
        empty or taken name, or an unknown status. Nothing changes.
    """
    stored = Study.objects.select_for_update().get(pk=study.pk)
    for field_name in changes:
        if field_name not in STUDY_SETTINGS:
            raise ValueError(ERR_SETTING.format(field=field_name, fields=list(STUDY_SETTINGS)))
    if "name" in changes:
        name = str(changes["name"]).strip()
        if not name:
            raise ValueError(ERR_NAME_EMPTY)
        if Study.objects.filter(name=name).exclude(pk=stored.pk).exists():
            raise ValueError(ERR_NAME_TAKEN.format(name=name))
        changes = {**changes, "name": name}
    if status is not None and status not in StudyStatus.values:
        raise ValueError(ERR_STATUS.format(choices=StudyStatus.values, status=status))
    for field_name, value in changes.items():
        setattr(stored, field_name, value)
    if changes:
        stored.save(update_fields=list(changes))
    if members is not None:
        stored.members.set(members)
    if status is not None and status != stored.status:
        study_set_status(study=stored, status=status)
    return stored


@transaction.atomic
def study_delete(*, study: Study) -> None:
    """Delete a study that no evaluator has joined, with its pairs, invitations and pool.

    Raises
    ------
    ValueError
        The study has evaluators (:data:`ERR_STUDY_HAS_EVALUATORS`): their
        participations and judgments are kept, so the study is too. Nothing
        changes.
    """
    stored = Study.objects.select_for_update().get(pk=study.pk)
    n = Participation.objects.filter(study=stored).count()
    if n:
        raise ValueError(ERR_STUDY_HAS_EVALUATORS.format(name=stored.name, study_id=stored.pk, n=n))
    _clear_scope(study=stored)
    stored.delete()


# --- invitations ----------------------------------------------------------------


def invitation_create(*, study: Study, note: str = "", created_by: AbstractBaseUser | None = None) -> Invitation:
    """A new invitation link (token from ``secrets.token_urlsafe(32)``)."""
    return Invitation.objects.create(study=study, note=note.strip()[:200], created_by=created_by)


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    """Revoke a link: it stops admitting or resuming anyone. People who already
    joined keep their participation (and their login session)."""
    if invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def _new_pseudonym() -> str:
    User = get_user_model()
    for digits in (4, 4, 4, 6, 6, 8, 8, 12):
        candidate = f"evaluator-{secrets.token_hex(digits // 2)}"
        if not User.objects.filter(username=candidate).exists():
            return candidate
    raise RuntimeError("could not find a free evaluator pseudonym")  # ~impossible


def _create_pseudonymous_evaluator() -> AbstractBaseUser:
    User = get_user_model()
    for _ in range(5):
        try:
            with transaction.atomic():
                user = User(username=_new_pseudonym())
                user.set_unusable_password()
                user.save()
                user.groups.add(_group(EVALUATOR_GROUP))
                return user
        except IntegrityError:  # two visitors drew the same pseudonym at once
            continue
    raise RuntimeError("could not create a pseudonymous evaluator")


@dataclass(frozen=True)
class PlatformIds:
    """A crowd platform's ids of a visitor, read from the invitation URL's
    query parameters (names set per study; Prolific's by default). Blank when
    absent."""

    participant: str = ""
    study: str = ""
    session: str = ""


#: Longest platform id accepted (Prolific's are 24 characters).
PLATFORM_ID_MAX = 128
ERR_PLATFORM_ID = "the link's {param} is not a valid id: it holds {problem}"
ERR_PLATFORM_ID_LONG = "the link's {param} is not a valid id: it is longer than {limit} characters"
ERR_PARTICIPANT_ID_IN_USE = (
    "participant id {pid!r} has already joined this study; it continues only {where}"
)


class PlatformIdError(ValueError):
    """A platform id in the join link that cannot be stored (a 400; nothing is written)."""


class ParticipantIdInUseError(Exception):
    """A known participant id that this study does not let continue from this browser (a 409; nothing is written)."""


def platform_ids_from_query(*, study: Study, query: Mapping[str, str]) -> PlatformIds:
    """The platform ids in ``query`` (a request's GET parameters) under the
    study's parameter names; a blank parameter name reads nothing.

    Raises
    ------
    PlatformIdError
        An id longer than :data:`PLATFORM_ID_MAX` characters, or holding a NUL,
        a lone surrogate or another control character
        (:func:`annotate.core.storable.storable_text_problem`); the message
        names the parameter.
    """

    def read(name: str) -> str:
        if not name:
            return ""
        value = (query.get(name) or "").strip()
        problem = storable_text_problem(value)
        if problem is not None:
            raise PlatformIdError(ERR_PLATFORM_ID.format(param=name, problem=problem))
        if len(value) > PLATFORM_ID_MAX:
            raise PlatformIdError(ERR_PLATFORM_ID_LONG.format(param=name, limit=PLATFORM_ID_MAX))
        return value

    return PlatformIds(participant=read(study.participant_param), study=read(study.study_param),
                       session=read(study.session_param))


def visitor_key_hash(*, value: str) -> str:
    """A keyed hash (HMAC-SHA-256 with the site's secret) of a browser key or
    participant id, so that neither is stored as such; "" for a blank value."""
    if not value:
        return ""
    return hmac.new(settings.SECRET_KEY.encode(), f"visitor:{value}".encode(), hashlib.sha256).hexdigest()


@transaction.atomic
def invitation_accept(
    *, invitation: Invitation, user: AbstractBaseUser | None, platform: PlatformIds | None = None,
    browser_key: str = "",
) -> tuple[Participation, AbstractBaseUser, bool]:
    """Join the invitation's study.

    ``user`` is the visitor's account if they have one in this browser (logged
    in, or recognised by the resume cookie), else None: then a pseudonymous
    evaluator ("evaluator-7f3a", no email, no usable password) is created.
    Joining twice returns the existing participation.

    ``platform`` carries a crowd platform's ids from the join URL. A visitor
    whose participant id already has a participation in the study is that
    participant coming back (another browser, a lost cookie); whether they
    continue it depends on the study's ``resume_by_participant_id``
    (:class:`~annotate.models.ResumeByParticipantId`): "on" in any browser,
    "same_browser" only when ``browser_key`` (the browser's long-lived key) is
    the one they joined with, "off" never (the browser already signed in as
    them continues in every mode). The study and session ids of a new
    participation are stored with it; a returning participant's latest
    session id replaces the stored one.

    Concurrent joins with the same new participant id (a double click, two
    tabs) end with one participation: the join that loses the race on the
    unique constraint continues the winner's participation as a returning
    participant would.

    Returns
    -------
    (participation, user, created_user)

    Raises
    ------
    InvitationRevokedError, StudyClosedError
    ParticipantIdInUseError
        A known participant id the study's setting does not let continue here. Nothing is written.
    """
    invitation = Invitation.objects.select_related("study").get(pk=invitation.pk)
    if invitation.revoked_at is not None:
        raise InvitationRevokedError(ERR_INVITATION_REVOKED)
    study = invitation.study
    platform = platform or PlatformIds()
    if platform.participant:
        known = (Participation.objects.select_for_update().select_related("user")
                 .filter(study=study, platform_participant_id=platform.participant).first())
        if known is not None:
            resumed = _resume_known(known=known, user=user, platform=platform, browser_key=browser_key)
            if resumed is not None:
                return resumed
            platform = dataclasses.replace(platform, participant="")  # the id is someone else's: keep it with them
    if user is not None:
        existing = Participation.objects.filter(study=study, user=user).first()
        if existing is not None:
            return existing, user, False
    if study.status != StudyStatus.OPEN:
        raise StudyClosedError(ERR_STUDY_CLOSED.format(name=study.name))
    created_user = user is None
    try:
        with transaction.atomic():
            joined = user if user is not None else _create_pseudonymous_evaluator()
            participation, _ = Participation.objects.get_or_create(
                study=study, user=joined, defaults={
                    "invitation": invitation, "platform_participant_id": platform.participant,
                    "platform_study_id": platform.study, "platform_session_id": platform.session,
                    "browser_key_hash": visitor_key_hash(value=browser_key),
                }
            )
    except IntegrityError:
        # Another request joined with the same new participant id a moment ago: continue theirs.
        known = (Participation.objects.select_related("user")
                 .filter(study=study, platform_participant_id=platform.participant).first()
                 if platform.participant else None)
        if known is None:
            raise
        resumed = _resume_known(known=known, user=user, platform=platform, browser_key=browser_key, racing=True)
        if resumed is None:
            raise
        return resumed
    return participation, joined, created_user


def _resume_known(
    *, known: Participation, user: AbstractBaseUser | None, platform: PlatformIds, browser_key: str,
    racing: bool = False,
) -> tuple[Participation, AbstractBaseUser, bool] | None:
    """Continue ``known`` (the participation of the visitor's participant id)
    when the study's resume setting allows it; None when the id belongs to
    another account (the caller joins without it). ``racing``: the visitor's
    own concurrent join created ``known`` a moment ago (same browser key)."""
    if not (known.user.is_active and user_is_evaluator(user=known.user)):
        return None
    if user is not None and known.user_id != user.pk:
        return None
    if user is None:
        mode = known.study.resume_by_participant_id
        same_browser = bool(browser_key) and known.browser_key_hash == visitor_key_hash(value=browser_key)
        if mode == ResumeByParticipantId.OFF and not (racing and same_browser):
            raise ParticipantIdInUseError(ERR_PARTICIPANT_ID_IN_USE.format(
                pid=platform.participant, where="in the browser already signed in as it"))
        if mode == ResumeByParticipantId.SAME_BROWSER and not same_browser:
            raise ParticipantIdInUseError(ERR_PARTICIPANT_ID_IN_USE.format(
                pid=platform.participant, where="in the browser it joined with"))
    if platform.session and platform.session != known.platform_session_id:
        known.platform_session_id = platform.session
        known.save(update_fields=["platform_session_id"])
    return known, known.user, user is None


def username_check(*, username: str) -> str:
    """``username`` as the account will hold it: stripped, NFKC-normalised (as
    Django's own forms do), checked with Django's ``UnicodeUsernameValidator``
    (letters, digits and ``@.+-_``) and the username field's length.

    Raises
    ------
    ValueError
        ``ERR_USERNAME_EMPTY`` or ``ERR_USERNAME_INVALID`` (the name quoted, cut
        to 60 characters).
    """
    User = get_user_model()
    name = User.normalize_username((username or "").strip())
    if not name:
        raise ValueError(ERR_USERNAME_EMPTY)
    limit = User._meta.get_field(User.USERNAME_FIELD).max_length
    try:
        UnicodeUsernameValidator()(name)
        valid = len(name) <= limit
    except ValidationError:
        valid = False
    if not valid:
        shown = name if len(name) <= 60 else name[:60] + "…"
        raise ValueError(ERR_USERNAME_INVALID.format(username=shown, limit=limit))
    return name


def evaluator_create(*, username: str, study: Study) -> tuple[AbstractBaseUser, str]:
    """A named evaluator with a fresh random password, joined to ``study``.

    Returns
    -------
    (user, password)
        The password is not stored anywhere else; show it once.

    Raises
    ------
    ValueError
        A username that is empty, not allowed (:func:`username_check`) or taken.
    """
    username = username_check(username=username)
    User = get_user_model()
    password = secrets.token_urlsafe(12)
    with transaction.atomic():
        if User.objects.filter(username=username).exists():
            raise ValueError(ERR_USERNAME_TAKEN.format(username=username))
        user = User.objects.create_user(username=username, password=password)
        user.groups.add(_group(EVALUATOR_GROUP))
        Participation.objects.create(study=study, user=user)
    return user, password


# --- onboarding -----------------------------------------------------------------


@transaction.atomic
def participation_onboard(
    *,
    participation: Participation,
    field_of_study: str = "",
    education_level: str = "",
    qualified_subjects: Sequence[Subject] = (),
) -> Participation:
    """Record the evaluator's background (appendix H.3, table 13 categories) and
    the subjects they feel qualified to judge (recorded only: every pair is
    still shown, and the evaluator may skip).

    Only the study's ``onboarding_questions`` are asked: an asked field must
    hold one of its choices ("prefer not to say" is one), a field not asked
    must be empty (nothing is stored for it)."""
    asked = set(participation.study.onboarding_questions)
    if field_of_study not in FieldOfStudy.values and (OnboardingQuestion.FIELD_OF_STUDY in asked or field_of_study):
        raise ValueError(ERR_FIELD.format(choices=FieldOfStudy.values, value=field_of_study))
    if education_level not in EducationLevel.values and (
            OnboardingQuestion.EDUCATION_LEVEL in asked or education_level):
        raise ValueError(ERR_LEVEL.format(choices=EducationLevel.values, value=education_level))
    if qualified_subjects and OnboardingQuestion.QUALIFIED_SUBJECTS not in asked:
        raise ValueError(ERR_NOT_ASKED.format(name=OnboardingQuestion.QUALIFIED_SUBJECTS.value))
    allowed = set(participation.study.subjects.values_list("pk", flat=True))
    outside = sorted(s.name for s in qualified_subjects if s.pk not in allowed)
    if outside:
        raise ValueError(ERR_QUALIFIED.format(names=outside))
    participation.field_of_study = field_of_study
    participation.education_level = education_level
    if participation.onboarded_at is None:
        participation.onboarded_at = timezone.now()
    participation.save(update_fields=["field_of_study", "education_level", "onboarded_at"])
    participation.qualified_subjects.set(qualified_subjects)
    return participation


def participation_give_consent(*, participation: Participation) -> Participation:
    """Record when the evaluator agreed to the study's consent text (kept from
    the first time: agreeing again, from a second tab, changes nothing)."""
    if participation.consented_at is None:
        participation.consented_at = timezone.now()
        participation.save(update_fields=["consented_at"])
    return participation


def consent_decline(
    *, invitation: Invitation, browser_key: str = "", participant_id: str = ""
) -> tuple[ConsentDecline, bool]:
    """Count one visitor who declined the consent text of ``invitation``'s
    study, once per browser and once per participant id.

    Nothing about the visitor is stored as such: no account, no
    participation, no address or browser details; only the study, the link,
    the time, and keyed hashes (:func:`visitor_key_hash`) of the browser's
    random key and of the crowd participant id, which make a second decline
    from the same browser, or with the same participant id, count nothing.

    Returns
    -------
    (decline, created)
        ``created`` is False when this browser or participant id had declined
        before (that decline is returned; nothing is written).
    """
    browser = visitor_key_hash(value=browser_key)
    participant = visitor_key_hash(value=participant_id)
    keys = Q(pk__in=[])
    if browser:
        keys |= Q(browser_key=browser)
    if participant:
        keys |= Q(participant_key=participant)
    earlier = ConsentDecline.objects.filter(keys, study_id=invitation.study_id).first()
    if earlier is not None:
        return earlier, False
    try:
        with transaction.atomic():
            return ConsentDecline.objects.create(study_id=invitation.study_id, invitation=invitation,
                                                 browser_key=browser, participant_key=participant), True
    except IntegrityError:  # the same browser or id declined a moment ago, in another request
        earlier = ConsentDecline.objects.filter(keys, study_id=invitation.study_id).first()
        if earlier is None:
            raise
        return earlier, False


def participation_accept_guidelines(*, participation: Participation) -> Participation:
    if participation.guidelines_accepted_at is None:
        participation.guidelines_accepted_at = timezone.now()
        participation.save(update_fields=["guidelines_accepted_at"])
    return participation
