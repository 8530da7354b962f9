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
    evaluator has already been shown (one dense covariance per subject).

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
from scoring._validation import check_int, check_number
from scoring.exceptions import ConvergenceError

__all__ = ["AdaptiveConfig", "ScaleEstimate", "choose_next_pair", "scale_estimate"]

_FloatArray = NDArray[np.float64]
_IntArray = NDArray[np.int64]

#: Rows of focal questions scored per block in :func:`choose_next_pair` (memory ~ block x subject size).
_BLOCK = 128
#: Relative tolerance under which two criterion values count as a tie.
_TIE_RTOL = 1e-9
#: Partners per group (consecutive in difficulty) bounded together by :func:`_diagonal_candidates`.
_BUCKET = 16
#: (Question, group) cells scored first by :func:`_diagonal_candidates` to set the bar for the others.
_FIRST_CELLS = 32
#: Relative margin that keeps the bound of :func:`_diagonal_bound` above the criterion despite rounding.
_BOUND_RTOL = 1e-12
#: Skip pairs that :func:`_diagonal_bound` places below the best (False scores every pair; same choice).
_PRUNE = True
#: Entries per block of :func:`_rank_weight` (a few hundred kilobytes per temporary array).
_RANK_BLOCK_ENTRIES = 32_768
#: Largest subject whose rank weights are computed on one triangle and mirrored (memory 8 bytes x its square).
_RANK_SYMMETRIC_MAX = 1500
#: Largest subject (eligible questions) whose full covariance is used by :func:`choose_next_pair`.
_DENSE_MAX = 300
#: Unseen share of a subject's pairs below which the random draw enumerates instead of rejecting.
_ENUMERATE_BELOW = 0.1
_REJECTION_TRIES = 64


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


def _pq(d: _FloatArray) -> _FloatArray:
    """``p (1 - p)`` for ``p = sigma(d)``, accurate in the tails."""
    z = np.exp(-np.abs(d))
    out: _FloatArray = z / (1.0 + z) ** 2
    return out


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
    more than ``_DENSE_MAX`` (300) eligible questions use the diagonal
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
    questions in blocks. A subject above ``_DENSE_MAX`` needs no inverse:
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


_CONTROLLER: list[Any] = []


