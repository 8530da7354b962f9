"""What an adaptive study's choice reads, in one statement: its votes (kept in the process and extended by the
judgments stored since), its pool (kept while unchanged), its attention checks and the pairs in flight (shown to
an evaluator and not answered yet).

Each choice of an adaptive study (:mod:`annotate.studies.services.adaptive`)
needs every vote of the study: each judgment of a left or right choice on a
regular pair (not an attention check) by an evaluator not excluded, oriented
(the harder question, then the pair's two). Reading them all again at every
answer costs the database and the process more than the rest of the reads
of an answer together (thousands of rows, a join per row), while almost all
of them were read by the previous answer.

:func:`study_reads` keeps, per database and study, every judgment of the
study's evaluators read so far (its id, evaluator, whether it is a vote,
its questions) and, per evaluator, the tally of those judgments: how many,
the largest id and the sum of the ids. Each call makes one query (one
statement, so one snapshot of the database) that returns

* the tally of every evaluator of the study as it is now, with their exclusion,
* the judgments above the largest id kept,
* the count, largest id and sum of ids of the pool's rows,
* the attention checks,
* the pairs shown to the evaluator who is served (when one is named), each
  with whether they decided it,
* per evaluator, the pair they were shown last while they have not
  answered it (their newest assignment), shown less than
  :data:`IN_FLIGHT_MAX_AGE` ago: an evaluator who left without answering
  holds their pair out of the others' choices for that long, not for ever.

When the kept and the new judgments make every evaluator's tally, they are
the study's judgments; when they do not (a judgment deleted, or one with a
smaller id committed after a larger one was read: two tabs of one evaluator
answering at once), the judgments are read again from id 0, a full read as
every call made before. Judgments are never edited
(:class:`~annotate.models.Judgment`) and their ids only grow, so those that
are kept stay as they were; a judgment missed or gone changes its
evaluator's count or sum. Exclusions are applied at each call from the
tally, never kept. The pool's rows are never edited either (a study's pool
is replaced whole, with new ids): it is read again only when its count,
largest id or sum of ids changed.

The judgments are those of the study's evaluators on the study's pairs (an
evaluator answers only their own study's pairs).
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.db import connections
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    Exists,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotate.core import PreparedQuery
from annotate.models import AdaptivePoolQuestion, Assignment, Choice, Judgment, Pair, Participation


def _tally_of_evaluators(study_id: int) -> QuerySet:
    return (Participation.objects.filter(study_id=study_id).order_by()
            .values_list("pk", Case(When(excluded_at__isnull=True, then=Value(0)), default=Value(1),
                                    output_field=IntegerField()))
            .annotate(n=Count("judgments"), top=Coalesce(Max("judgments__id"), Value(0)),
                      total=Coalesce(Sum("judgments__id"), Value(0), output_field=BigIntegerField()),
                      c5=Value(0), c6=Value(0), kind=Value(EVALUATOR)))


def _judgments_after(study_id: int, after: int) -> QuerySet:
    return Judgment.objects.filter(participation__study_id=study_id, pk__gt=after).order_by().values_list(
        "pk", "participation_id",
        Case(When(Q(choice__in=(Choice.LEFT, Choice.RIGHT), pair__attention_check=False), then=Value(1)),
             default=Value(0), output_field=IntegerField()),
        Coalesce("harder_question_id", Value(0)), "pair__question_a_id", "pair__question_b_id", "pair__study_id",
        Value(JUDGMENT))


def _pool_signature(study_id: int) -> QuerySet:
    return (AdaptivePoolQuestion.objects.filter(study_id=study_id).order_by().values_list("study_id")
            .annotate(n=Count("id"), top=Max("id"), total=Coalesce(Sum("id"), Value(0), output_field=BigIntegerField()),
                      c4=Value(0), c5=Value(0), c6=Value(0), kind=Value(POOL)))


def _checks(study_id: int) -> QuerySet:
    return Pair.objects.filter(study_id=study_id, attention_check=True).order_by().values_list(
        "pk", "question_a_id", "question_b_id", "position", Value(0), Value(0), Value(0), Value(CHECK))


def _open_pairs(study_id: int, shown_since: datetime) -> QuerySet:
    """The pair each evaluator of the study was shown last, while they have not answered it and it was shown at
    ``shown_since`` or later (one row per evaluator at most: their newest assignment, read through the index on
    its evaluator)."""
    newest = Assignment.objects.filter(participation_id=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    answered = Judgment.objects.filter(participation_id=OuterRef("participation_id"), pair_id=OuterRef("pair_id"))
    return (Assignment.objects.filter(pk__in=Participation.objects.filter(study_id=study_id).order_by()
                                      .values_list(Subquery(newest)), shown_at__gte=shown_since)
            .exclude(Exists(answered)).order_by()
            .values_list("participation_id", "pair__question_a_id", "pair__question_b_id", Value(0), Value(0),
                         Value(0), Value(0), Value(OPEN)))


def _shown(mine: int) -> QuerySet:
    """The pairs shown to participation ``mine``: pair id, its questions, 1 for an attention check, 1 when decided."""
    decided = Judgment.objects.filter(participation_id=mine, pair_id=OuterRef("pair_id"))
    return Assignment.objects.filter(participation_id=mine).order_by().values_list(
        "pair_id", "pair__question_a_id", "pair__question_b_id",
        Case(When(pair__attention_check=True, then=Value(1)), default=Value(0), output_field=IntegerField()),
        Case(When(Exists(decided), then=Value(1)), default=Value(0), output_field=IntegerField()),
        "pk", Value(0), Value(SHOWN))


#: The kind of a row of :data:`_STATE` (its last column).
EVALUATOR, JUDGMENT, POOL, CHECK, OPEN, SHOWN = 0, 1, 2, 3, 4, 5
#: One statement, six kinds of row (the last column says which): per evaluator of the study, their id, 1 when
#: excluded (else 0), their judgments' count, largest id and sum of ids (0, 0, 0 without judgments); per judgment
#: of the study's evaluators above ``after``, its id, evaluator, 1 for a vote on a regular pair (else 0), the harder
#: question (0 for a skip), the pair's two questions and its study; the pool's study id, count of rows, largest id
#: and sum of ids (no row for an empty pool); per attention check, its pair id, questions and position; per
#: evaluator whose newest pair is not answered yet and was shown at ``shown_since`` or later, their id and that
#: pair's questions; per pair shown to participation ``mine`` (none for 0), its id, questions, 1 for an attention
#: check, 1 when decided, and the assignment's id.
_STATE = PreparedQuery(
    "adaptive study state",
    lambda study_id, after, shown_since, mine: _tally_of_evaluators(study_id).union(
        _judgments_after(study_id, after), _pool_signature(study_id), _checks(study_id),
        _open_pairs(study_id, shown_since), _shown(mine), all=True),
    "study_id", "after", "shown_since", "mine", datetimes=("shown_since",),
)
#: How long an unanswered pair counts as in flight after it was shown (:attr:`StudyReads.open_pairs`): longer than
#: anyone takes over one pair, so that only an evaluator who left the study (closed the tab, lost the connection)
#: stops holding their pair out of the others' choices.
IN_FLIGHT_MAX_AGE = timedelta(minutes=30)
_WIDTH = 8
_POOL = PreparedQuery(
    "adaptive pool",
    lambda study_id: AdaptivePoolQuestion.objects.filter(study_id=study_id).order_by("question_id")
    .values_list("question_id", "block"),
    "study_id",
)

#: Studies kept per process (each holds its judgments' arrays, 6 integers per judgment, and its pool).
STUDIES_KEPT = 8

#: Per evaluator with judgments: (judgments, largest judgment id, sum of the judgment ids).
Tally = dict[int, tuple[int, int, int]]
_NONE = (0, 0, 0)


@dataclass(frozen=True)
class StudyReads:
    """What a choice reads of a study.

    Attributes
    ----------
    questions, blocks : ndarray of int64, shape (n_pool,)
        The pool's question ids (ascending) and each one's block.
    harder, easier : ndarray of int64, shape (n_votes,)
        The votes (question ids), in no particular order.
    checks : list of (int, int, int)
        The attention checks by position: (pair id, question a id, question b id).
    open_pairs : dict of int to (int, int)
        Evaluator id -> the questions (a, b) of the pair they were shown last and have not answered yet, shown
        less than :data:`IN_FLIGHT_MAX_AGE` ago: the pairs in flight, whose votes are still to come.
    excluded : ndarray of int64
        The ids of the study's evaluators excluded from the analyses (their judgments are no votes).
    shown : list of (int, int, int, bool)
        The pairs shown to the evaluator named by ``mine`` (empty without): (pair id, question a id, question b
        id, attention check), by assignment id.
    undecided : frozenset of int
        The ids of those of ``shown`` the evaluator has not decided (judged or skipped).
    """

    questions: np.ndarray
    blocks: np.ndarray
    harder: np.ndarray
    easier: np.ndarray
    checks: list[tuple[int, int, int]]
    open_pairs: dict[int, tuple[int, int]] = field(default_factory=dict)
    excluded: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    shown: list[tuple[int, int, int, bool]] = field(default_factory=list)
    undecided: frozenset[int] = frozenset()


@dataclass(frozen=True)
class _Judgments:
    """Judgments of a study (arrays of equal length, in no particular order) and the tally they make."""

    ids: np.ndarray
    evaluators: np.ndarray
    vote: np.ndarray  # bool: a vote on a regular pair of the study
    harder: np.ndarray
    a: np.ndarray
    b: np.ndarray
    tally: Tally


@dataclass(frozen=True)
class _Kept:
    judgments: _Judgments
    pool_signature: tuple[int, int, int]
    questions: np.ndarray
    blocks: np.ndarray


_KEPT: OrderedDict[tuple[str, str, int], _Kept] = OrderedDict()
_LOCK = threading.Lock()


def study_reads_forget() -> None:
    """Drop every study's judgments and pool this process keeps."""
    with _LOCK:
        _KEPT.clear()


