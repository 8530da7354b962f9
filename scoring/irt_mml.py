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

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from scoring._irt_common import _targets_and_weights
from scoring._irt_mml_em import AT_BOUND_ATOL as AT_BOUND_ATOL, _e_step, _m_step, _quadrature, _RowBlocks
from scoring._irt_mml_information import _louis_standard_errors
from scoring._threads import one_blas_thread as _one_blas_thread
from scoring._typing import BoolArray, FloatArray
from scoring._validation import check_int, check_positive, check_positive_int, check_response_matrix
from scoring.exceptions import ConvergenceError, NonFiniteError

__all__ = ["MMLResult", "irt_1pl_mml", "irt_2pl_mml", "mml_log_likelihood"]

BOUNDS_MESSAGE = "{name} must be a pair (low, high) of finite numbers with {rule}; got {value!r}"
QUADRATURE_MESSAGE = "n_quadrature must be an integer >= 3; got {value!r}"
SHAPE_MESSAGE = "{name} must have shape ({n},) to match R's {n} questions; got shape {shape}"
PARAMETER_MESSAGE = "{name} must hold finite numbers{rule}; got {bad!r} at position {index}"


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
    return check_int(n_quadrature, name="n_quadrature", low=3, message=QUADRATURE_MESSAGE)


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
