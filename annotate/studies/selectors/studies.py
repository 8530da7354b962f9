"""Reads for studies and judging: roles, an evaluator's position in a study,
progress, and the staff coverage report.

Nothing here writes. The evaluator-facing reads never return scores, model
names or other evaluators' answers; only the staff report does.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.db.models import Count, Exists, IntegerField, Model, OuterRef, Q, QuerySet, Subquery

from annotate.core import ID_MAX, PreparedQuery, ascii_int
from annotate.models import (
    Assignment,
    Choice,
    Dataset,
    Invitation,
    Judgment,
    Pair,
    Participation,
    StoppingRules,
    Study,
    StudyStatus,
    Subject,
)

EVALUATOR_GROUP = "evaluator"
RESEARCHER_GROUP = "researcher"
VOTES = (Choice.LEFT, Choice.RIGHT)


# --- roles -----------------------------------------------------------------------


def user_is_researcher(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff, or a member of the "researcher" group."""
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or user.groups.filter(name=RESEARCHER_GROUP).exists())


#: The names of a user's groups (what ``user.groups.values_list("name")`` reads), compiled once.
_GROUP_NAMES = PreparedQuery("group names", lambda user_id: Group.objects.filter(user__id=user_id).values_list("name"),
                             "user_id")


#: Where :func:`participation_get` leaves, on the user it was given, which of the two role groups they are in.
_ROLE_GROUPS_ATTR = "_eip_role_groups"
_ROLE_GROUPS = (EVALUATOR_GROUP, RESEARCHER_GROUP)


def _group_names(user: AbstractBaseUser) -> set[str]:
    """The user's group names, or only those of the two role groups when the
    participation read already brought them (no query): enough for every
    question asked here, which group of the two the user is in."""
    known = getattr(user, _ROLE_GROUPS_ATTR, None)
    if known is not None:
        return set(known)
    return {name for (name,) in _GROUP_NAMES.rows(user_id=user.pk)}


