"""Crowd Bradley-Terry: the human difficulty scale with one reliability per evaluator.

Each evaluator ``e`` judges "as the scale says" with probability ``eta_e``
and at random otherwise, so a vote calling ``i`` harder than ``j`` has
probability::

    eta_e * sigma(b_i - b_j) + (1 - eta_e) / 2

A careful judge has ``eta`` near 1, a spammer (random clicks) near 0. The
scale ``b`` and the reliabilities are fitted together by maximum likelihood, so an
erratic judge's votes count less in the scale instead of counting fully.

Pure numpy/scipy; never imports Django.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, stats

from scoring._bradley_terry import sigmoid
from scoring._validation import check_number
from scoring.exceptions import ConvergenceError

__all__ = ["CrowdScale", "crowd_bradley_terry"]

_FloatArray = NDArray[np.float64]
_IntArray = NDArray[np.int64]

#: Starting reliability of every evaluator.
_ETA_START = 0.9


@dataclass(frozen=True)
class CrowdScale:
    """A crowd Bradley-Terry fit.

    Attributes
    ----------
    difficulty : ndarray of float64, shape (n_items,)
        Logits, higher = judged harder; NaN for an item in no judgment.
    se : ndarray of float64, shape (n_items,)
        Approximate standard errors from the weighted, penalised
        Bradley-Terry information at the optimum (the M-step's Hessian,
        which ignores the uncertainty of the reliabilities); NaN where
        unjudged.
    reliability : ndarray of float64, shape (n_evaluators,)
        ``eta_e`` in [0, 1]: the probability that the evaluator judges as
        the scale says rather than at random. NaN without judgments.
    reliability_low, reliability_high : ndarray of float64, shape (n_evaluators,)
        Profile-likelihood interval of ``eta_e`` at ``ci_level`` given the
        fitted scale: ``{eta : 2 (l(eta_hat) - l(eta)) <= chi2_1(ci_level)}``,
        clipped to [0, 1].
    vote_weight : ndarray of float64, shape (n_judgments,)
        Posterior probability that each vote followed the scale (its weight
        in the scale).
    n_judgments : ndarray of int64, shape (n_evaluators,)
    penalty, ci_level : float
    n_iter : int
        Optimiser iterations.
    converged : bool
    residual : float
        Largest absolute projected gradient entry at the end.
    log_likelihood : float
        Penalised observed-data log-likelihood at the end.
    """

    difficulty: _FloatArray
    se: _FloatArray
    reliability: _FloatArray
    reliability_low: _FloatArray
    reliability_high: _FloatArray
    vote_weight: _FloatArray
    n_judgments: _IntArray
    penalty: float
    ci_level: float
    n_iter: int
    converged: bool
    residual: float
    log_likelihood: float


def _indices(values: ArrayLike, *, name: str, n: int | None) -> _IntArray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or (n is not None and arr.max() >= n)):
        bad = int(np.flatnonzero((arr < 0) | (arr >= (n if n is not None else np.iinfo(np.int64).max)))[0])
        raise ValueError(f"{name} holds index {int(arr[bad])} at position {bad}; indices must be in [0, {n})")
    return arr


def crowd_bradley_terry(
    harder: ArrayLike,
    other: ArrayLike,
    evaluator: ArrayLike,
    *,
    n_items: int | None = None,
    n_evaluators: int | None = None,
    penalty: float = 0.1,
    ci_level: float = 0.95,
    tol: float = 1e-6,
    max_iter: int = 500,
) -> CrowdScale:
    """Fit the scale and each evaluator's reliability (crowd Bradley-Terry, EM).

    Parameters
    ----------
    harder, other : array-like of int, shape (n_judgments,)
        Per vote, the question judged harder and the other one (indices in
        ``[0, n_items)``). Skips are not votes: leave them out.
    evaluator : array-like of int, shape (n_judgments,)
        Evaluator of each vote, in ``[0, n_evaluators)``.
    n_items, n_evaluators : int, optional
        Default: the largest index + 1.
    penalty : float, default 0.1
        Ridge penalty on the logits (prior precision), as in
        :func:`scoring.human_scale.bradley_terry`.
    ci_level : float, default 0.95
        Level of the reliability intervals, in (0, 1).
    tol : float, default 1e-6
        L-BFGS-B's ``gtol``: stop when the largest projected gradient entry
        of the penalised log-likelihood is below it.
    max_iter : int, default 500
        L-BFGS-B iterations.

    Returns
    -------
    CrowdScale

    Raises
    ------
    ValueError
        On malformed input (the message names the parameter).
    ConvergenceError
        If the optimiser does not report success within ``max_iter``
        iterations, or ends at a non-finite point.

    Notes
    -----
    Maximum likelihood: the penalised log-likelihood ``sum log(1/2 + eta_e
    (sigma(d) - 1/2)) - penalty/2 |b|**2`` is maximised over ``b`` and
    ``eta`` in [0, 1] together by L-BFGS-B (bounds; analytic gradient),
    from the plain penalised Bradley-Terry scale and ``eta = 0.9``. (EM,
    whose M-step for ``eta`` is the mean posterior weight, reaches the same
    optimum but crawls when reliabilities sit at 0 or 1, as a spammer's
    does.) Each vote's weight in the scale is its posterior probability of
    having followed it, ``r = eta sigma(d) / (eta sigma(d) + (1 - eta) /
    2)``; the reported ``se`` come from the penalised Bradley-Terry
    information with those weights. The random component is a fair coin
    (``1/2``) rather than CrowdBT's reversed judgement (``1 - sigma``): a
    spammer's clicks carry no information either way, and ``eta`` reads as
    "how often this judge follows the scale". A reliability is identified
    relative to the scale: when every judge is equally noisy, lower ``eta``
    and a wider scale fit nearly as well; what the fit separates reliably is
    judges who disagree with the others from judges who agree.

    References
    ----------
    Chen, X., Bennett, P. N., Collins-Thompson, K. and Horvitz, E. (2013).
    Pairwise ranking aggregation in a crowdsourced setting. WSDM '13,
    193-202. Raykar, V. C. et al. (2010). Learning from crowds. JMLR 11,
    1297-1322. Dempster, A. P., Laird, N. M. and Rubin, D. B. (1977).
    Maximum likelihood from incomplete data via the EM algorithm. JRSS B
    39, 1-38.

    Examples
    --------
    >>> fit = crowd_bradley_terry([0, 0, 1, 0, 0, 1], [1, 2, 2, 1, 2, 2], [0, 0, 0, 1, 1, 1])
    >>> [int(i) for i in np.argsort(fit.difficulty)]
    [2, 1, 0]
    """
    h = _indices(harder, name="harder", n=n_items)
    o = _indices(other, name="other", n=n_items)
    ev = _indices(evaluator, name="evaluator", n=n_evaluators)
    if not h.size == o.size == ev.size:
        raise ValueError(f"harder, other and evaluator must have equal lengths; got {h.size}, {o.size}, {ev.size}")
    same = np.flatnonzero(h == o)
    if same.size:
        raise ValueError(f"a vote compares a question with itself: harder == other at position {int(same[0])}")
    n = int(n_items) if n_items is not None else (int(max(h.max(), o.max())) + 1 if h.size else 0)
    m = int(n_evaluators) if n_evaluators is not None else (int(ev.max()) + 1 if ev.size else 0)
    check_number(penalty, name="penalty", low=0.0, low_open=True)
    check_number(ci_level, name="ci_level", low=0.0, high=1.0, low_open=True, high_open=True)
    check_number(tol, name="tol", low=0.0, low_open=True)
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    return _fit(h, o, ev, n, m, float(penalty), ci_level, tol, max_iter)


def _weighted_bt(h: _IntArray, o: _IntArray, r: _FloatArray, n: int, pen: float, b: _FloatArray, *,
                 max_steps: int = 100) -> tuple[_FloatArray, _FloatArray]:
    """Penalised Bradley-Terry with vote weights ``r`` by Newton's method (dense).

    Returns ``b`` and the negative Hessian at the returned ``b`` (``max_steps=0``: at the given ``b``).
    """
    for step_no in range(max_steps + 1):
        d = b[h] - b[o]
        p = sigmoid(d)
        g: _FloatArray = (np.bincount(h, weights=r * (1 - p), minlength=n)
                          - np.bincount(o, weights=r * (1 - p), minlength=n) - pen * b)
        w = r * p * (1 - p)
        hess = np.zeros((n, n))
        np.add.at(hess, (h, h), w)
        np.add.at(hess, (o, o), w)
        np.add.at(hess, (h, o), -w)
        np.add.at(hess, (o, h), -w)
        hess[np.diag_indices(n)] += pen
        if step_no == max_steps:
            break
        step = np.linalg.solve(hess, g)
        b = b + step
        if float(np.abs(step).max(initial=0.0)) < 1e-10:
            max_steps = step_no + 1  # one more pass: the Hessian at the final b
    return b, hess


def _loglik(h: _IntArray, o: _IntArray, ev: _IntArray, b: _FloatArray, eta: _FloatArray, pen: float) -> float:
    p = sigmoid(b[h] - b[o])
    return float(np.log(eta[ev] * p + (1 - eta[ev]) / 2).sum() - 0.5 * pen * (b @ b))


def _fit(h: _IntArray, o: _IntArray, ev: _IntArray, n: int, m: int, pen: float, ci_level: float, tol: float,
         max_iter: int) -> CrowdScale:
    n_judgments = np.bincount(ev, minlength=m).astype(np.int64)
    has = n_judgments > 0
    b0, _ = _weighted_bt(h, o, np.ones(h.size), n, pen, np.zeros(n))
    x0 = np.concatenate([b0, np.full(m, _ETA_START)])

    def negative(x: _FloatArray) -> tuple[float, _FloatArray]:
        b, eta = x[:n], x[n:]
        p = sigmoid(b[h] - b[o])
        q = 0.5 + eta[ev] * (p - 0.5)
        g_d = eta[ev] * p * (1 - p) / q
        grad_b = np.bincount(h, weights=g_d, minlength=n) - np.bincount(o, weights=g_d, minlength=n) - pen * b
        grad_eta = np.bincount(ev, weights=(p - 0.5) / q, minlength=m)
        value = float(np.log(q).sum() - 0.5 * pen * (b @ b))
        return -value, -np.concatenate([grad_b, grad_eta])

    bounds = [(None, None)] * n + [(0.0, 1.0)] * m
    res = optimize.minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                            options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 30})
    x = np.asarray(res.x, dtype=np.float64)
    _, grad = negative(x)
    # Projected gradient: a reliability at a bound may have a gradient pointing outwards.
    eta_x = x[n:]
    proj = grad.copy()
    proj[n:][(eta_x <= 0.0) & (grad[n:] > 0)] = 0.0
    proj[n:][(eta_x >= 1.0) & (grad[n:] < 0)] = 0.0
    residual = float(np.abs(proj).max(initial=0.0))
    if not res.success or not np.all(np.isfinite(x)):
        raise ConvergenceError("crowd Bradley-Terry", n_iter=int(res.nit), residual=residual, tol=tol)
    b, eta = x[:n], np.clip(eta_x, 0.0, 1.0)
    p = sigmoid(b[h] - b[o])
    follow = eta[ev] * p
    r = follow / (follow + (1 - eta[ev]) / 2)
    _, hess = _weighted_bt(h, o, r, n, pen, b, max_steps=0)
    judged = np.bincount(np.concatenate([h, o]), minlength=n) > 0
    cov_diag = np.diag(np.linalg.inv(hess)) if n else np.zeros(0)
    se = np.where(judged, np.sqrt(cov_diag), np.nan)
    low, high = _profile_intervals(h, o, ev, b, eta, has, m, ci_level)
    return CrowdScale(
        difficulty=np.where(judged, b, np.nan), se=se, reliability=np.where(has, eta, np.nan), reliability_low=low,
        reliability_high=high, vote_weight=r, n_judgments=n_judgments, penalty=pen, ci_level=ci_level,
        n_iter=int(res.nit), converged=True, residual=residual, log_likelihood=_loglik(h, o, ev, b, eta, pen),
    )


def _profile_intervals(h: _IntArray, o: _IntArray, ev: _IntArray, b: _FloatArray, eta: _FloatArray,
                       has: NDArray[np.bool_], m: int, ci_level: float) -> tuple[_FloatArray, _FloatArray]:
    """Per evaluator, ``{eta : 2 (l(eta_hat) - l(eta)) <= chi2_1(level)}`` with the scale fixed (concave in eta)."""
    drop = 0.5 * float(stats.chi2.ppf(ci_level, df=1))
    x = sigmoid(b[h] - b[o]) - 0.5  # a vote's probability is 1/2 + eta x
    low, high = np.full(m, np.nan), np.full(m, np.nan)
    order = np.argsort(ev, kind="stable")
    bounds = np.searchsorted(ev[order], np.arange(m + 1))
    for e in np.flatnonzero(has):
        xe = x[order[bounds[e]:bounds[e + 1]]]
        top = float(eta[e])

        def loglik(t: float, xe: _FloatArray = xe) -> float:
            return float(np.log(0.5 + t * xe).sum())

        best = loglik(top)

        def gap(t: float, best: float = best, xe: _FloatArray = xe) -> float:
            return best - float(np.log(0.5 + t * xe).sum()) - drop

        low[e] = 0.0 if gap(0.0) <= 0 else float(optimize.brentq(gap, 0.0, top, xtol=1e-9))
        high[e] = 1.0 if gap(1.0) <= 0 else float(optimize.brentq(gap, top, 1.0, xtol=1e-9))
    return low, high
