"""Pairwise "which question is harder?" verdicts and their agreement with people.

A verdict is a small integer code (:class:`Verdict`, also exported as the
module constants ``FIRST``, ``SECOND``, ``TIE``, ``UNDEFINED`` and ``SKIP``):

* ``FIRST`` (0): the first question of the pair is harder;
* ``SECOND`` (1): the second question is harder;
* ``TIE`` (2): a method gives both the same difficulty (within its tie
  tolerance, see :func:`harder_of_pairs`);
* ``UNDEFINED`` (-1): a method has no difficulty for one of the two questions,
  or a human consensus has no winner;
* ``SKIP`` (3): a person chose not to judge the pair (used by
  :mod:`scoring.consensus`; never produced by a method).

Ties and undefined verdicts are counted and reported, never dropped
silently.

Agreement on pairs is orientation-free: which question of a pair is called
"a" is arbitrary, so every chance-corrected statistic on verdicts counts each
pair in both orders (a verdict ``FIRST`` on ``(a, b)`` is also a ``SECOND``
on ``(b, a)``). Chance agreement is then exactly 1/2 and, for two raters
over the pairs both decided, ``kappa = 2 p_o - 1`` (:func:`pair_kappa`;
:func:`with_reversed_pairs` for Krippendorff's alpha and Fleiss' kappa).
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray
from scoring._validation import check_number
from scoring.agreement import KappaResult
from scoring.exact import gap_sign, intended_value

__all__ = [
    "FIRST",
    "SECOND",
    "SKIP",
    "TIE",
    "UNDEFINED",
    "MethodAgreement",
    "Verdict",
    "VerdictCounts",
    "harder_of_pairs",
    "flip_verdicts",
    "merge_ties",
    "method_agreement",
    "pair_kappa",
    "tie_threshold",
    "verdict_counts",
    "with_reversed_pairs",
]


class Verdict(enum.IntEnum):
    """Which question of a pair is harder (see the module docstring)."""

    UNDEFINED = -1
    FIRST = 0
    SECOND = 1
    TIE = 2
    SKIP = 3


UNDEFINED = Verdict.UNDEFINED
FIRST = Verdict.FIRST
SECOND = Verdict.SECOND
TIE = Verdict.TIE
SKIP = Verdict.SKIP

_METHOD_CODES = (int(UNDEFINED), int(FIRST), int(SECOND), int(TIE))
_HUMAN_CODES = (int(UNDEFINED), int(FIRST), int(SECOND), int(TIE), int(SKIP))

REASON_NO_DECIDED_HUMAN_PAIR = "no pair has a human verdict FIRST or SECOND"
REASON_NO_PAIR_DECIDED_BY_BOTH = "no pair has a verdict FIRST or SECOND from both"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class VerdictCounts:
    """How many verdicts of each kind an array holds.

    Attributes
    ----------
    n_first, n_second, n_tie, n_undefined, n_skip : int
        Count of each code.
    n_total : int
        Length of the array (the sum of the five counts).
    """

    n_first: int
    n_second: int
    n_tie: int
    n_undefined: int
    n_skip: int
    n_total: int

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class MethodAgreement:
    """Agreement of a method's verdicts with human verdicts.

    Only pairs with a human verdict ``FIRST`` or ``SECOND`` are scored.

    Attributes
    ----------
    n_pairs : int
        Scored pairs (human verdict ``FIRST`` or ``SECOND``).
    n_agree : int
        Scored pairs where the method gives the human verdict.
    n_ties : int
        Scored pairs where the method says ``TIE``.
    n_undefined : int
        Scored pairs where the method says ``UNDEFINED``.
    n_human_excluded : int
        Pairs left out because the human verdict is not ``FIRST``/``SECOND``
        (no consensus, tie, skip).
    agreement : float or None
        ``n_agree / n_pairs``: method ties and undefined verdicts count as
        misses. This is the headline figure. ``None`` when ``n_pairs == 0``.
    agreement_excluding_ties : float or None
        ``n_agree / (n_pairs - n_ties - n_undefined)``: agreement among the
        pairs the method decided. ``None`` when it decided none.
    kappa : KappaResult
        Orientation-free Cohen's kappa (:func:`pair_kappa`) over the scored
        pairs the method decided: ``2 p_o - 1`` with ``p_e = 1/2``. Method
        ``TIE`` and ``UNDEFINED`` verdicts are left out of kappa (they are
        counted in ``n_ties`` and ``n_undefined``), so ``kappa.n`` is
        ``n_pairs - n_ties - n_undefined`` and ``kappa.p_o`` equals
        ``agreement_excluding_ties``.
    """

    n_pairs: int
    n_agree: int
    n_ties: int
    n_undefined: int
    n_human_excluded: int
    agreement: float | None
    agreement_excluding_ties: float | None
    kappa: KappaResult

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (``kappa`` as a nested dict)."""
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- verdicts


