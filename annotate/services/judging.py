"""Writes for judging: serve an evaluator their next pair, record their answer.

Rules
-----
* A pair, once shown to an evaluator (an :class:`Assignment`), stays theirs
  until they judge or skip it, even when the study's target is reached.
* Each evaluator sees the pairs in their own deterministic order with a
  deterministic left/right placement (:func:`evaluator_pair_key`), so a
  refresh shows the same thing.
* Answers are final. One judgment per evaluator and pair (a database
  constraint); a repeated submission (double click, refresh, back button,
  second tab) is reported as ``created=False`` and changes nothing.

Transactions: these two hot-path services each write a single row, and
their race safety comes from the unique constraints, not from a surrounding
transaction. They deliberately run their reads in autocommit and only the
insert in its own ``atomic`` block: on SQLite a transaction that reads and
then writes must upgrade its lock, which fails at once ("database is locked")
when another request is writing, instead of waiting for the busy timeout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import Assignment, Choice, Judgment, Pair, Participation, Question, StudyStatus
from annotate.selectors.studies import Progress, evaluator_pair_key, participation_state
from annotate.services.studies import ERR_STUDY_CLOSED, StudyClosedError

ERR_CHOICE = "choice must be one of {choices}; got {value!r}"
ERR_PAIR_NOT_IN_STUDY = "pair {pair_id} is not part of this study"
ERR_NOT_SHOWN = "pair {pair_id} has not been shown to this evaluator"
ERR_LEFT = "question {left_id} is not the question shown on the left of pair {pair_id}"
MAX_CLIENT_SECONDS = 24 * 3600.0


class PairNotInStudyError(LookupError):
    """The submitted pair id does not belong to the evaluator's study (a 404)."""


class InvalidSubmissionError(ValueError):
    """A submission that cannot come from the page we served (a 400)."""


@dataclass(frozen=True)
class Screen:
    """What the judging page shows: the pair, which question is on which side,
    and the evaluator's progress. Carries no difficulty or model information."""

    pair: Pair
    left: Question
    right: Question
    shown_at: datetime
    progress: Progress


@dataclass(frozen=True)
class SubmitResult:
    judgment: Judgment
    created: bool  # False: the pair was already decided; nothing changed


def judging_screen(*, participation: Participation, now: datetime | None = None) -> Screen | None:
    """The pair to show now, creating its assignment the first time it is served.

    Returns None when the evaluator has nothing left (and stamps
    ``finished_at`` the first time).
    """
    now = now or timezone.now()
    state = participation_state(participation=participation)
    pair_id = state.next_pair_id()
    if pair_id is None:
        if participation.finished_at is None:
            participation.finished_at = now
            participation.save(update_fields=["finished_at"])
        return None
    pair = Pair.objects.select_related("question_a", "question_b").get(pk=pair_id)
    if state.open_assignments and state.open_assignments[0].pair_id == pair_id:
        assignment = state.open_assignments[0]
    else:
        _, a_left = evaluator_pair_key(seed=participation.seed, pair_id=pair_id)
        try:
            with transaction.atomic():
                assignment = Assignment.objects.create(
                    participation=participation,
                    pair=pair,
                    left_question_id=pair.question_a_id if a_left else pair.question_b_id,
                    shown_at=now,
                )
        except IntegrityError:  # a second tab served the same pair a moment ago
            assignment = Assignment.objects.get(participation=participation, pair=pair)
    if assignment.left_question_id == pair.question_a_id:
        left, right = pair.question_a, pair.question_b
    else:
        left, right = pair.question_b, pair.question_a
    return Screen(pair=pair, left=left, right=right, shown_at=assignment.shown_at, progress=state.progress)


def _clean_client_seconds(value: float | None) -> float | None:
    """The browser's own timing is advisory: anything implausible becomes None."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(seconds) or seconds < 0 or seconds > MAX_CLIENT_SECONDS:
        return None
    return seconds


def judgment_submit(
    *,
    participation: Participation,
    pair_id: int,
    left_question_id: int,
    choice: str,
    client_seconds: float | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Record an evaluator's answer on a pair, at most once.

    Parameters
    ----------
    participation : Participation
        The evaluator in the study.
    pair_id : int
        Pair from the form.
    left_question_id : int
        The question the form says was on the left; must match what was served.
    choice : {"left", "right", "skip"}
    client_seconds : float, optional
        Time on the page measured by the browser; kept only if in
        [0, 86400] seconds, else stored as NULL.
    now : datetime, optional
        Submission time (default ``timezone.now()``).

    Returns
    -------
    SubmitResult
        ``created`` is False when the pair had already been decided (the
        earlier answer stands; nothing is written).

    Raises
    ------
    PairNotInStudyError
        The pair is not in the evaluator's study.
    InvalidSubmissionError
        Unknown choice, a pair never shown to this evaluator, or a left
        question that differs from the one displayed. Nothing is stored.
    StudyClosedError
        The study is closed. Nothing is stored.

    Notes
    -----
    Race-safe: the insert runs in a savepoint; when a concurrent request
    inserted the same (evaluator, pair) first, the unique constraint raises
    ``IntegrityError`` and the stored judgment is returned instead.
    """
    if choice not in Choice.values:
        raise InvalidSubmissionError(ERR_CHOICE.format(choices=Choice.values, value=choice))
    pair = Pair.objects.filter(pk=pair_id, study_id=participation.study_id).first()
    if pair is None:
        raise PairNotInStudyError(ERR_PAIR_NOT_IN_STUDY.format(pair_id=pair_id))
    existing = Judgment.objects.filter(participation=participation, pair=pair).first()
    if existing is not None:
        return SubmitResult(judgment=existing, created=False)
    if participation.study.status != StudyStatus.OPEN:
        raise StudyClosedError(ERR_STUDY_CLOSED.format(name=participation.study.name))
    assignment = Assignment.objects.filter(participation=participation, pair=pair).first()
    if assignment is None:
        raise InvalidSubmissionError(ERR_NOT_SHOWN.format(pair_id=pair_id))
    if left_question_id != assignment.left_question_id:
        raise InvalidSubmissionError(ERR_LEFT.format(left_id=left_question_id, pair_id=pair_id))
    right_id = pair.question_b_id if assignment.left_question_id == pair.question_a_id else pair.question_a_id
    harder_id = {Choice.LEFT: assignment.left_question_id, Choice.RIGHT: right_id}.get(choice)
    now = now or timezone.now()
    try:
        with transaction.atomic():
            judgment = Judgment.objects.create(
                participation=participation,
                pair=pair,
                choice=choice,
                left_question_id=assignment.left_question_id,
                harder_question_id=harder_id,
                shown_at=assignment.shown_at,
                submitted_at=now,
                seconds=max(0.0, (now - assignment.shown_at).total_seconds()),
                client_seconds=_clean_client_seconds(client_seconds),
            )
    except IntegrityError:
        judgment = Judgment.objects.filter(participation=participation, pair=pair).first()
        if judgment is None:
            raise
        return SubmitResult(judgment=judgment, created=False)
    return SubmitResult(judgment=judgment, created=True)
