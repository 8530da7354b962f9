"""Writes for judging: serve an evaluator their next pair, record their answer.

Rules
-----
* A pair, once shown to an evaluator (an :class:`Assignment`), stays theirs
  until they judge or skip it, even when the study's target is reached.
* Each evaluator sees the pairs in their own deterministic order (a seeded
  permutation of the pair positions, :func:`evaluator_order_position`,
  walked from a cursor kept on the participation) with a deterministic
  left/right placement (:func:`evaluator_pair_key`), so a refresh shows the
  same thing.
* A GET of the judging page writes nothing: the POST of an answer (and of the
  guidelines) writes the next pair's assignment, whose ``shown_at`` is that
  POST's time, i.e. when the browser is sent to the page that shows it.
* The cost of serving and answering does not grow with the study: the next
  pair comes from a few indexed queries on the evaluator's order, and the
  votes per pair are kept in ``Pair.n_votes`` (incremented with each vote).
* In an adaptive study the next pair is chosen when it is served, from the
  study's votes so far, the answer being stored included
  (:mod:`annotate.studies.services.adaptive`); its pair row is made then.
  The evaluator is shown the study's ``n_pairs`` regular pairs plus its
  attention checks, or fewer when no unseen pair is left.
* After each new judgment the study's stopping rules are checked
  (:func:`annotate.studies.services.stopping.stopping_check`); once one fires,
  nothing new is assigned and the evaluator finishes the pair on screen.
* Answers are final. One judgment per evaluator and pair (a database
  constraint); a repeated submission (double click, refresh, back button,
  second tab) is reported as ``created=False`` and changes nothing; one
  that carried a different answer is flagged (``SubmitResult.conflicts``)
  so the page can say which answer was kept.

Transactions: race safety comes from the unique constraints (one judgment
and one assignment per evaluator and pair), not from locks taken by reads.
The reads that decide what to write run in autocommit; each group of writes
that belong together commits as one transaction: the judgment with its vote
count, the next assignment with the evaluator's cursor. On the hot path (a
uniform study whose stopping rules need no check: none, or one already
fired) an answer and the next assignment commit together, once: every commit
waits for the database's write-ahead log to reach the disk (PostgreSQL's
``synchronous_commit``), which costs more than the queries of an answer. The
evaluator's row of counts comes with the pair read before the transaction
(:func:`~annotate.studies.selectors.studies.uniform_state_after_answer`: the
answer changes none of what is offerable); the walk to the next pair runs
inside it, between the two inserts. The assignment's insert skips a pair
that a second tab assigned a moment earlier (``ON CONFLICT DO NOTHING`` on
the unique constraint) instead of failing, so it needs no savepoint and
never undoes the answer. The hot path's inserts
and updates are compiled once per connection
(:class:`~annotate.core.PreparedInsert`, :class:`~annotate.core.PreparedUpdate`),
as its reads are. On SQLite
the transactions begin ``IMMEDIATE`` (``eipsite/settings.py``): the write
lock is taken at ``BEGIN``, waiting for the busy timeout instead of failing
at a lock upgrade. An adaptive study on the hot path chooses the next pair
before the answer's transaction, from the study's reads with the answer
counted as its judgment will be
(:func:`~annotate.studies.services.adaptive.adaptive_next_ahead`: the same
votes, the same pair as a choice made after the commit), so that no lock is
held while the kernel computes; the answer, the chosen pair's new row and
the assignment then commit together, once. A study whose rules still need a
check (which may fit the human scale to every vote) keeps that check out of
the answer's transaction: the answer commits first, then the check and the
choice run, then the assignment commits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.core import PreparedInsert, PreparedQuery, PreparedUpdate
from annotate.models import Assignment, Choice, Judgment, Pair, Participation, Question, StudyStatus
from annotate.studies.selectors.judging_tokens import PAIR, QUESTION, judging_token
from annotate.studies.selectors.studies import (
    VOTES,
    JudgingState,
    NextPair,
    Progress,
    evaluator_pair_key,
    participation_next_pair,
    participation_state,
    stopping_rules_loaded,
    uniform_state_after_answer,
    with_uniform_counts,
)
from annotate.studies.services.adaptive import (
    AdaptiveNext,
    PendingAnswer,
    adaptive_next_ahead,
    adaptive_next_pair,
    adaptive_pair_of,
)
from annotate.studies.services.participation import ERR_STUDY_CLOSED, StudyClosedError
from annotate.studies.services.stopping import stopping_check

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
    #: What the form carries instead of the pair's and the left question's ids
    #: (:mod:`annotate.studies.selectors.judging_tokens`): nothing on the page follows creation order.
    pair_token: str = ""
    left_token: str = ""


@dataclass(frozen=True)
class SubmitResult:
    """The stored judgment of a submission, and whether this submission stored it."""

    judgment: Judgment
    created: bool  # False: the pair was already decided; nothing changed
    #: The choice this submission carried ("" when not known).
    submitted: str = ""

    @property
    def conflicts(self) -> bool:
        """This submission was not stored and carried another answer than the stored one (a second tab or window
        that answered the pair differently): the first answer stands, and the evaluator should be told."""
        return not self.created and bool(self.submitted) and self.submitted != self.judgment.choice


def judging_screen(*, participation: Participation, now: datetime | None = None) -> Screen | None:
    """The pair to show now: the evaluator's oldest open assignment.

    The POSTs that lead to the judging page (an answer through the view,
    accepting the guidelines) already put the next pair on screen
    (:func:`judging_assign_next`, ``shown_at`` = that POST's time, the moment
    the browser is sent to this page), so the judging page's GET only reads.
    Only an evaluator with nothing on screen who did not come through those
    POSTs (a participation created by a script or a test, one that was
    mid-study before this rule, a target raised after they finished) gets
    their next pair assigned here, once, as before.

    Returns None when the evaluator has nothing left (``finished_at`` is
    stamped the first time).
    """
    state = participation_state(participation=participation, expect_open=True)
    if state.open_assignments:
        assignment = state.open_assignments[0]
    else:
        if participation.finished_at is not None and state.n_offerable == 0:
            return None  # finished, and nothing new to offer: no write
        if judging_assign_next(participation=participation, now=now, state=state) is None:
            return None
        state = participation_state(participation=participation)  # reads the new assignment with its pair
        assignment = state.open_assignments[0]
    pair = assignment.pair
    if assignment.left_question_id == pair.question_a_id:
        left, right = pair.question_a, pair.question_b
    else:
        left, right = pair.question_b, pair.question_a
    return Screen(pair=pair, left=left, right=right, shown_at=assignment.shown_at, progress=state.progress,
                  pair_token=judging_token(participation=participation, value=pair.pk, kind=PAIR),
                  left_token=judging_token(participation=participation, value=left.pk, kind=QUESTION))


#: The hot path's writes, compiled once: a new assignment (none when the evaluator already has this pair), the
#: evaluator's cursor, a new judgment (a second one of the same pair fails on the unique constraint) and a vote.
_ASSIGNMENT_INSERT = PreparedInsert(Assignment, skip_conflicts_on=("participation", "pair"))
_CURSOR_SET = PreparedUpdate("cursor", lambda participation_id, cursor: (
    Participation.objects.filter(pk=participation_id), {"order_cursor": cursor}), "participation_id", "cursor")
_JUDGMENT_INSERT = PreparedInsert(Judgment)
_VOTE_ADD = PreparedUpdate("vote", lambda pair_id: (Pair.objects.filter(pk=pair_id), {"n_votes": F("n_votes") + 1}),
                           "pair_id")


def _left_of(participation: Participation, pair: NextPair) -> int:
    _, a_left = evaluator_pair_key(seed=participation.seed, pair_id=pair.pair_id)
    return pair.question_a_id if a_left else pair.question_b_id


def judging_assign_next(
    *, participation: Participation, now: datetime | None = None, state: JudgingState | None = None
) -> Assignment | None:
    """Put the evaluator's next pair on their screen: write its assignment
    (``shown_at = now``) and move their order cursor past it, unless a pair is
    already on screen. Called by the POSTs that lead to the judging page (an
    answer, accepting the guidelines), never by a GET. Stamps ``finished_at``
    when nothing is left.
    """
    now = now or timezone.now()
    state = state or participation_state(participation=participation)
    if state.open_assignments:
        return state.open_assignments[0]
    if participation.study.is_adaptive:
        # The next pair is chosen now, from the study's votes so far (services.adaptive).
        found = _found(participation, adaptive_next_pair(participation=participation) if state.n_offerable else None)
    else:
        found = participation_next_pair(participation=participation, n_offerable=state.n_offerable,
                                        n_pairs=state.n_pairs)
    return _assign(participation=participation, found=found, now=now)


def _assign(*, participation: Participation, found: NextPair | None, now: datetime) -> Assignment | None:
    """Write the assignment of ``found`` (and the cursor past it), or stamp ``finished_at`` when it is None."""
    if found is None:
        if participation.finished_at is None:
            participation.finished_at = now
            Participation.objects.filter(pk=participation.pk, finished_at__isnull=True).update(finished_at=now)
        return None
    moves = found.cursor != participation.order_cursor  # an adaptive study's choice leaves the cursor where it is
    assignment = Assignment(participation=participation, pair_id=found.pair_id,
                            left_question_id=_left_of(participation, found), shown_at=now)
    # The assignment and the cursor past it commit together; inside an answer's transaction, with it (no savepoint:
    # a conflict is skipped, not raised, and any other error undoes the answer too).
    with transaction.atomic(savepoint=False):
        # A second tab that assigned the same pair a moment ago: its assignment stands, this one is not written.
        # The cursor moves either way (on PostgreSQL in the insert's statement).
        cursor = (_CURSOR_SET, {"participation_id": participation.pk, "cursor": found.cursor}) if moves else None
        if not _ASSIGNMENT_INSERT.insert(assignment, then=cursor):
            assignment = Assignment.objects.get(participation=participation, pair_id=found.pair_id)
    if moves:
        participation.order_cursor = found.cursor
    return assignment


def _found(participation: Participation, pair: Pair | None) -> NextPair | None:
    """An adaptive study's next pair as the walk of a uniform study gives it (the cursor does not move)."""
    return None if pair is None else NextPair(pair_id=pair.pk, cursor=participation.order_cursor,
                                              question_a_id=pair.question_a_id, question_b_id=pair.question_b_id)


