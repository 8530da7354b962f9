"""Human consensus on "which question is harder?" pairs.

The paper's consensus "aggregates information via majority vote and resolves
near-ties" (section 3.3) without saying how. This module fixes one
deterministic, documented rule:

1. Skips are not votes. A pair with fewer than ``min_votes`` votes has no
   consensus.
2. A strict majority of the votes wins (a one-vote margin is a majority).
3. Only an exact vote tie is a "near-tie" to resolve. With
   ``tie_rule="evaluator_weight"`` each voter on the tied pair is weighted by
   how often they agree with the others elsewhere (see :func:`consensus`),
   and the side with the strictly larger total weight wins. Equal totals
   leave the pair without consensus. With ``tie_rule="none"`` every tie is
   left without consensus.

Weights are exact fractions (:class:`fractions.Fraction`), so comparisons do
not depend on rounding or on the order of the judgments.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._validation import check_positive_int
from scoring.pairs import FIRST, SECOND, SKIP, UNDEFINED, Verdict

__all__ = [
    "ConsensusResult",
    "PairConsensus",
    "consensus",
    "leave_one_out_consensus",
    "leave_one_out_verdicts",
]

METHOD_MAJORITY = "majority"
METHOD_TIE_RESOLVED = "tie_resolved"
METHOD_NO_CONSENSUS = "no_consensus"

REASON_FEW_VOTES = "fewer than min_votes votes"
REASON_TIE_UNRESOLVED = "tie not resolved by weights"
REASON_TIE_RULE_NONE = "vote tie and tie_rule='none'"

TIE_RULES = ("evaluator_weight", "none")

#: Weight of an evaluator who never voted on a pair where the others had a strict majority.
DEFAULT_WEIGHT = Fraction(1, 2)

_VOTE_CODES = (int(FIRST), int(SECOND), int(SKIP))


@dataclass(frozen=True)
class PairConsensus:
    """The consensus on one pair.

    Attributes
    ----------
    pair_id : hashable
    votes_first, votes_second : int
        Votes that the first / second question is harder.
    n_skips : int
        Evaluators who skipped the pair.
    winner : Verdict or None
        ``FIRST`` or ``SECOND``; ``None`` when there is no consensus.
    method : str
        ``"majority"``, ``"tie_resolved"`` or ``"no_consensus"``.
    reason : str or None
        Why there is no consensus (a module ``REASON_*`` constant); ``None``
        otherwise.
    weight_first, weight_second : float or None
        Summed evaluator weights of each side, set only when a vote tie was
        put to the weights.
    tie_weights : tuple of (evaluator_id, Verdict, float)
        Each voter's weight on a tie put to the weights, sorted by evaluator
        id; empty otherwise.
    """

    pair_id: Hashable
    votes_first: int
    votes_second: int
    n_skips: int
    winner: Verdict | None
    method: str
    reason: str | None = None
    weight_first: float | None = None
    weight_second: float | None = None
    tie_weights: tuple[tuple[Hashable, Verdict, float], ...] = ()

    @property
    def verdict(self) -> Verdict:
        """``winner``, or ``UNDEFINED`` when there is no consensus."""
        return UNDEFINED if self.winner is None else self.winner

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (verdicts as ints)."""
        d = dataclasses.asdict(self)
        d["winner"] = None if self.winner is None else int(self.winner)
        d["tie_weights"] = [[e, int(v), w] for e, v, w in self.tie_weights]
        return d


