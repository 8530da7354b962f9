"""Attention-check pairs: same-subject pairs whose harder question is known.

Pure numpy; never imports Django. A study may mix a share of such pairs into
the pairs it serves, blind (an evaluator cannot tell them apart). An attentive
evaluator calls the known harder question harder; the share of checks they
get right is their attention-check pass rate. Checks are left out of every
agreement statistic, since their answer is decided by construction.

The rule
--------
Each question gets a *value*, higher = harder:

* by default its percentile rank in the reference difficulty among all
  eligible questions (``rank / (n - 1)`` in [0, 1], ties at their mean
  rank), so the rule does not depend on the scale of the difficulty;
* when ``label`` is given (an ordinal human label such as MATH's level 1-5),
  the label itself.

Within each subject the questions are sorted by value and the easiest is
paired with the hardest, the second easiest with the second hardest, and so
on inwards: each question is used at most once, and every subject offers its
largest gaps first. A candidate qualifies when its gap is at least
``min_gap`` (default 0.5 of the percentile scale: e.g. a question from the
easiest quarter against one from the hardest quarter; 2 label steps with a
label). The qualifying candidates of all subjects are taken by decreasing gap
(equal gaps in random order); pairs listed in ``exclude`` (the study's regular
pairs) are passed over. The harder question of each check is the one with
the larger value. The test ``gap >= min_gap`` is decided in exact arithmetic
(:mod:`scoring.exact`): a gap equal to ``min_gap`` qualifies whatever the
rounding of the float subtraction.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._validation import as_rng
from scoring.exact import gap_sign, intended_value

__all__ = ["DEFAULT_MIN_LABEL_GAP", "DEFAULT_MIN_RANK_GAP", "AttentionChecks", "TooFewAttentionChecks",
           "attention_check_count", "max_attention_check_share", "select_attention_checks"]

DEFAULT_MIN_RANK_GAP = 0.5
DEFAULT_MIN_LABEL_GAP = 2.0
ERR_SHAPE = "{name} must be 1-dimensional with one entry per question ({n}); got shape {shape}"
ERR_IDS_REPEAT = "question_ids must be distinct"
ERR_N_CHECKS = "n_checks must be a non-negative integer; got {value!r}"
ERR_SHARE = "share must be a number in [0, 0.5]; got {value!r}"
ERR_MIN_GAP = "min_gap must be a finite number > 0; got {value!r}"
ERR_TOO_FEW = (
    "{n_checks} attention checks wanted, but only {n_possible} same-subject pairs of questions are at least "
    "{min_gap:g} apart {scale}; lower the attention-check share"
)
#: How ERR_TOO_FEW names the scale of ``min_gap``, by ``AttentionChecks.by``.
GAP_SCALES = {"difficulty_rank": "on the percentile scale of EIP difficulty (0 = easiest, 1 = hardest)",
              "label": "on the human label's scale"}


class TooFewAttentionChecks(ValueError):
    """Fewer possible attention checks than wanted; ``n_possible`` says how many there are."""

    def __init__(self, message: str, *, n_possible: int) -> None:
        super().__init__(message)
        self.n_possible = n_possible


@dataclass(frozen=True)
class AttentionChecks:
    """The chosen attention-check pairs.

    Attributes
    ----------
    pairs : ndarray of int64, shape (n_checks, 2)
        Question ids ``(easier, harder)`` of each check, largest gaps first.
    expected_harder : ndarray of int64, shape (n_checks,)
        The harder question of each pair (``pairs[:, 1]``).
    gap : ndarray of float64, shape (n_checks,)
        Each check's gap in the value used (percentile rank or label).
    by : str
        ``"difficulty_rank"`` or ``"label"``.
    n_possible : int
        How many qualifying candidates there were (after ``exclude``).
    """

    pairs: NDArray[np.int64]
    expected_harder: NDArray[np.int64]
    gap: NDArray[np.float64]
    by: str
    n_possible: int


def max_attention_check_share(n_pairs: int, n_possible: int, *, step: float = 0.01) -> float:
    """The largest attention-check share that ``n_possible`` checks allow.

    The share is a multiple of ``step`` in [0, 0.5] whose
    :func:`attention_check_count` for ``n_pairs`` is at most ``n_possible``.

    Parameters
    ----------
    n_pairs : int
        Regular pairs, >= 0.
    n_possible : int
        Attention checks that can be drawn, >= 0.
    step : float, default 0.01
        Resolution of the answer.

    Returns
    -------
    float
        0.0 when not even the smallest step fits.

    Examples
    --------
    >>> max_attention_check_share(70, 5)  # round(0.07 * 70 / 0.93) = 5, round(0.08 * 70 / 0.92) = 6
    0.07
    """
    k_max = round(0.5 / step)
    best = 0
    for k in range(k_max + 1):  # the count grows with the share: stop at the first that does not fit
        if attention_check_count(n_pairs, k * step) > n_possible:
            break
        best = k
    return round(best * step, 10)


def attention_check_count(n_pairs: int, share: float) -> int:
    """How many attention checks to add to ``n_pairs`` regular pairs.

    They make up ``share`` of all served pairs:
    ``round(share * n_pairs / (1 - share))`` (Python's ``round``, half to even),
    computed exactly on the share as written (:func:`scoring.exact.intended_value`:
    0.1 is one tenth), so a count that is exactly a half rounds to even.

    Parameters
    ----------
    n_pairs : int
        Regular pairs, >= 0.
    share : float
        Wanted share of checks among all pairs, in [0, 0.5].

    Returns
    -------
    int

    Examples
    --------
    >>> attention_check_count(40, 0.2), attention_check_count(70, 0.0), attention_check_count(3, 0.1)
    (10, 0, 0)
    """
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 0.5:
        raise ValueError(ERR_SHARE.format(value=share))
    exact = intended_value(float(share))
    return round(exact * n_pairs / (1 - exact))


def select_attention_checks(
    question_ids: ArrayLike,
    subjects: ArrayLike,
    difficulty: ArrayLike,
    *,
    n_checks: int,
    eligible: ArrayLike | None = None,
    label: ArrayLike | None = None,
    min_gap: float | None = None,
    exclude: ArrayLike | None = None,
    rng: np.random.Generator | int | None = None,
) -> AttentionChecks:
    """Choose ``n_checks`` same-subject pairs with a large, known difficulty gap.

    Parameters
    ----------
    question_ids : array-like of int, shape (n_questions,)
        Distinct question ids.
    subjects : array-like of shape (n_questions,)
        Subject of each question; a check never mixes subjects.
    difficulty : array-like of float, shape (n_questions,)
        Reference difficulty (the study's scoring run, EIP), higher = harder,
        NaN = unknown (never used). Ignored when ``label`` is given.
    n_checks : int
        Number of checks wanted, >= 0.
    eligible : array-like of bool, shape (n_questions,), optional
        Questions that may be used; default all.
    label : array-like of float, shape (n_questions,), optional
        Ordinal human label, higher = harder, NaN = none. Given, the gap is
        the label gap (see the module docstring).
    min_gap : float, optional
        Smallest gap that qualifies: default :data:`DEFAULT_MIN_RANK_GAP`
        (percentile ranks) or :data:`DEFAULT_MIN_LABEL_GAP` (labels).
    exclude : array-like of int, shape (n_excluded, 2), optional
        Unordered pairs not to choose (the study's regular pairs).
    rng : numpy.random.Generator, int or None
        Breaks ties between equal gaps; the same seed gives the same checks.

    Returns
    -------
    AttentionChecks

    Raises
    ------
    ValueError
        A shape mismatch, repeated ids, a bad ``n_checks`` or ``min_gap``, or
        fewer than ``n_checks`` qualifying pairs (the message says how many).

    Examples
    --------
    >>> c = select_attention_checks([1, 2, 3, 4], ["m"] * 4, [0.1, 0.9, 0.5, 0.4], n_checks=1, rng=0)
    >>> c.pairs.tolist(), c.expected_harder.tolist(), c.gap.tolist()
    ([[1, 2]], [2], [1.0])
    """
    from scipy.stats import rankdata
    ids = np.asarray(question_ids, dtype=np.int64)
    n = ids.size
    if ids.ndim != 1:
        raise ValueError(ERR_SHAPE.format(name="question_ids", n=n, shape=ids.shape))
    if np.unique(ids).size != n:
        raise ValueError(ERR_IDS_REPEAT)
    subj = np.asarray(subjects)
    if subj.shape != (n,):
        raise ValueError(ERR_SHAPE.format(name="subjects", n=n, shape=subj.shape))
    if isinstance(n_checks, bool) or not isinstance(n_checks, int | np.integer) or n_checks < 0:
        raise ValueError(ERR_N_CHECKS.format(value=n_checks))
    by = "difficulty_rank" if label is None else "label"
    raw = np.asarray(difficulty if label is None else label, dtype=np.float64)
    if raw.shape != (n,):
        raise ValueError(ERR_SHAPE.format(name="difficulty" if label is None else "label", n=n, shape=raw.shape))
    ok = np.isfinite(raw)
    if eligible is not None:
        mask = np.asarray(eligible, dtype=bool)
        if mask.shape != (n,):
            raise ValueError(ERR_SHAPE.format(name="eligible", n=n, shape=mask.shape))
        ok &= mask
    if min_gap is None:
        min_gap = DEFAULT_MIN_RANK_GAP if label is None else DEFAULT_MIN_LABEL_GAP
    if isinstance(min_gap, bool) or not np.isfinite(min_gap) or min_gap <= 0:
        raise ValueError(ERR_MIN_GAP.format(value=min_gap))
    generator = as_rng(rng)
    empty = AttentionChecks(np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0), by, 0)

    value = np.full(n, np.nan)
    # The gap test is exact: percentile ranks are (r - 1) / (n - 1) with r a whole or half rank, compared
    # as the fraction (2 r_hi - 2 r_lo) / (2 (n - 1)); a label gap through scoring.exact.gap_sign.
    twice_rank = np.zeros(n, dtype=np.int64)
    scale = 2 * (int(ok.sum()) - 1)
    if ok.sum() >= 2:
        ranks = rankdata(raw[ok])
        twice_rank[ok] = np.rint(2 * ranks).astype(np.int64)
        value[ok] = raw[ok] if label is not None else (ranks - 1) / (ok.sum() - 1)
    gap_min = intended_value(float(min_gap))
    excluded = set()
    if exclude is not None:
        ex = np.asarray(exclude, dtype=np.int64).reshape(-1, 2)
        excluded = {(min(a, b), max(a, b)) for a, b in ex.tolist()}

    easy, hard, gaps = [], [], []
    for s in np.unique(subj[ok]):
        members = np.flatnonzero(ok & (subj == s))
        # Random order first, then a stable sort by value: equal values in random order.
        members = members[generator.permutation(members.size)]
        members = members[np.argsort(value[members], kind="stable")]
        for k in range(members.size // 2):
            lo, hi = members[k], members[members.size - 1 - k]
            gap = value[hi] - value[lo]
            if label is None:
                below = Fraction(int(twice_rank[hi] - twice_rank[lo]), scale) < gap_min
            else:
                below = bool(gap_sign(value[hi], value[lo], gap_min)[()] < 0)
            if below:
                break
            pair = (int(min(ids[lo], ids[hi])), int(max(ids[lo], ids[hi])))
            if pair in excluded:
                continue
            easy.append(ids[lo])
            hard.append(ids[hi])
            gaps.append(gap)
    n_possible = len(gaps)
    if n_checks > n_possible:
        raise TooFewAttentionChecks(ERR_TOO_FEW.format(n_checks=n_checks, n_possible=n_possible, min_gap=min_gap,
                                                       scale=GAP_SCALES[by]), n_possible=n_possible)
    if n_checks == 0:
        return AttentionChecks(empty.pairs, empty.expected_harder, empty.gap, by, n_possible)
    gap_arr = np.asarray(gaps, dtype=np.float64)
    shuffle = generator.permutation(n_possible)
    order = shuffle[np.argsort(-gap_arr[shuffle], kind="stable")][:n_checks]
    pairs = np.column_stack([np.asarray(easy, dtype=np.int64)[order], np.asarray(hard, dtype=np.int64)[order]])
    return AttentionChecks(pairs=pairs, expected_harder=pairs[:, 1].copy(), gap=gap_arr[order], by=by,
                           n_possible=n_possible)