def _check_verdicts(v: ArrayLike, *, name: str, allowed: tuple[int, ...]) -> NDArray[np.int64]:
    arr = np.asarray(v)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (n_pairs,); got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iub":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer verdict codes; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = ~np.isin(arr, allowed)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} has the code {int(arr[i])} at position {i}; "
            f"allowed codes are {sorted(allowed)}"
        )
    return arr


def _check_tolerance(value: object, *, name: str) -> float:
    return check_number(value, name=name, low=0.0, message=f"{name} must be a finite number >= 0; got {{value!r}}")


def tie_threshold(difficulty: ArrayLike, *, tol: float) -> float:
    """The absolute gap at or below which two of these difficulties tie.

    Parameters
    ----------
    difficulty : array-like of shape (n_questions,)
        Difficulty per question; ``NaN`` = undefined (ignored).
    tol : float
        Relative tie tolerance, >= 0 (a method's registry ``tie_tolerance``).

    Returns
    -------
    float
        ``tol * spread``, ``spread`` = max - min of the finite values (0 when
        fewer than two are finite).

    Examples
    --------
    >>> tie_threshold([1.0, 3.0, float("nan")], tol=0.25)
    0.5
    """
    tol = _check_tolerance(tol, name="tol")
    d = np.asarray(difficulty, dtype=np.float64)
    finite = d[np.isfinite(d)]
    if finite.size < 2:
        return 0.0
    return tol * float(finite.max() - finite.min())


def _tie_threshold_exact(d: FloatArray, *, tol: float, atol: float = 0.0) -> Fraction:
    """``max(atol, tol * spread)`` on the intended values (:func:`scoring.exact.intended_value`)."""
    finite = d[np.isfinite(d)]
    spread = (intended_value(float(finite.max())) - intended_value(float(finite.min()))
              if finite.size >= 2 else Fraction(0))
    return max(intended_value(atol), intended_value(tol) * spread)