@dataclass(frozen=True)
class ConsensusResult:
    """Consensus for every judged pair.

    Attributes
    ----------
    pairs : tuple of PairConsensus
        One record per pair that has at least one judgment, sorted by pair id
        (numbers, then strings, then other ids by ``repr``).
    tie_rule : str
    min_votes : int
    n_evaluators : int
        Distinct evaluators in the judgments.
    """

    pairs: tuple[PairConsensus, ...]
    tie_rule: str
    min_votes: int
    n_evaluators: int
    _index: dict[Hashable, PairConsensus] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {p.pair_id: p for p in self.pairs})

    def __getitem__(self, pair_id: Hashable) -> PairConsensus:
        """Return the record of ``pair_id``; ``KeyError`` if it was never judged."""
        return self._index[_normalise_id(pair_id)]

    def verdicts(self, pair_ids: Iterable[Hashable]) -> NDArray[np.int8]:
        """Consensus verdicts in the order of ``pair_ids``.

        Parameters
        ----------
        pair_ids : iterable of hashable

        Returns
        -------
        ndarray of int8, shape (n_pairs,)
            ``FIRST``/``SECOND``, or ``UNDEFINED`` for a pair without
            consensus; ready for :func:`scoring.pairs.method_agreement`.

        Raises
        ------
        ValueError
            If a pair id was never judged.
        """
        out = []
        for pid in pair_ids:
            key = _normalise_id(pid)
            if key not in self._index:
                raise ValueError(f"pair_ids has the pair {pid!r}, which has no judgment")
            out.append(int(self._index[key].verdict))
        return np.asarray(out, dtype=np.int8)

    def counts(self) -> dict[str, int]:
        """Number of pairs per ``method``."""
        c = {METHOD_MAJORITY: 0, METHOD_TIE_RESOLVED: 0, METHOD_NO_CONSENSUS: 0}
        for p in self.pairs:
            c[p.method] += 1
        return c


# --------------------------------------------------------------------------- validation


def _normalise_id(x: object) -> Hashable:
    return x.item() if isinstance(x, np.generic) else x


def _id_sort_key(x: Hashable) -> tuple[int, float, str]:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return (0, float(x), "")
    if isinstance(x, str):
        return (1, 0.0, x)
    return (2, 0.0, repr(x))


def _check_judgment_array(judgments: np.ndarray, *, as_list: bool = True) -> list[tuple[Hashable, Hashable, int]]:
    """The checks of :func:`_check_judgments` for an integer array of shape (n, 3), vectorised.

    The same messages for the first offending row. Returns the rows as triples (an empty
    list when ``as_list`` is false: the caller reads the array itself).
    """
    if judgments.ndim != 2 or judgments.shape[1] != 3:
        raise ValueError(f"judgments must be a (n_judgments, 3) array of (pair_id, evaluator_id, verdict); "
                         f"got shape {judgments.shape}")
    bad = np.flatnonzero(~np.isin(judgments[:, 2], _VOTE_CODES))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"judgments[{k}] has the verdict {int(judgments[k, 2])!r}; verdicts must be "
            f"FIRST ({int(FIRST)}), SECOND ({int(SECOND)}) or SKIP ({int(SKIP)})"
        )
    keys = judgments[:, :2]
    if keys.shape[0] > 1:
        order = np.lexsort((keys[:, 1], keys[:, 0]))
        ordered = keys[order]
        same = np.flatnonzero((ordered[1:] == ordered[:-1]).all(axis=1))
        if same.size:
            dup = [(int(p), int(e)) for p, e in ordered[same + 1][:5].tolist()]
            shown = ", ".join(f"(pair {p!r}, evaluator {e!r})" for p, e in dup)
            more = f" and {same.size - 5} more" if same.size > 5 else ""
            raise ValueError(f"judgments has more than one judgment for {shown}{more}")
    return [(p, e, v) for p, e, v in judgments.tolist()] if as_list else []


