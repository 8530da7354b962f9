"""Threshold comparisons decided as exact arithmetic would decide them.

A computed float compared with a threshold (a label gap with a margin, a
difference of difficulties with a tie tolerance, a median time with a speeder
threshold, a credit with the snapping distance, a percentile gap with an
attention check's minimum) must not be decided by the rounding of the
subtraction. Two labels 0.35 and 0.55 are 0.2 apart; in binary floating point
``0.55 - 0.35`` is ``0.20000000000000007 > 0.2``, while searching the label
``0.35 + 0.2 = 0.55`` finds 0.55 not above it, and the negated labels give
``-0.55 + 0.2 = -0.35000000000000003 < -0.35``: three answers from one gap.

Here every float stands for the number it was meant to be
(:func:`intended_value`), and the comparison is made on those numbers with
:class:`fractions.Fraction`.

The fast path stays in numpy: a comparison is redone exactly only when the
float result lies within a band of a few units in the last place of the
operands around the threshold, which is where rounding can decide it.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray

__all__ = [
    "MAX_DENOMINATOR",
    "gap_sign",
    "intended_value",
    "median_is_below",
    "near_zero_or_one",
    "suffix_start_exact",
]

#: A float within a few roundings of a fraction ``p/q`` with ``q`` at most this stands for that fraction.
MAX_DENOMINATOR = 10**6

#: Absolute distance (8 units in the last place of 1) under which a float of magnitude < 2 is snapped to a
#: fraction of denominator <= MAX_DENOMINATOR: the error of a few float operations on numbers <= 1. Two such
#: fractions are at least 1e-12 apart, so at most one lies this close.
_SNAP = 8 * 2.0**-52
_EPS = 2.0**-52
#: Band, in units of ``_EPS x max(1, |operand|)`` summed over the operands, inside which a float comparison is
#: redone exactly (covers the snapping distance of every operand plus the rounding of the float expression).
_BAND = 64.0

ERR_NOT_FINITE = "intended_value needs a finite number; got {value!r}"


@lru_cache(maxsize=65536)
def intended_value(x: float) -> Fraction:
    """The exact number a float stands for.

    Parameters
    ----------
    x : float
        A finite number.

    Returns
    -------
    Fraction
        For ``|x| < 2``: the fraction ``p/q`` (``q <= MAX_DENOMINATOR``)
        nearest to ``x`` if it lies within ``8 * 2**-52`` of ``x`` (a solve
        rate ``k/n``, or ``1 - k/n``, after its rounding); otherwise the
        shortest decimal that reads back as ``x`` (``repr(x)``: the decimal
        a label was stored as, ``0.35`` for ``0.35``).

    Raises
    ------
    ValueError
        If ``x`` is NaN or infinite.

    Notes
    -----
    The map is non-decreasing in ``x``, so sorted floats stay sorted.

    Examples
    --------
    >>> intended_value(0.35), intended_value(1 / 3), intended_value(1 - 0.7)
    (Fraction(7, 20), Fraction(1, 3), Fraction(3, 10))
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(ERR_NOT_FINITE.format(value=x))
    exact = Fraction(x)
    if exact.denominator == 1:
        return exact
    if abs(x) < 2.0:
        near = exact.limit_denominator(MAX_DENOMINATOR)
        if abs(near - exact) <= Fraction(_SNAP):
            return near
    return Fraction(repr(x))


def _as_fraction(threshold: float | Fraction) -> Fraction:
    return threshold if isinstance(threshold, Fraction) else intended_value(float(threshold))


def _band(*magnitudes: FloatArray | float) -> FloatArray:
    total: FloatArray = np.zeros(())
    for m in magnitudes:
        total = total + np.maximum(1.0, np.abs(m))
    return np.asarray(_BAND * _EPS * total, dtype=np.float64)


def gap_sign(upper: ArrayLike, lower: ArrayLike, threshold: float | Fraction) -> NDArray[np.int8]:
    """Sign of ``upper - lower - threshold``, exact on the intended values.

    Parameters
    ----------
    upper, lower : array-like of float, broadcastable
        Operands; NaN or infinite entries give 0 (callers mask them).
    threshold : float or Fraction
        A float is read as :func:`intended_value` of it; a Fraction is used
        as is (a product such as ``tol * spread`` built exactly).

    Returns
    -------
    ndarray of int8
        -1, 0 or +1 per element: ``upper - lower`` below, equal to or above
        ``threshold`` in exact arithmetic on ``intended_value`` of each
        operand. A threshold of exactly 0 compares the floats themselves
        (only equal floats tie; the sign of a float difference is exact).

    Examples
    --------
    >>> gap_sign([0.55, -0.35], [0.35, -0.55], 0.2).tolist()  # both gaps are exactly 0.2
    [0, 0]
    >>> 0.55 - 0.35 > 0.2  # the float subtraction rounds up
    True
    """
    u = np.asarray(upper, dtype=np.float64)
    lo = np.asarray(lower, dtype=np.float64)
    u, lo = np.broadcast_arrays(u, lo)
    t = _as_fraction(threshold)
    tf = float(t)
    finite = np.isfinite(u) & np.isfinite(lo)
    if t == 0:  # the floats themselves: the sign of a float difference is exact
        return np.where(finite, np.sign(np.where(finite, u, 0.0) - np.where(finite, lo, 0.0)), 0.0).astype(np.int8)
    with np.errstate(invalid="ignore", over="ignore"):
        d = (u - lo) - tf
        out = np.where(finite, np.sign(np.where(finite, d, 0.0)), 0.0).astype(np.int8)
        near = finite & (np.abs(d) <= _band(u, lo, tf))
    equal = near & (u == lo)  # equal floats: the gap is exactly 0, the sign that of -threshold
    if equal.any():
        out[equal] = -((t > 0) - (t < 0))
        near &= ~equal
    flat_out, flat_u, flat_lo = out.reshape(-1), u.reshape(-1), lo.reshape(-1)
    for i in np.flatnonzero(near):
        diff = intended_value(float(flat_u[i])) - intended_value(float(flat_lo[i])) - t
        flat_out[i] = (diff > 0) - (diff < 0)
    return flat_out.reshape(out.shape)


