"""The Bock-Aitkin EM kernels of :mod:`scoring.irt_mml` (private): quadrature, E-step and M-step.

The quadrature (equally spaced nodes, N(0, 1) weights), the E-step (every
model's posterior over the nodes and the marginal log-likelihood), the
expected counts, and the generalised M-step (projected Gauss-Newton steps
with Armijo backtracking: per question for the 2PL, jointly on the common
slope and the difficulties for the 1PL), worked on question row blocks in
threads. Clean input assumed: :mod:`scoring.irt_mml` validates.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from scoring._typing import BoolArray, FloatArray, IndexArray

#: A parameter within this distance of a bound is reported as sitting on it.
AT_BOUND_ATOL = 1e-6
#: Newton steps on the item parameters per EM iteration (a generalised EM step).
_M_STEPS = 2
#: A question whose (a, b) moved more than this (logits) in an M-step's Newton step takes another.
_STILL_MOVING = 1e-2
#: Step halvings tried by the M-step's line search.
_MAX_HALVINGS = 30
#: Relative change of an M-step objective that counts as none (float64 rounding of its sum).
_ROUNDING = 1e-13
#: Threads of the E- and M-steps (question row blocks), from this many cell-nodes (cells x nodes) up.
_THREADS = 2
_THREADED_CELLS = 1 << 22

_T = TypeVar("_T")

#: Nodes whose posterior weight summed over the models is below this are left out of the M-step.
_NODE_FLOOR = 1e-14


# ---------------------------------------------------------------------------
# kernels (clean input assumed)


def _quadrature(n_quadrature: int, theta_range: tuple[float, float]) -> tuple[FloatArray, FloatArray]:
    """Equally spaced nodes over ``theta_range`` and N(0, 1) density weights summing to 1."""
    nodes = np.linspace(theta_range[0], theta_range[1], n_quadrature)
    log_w = -0.5 * nodes * nodes
    weights = np.exp(log_w - log_w.max())
    return nodes, weights / weights.sum()


def _softplus(z: FloatArray) -> FloatArray:
    """``log(1 + exp(z))`` as ``max(z, 0) + log(1 + exp(-|z|))``.

    ``log(1 + e)`` rather than ``log1p(e)``: numpy's ``log`` is vectorised
    and ``log1p`` is not (about 3x slower here); for ``e < 1e-16`` the sum
    rounds to 1 and the term to 0 instead of ``e``, an absolute error below
    1e-16 per cell.
    """
    s = np.abs(z)
    np.negative(s, out=s)
    np.exp(s, out=s)
    s += 1.0
    np.log(s, out=s)
    s += np.maximum(z, 0.0)
    return s


def _sigmoid(z: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):
        out: FloatArray = 1.0 / (1.0 + np.exp(-z))
    return out


class _RowBlocks:
    """Question row blocks worked on in threads (numpy releases the GIL in its array loops).

    One block below ``_THREADED_CELLS`` cells or on one core; sums over the
    blocks are taken in block order, so a fit is the same on every run.
    """

    def __init__(self, n_rows: int, n_cells: int) -> None:
        n_threads = min(_THREADS, os.cpu_count() or 1) if n_cells >= _THREADED_CELLS else 1
        edges = np.linspace(0, n_rows, n_threads + 1).astype(int).tolist()
        self.slices = [slice(lo, hi) for lo, hi in itertools.pairwise(edges)]
        self._pool: ThreadPoolExecutor | None = None

    def map(self, work: Callable[[slice], _T]) -> list[_T]:
        if len(self.slices) == 1:
            return [work(self.slices[0])]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=len(self.slices))
        return list(self._pool.map(work, self.slices))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


def _e_step(
    y: FloatArray, w: FloatArray | None, a: FloatArray, b: FloatArray, nodes: FloatArray, log_weights: FloatArray,
    blocks: _RowBlocks | None = None,
) -> tuple[float, FloatArray]:
    """Marginal log-likelihood and the posterior weights of every model over the nodes.

    With logits ``z[q, k] = a_q (nodes_k - b_q)``, the log-likelihood of
    model m at node k is ``sum_q w y z - w softplus(z)`` (the Bernoulli
    log-likelihood, also for partial credit), i.e. ``y.T @ z - w.T @
    softplus(z)``: two (n_models, n_questions) x (n_questions, K) products,
    summed over the question row blocks. Returns ``(log_likelihood,
    posterior)``, posterior of shape (n_models, K) with rows summing to 1.
    """

    def part(rows: slice) -> FloatArray:
        z = a[rows, None] * (nodes[None, :] - b[rows, None])
        sp = _softplus(z)
        out: FloatArray = y[rows].T @ z
        if w is None:
            out -= sp.sum(axis=0)[None, :]
        else:
            out -= w[rows].T @ sp
        return out

    parts = (blocks or _RowBlocks(len(y), 0)).map(part)
    loglik = parts[0]
    for extra in parts[1:]:
        loglik += extra
    loglik += log_weights[None, :]
    top = loglik.max(axis=1, keepdims=True)
    loglik -= top
    np.exp(loglik, out=loglik)
    mass = loglik.sum(axis=1, keepdims=True)
    posterior: FloatArray = loglik / mass
    return float(np.sum(top) + np.sum(np.log(mass))), posterior


def _expected_counts(y: FloatArray, w: FloatArray | None, posterior: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``n[q, k]`` expected observed models at node k and ``r[q, k]`` their expected credit."""
    r = y @ posterior
    n = np.broadcast_to(posterior.sum(axis=0), r.shape) if w is None else w @ posterior
    return n, r