def _check_judgments(judgments: object) -> list[tuple[Hashable, Hashable, int]]:
    if isinstance(judgments, np.ndarray) and judgments.dtype.kind in "iu":
        return _check_judgment_array(judgments)
    if isinstance(judgments, (str, bytes)) or not isinstance(judgments, Iterable):
        raise ValueError(
            "judgments must be a sequence of (pair_id, evaluator_id, verdict); "
            f"got {judgments!r}"
        )
    clean: list[tuple[Hashable, Hashable, int]] = []
    seen: dict[tuple[Hashable, Hashable], int] = {}
    duplicates: list[tuple[Hashable, Hashable]] = []
    for k, item in enumerate(judgments):
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 3:
            raise ValueError(
                f"judgments[{k}] must be a (pair_id, evaluator_id, verdict) triple; got {item!r}"
            )
        pair_id, evaluator_id, verdict = (_normalise_id(x) for x in item)
        for name, x in (("pair_id", pair_id), ("evaluator_id", evaluator_id)):
            try:
                hash(x)
            except TypeError:
                raise ValueError(f"judgments[{k}] has an unhashable {name} {x!r}") from None
            if x is None:
                raise ValueError(f"judgments[{k}] has {name} None")
        if isinstance(verdict, bool) or not isinstance(verdict, int) or verdict not in _VOTE_CODES:
            raise ValueError(
                f"judgments[{k}] has the verdict {verdict!r}; verdicts must be "
                f"FIRST ({int(FIRST)}), SECOND ({int(SECOND)}) or SKIP ({int(SKIP)})"
            )
        key = (pair_id, evaluator_id)
        if key in seen:
            duplicates.append(key)
        seen[key] = k
        clean.append((pair_id, evaluator_id, int(verdict)))
    if duplicates:
        shown = ", ".join(f"(pair {p!r}, evaluator {e!r})" for p, e in duplicates[:5])
        more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        raise ValueError(f"judgments has more than one judgment for {shown}{more}")
    return clean


# --------------------------------------------------------------------------- consensus


def consensus(
    judgments: Iterable[Sequence[object]], *, min_votes: int = 1, tie_rule: str = "evaluator_weight"
) -> ConsensusResult:
    """Majority-vote consensus per pair, with exact ties resolved by weights.

    Parameters
    ----------
    judgments : iterable of (pair_id, evaluator_id, verdict)
        One judgment per evaluator and pair. Ids are hashable (ints or
        strings); numpy scalars are turned into Python scalars. ``verdict``
        is ``FIRST`` (0), ``SECOND`` (1) or ``SKIP`` (3); skips are not votes.
        An integer array of shape (n_judgments, 3) is checked vectorised
        (the same checks, much faster for large studies).
    min_votes : int, default 1
        Fewest votes (skips excluded) a pair needs to have a consensus.
    tie_rule : {"evaluator_weight", "none"}, default "evaluator_weight"
        How an exact vote tie is resolved (see Notes); ``"none"`` leaves it
        without consensus.

    Returns
    -------
    ConsensusResult
        One :class:`PairConsensus` per judged pair, sorted by pair id. The
        result does not depend on the order of ``judgments``.

    Raises
    ------
    ValueError
        If a judgment is not a triple, has an unhashable or ``None`` id or a
        verdict other than FIRST/SECOND/SKIP; if an evaluator judged a pair
        twice (the message names the pair and evaluator); if ``min_votes`` is
        not an integer >= 1 or ``tie_rule`` is unknown.

    Notes
    -----
    Evaluator weight (leave-the-pair-out, leave-the-evaluator-out). For a
    tied pair ``p`` and an evaluator ``e`` who voted on it, look at every
    other pair ``q != p`` on which ``e`` voted and on which the *other*
    evaluators' votes have a strict majority (at least one vote, more on one
    side). Then

    ``w_e(p) = (# such q where e voted with that majority) / (# such q)``,

    and ``w_e(p) = 1/2`` when there is no such ``q``. Pairs below
    ``min_votes`` still count here. On an exact vote tie the side whose
    voters' weights sum strictly higher wins (``method="tie_resolved"``);
    equal sums (compared exactly, as fractions) leave the pair without
    consensus. Only exact ties are resolved: a one-vote margin is already a
    majority, as a majority vote means.

    References
    ----------
    EIP paper, section 3.3 ("Consensus" column of Table 2) and appendix H.3
    (evaluators may skip questions outside their expertise).

    Examples
    --------
    >>> r = consensus([(1, "a", 0), (1, "b", 0), (1, "c", 1), (2, "a", 3)])
    >>> r[1].winner == FIRST, r[1].method, r[2].reason
    (True, 'majority', 'fewer than min_votes votes')
    """
    min_votes = check_positive_int(min_votes, name="min_votes")
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}; got {tie_rule!r}")
    if isinstance(judgments, np.ndarray) and judgments.dtype.kind in "iu":
        _check_judgment_array(judgments, as_list=False)
        return _consensus_array_kernel(judgments, min_votes=min_votes, tie_rule=tie_rule)
    clean = _check_judgments(judgments)
    return _consensus_kernel(clean, min_votes=min_votes, tie_rule=tie_rule)