def harder_of_pairs(
    difficulty: ArrayLike, pairs: ArrayLike, *, tol: float = 0.0, atol: float = 0.0
) -> NDArray[np.int8]:
    """Say which question of each pair a difficulty score calls harder.

    Parameters
    ----------
    difficulty : array-like of shape (n_questions,)
        Difficulty per question, higher = harder (any real scale: EIP
        difficulty, failure counts, IRT b). ``NaN`` = undefined.
    pairs : array-like of int, shape (n_pairs, 2)
        Question indices ``(i, j)``, ``i != j``, into ``difficulty``.
    tol : float, default 0.0
        Relative tie tolerance: ``|d_i - d_j| <= tol * spread`` is a ``TIE``,
        ``spread`` being max - min of the finite values of ``difficulty``
        (all of them, not only those of ``pairs``; see :func:`tie_threshold`).
        Decided in exact arithmetic on the values the floats stand for
        (:func:`scoring.exact.gap_sign`): a gap equal to the threshold is a
        tie whatever the rounding.
        Pass the method's registry ``tie_tolerance`` so that numerical noise
        never decides a verdict. The default calls only exactly equal scores
        a tie. When every finite value is the same (spread 0), every defined
        pair is a tie.
    atol : float, default 0.0
        Absolute tolerance, combined with ``tol``: the tie threshold is
        ``max(atol, tol * spread)``.

    Returns
    -------
    ndarray of int8, shape (n_pairs,)
        ``FIRST`` (0) if ``i`` is harder, ``SECOND`` (1) if ``j`` is harder,
        ``TIE`` (2) if equal within the tolerance, ``UNDEFINED`` (-1) if
        either score is ``NaN``.

    Raises
    ------
    ValueError
        If ``difficulty`` is not one-dimensional or holds an infinite value;
        if ``pairs`` is not of shape (n_pairs, 2), is not integer, has an
        index out of range or a pair of a question with itself; if ``tol`` or
        ``atol`` is negative or not finite.

    Notes
    -----
    The comparison is pairwise, so with a tolerance a tie need not be
    transitive (``a ~ b`` and ``b ~ c`` but not ``a ~ c``). With a tiny
    relative tolerance (1e-9 and below) that happens only for values that
    differ by noise; :func:`merge_ties` gives a transitive version for ranks.

    References
    ----------
    EIP paper, section 3.3 (pairwise human evaluation) and appendix H.3.

    Examples
    --------
    >>> harder_of_pairs([3.0, 1.0, 3.0, float("nan")], [[0, 1], [1, 2], [0, 2], [0, 3]]).tolist()
    [0, 1, 2, -1]
    >>> harder_of_pairs([1.0, 1.0 + 1e-15, 3.0], [[0, 1], [0, 2]], tol=1e-9).tolist()
    [2, 1]
    """
    d = np.asarray(difficulty, dtype=np.float64)
    if d.ndim != 1:
        raise ValueError(f"difficulty must be 1-dimensional (n_questions,); got shape {d.shape}")
    if np.isinf(d).any():
        i = int(np.flatnonzero(np.isinf(d))[0])
        raise ValueError(f"difficulty has an infinite value at question {i}")
    p = np.asarray(pairs)
    if p.size == 0:
        p = p.reshape(0, 2)
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"pairs must have shape (n_pairs, 2); got shape {p.shape}")
    if p.size and p.dtype.kind not in "iu":
        raise ValueError(f"pairs must hold integer question indices; got dtype {p.dtype}")
    p = p.astype(np.int64)
    out_of_range = (p < 0) | (p >= d.shape[0])
    if out_of_range.any():
        r, c = np.argwhere(out_of_range)[0]
        raise ValueError(
            f"pairs has the index {int(p[r, c])} at row {int(r)}; questions are 0..{d.shape[0] - 1}"
        )
    same = p[:, 0] == p[:, 1]
    if same.any():
        r = int(np.flatnonzero(same)[0])
        raise ValueError(f"pairs row {r} pairs question {int(p[r, 0])} with itself")
    threshold = _tie_threshold_exact(d, tol=_check_tolerance(tol, name="tol"),
                                     atol=_check_tolerance(atol, name="atol"))
    return _verdicts(d[p[:, 0]], d[p[:, 1]], threshold)


def _verdicts(di: FloatArray, dj: FloatArray, threshold: float | Fraction) -> NDArray[np.int8]:
    """The kernel of :func:`harder_of_pairs`: ``di``, ``dj`` finite or NaN, ``threshold >= 0``.

    A gap equal to the threshold is a tie, decided exactly (:func:`scoring.exact.gap_sign`).
    """
    out = np.full(di.shape[0], int(UNDEFINED), dtype=np.int8)
    defined = ~(np.isnan(di) | np.isnan(dj))
    first = gap_sign(di, dj, threshold) > 0
    second = gap_sign(dj, di, threshold) > 0
    out[defined & first] = FIRST
    out[defined & second] = SECOND
    out[defined & ~first & ~second] = TIE
    return out


