"""1PL and 2PL IRT by marginal maximum likelihood (Bock-Aitkin EM).

The paper's IRT baselines (:mod:`scoring.irt`, appendix H.4) are joint
maximum likelihood (JML) fits: abilities and item parameters are estimated
together. Psychometric software (mirt, ltm, girth's MML) instead integrates
the abilities out over a standard normal prior and maximises the *marginal*
likelihood of the item parameters by EM (Bock and Aitkin 1981). The two give
different numbers on the same data; JML is inconsistent when each person
answers few items (LSAT-7: JML pushes two discriminations to their bound).
This module gives the psychometric reading beside the paper's.

Orientation as everywhere in :mod:`scoring`: ``R`` has shape
``(n_questions, n_models)``; the questions are the *items* and the models
the *persons* whose abilities are integrated out.

The model: ``P(model m answers question q) = sigmoid(a_q (theta_m - b_q))``,
``theta_m ~ N(0, 1)``. :func:`irt_2pl_mml` estimates a discrimination
``a_q`` and a difficulty ``b_q`` per question; :func:`irt_1pl_mml` one
common discrimination ``a`` (with the N(0, 1) prior this is the Rasch model
with an estimated ability variance ``a^2``) and ``b_q`` per question.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike

from scoring._typing import BoolArray, FloatArray, IndexArray
from scoring._validation import check_positive, check_positive_int, check_response_matrix
from scoring.exceptions import ConvergenceError, NonFiniteError
from scoring.irt import _one_blas_thread, _targets_and_weights

__all__ = ["MMLResult", "irt_1pl_mml", "irt_2pl_mml", "mml_log_likelihood"]

BOUNDS_MESSAGE = "{name} must be a pair (low, high) of finite numbers with {rule}; got {value!r}"
QUADRATURE_MESSAGE = "n_quadrature must be an integer >= 3; got {value!r}"
SHAPE_MESSAGE = "{name} must have shape ({n},) to match R's {n} questions; got shape {shape}"
PARAMETER_MESSAGE = "{name} must hold finite numbers{rule}; got {bad!r} at position {index}"

#: A parameter within this distance of a bound is reported as sitting on it.
AT_BOUND_ATOL = 1e-6
#: Posterior weights below this are left out of the standard errors' score covariance.
_POSTERIOR_FLOOR = 1e-12
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


@dataclass(frozen=True)
class MMLResult:
    """A 1PL or 2PL model fitted by marginal maximum likelihood.

    Attributes
    ----------
    difficulty : ndarray of shape (n_questions,)
        Difficulties ``b`` in logits (the ability scale of the N(0, 1)
        prior); higher means harder.
    discrimination : ndarray of shape (n_questions,)
        Discriminations ``a`` per logit; the 1PL's one common value repeated.
    intercept : ndarray of shape (n_questions,)
        ``d = -a b``, mirt's slope-intercept form (``logit = a theta + d``).
    difficulty_se, discrimination_se : ndarray of shape (n_questions,)
        Standard errors from the observed information (Louis 1982); NaN for
        a parameter on a bound, for a question with no observed cell, and
        everywhere when the information is not positive definite. The 1PL's
        ``discrimination_se`` is the common slope's, repeated.
    ability : ndarray of shape (n_models,)
        Expected a posteriori (EAP) abilities, logits.
    ability_sd : ndarray of shape (n_models,)
        Posterior standard deviations of the abilities.
    ability_scaled : ndarray of shape (n_models,)
        ``ability`` min-max scaled to [0, 100]; all 50.0 when all are equal.
    log_likelihood : float
        Marginal log-likelihood at the returned parameters (quadrature of
        :func:`mml_log_likelihood`).
    n_iter : int
        EM iterations performed.
    converged : bool
        Always True (a fit that does not converge raises).
    log_likelihood_change : float
        ``|change|`` of the marginal log-likelihood in the last iteration.
    parameter_change : float
        Largest ``|change|`` of any ``a`` or ``b`` in the last iteration.
    difficulty_at_bound, discrimination_at_bound : ndarray of bool, shape (n_questions,)
        Estimates within ``AT_BOUND_ATOL`` (1e-6) of a bound.
    nodes, weights : ndarray of shape (n_quadrature,)
        The quadrature: ability nodes and prior weights (sum to 1).
    """

    difficulty: FloatArray
    discrimination: FloatArray
    intercept: FloatArray
    difficulty_se: FloatArray
    discrimination_se: FloatArray
    ability: FloatArray
    ability_sd: FloatArray
    ability_scaled: FloatArray
    log_likelihood: float
    n_iter: int
    converged: bool
    log_likelihood_change: float
    parameter_change: float
    difficulty_at_bound: BoolArray
    discrimination_at_bound: BoolArray
    nodes: FloatArray
    weights: FloatArray


# ---------------------------------------------------------------------------
# validation


def _check_pair(value: Iterable[float], *, name: str, positive: bool) -> tuple[float, float]:
    rule = "0 < low < high" if positive else "low < high"
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(BOUNDS_MESSAGE.format(name=name, rule=rule, value=value)) from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high and (low > 0 or not positive)):
        raise ValueError(BOUNDS_MESSAGE.format(name=name, rule=rule, value=value))
    return low, high


def _check_quadrature(n_quadrature: object) -> int:
    if isinstance(n_quadrature, bool) or not isinstance(n_quadrature, int | np.integer) or n_quadrature < 3:
        raise ValueError(QUADRATURE_MESSAGE.format(value=n_quadrature))
    return int(n_quadrature)


def _quadrature(n_quadrature: int, theta_range: tuple[float, float]) -> tuple[FloatArray, FloatArray]:
    """Equally spaced nodes over ``theta_range`` and N(0, 1) density weights summing to 1."""
    nodes = np.linspace(theta_range[0], theta_range[1], n_quadrature)
    log_w = -0.5 * nodes * nodes
    weights = np.exp(log_w - log_w.max())
    return nodes, weights / weights.sum()


# ---------------------------------------------------------------------------
# kernels (clean input assumed)


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


# ---------------------------------------------------------------------------
# standard errors (Louis 1982)


def _louis_standard_errors(
    y: FloatArray, w: FloatArray | None, a: FloatArray, b: FloatArray, common_slope: bool,
    nodes: FloatArray, posterior: FloatArray, free_a: BoolArray, free_b: BoolArray,
) -> tuple[FloatArray, FloatArray]:
    """Standard errors of (a, b) from Louis' observed information.

    ``I_obs = I_complete - sum_m Cov_m(s_m)``: the expected complete-data
    information minus, per model, the posterior covariance of its
    complete-data score. ``I_complete`` is block diagonal (2PL: a 2x2
    block per question) or, for the 1PL's common slope, an arrowhead,
    written as a diagonal plus two signed rank-one terms. The score
    covariances are ``U U^T`` with one column per (model, node) of
    posterior weight >= ``_POSTERIOR_FLOOR``. ``I_obs^{-1}``'s diagonal is
    found directly when there are fewer parameters than columns, else by the
    Woodbury identity. Parameters not free (on a bound, no data) get NaN.
    """
    n_questions, n_models = y.shape
    n, r = _expected_counts(y, w, posterior)
    h = _item_derivatives(a, b, nodes, n, r)
    d = nodes[None, :] - b[:, None]
    p = _sigmoid(a[:, None] * d)
    nan_a, nan_b = np.full(n_questions, np.nan), np.full(n_questions, np.nan)
    # Complete-data information: the exact Hessian of sum n softplus(z) - r z in (a, b).
    c_aa, c_bb, c_ab = h.h_aa, h.h_bb, h.h_ab - h.res_sum
    # Columns of U: sqrt(pi_mk) (s_mk - mean_k s_mk), s_mk = d(loglik_m at node k)/d(a, b).
    cols_a, cols_b = [], []
    for m in range(n_models):
        keep = np.flatnonzero(posterior[m] >= _POSTERIOR_FLOOR)
        pi = posterior[m, keep] / posterior[m, keep].sum()
        resid = y[:, m, None] - p[:, keep]
        if w is not None:
            resid *= w[:, m, None]
        s_a = resid * d[:, keep]  # d loglik / d a_q
        s_b = -a[:, None] * resid  # d loglik / d b_q
        s_a -= (s_a @ pi)[:, None]
        s_b -= (s_b @ pi)[:, None]
        root = np.sqrt(pi)[None, :]
        cols_a.append(s_a * root)
        cols_b.append(s_b * root)
    ua, ub = np.hstack(cols_a), np.hstack(cols_b)
    if common_slope:
        ia = np.flatnonzero(free_b)
        ua_row = ua.sum(axis=0, keepdims=True)  # the common slope's score sums over questions
        blocks_diag = np.concatenate([[c_aa.sum()], c_bb[ia]])
        arrow = np.concatenate([[0.0], c_ab[ia]])
        u = np.vstack([ua_row, ub[ia]])
        keep_rows = np.concatenate([[bool(free_a.all())], np.ones(len(ia), dtype=bool)])
        blocks_diag, arrow, u = blocks_diag[keep_rows], arrow[keep_rows], u[keep_rows]
        if keep_rows[0]:
            e0 = np.zeros(len(blocks_diag))
            e0[0] = 1.0
            # I = diag + (e0 arrow^T + arrow e0^T) - U U^T = diag - V S V^T.
            v_cols = np.column_stack([e0 + arrow, e0 - arrow, u])
            signs = np.concatenate([[-0.5, 0.5], np.ones(u.shape[1])])
        else:
            v_cols, signs = u, np.ones(u.shape[1])
        var = _diag_inverse(blocks_diag[:, None, None], v_cols, signs)
        if var is None:
            return nan_a, nan_b
        if keep_rows[0]:
            nan_a[:] = np.sqrt(var[0]) if var[0] > 0 else np.nan
            var = var[1:]
        nan_b[ia] = np.where(var > 0, np.sqrt(np.maximum(var, 0.0)), np.nan)
        return nan_a, nan_b
    # 2PL: questions with both parameters free form 2x2 blocks; a fixed parameter drops out.
    rows_a = np.flatnonzero(free_a)
    rows_b = np.flatnonzero(free_b)
    order = np.concatenate([rows_a * 2, rows_b * 2 + 1])
    sort = np.argsort(order, kind="stable")
    index = order[sort]  # 2 q (+1 for b), ascending
    n_free = len(index)
    if n_free == 0:
        return nan_a, nan_b
    u = np.vstack([ua[rows_a], ub[rows_b]])[sort]
    question = index // 2
    is_b = index % 2 == 1
    # Group the free parameters into blocks: a question's (a, b) pair when both are free.
    blocks: list[FloatArray] = []
    sizes = []
    i = 0
    while i < n_free:
        q = question[i]
        if i + 1 < n_free and question[i + 1] == q:
            blocks.append(np.array([[c_aa[q], c_ab[q]], [c_ab[q], c_bb[q]]]))
            sizes.append(2)
            i += 2
        else:
            blocks.append(np.array([[c_bb[q] if is_b[i] else c_aa[q]]]))
            sizes.append(1)
            i += 1
    var = _diag_inverse_blocks(blocks, sizes, u, np.ones(u.shape[1]))
    if var is None:
        return nan_a, nan_b
    se = np.where(var > 0, np.sqrt(np.maximum(var, 0.0)), np.nan)
    nan_a[question[~is_b]] = se[~is_b]
    nan_b[question[is_b]] = se[is_b]
    return nan_a, nan_b


def _diag_inverse(diag_blocks: FloatArray, v: FloatArray, signs: FloatArray) -> FloatArray | None:
    """Diagonal of ``(B - V diag(signs) V^T)^{-1}`` for a diagonal ``B`` (shape (n, 1, 1))."""
    sizes = [1] * len(diag_blocks)
    return _diag_inverse_blocks(list(diag_blocks), sizes, v, signs)


def _diag_inverse_blocks(
    blocks: list[FloatArray], sizes: list[int], v: FloatArray, signs: FloatArray
) -> FloatArray | None:
    """Diagonal of ``(B - V S V^T)^{-1}``, ``B`` block diagonal (1x1 and 2x2 blocks), ``S = diag(signs)``.

    None when the matrix is singular or an inverse is not finite.
    """
    n = v.shape[0]
    if n <= v.shape[1]:  # direct: n x n
        full = np.zeros((n, n))
        i = 0
        for block, size in zip(blocks, sizes):
            full[i:i + size, i:i + size] = block
            i += size
        full -= (v * signs[None, :]) @ v.T
        try:
            inv = np.linalg.inv(full)
        except np.linalg.LinAlgError:
            return None
        diag = np.diag(inv).copy()
        return diag if np.all(np.isfinite(diag)) else None
    # Woodbury: (B - V S V^T)^{-1} = B^-1 + B^-1 V (S^-1 - V^T B^-1 V)^-1 V^T B^-1.
    b_inv_v = np.empty_like(v)
    b_inv_diag = np.empty(n)
    i = 0
    for block, size in zip(blocks, sizes):
        if size == 1:
            if not block[0, 0] > 0:
                return None
            b_inv_v[i] = v[i] / block[0, 0]
            b_inv_diag[i] = 1.0 / block[0, 0]
        else:
            det = block[0, 0] * block[1, 1] - block[0, 1] * block[1, 0]
            if not det > 0:
                return None
            inv = np.array([[block[1, 1], -block[0, 1]], [-block[1, 0], block[0, 0]]]) / det
            b_inv_v[i:i + 2] = inv @ v[i:i + 2]
            b_inv_diag[i:i + 2] = np.diag(inv)
        i += size
    inner = np.diag(1.0 / signs) - v.T @ b_inv_v
    try:
        solved = np.linalg.solve(inner, b_inv_v.T)
    except np.linalg.LinAlgError:
        return None
    diag = b_inv_diag + np.einsum("ij,ji->i", b_inv_v, solved)
    return diag if np.all(np.isfinite(diag)) else None


# ---------------------------------------------------------------------------
# public functions


def _validate(
    R: ArrayLike, n_quadrature: object, theta_range: Iterable[float], difficulty_bounds: Iterable[float],
    discrimination_bounds: Iterable[float], tol: float, ll_tol: float, max_iter: object,
) -> tuple[FloatArray, FloatArray | None, int, tuple[float, float], tuple[float, float], tuple[float, float],
           float, float, int]:
    checked = check_response_matrix(R)
    y, w = _targets_and_weights(checked)
    return (
        y, w, _check_quadrature(n_quadrature), _check_pair(theta_range, name="theta_range", positive=False),
        _check_pair(difficulty_bounds, name="difficulty_bounds", positive=False),
        _check_pair(discrimination_bounds, name="discrimination_bounds", positive=True),
        check_positive(tol, name="tol"), check_positive(ll_tol, name="ll_tol"),
        check_positive_int(max_iter, name="max_iter"),
    )


def _start_difficulty(y: FloatArray, w: FloatArray | None, b_bounds: tuple[float, float]) -> FloatArray:
    """``b0 = -logit(question accuracy)`` (accuracy clipped to [0.02, 0.98]); 0 with no observed cell."""
    count = np.full(len(y), y.shape[1], dtype=float) if w is None else w.sum(axis=1)
    acc = np.divide(y.sum(axis=1), count, out=np.full(len(y), 0.5), where=count > 0)
    acc = np.clip(acc, 0.02, 0.98)
    b0: FloatArray = np.clip(-np.log(acc / (1.0 - acc)), *b_bounds)
    return b0


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


def _fit(
    method: str, R: ArrayLike, *, common_slope: bool, n_quadrature: object, theta_range: Iterable[float],
    difficulty_bounds: Iterable[float], discrimination_bounds: Iterable[float], tol: float, ll_tol: float,
    max_iter: object, standard_errors: bool,
) -> MMLResult:
    y, w, k, t_range, b_bounds, a_bounds, tol, ll_tol, max_iter = _validate(
        R, n_quadrature, theta_range, difficulty_bounds, discrimination_bounds, tol, ll_tol, max_iter
    )
    nodes, weights = _quadrature(k, t_range)
    log_weights = np.log(weights)
    n_questions = len(y)
    b = _start_difficulty(y, w, b_bounds)
    a = np.full(n_questions, float(np.clip(1.0, *a_bounds)))
    ll_change = param_change = np.inf
    blocks = _RowBlocks(n_questions, y.size * k)
    try:
        with _one_blas_thread():
            ll, posterior = _e_step(y, w, a, b, nodes, log_weights, blocks)
            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                a_new, b_new = _m_step(y, w, a, b, nodes, posterior, common_slope, a_bounds, b_bounds, blocks)
                ll_new, posterior = _e_step(y, w, a_new, b_new, nodes, log_weights, blocks)
                if not (np.isfinite(ll_new) and np.all(np.isfinite(a_new)) and np.all(np.isfinite(b_new))):
                    raise NonFiniteError(method, quantity="the marginal log-likelihood or the item parameters",
                                         n_iter=n_iter)
                ll_change = abs(ll_new - ll)
                param_change = float(max(np.max(np.abs(a_new - a), initial=0.0),
                                         np.max(np.abs(b_new - b), initial=0.0)))
                a, b, ll = a_new, b_new, ll_new
                if ll_change <= ll_tol and param_change <= tol:
                    break
            else:
                raise ConvergenceError(method, n_iter=n_iter, residual=param_change, tol=tol)
            n_obs = np.full(n_questions, y.shape[1], dtype=float) if w is None else w.sum(axis=1)
            b_at = (b <= b_bounds[0] + AT_BOUND_ATOL) | (b >= b_bounds[1] - AT_BOUND_ATOL)
            a_at = (a <= a_bounds[0] + AT_BOUND_ATOL) | (a >= a_bounds[1] - AT_BOUND_ATOL)
            if standard_errors:
                free_b = ~b_at & (n_obs > 0)
                free_a = ~a_at & (n_obs > 0)
                a_se, b_se = _louis_standard_errors(y, w, a, b, common_slope, nodes, posterior, free_a, free_b)
            else:
                a_se = b_se = np.full(n_questions, np.nan)
    finally:
        blocks.close()
    ability = posterior @ nodes
    ability_sd = np.sqrt(np.maximum(posterior @ (nodes * nodes) - ability * ability, 0.0))
    low, high = ability.min(), ability.max()
    scaled = np.full(ability.shape, 50.0) if not high > low else 100.0 * ((ability - low) / (high - low))
    return MMLResult(
        difficulty=b, discrimination=a, intercept=-a * b, difficulty_se=b_se, discrimination_se=a_se,
        ability=ability, ability_sd=ability_sd, ability_scaled=scaled, log_likelihood=float(ll), n_iter=n_iter,
        converged=True, log_likelihood_change=float(ll_change), parameter_change=param_change,
        difficulty_at_bound=b_at, discrimination_at_bound=a_at, nodes=nodes, weights=weights,
    )




def irt_2pl_mml(
    R: ArrayLike,
    *,
    n_quadrature: int = 61,
    theta_range: tuple[float, float] = (-6.0, 6.0),
    difficulty_bounds: tuple[float, float] = (-6.0, 6.0),
    discrimination_bounds: tuple[float, float] = (0.1, 5.0),
    tol: float = 1e-5,
    ll_tol: float = 1e-4,
    max_iter: int = 5000,
    standard_errors: bool = True,
) -> MMLResult:
    """Fit the 2PL model by marginal maximum likelihood (Bock-Aitkin EM).

    ``P(model m answers question q) = sigmoid(a_q (theta_m - b_q))`` with
    abilities ``theta_m ~ N(0, 1)`` integrated out by quadrature.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only). bool or
        integer 0/1 matrices are taken as fully observed. Questions are the
        items, models the persons whose abilities are integrated out.
    n_quadrature : int, default 61
        Quadrature nodes (>= 3), equally spaced over ``theta_range``, with
        weights proportional to the N(0, 1) density (mirt's default rule).
    theta_range : (float, float), default (-6.0, 6.0)
        The ability interval the nodes cover, logits.
    difficulty_bounds : (float, float), default (-6.0, 6.0)
        Box for each ``b``, logits (the mirt package's; a difficulty beyond
        the ability nodes is not identified). A question every observed
        model solves (fails) ends on the lower (upper) bound.
    discrimination_bounds : (float, float), default (0.1, 5.0)
        Box for ``a`` (0 < low < high): the JML fits' and the mirt package's.
    tol : float, default 1e-5
        Largest change of any ``a`` or ``b`` in one EM iteration (logits,
        absolute, not scaled by the problem size) below which the fit may stop.
    ll_tol : float, default 1e-4
        Largest change of the marginal log-likelihood in one EM iteration
        (absolute, log-likelihood units) below which the fit may stop; both
        tests must hold.
    max_iter : int, default 5000
        EM iterations before :class:`scoring.ConvergenceError`.
    standard_errors : bool, default True
        Compute Louis standard errors (costs about one EM iteration per
        model; False gives NaN).

    Returns
    -------
    MMLResult
        ``difficulty`` b and ``discrimination`` a per question (logits; higher
        b = harder) with standard errors, EAP abilities and posterior SDs
        per model, the marginal log-likelihood, iterations and at-bound flags.

    Raises
    ------
    ValueError
        If ``R`` fails :func:`scoring._validation.check_response_matrix`, or
        a bound pair, ``n_quadrature``, ``tol``, ``ll_tol`` or ``max_iter``
        is invalid (the message names the parameter and the value).
    scoring.ConvergenceError
        If both stopping tests do not hold within ``max_iter`` iterations.
    scoring.NonFiniteError
        If the log-likelihood or a parameter becomes non-finite.

    Notes
    -----
    Bock-Aitkin EM. E-step: each model's posterior over the nodes, from the
    log-likelihood ``y.T @ z - w.T @ softplus(z)`` (``z[q, k] = a_q (node_k
    - b_q)``, ``w`` the observed mask), and the expected counts ``n[q, k] =
    sum_m w posterior`` and ``r[q, k] = sum_m y posterior``. M-step: two
    projected Gauss-Newton steps with Armijo backtracking on each question's
    ``(a_q, b_q)``, maximising ``sum_k r z - n softplus(z)`` within the
    bounds (a generalised EM step: each raises the marginal likelihood).
    Cost per iteration: four (n_questions x n_models) x (n_models x K)
    products, linear in cells.

    Unobserved cells are left out of every term. Partial credit ``y`` in
    [0, 1] enters the same Bernoulli likelihood ``y log p + (1 - y) log(1 -
    p)`` as the JML fits (a quasi-likelihood: exact for 0/1 credit).

    Standard errors: Louis' (1982) observed information, ``I_complete -
    sum_m Cov_posterior(score_m)``, inverted (its diagonal only) through the
    Woodbury identity when there are many questions.

    JML (:func:`scoring.irt_2pl`, the paper's) and MML differ: JML treats
    each ability as a parameter, which is inconsistent when each person
    answers few items (discriminations run to their bound); MML is the
    psychometric standard and matches mirt (test: LSAT-7).

    References
    ----------
    R. D. Bock and M. Aitkin, "Marginal maximum likelihood estimation of item
    parameters: application of an EM algorithm", Psychometrika 46, 443-459,
    1981. T. A. Louis, "Finding the observed information matrix when using
    the EM algorithm", J. R. Stat. Soc. B 44, 226-233, 1982. R. P.
    Chalmers, "mirt: a multidimensional item response theory package for the
    R environment", J. Stat. Softw. 48(6), 2012. EIP paper, appendix H.4 (the
    JML baselines this complements).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)
    >>> fit = irt_2pl_mml(R)
    >>> np.argsort(fit.difficulty).tolist()
    [0, 1, 2]
    """
    return _fit(
        "irt_2pl_mml", R, common_slope=False, n_quadrature=n_quadrature, theta_range=theta_range,
        difficulty_bounds=difficulty_bounds, discrimination_bounds=discrimination_bounds, tol=tol, ll_tol=ll_tol,
        max_iter=max_iter, standard_errors=standard_errors,
    )


def irt_1pl_mml(
    R: ArrayLike,
    *,
    n_quadrature: int = 61,
    theta_range: tuple[float, float] = (-6.0, 6.0),
    difficulty_bounds: tuple[float, float] = (-6.0, 6.0),
    discrimination_bounds: tuple[float, float] = (0.1, 5.0),
    tol: float = 1e-5,
    ll_tol: float = 1e-4,
    max_iter: int = 5000,
    standard_errors: bool = True,
) -> MMLResult:
    """Fit the 1PL model by marginal maximum likelihood (Bock-Aitkin EM).

    ``P(model m answers question q) = sigmoid(a (theta_m - b_q))`` with one
    common discrimination ``a`` estimated and ``theta_m ~ N(0, 1)``
    integrated out: the Rasch model with an estimated ability variance
    ``a^2`` (mirt's ``CONSTRAIN = (1-5, a1)`` form), not the slope-1,
    variance-1 model.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only). bool or
        integer 0/1 matrices are taken as fully observed. Questions are the
        items, models the persons whose abilities are integrated out.
    n_quadrature : int, default 61
        Quadrature nodes (>= 3), equally spaced over ``theta_range``, with
        weights proportional to the N(0, 1) density (mirt's default rule).
    theta_range : (float, float), default (-6.0, 6.0)
        The ability interval the nodes cover, logits.
    difficulty_bounds : (float, float), default (-6.0, 6.0)
        Box for each ``b``, logits (the mirt package's; a difficulty beyond
        the ability nodes is not identified). A question every observed
        model solves (fails) ends on the lower (upper) bound.
    discrimination_bounds : (float, float), default (0.1, 5.0)
        Box for ``a`` (0 < low < high): the JML fits' and the mirt package's.
    tol : float, default 1e-5
        Largest change of any ``a`` or ``b`` in one EM iteration (logits,
        absolute, not scaled by the problem size) below which the fit may stop.
    ll_tol : float, default 1e-4
        Largest change of the marginal log-likelihood in one EM iteration
        (absolute, log-likelihood units) below which the fit may stop; both
        tests must hold.
    max_iter : int, default 5000
        EM iterations before :class:`scoring.ConvergenceError`.
    standard_errors : bool, default True
        Compute Louis standard errors (costs about one EM iteration per
        model; False gives NaN).

    Returns
    -------
    MMLResult
        As :func:`irt_2pl_mml`; ``discrimination`` is the common slope
        repeated per question.

    Raises
    ------
    ValueError, scoring.ConvergenceError, scoring.NonFiniteError
        As :func:`irt_2pl_mml`.

    Notes
    -----
    The E-step is :func:`irt_2pl_mml`'s; the M-step takes two projected
    Gauss-Newton steps on the common slope and every ``b_q`` jointly
    (arrowhead matrix, solved through the slope's Schur complement) with
    Armijo backtracking. Standard errors (Louis) account for
    the common slope's coupling to every difficulty.

    References
    ----------
    As :func:`irt_2pl_mml`; EIP paper, appendix H.4 (the paper's JML 1PL,
    :func:`scoring.irt_1pl`).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)
    >>> fit = irt_1pl_mml(R)
    >>> np.argsort(fit.difficulty).tolist(), bool(np.ptp(fit.discrimination) == 0)
    ([0, 1, 2], True)
    """
    return _fit(
        "irt_1pl_mml", R, common_slope=True, n_quadrature=n_quadrature, theta_range=theta_range,
        difficulty_bounds=difficulty_bounds, discrimination_bounds=discrimination_bounds, tol=tol, ll_tol=ll_tol,
        max_iter=max_iter, standard_errors=standard_errors,
    )




def _check_item_vector(value: ArrayLike, *, name: str, n: int, positive: bool) -> FloatArray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(SHAPE_MESSAGE.format(name=name, n=n, shape=arr.shape))
    bad = ~np.isfinite(arr) | ((arr <= 0) if positive else False)
    if np.any(bad):
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(PARAMETER_MESSAGE.format(name=name, rule=" > 0" if positive else "",
                                                  bad=float(arr[index]), index=index))
    return arr


def mml_log_likelihood(
    R: ArrayLike,
    difficulty: ArrayLike,
    discrimination: ArrayLike,
    *,
    n_quadrature: int = 61,
    theta_range: tuple[float, float] = (-6.0, 6.0),
) -> float:
    """Marginal log-likelihood of item parameters, abilities integrated over N(0, 1).

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        As :func:`irt_2pl_mml`.
    difficulty : array-like of shape (n_questions,)
        ``b`` per question, logits (finite).
    discrimination : array-like of shape (n_questions,)
        ``a`` per question (finite, > 0).
    n_quadrature : int, default 61
    theta_range : (float, float), default (-6.0, 6.0)
        The quadrature, as in :func:`irt_2pl_mml`.

    Returns
    -------
    float
        ``sum_m log sum_k weight_k prod_q p_qk^y (1 - p_qk)^(1 - y)`` over
        observed cells (natural log). Comparing two fits is fair only on
        the same quadrature.

    Raises
    ------
    ValueError
        For a bad ``R``, a parameter vector of the wrong shape or with a
        non-finite (or, for ``discrimination``, non-positive) value, or a bad
        quadrature.

    Examples
    --------
    >>> import numpy as np
    >>> round(mml_log_likelihood(np.ones((1, 1), dtype=bool), [0.0], [1.0]), 4)
    -0.6931
    """
    y, w = _targets_and_weights(check_response_matrix(R))
    b = _check_item_vector(difficulty, name="difficulty", n=len(y), positive=False)
    a = _check_item_vector(discrimination, name="discrimination", n=len(y), positive=True)
    nodes, weights = _quadrature(_check_quadrature(n_quadrature),
                                 _check_pair(theta_range, name="theta_range", positive=False))
    ll, _ = _e_step(y, w, a, b, nodes, np.log(weights))
    return ll