def _consensus_kernel(
    judgments: list[tuple[Hashable, Hashable, int]], *, min_votes: int, tie_rule: str
) -> ConsensusResult:
    votes: dict[Hashable, dict[Hashable, int]] = defaultdict(dict)  # pair -> evaluator -> verdict
    for pair_id, evaluator_id, verdict in judgments:
        votes[pair_id][evaluator_id] = verdict
    tally = {
        p: (
            sum(v == FIRST for v in ev.values()),
            sum(v == SECOND for v in ev.values()),
            sum(v == SKIP for v in ev.values()),
        )
        for p, ev in votes.items()
    }

    # informative[e][p] = 1 if e voted with the others' strict majority on p, 0 if against;
    # absent when e skipped p or the others have no strict majority there.
    informative: dict[Hashable, dict[Hashable, int]] = defaultdict(dict)
    for p, ev in votes.items():
        f, s, _ = tally[p]
        for e, v in ev.items():
            if v == SKIP:
                continue
            of, os_ = f - (v == FIRST), s - (v == SECOND)
            if of != os_:
                majority = FIRST if of > os_ else SECOND
                informative[e][p] = int(v == majority)
    totals = {e: (sum(d.values()), len(d)) for e, d in informative.items()}

    def weight(e: Hashable, p: Hashable) -> Fraction:
        agree, count = totals.get(e, (0, 0))
        if p in informative.get(e, {}):
            agree -= informative[e][p]
            count -= 1
        return Fraction(agree, count) if count else DEFAULT_WEIGHT

    records: list[PairConsensus] = []
    for p in sorted(votes, key=_id_sort_key):
        f, s, k = tally[p]
        winner: Verdict | None = None
        reason: str | None = None
        weight_first: float | None = None
        weight_second: float | None = None
        tie_weights: tuple[tuple[Hashable, Verdict, float], ...] = ()
        if f + s < min_votes:
            method, reason = METHOD_NO_CONSENSUS, REASON_FEW_VOTES
        elif f != s:
            winner, method = (FIRST if f > s else SECOND), METHOD_MAJORITY
        elif tie_rule == "none":
            method, reason = METHOD_NO_CONSENSUS, REASON_TIE_RULE_NONE
        else:
            voters = sorted(((e, v) for e, v in votes[p].items() if v != SKIP),
                            key=lambda ev: _id_sort_key(ev[0]))
            w = [(e, Verdict(v), weight(e, p)) for e, v in voters]
            wf = sum((x for _, v, x in w if v == FIRST), Fraction(0))
            ws = sum((x for _, v, x in w if v == SECOND), Fraction(0))
            weight_first, weight_second = float(wf), float(ws)
            tie_weights = tuple((e, v, float(x)) for e, v, x in w)
            if wf == ws:
                method, reason = METHOD_NO_CONSENSUS, REASON_TIE_UNRESOLVED
            else:
                winner, method = (FIRST if wf > ws else SECOND), METHOD_TIE_RESOLVED
        records.append(PairConsensus(
            pair_id=p, votes_first=f, votes_second=s, n_skips=k, winner=winner, method=method,
            reason=reason, weight_first=weight_first, weight_second=weight_second, tie_weights=tie_weights,
        ))
    n_evaluators = len({e for ev in votes.values() for e in ev})
    return ConsensusResult(pairs=tuple(records), tie_rule=tie_rule, min_votes=min_votes,
                           n_evaluators=n_evaluators)


