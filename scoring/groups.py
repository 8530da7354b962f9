"""Groups of evaluators (crowd, experts, an LLM judge) against each other and every method.

Each group's verdict on a pair is the majority of its members' votes (skips
are not votes): ``FIRST`` or ``SECOND`` when one side has more votes, ``TIE``
on equal votes, ``UNDEFINED`` when no member voted. Two groups are compared on
the pairs both decided (agreement ``p_o`` and the orientation-free kappa
``2 p_o - 1`` of :func:`scoring.pairs.pair_kappa`); a group and a method as
:func:`scoring.pairs.method_agreement` compares a method with a consensus.
Intervals: percentile bootstrap over the compared pairs
(:func:`scoring.pair_inference.bootstrap_agreement_ci`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring.pair_inference import bootstrap_agreement_ci
from scoring.pairs import FIRST, SECOND, TIE, UNDEFINED, method_agreement, pair_kappa

__all__ = ["GroupComparison", "GroupMethodRow", "GroupPairRow", "compare_groups", "group_verdicts"]

ERR_SHAPE = "groups must have one entry per evaluator (row of human: {n}); got {got}"
REASON_NO_SHARED = "no pair decided by both groups"


@dataclass(frozen=True)
class GroupPairRow:
    """Two groups on the pairs both decided.

    Attributes
    ----------
    group_x, group_y : str
    n : int
        Pairs both groups decided.
    agreement, kappa : float or None
        ``p_o`` and ``2 p_o - 1``; None when ``n == 0``.
    agreement_ci, kappa_ci : tuple of float or None
        Percentile bootstrap intervals over those pairs.
    undefined_reason : str or None
    """

    group_x: str
    group_y: str
    n: int
    agreement: float | None
    kappa: float | None
    agreement_ci: tuple[float, float] | None
    kappa_ci: tuple[float, float] | None
    undefined_reason: str | None


@dataclass(frozen=True)
class GroupMethodRow:
    """A group's majority against a method.

    Attributes
    ----------
    group, method : str
    n : int
        Pairs the group decided.
    agreement : float or None
        Share of them the method orders the same way (method ties as misses).
    kappa : float or None
        Orientation-free kappa over the pairs both decided.
    agreement_ci, kappa_ci : tuple of float or None
    """

    group: str
    method: str
    n: int
    agreement: float | None
    kappa: float | None
    agreement_ci: tuple[float, float] | None
    kappa_ci: tuple[float, float] | None


@dataclass(frozen=True)
class GroupComparison:
    """Every group against every other group and every method.

    Attributes
    ----------
    groups : tuple of str
        Sorted; evaluators without a group are in none.
    n_evaluators, n_votes, n_pairs_decided : tuple of int
        Per group.
    pairs : tuple of GroupPairRow
        Each unordered pair of groups once.
    methods : tuple of GroupMethodRow
        Per group, per method (in the order given).
    """

    groups: tuple[str, ...]
    n_evaluators: tuple[int, ...]
    n_votes: tuple[int, ...]
    n_pairs_decided: tuple[int, ...]
    pairs: tuple[GroupPairRow, ...]
    methods: tuple[GroupMethodRow, ...]


def group_verdicts(human: ArrayLike, members: ArrayLike) -> NDArray[np.int8]:
    """Majority verdict of the evaluators ``members`` on every pair.

    Parameters
    ----------
    human : array-like of int, shape (n_evaluators, n_pairs)
        Verdict codes (``FIRST``, ``SECOND``, ``SKIP``, ``UNDEFINED``).
    members : array-like of bool, shape (n_evaluators,)

    Returns
    -------
    ndarray of int8, shape (n_pairs,)
        ``FIRST``/``SECOND`` by majority of votes, ``TIE`` on equal votes,
        ``UNDEFINED`` without a vote.

    Examples
    --------
    >>> group_verdicts([[0, 1, 0], [0, 0, 3], [1, 1, -1]], [True, True, False]).tolist()
    [0, 2, 0]
    """
    h = np.asarray(human)[np.asarray(members, dtype=bool)]
    first = (h == FIRST).sum(axis=0)
    second = (h == SECOND).sum(axis=0)
    out = np.full(h.shape[1], int(UNDEFINED), dtype=np.int8)
    out[first > second] = FIRST
    out[second > first] = SECOND
    out[(first == second) & (first > 0)] = TIE
    return out


def compare_groups(
    human: ArrayLike,
    groups: Sequence[str],
    method_verdicts: Mapping[str, ArrayLike],
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> GroupComparison:
    """Compare groups of evaluators with each other and with every method.

    Parameters
    ----------
    human : array-like of int, shape (n_evaluators, n_pairs)
        Verdict codes of each evaluator on each pair.
    groups : sequence of str, length n_evaluators
        Each evaluator's group; "" = in no group.
    method_verdicts : mapping of str to array-like of int, shape (n_pairs,)
        Each method's verdict on each pair (:func:`scoring.pairs.harder_of_pairs`).
    n_boot : int, default 2000
        Bootstrap replicates of the intervals (0 = none).
    level : float, default 0.95
    seed : int, default 0

    Returns
    -------
    GroupComparison

    Raises
    ------
    ValueError
        When ``groups`` does not have one entry per evaluator.

    Examples
    --------
    >>> c = compare_groups([[0, 1], [0, 0]], ["crowd", "experts"], {}, n_boot=0)
    >>> c.pairs[0].n, c.pairs[0].agreement, c.pairs[0].kappa
    (2, 0.5, 0.0)
    """
    h = np.asarray(human, dtype=np.int64)
    labels = [str(g) for g in groups]
    if len(labels) != h.shape[0]:
        raise ValueError(ERR_SHAPE.format(n=h.shape[0], got=len(labels)))
    names = tuple(sorted({g for g in labels if g}))
    verdicts = {g: group_verdicts(h, [x == g for x in labels]) for g in names}
    rows = []
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            k = pair_kappa(verdicts[x], verdicts[y])
            a_ci = k_ci = None
            if k.n and n_boot:
                both = np.isin(verdicts[x], (FIRST, SECOND)) & np.isin(verdicts[y], (FIRST, SECOND))
                ci = bootstrap_agreement_ci(verdicts[x][both], verdicts[y][both], n_boot=n_boot, level=level,
                                            rng=seed)
                a_ci, k_ci = ci.agreement, ci.kappa
            rows.append(GroupPairRow(group_x=x, group_y=y, n=k.n, agreement=k.p_o, kappa=k.kappa,
                                     agreement_ci=a_ci, kappa_ci=k_ci,
                                     undefined_reason=None if k.n else REASON_NO_SHARED))
    method_rows = []
    for g in names:
        decided = int(np.isin(verdicts[g], (FIRST, SECOND)).sum())
        for key, v in method_verdicts.items():
            m = method_agreement(v, verdicts[g])
            a_ci = k_ci = None
            if decided and n_boot:
                ci = bootstrap_agreement_ci(v, verdicts[g], n_boot=n_boot, level=level, rng=seed)
                a_ci, k_ci = ci.agreement, ci.kappa
            method_rows.append(GroupMethodRow(group=g, method=key, n=decided, agreement=m.agreement,
                                              kappa=m.kappa.kappa, agreement_ci=a_ci, kappa_ci=k_ci))
    votes = np.isin(h, (FIRST, SECOND))
    return GroupComparison(
        groups=names,
        n_evaluators=tuple(sum(x == g for x in labels) for g in names),
        n_votes=tuple(int(votes[[x == g for x in labels]].sum()) for g in names),
        n_pairs_decided=tuple(int(np.isin(verdicts[g], (FIRST, SECOND)).sum()) for g in names),
        pairs=tuple(rows), methods=tuple(method_rows),
    )