def _assign_ahead(*, participation: Participation, ahead: AdaptiveNext, now: datetime) -> Assignment | None:
    """Inside the answer's transaction: the assignment of the adaptive pair chosen ahead of it
    (:func:`~annotate.studies.services.adaptive.adaptive_next_ahead`), its pair row made when new; nothing while
    another pair is open; ``finished_at`` stamped when nothing is left."""
    if ahead.keeps_open:
        return None
    pair = adaptive_pair_of(study=participation.study, next_pair=ahead)
    return _assign(participation=participation, found=_found(participation, pair), now=now)


def pair_votes_recount(*, study_id: int) -> None:
    """Recount ``Pair.n_votes`` of a study from its judgments (after a bulk import)."""
    votes = (Judgment.objects.filter(pair_id=OuterRef("pk"), choice__in=VOTES)
             .order_by().values("pair_id").annotate(n=Count("id")).values("n"))
    Pair.objects.filter(study_id=study_id).update(n_votes=Coalesce(Subquery(votes, output_field=IntegerField()), 0))


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


def _pair_as_shown_query(mine: int, pair_id: int, study_id: int) -> QuerySet[Pair]:
    shown = Assignment.objects.filter(participation_id=mine, pair_id=OuterRef("pk"))
    return (
        Pair.objects.filter(pk=pair_id, study_id=study_id)
        .annotate(decided=Exists(Judgment.objects.filter(participation_id=mine, pair_id=OuterRef("pk"))),
                  shown_left_id=Subquery(shown.values("left_question_id")[:1]),
                  shown_at=Subquery(shown.values("shown_at")[:1]))
        .order_by("pk")[:1]
    )