def study_reads(*, study_id: int, using: str = "default", now: datetime | None = None, mine: int = 0) -> StudyReads:
    """The study's pool, votes and attention checks now (:class:`StudyReads`).

    One query (:data:`_STATE`: the tally of the study's evaluators, the judgments above the largest id kept in this
    process, the pool's signature, the attention checks, the pairs in flight, the pairs shown to participation
    ``mine`` when given); then every judgment again, when the kept and the new ones do not make the tally, and the
    pool, when its signature changed (or on a first call). A pair counts as in flight when it was shown less than
    :data:`IN_FLIGHT_MAX_AGE` before ``now`` (default: the current time).
    """
    key = (using, str(connections[using].settings_dict.get("NAME")), study_id)
    shown_since = (now or timezone.now()) - IN_FLIGHT_MAX_AGE
    with _LOCK:
        kept = _KEPT.get(key)
    after = int(kept.judgments.ids.max()) if kept is not None and kept.judgments.ids.size else 0
    tally, excluded, signature, checks, open_pairs, shown, new = _read(using, study_id=study_id, after=after,
                                                                       shown_since=shown_since, mine=mine)
    judgments = new if kept is None else _merged(kept.judgments, new, tally)
    if judgments is None:
        tally, excluded, signature, checks, open_pairs, shown, judgments = _read(
            using, study_id=study_id, after=0, shown_since=shown_since, mine=mine)
    if kept is not None and kept.pool_signature == signature:
        questions, blocks = kept.questions, kept.blocks
    else:
        pool = _POOL.rows(using, study_id=study_id)
        flat = np.fromiter(itertools.chain.from_iterable(pool), dtype=np.int64, count=2 * len(pool))
        questions, blocks = flat[0::2].copy(), flat[1::2].copy()
    with _LOCK:
        _KEPT[key] = _Kept(judgments=judgments, pool_signature=signature, questions=questions, blocks=blocks)
        _KEPT.move_to_end(key)
        while len(_KEPT) > STUDIES_KEPT:
            _KEPT.popitem(last=False)
    counted = judgments.vote & ~np.isin(judgments.evaluators, excluded)
    harder, a, b = judgments.harder[counted], judgments.a[counted], judgments.b[counted]
    return StudyReads(questions=questions, blocks=blocks, harder=harder, easier=np.where(a == harder, b, a),
                      checks=checks, open_pairs=open_pairs, excluded=excluded, shown=shown[0],
                      undecided=shown[1])