def _consensus_array_kernel(judgments: np.ndarray, *, min_votes: int, tie_rule: str) -> ConsensusResult:
    """:func:`_consensus_kernel` of a checked (n, 3) integer array, with array operations.

    The same records: counts, majorities and the informative/agreeing flags
    are array sums over the judgments; only the voters of a tied pair are
    weighed in Python, as exact fractions (the floats reported are those of
    the exact sums, as in the per-judgment kernel).
    """
    j = np.asarray(judgments, dtype=np.int64)
    pair_ids, p_idx = np.unique(j[:, 0], return_inverse=True)
    eval_ids, e_idx = np.unique(j[:, 1], return_inverse=True)
    p_idx, e_idx = p_idx.reshape(-1), e_idx.reshape(-1)
    n_p, n_e = pair_ids.size, eval_ids.size
    is_f, is_s = j[:, 2] == int(FIRST), j[:, 2] == int(SECOND)
    f = np.bincount(p_idx, weights=is_f, minlength=n_p).astype(np.int64)
    s = np.bincount(p_idx, weights=is_s, minlength=n_p).astype(np.int64)
    k = np.bincount(p_idx, weights=j[:, 2] == int(SKIP), minlength=n_p).astype(np.int64)
    enough = (f + s) >= min_votes
    tied = enough & (f == s)
    if tie_rule == "evaluator_weight" and tied.any():
        # others' strict majority on each voted judgment (the voter's own vote taken out)
        of, os_ = f[p_idx] - is_f, s[p_idx] - is_s
        informative = (is_f | is_s) & (of != os_)
        agree = informative & ((is_f & (of > os_)) | (is_s & (os_ > of)))
        n_inf = np.bincount(e_idx, weights=informative, minlength=n_e).astype(np.int64)
        n_agree = np.bincount(e_idx, weights=agree, minlength=n_e).astype(np.int64)
        on_tie = np.flatnonzero(tied[p_idx] & (is_f | is_s))
        on_tie = on_tie[np.lexsort((e_idx[on_tie], p_idx[on_tie]))]  # by pair, then evaluator id
        num = (n_agree[e_idx[on_tie]] - agree[on_tie]).tolist()
        den = (n_inf[e_idx[on_tie]] - informative[on_tie]).tolist()
        tie_rows: Iterable[tuple[Any, Any, Any, Any, Any]] = zip(
            p_idx[on_tie].tolist(), eval_ids[e_idx[on_tie]].tolist(), is_f[on_tie].tolist(), num, den, strict=True)
    else:
        tie_rows = ()
    ties: dict[int, list[tuple[Hashable, Verdict, Fraction]]] = defaultdict(list)
    for p, e, first, a, c in tie_rows:
        ties[p].append((e, FIRST if first else SECOND, Fraction(a, c) if c else DEFAULT_WEIGHT))
    records: list[PairConsensus] = []
    for p, (pid, nf, ns, nk, ok) in enumerate(zip(pair_ids.tolist(), f.tolist(), s.tolist(), k.tolist(),
                                                   enough.tolist(), strict=True)):
        if not ok:
            records.append(PairConsensus(pid, nf, ns, nk, None, METHOD_NO_CONSENSUS, REASON_FEW_VOTES))
        elif nf != ns:
            records.append(PairConsensus(pid, nf, ns, nk, FIRST if nf > ns else SECOND, METHOD_MAJORITY))
        elif tie_rule == "none":
            records.append(PairConsensus(pid, nf, ns, nk, None, METHOD_NO_CONSENSUS, REASON_TIE_RULE_NONE))
        else:
            w = ties[p]
            wf = sum((x for _, v, x in w if v == FIRST), Fraction(0))
            ws = sum((x for _, v, x in w if v == SECOND), Fraction(0))
            winner = None if wf == ws else (FIRST if wf > ws else SECOND)
            records.append(PairConsensus(
                pid, nf, ns, nk, winner, METHOD_NO_CONSENSUS if winner is None else METHOD_TIE_RESOLVED,
                REASON_TIE_UNRESOLVED if winner is None else None, float(wf), float(ws),
                tuple((e, v, float(x)) for e, v, x in w),
            ))
    return ConsensusResult(pairs=tuple(records), tie_rule=tie_rule, min_votes=min_votes, n_evaluators=n_e)