def user_is_evaluator(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """A member of the "evaluator" group who is neither staff nor researcher."""
    if not user.is_authenticated or user.is_staff:
        return False
    names = _group_names(user)
    return EVALUATOR_GROUP in names and RESEARCHER_GROUP not in names


def user_role(*, user: AbstractBaseUser | AnonymousUser) -> str | None:
    """The visitor's role for navigation: "admin" (staff), "researcher",
    "evaluator", or None (anonymous, or in no group)."""
    if not user.is_authenticated:
        return None
    if user.is_staff:
        return "admin"
    names = _group_names(user)  # one read for both groups
    if RESEARCHER_GROUP in names:
        return "researcher"
    if EVALUATOR_GROUP in names:
        return "evaluator"
    return None


# --- invitations and participations ---------------------------------------------


#: What an invitation token can look like (``secrets.token_urlsafe``, at most the column's 64 characters).
INVITATION_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def invitation_get_active(*, token: str) -> Invitation | None:
    """The unrevoked invitation with this token, or None (also for a token
    that no invitation can have, such as one with a NUL byte)."""
    if not INVITATION_TOKEN_RE.fullmatch(token):
        return None
    return (
        Invitation.objects.select_related("study")
        .filter(token=token, revoked_at__isnull=True)
        .first()
    )


def participation_get(*, study_id: int, user: AbstractBaseUser) -> Participation | None:
    """``user``'s participation in study ``study_id`` (with the study), or None
    (also for an id no study can have, such as one beyond 64 bits from a URL)."""
    if not user.is_authenticated or not 1 <= study_id <= ID_MAX:
        return None
    found = _PARTICIPATION.objects(study_id=study_id, user_id=user.pk)
    if not found:
        return None
    participation = found[0]
    # The page that follows draws the navigation from the user's role: it comes with this row, not in a query.
    setattr(user, _ROLE_GROUPS_ATTR, frozenset(
        name for name in _ROLE_GROUPS if getattr(participation, f"in_{name}_group")))
    return participation


def _participation_query(study_id: int, user_id: int) -> QuerySet[Participation]:
    """The participation with its study and the study's stopping rules, and whether the user is in each role group
    (``in_evaluator_group``, ``in_researcher_group``)."""
    return (
        Participation.objects.select_related("study", "study__stopping_rules")
        .filter(study_id=study_id, user_id=user_id)
        .annotate(**{f"in_{name}_group": Exists(Group.objects.filter(user=OuterRef("user_id"), name=name))
                     for name in _ROLE_GROUPS})
        .order_by("pk")[:1]
    )


#: :func:`participation_get`'s read, compiled once.
_PARTICIPATION = PreparedQuery("participation", _participation_query, "study_id", "user_id")


def participations_of(*, user: AbstractBaseUser) -> list[Participation]:
    return list(Participation.objects.select_related("study").filter(user=user).order_by("-created_at"))


def participation_next_step(*, participation: Participation) -> str:
    """Where the evaluator goes next: "done", "closed", "onboarding",
    "guidelines" or "judge" (in an open study, the judging page itself sends
    a finished evaluator to "done"). In a study that is not open, an
    evaluator who had finished (``finished_at``) goes to "done", anyone else
    to "closed"."""
    if participation.study.status != StudyStatus.OPEN:
        return "done" if participation.finished_at is not None else "closed"
    if participation.onboarded_at is None:
        return "onboarding"
    if participation.guidelines_accepted_at is None:
        return "guidelines"
    return "judge"


# --- the evaluator's order ------------------------------------------------------


def evaluator_pair_key(*, seed: int, pair_id: int) -> tuple[int, bool]:
    """Deterministic per-evaluator ``(order key, question_a on the left)``.

    The same seed and pair always give the same answer, so a refresh shows the
    same pair the same way round; different seeds give independent orders.
    """
    digest = hashlib.blake2b(f"{seed}:{pair_id}".encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value >> 1, bool(value & 1)


@dataclass(frozen=True)
class Progress:
    """An evaluator's counts. ``remaining`` counts pairs they may still get:
    undecided pairs still open (fewer votes than the target) plus any pair
    already on their screen."""

    judged: int
    skipped: int
    remaining: int

    @property
    def total(self) -> int:
        return self.judged + self.skipped + self.remaining

    @property
    def done(self) -> bool:
        return self.remaining == 0


#: Order indices examined per query when looking for an evaluator's next pair. With the study's id, the
#: participation's (twice) and the constants of its two EXISTS clauses, the query has 50 parameters: psycopg parses
#: a statement of at most 50 once and keeps it, and parses a longer one anew at every call (about a millisecond
#: for this one).
ORDER_CHUNK = 45
#: Order indices the walk's first query examines when at least half of the pairs ahead of the cursor are offerable:
#: they lie in the evaluator's random order as if drawn at random, so all of the first 8 miss with probability below
#: 0.5 ** 8 (0.4%), and a shorter chunk costs less to compute and to read than a full one. Otherwise (late in a study,
#: when most pairs reached the target) the first query examines :data:`ORDER_CHUNK` indices, as every later one does.
FIRST_CHUNK = 8
_MASK64 = (1 << 64) - 1
_FEISTEL_ROUNDS = 4


def _mix64(x: int) -> int:
    """splitmix64's finaliser: a cheap, well-spread 64-bit mixing function."""
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & _MASK64
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & _MASK64
    return x ^ (x >> 31)


def evaluator_order_position(*, seed: int, n: int, index: int) -> int:
    """The pair position the evaluator with ``seed`` meets at ``index`` of their order.

    The order is a seeded pseudo-random permutation of ``range(n)`` (pair
    positions): a 4-round Feistel network on the smallest even number of bits
    covering ``n``, walked until it lands below ``n`` (fewer than 4 steps on
    average). Computed in constant time per index, so the evaluator's whole
    order is "computed once" from ``(seed, n)`` and never stored or sorted.

    Parameters
    ----------
    seed : int
        ``Participation.seed``.
    n : int
        Pairs in the study (positions are ``0 .. n - 1``), ``n >= 1``.
    index : int
        Place in the order, ``0 <= index < n``.

    Returns
    -------
    int
        A position in ``range(n)``; distinct indices give distinct positions.
    """
    return evaluator_order_positions(seed=seed, n=n, indices=(index,))[0]


def evaluator_order_positions(*, seed: int, n: int, indices: Iterable[int]) -> list[int]:
    """:func:`evaluator_order_position` of each of ``indices``, in their
    order, with the seed's round keys computed once.

    Parameters
    ----------
    seed : int
        ``Participation.seed``.
    n : int
        Pairs in the study, ``n >= 1``.
    indices : iterable of int
        Places in the order, each in ``0 <= index < n``.

    Returns
    -------
    list of int
        One position in ``range(n)`` per index.
    """
    half = max(1, ((n - 1).bit_length() + 1) // 2)
    mask = (1 << half) - 1
    keys = [_mix64((seed * 4 + r) & _MASK64) for r in range(_FEISTEL_ROUNDS)]
    out = []
    for index in indices:
        x = index
        while True:
            left, right = x >> half, x & mask
            for key in keys:
                left, right = right, left ^ (_mix64(right ^ key) & mask)
            x = (left << half) | right
            if x < n:
                break
        out.append(x)
    return out


@dataclass(frozen=True)
class NextPair:
    """The next pair of an evaluator's order (its id and its two questions) and the cursor after it."""

    pair_id: int
    cursor: int
    question_a_id: int
    question_b_id: int


@dataclass(frozen=True)
class JudgingState:
    """What one evaluator has decided and has on screen, read with a handful of
    indexed queries whose cost does not grow with the study's size.

    ``open_assignments`` lists the assignments (pair on screen, not yet
    decided) by display time; ``n_offerable`` counts the undecided, unassigned
    pairs still below the target.
    """

    participation: Participation
    judged: int
    skipped: int
    open_assignments: tuple[Assignment, ...]
    n_offerable: int
    n_pairs: int

    @property
    def progress(self) -> Progress:
        return Progress(judged=self.judged, skipped=self.skipped,
                        remaining=len(self.open_assignments) + self.n_offerable)

    def next_pair_id(self) -> int | None:
        """The pair to show: the oldest open assignment, else the first offerable
        pair in the evaluator's order, else None (finished)."""
        if self.open_assignments:
            return self.open_assignments[0].pair_id
        found = participation_next_pair(participation=self.participation, n_offerable=self.n_offerable,
                                        n_pairs=self.n_pairs)
        return None if found is None else found.pair_id


def _open_assignments_query(mine: int) -> QuerySet[Assignment]:
    decided = Judgment.objects.filter(participation_id=mine, pair_id=OuterRef("pair_id"))
    return (
        Assignment.objects.filter(participation_id=mine).filter(~Exists(decided))
        .select_related("pair__question_a__dataset", "pair__question_b__dataset").order_by("shown_at", "id")
    )


#: The evaluator's open assignments with their pairs, questions and datasets, compiled once.
_OPEN_ASSIGNMENTS = PreparedQuery("open assignments", _open_assignments_query, "mine")


def _open_assignments_of(*, participation: Participation) -> list[Assignment]:
    return _OPEN_ASSIGNMENTS.objects(mine=participation.pk)


class _Count(Subquery):
    """``(SELECT COUNT(*) FROM (<query>))``: a count as a scalar subquery, so that
    several counts travel in one query. The query is counted without its
    model's default ordering (a count does not depend on it, and SQLite would
    sort every counted row first)."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) _counted)"
    output_field = IntegerField()

    def __init__(self, queryset: QuerySet, **extra) -> None:
        super().__init__(queryset.order_by(), **extra)


def _open_count(*, mine: int) -> _Count:
    """The number of the open assignments of participation ``mine``, as a scalar subquery."""
    decided = Judgment.objects.filter(participation_id=mine, pair_id=OuterRef("pair_id"))
    return _Count(Assignment.objects.filter(participation_id=mine).filter(~Exists(decided)).values("pk"))


def _open_assignments(*, participation: Participation, n_open: int) -> tuple[Assignment, ...]:
    """The open assignments (with pair and questions) when the row of counts found any; no query otherwise."""
    return tuple(_open_assignments_of(participation=participation)) if n_open else ()


def stopping_rules_loaded(*, study: Study) -> tuple[bool, StoppingRules | None]:
    """The study's stopping rules as read with it, without a query.

    Returns ``(True, rules)`` when the study was read with its rules
    (:func:`participation_get` joins them; ``rules`` is None when the study
    has none), else ``(False, None)``: the caller reads them itself.
    """
    descriptor = Study.stopping_rules
    if not descriptor.is_cached(study):
        return False, None
    return True, descriptor.related.get_cached_value(study)


def _study_full(study: Study) -> bool:
    """A stopping rule of the study fired (:mod:`annotate.studies.services.stopping`): nothing new is offered.

    A study read with its rules answers from them: rules are chosen before
    the first judgment and a stamp is final, and the judging service reads
    the rules again after each judgment (:func:`annotate.studies.services.stopping.stopping_check`),
    keeping the study's copy current. Otherwise one query.
    """
    known, rules = stopping_rules_loaded(study=study)
    if known:
        return rules is not None and rules.fired_at is not None
    return StoppingRules.objects.filter(study_id=study.pk, fired_at__isnull=False).exists()


def _one_row(*, study_id: int, **expressions) -> QuerySet[Study]:
    """Scalar subqueries evaluated in one round trip, as the columns of the
    study's own row (a primary-key lookup), in the order given."""
    return Study.objects.filter(pk=study_id).values(**expressions)


#: The columns of a uniform study's row of counts, in order.
_UNIFORM_COUNTS = ("decided", "skipped", "top", "at_target", "mine_below", "n_open")


def _uniform_counts(study_id: int, mine: int, target: int) -> dict:
    return {
        "decided": _Count(Judgment.objects.filter(participation_id=mine).values("pk")),
        "skipped": _Count(Judgment.objects.filter(participation_id=mine, choice=Choice.SKIP).values("pk")),
        "top": Subquery(Pair.objects.filter(study_id=study_id).order_by("-position").values("position")[:1]),
        "at_target": _Count(Pair.objects.filter(study_id=study_id, n_votes__gte=target).values("pk")),
        "mine_below": _Count(Assignment.objects.filter(participation_id=mine, pair__n_votes__lt=target).values("pk")),
        "n_open": _open_count(mine=mine),
    }


def _uniform_row(study_id: int, mine: int, target: int) -> QuerySet[Study]:
    return _one_row(study_id=study_id, **_uniform_counts(study_id, mine, target))


def with_uniform_counts(queryset: QuerySet, *, study_id: int, mine: int, target: int) -> QuerySet:
    """``queryset``'s rows, each carrying the row of counts of participation ``mine`` in the uniform study
    ``study_id`` (annotations ``state_<name>``), read by :func:`participation_state` and
    :func:`uniform_state_after_answer`."""
    counts = _uniform_counts(study_id, mine, target)
    return queryset.annotate(**{f"state_{name}": value for name, value in counts.items()})


def _uniform_open_query(study_id: int, mine: int, target: int) -> QuerySet[Assignment]:
    """The open assignments (:func:`_open_assignments_query`), each row carrying the row of counts."""
    return with_uniform_counts(_open_assignments_query(mine), study_id=study_id, mine=mine, target=target)


#: The columns of an adaptive study's row of counts, in order.
_ADAPTIVE_COUNTS = ("decided", "skipped", "checks", "shown", "n_open")


def _adaptive_counts(study_id: int, mine: int) -> dict:
    return {
        "decided": _Count(Judgment.objects.filter(participation_id=mine).values("pk")),
        "skipped": _Count(Judgment.objects.filter(participation_id=mine, choice=Choice.SKIP).values("pk")),
        "checks": _Count(Pair.objects.filter(study_id=study_id, attention_check=True).values("pk")),
        "shown": _Count(Assignment.objects.filter(participation_id=mine).values("pk")),
        "n_open": _open_count(mine=mine),
    }


def _adaptive_row(study_id: int, mine: int) -> QuerySet[Study]:
    return _one_row(study_id=study_id, **_adaptive_counts(study_id, mine))


def _adaptive_open_query(study_id: int, mine: int) -> QuerySet[Assignment]:
    """The open assignments (:func:`_open_assignments_query`), each row carrying the adaptive row of counts."""
    counts = _adaptive_counts(study_id, mine)
    return _open_assignments_query(mine).annotate(**{f"state_{name}": value for name, value in counts.items()})


#: The rows of counts of :func:`participation_state` (uniform and adaptive studies), compiled once.
_UNIFORM_ROW = PreparedQuery("uniform judging state", _uniform_row, "study_id", "mine", "target")
_ADAPTIVE_ROW = PreparedQuery("adaptive judging state", _adaptive_row, "study_id", "mine")
_ADAPTIVE_OPEN = PreparedQuery("adaptive open assignments with the judging state", _adaptive_open_query, "study_id",
                               "mine")
_UNIFORM_OPEN = PreparedQuery("uniform open assignments with the judging state", _uniform_open_query, "study_id",
                              "mine", "target")


def participation_state(*, participation: Participation, expect_open: bool = False) -> JudgingState:
    """Read an evaluator's :class:`JudgingState`.

    With ``expect_open`` (the judging page, where a pair is on screen), the
    state comes in one query: the open assignments, each row carrying the
    row of counts; only when none is open is the row of counts read on its
    own.

    One query, which reads no pair of the study but through an index: one
    row of counts (the evaluator's decisions and skips, their open
    assignments, the study's pair count, the number of pairs that reached the
    target, an index range count on ``Pair.n_votes``, and the number of the
    evaluator's own assigned pairs still below it); a second one reads the
    open assignments, with their pairs and questions, when there are any
    (on the judging page; not after an answer). Nothing is offerable once a
    stopping rule of the study has fired. Every judgment has an assignment
    (the judging service writes one first; imports carry them), so
    "offerable" = pairs below the target minus the evaluator's assigned pairs
    below it.
    """
    study = participation.study
    if study.is_adaptive:
        return _adaptive_state(participation=participation, expect_open=expect_open)
    values = {"study_id": study.pk, "mine": participation.pk, "target": study.target_judgments_per_pair}
    row, open_assignments = _counts_and_open(participation, values, _UNIFORM_OPEN, _UNIFORM_ROW, _UNIFORM_COUNTS,
                                             expect_open=expect_open)
    return _uniform_state(participation, row, open_assignments)


def _counts_and_open(participation: Participation, values: dict, with_open: PreparedQuery, row_only: PreparedQuery,
                     names: tuple[str, ...], *, expect_open: bool) -> tuple[dict, tuple[Assignment, ...]]:
    """The judging state's row of counts and open assignments: with ``expect_open`` the open assignments carrying
    the row (``with_open``) when there are any; else the row (``row_only``), then the open ones if it counts any."""
    found = with_open.objects(**values) if expect_open else []
    if found:
        return {name: getattr(found[0], f"state_{name}") for name in names}, tuple(found)
    row = dict(zip(names, row_only.rows(**values)[0], strict=True))
    return row, _open_assignments(participation=participation, n_open=row["n_open"])


def _uniform_state(participation: Participation, row: dict, open_assignments: tuple[Assignment, ...]) -> JudgingState:
    n_pairs = 0 if row["top"] is None else row["top"] + 1
    full = _study_full(participation.study)
    return JudgingState(
        participation=participation,
        judged=row["decided"] - row["skipped"],
        skipped=row["skipped"],
        open_assignments=open_assignments,
        n_offerable=0 if full else max(0, n_pairs - row["at_target"] - row["mine_below"]),
        n_pairs=n_pairs,
    )


def uniform_state_after_answer(*, participation: Participation, counted: Model, choice: str) -> JudgingState | None:
    """The :class:`JudgingState` once the answer ``choice`` on a pair that was open is stored, from the counts
    read with that pair before (``counted``, a row of :func:`with_uniform_counts`), without a query; None when
    another pair is still open (the caller reads the state). The answer decides one open pair; what is offerable
    does not change (a pair of the evaluator's that reaches the target with this vote leaves the pairs assigned
    below the target for those at it). Another evaluator's vote in between can only make fewer pairs offerable,
    which the walk to the next pair sees."""
    row = {name: getattr(counted, f"state_{name}") for name in _UNIFORM_COUNTS}
    if row["n_open"] != 1:
        return None
    row.update(decided=row["decided"] + 1, skipped=row["skipped"] + (choice == Choice.SKIP), n_open=0)
    return _uniform_state(participation, row, ())


def adaptive_total(*, study: Study) -> int:
    """Pairs each evaluator of an adaptive study is shown: its ``n_pairs``
    regular pairs plus every attention check."""
    return study.n_pairs + Pair.objects.filter(study_id=study.pk, attention_check=True).count()


def _adaptive_state(*, participation: Participation, expect_open: bool = False) -> JudgingState:
    """An adaptive study's :class:`JudgingState`: pairs are made as they are
    served, so what an evaluator may still get is their total
    (:func:`adaptive_total`) minus what they were shown, or nothing once they
    are finished (the pool had no unseen pair left for them). One row of
    counts, and the open assignments when there are any; with
    ``expect_open``, the open assignments carrying the row of counts first."""
    study = participation.study
    values = {"study_id": study.pk, "mine": participation.pk}
    row, open_assignments = _counts_and_open(participation, values, _ADAPTIVE_OPEN, _ADAPTIVE_ROW, _ADAPTIVE_COUNTS,
                                             expect_open=expect_open)
    total = study.n_pairs + row["checks"]
    full = participation.finished_at is not None or _study_full(study)
    offerable = 0 if full else max(0, total - row["shown"])
    return JudgingState(
        participation=participation,
        judged=row["decided"] - row["skipped"],
        skipped=row["skipped"],
        open_assignments=open_assignments,
        n_offerable=offerable,
        n_pairs=total,
    )


def study_pair_count(*, study_id: int) -> int:
    """Pairs in the study (positions are ``0 .. n - 1``): one index lookup."""
    top = Pair.objects.filter(study_id=study_id).order_by("-position").values_list("position", flat=True).first()
    return 0 if top is None else top + 1


def _order_chunk_pairs(study_id: int, mine: int, **positions: int) -> QuerySet[Pair]:
    """The study's pairs at ``positions`` (a chunk of the evaluator's order) neither assigned to nor decided by
    participation ``mine``. Only (study, position) in SQL, so the plan is the unique index on it whatever the
    statistics say (a vote-count condition there let a stale planner scan the study)."""
    assigned = Assignment.objects.filter(participation_id=mine, pair_id=OuterRef("pk"))
    decided = Judgment.objects.filter(participation_id=mine, pair_id=OuterRef("pk"))
    return (
        Pair.objects.filter(study_id=study_id, position__in=[positions[f"p{k}"] for k in range(ORDER_CHUNK)])
        .filter(~Exists(assigned), ~Exists(decided))
        .values_list("pk", "position", "n_votes", "question_a_id", "question_b_id")
    )


#: One chunk of :func:`participation_next_pair`'s walk, compiled once (always :data:`ORDER_CHUNK` positions).
_ORDER_CHUNK_PAIRS = PreparedQuery("order chunk", _order_chunk_pairs, "study_id", "mine",
                                   *(f"p{k}" for k in range(ORDER_CHUNK)))


def participation_next_pair(
    *, participation: Participation, n_offerable: int | None = None, n_pairs: int | None = None
) -> NextPair | None:
    """The first offerable pair in the evaluator's order, from their cursor on.

    Walks :func:`evaluator_order_position` from ``participation.order_cursor``
    in chunks of :data:`ORDER_CHUNK` positions, one indexed query per chunk
    (pairs at those positions, below the target, neither assigned to nor
    decided by the evaluator). Pairs behind the cursor were at the target or
    already the evaluator's when the cursor passed them, so the walk resumes
    where it stopped; only when nothing is found up to the end (the target was
    raised since) does it wrap around once. ``n_offerable == 0`` (known from
    :func:`participation_state`) skips the walk; ``n_pairs`` saves a query
    when known. The first chunk is :data:`FIRST_CHUNK` positions when
    ``n_offerable`` says that at least half of the pairs ahead are offerable.
    Reads only.
    """
    if n_offerable == 0:
        return None
    study = participation.study
    n = study_pair_count(study_id=study.pk) if n_pairs is None else n_pairs
    if n == 0:
        return None
    start = min(participation.order_cursor, n)
    spans = [(start, n), (0, start)]
    dense = n_offerable is not None and 2 * n_offerable >= n - start
    for lo, hi in spans:
        chunk_lo, size = lo, FIRST_CHUNK if dense and lo == start else ORDER_CHUNK
        while chunk_lo < hi:
            indices = range(chunk_lo, min(chunk_lo + size, hi))
            chunk_lo, size = chunk_lo + size, ORDER_CHUNK
            index_of = dict(zip(evaluator_order_positions(seed=participation.seed, n=n, indices=indices), indices))
            # A short chunk repeats position -1, which no pair has.
            positions = [*index_of, *([-1] * (ORDER_CHUNK - len(index_of)))]
            found = _ORDER_CHUNK_PAIRS.rows(study_id=study.pk, mine=participation.pk,
                                            **{f"p{k}": position for k, position in enumerate(positions)})
            target = study.target_judgments_per_pair
            best = min(((index_of[pos], pk, a, b) for pk, pos, votes, a, b in found if votes < target),
                       default=None)
            if best is not None:
                return NextPair(pair_id=best[1], cursor=best[0] + 1, question_a_id=best[2], question_b_id=best[3])
    return None


def participation_progress(*, participation: Participation) -> Progress:
    return participation_state(participation=participation).progress


def study_scope_frozen(*, study: Study) -> bool:
    """Whether ``study``'s scope (datasets, subjects, pairs) is frozen.

    The one rule: the scope freezes at the study's first judgment, a vote or a
    skip. From then on, answers refer to its pairs, so changing what the study
    covers would change what earlier answers mean; a different scope is a new
    study. Assignments alone (a pair on screen, no answer yet) do not freeze it.
    """
    return Judgment.objects.filter(pair__study_id=study.pk).exists()


def study_judgment_count(*, study: Study) -> int:
    """Judgments (votes and skips) recorded in ``study``."""
    return Judgment.objects.filter(pair__study_id=study.pk).count()


def study_evaluator_count(*, study: Study) -> int:
    """Evaluators (participations) of ``study``."""
    return Participation.objects.filter(study_id=study.pk).count()


def study_group_counts(*, study: Study) -> dict[str, int]:
    """Evaluators per non-blank group of ``study``, by group name (an imported study's groups)."""
    rows = (Participation.objects.filter(study_id=study.pk).exclude(group="").values("group")
            .annotate(n=Count("id")).order_by("group"))
    return {row["group"]: row["n"] for row in rows}


def study_get_by_key(*, key: str) -> Study | None:
    """The study ``key`` names, as every command's ``--study`` takes it: a
    study *name* first, then, if no study has that name and ``key`` is all
    digits, the study with that *id*. A study whose name is all digits is
    therefore still found by its name (and hides the study with that id:
    pass the other study's name instead). None when nothing matches."""
    study = Study.objects.filter(name=key).first()
    if study is None and ascii_int(key) is not None:
        study = Study.objects.filter(pk=ascii_int(key)).first()
    return study


def user_get_by_username(*, username: str) -> AbstractBaseUser | None:
    """The account called ``username``, if any (active or not)."""
    return get_user_model().objects.filter(username=username).first()


def evaluator_get_active(*, pk: int | None) -> AbstractBaseUser | None:
    """The active evaluator account with id ``pk``, or None (also for a None ``pk``)."""
    user = get_user_model().objects.filter(pk=pk, is_active=True).first()
    return user if user is not None and user_is_evaluator(user=user) else None


def users_of_participations(*, participations: QuerySet[Participation]) -> list[AbstractBaseUser]:
    """The distinct accounts of ``participations``, by id."""
    user_ids = sorted(set(participations.values_list("user_id", flat=True)))
    return list(get_user_model().objects.filter(pk__in=user_ids).order_by("pk"))


# --- who may see and change a study (object-level permission, the one place) -------


def studies_visible_to(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Study]:
    """The studies ``user`` may see and change, newest first.

    Staff (admins) see every study; a researcher the studies they own
    (``created_by``) or were added to (``members``); anyone else none.
    Every researcher-facing page, download, API endpoint and the admin
    changelist filter through this (or :func:`can_manage_study`).
    """
    if not user.is_authenticated:
        return Study.objects.none()
    if user.is_staff:
        return Study.objects.order_by("-created_at", "-id")
    if not user_is_researcher(user=user):
        return Study.objects.none()
    added = Study.members.through.objects.filter(user_id=user.pk).values("study_id")
    return Study.objects.filter(Q(created_by_id=user.pk) | Q(pk__in=added)).order_by("-created_at", "-id")


def can_manage_study(*, user: AbstractBaseUser | AnonymousUser, study: Study) -> bool:
    """Whether ``user`` may see and change ``study`` (see :func:`studies_visible_to`)."""
    if not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    if not user_is_researcher(user=user):
        return False
    return study.created_by_id == user.pk or study.members.filter(pk=user.pk).exists()


def study_for_researcher(*, user: AbstractBaseUser | AnonymousUser, study_id: int) -> Study | None:
    """Study ``study_id`` (its scoring run loaded) when ``user`` may manage it;
    None when it does not exist *or* is someone else's (callers answer 404 to
    both, so an outsider learns nothing about other researchers' studies)."""
    return studies_visible_to(user=user).select_related("scoring_run").filter(pk=study_id).first()


@dataclass(frozen=True)
class StatusChange:
    """What moving a study to another status means, for the confirmation step."""

    verb: str  # "Launch", "Close", "Reopen", "Back to draft" (the button's label)
    consequence: str


STATUS_CHANGES = {
    (StudyStatus.DRAFT, StudyStatus.OPEN): StatusChange(
        "Launch", "Invitation links start admitting evaluators. The pairs and settings stay editable until the "
                  "first judgment arrives; after that they are frozen."),
    (StudyStatus.OPEN, StudyStatus.CLOSED): StatusChange(
        "Close", "Nobody can join or judge any more; evaluators who follow a link are told the study is closed. "
                 "Nothing is deleted, and you can reopen the study."),
    (StudyStatus.CLOSED, StudyStatus.OPEN): StatusChange(
        "Reopen", "Invitation links admit evaluators again and everyone can continue where they stopped."),
    (StudyStatus.DRAFT, StudyStatus.CLOSED): StatusChange(
        "Close", "The study is closed without having been launched. Nothing is deleted."),
    (StudyStatus.OPEN, StudyStatus.DRAFT): StatusChange(
        "Back to draft", "Nobody can join or judge until you launch it again."),
    (StudyStatus.CLOSED, StudyStatus.DRAFT): StatusChange(
        "Back to draft", "The study stays closed to evaluators until you launch it."),
}


def study_status_change(*, study: Study, status: str) -> StatusChange | None:
    """What moving ``study`` to ``status`` does; None when it already has that status."""
    return STATUS_CHANGES.get((StudyStatus(study.status), StudyStatus(status)))


def completion_url_for(*, study: Study) -> str:
    """Where the done page sends a finished evaluator: the study's
    ``completion_url`` (e.g. Prolific's ``.../submissions/complete?cc=CODE``)
    when it is an http(s) address, else "" (no redirect)."""
    url = (study.completion_url or "").strip()
    return url if url.lower().startswith(("https://", "http://")) else ""


# --- a study's related rows, for pages, forms and commands ------------------------


def study_subjects(*, study: Study) -> QuerySet[Subject]:
    """The study's subjects, by name."""
    return study.subjects.order_by("name")


def participation_qualified_subjects(*, participation: Participation) -> QuerySet[Subject]:
    """The subjects an evaluator said they are qualified in (onboarding)."""
    return participation.qualified_subjects.all()


def study_pool_size(*, study: Study) -> int:
    """Questions in an adaptive study's pool."""
    return study.pool.count()


def study_subject_count(*, study: Study) -> int:
    return study.subjects.count()


@dataclass(frozen=True)
class StudyRelated:
    """A study's datasets, subjects and co-researchers (as the edit form shows them)."""

    datasets: list[Dataset]
    subjects: list[Subject]
    members: list[AbstractBaseUser]


def study_related(*, study: Study) -> StudyRelated:
    return StudyRelated(datasets=list(study.datasets.all()), subjects=list(study.subjects.all()),
                        members=list(study.members.all()))


def screened_out_url_for(*, study: Study) -> str:
    """Where a participant who did not earn the completion code may go: the
    study's ``screened_out_url`` (a platform's return or screened-out link)
    when it is an http(s) address, else ""."""
    url = (study.screened_out_url or "").strip()
    return url if url.lower().startswith(("https://", "http://")) else ""
