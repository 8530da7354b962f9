"""The 2PL joint maximum-likelihood fit by projected Newton.

The Hessian of the 2PL's penalised joint likelihood has a diagonal block for
the abilities and one 2x2 block per question; a Newton step solves it by the
Schur complement, projected onto the bounds, with an Armijo line search and a
ridge when a block is not positive definite. :func:`scoring.irt.irt_2pl`
validates the input and calls :func:`_newton_2pl`; nothing here checks input.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scoring._irt_common import AT_BOUND_ATOL, _sum_product
from scoring._typing import BoolArray, FloatArray

NEWTON_NON_FINITE_MESSAGE = "irt_2pl: the objective or its gradient became non-finite at Newton iteration {n_iter}"


NEWTON_CONVERGED_MESSAGE = "CONVERGENCE: projected gradient {pg:.2e} <= tol {tol:.1e} after {n_iter} Newton iterations"


NEWTON_MAX_ITER_MESSAGE = "ITERATIONS REACHED LIMIT (max_iter={max_iter}): projected gradient {pg:.2e} > tol {tol:.1e}"


NEWTON_STALLED_MESSAGE = (
    "LINE SEARCH FAILED after {n_iter} Newton iterations: no decrease along the Newton or the gradient "
    "direction (projected gradient {pg:.2e} > tol {tol:.1e})"
)


#: Armijo constant of the 2PL line search (sufficient decrease).
_ARMIJO = 1e-4


#: Step halvings tried by the 2PL line search before it gives up on a direction.
_MAX_HALVINGS = 40


#: Widest band next to a bound in which a variable pushed outward is fixed.
_ACTIVE_BAND = 1e-3


#: Ridges (times the largest curvature) tried when the Hessian is not positive definite.
_RIDGES = (0.0, 1e-10, 1e-6, 1e-2)


#: Threads of the 2PL fit's element-wise cell passes (row blocks), from this many cells up.
_CELL_THREADS = 2


_THREADED_CELLS = 1 << 18


class _TwoPLCells:
    """Cell-level work of the 2PL fit: logits, probabilities and their sums.

    Five buffers of shape (n_questions, n_models) are allocated once.
    :meth:`value` evaluates the penalised objective and keeps ``d = theta -
    beta``, ``z = a d`` and ``e = exp(-|z|)``; :meth:`derivatives` reuses
    them for the gradient and the Hessian pieces at an accepted point (the
    line search calls only :meth:`value`).
    """

    def __init__(self, y: FloatArray, w: FloatArray | None, l2: float) -> None:
        self.y, self.w, self.l2 = y, w, l2
        self.d, self.z, self.e, self.s, self.v = (np.empty_like(y) for _ in range(5))
        # Element-wise passes run on row blocks in threads (numpy releases the GIL in them); the
        # values are those of one whole-array pass, and every sum stays one whole-array pass.
        n_threads = min(_CELL_THREADS, os.cpu_count() or 1) if y.size >= _THREADED_CELLS else 1
        bounds = np.linspace(0, y.shape[0], n_threads + 1).astype(int).tolist()
        self.blocks = [slice(lo, hi) for lo, hi in itertools.pairwise(bounds)]

    def _rowwise(self, work: Callable[[slice], None]) -> None:
        if len(self.blocks) == 1:
            work(self.blocks[0])
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(self.blocks)) as pool:
            list(pool.map(work, self.blocks))

    def value(self, theta: FloatArray, beta: FloatArray, a: FloatArray) -> float:
        """Penalised negative log-likelihood (as :func:`_objective_2pl`)."""

        def cells(rows: slice) -> None:
            d, z, e, s, v = self.d[rows], self.z[rows], self.e[rows], self.s[rows], self.v[rows]
            np.subtract(theta[None, :], beta[rows, None], out=d)
            np.multiply(a[rows, None], d, out=z)
            np.abs(z, out=e)
            np.negative(e, out=e)
            np.exp(e, out=e)
            np.log1p(e, out=s)
            np.maximum(z, 0.0, out=v)
            s += v  # softplus(z)

        self._rowwise(cells)
        s, z = self.s, self.z
        loss = _sum_product(s, self.w, s) - _sum_product(self.y, z, s)
        a_minus_1 = a - 1.0
        return loss + self.l2 * float(theta @ theta + beta @ beta + a_minus_1 @ a_minus_1)

    def derivatives(self, theta: FloatArray, beta: FloatArray, a: FloatArray) -> tuple[FloatArray, _Pieces]:
        """Gradient and exact Hessian pieces at the point of the last :meth:`value`.

        With ``r = w (p - y)`` and ``v = w p (1 - p)``: the ability diagonal
        ``h_theta = a^2 @ v + 2 l2``; per question ``c_bb = a^2 sum v + 2
        l2``, ``c_aa = sum v d^2 + 2 l2``, ``c_ba = -a sum v d - sum r``; the
        couplings ability-difficulty ``-a^2 v`` (kept as ``v``) and
        ability-discrimination ``ba = a v d + r``. Dropping the ``r`` terms
        gives the Gauss-Newton (Fisher) matrix, positive semi-definite.
        """
        d, z, e, s, v, y, w, l2 = self.d, self.z, self.e, self.s, self.v, self.y, self.w, self.l2

        def cells(rows: slice) -> None:
            z_, e_, s_, v_, y_ = z[rows], e[rows], s[rows], v[rows], y[rows]
            np.add(e_, 1.0, out=s_)
            np.reciprocal(s_, out=s_)  # sigmoid(|z|)
            np.multiply(e_, s_, out=v_)  # sigmoid(-|z|)
            v_ *= s_  # p (1 - p) = sigmoid(|z|) sigmoid(-|z|)
            r_ = e_  # e is not needed any more
            with np.errstate(over="ignore"):  # exp(-z) = inf gives p = 0, as it should
                np.negative(z_, out=r_)
                np.exp(r_, out=r_)
            r_ += 1.0
            np.reciprocal(r_, out=r_)  # p = sigmoid(z); see _nll_terms on why not a masked copy
            r_ -= y_
            if w is not None:
                r_ *= w[rows]
                v_ *= w[rows]

        self._rowwise(cells)
        r = e
        r_sum = r.sum(axis=1)
        g = np.concatenate([
            a @ r + 2.0 * l2 * theta,
            -a * r_sum + 2.0 * l2 * beta,
            np.einsum("qm,qm->q", r, d) + 2.0 * l2 * (a - 1.0),
        ])
        vd = np.multiply(v, d, out=s)
        vd_sum = vd.sum(axis=1)
        c_aa = np.einsum("qm,qm->q", vd, d) + 2.0 * l2
        ba = np.multiply(vd, a[:, None], out=s)
        ba += r
        pieces = _Pieces(
            a2=a * a,
            h_theta=(a * a) @ v + 2.0 * l2,
            c_bb=a * a * v.sum(axis=1) + 2.0 * l2,
            c_ba=-a * vd_sum - r_sum,
            c_aa=c_aa,
            v=v,
            ba=ba,
            r=r,
            r_sum=r_sum,
        )
        return g, pieces


@dataclass
class _Pieces:
    """The structured 2PL Hessian (see :meth:`_TwoPLCells.derivatives`)."""

    a2: FloatArray
    h_theta: FloatArray
    c_bb: FloatArray
    c_ba: FloatArray
    c_aa: FloatArray
    v: FloatArray
    ba: FloatArray
    r: FloatArray
    r_sum: FloatArray

    def to_gauss_newton(self) -> None:
        """Drop the residual terms (in place): the Fisher information."""
        self.ba -= self.r
        self.c_ba = self.c_ba + self.r_sum


def _newton_direction_2pl(
    g: FloatArray,
    h: _Pieces,
    free: BoolArray,
    ridge: float,
    stacked: FloatArray,
) -> FloatArray | None:
    """Newton step on the free variables through the abilities' Schur complement.

    The Hessian is ``[[D, B], [B^T, C]]``: ``D`` diagonal over abilities,
    ``C`` block diagonal with one 2x2 block (difficulty, discrimination)
    per question, ``B`` their coupling. Eliminating the question blocks
    leaves ``S = D - B C^{-1} B^T`` (n_models x n_models), formed as one
    product ``X^T X`` with ``X = B L`` for ``C^{-1} = L L^T`` (``stacked``
    is its (2 n_questions, n_models) buffer). Fixed variables (``free``
    False) drop out: their rows and columns are removed and their step is
    0. ``ridge`` is added to every diagonal entry. Returns None when the
    reduced matrix is not positive definite.
    """
    from scipy.linalg import LinAlgError, cho_factor, cho_solve  # here: not at app load

    n_models, n_questions = len(h.h_theta), len(h.c_bb)
    free_t, free_b, free_a = free[:n_models], free[n_models:n_models + n_questions], free[n_models + n_questions:]
    g_t, g_b, g_a = g[:n_models], g[n_models:n_models + n_questions], g[n_models + n_questions:]
    c_bb, c_aa, c_ba = h.c_bb + ridge, h.c_aa + ridge, h.c_ba
    both = free_b & free_a
    det = c_bb * c_aa - c_ba * c_ba
    if np.any(both & ~((c_bb > 0) & (det > 0))) or np.any(free_b & (c_bb <= 0)) or np.any(free_a & (c_aa <= 0)):
        return None
    # C^{-1} restricted to the free variables of each question (0 where fixed).
    safe_det = np.where(both, det, 1.0)
    i11 = np.where(both, c_aa / safe_det, np.where(free_b, 1.0 / np.where(free_b, c_bb, 1.0), 0.0))
    i12 = np.where(both, -c_ba / safe_det, 0.0)
    i22 = np.where(both, c_bb / safe_det, np.where(free_a, 1.0 / np.where(free_a, c_aa, 1.0), 0.0))
    # Cholesky factor L of each 2x2 C^{-1}: [[l11, 0], [l21, l22]].
    l11 = np.sqrt(i11)
    l21 = np.divide(i12, l11, out=np.zeros(n_questions), where=l11 > 0)
    l22 = np.sqrt(np.maximum(i22 - l21 * l21, 0.0))
    # X = B L; B's difficulty column is -a^2 v, its discrimination column ba.
    top, bottom = stacked[:n_questions], stacked[n_questions:]
    np.multiply(h.v, (-l11 * h.a2)[:, None], out=top)
    np.multiply(h.ba, l21[:, None], out=bottom)
    top += bottom
    np.multiply(h.ba, l22[:, None], out=bottom)
    schur = -(stacked.T @ stacked)
    schur[np.diag_indices(n_models)] += h.h_theta + ridge
    # Right-hand side -g_t + B C^{-1} g_q.
    hb = i11 * g_b + i12 * g_a
    ha = i12 * g_b + i22 * g_a
    rhs = -g_t - (h.a2 * hb) @ h.v + ha @ h.ba
    step_t = np.zeros(n_models)
    if free_t.any():
        try:
            factor = cho_factor(schur[np.ix_(free_t, free_t)])
        except LinAlgError:
            return None
        step_t[free_t] = cho_solve(factor, rhs[free_t])
    tb = g_b - h.a2 * (h.v @ step_t)
    ta = g_a + h.ba @ step_t
    step = np.concatenate([step_t, -(i11 * tb + i12 * ta), -(i12 * tb + i22 * ta)])
    if not np.all(np.isfinite(step)):
        return None
    return step


def _projected_gradient(x: FloatArray, g: FloatArray, lo: FloatArray, hi: FloatArray) -> tuple[float, BoolArray]:
    """Max-norm of the projected gradient, and the at-bound mask (``AT_BOUND_ATOL``)."""
    lower = x <= lo + AT_BOUND_ATOL
    upper = x >= hi - AT_BOUND_ATOL
    projected = np.where((lower & (g > 0)) | (upper & (g < 0)), 0.0, g)
    return float(np.max(np.abs(projected), initial=0.0)), lower | upper


def _newton_2pl(
    y: FloatArray,
    w: FloatArray | None,
    l2: float,
    x0: FloatArray,
    lo: FloatArray,
    hi: FloatArray,
    max_iter: int,
    tol: float,
) -> tuple[FloatArray, float, FloatArray, int, bool, str]:
    """Projected Newton for the 2PL objective (Bertsekas 1982), clean input assumed.

    Each iteration fixes the variables within a small band of a bound whose
    gradient points outward (they take a diagonally scaled gradient step
    onto the bound), takes a Newton step on the others through
    :func:`_newton_direction_2pl` (exact Hessian; Gauss-Newton, then
    Gauss-Newton with a growing ridge, when that is not positive definite),
    and backtracks along the projection arc ``clip(x + t step)`` until the
    Armijo condition holds. Returns ``x, f, g, n_iter, converged, message``.
    """
    n_questions, n_models = y.shape
    cells = _TwoPLCells(y, w, l2)
    stacked = np.empty((2 * n_questions, n_models))

    def value(x: FloatArray) -> float:
        return cells.value(x[:n_models], x[n_models:n_models + n_questions], x[n_models + n_questions:])

    x = x0.copy()
    f = value(x)
    n_iter = 0
    while True:
        g, h = cells.derivatives(x[:n_models], x[n_models:n_models + n_questions], x[n_models + n_questions:])
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            raise FloatingPointError(NEWTON_NON_FINITE_MESSAGE.format(n_iter=n_iter))
        pg, _ = _projected_gradient(x, g, lo, hi)
        if pg <= tol:
            return x, f, g, n_iter, True, NEWTON_CONVERGED_MESSAGE.format(pg=pg, tol=tol, n_iter=n_iter)
        if n_iter >= max_iter:
            return x, f, g, n_iter, False, NEWTON_MAX_ITER_MESSAGE.format(max_iter=max_iter, pg=pg, tol=tol)
        gap = float(np.max(np.abs(x - np.clip(x - g, lo, hi))))
        band = min(_ACTIVE_BAND, gap)
        fixed = ((x <= lo + band) & (g > 0)) | ((x >= hi - band) & (g < 0))
        diag = np.maximum(np.concatenate([h.h_theta, h.c_bb, h.c_aa]), 1e-12)
        scale = float(diag.max())
        step = _newton_direction_2pl(g, h, ~fixed, 0.0, stacked)
        if step is None:
            h.to_gauss_newton()
            for ridge in _RIDGES:
                step = _newton_direction_2pl(g, h, ~fixed, ridge * scale, stacked)
                if step is not None:
                    break
        directions = [-g / diag] if step is None else [step, -g / diag]
        for direction in directions:
            direction[fixed] = -g[fixed] / diag[fixed]
            found = _armijo_2pl(value, x, f, g, direction, lo, hi)
            if found is not None:
                x, f = found
                break
        else:
            f = value(x)  # the buffers hold the last trial point
            g, _ = cells.derivatives(x[:n_models], x[n_models:n_models + n_questions], x[n_models + n_questions:])
            pg, _ = _projected_gradient(x, g, lo, hi)
            return x, f, g, n_iter, False, NEWTON_STALLED_MESSAGE.format(n_iter=n_iter, pg=pg, tol=tol)
        n_iter += 1


def _armijo_2pl(
    value: Callable[[FloatArray], float],
    x: FloatArray,
    f: float,
    g: FloatArray,
    direction: FloatArray,
    lo: FloatArray,
    hi: FloatArray,
) -> tuple[FloatArray, float] | None:
    """Backtrack along ``clip(x + t direction)`` from t = 1 by halving.

    Accepts the first point with ``f_new <= f + 1e-4 g . (x_new - x)``
    (with ``g . (x_new - x) < 0``), allowing for rounding in ``f`` (about
    1e-12 relative): near the optimum the predicted decrease of a Newton
    step falls below what a sum over a million cells can resolve.
    The last call of ``value`` is at the returned point. None if no
    step of the ``_MAX_HALVINGS`` tried is accepted.
    """
    noise = 2.0**-40 * abs(f)
    t = 1.0
    for _ in range(_MAX_HALVINGS):
        trial = np.clip(x + t * direction, lo, hi)
        slope = float(g @ (trial - x))
        if slope < 0:
            f_trial = value(trial)
            if f_trial <= f + _ARMIJO * slope + noise:
                return trial, f_trial
        t *= 0.5
    return None
