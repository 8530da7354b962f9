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
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray
from scoring._validation import as_rng, check_in_open_interval, check_positive_int
from scoring.agreement import KappaResult
from scoring.exact import gap_sign, intended_value

__all__ = [
    "FIRST",
    "SECOND",
    "SKIP",
    "TIE",
    "UNDEFINED",
    "AgreementCI",
    "McNemarResult",
    "MethodAgreement",
    "Verdict",
    "VerdictCounts",
    "bootstrap_agreement_ci",
    "paired_bootstrap_agreement_cis",
    "harder_of_pairs",
    "flip_verdicts",
    "mcnemar_exact",
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


@dataclass(frozen=True)
class AgreementCI:
    """Percentile bootstrap intervals for :func:`method_agreement`.

    Attributes
    ----------
    agreement : tuple of float
        ``(low, high)`` for ``agreement`` (ties count as misses).
    kappa : tuple of float, or None
        ``(low, high)`` for Cohen's kappa over the replicates where it is
        defined; ``None`` if it is undefined in every replicate.
    level : float
        Coverage, e.g. 0.95.
    n_boot : int
        Replicates drawn.
    n_kappa_undefined : int
        Replicates left out of the kappa interval because kappa was undefined
        there (``p_e = 1``: all resampled pairs on one side).
    """

    agreement: tuple[float, float]
    kappa: tuple[float, float] | None
    level: float
    n_boot: int
    n_kappa_undefined: int


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test of two paired binary outcomes.

    Attributes
    ----------
    b : int
        Pairs where only ``a`` is correct.
    c : int
        Pairs where only ``b`` is correct.
    n_discordant : int
        ``b + c``.
    n : int
        Paired outcomes used (after dropping missing ones).
    statistic : int
        ``min(b, c)``, as in ``statsmodels`` (exact test).
    p_value : float
        Two-sided exact binomial p-value of ``b`` out of ``b + c`` under
        success probability 1/2; 1.0 when there is no discordant pair.
    """

    b: int
    c: int
    n_discordant: int
    n: int
    statistic: int
    p_value: float


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
    try:
        tol = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {value!r}") from None
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return tol


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


#: Resample indices held at once by :func:`bootstrap_agreement_ci` (32 MiB of int64).
BOOT_CHUNK_CELLS = 1 << 22
#: :func:`paired_bootstrap_agreement_cis` counts draws per pair (one pass for every method) from this many
#: methods on; fewer gather each method's codes (figures: docs/measurements.md).
_COUNT_FROM = 3
ERR_SEED = "seed must be an integer >= 0; got {value!r}"


def bootstrap_agreement_ci(
    verdicts_method: ArrayLike,
    verdicts_human: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator | int | None = 0,
) -> AgreementCI:
    """Percentile bootstrap intervals for agreement and Cohen's kappa.

    Parameters
    ----------
    verdicts_method, verdicts_human : array-like of int, shape (n_pairs,)
        As for :func:`method_agreement`.
    n_boot : int, default 2000
        Bootstrap replicates.
    level : float, default 0.95
        Coverage in (0, 1).
    rng : numpy.random.Generator, int or None, default 0
        Source of randomness; the default seed makes reports reproducible.

    Returns
    -------
    AgreementCI
        ``(low, high)`` = the ``(1 - level) / 2`` and ``(1 + level) / 2``
        quantiles (numpy's default linear interpolation) of the replicates.

    Raises
    ------
    ValueError
        As :func:`method_agreement`; also if no pair has a human verdict
        ``FIRST``/``SECOND``, or ``n_boot``, ``level`` or ``rng`` is invalid.

    Notes
    -----
    The ``n`` scored pairs (human ``FIRST``/``SECOND``) are resampled with
    replacement: replicate ``r`` uses the pairs
    ``rng.integers(0, n, size=(n_boot, n))[r]``, drawn in blocks of rows of
    about :data:`BOOT_CHUNK_CELLS` indices (the same numbers, a bounded
    memory). Agreement counts method ties
    as misses, as in :func:`method_agreement`. Kappa is the orientation-free
    :func:`pair_kappa` over the replicate's pairs the method decided
    (``2 p_o - 1``); it is undefined in a replicate where the method decided
    none of the resampled pairs, and such replicates are left out of the
    kappa interval and counted in ``n_kappa_undefined``.

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap,
    chapter 13 (percentile intervals). EIP paper, section 3.3.

    Examples
    --------
    >>> ci = bootstrap_agreement_ci([0, 1, 0, 1, 2], [0, 1, 1, 1, 0], n_boot=200)
    >>> ci.agreement[0] <= 0.6 <= ci.agreement[1]
    True
    """
    n_boot = check_positive_int(n_boot, name="n_boot")
    level = check_in_open_interval(level, name="level", low=0.0, high=1.0)
    gen = as_rng(rng)
    m, h, _ = _scored(verdicts_method, verdicts_human)
    if m.size == 0:
        raise ValueError(f"cannot bootstrap: {REASON_NO_DECIDED_HUMAN_PAIR}")
    return _bootstrap_cis([_bootstrap_codes(m, h)], n_boot=n_boot, level=level, gen=gen)[0]


def paired_bootstrap_agreement_cis(
    verdicts_methods: Sequence[ArrayLike],
    verdicts_human: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> list[AgreementCI]:
    """:func:`bootstrap_agreement_ci` of several methods against the same human verdicts, drawn once.

    Parameters
    ----------
    verdicts_methods : sequence of array-like of int, each shape (n_pairs,)
        Each method's verdicts (as for :func:`method_agreement`).
    verdicts_human : array-like of int, shape (n_pairs,)
    n_boot : int, default 2000
    level : float, default 0.95
    seed : int, default 0
        Seed (>= 0) of the resampling.

    Returns
    -------
    list of AgreementCI
        One per method, equal to ``bootstrap_agreement_ci(v, verdicts_human,
        n_boot=n_boot, level=level, rng=seed)``: every method's replicate
        ``r`` resamples the same pairs (a paired bootstrap), so the indices
        are drawn once and scored for every method (one draw instead of one
        per method).

    Raises
    ------
    ValueError
        As :func:`bootstrap_agreement_ci`; also if ``seed`` is not an integer >= 0.

    Examples
    --------
    >>> a, b = paired_bootstrap_agreement_cis([[0, 1, 0], [1, 1, 0]], [0, 1, 1], n_boot=100, seed=3)
    >>> a == bootstrap_agreement_ci([0, 1, 0], [0, 1, 1], n_boot=100, rng=3)
    True
    """
    n_boot = check_positive_int(n_boot, name="n_boot")
    level = check_in_open_interval(level, name="level", low=0.0, high=1.0)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(ERR_SEED.format(value=seed))
    codes = []
    for v in verdicts_methods:
        m, h, _ = _scored(v, verdicts_human)
        if m.size == 0:
            raise ValueError(f"cannot bootstrap: {REASON_NO_DECIDED_HUMAN_PAIR}")
        codes.append(_bootstrap_codes(m, h))
    if not codes:
        return []
    return _bootstrap_cis(codes, n_boot=n_boot, level=level, gen=np.random.default_rng(int(seed)))


def _bootstrap_cis(codes: list[NDArray[np.int64]], *, n_boot: int, level: float,
                   gen: np.random.Generator) -> list[AgreementCI]:
    """Intervals of every ``codes`` (equal lengths n) from one set of resampled indices.

    Replicates are drawn and scored a block of rows at a time (memory ~ BOOT_CHUNK_CELLS, not n_boot x n);
    row-wise blocks consume the generator exactly as the whole (n_boot, n) matrix would.
    """
    n = int(codes[0].size)
    rows = max(1, BOOT_CHUNK_CELLS // n)
    agreement = np.empty((len(codes), n_boot))
    kappa = np.empty((len(codes), n_boot))
    # With several methods, a pair's 0/1 fields (decided, agree per method) take few distinct patterns:
    # count how often each pattern is drawn in a row (one gather and one small bincount), then every
    # method's two counts are one product of those counts with the patterns (exact: whole numbers <= n);
    # with one or two methods, gather the codes.
    fields = None
    if len(codes) >= _COUNT_FROM:
        fields = np.column_stack([np.column_stack([c & (_AGREE_UNIT - 1), c >> np.int64(32)]) for c in codes])
        fields, pattern = np.unique(fields, axis=0, return_inverse=True)
        fields = fields.astype(np.float64)
        pattern = pattern.reshape(-1).astype(np.int64)
        n_patterns = fields.shape[0]
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = gen.integers(0, n, size=(stop - start, n))
        if fields is None:
            for k, code in enumerate(codes):
                agreement[k, start:stop], kappa[k, start:stop] = _bootstrap_rows(code, idx)
            continue
        offsets = (np.arange(stop - start, dtype=np.int64) * n_patterns)[:, None]
        drawn = np.bincount((pattern[idx] + offsets).ravel(), minlength=(stop - start) * n_patterns)
        sums = drawn.reshape(stop - start, n_patterns).astype(np.float64) @ fields
        for k in range(len(codes)):
            n_decided, n_agree = sums[:, 2 * k], sums[:, 2 * k + 1]
            agreement[k, start:stop] = n_agree / n
            with np.errstate(divide="ignore", invalid="ignore"):
                kappa[k, start:stop] = np.where(n_decided == 0, np.nan, (2 * n_agree - n_decided) / n_decided)
    q = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    out = []
    for k in range(len(codes)):
        a_lo, a_hi = np.quantile(agreement[k], q)
        defined = ~np.isnan(kappa[k])
        kappa_ci = None
        if defined.any():
            k_lo, k_hi = np.quantile(kappa[k][defined], q)
            kappa_ci = (float(k_lo), float(k_hi))
        out.append(AgreementCI(
            agreement=(float(a_lo), float(a_hi)),
            kappa=kappa_ci,
            level=level,
            n_boot=n_boot,
            n_kappa_undefined=int((~defined).sum()),
        ))
    return out


_AGREE_UNIT = np.int64(1) << np.int64(32)


def _bootstrap_codes(m: NDArray[np.int64], h: NDArray[np.int64]) -> NDArray[np.int64]:
    """Per scored pair, ``decided + agree * 2**32``.

    decided: the method said FIRST/SECOND; agree: it said what the human said;
    so one sum over a replicate's pairs gives both counts (n < 2**32).
    """
    decided = (m == FIRST) | (m == SECOND)
    agree = decided & (m == h)
    codes: NDArray[np.int64] = decided.astype(np.int64) + agree.astype(np.int64) * _AGREE_UNIT
    return codes


def _bootstrap_rows(code: NDArray[np.int64], idx: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    """Agreement and kappa of each row of ``idx``.

    The counts of :func:`_bootstrap_kernel`, from one gather and one row sum.
    """
    total = code[idx].sum(axis=1)
    n_agree = total >> np.int64(32)
    n_decided = total & (_AGREE_UNIT - 1)
    agreement = n_agree / idx.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(n_decided == 0, np.nan, (2 * n_agree - n_decided) / n_decided)
    return agreement, kappa


def _bootstrap_kernel(
    m: NDArray[np.int64], h: NDArray[np.int64], idx: NDArray[np.int64]
) -> tuple[FloatArray, FloatArray]:
    """Agreement and kappa for each row of resample indices ``idx`` (n_boot, n).

    ``h`` holds only FIRST/SECOND; ``m`` holds UNDEFINED/FIRST/SECOND/TIE.
    Kappa is the orientation-free ``2 p_o - 1`` over the pairs the method
    decided; NaN in a replicate where the method decided none.
    """
    n_boot, n = idx.shape
    # 2 human labels x 4 method labels -> cell code in 0..7; method code + 1 maps -1..2 to 0..3.
    cell = h[idx] * 4 + (m[idx] + 1)
    offsets = (np.arange(n_boot) * 8)[:, None]
    table = np.bincount((cell + offsets).ravel(), minlength=8 * n_boot).reshape(n_boot, 2, 4)
    # agree: human FIRST & method FIRST (cell 0*4 + 1), human SECOND & method SECOND (1*4 + 2)
    n_agree = table[:, 0, 1] + table[:, 1, 2]
    method = table.sum(axis=1)  # (n_boot, 4): UNDEFINED, FIRST, SECOND, TIE
    n_decided = method[:, 1] + method[:, 2]
    agreement = n_agree / n
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(n_decided == 0, np.nan, (2 * n_agree - n_decided) / n_decided)
    return agreement, kappa


# --------------------------------------------------------------------------- McNemar


def _check_binary(x: ArrayLike, *, name: str) -> FloatArray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (n_pairs,); got shape {arr.shape}")
    if arr.dtype == object:
        try:
            arr = np.array([np.nan if v is None else v for v in arr], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold 0/1 outcomes; got non-numeric values") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold 0/1 outcomes; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    bad = ~(np.isnan(arr) | (arr == 0) | (arr == 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} has the value {float(arr[i])!r} at position {i}; outcomes must be 0 or 1"
        )
    return arr


def mcnemar_exact(correct_a: ArrayLike, correct_b: ArrayLike) -> McNemarResult:
    """Exact McNemar test: do two methods succeed on different pairs?

    Parameters
    ----------
    correct_a, correct_b : array-like of shape (n_pairs,)
        Paired outcomes, 1/True = correct; ``NaN``/``None`` = missing (the
        pair is dropped).

    Returns
    -------
    McNemarResult
        ``b`` = only ``a`` correct, ``c`` = only ``b`` correct, and the
        two-sided exact binomial p-value of ``b`` in ``b + c`` trials with
        probability 1/2 (``scipy.stats.binomtest``).

    Raises
    ------
    ValueError
        If the inputs are not one-dimensional, differ in length or hold a
        value other than 0, 1 or missing.

    Notes
    -----
    Concordant pairs carry no information. With no discordant pair the
    p-value is 1.0 (no evidence of a difference), as in ``statsmodels``.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12(2), 153-157.

    Examples
    --------
    >>> r = mcnemar_exact([1, 1, 1, 0], [0, 0, 1, 0])
    >>> r.b, r.c, r.p_value
    (2, 0, 0.5)
    """
    from scipy.stats import binomtest
    a = _check_binary(correct_a, name="correct_a")
    b = _check_binary(correct_b, name="correct_b")
    if a.shape != b.shape:
        raise ValueError(
            f"correct_a and correct_b must have the same length; got {a.shape[0]} and {b.shape[0]}"
        )
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n_b = int(((a == 1) & (b == 0)).sum())
    n_c = int(((a == 0) & (b == 1)).sum())
    n_disc = n_b + n_c
    p = 1.0 if n_disc == 0 else float(binomtest(n_b, n_disc, 0.5, alternative="two-sided").pvalue)
    return McNemarResult(
        b=n_b, c=n_c, n_discordant=n_disc, n=int(a.size), statistic=min(n_b, n_c), p_value=p
    )