def merge_ties(difficulty: ArrayLike, *, tol: float) -> FloatArray:
    """Give values that tie within a relative tolerance one common value (for ranks).

    Parameters
    ----------
    difficulty : array-like of shape (n_questions,)
        Difficulty per question; ``NaN`` = undefined (kept).
    tol : float
        Relative tie tolerance, as for :func:`harder_of_pairs`.

    Returns
    -------
    ndarray of float64, shape (n_questions,)
        The sorted finite values are cut wherever two neighbours differ by
        more than ``tie_threshold(difficulty, tol=tol)`` (decided exactly, as
        in :func:`harder_of_pairs`); each run between
        cuts takes its smallest value. The order of distinct values is kept,
        so ranks (Spearman, Kendall) computed on the result treat values that
        differ by noise as tied.

    Examples
    --------
    >>> merge_ties([2.0, 1.0 + 1e-15, 1.0, float("nan")], tol=1e-9).tolist()
    [2.0, 1.0, 1.0, nan]
    """
    d = np.array(difficulty, dtype=np.float64)
    if d.ndim != 1:
        raise ValueError(f"difficulty must be 1-dimensional (n_questions,); got shape {d.shape}")
    return _merge_within(d, _tie_threshold_exact(d, tol=_check_tolerance(tol, name="tol")))


def _merge_within(d: FloatArray, threshold: float | Fraction) -> FloatArray:
    """The kernel of :func:`merge_ties` with an absolute ``threshold`` (changes ``d`` in place)."""
    finite = np.flatnonzero(np.isfinite(d))
    if finite.size < 2:
        return d
    order = finite[np.argsort(d[finite], kind="stable")]
    values = d[order]
    run = np.concatenate([[0], np.cumsum(gap_sign(values[1:], values[:-1], threshold) > 0)])
    first_of_run = np.flatnonzero(np.concatenate([[True], np.diff(run) > 0]))
    d[order] = values[first_of_run][run]
    return d


def verdict_counts(verdicts: ArrayLike) -> VerdictCounts:
    """Count each verdict code.

    Parameters
    ----------
    verdicts : array-like of int, shape (n_pairs,)
        Codes ``UNDEFINED``, ``FIRST``, ``SECOND``, ``TIE`` or ``SKIP``.

    Returns
    -------
    VerdictCounts

    Raises
    ------
    ValueError
        If ``verdicts`` is not one-dimensional or holds another code.

    Examples
    --------
    >>> verdict_counts([0, 0, 1, 2, -1]).n_tie
    1
    """
    v = _check_verdicts(verdicts, name="verdicts", allowed=_HUMAN_CODES)
    return VerdictCounts(
        n_first=int((v == FIRST).sum()),
        n_second=int((v == SECOND).sum()),
        n_tie=int((v == TIE).sum()),
        n_undefined=int((v == UNDEFINED).sum()),
        n_skip=int((v == SKIP).sum()),
        n_total=int(v.size),
    )


# --------------------------------------------------------------------------- agreement


