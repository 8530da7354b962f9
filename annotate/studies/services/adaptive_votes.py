"""An adaptive study's votes, kept in the process and extended by the judgments stored since the last read.

Each choice of an adaptive study (:mod:`annotate.studies.services.adaptive`)
needs every vote of the study: each judgment of a left or right choice on a
regular pair (not an attention check) by an evaluator not excluded, oriented
(the harder question, then the pair's two). Reading them all again at every
answer costs the database and the process more than the rest of the reads
of an answer together (thousands of rows, a join per row), while almost all
of them were read by the previous answer.

:func:`study_votes` keeps, per database and study, every judgment of the
study's evaluators read so far (its id, evaluator, whether it is a vote,
its questions) and, per evaluator, the tally of those judgments: how many,
the largest id and the sum of the ids. Each call makes one query (one
statement, so one snapshot of the database): the tally of every evaluator
of the study as it is now, with their exclusion, and the judgments above
the largest id kept. When the kept and the new judgments make every
evaluator's tally, they are the study's judgments; when they do not (a
judgment deleted, or one with a smaller id committed after a larger one was
read: two tabs of one evaluator answering at once), the same query runs
again from id 0, a full read as every call made before. Judgments are never
edited (:class:`~annotate.models.Judgment`) and their ids only grow, so
those that are kept stay as they were; a judgment missed or gone changes
its evaluator's count or sum. Exclusions are applied at each call from the
tally, never kept.

The judgments are those of the study's evaluators on the study's pairs (an
evaluator answers only their own study's pairs).
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from django.db import connections
from django.db.models import BigIntegerField, Case, Count, IntegerField, Max, Q, Sum, Value, When
from django.db.models.functions import Coalesce

from annotate.core import PreparedQuery
from annotate.models import Choice, Judgment, Participation

#: One statement, two kinds of row (the last column): 0, per evaluator of the study: id, 1 when excluded (else 0),
#: judgments stored, the largest judgment id and the sum of their ids (0 and 0 without judgments), 0, 0; and 1, per
#: judgment of the study's evaluators above an id: id, evaluator, 1 for a vote on a regular pair (else 0), the
#: harder question (0 for a skip), the pair's two questions and its study.
_TALLY_AND_JUDGMENTS = PreparedQuery(
    "adaptive tally and judgments after",
    lambda study_id, after: Participation.objects.filter(study_id=study_id).order_by()
    .values_list("pk", Case(When(excluded_at__isnull=True, then=Value(0)), default=Value(1),
                            output_field=IntegerField()))
    .annotate(n=Count("judgments"), top=Coalesce(Max("judgments__id"), Value(0)),
              total=Coalesce(Sum("judgments__id"), Value(0), output_field=BigIntegerField()),
              c5=Value(0), c6=Value(0), kind=Value(0))
    .union(
        Judgment.objects.filter(participation__study_id=study_id, pk__gt=after).order_by().values_list(
            "pk", "participation_id",
            Case(When(Q(choice__in=(Choice.LEFT, Choice.RIGHT), pair__attention_check=False), then=Value(1)),
                 default=Value(0), output_field=IntegerField()),
            Coalesce("harder_question_id", Value(0)), "pair__question_a_id", "pair__question_b_id",
            "pair__study_id", Value(1)),
        all=True),
    "study_id", "after",
)
_WIDTH = 8

#: Studies kept per process (each holds its judgments' arrays: 6 integers per judgment).
STUDIES_KEPT = 8


#: Per evaluator: (judgments, largest judgment id, sum of the judgment ids); (0, 0, 0) without judgments.
Tally = dict[int, tuple[int, int, int]]
_NONE = (0, 0, 0)


@dataclass(frozen=True)
class _Kept:
    """A study's judgments as read so far (arrays of equal length, in no particular order) and the tally they
    make (evaluators with judgments only)."""

    ids: np.ndarray
    evaluators: np.ndarray
    vote: np.ndarray  # bool: a vote on a regular pair of the study
    harder: np.ndarray
    a: np.ndarray
    b: np.ndarray
    tally: Tally


_KEPT: OrderedDict[tuple[str, str, int], _Kept] = OrderedDict()
_LOCK = threading.Lock()


def study_votes_forget() -> None:
    """Drop every study's judgments this process keeps."""
    with _LOCK:
        _KEPT.clear()


def study_votes(*, study_id: int, using: str = "default") -> tuple[np.ndarray, np.ndarray]:
    """The study's votes now: ``(harder, easier)``, int64 arrays of question ids, one entry per vote (left or
    right on a regular pair by an evaluator not excluded), in no particular order.

    One query (the tally of the study's evaluators and the judgments above the largest id kept in this
    process); a second one, from id 0, only when the kept and the new judgments do not make the tally.
    """
    key = (using, str(connections[using].settings_dict.get("NAME")), study_id)
    with _LOCK:
        kept = _KEPT.get(key)
    after = int(kept.ids.max()) if kept is not None and kept.ids.size else 0
    tally, excluded, new = _read(using, study_id=study_id, after=after)
    fresh = new if kept is None else _merged(kept, new, tally)
    if fresh is None:
        tally, excluded, fresh = _read(using, study_id=study_id, after=0)
    with _LOCK:
        _KEPT[key] = fresh
        _KEPT.move_to_end(key)
        while len(_KEPT) > STUDIES_KEPT:
            _KEPT.popitem(last=False)
    counted = fresh.vote & ~np.isin(fresh.evaluators, excluded)
    harder, a, b = fresh.harder[counted], fresh.a[counted], fresh.b[counted]
    return harder, np.where(a == harder, b, a)


def _read(using: str, *, study_id: int, after: int) -> tuple[Tally, np.ndarray, _Kept]:
    """The tally now (evaluators with judgments), the excluded evaluators' ids, and the judgments above
    ``after`` (with their own tally)."""
    rows = _TALLY_AND_JUDGMENTS.rows(using, study_id=study_id, after=after)
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=_WIDTH * len(rows))
    table = flat.reshape(-1, _WIDTH)
    evaluators, judgments = table[table[:, 7] == 0], table[table[:, 7] == 1]
    tally = {int(pid): (int(n), int(top), int(total))
             for pid, n, top, total in evaluators[:, [0, 2, 3, 4]].tolist() if n}
    excluded = evaluators[evaluators[:, 1] == 1, 0]
    ids, who = judgments[:, 0].copy(), judgments[:, 1].copy()
    new = _Kept(ids=ids, evaluators=who, vote=(judgments[:, 2] == 1) & (judgments[:, 6] == study_id),
                harder=judgments[:, 3].copy(), a=judgments[:, 4].copy(), b=judgments[:, 5].copy(),
                tally=_tally(ids, who))
    return tally, excluded, new


def _merged(kept: _Kept, new: _Kept, tally: Tally) -> _Kept | None:
    """The kept and the new judgments together, when they make ``tally``; None when they do not."""
    made = dict(kept.tally)
    for pid, (n, top, total) in new.tally.items():
        n0, top0, total0 = made.get(pid, _NONE)
        made[pid] = (n0 + n, max(top0, top), total0 + total)
    if made != tally:
        return None
    if not new.ids.size:
        return kept
    return _Kept(
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