def _pair_as_shown_counted_query(mine: int, pair_id: int, study_id: int, target: int) -> QuerySet[Pair]:
    return with_uniform_counts(_pair_as_shown_query(mine, pair_id, study_id), study_id=study_id, mine=mine,
                               target=target)


#: :func:`_pair_as_shown`'s reads, compiled once: the pair, and the pair with the evaluator's row of counts.
_PAIR_AS_SHOWN = PreparedQuery("pair as shown", _pair_as_shown_query, "mine", "pair_id", "study_id")
_PAIR_AS_SHOWN_COUNTED = PreparedQuery("pair as shown with the judging state", _pair_as_shown_counted_query, "mine",
                                       "pair_id", "study_id", "target")


def _pair_as_shown(*, participation: Participation, pair_id: int, counted: bool = False) -> Pair | None:
    """The study's pair ``pair_id`` (None if not in the study), read in one
    query with what the evaluator did with it: ``decided`` (they judged or
    skipped it), ``shown_left_id`` and ``shown_at`` (its assignment; None when
    it was never shown to them); with ``counted`` (a uniform study) also the
    evaluator's row of counts (:func:`with_uniform_counts`)."""
    values = {"mine": participation.pk, "pair_id": pair_id, "study_id": participation.study_id}
    if counted:
        found = _PAIR_AS_SHOWN_COUNTED.objects(**values, target=participation.study.target_judgments_per_pair)
    else:
        found = _PAIR_AS_SHOWN.objects(**values)
    return found[0] if found else None