def _read(using: str, *, study_id: int, after: int, shown_since: datetime, mine: int) -> tuple[
        Tally, np.ndarray, tuple[int, int, int], list[tuple[int, int, int]], dict[int, tuple[int, int]],
        tuple[list[tuple[int, int, int, bool]], frozenset[int]], _Judgments]:
    """The tally now (evaluators with judgments), the excluded evaluators' ids, the pool's signature, the attention
    checks by position, the pairs in flight by evaluator, the pairs shown to ``mine`` (and those undecided), and the
    judgments above ``after`` (with their own tally)."""
    rows = _STATE.rows(using, study_id=study_id, after=after, shown_since=shown_since, mine=mine)
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=_WIDTH * len(rows))
    table = flat.reshape(-1, _WIDTH)
    kind = table[:, 7]
    evaluators, judgments = table[kind == EVALUATOR], table[kind == JUDGMENT]
    tally = {int(pid): (int(n), int(top), int(total))
             for pid, n, top, total in evaluators[:, [0, 2, 3, 4]].tolist() if n}
    excluded = evaluators[evaluators[:, 1] == 1, 0]
    pool = table[kind == POOL]
    signature = (int(pool[0, 1]), int(pool[0, 2]), int(pool[0, 3])) if len(pool) else _NONE
    checks = table[kind == CHECK]
    checks = checks[np.argsort(checks[:, 3], kind="stable")]
    ids, who = judgments[:, 0].copy(), judgments[:, 1].copy()
    new = _Judgments(ids=ids, evaluators=who, vote=(judgments[:, 2] == 1) & (judgments[:, 6] == study_id),
                     harder=judgments[:, 3].copy(), a=judgments[:, 4].copy(), b=judgments[:, 5].copy(),
                     tally=_tally(ids, who))
    in_flight = {int(pid): (int(a), int(b)) for pid, a, b in table[kind == OPEN][:, :3].tolist()}
    own = table[kind == SHOWN]
    own = own[np.argsort(own[:, 5], kind="stable")]  # by assignment id
    shown = ([(p, a, b, check == 1) for p, a, b, check in own[:, :4].tolist()],
             frozenset(own[own[:, 4] == 0, 0].tolist()))
    return (tally, excluded, signature, [(int(p), int(a), int(b)) for p, a, b in checks[:, :3].tolist()], in_flight,
            shown, new)


