"""Writes for studies: create one from a scoring run, edit its settings, open
and close it, delete it.

Its scope (datasets, subjects, pairs) is :mod:`annotate.studies.services.scope`
(it freezes at the first judgment: every path that would change it goes
through :func:`~annotate.studies.services.scope.study_scope_update`); its
evaluators, invitations, onboarding and consent are
:mod:`annotate.studies.services.participation`.

Business rules live here; views and management commands only call these.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotate.core import ERR_TEXT_TOO_LONG, column_name
from annotate.models import (
    Dataset,
    OnboardingQuestion,
    PairStrategy,
    Participation,
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
    STUDY_TEXT_MAX,
)
from annotate.studies.services.scope import (
    ERR_ADAPTIVE_PER_SUBJECT,
    ERR_NO_DATASETS,
    ERR_PAIRS_MODE,
    _clear_scope,
    _sample_scope,
    _store_scope,
    study_scope_guard,
)
from annotate.studies.services.stopping import StoppingInput, stopping_input_clean, stopping_rules_set
from annotate.studies.services.study_quality import study_quality_settings_update
from scoring._validation import check_int, check_number

ERR_NAME_EMPTY = "name must not be empty"
ERR_NAME_TAKEN = "a study named {name!r} already exists"
ERR_RUN_NOT_DONE = "scoring run {run_id} is {status!r}; pairs come only from a finished ('done') run"
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
ERR_ATTENTION_SHARE = "attention_check_share must be a number in [0, 0.5]; got {value!r}"
ERR_ADAPTIVE_MIN = "adaptive_min_comparisons must be an integer >= 0 (0: no exposure floor); got {value!r}"
ERR_ADAPTIVE_SHARE = "adaptive_random_share must be a number in [0, 1]; got {value!r}"
ERR_PER_SUBJECT = "pairs_per_subject must be an integer >= 1; got {value!r}"
ERR_ONBOARDING = "onboarding_questions must be distinct values of {choices}; got {value!r}"
ERR_STATUS = "status must be one of {choices}; got {status!r}"


# --- studies --------------------------------------------------------------------


def _check_texts(*, guidelines: str | None, consent_text: str | None) -> None:
    """Refuse guidelines or a consent text longer than :data:`STUDY_TEXT_MAX` characters (never cut)."""
    for label, text in (("guidelines", guidelines), ("consent_text", consent_text)):
        if text is not None and len(str(text)) > STUDY_TEXT_MAX:
            raise ValueError(ERR_TEXT_TOO_LONG.format(label=label, limit=STUDY_TEXT_MAX, n=len(str(text))))


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
    name = column_name(name, model=Study, field="name", label="name")
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
    check_int(seed, name="seed", low=0, message=ERR_SEED)
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
    check_number(adaptive_random_share, name="adaptive_random_share", low=0, high=1, message=ERR_ADAPTIVE_SHARE)
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
    stopping: StoppingInput | None = None,
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
    stopping : StoppingInput, optional
        The study's stopping rules, checked before anything is written and
        stored in the same transaction by
        :func:`annotate.studies.services.stopping.stopping_rules_set` (the
        manage page's service, so the same values are refused with the same
        messages); default (or every rule blank): no rule.

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
    _check_texts(guidelines=guidelines, consent_text=consent_text)
    name = _check_settings(
        name=name, run=run, datasets=datasets, strategy=strategy, target_judgments_per_pair=target_judgments_per_pair,
        seed=seed, n_pairs=n_pairs, pairs_per_subject=pairs_per_subject, onboarding_questions=questions,
        status=status, adaptive_min_comparisons=adaptive_min_comparisons, adaptive_random_share=adaptive_random_share,
    )
    datasets = list(datasets)
    _check_share(attention_check_share)
    rules = stopping_input_clean(values=stopping) if stopping is not None else None
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
    if rules is not None:
        stopping_rules_set(study=study, values=rules)
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
    _check_texts(guidelines=guidelines, consent_text=consent_text)
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
    check_number(share, name="attention_check_share", low=0.0, high=0.5, message=ERR_ATTENTION_SHARE)


# --- a study's scope: changeable until its first judgment ------------------------


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
        name = column_name(name, model=Study, field="name", label="name")
        if Study.objects.filter(name=name).exclude(pk=stored.pk).exists():
            raise ValueError(ERR_NAME_TAKEN.format(name=name))
        changes = {**changes, "name": name}
    _check_texts(guidelines=changes.get("guidelines"), consent_text=changes.get("consent_text"))
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


# --- onboarding -----------------------------------------------------------------