def _item_value(a: FloatArray, b: FloatArray, nodes: FloatArray, n: FloatArray, r: FloatArray) -> FloatArray:
    """Per question ``sum_k n softplus(z) - r z`` with ``z = a (nodes - b)``: the M-step objective."""
    z = nodes[None, :] - b[:, None]
    z *= a[:, None]
    s = _softplus(z)
    s *= n
    z *= r
    s -= z
    out: FloatArray = s.sum(axis=1)
    return out


@dataclass(frozen=True)
class _ItemDerivatives:
    """Gradient and Gauss-Newton Hessian of :func:`_item_value` in (a, b), per question.

    ``res = n p - r``, ``v = n p (1 - p)``, ``d = nodes - b``; ``g_a = sum
    res d``, ``g_b = -a sum res``, ``h_aa = sum v d^2``, ``h_bb = a^2 sum
    v``, ``h_ab = -a sum v d`` (the exact Hessian's cross term is ``h_ab -
    res_sum``).
    """

    g_a: FloatArray
    g_b: FloatArray
    h_aa: FloatArray
    h_bb: FloatArray
    h_ab: FloatArray
    res_sum: FloatArray


def _item_derivatives(
    a: FloatArray, b: FloatArray, nodes: FloatArray, n: FloatArray, r: FloatArray
) -> _ItemDerivatives:
    d = nodes[None, :] - b[:, None]
    z = a[:, None] * d
    e = np.abs(z)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-|z|)
    s = e + 1.0
    np.reciprocal(s, out=s)  # sigmoid(|z|)
    e *= s  # sigmoid(-|z|) = 1 - sigmoid(|z|)
    p = np.where(z >= 0.0, s, e)
    s *= e  # p (1 - p)
    v = np.multiply(s, n, out=s)
    res = np.multiply(p, n, out=p)
    res -= r
    vd = np.multiply(v, d, out=z)
    res_sum = res.sum(axis=1)
    return _ItemDerivatives(
        g_a=np.einsum("qk,qk->q", res, d), g_b=-a * res_sum, h_aa=np.einsum("qk,qk->q", vd, d),
        h_bb=a * a * v.sum(axis=1), h_ab=-a * vd.sum(axis=1), res_sum=res_sum,
    )


