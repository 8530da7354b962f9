"""The penalised Bradley-Terry Newton kernel (private).

Shared by :mod:`scoring.human_scale` and :mod:`scoring.adaptive_pairs`.

Both maximise ``sum_k count_k log sigma(b[wi_k] - b[wj_k]) - penalty/2 * sum b**2``
by Newton's method with step halving; they differ only in how a Newton step
is solved (dense or conjugate gradients, exact or inexact) and in when they
stop, which they pass in.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

_FloatArray = NDArray[np.float64]
_IntArray = NDArray[np.int64]


def sigmoid(x: _FloatArray) -> _FloatArray:
    """``1 / (1 + exp(-x))``, via tanh (no overflow)."""
    out: _FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def penalised_loglik(x: _FloatArray, wi: _IntArray, wj: _IntArray, count: _FloatArray, penalty: float) -> float:
    """``sum_k count_k log sigma(x[wi_k] - x[wj_k]) - penalty/2 * x @ x``."""
    return float(-(count * np.logaddexp(0.0, -(x[wi] - x[wj]))).sum() - 0.5 * penalty * (x @ x))


def merge_directions(
    wi: _IntArray, wj: _IntArray, count: _FloatArray, n: int
) -> tuple[_IntArray, _IntArray, _FloatArray, _FloatArray]:
    """Distinct ordered pairs ``(wi, wj)`` as unordered pairs ``ui < uj`` with a count per direction.

    ``count`` has shape (n_codes,) or (n_rows, n_codes). Returns ``(ui, uj, a, c)``:
    ``a`` judgments called ``ui`` harder than ``uj``, ``c`` the other way (0 where a
    direction has no code). With ``d = x[ui] - x[uj]`` the log-likelihood of a pair is
    ``a log sigma(d) + c log sigma(-d) = -(a + c) softplus(-d) - c d``: one exponential
    per unordered pair instead of one per direction.
    """
    lo, hi = np.minimum(wi, wj), np.maximum(wi, wj)
    keys, u = np.unique(lo * n + hi, return_inverse=True)
    u = u.reshape(-1)
    fwd = wi < wj
    shape = (*count.shape[:-1], keys.size)
    a, c = np.zeros(shape), np.zeros(shape)
    a[..., u[fwd]] = count[..., fwd]
    c[..., u[~fwd]] = count[..., ~fwd]
    return keys // n, keys % n, a, c


def pair_terms(d: _FloatArray) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    """``softplus(-d) = -log sigma(d)``, ``sigma(d)`` and ``sigma(d) (1 - sigma(d))`` from one exp and one log1p.

    With ``t = exp(-|d|)`` (never overflows) and ``r = 1 / (1 + t)``: ``softplus(-d) =
    max(-d, 0) + log1p(t)``, ``sigma(d) = r`` for ``d >= 0`` and ``t r`` below, and
    ``sigma(d) (1 - sigma(d)) = t r**2`` on both sides.
    """
    t = np.exp(-np.abs(d))
    r = 1.0 / (1.0 + t)
    softplus = np.log1p(t)
    softplus += np.maximum(-d, 0.0)
    p = np.where(d >= 0.0, r, t * r)
    t *= r
    t *= r
    return softplus, p, t


@dataclass(frozen=True)
class NewtonResult:
    """Where :func:`newton_ascent` stopped.

    The iterate, its gradient and curvature weights, the objective, the
    iterations taken and ``max |gradient|``.
    """

    b: _FloatArray
    grad: _FloatArray
    w: _FloatArray
    value: float
    n_iter: int
    residual: float


def newton_ascent(
    b: _FloatArray,
    *,
    objective: Callable[[_FloatArray], float],
    gradient: Callable[[_FloatArray], tuple[_FloatArray, _FloatArray]],
    solve: Callable[[_FloatArray, _FloatArray, float], _FloatArray],
    done: Callable[[float, _FloatArray], bool],
    max_iter: int,
    min_step: float,
) -> NewtonResult:
    """Damped Newton ascent from ``b``.

    Each iteration solves for a step (``solve(gradient, weights, residual)``),
    halves it until the objective does not fall by more than ``1e-12`` of its
    size (or the factor drops below ``min_step``), and stops when
    ``done(residual, b)`` or after ``max_iter`` iterations; ``residual`` is
    ``max |gradient|`` (0 for an empty ``b``).
    """
    grad, w = gradient(b)
    residual = float(np.abs(grad).max()) if b.size else 0.0
    value = objective(b)
    n_iter = 0
    while not done(residual, b) and n_iter < max_iter:
        n_iter += 1
        step = solve(grad, w, residual)
        t = 1.0
        while True:
            trial = b + t * step
            new_value = objective(trial)
            if new_value >= value - 1e-12 * abs(value) or t < min_step:
                break
            t *= 0.5
        b, value = trial, new_value
        grad, w = gradient(b)
        residual = float(np.abs(grad).max())
    return NewtonResult(b=b, grad=grad, w=w, value=value, n_iter=n_iter, residual=residual)
