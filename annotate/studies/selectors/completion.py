"""Reads for the completion code: whether a participant earned it, and why not.

A study's completion code (what a crowd platform pays for) is shown only to a
participant who did the work the study asks for:

* at least ``completion_min_votes`` answered pairs (left or right; a skip is
  not an answer);
* at least the share ``completion_min_check_share`` of the attention checks
  they were shown answered *and* passed (the expected question called harder;
  a skip or an unanswered check is not a pass). A participant shown no check
  meets this rule;
* at least ``completion_min_seconds`` server seconds on pairs: the sum of
  ``Judgment.seconds`` (display to submission) over their votes and skips.

Each rule is decided as exact arithmetic decides it, never by rounding: a
stored float is read as the decimal it prints as (:func:`exact`: the share or
the seconds the researcher typed, a judgment's seconds as the microseconds
measured), and sums and ratios are :class:`fractions.Fraction`. So 1 check
passed of 10 meets a share of 0.1, and four judgments of 30.1 s meet 120.4 s,
although ``0.1 * 10 != 1`` and ``30.1 * 4 != 120.4`` in floating point.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

from annotate.models import Assignment, Choice, Judgment, Participation, Study
from annotate.models.studies import SKIP_BUTTON_LABEL

#: Reason keys of a shortfall, in the order the pages list them.
REASON_VOTES = "votes"
REASON_CHECKS = "checks"
REASON_TIME = "time"
REASONS = (REASON_VOTES, REASON_CHECKS, REASON_TIME)
REASON_LABELS = {
    REASON_VOTES: "too few answered pairs",
    REASON_CHECKS: "attention checks not passed",
    REASON_TIME: "too little time on the pairs",
}

MSG_VOTES = (
    "You answered {votes} pair{votes_s} (skips do not count as answers); this study asks for at least {need}."
)
MSG_CHECKS = (
    "Some pairs have a clear answer that any careful reader finds. You answered {passed} of the {shown} such "
    "pair{shown_s} you were shown as expected; this study asks for {need}."
)
MSG_TIME = "You spent {seconds:.0f} seconds on the pairs in total; this study asks for at least {need:g} seconds."


@dataclass(frozen=True)
class Shortfall:
    """One rule a participant did not meet: its reason key and a plain sentence for them."""

    reason: str
    message: str


@dataclass(frozen=True)
class CompletionTally:
    """What a participant did, as the completion rules count it."""

    votes: int
    checks_shown: int
    checks_passed: int
    seconds: Fraction


@dataclass(frozen=True)
class CompletionVerdict:
    """Whether the participant earned the completion code; ``shortfalls`` is empty exactly when they did."""

    tally: CompletionTally
    shortfalls: tuple[Shortfall, ...]

    @property
    def earned(self) -> bool:
        return not self.shortfalls


def exact(value: float) -> Fraction:
    """``value`` as the decimal it prints as (``repr``), exactly: ``exact(0.1) == Fraction(1, 10)``."""
    return Fraction(repr(float(value)))


def _checks_needed_text(share: float) -> str:
    if exact(share) >= 1:
        return "every one of them"
    if exact(share) <= 0:
        return "none"
    return f"at least {share:.0%} of them"


def completion_rules_apply(*, study: Study, tally: CompletionTally) -> tuple[Shortfall, ...]:
    """The rules of ``study`` that ``tally`` does not meet (see the module docstring).

    Parameters
    ----------
    study : Study
        Its ``completion_min_votes``, ``completion_min_check_share`` (in [0, 1])
        and ``completion_min_seconds`` (seconds, >= 0).
    tally : CompletionTally

    Returns
    -------
    tuple of Shortfall
        In :data:`REASONS` order; empty when the code is earned.
    """
    out = []
    if tally.votes < study.completion_min_votes:
        out.append(Shortfall(REASON_VOTES, MSG_VOTES.format(
            votes=tally.votes, votes_s="" if tally.votes == 1 else "s", need=study.completion_min_votes)))
    share = exact(study.completion_min_check_share)
    if tally.checks_shown and Fraction(tally.checks_passed, tally.checks_shown) < share:
        out.append(Shortfall(REASON_CHECKS, MSG_CHECKS.format(
            passed=tally.checks_passed, shown=tally.checks_shown, shown_s="" if tally.checks_shown == 1 else "s",
            need=_checks_needed_text(study.completion_min_check_share))))
    if tally.seconds < exact(study.completion_min_seconds):
        out.append(Shortfall(REASON_TIME, MSG_TIME.format(seconds=float(tally.seconds),
                                                          need=study.completion_min_seconds)))
    return tuple(out)


def _tallies(*, study: Study, participation_ids: list[int]) -> dict[int, CompletionTally]:
    """Tallies of the given participations of ``study``: three queries, whatever their number."""
    votes: dict[int, int] = defaultdict(int)
    seconds: dict[int, Fraction] = defaultdict(Fraction)
    passed: dict[int, int] = defaultdict(int)
    judgments = Judgment.objects.filter(participation_id__in=participation_ids).values_list(
        "participation_id", "choice", "seconds", "pair__attention_check",
        "harder_question_id", "pair__expected_harder_id")
    for part_id, choice, secs, is_check, harder, expected in judgments:
        seconds[part_id] += exact(secs)
        if choice != Choice.SKIP:
            votes[part_id] += 1
        if is_check and harder is not None and harder == expected:
            passed[part_id] += 1
    shown: dict[int, int] = defaultdict(int)
    for part_id in (Assignment.objects.filter(participation_id__in=participation_ids, pair__attention_check=True)
                    .values_list("participation_id", flat=True)):
        shown[part_id] += 1
    return {pk: CompletionTally(votes=votes[pk], checks_shown=shown[pk], checks_passed=passed[pk],
                                seconds=seconds[pk]) for pk in participation_ids}


def completion_verdict(*, participation: Participation) -> CompletionVerdict:
    """Whether ``participation`` earned its study's completion code, and why not
    (a participant with no judgment has a tally of zeros)."""
    tally = _tallies(study=participation.study, participation_ids=[participation.pk])[participation.pk]
    return CompletionVerdict(tally=tally, shortfalls=completion_rules_apply(study=participation.study, tally=tally))


#: The completion rules as a participant reads them before judging (the consent and guidelines pages).
RULE_VOTES = (
    "To earn the completion code, answer at least {need} pair{need_s}: say which question is harder. "
    "\u201c{skip}\u201d is not an answer: skipped pairs do not count towards the {need}."
)
RULE_CHECKS = ("Some pairs have a clear answer that any careful reader finds; the code needs {need} answered as "
               "expected.")
RULE_TIME = "The code also needs at least {need:g} seconds spent on the pairs in total."
#: The judging page's line beside the progress bar: answers needed and answers given, as the verdict counts them.
GOAL_SHORT = "{need} answer{need_s} needed for your completion code; you have {votes} (skips do not count)."
GOAL_MET = "You have the {need} answer{need_s} your completion code needs (you have {votes})."


def completion_code_offered(*, study: Study) -> bool:
    """Whether ``study`` gives a completion code (a code or a completion link): only then are its rules told."""
    return bool((study.completion_code or "").strip() or (study.completion_url or "").strip())


def completion_rules_text(*, study: Study) -> tuple[str, ...]:
    """The rules of :func:`completion_rules_apply`, one plain sentence each, for a
    participant before they judge; () when the study gives no code or asks for nothing.

    The numbers are the study's own fields, read where the verdict reads them,
    and the skip button is quoted as it reads (:data:`SKIP_BUTTON_LABEL`).
    """
    if not completion_code_offered(study=study):
        return ()
    out = []
    need = study.completion_min_votes
    if need > 0:
        out.append(RULE_VOTES.format(need=need, need_s="" if need == 1 else "s", skip=SKIP_BUTTON_LABEL))
    if study.attention_check_share > 0 and exact(study.completion_min_check_share) > 0:
        out.append(RULE_CHECKS.format(need=_checks_needed_text(study.completion_min_check_share)))
    if exact(study.completion_min_seconds) > 0:
        out.append(RULE_TIME.format(need=study.completion_min_seconds))
    return tuple(out)


def completion_goal_text(*, study: Study, votes: int) -> str:
    """The judging page's line beside the progress bar: how many answers (not
    skips) the completion code needs and how many the participant has
    (``votes``: their answered pairs, as :class:`CompletionTally` counts them);
    "" when the study gives no code or needs no answer."""
    need = study.completion_min_votes
    if not completion_code_offered(study=study) or need <= 0:
        return ""
    template = GOAL_MET if votes >= need else GOAL_SHORT
    return template.format(need=need, need_s="" if need == 1 else "s", votes=votes)


@dataclass(frozen=True)
class CompletionSummary:
    """The manage page's count of finished participants: how many earned the
    code, how many fell short, and how many fell short by each reason (one
    participant may fall short for several)."""

    n_finished: int
    n_earned: int
    n_short: int
    by_reason: tuple[tuple[str, str, int], ...]  # (reason key, label, count) in REASONS order


def study_completion_summary(*, study: Study) -> CompletionSummary:
    """Count the finished participants of ``study`` by completion verdict (excluded ones included)."""
    ids = list(Participation.objects.filter(study=study, finished_at__isnull=False)
               .order_by("pk").values_list("pk", flat=True))
    tallies = _tallies(study=study, participation_ids=ids)
    counts = dict.fromkeys(REASONS, 0)
    short = 0
    for tally in tallies.values():
        reasons = completion_rules_apply(study=study, tally=tally)
        short += bool(reasons)
        for shortfall in reasons:
            counts[shortfall.reason] += 1
    return CompletionSummary(n_finished=len(ids), n_earned=len(ids) - short, n_short=short,
                             by_reason=tuple((r, REASON_LABELS[r], counts[r]) for r in REASONS))


__all__ = [
    "REASONS",
    "CompletionSummary",
    "CompletionTally",
    "CompletionVerdict",
    "Shortfall",
    "completion_code_offered",
    "completion_goal_text",
    "completion_rules_apply",
    "completion_rules_text",
    "completion_verdict",
    "exact",
    "study_completion_summary",
]
