"""Adaptive pair selection for human difficulty judging.

While a study runs, each evaluator's next pair is chosen from the
same-subject candidates to be most informative for the human
Bradley-Terry scale (:mod:`scoring.human_scale`), under exposure control and
with a random share:

1. With probability ``random_share`` the pair is drawn uniformly from every
   eligible same-subject pair this evaluator has not seen (keeps every pair
   reachable and the design unbiased).
2. Otherwise, while some question has fewer than ``min_comparisons`` votes
   (the exposure floor), the pair must contain one of those questions.
3. Among the allowed pairs the one whose vote is expected to shrink the
   subject's expected squared rank error most is chosen (weighted
   A-optimal, one step ahead): ``w |F C S a|**2 / (1 + w a' S a)`` with ``w
   = p (1 - p)``, ``p = sigma(b_i - b_j)`` the current Bradley-Terry
   probability, ``S`` the Laplace covariance of the subject's estimates,
   ``a = e_i - e_j``, ``C`` centring and ``F`` the diagonal of each
   question's rank sensitivity (how many other questions its position
   could swap with, given the estimates and their uncertainty); ties are
   broken uniformly at random.

Two calls:

:func:`scale_estimate`
    A fast penalised Bradley-Terry fit of the votes so far (Newton's method
    with conjugate-gradient steps, warm-startable), with approximate
    standard errors.
:func:`choose_next_pair`
    The choice above for one evaluator, given the estimate and the pairs the
    evaluator has already been shown (one dense covariance per subject);
    the criterion's arithmetic lives in :mod:`scoring._pair_criterion`.

Pure numpy/scipy; never imports Django.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import csr_matrix

from scoring._bradley_terry import newton_ascent, penalised_loglik, sigmoid as _sigmoid
from scoring._pair_criterion import _best_pair, _blas_controller, _pq, _random_pair
from scoring._validation import check_int, check_number
from scoring.exceptions import ConvergenceError

__all__ = ["AdaptiveConfig", "ScaleEstimate", "choose_next_pair", "scale_estimate"]

_FloatArray = NDArray[np.float64]
_IntArray = NDArray[np.int64]

@dataclass(frozen=True)
class AdaptiveConfig:
    """Settings of :func:`choose_next_pair`.

    Attributes
    ----------
    min_comparisons : int, default 5
        Exposure floor (>= 0): while an eligible question that still has an
        unseen partner has fewer votes than this, the informative choice is
        restricted to pairs containing such a question. 0 disables the floor.
    random_share : float, default 0.1
        Probability in [0, 1] that the pair is drawn uniformly at random from
        the evaluator's unseen eligible same-subject pairs instead of chosen
        for information.

    Notes
    -----
    The defaults had the lowest median ratio of judgments to uniform's
    (0.654) on the tuning seeds 1000-1009 of ``python -m bench adaptive``
    among ``random_share`` 0, 0.05, 0.1 with ``min_comparisons`` 3 and 5
    (0.686-0.778), 0.2 with 5 (0.654, a higher maximum) and 0.1 with 8
    (0.697); see :func:`bench.bench_adaptive.adaptive_ratios`.
    """

    min_comparisons: int = 5
    random_share: float = 0.1

    def __post_init__(self) -> None:
        """Check the values (``ValueError`` naming the field)."""
        m = self.min_comparisons
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
            raise ValueError(f"min_comparisons must be an integer >= 0; got {m!r}")
        r = self.random_share
        ok = isinstance(r, (int, float, np.floating, np.integer)) and not isinstance(r, bool)
        if not ok or not np.isfinite(float(r)) or not 0.0 <= float(r) <= 1.0:
            raise ValueError(f"random_share must be a number in [0, 1]; got {r!r}")


@dataclass(frozen=True)
class ScaleEstimate:
    """The current human scale, as :func:`choose_next_pair` needs it.

    Attributes
    ----------
    b : ndarray of float64, shape (n_questions,)
        Penalised Bradley-Terry difficulty in logits, harder = larger; 0 for
        a question without votes (the prior mean).
    se : ndarray of float64, shape (n_questions,)
        Approximate standard errors ``1 / sqrt(information_ii + penalty)``;
        ``1 / sqrt(penalty)`` (the prior SD) for a question without votes.
    n_comparisons : ndarray of int64, shape (n_questions,)
        Votes involving each question.
    pair_information : scipy.sparse.csr_matrix of shape (n_questions, n_questions), optional
        Symmetric; entry ``(i, j)`` is the Fisher information of the votes
        on the pair ``{i, j}`` itself, ``n_ij p_ij (1 - p_ij)`` (0 for pairs
        never compared). :func:`choose_next_pair` uses it to see that a
        pair judged many times is already well resolved (see its Notes);
        None: treated as all zeros.
    penalty : float
        Ridge penalty used (prior precision).
    n_iter : int
        Newton iterations.
    converged : bool
    residual : float
        Largest absolute gradient entry at the end.
    memo : dict
        What :func:`choose_next_pair` derives from this estimate alone (each
        subject's rank weights and, for a dense subject, its covariance), kept
        so that later choices from the same estimate reuse it; filled by the
        kernel, not an argument. The arrays stored are exactly the ones it
        would compute again, so a choice does not depend on what is kept.
    """

    b: _FloatArray
    se: _FloatArray
    n_comparisons: _IntArray
    pair_information: csr_matrix | None = None
    penalty: float = 0.5
    n_iter: int = 0
    converged: bool = True
    residual: float = 0.0
    memo: dict[bytes, Any] = field(default_factory=dict, init=False, repr=False, compare=False)


# --- validation -------------------------------------------------------------------------


def _check_count(value: object, *, name: str, minimum: int) -> int:
    return check_int(value, name=name, low=minimum)


def _check_number(value: object, *, name: str, positive: bool) -> float:
    return check_number(value, name=name, low=0.0, low_open=positive,
                        message=f"{name} must be a finite number {'>' if positive else '>='} 0; got {{value!r}}")


def _indices(values: ArrayLike, *, name: str, n: int, ndim: int) -> _IntArray:
    arr = np.asarray(values)
    if ndim == 2 and arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != ndim or (ndim == 2 and arr.shape[1] != 2):
        want = "(n_votes,)" if ndim == 1 else "(k, 2)"
        raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer question indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size:
        bad = np.flatnonzero(((arr < 0) | (arr >= n)).reshape(-1))
        if bad.size:
            at = np.unravel_index(int(bad[0]), arr.shape)
            raise ValueError(
                f"{name} holds question index {int(arr[at])} at position {tuple(int(a) for a in at)}; "
                f"indices must be in [0, {n})"
            )
    return arr


# --- the estimate -----------------------------------------------------------------------


def scale_estimate(
    n_questions: int,
    harder: ArrayLike,
    easier: ArrayLike,
    *,
    penalty: float = 0.5,
    initial: ArrayLike | None = None,
    tol: float = 1e-6,
    max_iter: int = 50,
) -> ScaleEstimate:
    """Fit a penalised Bradley-Terry scale fast enough to run on every request.

    Maximises ``sum_k log sigma(b[harder_k] - b[easier_k]) - penalty/2 *
    sum_i b_i**2`` (a Gaussian prior ``N(0, 1/penalty)`` on each logit, the
    MAP estimate). The ridge keeps every question finite and the problem
    strictly concave even with few votes, questions that win or lose every
    comparison, and a disconnected comparison graph (one component per
    subject, or more), so no component bookkeeping is needed. Newton's
    method with step halving; each Newton system ``(L(w) + penalty I) s = g``
    (``L`` the weighted Laplacian of the comparison graph) is solved by
    Jacobi-preconditioned conjugate gradients on the sparse matrix, so the
    cost grows with the number of distinct compared pairs, not ``n**2``.

    Parameters
    ----------
    n_questions : int
        Number of questions (>= 1); indices are in ``[0, n_questions)``.
    harder, easier : array-like of int, shape (n_votes,)
        Per non-skip judgment, the question judged harder (the winner) and
        the other one. Skips are not votes: leave them out.
    penalty : float, default 0.5
        Ridge penalty (prior precision, > 0): a prior SD of 1.41 logits,
        the order of the spread of difficulties that judges can tell apart
        (75 % agreement with the truth on random pairs needs an SD of about
        1.2 in the bench's world). Stronger than the reported scale's 0.1
        (:func:`scoring.human_scale.bradley_terry`) on purpose: it keeps the
        early, few-vote estimates from extremes that would mislead the
        pairing. In the bench's simulation 0.5 reached a higher Spearman
        with the truth than 0.1 at every budget checked (5-20 votes per
        question); the reported scale is unaffected.
    initial : array-like of float, shape (n_questions,), optional
        Warm start (e.g. the previous call's ``b``); default zeros. The
        optimum does not depend on it.
    tol : float, default 1e-6
        Stop when the largest absolute gradient entry is below ``tol``.
    max_iter : int, default 50
        Newton iterations.

    Returns
    -------
    ScaleEstimate
        ``b`` (logits, harder = larger, 0 for unjudged questions), ``se``
        (``1 / sqrt(I_ii + penalty)`` with ``I_ii = sum p (1 - p)`` over the
        question's votes: the usual Rasch/ACJ approximation, which ignores
        the covariance between estimates; ``1/sqrt(penalty)`` when unjudged)
        and ``n_comparisons``.

    Raises
    ------
    ValueError
        On malformed input (the message names the parameter and position).
    ConvergenceError
        If the fit does not reach ``tol`` within ``max_iter`` (it is
        strictly concave, so this signals a too small ``max_iter``).

    Notes
    -----
    The sum of the ``b`` is not constrained to 0: the prior fixes the
    location, and per subject only differences matter. The ``se`` are meant
    for pair selection; the reported scale and its standard errors come from
    :func:`scoring.human_scale.human_scale`.

    References
    ----------
    Bradley, R. A. and Terry, M. E. (1952). Rank analysis of incomplete block
    designs. Biometrika 39, 324-345. Pollitt, A. (2012). The method of
    Adaptive Comparative Judgement. Assessment in Education 19, 281-300
    (Rasch estimates and standard errors driving the pairing).

    Examples
    --------
    >>> est = scale_estimate(3, [0, 0, 1], [1, 2, 2])
    >>> [int(x) for x in np.argsort(est.b)], est.n_comparisons.tolist()
    ([2, 1, 0], [2, 2, 2])
    """
    n = _check_count(n_questions, name="n_questions", minimum=1)
    h = _indices(harder, name="harder", n=n, ndim=1)
    e = _indices(easier, name="easier", n=n, ndim=1)
    if h.size != e.size:
        raise ValueError(f"harder and easier must have equal lengths; got {h.size} and {e.size}")
    same = np.flatnonzero(h == e)
    if same.size:
        raise ValueError(f"a vote compares a question with itself: harder == easier at position {int(same[0])}")
    pen = _check_number(penalty, name="penalty", positive=True)
    tol = _check_number(tol, name="tol", positive=True)
    max_iter = _check_count(max_iter, name="max_iter", minimum=1)
    if initial is None:
        b0 = np.zeros(n)
    else:
        b0 = np.array(initial, dtype=np.float64)
        if b0.shape != (n,) or not np.all(np.isfinite(b0)):
            raise ValueError(f"initial must be a finite float array of shape ({n},); got shape {b0.shape}")
    return _fit(n, h, e, pen, b0, tol=tol, max_iter=max_iter)


def _fit(n: int, h: _IntArray, e: _IntArray, pen: float, b: _FloatArray, *, tol: float, max_iter: int) -> ScaleEstimate:
    n_comp = (np.bincount(h, minlength=n) + np.bincount(e, minlength=n)).astype(np.int64)
    # Distinct ordered (winner, loser) pairs with their counts, for the likelihood ...
    codes, count_i = np.unique(h * n + e, return_counts=True)
    wi, wj = codes // n, codes % n
    count = count_i.astype(np.float64)
    # ... and distinct unordered pairs with their total counts, for the Hessian (p (1 - p) is symmetric).
    lo, hi = np.minimum(wi, wj), np.maximum(wi, wj)
    ucodes, back = np.unique(lo * n + hi, return_inverse=True)
    ulo, uhi = ucodes // n, ucodes % n
    utotal = np.bincount(back, weights=count)
    # CSR structure of the off-diagonal part, built once: entries (ulo, uhi) and (uhi, ulo) sorted by row.
    rows = np.concatenate([ulo, uhi])
    cols = np.concatenate([uhi, ulo])
    perm = np.lexsort((cols, rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    indices = cols[perm]
    src = np.concatenate([np.arange(ucodes.size), np.arange(ucodes.size)])[perm]

    def objective(x: _FloatArray) -> float:
        return penalised_loglik(x, wi, wj, count, pen)

    def gradient(x: _FloatArray) -> tuple[_FloatArray, _FloatArray]:
        q = count * _sigmoid(-(x[wi] - x[wj]))  # count * (1 - p)
        g = np.bincount(wi, weights=q, minlength=n) - np.bincount(wj, weights=q, minlength=n) - pen * x
        return g, utotal * _pq(x[ulo] - x[uhi])

    def information(w: _FloatArray) -> _FloatArray:
        both = np.bincount(ulo, weights=w, minlength=n) + np.bincount(uhi, weights=w, minlength=n)
        return np.asarray(both, dtype=np.float64)

    def step(g: _FloatArray, w: _FloatArray, residual: float) -> _FloatArray:
        # Inexact Newton: the linear solve is only as accurate as the step needs (forcing term).
        rtol = min(0.1, residual)
        degree = information(w) + pen
        if ulo.size == 0:
            out: _FloatArray = g / degree
            return out
        adjacency = csr_matrix((w[src], indices, indptr), shape=(n, n))
        return _pcg(lambda v: degree * v - adjacency @ v, g, 1.0 / degree, rtol=rtol, max_iter=10 * n + 50)

    fit = newton_ascent(b, objective=objective, gradient=gradient, solve=step,
                        done=lambda residual, _: not residual > tol, max_iter=max_iter, min_step=1e-8)
    b, w, n_iter, residual = fit.b, fit.w, fit.n_iter, fit.residual
    if not residual <= tol:
        raise ConvergenceError("Bradley-Terry (adaptive estimate)", n_iter=n_iter, residual=residual, tol=tol)
    se = 1.0 / np.sqrt(information(w) + pen)
    pair_information = csr_matrix((w[src], indices, indptr), shape=(n, n))
    return ScaleEstimate(b=b, se=se, n_comparisons=n_comp, pair_information=pair_information, penalty=pen,
                         n_iter=n_iter, converged=True,
                         residual=residual)


def _pcg(
    apply: Callable[[_FloatArray], _FloatArray], rhs: _FloatArray, inv_diag: _FloatArray, *, rtol: float,
    max_iter: int,
) -> _FloatArray:
    """Jacobi-preconditioned conjugate gradients for an SPD system, from 0, to ``|r| <= rtol |rhs|``."""
    x = np.zeros_like(rhs)
    r = rhs.copy()
    z = inv_diag * r
    p = z.copy()
    rz = float(r @ z)
    stop = rtol * float(np.sqrt(rhs @ rhs))
    for _ in range(max_iter):
        ap = apply(p)
        alpha = rz / float(p @ ap)
        x += alpha * p
        r -= alpha * ap
        if float(np.sqrt(r @ r)) <= stop:
            break
        z = inv_diag * r
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x


# --- the choice -------------------------------------------------------------------------


def choose_next_pair(
    *,
    subjects: ArrayLike,
    estimate: ScaleEstimate,
    seen: ArrayLike,
    rng: np.random.Generator,
    config: AdaptiveConfig = AdaptiveConfig(),
    eligible: ArrayLike | None = None,
) -> tuple[int, int] | None:
    """Choose one evaluator's next pair of questions (adaptive comparative judgement).

    Parameters
    ----------
    subjects : array-like, shape (n_questions,)
        Subject label of each question (any sortable dtype); a pair never
        mixes subjects.
    estimate : ScaleEstimate
        The current scale (:func:`scale_estimate` of all the study's votes).
    seen : array-like of int, shape (k, 2)
        Question index pairs this evaluator has already been shown (judged
        or skipped), in either order; ``[]`` for none. Never chosen again.
    rng : numpy.random.Generator
        All randomness (the random share and ties); the same generator
        state and inputs give the same pair.
    config : AdaptiveConfig, optional
        Exposure floor and random share.
    eligible : array-like of bool, shape (n_questions,), optional
        Questions that may be shown (e.g. EIP's kept flags); default all.

    Returns
    -------
    tuple of (int, int) or None
        ``(i, j)`` with ``i < j``, same subject, both eligible, not in
        ``seen``; ``None`` when this evaluator has seen every eligible
        same-subject pair.

    Raises
    ------
    ValueError
        If shapes disagree, an index is out of range, ``seen`` pairs a
        question with itself, or ``rng`` is not a Generator.

    Notes
    -----
    **Criterion.** A vote on ``(i, j)`` carries Fisher information ``w =
    p (1 - p)`` about ``b_i - b_j`` (``p = sigma(b_i - b_j)``). Under the
    normal (Laplace) approximation of the current estimate, with ``S`` the
    covariance of the subject's logits (the inverse of ``diag(1 / se**2) -
    W``, ``W`` the pair information: the penalised Hessian, votes never
    cross subjects) and ``a = e_i - e_j``, one more vote changes it to ``S
    - w S a a' S / (1 + w a' S a)``. What a rank correlation with the truth
    depends on is the error of each question's *rank*, not of its logit:
    an error ``delta`` in ``b_k`` moves the rank by about ``f_k delta``
    with ``f_k = sum_{l != k} phi((b_k - b_l) / s_kl) / s_kl``, ``s_kl**2 =
    se_k**2 + se_l**2`` (the derivative of the expected rank; large in the
    crowded middle of the scale, small at its ends). The expected squared
    rank error is ``sum_k f_k**2 Var(b_k - mean b)``; its drop after the
    vote, ``w sum_k f_k**2 (C S a)_k**2 / (1 + w a' S a)``, is the value
    maximised (``f**2`` scaled to mean 1). It prefers close current
    estimates (``w`` near 1/4, Pollitt's ACJ pairing), uncertain questions
    and questions in crowded parts of the scale, and sees the covariances:
    a pair whose difference is already pinned down by other comparisons,
    or a pair judged many times, gains little, and a vote linking poorly
    connected parts of the comparison graph gains much. In the bench's
    simulation (``python -m bench adaptive``) the rank weights lowered the
    median ratio of judgments to uniform's from 0.757 to 0.612 on the
    tuning seeds 1000-1005 (the unweighted drop of the centred total
    variance, the previous rule, reached 0.777 over seeds 0-19); on the
    untuned seeds 2000-2019 the median was 0.665 (range 0.48-1.05). Subjects of
    more than ``_pair_criterion._DENSE_MAX`` (300) eligible questions use the diagonal
    approximation ``S = diag(se**2)`` (numerator ``f_i**2 se_i**4 + f_j**2
    se_j**4``; the pair's own votes lower ``a' S a`` as a parallel link) to
    bound the cost. Unjudged questions have ``b = 0`` and the prior SD, so
    they are paired first.

    **Exposure.** Pairs must contain a question below the floor while one
    exists (among questions with an unseen partner); the evaluator never
    gets a pair twice. **Random share.** A uniform draw over the
    evaluator's unseen eligible pairs with probability ``random_share``
    keeps every pair reachable and limits the self-reinforcement of an
    early wrong estimate.

    **Cost.** Per subject one ``m x m`` inverse and product (``m`` its
    eligible questions), then the focal rows against the subject's
    questions in blocks. A subject above ``_pair_criterion._DENSE_MAX`` needs no inverse:
    its rank weights cost ``m**2 / 2`` normal densities, and only the pairs
    that a cheap upper bound of the criterion (per focal question and group
    of partners close in difficulty) does not place below the best are
    scored, with the choice of scoring every pair (usually a few thousand
    of the hundreds of thousands). The random draw uses rejection sampling,
    enumerating a subject only when the evaluator has seen most of its
    pairs. About 28 ms (plus 17 ms for :func:`scale_estimate`) at 1,000
    questions in 10 subjects (``python -m
    bench adaptive`` prints the figure); a single subject of 300 questions
    costs a few tens of milliseconds more.

    **Reliability.** Adaptive pairing makes SSR optimistic (the standard
    errors shrink faster than the true error); Bramley and Vitello (2019).
    Report split-half reliability beside SSR for adaptive studies.

    References
    ----------
    Bradley, R. A. and Terry, M. E. (1952). Biometrika 39, 324-345.
    Pollitt, A. (2012). The method of Adaptive Comparative Judgement.
    Assessment in Education 19, 281-300. Glickman, M. E. and Jensen, S. T.
    (2005). Adaptive paired comparison design. Journal of Statistical
    Planning and Inference 127, 279-293. Bramley, T. and Vitello, S.
    (2019). The effect of adaptivity on the reliability coefficient in
    adaptive comparative judgement. Assessment in Education 26, 43-58.

    Examples
    --------
    >>> est = scale_estimate(4, [], [])
    >>> choose_next_pair(subjects=["a", "a", "b", "b"], estimate=est, seen=[[0, 1]],
    ...                  rng=np.random.default_rng(0))
    (2, 3)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    if not isinstance(config, AdaptiveConfig):
        raise ValueError(f"config must be an AdaptiveConfig; got {type(config).__name__}")
    b = np.asarray(estimate.b, dtype=np.float64)
    n = b.size
    se = np.asarray(estimate.se, dtype=np.float64)
    n_comp = np.asarray(estimate.n_comparisons)
    if b.ndim != 1 or se.shape != b.shape or n_comp.shape != b.shape:
        raise ValueError(
            f"estimate.b, .se and .n_comparisons must be 1-D of equal length; got shapes {b.shape}, {se.shape}, "
            f"{n_comp.shape}"
        )
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(se)) and np.all(se >= 0)):
        raise ValueError("estimate.b and estimate.se must be finite (and se >= 0)")
    labels = np.asarray(subjects)
    if labels.shape != (n,):
        raise ValueError(f"subjects must have shape ({n},) like estimate.b; got {labels.shape}")
    if eligible is None:
        ok = np.ones(n, dtype=bool)
    else:
        ok = np.asarray(eligible)
        if ok.shape != (n,) or ok.dtype != bool:
            raise ValueError(f"eligible must be a bool array of shape ({n},); got {ok.dtype} of shape {ok.shape}")
    pairs = _indices(seen, name="seen", n=n, ndim=2)
    self_pair = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
    if self_pair.size:
        raise ValueError(f"seen pairs a question with itself at row {int(self_pair[0])}")
    info = estimate.pair_information
    if info is not None and info.shape != (n, n):
        raise ValueError(f"estimate.pair_information must have shape ({n}, {n}); got {info.shape}")
    return _choose(labels, b, se, n_comp.astype(np.int64), info, pairs, ok, rng, config, memo=estimate.memo)


def _choose(
    labels: NDArray[Any], b: _FloatArray, se: _FloatArray, n_comp: _IntArray, info: csr_matrix | None,
    pairs: _IntArray,
    ok: NDArray[np.bool_], rng: np.random.Generator, config: AdaptiveConfig, memo: dict[bytes, Any] | None = None,
) -> tuple[int, int] | None:
    n = b.size
    _, group = np.unique(labels, return_inverse=True)
    group = np.where(ok, group.reshape(-1).astype(np.int64), -1)
    n_groups = int(group.max()) + 1 if n else 0
    if n_groups == 0:
        return None
    sizes = np.bincount(group[group >= 0], minlength=n_groups)
    # The evaluator's distinct seen pairs that are candidates (both eligible, same subject).
    lo, hi = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    valid = (group[lo] >= 0) & (group[lo] == group[hi])
    codes = np.unique(lo[valid] * n + hi[valid])
    lo, hi = codes // n, codes % n
    seen_per_group = np.bincount(group[lo], minlength=n_groups)
    unseen = sizes * (sizes - 1) // 2 - seen_per_group
    if unseen.sum() == 0:
        return None
    degree = np.bincount(lo, minlength=n) + np.bincount(hi, minlength=n)
    available = (group >= 0) & (degree < sizes[np.maximum(group, 0)] - 1)

    if rng.random() < config.random_share:
        return _random_pair(group, unseen, codes, n, rng)
    focal = available
    below = available & (n_comp < config.min_comparisons)
    if below.any():
        focal = below
    # Many small dense products: one BLAS thread beats a pool whose threads wait on each other.
    with _blas_controller().limit(limits=1, user_api="blas"):
        return _best_pair(group, b, se, info, focal, available, lo, hi, rng, memo={} if memo is None else memo)