def _fixed(x: FloatArray, g: FloatArray, lo: float, hi: float) -> BoolArray:
    """On a bound (within AT_BOUND_ATOL) with the gradient pushing outward."""
    out: BoolArray = ((x <= lo + AT_BOUND_ATOL) & (g > 0)) | ((x >= hi - AT_BOUND_ATOL) & (g < 0))
    return out


def _backtrack(
    f0: FloatArray,
    slope: FloatArray,
    trial: Callable[[IndexArray, FloatArray], FloatArray],
) -> tuple[FloatArray, FloatArray]:
    """Armijo halving from a full step, per question: step fractions and the new values.

    A question whose direction is not a descent (``slope >= 0``, e.g. at the
    optimum) keeps fraction 0, as does one where no decrease was found;
    differences within ``_ROUNDING`` of ``|f0|`` count as no change.
    """
    t = np.ones_like(f0)
    f = f0.copy()
    pending = slope < 0
    t[~pending] = 0.0
    for _ in range(_MAX_HALVINGS):
        idx = np.flatnonzero(pending)
        if idx.size == 0:
            break
        f_new = trial(idx, t[idx])
        ok = f_new <= f0[idx] + 1e-4 * t[idx] * slope[idx] + _ROUNDING * np.abs(f0[idx])
        f[idx[ok]] = f_new[ok]
        pending[idx[ok]] = False
        t[idx[~ok]] *= 0.5
    t[pending] = 0.0
    return t, f