def suffix_start_exact(sorted_values: ArrayLike, margin: float | Fraction, *, start: int = 0,
                       stop: int | None = None) -> NDArray[np.int64]:
    """Per position ``i`` of a sorted run, the first ``j`` with ``v[j] - v[i] > margin`` exactly.

    Parameters
    ----------
    sorted_values : array-like of float, shape (n,)
        Finite values, non-decreasing over ``[start, stop)``.
    margin : float or Fraction
        Threshold, >= 0; a float is read as :func:`intended_value` of it.
    start, stop : int
        The run searched (default: the whole array).

    Returns
    -------
    ndarray of int64, shape (stop - start,)
        Absolute positions in ``[start, stop]`` (``stop`` when no value of
        the run exceeds ``v[i] + margin``).

    Notes
    -----
    A margin of exactly 0 compares the floats themselves, as
    :func:`gap_sign` does. Otherwise ``searchsorted`` on ``v + margin`` first; positions whose float bound
    is within the rounding band are settled by a binary search with the
    exact predicate (monotone because :func:`intended_value` is
    non-decreasing).

    Examples
    --------
    >>> suffix_start_exact([0.35, 0.55, 0.56], 0.2).tolist()
    [2, 3, 3]
    """
    v_all = np.asarray(sorted_values, dtype=np.float64)
    stop = v_all.size if stop is None else stop
    v = v_all[start:stop]
    m = _as_fraction(margin)
    if m == 0:
        return np.searchsorted(v, v, side="right").astype(np.int64) + start
    mf = float(m)
    band = _band(v, mf, float(np.abs(v).max()) if v.size else 0.0)
    lo = np.searchsorted(v, v + mf - band, side="left")
    hi = np.searchsorted(v, v + mf + band, side="right")
    out = hi.astype(np.int64)
    for i in np.flatnonzero(hi > lo):
        base = intended_value(float(v[i])) + m
        a, b = int(lo[i]), int(hi[i])  # answer in [a, b]: v[a-1] is surely not above, v[b] surely above
        while a < b:
            mid = (a + b) // 2
            if intended_value(float(v[mid])) > base:
                b = mid
            else:
                a = mid + 1
        out[i] = a
    return out + start


def median_is_below(values: ArrayLike, threshold: float) -> bool | None:
    """Whether the median of ``values`` is below ``threshold``, decided exactly.

    Parameters
    ----------
    values : array-like of float, shape (n,)
        Finite numbers (e.g. seconds per vote); order does not matter.
    threshold : float
        Read as :func:`intended_value` of it (5.0 is five).

    Returns
    -------
    bool or None
        None for no values. For an even count the median is the mean of the
        two middle values; ``(a + b) / 2 < threshold`` is decided as
        ``a + b < 2 * threshold`` on the intended values, so neither the
        sum nor the halving rounds.

    Examples
    --------
    >>> median_is_below([4.9, 5.1], 5.0), median_is_below([4.7, 5.3], 5.0), median_is_below([], 5.0)
    (False, False, None)
    """
    v = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
    if v.size == 0:
        return None
    t = intended_value(float(threshold))
    k = v.size // 2
    if v.size % 2:
        return intended_value(float(v[k])) < t
    return intended_value(float(v[k - 1])) + intended_value(float(v[k])) < 2 * t


def near_zero_or_one(x: ArrayLike, distance: float) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which values lie strictly within ``distance`` of 0 and of 1 without being 0 or 1.

    Parameters
    ----------
    x : array-like of float
        Any shape; NaN gives False.
    distance : float
        > 0, read as :func:`intended_value` of it (``1e-12`` is 10**-12).

    Returns
    -------
    low, high : ndarray of bool, the shape of ``x``
        ``0 < |x| < distance`` and ``0 < |x - 1| < distance``, decided in
        exact arithmetic on the intended values (``1 - 1e-12`` written as
        ``0.999999999999`` is not within; ``1 - 2**-53`` is).

    Examples
    --------
    >>> low, high = near_zero_or_one([5e-13, 1e-12, 0.999999999999, 0.9999999999995, 1.0], 1e-12)
    >>> low.tolist(), high.tolist()
    ([True, False, False, False, False], [False, False, False, True, False])
    """
    arr = np.asarray(x, dtype=np.float64)
    d = float(distance)
    with np.errstate(invalid="ignore"):
        low_c = (arr != 0.0) & (np.abs(arr) <= 2 * d)
        high_c = (arr != 1.0) & (np.abs(arr - 1.0) <= 2 * d)
    low = np.zeros(arr.shape, dtype=bool)
    high = np.zeros(arr.shape, dtype=bool)
    if low_c.any():
        vals = np.abs(arr[low_c])
        low[low_c] = gap_sign(vals, 0.0, d) < 0
    if high_c.any():
        vals = arr[high_c]
        high[high_c] = (gap_sign(1.0, vals, d) < 0) & (gap_sign(vals, 1.0, d) < 0)
    return low, high
