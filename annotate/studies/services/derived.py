"""A study whose judgments are derived from a human response set.

The pairing rule: the pairs are same-subject pairs of questions that both the
scoring run scored and the human set holds (drawn uniformly, seeded, at most
``n_pairs``). For each person and pair, a person who got one question right
and the other wrong (more credit on one) judges the one with less credit
harder (:func:`scoring.human_labels.judgments_from_responses`); equal credit
(both right, both wrong) is no information and is stored as a skip; a person
who did not answer both questions gives no judgment. The study has origin
"derived": its evaluators are the persons (pseudonymous accounts that cannot
sign in), its report, human scale and downloads are any study's.

:func:`derived_study_preview` counts everything without writing;
:func:`derived_study_create` writes the study in one transaction.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils import timezone

from annotate.catalog import response_matrix
from annotate.core import column_name
from annotate.models import (
    Choice,
    Judgment,
    LanguageModel,
    Pair,
    PairStrategy,
    Participation,
    Question,
    ResponseSet,
    ScoringRun,
    Study,
    StudyOrigin,
    StudyStatus,
)
from annotate.reports import human_response_set, run_questions
from annotate.studies.selectors.studies import EVALUATOR_GROUP
from annotate.studies.services.judging import pair_votes_recount
from scoring._validation import check_int
from scoring.human_labels import judgments_from_responses
from scoring.pair_sampling import count_possible_pairs, sample_pairs
from scoring.pairs import FIRST, SECOND, TIE

__all__ = ["PAIRING_RULE", "DerivedPreview", "derived_study_create", "derived_study_preview"]

PAIRING_RULE = (
    "Pairs: same-subject pairs of questions that the scoring run scored and the human response set holds, "
    "drawn uniformly at random (seeded). Per person and pair: right on one and wrong on the other (more credit "
    "on one) = a vote that the one with less credit is harder; equal credit (both right, both wrong) = no "
    "information, stored as a skip; not answered both = no judgment."
)
ERR_RUN_SET = "scoring run {run} scores response set {scored}, which is marked as human; pick a run of a model set"
ERR_NO_SHARED = ("the human response set {human} and scoring run {run} share no two questions of one subject; "
                 "nothing to pair")
ERR_N_PAIRS = "n_pairs must be a whole number >= 1; got {value!r}"
ERR_NAME = "a study named {name!r} already exists; choose another name"
ERR_NAME_BLANK = "the study needs a name"
DEFAULT_N_PAIRS = 500


@dataclass(frozen=True)
class DerivedPreview:
    """What :func:`derived_study_create` would write, counted without writing.

    Attributes
    ----------
    human_set, run
    n_persons : int
        Persons (columns) of the human set.
    n_questions_shared : int
        Questions both the run scored and the human set holds.
    n_subjects : int
        Subjects (dataset / subject) among them.
    n_possible_pairs : int
        Same-subject pairs among the shared questions.
    n_pairs : int
        Pairs drawn (``min(n_pairs, n_possible_pairs)``).
    n_votes : int
        Person x pair cells with a right/wrong split: judgments that say which is harder.
    n_no_information : int
        Cells with equal credit on both (stored as skips).
    n_unanswered : int
        Cells where the person did not answer both questions (no judgment).
    n_persons_with_judgments : int
        Persons with at least one vote or skip (the study's evaluators).
    rule : str
    """

    human_set: ResponseSet
    run: ScoringRun
    n_persons: int
    n_questions_shared: int
    n_subjects: int
    n_possible_pairs: int
    n_pairs: int
    n_votes: int
    n_no_information: int
    n_unanswered: int
    n_persons_with_judgments: int
    rule: str = PAIRING_RULE


@dataclass(frozen=True)
class _Plan:
    preview: DerivedPreview
    pairs: np.ndarray  # (n_pairs, 2) Question ids
    codes: np.ndarray  # (n_pairs, n_persons) FIRST / SECOND / TIE / UNDEFINED
    person_ids: np.ndarray  # LanguageModel ids of the columns


def _check_n_pairs(n_pairs: object) -> int:
    return check_int(n_pairs, name="n_pairs", low=1, message=ERR_N_PAIRS)


def _plan(*, human_set_id: int, run: ScoringRun, n_pairs: int, seed: int) -> _Plan:
    n_pairs = _check_n_pairs(n_pairs)
    human = human_response_set(response_set_id=human_set_id)
    if run.response_set.is_human:
        raise ValueError(ERR_RUN_SET.format(run=run.pk, scored=run.response_set))
    rq = run_questions(run=run, metadata_key=None)
    matrix = response_matrix(response_set=human)
    R, hq, person_ids = np.asarray(matrix.R), np.asarray(matrix.question_ids), np.asarray(matrix.model_ids)
    row_of = {int(q): i for i, q in enumerate(hq)}
    shared = np.array([int(q) in row_of for q in rq.question_ids], dtype=bool)
    ids, subjects = rq.question_ids[shared], rq.subjects[shared].astype(str)
    n_possible = count_possible_pairs(subjects) if ids.size else 0
    if n_possible == 0:
        raise ValueError(ERR_NO_SHARED.format(human=human, run=run.pk))
    n_take = min(n_pairs, n_possible)
    pairs = sample_pairs(ids, subjects, n_pairs=n_take, strategy="uniform", rng=seed).pairs
    rows = np.array([[row_of[int(a)], row_of[int(b)]] for a, b in pairs], dtype=np.int64).reshape(-1, 2)
    codes = judgments_from_responses(R, rows)
    votes = np.isin(codes, (FIRST, SECOND))
    ties = codes == TIE
    preview = DerivedPreview(
        human_set=human, run=run, n_persons=int(R.shape[1]), n_questions_shared=int(ids.size),
        n_subjects=int(np.unique(subjects).size), n_possible_pairs=int(n_possible), n_pairs=int(n_take),
        n_votes=int(votes.sum()), n_no_information=int(ties.sum()),
        n_unanswered=int(codes.size - votes.sum() - ties.sum()),
        n_persons_with_judgments=int((votes | ties).any(axis=0).sum()),
    )
    return _Plan(preview=preview, pairs=pairs, codes=codes, person_ids=person_ids)


def derived_study_preview(*, human_set_id: int, run: ScoringRun, n_pairs: int = DEFAULT_N_PAIRS,
                          seed: int = 0) -> DerivedPreview:
    """Count the pairs and judgments a derived study would get; writes nothing.

    Raises
    ------
    ValueError
        The set is not a loaded human set, the run scores a human set, the two
        share no same-subject pair, or ``n_pairs`` is not a whole number >= 1.
    """
    return _plan(human_set_id=human_set_id, run=run, n_pairs=n_pairs, seed=seed).preview


def _person_account(username: str, group: Group) -> AbstractBaseUser:
    User = get_user_model()
    user = User(username=username, is_active=False)
    user.set_unusable_password()
    user.save()
    user.groups.add(group)
    return user


@transaction.atomic
def derived_study_create(
    *, human_set_id: int, run: ScoringRun, name: str, n_pairs: int = DEFAULT_N_PAIRS, seed: int = 0,
    created_by: AbstractBaseUser | None = None, now: datetime | None = None,
) -> tuple[Study, DerivedPreview]:
    """Create a closed study of origin "derived" from a human response set.

    Parameters
    ----------
    human_set_id : int
        A loaded response set marked as human.
    run : ScoringRun
        A finished run of a model set; its methods are what the report compares.
    name : str
        The new study's name (unique).
    n_pairs : int, default 500
        Pairs to draw (fewer when fewer same-subject pairs exist).
    seed : int, default 0
        Seed of the uniform pair draw.
    created_by : user, optional
        The study's owner.
    now : datetime, optional
        Time stamped on the derived judgments (default: now).

    Returns
    -------
    (Study, DerivedPreview)

    Raises
    ------
    ValueError
        As :func:`derived_study_preview`; a blank or taken name. Nothing is
        written then.
    """
    name = (name or "").strip()
    if not name:
        raise ValueError(ERR_NAME_BLANK)
    name = column_name(name, model=Study, field="name", label="name")
    if Study.objects.filter(name=name).exists():
        raise ValueError(ERR_NAME.format(name=name))
    plan = _plan(human_set_id=human_set_id, run=run, n_pairs=n_pairs, seed=seed)
    preview = plan.preview
    stamp = now or timezone.now()
    study = Study.objects.create(
        name=name, scoring_run=run, strategy=PairStrategy.UNIFORM, seed=seed, n_pairs=preview.n_pairs,
        status=StudyStatus.CLOSED, closed_at=stamp, origin=StudyOrigin.DERIVED, derived_from=preview.human_set,
        speeder_seconds=0.0, created_by=created_by,
        guidelines=f"Derived from the answers of human response set {preview.human_set}. {PAIRING_RULE}",
    )
    questions = Question.objects.in_bulk([int(q) for q in np.unique(plan.pairs)])
    pair_rows = [Pair(study=study, position=k, question_a=questions[int(a)], question_b=questions[int(b)])
                 for k, (a, b) in enumerate(plan.pairs.tolist())]
    Pair.objects.bulk_create(pair_rows)
    study.datasets.set({q.dataset_id for q in questions.values()})
    study.subjects.set({q.subject_id for q in questions.values() if q.subject_id is not None})
    names = dict(LanguageModel.objects.filter(pk__in=plan.person_ids.tolist()).values_list("pk", "name"))
    group, _ = Group.objects.get_or_create(name=EVALUATOR_GROUP)
    width = max(3, len(str(plan.codes.shape[1])))
    judgments = []
    for j, person in enumerate(plan.person_ids.tolist()):
        column = plan.codes[:, j]
        if not np.isin(column, (FIRST, SECOND, TIE)).any():
            continue
        user = _person_account(f"study{study.pk}-person{j + 1:0{width}d}", group)
        participation = Participation.objects.create(
            study=study, user=user, consented_at=stamp, onboarded_at=stamp, guidelines_accepted_at=stamp,
            finished_at=stamp, platform_participant_id=names.get(person, "")[:128],
        )
        for k, code in enumerate(column.tolist()):
            pair = pair_rows[k]
            if code == FIRST:
                choice, harder = Choice.LEFT, pair.question_a
            elif code == SECOND:
                choice, harder = Choice.RIGHT, pair.question_b
            elif code == TIE:
                choice, harder = Choice.SKIP, None
            else:
                continue
            judgments.append(Judgment(participation=participation, pair=pair, choice=choice,
                                      left_question=pair.question_a, harder_question=harder, shown_at=stamp,
                                      submitted_at=stamp, seconds=0.0))
    Judgment.objects.bulk_create(judgments, batch_size=5000)
    pair_votes_recount(study_id=study.pk)
    return study, preview