def _newton_2pl(
    a: FloatArray, b: FloatArray, f: FloatArray, nodes: FloatArray, n: FloatArray, r: FloatArray,
    a_bounds: tuple[float, float], b_bounds: tuple[float, float],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """One projected Gauss-Newton step with Armijo backtracking on each question's (a, b); new a, b, f."""
    h = _item_derivatives(a, b, nodes, n, r)
    fix_a = _fixed(a, h.g_a, *a_bounds) | (h.h_aa <= 0)
    fix_b = _fixed(b, h.g_b, *b_bounds) | (h.h_bb <= 0)
    det = h.h_aa * h.h_bb - h.h_ab * h.h_ab
    both = ~fix_a & ~fix_b & (det > 1e-12 * (h.h_aa * h.h_bb))
    safe = np.where(both, det, 1.0)
    step_a = np.where(both, -(h.h_bb * h.g_a - h.h_ab * h.g_b) / safe, 0.0)
    step_b = np.where(both, -(h.h_aa * h.g_b - h.h_ab * h.g_a) / safe, 0.0)
    only_a = ~fix_a & ~both
    only_b = ~fix_b & ~both
    step_a = np.where(only_a, -h.g_a / np.where(h.h_aa > 0, h.h_aa, 1.0), step_a)
    step_b = np.where(only_b, -h.g_b / np.where(h.h_bb > 0, h.h_bb, 1.0), step_b)

    def trial(idx: IndexArray, t: FloatArray) -> FloatArray:
        a_new = np.clip(a[idx] + t * step_a[idx], *a_bounds)
        b_new = np.clip(b[idx] + t * step_b[idx], *b_bounds)
        return _item_value(a_new, b_new, nodes, n[idx], r[idx])

    t, f = _backtrack(f, h.g_a * step_a + h.g_b * step_b, trial)
    return np.clip(a + t * step_a, *a_bounds), np.clip(b + t * step_b, *b_bounds), f


def _m_step_2pl(
    a: FloatArray, b: FloatArray, nodes: FloatArray, n: FloatArray, r: FloatArray,
    a_bounds: tuple[float, float], b_bounds: tuple[float, float],
) -> tuple[FloatArray, FloatArray]:
    """Projected Gauss-Newton steps on every question's (a, b), each a decrease of its own term.

    The first step moves every question; up to ``_M_STEPS - 1`` more move
    only the questions whose last step changed ``a`` or ``b`` by more than
    ``_STILL_MOVING`` (the rest are already near their M-step optimum, and
    the next E-step moves it anyway).
    """
    f = _item_value(a, b, nodes, n, r)
    a_new, b_new, f = _newton_2pl(a, b, f, nodes, n, r, a_bounds, b_bounds)
    for _ in range(_M_STEPS - 1):
        moving = np.flatnonzero(np.maximum(np.abs(a_new - a), np.abs(b_new - b)) > _STILL_MOVING)
        if moving.size == 0:
            break
        a, b = a_new, b_new.copy()
        a_new = a.copy()
        a_new[moving], b_new[moving], f[moving] = _newton_2pl(
            a[moving], b[moving], f[moving], nodes, n[moving], r[moving], a_bounds, b_bounds)
    return a_new, b_new


def _m_step_1pl(
    a: float, b: FloatArray, nodes: FloatArray, n: FloatArray, r: FloatArray,
    a_bounds: tuple[float, float], b_bounds: tuple[float, float],
) -> tuple[float, FloatArray]:
    """Projected Gauss-Newton steps on the common slope and every difficulty jointly, each a decrease.

    The Gauss-Newton matrix is an arrowhead (the slope couples to every
    difficulty, the difficulties not to each other): the slope's step comes
    from its Schur complement, then each difficulty's. One step length for
    all, by Armijo backtracking on the summed objective.
    """
    f = float(_item_value(np.full(len(b), a), b, nodes, n, r).sum())
    for _ in range(_M_STEPS):
        h = _item_derivatives(np.full(len(b), a), b, nodes, n, r)
        free_b = ~_fixed(b, h.g_b, *b_bounds) & (h.h_bb > 0)
        inv_bb = np.divide(1.0, h.h_bb, out=np.zeros(len(b)), where=free_b)
        g_a, h_aa = float(h.g_a.sum()), float(h.h_aa.sum())
        schur = h_aa - float(np.sum(h.h_ab * h.h_ab * inv_bb))
        step_a = 0.0
        if not _fixed(np.array([a]), np.array([g_a]), *a_bounds)[0] and schur > 1e-12 * h_aa:
            step_a = -(g_a - float(np.sum(h.h_ab * inv_bb * h.g_b))) / schur
        step_b = -(h.g_b + h.h_ab * step_a) * inv_bb
        slope = g_a * step_a + float(h.g_b @ step_b)
        if not slope < 0:
            break
        frac = 1.0
        for _ in range(_MAX_HALVINGS):
            a_new = float(np.clip(a + frac * step_a, *a_bounds))
            b_new = np.clip(b + frac * step_b, *b_bounds)
            f_new = float(_item_value(np.full(len(b), a_new), b_new, nodes, n, r).sum())
            if f_new <= f + 1e-4 * frac * slope + _ROUNDING * abs(f):
                a, b, f = a_new, b_new, f_new
                break
            frac *= 0.5
        else:
            break
    return a, b


def _m_step(
    y: FloatArray, w: FloatArray | None, a: FloatArray, b: FloatArray, nodes: FloatArray, posterior: FloatArray,
    common_slope: bool, a_bounds: tuple[float, float], b_bounds: tuple[float, float], blocks: _RowBlocks,
) -> tuple[FloatArray, FloatArray]:
    """One generalised M-step on the nodes some model's posterior reaches (``_NODE_FLOOR``).

    The 2PL's questions are independent given the posterior: each row block
    is stepped in its own thread. The 1PL's common slope couples them.
    """
    live = posterior.sum(axis=0) >= _NODE_FLOOR
    post, at = posterior[:, live], nodes[live]
    if common_slope:
        n, r = _expected_counts(y, w, post)
        slope, b_new = _m_step_1pl(float(a[0]), b, at, n, r, a_bounds, b_bounds)
        return np.full(len(b), slope), b_new

    def part(rows: slice) -> tuple[FloatArray, FloatArray]:
        n, r = _expected_counts(y[rows], None if w is None else w[rows], post)
        return _m_step_2pl(a[rows], b[rows], at, n, r, a_bounds, b_bounds)

    parts = blocks.map(part)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