def _scored(
    verdicts_method: ArrayLike, verdicts_human: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    m = _check_verdicts(verdicts_method, name="verdicts_method", allowed=_METHOD_CODES)
    h = _check_verdicts(verdicts_human, name="verdicts_human", allowed=_HUMAN_CODES)
    if m.shape != h.shape:
        raise ValueError(
            f"verdicts_method and verdicts_human must have the same length; "
            f"got {m.shape[0]} and {h.shape[0]}"
        )
    keep = (h == FIRST) | (h == SECOND)
    return m[keep], h[keep], int((~keep).sum())


def method_agreement(verdicts_method: ArrayLike, verdicts_human: ArrayLike) -> MethodAgreement:
    """Agreement of a difficulty method with human pairwise verdicts.

    Parameters
    ----------
    verdicts_method : array-like of int, shape (n_pairs,)
        The method's verdicts, as from :func:`harder_of_pairs` (``FIRST``,
        ``SECOND``, ``TIE`` or ``UNDEFINED``).
    verdicts_human : array-like of int, shape (n_pairs,)
        Human verdicts on the same pairs (an evaluator's own or a consensus).
        Pairs whose human verdict is not ``FIRST``/``SECOND`` are not scored
        and are counted in ``n_human_excluded``.

    Returns
    -------
    MethodAgreement

    Raises
    ------
    ValueError
        If the arrays are not one-dimensional, differ in length or hold a
        code not allowed for them.

    Notes
    -----
    The paper does not say how method ties were scored. Here the headline
    ``agreement`` counts a method ``TIE`` or ``UNDEFINED`` on a scored pair as
    a miss (a method that cannot separate two questions has not agreed with
    the person who could), and ``agreement_excluding_ties`` shows the other
    convention. Simple Rank produces many ties (integer failure counts), so
    the two can differ a lot; report both with ``n_ties``.

    References
    ----------
    EIP paper, section 3.3 (Table 2: agreement with each evaluator and with
    the consensus; Cohen's kappa 0.80 for the whole model pool).

    Examples
    --------
    >>> r = method_agreement([0, 1, 2, 0], [0, 1, 0, 1])
    >>> r.agreement, r.agreement_excluding_ties, r.n_ties
    (0.5, 0.6666666666666666, 1)
    """
    m, h, n_excluded = _scored(verdicts_method, verdicts_human)
    n = int(m.size)
    n_agree = int((m == h).sum())
    n_ties = int((m == TIE).sum())
    n_undefined = int((m == UNDEFINED).sum())
    n_decided = n - n_ties - n_undefined
    return MethodAgreement(
        n_pairs=n,
        n_agree=n_agree,
        n_ties=n_ties,
        n_undefined=n_undefined,
        n_human_excluded=n_excluded,
        agreement=n_agree / n if n else None,
        agreement_excluding_ties=n_agree / n_decided if n_decided else None,
        kappa=pair_kappa(m, h),
    )


def flip_verdicts(verdicts: ArrayLike) -> NDArray[np.int64]:
    """The verdicts of the same pairs stored the other way round.

    Parameters
    ----------
    verdicts : array-like of int, any shape
        Verdict codes.

    Returns
    -------
    numpy.ndarray of int64
        ``FIRST`` and ``SECOND`` swapped; ``TIE``, ``UNDEFINED`` and ``SKIP``
        unchanged.

    Raises
    ------
    ValueError
        If ``verdicts`` holds a value that is not a verdict code.

    Examples
    --------
    >>> flip_verdicts([0, 1, 2, -1, 3]).tolist()
    [1, 0, 2, -1, 3]
    """
    v = np.asarray(verdicts)
    if v.size and not np.isin(v, _HUMAN_CODES).all():
        bad = sorted({x for x in v.ravel().tolist() if x not in _HUMAN_CODES})
        raise ValueError(f"verdicts must hold verdict codes {_HUMAN_CODES}; got {bad}")
    v = v.astype(np.int64)
    return np.where(v == FIRST, int(SECOND), np.where(v == SECOND, int(FIRST), v))


def with_reversed_pairs(verdicts: ArrayLike, *, axis: int = -1) -> NDArray[np.int64]:
    """Append every pair again with the other orientation (for orientation-free statistics).

    Parameters
    ----------
    verdicts : array-like of int
        Verdict codes with pairs along ``axis``: e.g. raters x pairs for
        Krippendorff's alpha (``axis=-1``), pairs x raters for Fleiss' kappa
        (``axis=0``).
    axis : int, default -1
        The pair axis.

    Returns
    -------
    numpy.ndarray of int64
        ``verdicts`` followed along ``axis`` by :func:`flip_verdicts` of it:
        twice as many pairs.

    Notes
    -----
    A generic chance-corrected statistic (Krippendorff's alpha, Fleiss'
    kappa) computed on the result does not change when any subset of pairs
    is stored the other way round, and its label marginals are exactly
    1/2 : 1/2 over ``FIRST``/``SECOND``. Missing values (``TIE``,
    ``UNDEFINED``, ``SKIP``) are copied unchanged, so the caller maps them to
    ``None`` afterwards as before.

    Examples
    --------
    >>> with_reversed_pairs([[0, 1], [0, 3]]).tolist()
    [[0, 1, 1, 0], [0, 3, 1, 3]]
    """
    v = np.asarray(verdicts)
    return np.concatenate([v.astype(np.int64), flip_verdicts(v)], axis=axis)


def pair_kappa(verdicts_x: ArrayLike, verdicts_y: ArrayLike) -> KappaResult:
    """Orientation-free Cohen's kappa of two raters' verdicts on the same pairs.

    Parameters
    ----------
    verdicts_x, verdicts_y : array-like of int, shape (n_pairs,)
        Verdict codes (``FIRST``, ``SECOND``, ``TIE``, ``UNDEFINED``,
        ``SKIP``) of two raters (a method, an evaluator, a consensus, a
        label) on the same pairs, each pair stored in the same order for both.

    Returns
    -------
    KappaResult
        Over the ``n`` pairs both decided (``FIRST`` or ``SECOND``):
        ``p_o`` = share on which they agree, ``p_e = 1/2`` and
        ``kappa = 2 p_o - 1``. Undefined (``None`` with a reason) when
        ``n == 0``.

    Raises
    ------
    ValueError
        If the arrays are not one-dimensional, differ in length or hold a
        value that is not a verdict code.

    Notes
    -----
    Which question of a pair is "a" is arbitrary, so each pair is counted in
    both orientations: a verdict ``FIRST`` on ``(a, b)`` is also ``SECOND``
    on ``(b, a)``. Cohen's kappa on the doubled data has both raters'
    marginals exactly 1/2 : 1/2, so ``p_e = 1/2`` and
    ``kappa = (p_o - 1/2) / (1/2) = 2 p_o - 1`` (``p_o`` is the same on the
    doubled data). Reversing any subset of pairs changes nothing. Plain
    Cohen's kappa on one orientation does not have this property: a rater
    who always says ``SECOND`` next to pairs oriented the same way gets
    ``p_e = p_o`` and kappa 0 whatever the agreement.

    Pairs where either verdict is ``TIE``, ``UNDEFINED`` or ``SKIP`` are left
    out of kappa; the caller counts them (e.g. ``MethodAgreement.n_ties``).
    The EIP paper's headline figures (90% agreement with the consensus,
    kappa 0.80) satisfy exactly this relation.

    Examples
    --------
    >>> r = pair_kappa([0, 0, 1, 1, 2], [0, 0, 0, 1, 0])
    >>> r.kappa, r.p_o, r.p_e, r.n
    (0.5, 0.75, 0.5, 4)
    """
    x = _check_verdicts(verdicts_x, name="verdicts_x", allowed=_HUMAN_CODES)
    y = _check_verdicts(verdicts_y, name="verdicts_y", allowed=_HUMAN_CODES)
    if x.shape != y.shape:
        raise ValueError(
            f"verdicts_x and verdicts_y must have the same length; got {x.shape[0]} and {y.shape[0]}"
        )
    both = np.isin(x, (FIRST, SECOND)) & np.isin(y, (FIRST, SECOND))
    n = int(both.sum())
    if n == 0:
        return KappaResult(kappa=None, p_o=None, p_e=None, n=0,
                           undefined_reason=REASON_NO_PAIR_DECIDED_BY_BOTH)
    n_agree = int((x[both] == y[both]).sum())
    return KappaResult(kappa=(2 * n_agree - n) / n, p_o=n_agree / n, p_e=0.5, n=n)


# --------------------------------------------------------------------------- McNemar