def leave_one_out_consensus(
    judgments: Iterable[Sequence[object]],
    evaluator: Hashable,
    *,
    min_votes: int = 1,
    tie_rule: str = "evaluator_weight",
) -> ConsensusResult:
    """The consensus of every evaluator except ``evaluator``.

    Use it to compare one evaluator with the others without letting their own
    votes count.

    Parameters
    ----------
    judgments : iterable of (pair_id, evaluator_id, verdict)
        As for :func:`consensus`.
    evaluator : hashable
        The evaluator to leave out; must occur in ``judgments``.
    min_votes : int, default 1
        As for :func:`consensus`.
    tie_rule : {"evaluator_weight", "none"}, default "evaluator_weight"
        As for :func:`consensus`.

    Returns
    -------
    ConsensusResult
        Pairs judged only by ``evaluator`` do not appear.

    Raises
    ------
    ValueError
        If ``evaluator`` has no judgment, or as :func:`consensus`.

    References
    ----------
    EIP paper, section 3.3 (Table 2, per-evaluator alignment).

    Examples
    --------
    >>> r = leave_one_out_consensus([(1, "a", 0), (1, "b", 1), (1, "c", 1)], "c")
    >>> r[1].votes_first, r[1].votes_second, r[1].reason
    (1, 1, 'tie not resolved by weights')
    """
    clean = _check_judgments(judgments)
    evaluator = _normalise_id(evaluator)
    if not any(e == evaluator for _, e, _ in clean):
        raise ValueError(f"evaluator {evaluator!r} has no judgment in judgments")
    return consensus([j for j in clean if j[1] != evaluator], min_votes=min_votes, tie_rule=tie_rule)


def leave_one_out_verdicts(
    human: ArrayLike, *, min_votes: int = 1, tie_rule: str = "evaluator_weight"
) -> NDArray[np.int8]:
    """Every evaluator's leave-one-out consensus verdicts at once, vectorised.

    Row ``i`` equals ``leave_one_out_consensus(judgments, evaluator_i).verdicts``
    over all pairs (with ``UNDEFINED`` for a pair no other evaluator judged),
    where ``judgments`` are the cells of ``human``; the rule is exactly that
    of :func:`consensus` (ties resolved by exact fractions), only computed
    with array operations over the (evaluator, pair) matrix instead of one
    Python pass over the judgments per evaluator.

    Parameters
    ----------
    human : array-like of int, shape (n_evaluators, n_pairs)
        ``FIRST`` (0), ``SECOND`` (1), ``SKIP`` (3), or ``UNDEFINED`` (-1)
        where the evaluator has no judgment on the pair.
    min_votes : int, default 1
        As for :func:`consensus`.
    tie_rule : {"evaluator_weight", "none"}, default "evaluator_weight"
        As for :func:`consensus`.

    Returns
    -------
    ndarray of int8, shape (n_evaluators, n_pairs)
        ``FIRST``/``SECOND``, or ``UNDEFINED`` where the others have no
        consensus (or no judgment).

    Raises
    ------
    ValueError
        If ``human`` is not a 2-D integer array of those codes, or as
        :func:`consensus` for ``min_votes`` and ``tie_rule``.

    Notes
    -----
    For evaluator ``x`` left out, the others' vote counts are the column
    counts minus ``x``'s own vote. An exact tie is put to the weights of
    :func:`consensus`, computed among the others: for a voter ``e`` and a
    pair ``q``, ``e`` is informative on ``q`` when the votes of everyone but
    ``e`` and ``x`` have a strict majority there. The per-voter totals are
    array sums; only the voters on tied pairs are summed as exact
    fractions in Python. Cost: ``O(n_evaluators^2 * n_pairs)`` array work,
    against ``O(n_evaluators * n_judgments)`` Python steps before.

    References
    ----------
    EIP paper, section 3.3 (Table 2, per-evaluator alignment).

    Examples
    --------
    >>> leave_one_out_verdicts([[0], [1], [1]])[2].tolist()
    [-1]
    """
    min_votes = check_positive_int(min_votes, name="min_votes")
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}; got {tie_rule!r}")
    h = np.asarray(human)
    if h.ndim != 2 or (h.size and not np.issubdtype(h.dtype, np.integer)):
        raise ValueError(f"human must be a 2-D integer array (evaluators x pairs); got shape {h.shape}, "
                         f"dtype {h.dtype}")
    bad = ~np.isin(h, (int(FIRST), int(SECOND), int(SKIP), int(UNDEFINED)))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"human[{i}, {j}] is {int(h[i, j])}; codes must be FIRST (0), SECOND (1), SKIP (3) "
                         "or UNDEFINED (-1)")
    return _loo_kernel(h.astype(np.int8, copy=False), min_votes=min_votes, tie_rule=tie_rule)