def judgment_submit(
    *,
    participation: Participation,
    pair_id: int,
    left_question_id: int,
    choice: str,
    client_seconds: float | None = None,
    assign_next: bool = False,
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
    assign_next : bool, default False
        Also put the evaluator's next pair on screen
        (:func:`judging_assign_next`), so the GET that follows writes nothing.
    now : datetime, optional
        Submission time (default ``timezone.now()``).

    Returns
    -------
    SubmitResult
        ``created`` is False when the pair had already been decided (the
        earlier answer stands; nothing is written); ``conflicts`` then says
        whether this submission carried a different answer (e.g. from a
        second tab), which the evaluator is told about.

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
    Race-safe: when a concurrent request inserted the same (evaluator, pair)
    first, the unique constraint raises ``IntegrityError``, nothing of this
    call is kept and the stored judgment is returned instead. The judgment
    and the pair's vote count commit together; with ``assign_next`` on the
    hot path (:func:`_assigns_with_the_answer`) the next assignment commits
    with them, in one transaction.
    """
    if choice not in Choice.values:
        raise InvalidSubmissionError(ERR_CHOICE.format(choices=Choice.values, value=choice))
    together = assign_next and _assigns_with_the_answer(participation)
    adaptive = participation.study.is_adaptive
    pair = _pair_as_shown(participation=participation, pair_id=pair_id, counted=together and not adaptive)
    if pair is None:
        raise PairNotInStudyError(ERR_PAIR_NOT_IN_STUDY.format(pair_id=pair_id))
    if pair.decided:
        existing = Judgment.objects.filter(participation=participation, pair=pair).first()
        if existing is not None:
            return SubmitResult(judgment=existing, created=False, submitted=choice)
    if participation.study.status != StudyStatus.OPEN:
        raise StudyClosedError(ERR_STUDY_CLOSED.format(name=participation.study.name))
    if pair.shown_left_id is None:
        raise InvalidSubmissionError(ERR_NOT_SHOWN.format(pair_id=pair_id))
    if left_question_id != pair.shown_left_id:
        raise InvalidSubmissionError(ERR_LEFT.format(left_id=left_question_id, pair_id=pair_id))
    shown_left_id, shown_at = pair.shown_left_id, pair.shown_at
    right_id = pair.question_b_id if shown_left_id == pair.question_a_id else pair.question_a_id
    harder_id = {Choice.LEFT: shown_left_id, Choice.RIGHT: right_id}.get(choice)
    now = now or timezone.now()
    ahead = None
    if together and adaptive:  # chosen before the transaction: no lock is held while the kernel computes
        answer = PendingAnswer(question_a_id=pair.question_a_id, question_b_id=pair.question_b_id,
                               attention_check=pair.attention_check, harder_id=harder_id, pair_id=pair.pk)
        ahead = adaptive_next_ahead(participation=participation, answer=answer, full=_fired(participation), now=now)
    try:
        with transaction.atomic():  # the judgment, its vote (and on the hot path the next pair) commit together
            judgment = Judgment(
                participation=participation,
                pair=pair,
                choice=choice,
                left_question_id=shown_left_id,
                harder_question_id=harder_id,
                shown_at=shown_at,
                submitted_at=now,
                seconds=max(0.0, (now - shown_at).total_seconds()),
                client_seconds=_clean_client_seconds(client_seconds),
            )
            # A second answer on the pair: IntegrityError, nothing kept. A vote counts with its judgment (on
            # PostgreSQL in the insert's statement).
            _JUDGMENT_INSERT.insert(judgment, then=None if harder_id is None else (_VOTE_ADD, {"pair_id": pair.pk}))
            if ahead is not None:  # an adaptive study's next pair, chosen with this answer counted
                _assign_ahead(participation=participation, ahead=ahead, now=now)
            elif together:  # no rule to check: nothing can fire now; the state comes from the counts read with the pair
                state = uniform_state_after_answer(participation=participation, counted=pair, choice=choice)
                judging_assign_next(participation=participation, now=now, state=state)
    except IntegrityError:
        judgment = Judgment.objects.filter(participation=participation, pair=pair).first()
        if judgment is None:
            raise
        return SubmitResult(judgment=judgment, created=False, submitted=choice)
    if not together:
        stopping_check(study=participation.study)  # a rule that fires now: nothing new is assigned from here on
        if assign_next:
            judging_assign_next(participation=participation, now=now)
    return SubmitResult(judgment=judgment, created=True, submitted=choice)


def _assigns_with_the_answer(participation: Participation) -> bool:
    """Whether the next assignment may commit with the answer: a study read
    with its stopping rules, which has none or whose rule already fired (a
    stamp is final), so that :func:`stopping_check` would read nothing."""
    known, rules = stopping_rules_loaded(study=participation.study)
    return known and (rules is None or rules.fired_at is not None)


def _fired(participation: Participation) -> bool:
    """A stopping rule of the study, read with it, has fired: nothing new is offered."""
    _known, rules = stopping_rules_loaded(study=participation.study)
    return rules is not None and rules.fired_at is not None