def _merged(kept: _Judgments, new: _Judgments, tally: Tally) -> _Judgments | None:
    """The kept and the new judgments together, when they make ``tally``; None when they do not."""
    made = dict(kept.tally)
    for pid, (n, top, total) in new.tally.items():
        n0, top0, total0 = made.get(pid, _NONE)
        made[pid] = (n0 + n, max(top0, top), total0 + total)
    if made != tally:
        return None
    if not new.ids.size:
        return kept
    return _Judgments(
        ids=np.concatenate([kept.ids, new.ids]), evaluators=np.concatenate([kept.evaluators, new.evaluators]),
        vote=np.concatenate([kept.vote, new.vote]), harder=np.concatenate([kept.harder, new.harder]),
        a=np.concatenate([kept.a, new.a]), b=np.concatenate([kept.b, new.b]), tally=made,
    )


def _tally(ids: np.ndarray, evaluators: np.ndarray) -> Tally:
    """Evaluator id -> (judgments, largest judgment id, sum of the ids) of these judgments."""
    if not ids.size:
        return {}
    pids, inverse, counts = np.unique(evaluators, return_inverse=True, return_counts=True)
    tops = np.zeros(pids.size, dtype=np.int64)
    np.maximum.at(tops, inverse, ids)
    totals = np.zeros(pids.size, dtype=np.int64)
    np.add.at(totals, inverse, ids)
    return {int(p): (int(c), int(t), int(s)) for p, c, t, s in zip(pids, counts, tops, totals)}