def _loo_kernel(h: NDArray[np.int8], *, min_votes: int, tie_rule: str) -> NDArray[np.int8]:
    n_e, n_p = h.shape
    first = (h == FIRST).astype(np.int64)
    second = (h == SECOND).astype(np.int64)
    voted = (first + second).astype(bool)
    f_all, s_all = first.sum(axis=0), second.sum(axis=0)
    out = np.full((n_e, n_p), int(UNDEFINED), dtype=np.int8)
    for x in range(n_e):
        f, s = f_all - first[x], s_all - second[x]
        enough = (f + s) >= min_votes
        row = np.where(f > s, int(FIRST), int(SECOND)).astype(np.int8)
        row[~enough | (f == s)] = int(UNDEFINED)
        out[x] = row
        if tie_rule == "none":
            continue
        tied = np.flatnonzero(enough & (f == s))
        if tied.size == 0:
            continue
        # Others than x: for voter e != x on q, the votes of everyone but e and x.
        of, os_ = f[None, :] - first, s[None, :] - second  # (n_e, n_p)
        informative = voted & (of != os_)
        informative[x] = False
        agree = informative & (((first == 1) & (of > os_)) | ((second == 1) & (os_ > of)))
        n_inf, n_agree = informative.sum(axis=1), agree.sum(axis=1)
        # each voter's weight as a float; a tie whose two sums are too close to call in floats
        # (relative gap <= 1e-9, far above the rounding of a sum of n_e correctly rounded ratios)
        # is weighed again exactly below
        den = n_inf[:, None] - informative[:, tied]
        approx = np.where(den > 0, (n_agree[:, None] - agree[:, tied]) / np.maximum(den, 1), float(DEFAULT_WEIGHT))
        approx[x] = 0.0
        wf_t, ws_t = (approx * first[:, tied]).sum(axis=0), (approx * second[:, tied]).sum(axis=0)
        sure = np.abs(wf_t - ws_t) > 1e-9 * (wf_t + ws_t)
        out[x, tied[sure]] = np.where(wf_t[sure] > ws_t[sure], int(FIRST), int(SECOND))
        for p in tied[~sure]:
            voters = np.flatnonzero(voted[:, p])
            wf, ws = Fraction(0), Fraction(0)
            for e in voters:
                if e == x:
                    continue
                a = int(n_agree[e]) - int(agree[e, p])
                c = int(n_inf[e]) - int(informative[e, p])
                w = Fraction(a, c) if c else DEFAULT_WEIGHT
                if first[e, p]:
                    wf += w
                else:
                    ws += w
            if wf != ws:
                out[x, p] = int(FIRST) if wf > ws else int(SECOND)
    return out