def _blas_controller() -> Any:
    """The BLAS thread-pool controller of threadpoolctl, built once (building it scans the libraries)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def _difference_variance(var_i: _FloatArray, var_j: _FloatArray, w: _FloatArray) -> _FloatArray:
    """Approximate variance of ``b_i - b_j`` for pairs with votes of their own (elementwise).

    Without its own votes a pair's difference has variance ``var_i +
    var_j``. The pair's own information ``w > 0`` is a direct link in
    parallel with the route through the other comparisons, ``r_i + r_j``
    with ``r_i = 1 / (1/var_i - w)``: ``V = R / (1 + w R)``, ``R = r_i +
    r_j`` (the effective resistance of that two-route network).
    ``t -> t / (1 + w t)`` is subadditive, so ``V <= var_i + var_j``: the
    scan's bound stays valid.
    """
    r_i = 1.0 / np.maximum(1.0 / var_i - w, 1e-12)
    r_j = 1.0 / np.maximum(1.0 / var_j - w, 1e-12)
    total = r_i + r_j
    out: _FloatArray = np.minimum(total / (1.0 + w * total), var_i + var_j)
    return out


def _random_pair(group: _IntArray, unseen: _IntArray, codes: _IntArray, n: int,
                 rng: np.random.Generator) -> tuple[int, int]:
    """Uniform over the evaluator's unseen candidate pairs: pick the subject by its unseen count, then reject."""
    g = int(rng.choice(unseen.size, p=unseen / unseen.sum()))
    members = np.flatnonzero(group == g)
    m = members.size
    seen_codes = set(codes[(group[codes // n] == g)].tolist())
    total = m * (m - 1) // 2
    if unseen[g] >= _ENUMERATE_BELOW * total:
        for _ in range(_REJECTION_TRIES):
            x, y = rng.choice(m, size=2, replace=False)
            i, j = int(min(members[x], members[y])), int(max(members[x], members[y]))
            if i * n + j not in seen_codes:
                return i, j
    a, c = np.triu_indices(m, k=1)
    all_codes = members[a] * n + members[c]
    free = all_codes[~np.isin(all_codes, np.fromiter(seen_codes, dtype=np.int64, count=len(seen_codes)))]
    pick = int(free[rng.integers(free.size)])
    return pick // n, pick % n


def _subject_covariance(members: _IntArray, var: _FloatArray, info: csr_matrix | None,
                        at: _IntArray) -> _FloatArray:
    """Laplace covariance of the subject's estimates: ``inv(diag(1 / se**2) - W)``, ``W`` the pair information.

    ``1 / se**2`` is the question's information plus the penalty, so this is
    the inverse of the penalised Bradley-Terry Hessian restricted to the
    subject (votes never cross subjects). ``at`` maps a question to its
    position in ``members`` (-1 outside).
    """
    precision = np.diag(1.0 / var[members])
    if info is not None and info.nnz:
        block = info[members][:, members].tocoo()
        precision[block.row, block.col] -= block.data
    out: _FloatArray = np.asarray(np.linalg.inv(precision), dtype=np.float64)
    return out


def _rank_weight(b: _FloatArray, var: _FloatArray) -> _FloatArray:
    """Squared rank sensitivity of each question of a subject, mean 1.

    ``f_i = sum_{j != i} phi((b_i - b_j) / s_ij) / s_ij`` with ``s_ij**2 =
    var_i + var_j``: the derivative of question ``i``'s expected rank among
    the subject's questions with respect to its logit, under the current
    normal approximation. An error of ``delta`` logits in ``b_i`` moves its
    rank by about ``f_i delta``, so the expected squared rank error (what
    Spearman's correlation depends on) is ``sum_i f_i**2 Var(b_i)``.
    """
    m = b.size
    if m < 2:
        return np.ones(m)
    # In blocks of rows that stay in the cache; each entry and each row sum are computed exactly as on the
    # whole matrix at once (same operations, same order), so the result does not depend on the block size.
    # The entries are symmetric bit for bit (var_i + var_j, and b_i - b_j against b_j - b_i, differ only in
    # sign), so up to _RANK_SYMMETRIC_MAX questions each block is computed from its diagonal on and mirrored.
    root = np.sqrt(2.0 * np.pi)
    rows = max(1, _RANK_BLOCK_ENTRIES // m)
    symmetric = m <= _RANK_SYMMETRIC_MAX
    full = np.empty((m, m)) if symmetric else np.empty((0, 0))
    f = np.empty(m)
    for k in range(0, m, rows):
        r = slice(k, min(k + rows, m))
        c = slice(k if symmetric else 0, m)
        s = np.sqrt(var[r, None] + var[None, c])
        z = b[r, None] - b[None, c]
        z /= s
        dens = -0.5 * z
        dens *= z
        np.exp(dens, out=dens)
        s *= root
        dens /= s
        if symmetric:
            full[r, c] = dens
            full[c, r] = dens.T
        else:
            dens[np.arange(r.stop - r.start), np.arange(r.start, r.stop)] = 0.0
            f[r] = dens.sum(axis=1)
    if symmetric:
        np.fill_diagonal(full, 0.0)
        f = full.sum(axis=1)
    w: _FloatArray = f * f
    mean = float(w.mean())
    return w / mean if mean > 0 else np.ones(b.size)


def _subject_terms(members: _IntArray, b: _FloatArray, var: _FloatArray, info: csr_matrix | None,
                   dense: bool) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    """A subject's rank weights (:func:`_rank_weight`), and its covariance and weighted centred Gram matrix.

    The covariance (:func:`_subject_covariance`) and the Gram matrix are empty (0 x 0) unless ``dense``.
    """
    weight = _rank_weight(b[members], var[members])
    if not dense:
        return weight, np.empty((0, 0)), np.empty((0, 0))
    at = np.full(b.size, -1, dtype=np.int64)
    at[members] = np.arange(members.size)
    cov = _subject_covariance(members, var, info, at)
    centred = cov - cov.mean(axis=0, keepdims=True)
    gram = centred.T @ (weight[:, None] * centred)
    return weight, cov, gram


def _offer(crit: _FloatArray, best: float, n_ties: int, rng: np.random.Generator) -> tuple[float, int, int]:
    """One batch of scored pairs into the running choice (reservoir sampling over ties).

    Returns the new best value, the number of pairs tied with it so far and
    the position in ``crit`` of the batch's pick, or -1 when the running
    choice stands.
    """
    if crit.size == 0:
        return best, n_ties, -1
    top = float(crit.max())
    if top == -np.inf:
        return best, n_ties, -1
    if top > best * (1.0 + _TIE_RTOL) if best > 0 else top > best:
        idx = np.flatnonzero(crit >= top * (1.0 - _TIE_RTOL))
        return top, idx.size, int(idx[rng.integers(idx.size)])
    idx = np.flatnonzero(crit >= best * (1.0 - _TIE_RTOL))
    if idx.size == 0:
        return best, n_ties, -1
    n_ties += idx.size
    if rng.random() * n_ties >= idx.size:
        return best, n_ties, -1
    return best, n_ties, int(idx[rng.integers(idx.size)])


def _diagonal_criterion(i: _IntArray, j: _IntArray, b: _FloatArray, var: _FloatArray, weight_of: _FloatArray,
                        info: csr_matrix | None) -> _FloatArray:
    """Criterion of the pairs ``(i, j)`` under the diagonal covariance (subjects above ``_DENSE_MAX``).

    ``i`` and ``j`` are index arrays that broadcast: a column and a row (every
    pair of the two sets) or two 1-D arrays of equal length (those pairs).
    ``weight_of`` holds the rank weights by question index.
    """
    pq = _pq(b[i] - b[j])
    v = var[i] + var[j]
    num = weight_of[i] * var[i] ** 2 + weight_of[j] * var[j] ** 2
    if info is not None and info.nnz and v.size:
        if i.ndim == 2:
            w_own: NDArray[np.float64] = info[i.reshape(-1)][:, j.reshape(-1)].toarray()
        else:
            w_own = np.asarray(info[i, j], dtype=np.float64).reshape(-1)
        has = w_own != 0
        if has.any():
            var_i, var_j = np.broadcast_to(var[i], v.shape), np.broadcast_to(var[j], v.shape)
            v[has] = _difference_variance(var_i[has], var_j[has], w_own[has])
    out: _FloatArray = pq * num / (1.0 + pq * v)
    return out


def _diagonal_bound(i: _IntArray, b_low: _FloatArray, b_high: _FloatArray, top_num: _FloatArray,
                    low_var: _FloatArray, b: _FloatArray, var: _FloatArray, weight_of: _FloatArray) -> _FloatArray:
    """Upper bound of :func:`_diagonal_criterion` of question ``i`` with any partner of a group.

    A group is given by the range ``[b_low, b_high]`` of its members'
    difficulties, the largest ``weight * var**2`` and the smallest variance
    among them (1-D arrays, one entry per group); the result has shape
    ``(i.size, n_groups)``. The criterion ``(n_i + n_j) / (1 / w + v)``
    grows with ``w = p (1 - p)``, which falls with the distance ``|b_i -
    b_j|``, and falls with ``v``: the nearest difficulty in the range, the
    largest numerator and the smallest ``v = var_i + var_j`` bound it. Pairs
    with votes of their own have a smaller ``v`` (:func:`_difference_variance`)
    and are not covered.
    """
    bi = b[i][:, None]
    gap = np.maximum(np.maximum(b_low[None, :] - bi, bi - b_high[None, :]), 0.0)
    pq = _pq(gap)
    num = (weight_of[i] * var[i] ** 2)[:, None] + top_num[None, :]
    out: _FloatArray = pq * num / (1.0 + pq * (var[i][:, None] + low_var[None, :]))
    return out


def _diagonal_candidates(
    rows: _IntArray, cols: _IntArray, b: _FloatArray, var: _FloatArray, weight_of: _FloatArray,
    info: csr_matrix | None, focal: NDArray[np.bool_], seen_codes: _IntArray, n: int,
) -> tuple[_IntArray, _IntArray]:
    """The pairs (focal ``rows`` x ``cols``) that may reach the best criterion; the rest cannot.

    Returns ``(i, j)``, 1-D, each allowed pair once (not a question with
    itself, not a seen pair, a pair of two focal questions at its first
    one). ``cols`` sorted by difficulty form groups of ``_BUCKET``; each
    focal question's bound against each group (:func:`_diagonal_bound`)
    ranks the (question, group) cells; the ``_FIRST_CELLS`` best are scored,
    then every cell whose bound reaches the best score found (less the tie
    tolerance and a rounding margin) is added. Pairs with votes of their
    own are always kept (the bound does not cover them). Every pair left
    out has a criterion below the best kept one by more than the tie
    tolerance, so the choice (and the ties) are those of scoring every pair.
    """
    order = cols[np.argsort(b[cols], kind="stable")]
    starts = np.arange(0, order.size, _BUCKET)
    sb = b[order]
    b_low, b_high = sb[starts], np.maximum.reduceat(sb, starts)
    top_num = np.maximum.reduceat(weight_of[order] * var[order] ** 2, starts)
    low_var = np.minimum.reduceat(var[order], starts)
    bound = _diagonal_bound(rows, b_low, b_high, top_num, low_var, b, var, weight_of).reshape(-1)
    flat = np.full(starts.size * _BUCKET, -1, dtype=np.int64)
    flat[:order.size] = order
    padded = flat.reshape(starts.size, _BUCKET)
    own_i, own_j = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    if info is not None and info.nnz:
        linked = info[rows].tocoo()
        in_cols = np.zeros(n, dtype=bool)
        in_cols[cols] = True
        keep = in_cols[linked.col]
        own_i, own_j = rows[linked.row[keep]], linked.col[keep].astype(np.int64)

    def pairs_of(cells: _IntArray) -> tuple[_IntArray, _IntArray]:
        i = np.repeat(rows[cells // starts.size], _BUCKET)
        j = padded[cells % starts.size].reshape(-1)
        i, j = np.concatenate([i[j >= 0], own_i]), np.concatenate([j[j >= 0], own_j])
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        ok = (i != j) & ~(focal[j] & (j < i))
        code = lo * n + hi
        ok &= ~np.isin(code, seen_codes)
        code, first = np.unique(code[ok], return_index=True)
        return i[ok][first], j[ok][first]

    first = min(_FIRST_CELLS, bound.size)
    first_i, first_j = pairs_of(np.argpartition(-bound, first - 1)[:first])
    crit = _diagonal_criterion(first_i, first_j, b, var, weight_of, info)
    if crit.size == 0 or not crit.max() > 0:
        return pairs_of(np.arange(bound.size))
    floor = float(crit.max()) * (1.0 - _TIE_RTOL) * (1.0 - _BOUND_RTOL)
    return pairs_of(np.flatnonzero(bound >= floor))


def _best_pair(
    group: _IntArray, b: _FloatArray, se: _FloatArray, info: csr_matrix | None, focal: NDArray[np.bool_],
    available: NDArray[np.bool_], lo: _IntArray, hi: _IntArray, rng: np.random.Generator, memo: dict[bytes, Any],
) -> tuple[int, int]:
    """Maximiser of the expected drop of the subject's squared rank error over unseen pairs with a focal member.

    For a pair ``(i, j)`` with ``a = e_i - e_j`` and ``w = p (1 - p)``: the
    criterion ``w |F C S a|**2 / (1 + w a' S a)`` (``S`` the subject's
    covariance, ``C`` centring, ``F**2`` the rank weights of
    :func:`_rank_weight`; see :func:`choose_next_pair`). Subjects of up
    to ``_DENSE_MAX`` eligible questions use the full covariance; larger ones
    its diagonal (``se**2``, the pair's own votes as a parallel link).
    Ties are broken uniformly at random by reservoir sampling. What depends
    on the estimate and the subject's members alone (rank weights, dense
    covariance) is kept in ``memo`` (the estimate's) under the members' ids.
    """
    n = b.size
    var = se * se
    if info is not None:
        info = info.tocsr()
    order = np.flatnonzero(focal)
    rowpos = np.full(n, -1, dtype=np.int64)
    colpos = np.full(n, -1, dtype=np.int64)
    sa, sb = np.concatenate([lo, hi]), np.concatenate([hi, lo])
    best, n_ties = -np.inf, 0
    choice = (-1, -1)
    for g in np.unique(group[order]):
        focal_rows = order[group[order] == g]
        members = np.flatnonzero(group == g)
        cols = members[available[members]]
        dense = members.size <= _DENSE_MAX
        key = members.tobytes()
        kept = memo.get(key)
        if kept is None or not np.array_equal(kept[0], members):
            kept = (members, *_subject_terms(members, b, var, info, dense))
            memo[key] = kept
        _, weight, cov, gram = kept
        if not dense:
            weight_of = np.ones(n)
            weight_of[members] = weight
        if dense:
            at = np.full(n, -1, dtype=np.int64)
            at[members] = np.arange(members.size)
            d_cov, d_gram = np.diag(cov), np.diag(gram)
        if not dense and _PRUNE:
            # Partners far down or up the scale are bounded below the best without being scored.
            ii, jj = _diagonal_candidates(focal_rows, cols, b, var, weight_of, info, focal, lo * n + hi, n)
            crit = _diagonal_criterion(ii, jj, b, var, weight_of, info)
            best, n_ties, pick = _offer(crit, best, n_ties, rng)
            if pick >= 0:
                choice = (min(int(ii[pick]), int(jj[pick])), max(int(ii[pick]), int(jj[pick])))
            continue
        for k in range(0, focal_rows.size, _BLOCK):
            rows = focal_rows[k:k + _BLOCK]
            if dense:
                pq = _pq(b[rows][:, None] - b[cols][None, :])
                r, c = at[rows], at[cols]
                v = d_cov[r][:, None] + d_cov[c][None, :] - 2.0 * cov[np.ix_(r, c)]
                num = d_gram[r][:, None] + d_gram[c][None, :] - 2.0 * gram[np.ix_(r, c)]
                crit = pq * num / (1.0 + pq * v)
            else:
                crit = _diagonal_criterion(rows[:, None], cols[None, :], b, var, weight_of, info)
            rowpos[rows] = np.arange(rows.size)
            colpos[cols] = np.arange(cols.size)
            crit[rows[:, None] == cols[None, :]] = -np.inf
            # A pair with both members focal is scored at its first focal member only.
            fc = focal[cols]
            crit[(colpos[cols][None, :] >= 0) & fc[None, :] & (cols[None, :] < rows[:, None])] = -np.inf
            hit = (rowpos[sa] >= 0) & (colpos[sb] >= 0)
            crit[rowpos[sa[hit]], colpos[sb[hit]]] = -np.inf
            rowpos[rows] = -1
            colpos[cols] = -1
            best, n_ties, pick = _offer(crit.reshape(-1), best, n_ties, rng)
            if pick >= 0:
                i, j = int(rows[pick // cols.size]), int(cols[pick % cols.size])
                choice = (min(i, j), max(i, j))
    return choice
