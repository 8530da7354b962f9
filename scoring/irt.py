"""Item Response Theory baselines: 1PL, 2PL and multidimensional IRT.

The three IRT baselines the paper compares EIP against (appendix H.4):

* :func:`irt_1pl` and :func:`irt_2pl` fit the Rasch and two-parameter
  logistic models by penalised joint maximum likelihood: the 1PL with
  L-BFGS-B and analytic gradients, the 2PL by projected Newton on its
  structured Hessian (diagonal ability block, a 2x2 block per question).
* :func:`irt_mirt` fits a D-dimensional 2PL-style model by mean-field
  variational inference (fixed posterior standard deviation 1), maximising a
  one-sample Monte Carlo ELBO with Adam; gradients are written out in numpy.

Every function takes the response matrix ``R`` of shape
``(n_questions, n_models)`` described in :mod:`scoring._validation`: credit
in [0, 1], NaN = not observed. An unobserved cell is left out of every
likelihood term.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, cast

import numpy as np
from numpy.typing import ArrayLike

from scoring._threads import one_blas_thread as _one_blas_thread
from scoring._typing import BoolArray, FloatArray, ResponseArray
from scoring._validation import (
    as_rng,
    check_positive,
    check_positive_int,
    check_response_matrix,
)

if TYPE_CHECKING:
    from scipy.optimize import OptimizeResult

__all__ = ["IRTResult", "MIRTResult", "irt_1pl", "irt_2pl", "irt_mirt"]

# Error messages (tests match them exactly).
BOUNDS_MESSAGE = "{name} must be a pair (low, high) of finite numbers with low < high; got {value!r}"
DISCRIMINATION_BOUNDS_MESSAGE = (
    "discrimination_bounds must be a pair (low, high) of finite numbers with 0 < low < high; got {value!r}"
)
L2_MESSAGE = "l2 must be a finite number >= 0; got {value!r}"
NON_FINITE_MESSAGE = (
    "{method}: L-BFGS-B returned non-finite estimates after {n_iter} iterations ({message})"
)

NEWTON_NON_FINITE_MESSAGE = "irt_2pl: the objective or its gradient became non-finite at Newton iteration {n_iter}"
NEWTON_CONVERGED_MESSAGE = "CONVERGENCE: projected gradient {pg:.2e} <= tol {tol:.1e} after {n_iter} Newton iterations"
NEWTON_MAX_ITER_MESSAGE = "ITERATIONS REACHED LIMIT (max_iter={max_iter}): projected gradient {pg:.2e} > tol {tol:.1e}"
NEWTON_STALLED_MESSAGE = (
    "LINE SEARCH FAILED after {n_iter} Newton iterations: no decrease along the Newton or the gradient "
    "direction (projected gradient {pg:.2e} > tol {tol:.1e})"
)

MIRT_NON_FINITE_MESSAGE = "irt_mirt: posterior means became non-finite within {epochs} epochs"

#: A parameter within this distance of a bound is reported as sitting on it.
AT_BOUND_ATOL = 1e-6

#: Relative band for the MIRT convergence heuristic (see :func:`irt_mirt`).
MIRT_ELBO_BAND = 0.01

#: ``objective(x, y, w, l2, work) -> (value, gradient)`` of a JML fit.
_Objective: TypeAlias = Callable[
    [FloatArray, FloatArray, FloatArray | None, float, Sequence[FloatArray] | None], tuple[float, FloatArray]
]

_ADAM_BETA1 = 0.9
_ADAM_BETA2 = 0.999
_ADAM_EPS = 1e-8
_MIRT_INIT_SCALE = 0.1


@dataclass(frozen=True)
class IRTResult:
    """A fitted 1PL or 2PL model (joint maximum likelihood, L2 penalty).

    Attributes
    ----------
    ability : ndarray of shape (n_models,)
        Model abilities ``theta`` in logits, within ``bounds``.
    ability_scaled : ndarray of shape (n_models,)
        ``ability`` min-max scaled to [0, 100] (the paper's display scale);
        all 50.0 when every ability is equal.
    difficulty : ndarray of shape (n_questions,)
        Question difficulties ``beta`` in logits, within ``bounds``; higher
        means harder.
    discrimination : ndarray of shape (n_questions,)
        Discriminations ``a``; all 1.0 for the 1PL model.
    converged : bool
        1PL: L-BFGS-B's success flag (non-finite estimates raise instead of
        being returned); False when it stopped at ``max_iter``, at its
        function-evaluation cap (``20 * max_iter``) or on a line-search
        failure. 2PL: the projected gradient reached ``tol``. When False the
        estimates are returned as they stand.
    n_iter : int
        L-BFGS-B (1PL) or Newton (2PL) iterations performed.
    objective : float
        Final value of the penalised negative log-likelihood.
    projected_gradient : float
        Max-norm of the projected gradient at the returned point (the
        residual: 0 at an exact bounded optimum).
    message : str
        The optimiser's stopping message.
    ability_at_bound, difficulty_at_bound, discrimination_at_bound : ndarray of bool
        Estimates within ``AT_BOUND_ATOL`` (1e-6) of a bound.
    """

    ability: FloatArray
    ability_scaled: FloatArray
    difficulty: FloatArray
    discrimination: FloatArray
    converged: bool
    n_iter: int
    objective: float
    projected_gradient: float
    message: str
    ability_at_bound: BoolArray
    difficulty_at_bound: BoolArray
    discrimination_at_bound: BoolArray


@dataclass(frozen=True)
class MIRTResult:
    """A fitted multidimensional IRT model (variational posterior means).

    Attributes
    ----------
    ability : ndarray of shape (n_models,)
        L2 norm of each model's posterior-mean ability vector, min-max
        scaled to [0, 100] (all 50.0 when every norm is equal).
    ability_vectors : ndarray of shape (n_models, n_dims)
        Posterior means of the ability vectors ``theta_m``.
    difficulty : ndarray of shape (n_questions,)
        Posterior means of the intercepts ``b_q`` (the logit is
        ``a_q . theta_m - b_q``, so higher means harder).
    discrimination : ndarray of shape (n_questions, n_dims)
        Posterior means of the discrimination vectors ``a_q``.
    elbo_trace : ndarray of shape (epochs,)
        One-sample Monte Carlo ELBO estimate at each epoch, evaluated at the
        sample used for that epoch's step (before the update). The KL part
        is exact: ``0.5 * mu^2`` per parameter, as the posterior and prior
        standard deviations are both 1.
    n_iter : int
        Adam steps taken (= ``epochs``).
    converged : bool
        Heuristic: every ELBO value is finite and the mean ELBO
        over the last 10% of epochs is within ``MIRT_ELBO_BAND`` (1%,
        relative) of the mean over the 10% before it.
    seed : int or None
        The integer seed the Generator was built from (drawn from fresh
        OS entropy when ``rng=None``); None when a Generator was passed.
    """

    ability: FloatArray
    ability_vectors: FloatArray
    difficulty: FloatArray
    discrimination: FloatArray
    elbo_trace: FloatArray
    n_iter: int
    converged: bool
    seed: int | None


# ---------------------------------------------------------------------------
# validation helpers


def _check_bounds(value: Iterable[float], *, name: str) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(BOUNDS_MESSAGE.format(name=name, value=value)) from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(BOUNDS_MESSAGE.format(name=name, value=value))
    return low, high


def _check_discrimination_bounds(value: Iterable[float]) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(DISCRIMINATION_BOUNDS_MESSAGE.format(value=value)) from None
    if not (np.isfinite(low) and np.isfinite(high) and 0 < low < high):
        raise ValueError(DISCRIMINATION_BOUNDS_MESSAGE.format(value=value))
    return low, high


def _check_l2(value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(L2_MESSAGE.format(value=value)) from None
    if not np.isfinite(v) or v < 0:
        raise ValueError(L2_MESSAGE.format(value=value))
    return v


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


# ---------------------------------------------------------------------------
# 1PL / 2PL kernels (clean input assumed)


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


def _nll_terms(
    z: FloatArray,
    y: FloatArray,
    w: FloatArray | None,
    work: Sequence[FloatArray] | None = None,
    yz: float | None = None,
) -> tuple[float, FloatArray]:
    """Summed cell loss ``softplus(z) - y z`` and its derivative ``sigmoid(z) - y``.

    Parameters
    ----------
    z : ndarray of shape (n_questions, n_models)
        Logits.
    y : ndarray of shape (n_questions, n_models)
        Credit in [0, 1], 0 in unobserved cells.
    w : ndarray of shape (n_questions, n_models) or None
        1.0 where observed, 0.0 where not; None when all are observed.
    work : pair of float64 ndarrays shaped like z, optional
        Scratch buffers; the second one is returned as ``dz``.
    yz : float, optional
        ``sum(y * z)`` when the caller has it more cheaply (MIRT gets it
        from a small matrix product); computed here otherwise.

    Returns
    -------
    loss : float
        ``sum w * (softplus(z) - y z)``, which equals the Bernoulli negative
        log-likelihood ``-sum w * (y log p + (1 - y) log(1 - p))`` for
        ``p = sigmoid(z)``.
    dz : ndarray of shape (n_questions, n_models)
        ``w * (sigmoid(z) - y)``.

    Notes
    -----
    Numerically stable forms: ``softplus(z) = max(z, 0) + log1p(exp(-|z|))``
    with ``exp(-|z|)`` in (0, 1] (never overflows), and ``sigmoid(z) = 1 /
    (1 + exp(-z))``, where an overflow of ``exp(-z)`` to inf (z < -709)
    correctly gives 0. They equal ``np.logaddexp(0, z)`` and
    ``scipy.special.expit(z)`` to rounding but take about half the time,
    which matters at a million cells per evaluation. (Choosing between
    ``1 / (1 + e)`` and ``e / (1 + e)`` by the sign of z with a masked copy
    cost more than a second ``exp``: 8 ms against 3.5 ms per million cells.)
    """
    if work is None:
        work = (np.empty_like(z), np.empty_like(z))
    e, s = work
    np.abs(z, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    np.log1p(e, out=s)
    np.maximum(z, 0.0, out=e)
    s += e  # softplus(z)
    loss = _sum_product(s, w, s)
    loss -= _sum_product(y, z, s) if yz is None else yz  # y is 0 in unobserved cells
    with np.errstate(over="ignore"):
        np.negative(z, out=s)
        np.exp(s, out=s)
    s += 1.0
    np.reciprocal(s, out=s)  # sigmoid(z)
    s -= y
    if w is not None:
        s *= w
    return loss, s


def _mirt_nll_terms(
    z: FloatArray, y: FloatArray, w: FloatArray | None, work: Sequence[FloatArray], yz: float
) -> tuple[float, FloatArray]:
    """:func:`_nll_terms` for MIRT's epochs, with one transcendental pass fewer.

    Same contract (``work`` two scratch arrays shaped like ``z``, the second
    returned as ``dz``; ``yz = sum(y z)``). From ``e = exp(-|z|)`` and
    ``r = 1 / (1 + e)`` in [0.5, 1]: ``softplus(z) = max(z, 0) - log(r)``
    and ``sigmoid(z) = 0.5 + sign(z) (r - 0.5)`` (``r - 0.5`` is exact, so
    for z < 0 this is ``1 - r`` rounded once). That is one ``exp`` and one
    ``log`` per cell instead of two ``exp`` and a ``log1p`` (numpy's
    ``log1p`` is not vectorised): an epoch on 35,550 x 30 costs about 30%
    less. Values agree with :func:`_nll_terms` to about 1e-16 per cell
    (absolute), which is far below the noise of MIRT's one-sample ELBO; the
    deterministic 1PL/2PL fits keep :func:`_nll_terms`.
    """
    e, s = work
    np.abs(z, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    np.add(e, 1.0, out=s)
    np.reciprocal(s, out=s)  # r = 1 / (1 + exp(-|z|))
    np.log(s, out=e)
    loss = -_sum_product(e, w, e)
    np.maximum(z, 0.0, out=e)
    loss += _sum_product(e, w, e)
    loss -= yz
    s -= 0.5
    np.sign(z, out=e)
    s *= e
    s += 0.5  # sigmoid(z)
    s -= y
    if w is not None:
        s *= w
    return loss, s


def _objective_1pl(
    x: FloatArray, y: FloatArray, w: FloatArray | None, l2: float, work: Sequence[FloatArray] | None = None
) -> tuple[float, FloatArray]:
    """Penalised negative log-likelihood of the 1PL model and its gradient.

    ``x = [theta (n_models), beta (n_questions)]``; ``z[q, m] = theta[m] - beta[q]``.
    ``work``, if given, is three scratch arrays shaped like ``y``.
    """
    n_models = y.shape[1]
    theta, beta = x[:n_models], x[n_models:]
    if work is None:
        work = (np.empty_like(y), np.empty_like(y), np.empty_like(y))
    z = np.subtract(theta[None, :], beta[:, None], out=work[0])
    f, dz = _nll_terms(z, y, w, work[1:3])
    f += l2 * float(theta @ theta + beta @ beta)
    grad = np.empty_like(x)
    grad[:n_models] = dz.sum(axis=0) + 2.0 * l2 * theta
    grad[n_models:] = -dz.sum(axis=1) + 2.0 * l2 * beta
    return f, grad


def _objective_2pl(
    x: FloatArray, y: FloatArray, w: FloatArray | None, l2: float, work: Sequence[FloatArray] | None = None
) -> tuple[float, FloatArray]:
    """Penalised negative log-likelihood of the 2PL model and its gradient.

    ``x = [theta (n_models), beta (n_questions), a (n_questions)]``;
    ``z[q, m] = a[q] * (theta[m] - beta[q])``.
    ``work``, if given, is four scratch arrays shaped like ``y``.
    """
    n_questions, n_models = y.shape
    theta = x[:n_models]
    beta = x[n_models:n_models + n_questions]
    a = x[n_models + n_questions:]
    if work is None:
        work = (np.empty_like(y), np.empty_like(y), np.empty_like(y), np.empty_like(y))
    diff = np.subtract(theta[None, :], beta[:, None], out=work[0])
    z = np.multiply(a[:, None], diff, out=work[1])
    f, dz = _nll_terms(z, y, w, work[2:4])
    a_minus_1 = a - 1.0
    f += l2 * float(theta @ theta + beta @ beta + a_minus_1 @ a_minus_1)
    grad = np.empty_like(x)
    grad[:n_models] = a @ dz + 2.0 * l2 * theta
    grad[n_models:n_models + n_questions] = -a * dz.sum(axis=1) + 2.0 * l2 * beta
    grad[n_models + n_questions:] = np.einsum("qm,qm->q", dz, diff) + 2.0 * l2 * a_minus_1
    return f, grad


def _start_values(y: FloatArray, w: FloatArray | None, low: float, high: float) -> tuple[FloatArray, FloatArray]:
    """Logit starting values: theta from model accuracy, beta from question accuracy.

    Accuracies are clipped to [0.02, 0.98]; ``beta0 = mean(theta0) -
    logit(question accuracy)``; a question with no observed cell starts at
    0, the minimum of its only term, the penalty. Both are clipped into
    ``[low, high]``.
    """
    if w is None:
        acc_model = y.mean(axis=0)
        acc_question = y.mean(axis=1)
    else:
        n_model = w.sum(axis=0)
        n_question = w.sum(axis=1)
        acc_model = y.sum(axis=0) / n_model
        acc_question = np.divide(
            y.sum(axis=1), n_question, out=np.full(len(y), np.nan), where=n_question > 0
        )

    def logit(p: FloatArray) -> FloatArray:
        p = np.clip(p, 0.02, 0.98)
        return np.log(p / (1.0 - p))

    theta0 = logit(acc_model)
    beta0 = theta0.mean() - logit(acc_question)
    beta0[np.isnan(acc_question)] = 0.0
    return np.clip(theta0, low, high), np.clip(beta0, low, high)


def _curvature_scale(
    theta: FloatArray, beta: FloatArray, a: FloatArray | None, w: FloatArray | None, l2: float
) -> FloatArray:
    """Diagonal preconditioner: square roots of the objective's Hessian diagonal.

    Evaluated at the start values: with ``v = w p (1 - p)``,
    ``theta_m: sum_q a_q^2 v``, ``beta_q: a_q^2 sum_m v``,
    ``a_q: sum_m v (theta_m - beta_q)^2``, each plus ``2 l2`` and floored at
    1e-4 (a question with no observed cell and ``l2 = 0`` has curvature 0).
    Returns the scales for ``[theta, beta]``, or ``[theta, beta, a]`` when
    ``a`` is not None.
    """
    diff = theta[None, :] - beta[:, None]
    slope = np.ones_like(beta) if a is None else a
    p = 1.0 / (1.0 + np.exp(-slope[:, None] * diff))
    v = p * (1.0 - p)
    if w is not None:
        v *= w
    parts = [(slope**2) @ v, slope**2 * v.sum(axis=1)]
    if a is not None:
        parts.append(np.einsum("qm,qm->q", v, diff * diff))
    return np.sqrt(np.maximum(np.concatenate(parts) + 2.0 * l2, 1e-4))


def _fit_jml(
    method: str,
    objective: _Objective,
    x0: FloatArray,
    scale: FloatArray,
    lo: FloatArray,
    hi: FloatArray,
    y: FloatArray,
    w: FloatArray | None,
    l2: float,
    n_work: int,
    max_iter: int,
    tol: float,
) -> tuple[OptimizeResult, FloatArray, BoolArray, float]:
    """Minimise ``objective`` with L-BFGS-B in rescaled coordinates ``u = x * scale``.

    The change of variables leaves the problem, its bounds (a box stays a
    box) and its optimum unchanged; it only evens out the curvature, which
    differs by three orders of magnitude between abilities (thousands of
    questions each) and difficulties (tens of models each).
    """
    from scipy.optimize import Bounds, minimize  # here: scipy.optimize costs ~0.4 s to import

    work = [np.empty_like(y) for _ in range(n_work)]

    def scaled(u: FloatArray) -> tuple[float, FloatArray]:
        f, g = objective(u / scale, y, w, l2, work)
        return f, g / scale

    with _one_blas_thread():
        res = minimize(
            scaled,
            x0 * scale,
            method="L-BFGS-B",
            jac=True,
            bounds=Bounds(lo * scale, hi * scale),
            options={"maxiter": max_iter, "maxfun": 20 * max_iter, "ftol": tol, "gtol": tol},
        )
    x = np.asarray(res.x, dtype=np.float64) / scale
    if not (np.all(np.isfinite(x)) and np.isfinite(res.fun)):
        raise FloatingPointError(
            NON_FINITE_MESSAGE.format(method=method, n_iter=res.nit, message=res.message)
        )
    x = np.clip(x, lo, hi)  # undo rounding in the division by scale
    g = np.asarray(res.jac, dtype=np.float64) * scale
    lower = x <= lo + AT_BOUND_ATOL
    upper = x >= hi - AT_BOUND_ATOL
    # Projected gradient: a component pushing further past its bound is 0.
    projected = np.where((lower & (g > 0)) | (upper & (g < 0)), 0.0, g)
    return res, x, lower | upper, float(np.max(np.abs(projected), initial=0.0))


# ---------------------------------------------------------------------------
# 2PL by projected Newton with a structured Hessian

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


def _validate_jml(
    R: ArrayLike, l2: float, bounds: tuple[float, float], max_iter: int, tol: float
) -> tuple[ResponseArray, float, float, float, int, float]:
    checked = check_response_matrix(R)
    l2 = _check_l2(l2)
    low, high = _check_bounds(bounds, name="bounds")
    max_iter = check_positive_int(max_iter, name="max_iter")
    tol = check_positive(tol, name="tol")
    return checked, l2, low, high, max_iter, tol


def irt_1pl(
    R: ArrayLike,
    *,
    l2: float = 0.01,
    bounds: tuple[float, float] = (-5.0, 5.0),
    max_iter: int = 1000,
    tol: float = 1e-9,
) -> IRTResult:
    """Fit the 1PL (Rasch) model by penalised joint maximum likelihood.

    ``P(model m answers question q) = sigmoid(theta_m - beta_q)``. Abilities
    and difficulties are found together by minimising

    ``sum_obs -[y log p + (1 - y) log(1 - p)] + l2 * (|theta|^2 + |beta|^2)``

    with L-BFGS-B and the analytic gradient, within ``bounds``.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only). bool or
        integer 0/1 matrices are taken as fully observed.
    l2 : float, default 0.01
        L2 penalty on abilities and difficulties (>= 0). It also fixes the
        location of the scale, which the likelihood leaves free.
    bounds : (float, float), default (-5, 5)
        Box for every ability and difficulty, in logits.
    max_iter : int, default 1000
        Most L-BFGS-B iterations (function evaluations are capped at
        ``20 * max_iter``).
    tol : float, default 1e-9
        L-BFGS-B's ``ftol`` and ``gtol`` (as ``scipy.optimize.minimize(tol=)``
        sets them): stop when the relative decrease of the objective,
        ``(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)``, is at most ``tol``
        (in practice the test that fires), or when the max-norm of the
        projected gradient in the rescaled coordinates of the Notes is.

    Returns
    -------
    IRTResult
        ``ability`` (n_models,) and ``difficulty`` (n_questions,) in logits
        (higher difficulty = harder); ``discrimination`` all 1.0;
        ``ability_scaled`` on 0-100; convergence flags and at-bound masks.

    Raises
    ------
    ValueError
        If ``R`` fails :func:`scoring._validation.check_response_matrix`,
        ``l2`` is negative or not finite, ``bounds`` is not an increasing
        finite pair, ``max_iter`` is not an integer >= 1 or ``tol`` is not
        positive.
    FloatingPointError
        If the optimiser returns a non-finite estimate or objective.

    See Also
    --------
    irt_2pl : adds a discrimination per question.

    Notes
    -----
    Partial credit ``y`` in (0, 1) enters as ``y log p + (1 - y) log(1 - p)``:
    a Bernoulli quasi-likelihood (not the likelihood of any model for
    fractional data), minimised where ``p = y``. NaN cells contribute no
    term. A question with no observed cell starts and stays at difficulty
    0, the minimum of its only term, the penalty.

    This is joint maximum likelihood: with few models per question or few
    questions per model the estimates are biased outward, and a model (or
    question) with all-correct or all-wrong responses has no finite
    unpenalised optimum; the penalty and the bounds keep it finite, and
    ``ability_at_bound``/``difficulty_at_bound`` flag estimates on a bound.
    Start values are the logits of the clipped per-model and per-question
    accuracies. L-BFGS-B runs on the parameters multiplied by the square
    root of the objective's Hessian diagonal at the start values (a diagonal
    preconditioner; a box stays a box, so the bounds and the optimum are
    unchanged). Abilities see thousands of cells and difficulties tens, so
    without it the problem is badly conditioned (on a 35,550 x 30 matrix:
    7 iterations instead of 170). Non-finite estimates raise instead of
    being returned, so ``converged`` is L-BFGS-B's success flag on finite
    estimates.

    References
    ----------
    EIP paper, appendix H.4 (1PL IRT: L-BFGS-B, at most 1000 iterations,
    L2 = 0.01 on theta and beta, bounds [-5, 5]); section 3.4, table 3
    (timing on 35,550 x 30); section 4, table 6 (simulated case study).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    >>> fit = irt_1pl(R)
    >>> bool(fit.converged), np.argsort(fit.difficulty).tolist()
    (True, [0, 1, 2])
    """
    R, l2, low, high, max_iter, tol = _validate_jml(R, l2, bounds, max_iter, tol)
    y, w = _targets_and_weights(R)
    n_questions, n_models = y.shape
    theta0, beta0 = _start_values(y, w, low, high)
    n_params = n_models + n_questions
    res, x, at_bound, pg = _fit_jml(
        "irt_1pl",
        _objective_1pl,
        np.concatenate([theta0, beta0]),
        _curvature_scale(theta0, beta0, None, w, l2),
        np.full(n_params, low),
        np.full(n_params, high),
        y, w, l2, 3, max_iter, tol,
    )
    theta, beta = x[:n_models], x[n_models:]
    return IRTResult(
        ability=theta,
        ability_scaled=_minmax_0_100(theta),
        difficulty=beta,
        discrimination=np.ones(n_questions),
        converged=bool(res.success),
        n_iter=int(res.nit),
        objective=float(res.fun),
        projected_gradient=pg,
        message=str(res.message),
        ability_at_bound=at_bound[:n_models],
        difficulty_at_bound=at_bound[n_models:],
        discrimination_at_bound=np.zeros(n_questions, dtype=bool),
    )


def irt_2pl(
    R: ArrayLike,
    *,
    l2: float = 0.01,
    bounds: tuple[float, float] = (-5.0, 5.0),
    discrimination_bounds: tuple[float, float] = (0.1, 5.0),
    max_iter: int = 1000,
    tol: float = 1e-9,
) -> IRTResult:
    """Fit the 2PL model by penalised joint maximum likelihood.

    ``P(model m answers question q) = sigmoid(a_q (theta_m - beta_q))``.
    Abilities, difficulties and discriminations are found together by
    minimising

    ``sum_obs -[y log p + (1 - y) log(1 - p)]
    + l2 * (|theta|^2 + |beta|^2 + |a - 1|^2)``

    within the bounds, by a projected Newton method on the exact Hessian
    (see Notes).

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only). bool or
        integer 0/1 matrices are taken as fully observed.
    l2 : float, default 0.01
        L2 penalty on abilities, difficulties and ``a - 1`` (>= 0).
    bounds : (float, float), default (-5, 5)
        Box for every ability and difficulty, in logits.
    discrimination_bounds : (float, float), default (0.1, 5)
        Box for every discrimination; ``low`` must be > 0 so that higher
        difficulty always means harder.
    max_iter : int, default 1000
        Most Newton iterations (each: one gradient and Hessian, and one or
        a few objective evaluations in the line search).
    tol : float, default 1e-9
        Stop when the max-norm of the projected gradient (the gradient with
        the components that push a variable at a bound further out set to
        0) is at most ``tol``, in the objective's own units (not scaled by
        the problem size). Reached in 9-13 iterations on 35,550 x 30 and
        MMLU-Pro; the rounding floor of the gradient there is ~1e-12.

    Returns
    -------
    IRTResult
        ``ability`` (n_models,), ``difficulty`` (n_questions,) in logits
        (higher difficulty = harder), ``discrimination`` (n_questions,),
        ``ability_scaled`` on 0-100, convergence flags and at-bound masks.

    Raises
    ------
    ValueError
        As :func:`irt_1pl`, and if ``discrimination_bounds`` is not a finite
        pair with ``0 < low < high``.
    FloatingPointError
        If the objective or its gradient becomes non-finite
        (``NEWTON_NON_FINITE_MESSAGE``).

    Notes
    -----
    The fit does not raise when it stops early: ``converged`` is False and
    ``message`` says why: ``max_iter`` reached (``"ITERATIONS REACHED
    LIMIT ..."``) or no decrease along either the Newton or the gradient
    direction (``"LINE SEARCH FAILED ..."``); ``projected_gradient`` gives
    the residual. Callers store the flag with the result.

    Method: projected Newton (Bertsekas 1982). The Hessian has a structure
    a general optimiser ignores: abilities couple only through questions,
    so the ability block is diagonal, and each question's (difficulty,
    discrimination) pair forms its own 2x2 block. Eliminating the 2x2
    blocks leaves an n_models x n_models Schur complement, so a Newton step
    costs a few passes over the cells and one (n_models x 2 n_questions)
    x (2 n_questions x n_models) product: about as much as three gradient
    evaluations. Variables within ``min(1e-3, |x - clip(x - g)|)`` of a
    bound and pushed outward by the gradient are fixed for the step and
    sent to the bound; the others take the Newton step, and an Armijo
    backtracking search along ``clip(x + t step)`` from t = 1 keeps each
    step a decrease. Where the exact Hessian is not positive definite
    (away from the optimum the likelihood is not convex in ``(a, theta,
    beta)`` jointly), the step uses the Gauss-Newton (Fisher) matrix,
    positive definite for ``l2 > 0``, with a ridge if needed. Near the
    optimum the exact Hessian gives quadratic convergence: on 35,550 x 30
    it stops in 11 iterations with a projected gradient of 1e-12 and a
    lower objective than L-BFGS-B reached after ~200 iterations (which
    stopped on its relative-reduction test at a projected gradient of
    ~0.15), 7-10x faster, and faster than the ``mirt`` package's
    marginal-ML EM on the same matrices (``python -m bench irt``).

    Partial credit enters as a Bernoulli quasi-likelihood, NaN cells
    contribute nothing, and the joint-ML caveats of :func:`irt_1pl` apply;
    with few models per question, discriminations are poorly determined and
    often end on a bound (a question that splits the models perfectly has
    no finite unpenalised discrimination); such flat directions are what
    made first-order methods slow here. A question with no observed cell
    stays at difficulty 0 and discrimination 1, the minimum of its only
    term, the penalty. Start values: the 1PL logit start values and
    ``a = 1``.

    References
    ----------
    EIP paper, appendix H.4 (2PL IRT: L-BFGS-B, at most 1000 iterations,
    L2 = 0.01 on theta, beta and (alpha - 1), bounds [-5, 5] and [0.1, 5]:
    the same objective and bounds, minimised here by a faster method);
    section 3.4, table 3; section 4, table 6.
    D. P. Bertsekas, "Projected Newton methods for optimization problems
    with simple constraints", SIAM J. Control Optim. 20(2), 221-246, 1982.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    >>> fit = irt_2pl(R)
    >>> bool(fit.converged), np.argsort(fit.difficulty).tolist()
    (True, [0, 1, 2])
    """
    R, l2, low, high, max_iter, tol = _validate_jml(R, l2, bounds, max_iter, tol)
    a_low, a_high = _check_discrimination_bounds(discrimination_bounds)
    y, w = _targets_and_weights(R)
    n_questions, n_models = y.shape
    theta0, beta0 = _start_values(y, w, low, high)
    a0 = np.full(n_questions, np.clip(1.0, a_low, a_high))
    n_params = n_models + n_questions
    lo = np.concatenate([np.full(n_params, low), np.full(n_questions, a_low)])
    hi = np.concatenate([np.full(n_params, high), np.full(n_questions, a_high)])
    with _one_blas_thread():
        x, f, g, n_iter, converged, message = _newton_2pl(
            y, w, l2, np.concatenate([theta0, beta0, a0]), lo, hi, max_iter, tol
        )
    pg, at_bound = _projected_gradient(x, g, lo, hi)
    theta = x[:n_models]
    beta = x[n_models:n_models + n_questions]
    a = x[n_models + n_questions:]
    return IRTResult(
        ability=theta,
        ability_scaled=_minmax_0_100(theta),
        difficulty=beta,
        discrimination=a,
        converged=converged,
        n_iter=n_iter,
        objective=f,
        projected_gradient=pg,
        message=message,
        ability_at_bound=at_bound[:n_models],
        difficulty_at_bound=at_bound[n_models:n_models + n_questions],
        discrimination_at_bound=at_bound[n_models + n_questions:],
    )


# ---------------------------------------------------------------------------
# Multidimensional IRT by variational inference


#: dtype of MIRT's per-cell arrays (logits, their loss terms and derivatives). float32, as the paper's
#: PyTorch fit: with AVX2, numpy's float32 exp and log are vectorised (8 lanes) and the
#: float64 ones are not, so an epoch costs about half; the ELBO of one sample is noisier than the
#: rounding by orders of magnitude. Parameters, Adam's moments, gradients and every sum are float64.
_MIRT_CELL_DTYPE = np.float32


def _mirt_elbo_and_grad(
    mu_theta: FloatArray,
    mu_a: FloatArray,
    mu_b: FloatArray,
    eps_theta: FloatArray,
    eps_a: FloatArray,
    eps_b: FloatArray,
    y: FloatArray,
    w: FloatArray | None,
    work: Sequence[FloatArray] | None = None,
) -> tuple[float, FloatArray, FloatArray, FloatArray]:
    """One-sample ELBO estimate and its gradient with respect to the means.

    Samples ``theta = mu_theta + eps_theta`` (n_models, D),
    ``a = mu_a + eps_a`` (n_questions, D), ``b = mu_b + eps_b``
    (n_questions,); logits ``z = a @ theta.T - b[:, None]`` (n_questions,
    n_models). ELBO = ``sum_obs [y z - softplus(z)]
    - 0.5 * (|mu_theta|^2 + |mu_a|^2 + |mu_b|^2)`` (KL of N(mu, 1) to
    N(0, 1) is exactly 0.5 mu^2 per parameter). Reparameterisation makes
    d(sample)/d(mu) the identity. ``work``, if given, is three scratch
    arrays shaped like ``y``.
    """
    if work is None:
        work = (np.empty_like(y), np.empty_like(y), np.empty_like(y))
    n_dims = mu_theta.shape[1]
    # Augmented factors: [a, b] @ [theta, -1]^T = a theta^T - b in one product,
    # and dz @ [theta, -1] gives dz @ theta and -sum(dz, axis=1) together.
    # The cell arrays have the dtype of ``y`` (float32 in irt_mirt: see _MIRT_CELL_DTYPE); the
    # parameters, their gradients and every sum stay float64.
    theta = np.empty((len(mu_theta), n_dims + 1), dtype=y.dtype)
    np.add(mu_theta, eps_theta, out=theta[:, :n_dims])
    theta[:, n_dims] = -1.0
    a = np.empty((len(mu_a), n_dims + 1), dtype=y.dtype)
    np.add(mu_a, eps_a, out=a[:, :n_dims])
    np.add(mu_b, eps_b, out=a[:, n_dims])
    z = np.matmul(a, theta.T, out=work[0])
    yz = float(np.sum((y @ theta) * a, dtype=np.float64))  # sum(y * z) through a (n_questions, D + 1) product
    nll, dz = _mirt_nll_terms(z, y, w, work[1:3], yz)  # dz = d(nll)/dz = w (sigmoid(z) - y)
    kl = 0.5 * float(np.sum(mu_theta**2) + np.sum(mu_a**2) + mu_b @ mu_b)
    elbo = -nll - kl
    g_theta = -(dz.T @ a[:, :n_dims]).astype(np.float64) - mu_theta
    back = (dz @ theta).astype(np.float64)  # columns: dz @ theta_sample, then -sum(dz, axis=1)
    g_a = -back[:, :n_dims] - mu_a
    g_b = -back[:, n_dims] - mu_b
    return elbo, g_theta, g_a, g_b


def _adam_ascent(
    params: list[FloatArray],
    trace: FloatArray,
    gen: np.random.Generator,
    learning_rate: float,
    y: FloatArray,
    w: FloatArray | None,
    work: Sequence[FloatArray],
) -> None:
    """Full-batch Adam on the one-sample ELBO, updating ``params`` in place.

    One epoch per entry of ``trace`` (filled with the ELBO estimates). Each
    epoch draws ``eps_theta``, ``eps_a``, ``eps_b`` from ``gen`` in that order.
    """
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for t in range(1, len(trace) + 1):
        eps = [gen.standard_normal(p.shape) for p in params]
        elbo, *grads = _mirt_elbo_and_grad(params[0], params[1], params[2], eps[0], eps[1], eps[2], y, w, work)
        trace[t - 1] = elbo
        correction1 = 1.0 - _ADAM_BETA1**t
        correction2 = 1.0 - _ADAM_BETA2**t
        for p, g, m, v in zip(params, grads, first, second):
            m *= _ADAM_BETA1
            m += (1.0 - _ADAM_BETA1) * g
            v *= _ADAM_BETA2
            v += (1.0 - _ADAM_BETA2) * g * g
            # Bias-corrected Adam, ascending the ELBO.
            p += learning_rate * (m / correction1) / (np.sqrt(v / correction2) + _ADAM_EPS)


def _mirt_converged(trace: FloatArray) -> bool:
    if not np.all(np.isfinite(trace)):
        return False
    window = len(trace) // 10
    if window < 1:
        return False
    last = trace[-window:].mean()
    previous = trace[-2 * window:-window].mean()
    return bool(abs(last - previous) <= MIRT_ELBO_BAND * abs(last))


def irt_mirt(
    R: ArrayLike,
    *,
    n_dims: int = 3,
    epochs: int = 1000,
    learning_rate: float = 0.01,
    rng: np.random.Generator | int | None = 0,
) -> MIRTResult:
    """Fit a multidimensional IRT model by mean-field variational inference.

    ``P(model m answers question q) = sigmoid(a_q . theta_m - b_q)`` with
    ``theta_m, a_q`` in R^D and ``b_q`` scalar. Every parameter has a
    N(0, 1) prior and a Normal variational posterior with a learnable mean
    and a fixed standard deviation of 1. The means maximise the ELBO with
    full-batch Adam (beta1 0.9, beta2 0.999, eps 1e-8); each epoch draws one
    reparameterised sample of every parameter for the expected
    log-likelihood and uses the closed-form KL ``0.5 * mu^2`` per parameter.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only). bool or
        integer 0/1 matrices are taken as fully observed.
    n_dims : int, default 3
        Latent dimensions D (>= 1).
    epochs : int, default 1000
        Adam steps (>= 1), one Monte Carlo sample each.
    learning_rate : float, default 0.01
        Adam step size (> 0).
    rng : numpy.random.Generator, int or None, default 0
        Source of the initial means (N(0, 0.1^2)) and the per-epoch noise.
        Draw order: initial ``mu_theta``, ``mu_a``, ``mu_b``; then per epoch
        ``eps_theta``, ``eps_a``, ``eps_b``. The same seed gives the same
        result bit for bit on the same machine and numpy version.

    Returns
    -------
    MIRTResult
        ``ability`` (n_models,) on 0-100 (norm of the ability vector),
        ``ability_vectors`` (n_models, D), ``difficulty`` (n_questions,)
        (higher = harder), ``discrimination`` (n_questions, D),
        ``elbo_trace`` (epochs,), ``converged`` (a heuristic) and ``seed``.

    Raises
    ------
    ValueError
        If ``R`` fails :func:`scoring._validation.check_response_matrix`,
        ``n_dims`` or ``epochs`` is not an integer >= 1, ``learning_rate``
        is not a positive finite number or ``rng`` is not a Generator, int
        or None.
    FloatingPointError
        If a posterior mean becomes non-finite.

    Notes
    -----
    ``ability`` is the L2 norm of the posterior-mean ability vector, as in
    the paper. The norm ignores direction: a model whose vector points
    against the questions' discriminations (so it answers less often) scores
    as high as one of the same length pointing with them, and weak models
    far out on the "wrong" side get large norms. The score therefore need
    not order models by how well they answer; this is why the paper found
    the Multi-IRT ranking diverging from the ground truth (section 4).

    With the posterior standard deviation fixed at 1 (not learned), the
    sampled logits carry much noise, the ELBO estimate is noisy and the
    means are shrunk towards 0; no attempt is made to fix either, since this
    is the paper's configuration. ``converged`` is only a heuristic: all
    ELBO values finite and ``|mean(last 10%) - mean(previous 10%)| <= 0.01 *
    |mean(last 10%)|`` over the ELBO trace; fewer than 10 epochs never
    count as converged. ``difficulty`` of a question with no observed cell
    is driven only by the prior and ends near 0.

    The per-cell arrays of each epoch (logits, loss terms, derivatives) are
    float32, as in the paper's PyTorch fit; the parameters, Adam's moments,
    the gradients and every sum are float64. On 12,032 x 32 an epoch costs
    about 0.6x the all-float64 one here, and the fits agree to ~1e-7 in
    difficulty after 200 epochs (the one-sample ELBO's own noise is far
    larger).

    References
    ----------
    EIP paper, appendix H.4 (Multi-IRT: D = 3, 1000 epochs, Adam, learning
    rate 0.01, N(0, 1) priors, mean-field Normal posteriors with fixed
    standard deviation 1, ELBO, ability = min-max scaled L2 norm); section
    3.4, table 3; section 4, table 6.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=bool)
    >>> fit = irt_mirt(R, epochs=50, rng=0)
    >>> fit.ability.shape, fit.discrimination.shape, float(fit.ability.max())
    ((3,), (3, 3), 100.0)
    """
    R = check_response_matrix(R)
    n_dims = check_positive_int(n_dims, name="n_dims")
    epochs = check_positive_int(epochs, name="epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    if isinstance(rng, np.random.Generator):
        seed = None
        gen = rng
    elif rng is None:
        # Without an argument SeedSequence draws an int from OS entropy.
        seed = int(cast(int, np.random.SeedSequence().entropy))
        gen = np.random.default_rng(seed)
    else:
        gen = as_rng(rng)
        seed = int(rng)
    y, w = _targets_and_weights(R)
    y = y.astype(_MIRT_CELL_DTYPE)
    w = None if w is None else w.astype(_MIRT_CELL_DTYPE)
    n_questions, n_models = y.shape
    params: list[FloatArray] = [
        gen.normal(0.0, _MIRT_INIT_SCALE, size=(n_models, n_dims)),
        gen.normal(0.0, _MIRT_INIT_SCALE, size=(n_questions, n_dims)),
        gen.normal(0.0, _MIRT_INIT_SCALE, size=(n_questions,)),
    ]
    trace = np.empty(epochs)
    work = (np.empty_like(y), np.empty_like(y), np.empty_like(y))
    with _one_blas_thread():
        _adam_ascent(params, trace, gen, learning_rate, y, w, work)
    mu_theta, mu_a, mu_b = params
    if not all(np.all(np.isfinite(p)) for p in params):
        raise FloatingPointError(MIRT_NON_FINITE_MESSAGE.format(epochs=epochs))
    return MIRTResult(
        ability=_minmax_0_100(np.linalg.norm(mu_theta, axis=1)),
        ability_vectors=mu_theta,
        difficulty=mu_b,
        discrimination=mu_a,
        elbo_trace=trace,
        n_iter=epochs,
        converged=_mirt_converged(trace),
        seed=seed,
    )
