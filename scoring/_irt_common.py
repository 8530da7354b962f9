"""What the IRT fits share.

The credit as Bernoulli targets with cell weights, the sum-of-products kernel,
the 0-100 difficulty scale of the reports, and the distance within which a
parameter counts as sitting on its bound.
"""
from __future__ import annotations

import numpy as np

from scoring._typing import FloatArray, ResponseArray

#: A parameter within this distance of a bound is reported as sitting on it.
AT_BOUND_ATOL = 1e-6


def _targets_and_weights(R: ResponseArray) -> tuple[FloatArray, FloatArray | None]:
    """Split a checked matrix into float64 targets (NaN -> 0) and a 0/1 mask.

    The mask is None when every cell is observed (integer/bool input, or a
    float matrix without NaN), which lets the kernels skip the multiply.
    """
    if R.dtype.kind != "f":
        return R.astype(np.float64), None
    missing = np.isnan(R)
    if not missing.any():
        return R.astype(np.float64, copy=True), None
    y = np.where(missing, 0.0, R).astype(np.float64, copy=False)
    return y, (~missing).astype(np.float64)


def _minmax_0_100(values: FloatArray) -> FloatArray:
    low, high = values.min(), values.max()
    if not high > low:
        return np.full(values.shape, 50.0)
    scaled: FloatArray = 100.0 * ((values - low) / (high - low))  # the maximum maps to exactly 100
    return scaled


def _sum_product(u: FloatArray, v: FloatArray | None, buffer: FloatArray) -> float:
    """``sum(u * v)`` (or ``sum(u)`` when v is None) by pairwise summation.

    Written as multiply-into-buffer and ``sum`` rather than a BLAS dot: a
    threaded ``ddot`` over a million cells is much slower when the cores are
    busy (docs/measurements.md), and numpy's pairwise sum is the more
    accurate.
    """
    if v is None:
        return float(u.sum(dtype=np.float64))
    return float(np.multiply(u, v, out=buffer).sum(dtype=np.float64))
