"""A human difficulty scale from pairwise judgments (Bradley-Terry).

Each judgment says which of two questions an evaluator found harder. The
Bradley-Terry model puts every question on one logit scale,
``P(i judged harder than j) = 1 / (1 + exp(-(b_i - b_j)))``, fitted here by
penalised maximum likelihood (Newton's method, our own kernel). Around it,
the figures comparative judgement reports with such a scale: standard errors,
a bootstrap interval resampling evaluators, scale separation reliability,
split-half reliability, evaluator and question misfit, and the connectivity
of the comparison graph.

The input is oriented by construction: ``harder[k]`` is the question the
evaluator of judgment ``k`` called harder, ``other[k]`` the question it was
compared with. Which question a pair stores first never enters, and skips are
not judgments (leave them out).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from scoring._bradley_terry import sigmoid as _sigmoid
from scoring._quantiles import column_nanquantile
from scoring._scale_fit import _fit, _fit_weighted, _fit_weighted_many, _ties_within
from scoring._threads import one_blas_thread as _one_blas_thread
from scoring._typing import FloatArray as _FloatArray, IntArray as _IntArray
from scoring._validation import check_int, check_number
from scoring.exceptions import NoEstimateError
from scoring.pairs import FIRST, SECOND

__all__ = [
    "DISCONNECTED_WARNING",
    "MISFIT_THRESHOLD",
    "HumanScale",
    "HumanScaleWarning",
    "bradley_terry",
    "human_scale",
    "oriented_judgments",
    "spearman_brown",
]

#: Infit mean square above which an evaluator or question is flagged (the upper end of the
#: 0.7-1.3 range commonly used for Rasch-family fit statistics).
MISFIT_THRESHOLD = 1.3
DISCONNECTED_WARNING = (
    "the comparison graph has {n} connected components (sizes {sizes}); the scale is fitted per component "
    "and each sums to zero, so values from different components are not comparable"
)
SPLIT_HALF_UNDEFINED = (
    "split-half reliability is undefined in {n} of {n_splits} splits (left out of the mean): the two halves' "
    "scales correlate at -1 within rounding, and the Spearman-Brown correction 2r / (1 + r) divides by 0"
)


class HumanScaleWarning(UserWarning):
    """The comparison graph is disconnected (the scale is fitted per component)."""


@dataclass(frozen=True)
class HumanScale:
    """A Bradley-Terry human difficulty scale and its quality figures.

    Attributes
    ----------
    difficulty : ndarray of float64, shape (n_items,)
        Logits, higher = judged harder; sums to zero over each connected
        component. NaN for an item in no judgment.
    se : ndarray of float64, shape (n_items,)
        Standard errors from the observed information of the penalised
        likelihood, under the sum-to-zero constraint of the component
        (Moore-Penrose inverse). NaN for an unjudged item and for an item
        alone in its component.
    ci_low, ci_high : ndarray of float64, shape (n_items,)
        Percentile bootstrap interval (level ``ci_level``) resampling
        evaluators with replacement; NaN where undefined (no bootstrap, or
        the item was judged in no replicate).
    draws : ndarray of float64, shape (n_boot, n_items)
        The bootstrap replicates' scales (a row of NaN for a replicate that
        did not converge; NaN for an item the replicate did not judge).
    n_judgments : ndarray of int64, shape (n_items,)
        Judgments each item took part in.
    component : ndarray of int64, shape (n_items,)
        Connected component of each item (0 = the largest); -1 when unjudged.
    n_components : int
        Components with at least one judgment.
    ssr : float
        Scale separation reliability ``(v - mean(se**2)) / v`` with ``v`` the
        sample variance (ddof 1) of the difficulties, over the items of
        components of two items or more. NaN when fewer than 2 such items.
    split_half : float
        Mean over ``n_splits`` random halves of the evaluators of the
        Spearman-Brown corrected Pearson correlation between the two halves'
        scales (items judged in both halves). NaN when undefined in every split.
    split_half_spearman : float
        The same with Spearman correlations.
    n_splits_defined : int
        Splits in which the correlation was defined.
    evaluator_infit, evaluator_outfit : ndarray of float64, shape (n_evaluators,)
        Information-weighted (infit) and unweighted (outfit) mean squares of
        each evaluator's judgments; NaN for an evaluator without judgments.
    evaluator_flagged : ndarray of bool, shape (n_evaluators,)
        ``evaluator_infit > misfit_threshold``.
    item_infit, item_outfit : ndarray of float64, shape (n_items,)
        The same per question.
    item_flagged : ndarray of bool, shape (n_items,)
    misfit_threshold : float
    penalty : float
    ci_level : float
    n_boot, n_splits : int
    n_iter : int
        Newton iterations of the full fit (summed over components).
    converged : bool
    residual : float
        Largest absolute gradient entry at the end of the full fit.
    warnings : tuple of str
        The disconnected-graph warning when it was raised, and the reason
        when splits were left out of the split-half figures because the
        halves correlate at -1 within rounding (Spearman-Brown undefined).
    """

    difficulty: _FloatArray
    se: _FloatArray
    ci_low: _FloatArray
    ci_high: _FloatArray
    draws: _FloatArray
    n_judgments: _IntArray
    component: _IntArray
    n_components: int
    ssr: float
    split_half: float
    split_half_spearman: float
    n_splits_defined: int
    evaluator_infit: _FloatArray
    evaluator_outfit: _FloatArray
    evaluator_flagged: NDArray[np.bool_]
    item_infit: _FloatArray
    item_outfit: _FloatArray
    item_flagged: NDArray[np.bool_]
    misfit_threshold: float
    penalty: float
    ci_level: float
    n_boot: int
    n_splits: int
    n_iter: int
    converged: bool
    residual: float
    warnings: tuple[str, ...]


# --- validation -----------------------------------------------------------------------


def _index_array(values: ArrayLike, *, name: str) -> _IntArray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional; got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must hold indices >= 0; got {int(arr.min())} at position {int(arr.argmin())}")
    return arr


def _check_inputs(
    harder: ArrayLike, other: ArrayLike, evaluator: ArrayLike | None, n_items: int | None, n_evaluators: int | None
) -> tuple[_IntArray, _IntArray, _IntArray, int, int]:
    h = _index_array(harder, name="harder")
    o = _index_array(other, name="other")
    e = np.zeros(h.size, dtype=np.int64) if evaluator is None else _index_array(evaluator, name="evaluator")
    if not (h.size == o.size == e.size):
        raise ValueError(f"harder, other and evaluator must have equal lengths; got {h.size}, {o.size}, {e.size}")
    same = np.flatnonzero(h == o)
    if same.size:
        raise ValueError(f"a judgment compares a question with itself: harder == other at position {int(same[0])}")
    needed = int(max(h.max(initial=-1), o.max(initial=-1))) + 1
    if n_items is None:
        n_items = needed
    elif isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < needed:
        raise ValueError(f"n_items must be an integer >= {needed} (the largest question index + 1); got {n_items!r}")
    needed_e = int(e.max(initial=-1)) + 1
    if n_evaluators is None:
        n_evaluators = needed_e
    elif isinstance(n_evaluators, bool) or not isinstance(n_evaluators, (int, np.integer)) or n_evaluators < needed_e:
        raise ValueError(
            f"n_evaluators must be an integer >= {needed_e} (the largest evaluator index + 1); got {n_evaluators!r}"
        )
    return h, o, e, int(n_items), int(n_evaluators)


# --- kernel ---------------------------------------------------------------------------


def _check_estimate_exists(h: _IntArray, o: _IntArray, n_items: int) -> None:
    """Raise :class:`NoEstimateError` unless every connected component is strongly connected.

    An edge runs from the question judged harder to the other one. The unpenalised likelihood has a
    finite maximum exactly when, within each component, every question can be reached from every
    other along such edges (Zermelo's and Ford's condition); otherwise a group of questions that no
    question outside it was ever judged harder than has logits that diverge to +infinity.
    """
    if h.size == 0:
        return
    graph = coo_matrix((np.ones(h.size), (h, o)), shape=(n_items, n_items)).tocsr()
    _, weak = connected_components(graph, directed=False)
    n_strong, strong = connected_components(graph, directed=True, connection="strong")
    judged = np.zeros(n_items, dtype=bool)
    judged[h] = True
    judged[o] = True
    if np.unique(strong[judged]).size == np.unique(weak[judged]).size:
        return
    # A strong component that no edge from outside enters: judged harder than every outsider it met.
    entered = np.zeros(n_strong, dtype=bool)
    crossing = strong[h] != strong[o]
    entered[strong[o[crossing]]] = True  # o was judged easier than someone outside its strong component
    sources = [c for c in np.unique(strong[judged]).tolist()
               if not entered[c] and np.any(crossing & (strong[h] == c))]
    group = np.flatnonzero(strong == sources[0]) if sources else np.flatnonzero(judged)
    shown = tuple(int(i) for i in group[:10])
    more = f" and {group.size - 10} more" if group.size > 10 else ""
    raise NoEstimateError("Bradley-Terry", questions=shown, reason=(
        f"question(s) {list(shown)}{more} are judged harder than every question outside their group that "
        "they are compared with, and never easier, so their logits grow without bound"))


def spearman_brown(r: float, *, factor: float = 2.0) -> float:
    """Spearman-Brown prophecy: the reliability of a test ``factor`` times as long.

    Parameters
    ----------
    r : float
        Reliability (here the correlation between two halves), in [-1, 1].
    factor : float, default 2.0
        Lengthening factor (2: from a half to the whole).

    Returns
    -------
    float
        ``factor * r / (1 + (factor - 1) * r)``; NaN when ``r`` is NaN or
        the denominator is 0 within the rounding of its two terms
        (``|den| <= 8 eps (1 + |(factor - 1) r|)``: two exactly mirrored
        halves give ``r = -1 + 2**-52``, whose "reliability" would be
        -9e15).

    Examples
    --------
    >>> round(spearman_brown(0.6), 4)
    0.75
    >>> spearman_brown(-1 + 2**-52)
    nan
    """
    if not np.isfinite(r):
        return float("nan")
    term = (factor - 1.0) * r
    den = 1.0 + term
    if abs(den) <= 8 * np.finfo(np.float64).eps * (1.0 + abs(term)):
        return float("nan")
    return float(factor * r / den)


def _misfit(
    b: _FloatArray, h: _IntArray, o: _IntArray, groups: _IntArray, n_groups: int
) -> tuple[_FloatArray, _FloatArray]:
    """Infit and outfit mean squares of the judgments grouped by ``groups``.

    For a judgment with model probability ``p = sigma(b_harder - b_other)``
    that the observed verdict happens, the squared residual is ``(1 - p)**2``
    and its variance ``p (1 - p)``: outfit = mean of ``(1 - p) / p``, infit =
    ``sum (1 - p)**2 / sum p (1 - p)``. Both expect 1 under the model.
    """
    p = _sigmoid(b[h] - b[o])
    sq = (1.0 - p) ** 2
    var = p * (1.0 - p)
    count = np.bincount(groups, minlength=n_groups).astype(float)
    sq_sum = np.bincount(groups, weights=sq, minlength=n_groups)
    var_sum = np.bincount(groups, weights=var, minlength=n_groups)
    z_sum = np.bincount(groups, weights=sq / var, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        infit = np.where(var_sum > 0, sq_sum / var_sum, np.nan)
        outfit = np.where(count > 0, z_sum / count, np.nan)
    return infit, outfit


def bradley_terry(
    harder: ArrayLike,
    other: ArrayLike,
    *,
    n_items: int | None = None,
    penalty: float = 0.1,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> tuple[_FloatArray, _FloatArray]:
    """Fit a penalised Bradley-Terry scale; no bootstrap, reliability or misfit.

    Parameters
    ----------
    harder, other : array-like of int, shape (n_judgments,)
        Per judgment, the index of the question judged harder and of the one
        it was compared with (indices in ``[0, n_items)``).
    n_items : int, optional
        Number of questions; default the largest index + 1.
    penalty : float, default 0.1
        Ridge penalty ``penalty/2 * sum b**2`` (>= 0; 0 = plain maximum
        likelihood, which exists only when every connected component of the
        judgments is strongly connected; otherwise :class:`NoEstimateError`
        is raised before any iteration).
    tol : float, default 1e-9
        Stop when the largest absolute gradient entry is below ``tol``.
    max_iter : int, default 100
        Newton iterations per component.

    Returns
    -------
    difficulty, se : ndarray of float64, shape (n_items,)
        Logits summing to zero per connected component (NaN when unjudged)
        and their standard errors.

    Raises
    ------
    ValueError
        On malformed input (the message names the parameter).
    ConvergenceError
        If a component does not converge within ``max_iter``.
    NoEstimateError
        With ``penalty=0``, when no maximum-likelihood estimate exists (a
        group of questions judged harder than every outsider it met, never
        easier); the message names the questions.

    Examples
    --------
    >>> b, se = bradley_terry([0, 0, 0, 1], [1, 1, 1, 0], penalty=0.0)
    >>> [round(x, 4) for x in b]  # +-log(3)/2
    [0.5493, -0.5493]
    """
    h, o, _, n, _ = _check_inputs(harder, other, None, n_items, None)
    penalty = check_number(penalty, name="penalty", low=0.0)
    tol = check_number(tol, name="tol", low=0.0, low_open=True)
    max_iter = check_int(max_iter, name="max_iter", low=1)
    if penalty == 0:
        _check_estimate_exists(h, o, n)
    b, se, *_ = _fit(h, o, n, penalty, tol=tol, max_iter=max_iter, raise_on_fail=True)
    return b, se


def human_scale(
    harder: ArrayLike,
    other: ArrayLike,
    evaluator: ArrayLike,
    *,
    n_items: int | None = None,
    n_evaluators: int | None = None,
    penalty: float = 0.1,
    n_boot: int = 200,
    n_splits: int = 100,
    ci_level: float = 0.95,
    misfit_threshold: float = MISFIT_THRESHOLD,
    tol: float = 1e-9,
    max_iter: int = 100,
    rng: np.random.Generator | int | None = None,
    warm_start: bool = True,
) -> HumanScale:
    """A Bradley-Terry human difficulty scale with its reliability and misfit.

    Parameters
    ----------
    harder, other : array-like of int, shape (n_judgments,)
        Per judgment, the question judged harder and the question it was
        compared with (indices in ``[0, n_items)``). Skips are not
        judgments: leave them out. Orientation-free by construction.
    evaluator : array-like of int, shape (n_judgments,)
        Index of the evaluator of each judgment, in ``[0, n_evaluators)``.
    n_items, n_evaluators : int, optional
        Default: the largest index + 1.
    penalty : float, default 0.1
        Ridge penalty on the logits (see :func:`bradley_terry`); it keeps a
        question that wins or loses every comparison finite.
    n_boot : int, default 200
        Bootstrap replicates resampling evaluators with replacement (0: no
        interval).
    n_splits : int, default 100
        Random splits of the evaluators into two halves (sizes
        ``floor(m/2)`` and ``ceil(m/2)`` of the ``m`` evaluators with
        judgments) for split-half reliability (0: none).
    ci_level : float, default 0.95
        Level of the bootstrap interval, in (0, 1).
    misfit_threshold : float, default 1.3
        An evaluator or question is flagged when its infit mean square
        exceeds it (the model expects 1; 1.3 is the upper end of the
        0.7-1.3 range commonly used for Rasch-family fit statistics).
    tol : float, default 1e-9
        Convergence tolerance on the largest absolute gradient entry.
    max_iter : int, default 100
        Newton iterations per component.
    rng : numpy.random.Generator, int or None
        Randomness of the bootstrap and the splits.
    warm_start : bool, default True
        Start every bootstrap and split-half refit's Newton iteration from
        the full fit (restricted to each of the refit's components and
        re-centred), not from 0: about half the iterations. Each refit still
        stops at ``max |gradient| <= tol``, so a figure differs from the
        cold start (``False``, kept as the reference) only within that
        tolerance: the penalised objective's curvature is at least
        ``penalty`` on the sum-to-zero subspace, so two solutions meeting
        ``tol`` lie within ``2 * sqrt(n) * tol / penalty`` of each other
        (Euclidean norm over a component of ``n`` items).

    Returns
    -------
    HumanScale
        Difficulty in logits (higher = harder, sum to zero per connected
        component), standard errors, bootstrap interval, SSR, split-half
        reliability, misfit and connectivity.

    Raises
    ------
    ValueError
        On malformed input or parameters (the message names which).
    ConvergenceError
        If the full fit does not converge (a bootstrap or split-half
        replicate that does not converge is left out).

    Warns
    -----
    HumanScaleWarning
        When the comparison graph has more than one connected component.

    Notes
    -----
    A refit whose set of evaluators (with multiplicities) was already
    fitted reuses that fit: with few evaluators, most draws repeat. The
    distinct refits whose comparison graph has the full fit's components
    (components of at most :data:`DENSE_MAX` items) are fitted together, one
    stacked Newton iteration for all of them (:func:`_fit_weighted_many`);
    each still stops at its own ``tol``, and the figures equal those of
    fitting them one by one.
    SSR (scale separation reliability) is ``(v - mean(se**2)) / v`` with
    ``v`` the sample variance of the estimates, the share of observed
    variance that is not measurement error. Split-half reliability: the
    evaluators are split at random into halves, each half's judgments fitted
    separately, the two scales correlated over the questions both halves
    judged and the correlation corrected to full length by Spearman-Brown
    (:func:`spearman_brown`); the figure is the mean over the splits.
    Reversing which question of a pair is stored first, or the order of the
    judgments, changes no figure (with the same ``rng``). Kinnear, Jones and
    Davies (2025) find about 10 comparisons per item usually suffice and
    recommend SSR >= 0.8.

    References
    ----------
    Bradley, R. A. and Terry, M. E. (1952). Rank analysis of incomplete block
    designs. Biometrika 39, 324-345. Pollitt, A. (2012). The method of
    Adaptive Comparative Judgement. Assessment in Education 19, 281-300.
    Kinnear, G., Jones, I. and Davies, B. (2025). Comparative judgement as a
    research tool: a meta-analysis. Behavior Research Methods.

    Examples
    --------
    >>> s = human_scale([0, 0, 1, 1, 2], [1, 2, 2, 0, 0], [0, 0, 1, 1, 1], n_boot=0, n_splits=0)
    >>> s.n_components, bool(s.difficulty[0] > s.difficulty[2])
    (1, True)
    """
    with _one_blas_thread():
        return _human_scale(harder, other, evaluator, n_items=n_items, n_evaluators=n_evaluators, penalty=penalty,
                            n_boot=n_boot, n_splits=n_splits, ci_level=ci_level, misfit_threshold=misfit_threshold,
                            tol=tol, max_iter=max_iter, rng=rng, warm_start=warm_start)


def _human_scale(
    harder: ArrayLike, other: ArrayLike, evaluator: ArrayLike, *, n_items: int | None, n_evaluators: int | None,
    penalty: float, n_boot: int, n_splits: int, ci_level: float, misfit_threshold: float, tol: float, max_iter: int,
    rng: np.random.Generator | int | None, warm_start: bool = True, reuse: bool = True, batch: bool = True,
) -> HumanScale:
    """:func:`human_scale` without the BLAS limit (reference switches for the bench and tests).

    ``reuse=False`` refits a repeated draw (bench reference), ``batch=False`` fits the refits one at a
    time (the reference of :func:`_fit_weighted_many`).
    """
    h, o, e, n, m = _check_inputs(harder, other, evaluator, n_items, n_evaluators)
    penalty = check_number(penalty, name="penalty", low=0.0)
    n_boot = check_int(n_boot, name="n_boot", low=0)
    n_splits = check_int(n_splits, name="n_splits", low=0)
    ci_level = check_number(ci_level, name="ci_level", low=0.0, high=1.0, low_open=True, high_open=True)
    misfit_threshold = check_number(misfit_threshold, name="misfit_threshold", low=0.0, low_open=True)
    tol = check_number(tol, name="tol", low=0.0, low_open=True)
    max_iter = check_int(max_iter, name="max_iter", low=1)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    # A canonical judgment order (sorted by evaluator, then question pair) makes every figure
    # independent of the order the judgments were given in.
    order = np.lexsort((o, h, e))
    h, o, e = h[order], o[order], e[order]

    if penalty == 0:
        _check_estimate_exists(h, o, n)
    b, se, component, n_comp, n_iter, residual, converged = _fit(
        h, o, n, penalty, tol=tol, max_iter=max_iter, raise_on_fail=True
    )
    notes: list[str] = []
    if n_comp > 1:
        sizes = np.bincount(component[component >= 0]).tolist()
        notes.append(DISCONNECTED_WARNING.format(n=n_comp, sizes=sizes))
        warnings.warn(notes[-1], HumanScaleWarning, stacklevel=4)

    n_judgments = (np.bincount(h, minlength=n) + np.bincount(o, minlength=n)).astype(np.int64)
    sizes_of = np.bincount(component[component >= 0], minlength=max(n_comp, 1))
    in_big = (component >= 0) & (sizes_of[np.maximum(component, 0)] >= 2)
    ssr = _ssr(b[in_big], se[in_big])

    by_evaluator = [np.flatnonzero(e == k) for k in range(m)]
    active = np.array([k for k in range(m) if by_evaluator[k].size], dtype=np.int64)

    ci_low = np.full(n, np.nan)
    ci_high = np.full(n, np.nan)
    draws = np.full((n_boot if active.size else 0, n), np.nan)
    # refits count each evaluator's judgments as often as the evaluator is drawn (weights)
    codes, inverse = np.unique(h * n + o, return_inverse=True)
    inverse = inverse.reshape(-1)
    start = b if warm_start else None
    refits: dict[bytes, tuple[_FloatArray, bool]] = {}

    def refit(times: _FloatArray) -> tuple[_FloatArray, bool]:
        """The fit with evaluator ``k``'s judgments counted ``times[k]`` times.

        A fit is a deterministic function of ``times``, so a set of evaluators drawn again (few
        evaluators give few distinct draws) reuses it: the same figures, fitted once.
        """
        key = times.tobytes()
        if not reuse or key not in refits:
            refits[key] = _fit_weighted(codes, inverse, times[e], n, penalty, tol=tol, max_iter=max_iter,
                                        start=start)
        return refits[key]

    # Every refit's weights are drawn first (the generator is consumed as by fitting in turn: a fit
    # draws nothing), then the distinct ones fitted together (:func:`_fit_weighted_many`).
    boot_times = []
    if n_boot and active.size:
        for _ in range(n_boot):
            pick = gen.choice(active, size=active.size, replace=True)
            boot_times.append(np.bincount(pick, minlength=m).astype(np.float64))
    split_times = []
    if n_splits and active.size >= 2:
        half = active.size // 2
        for _ in range(n_splits):
            perm = gen.permutation(active)
            split_times.append([np.bincount(part, minlength=m).astype(np.float64)
                                for part in (perm[:half], perm[half:])])
    if reuse and batch:
        wanted: dict[bytes, _FloatArray] = {}
        for t in boot_times + [t for pair in split_times for t in pair]:
            wanted.setdefault(t.tobytes(), t)
        fitted = _fit_weighted_many(codes, inverse, e, list(wanted.values()), n, penalty, tol=tol, max_iter=max_iter,
                                    start=start, component=component, n_comp=n_comp)
        refits.update(zip(wanted, fitted, strict=True))

    if boot_times:
        for r, t in enumerate(boot_times):
            bb, ok = refit(t)
            if ok:
                draws[r] = bb
        alpha = (1.0 - ci_level) / 2.0
        seen = np.isfinite(draws).any(axis=0)
        if seen.any():
            ci_low[seen], ci_high[seen] = column_nanquantile(draws[:, seen], np.array([alpha, 1.0 - alpha]))

    split_p, split_s = [], []
    n_mirrored = 0
    if split_times:
        from scipy import stats  # ~1 s at import: loaded where used, not when the site starts

        for pair in split_times:
            scales = []
            for t in pair:
                bb, ok = refit(t)
                scales.append(bb if ok else np.full(n, np.nan))
            both = np.isfinite(scales[0]) & np.isfinite(scales[1])
            x, y = scales[0][both], scales[1][both]
            if both.sum() >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
                r_p = float(np.corrcoef(x, y)[0, 1])
                sb = spearman_brown(r_p)
                if not np.isfinite(sb):
                    n_mirrored += 1
                    continue
                split_p.append(sb)
                # two fits to ``tol`` differ by at most this (no such bound without a penalty: exact ties only)
                close = 2.0 * np.sqrt(n) * tol / penalty if penalty > 0 else 0.0
                split_s.append(spearman_brown(float(stats.spearmanr(_ties_within(x, close),
                                                                    _ties_within(y, close)).statistic)))

    if n_mirrored:
        notes.append(SPLIT_HALF_UNDEFINED.format(n=n_mirrored, n_splits=len(split_times)))
    if h.size:
        ev_infit, ev_outfit = _misfit(b, h, o, e, m)
        it_groups = np.concatenate([h, o])
        it_infit, it_outfit = _misfit(b, np.concatenate([h, h]), np.concatenate([o, o]), it_groups, n)
    else:
        ev_infit = ev_outfit = np.full(m, np.nan)
        it_infit = it_outfit = np.full(n, np.nan)
    with np.errstate(invalid="ignore"):
        ev_flag = np.nan_to_num(ev_infit, nan=0.0) > misfit_threshold
        it_flag = np.nan_to_num(it_infit, nan=0.0) > misfit_threshold

    return HumanScale(
        difficulty=b, se=se, ci_low=ci_low, ci_high=ci_high, draws=draws, n_judgments=n_judgments, component=component,
        n_components=n_comp, ssr=ssr,
        split_half=float(np.mean(split_p)) if split_p else float("nan"),
        split_half_spearman=float(np.nanmean(split_s)) if split_s and np.isfinite(split_s).any() else float("nan"),
        n_splits_defined=len(split_p),
        evaluator_infit=ev_infit, evaluator_outfit=ev_outfit, evaluator_flagged=ev_flag,
        item_infit=it_infit, item_outfit=it_outfit, item_flagged=it_flag,
        misfit_threshold=misfit_threshold, penalty=penalty, ci_level=ci_level, n_boot=n_boot, n_splits=n_splits,
        n_iter=n_iter, converged=converged, residual=residual, warnings=tuple(notes),
    )


def _ssr(b: _FloatArray, se: _FloatArray) -> float:
    if b.size < 2:
        return float("nan")
    v = float(np.var(b, ddof=1))
    if v <= 0:
        return float("nan")
    return (v - float(np.mean(se**2))) / v


def oriented_judgments(
    pair_index: ArrayLike, pair: ArrayLike, verdict: ArrayLike
) -> tuple[_IntArray, _IntArray, NDArray[np.bool_]]:
    """Turn stored pair verdicts into ``(harder, other)`` question indices, skips dropped.

    Parameters
    ----------
    pair_index : array-like of int, shape (n_pairs, 2)
        Question indices of each pair in its stored order ``(a, b)``.
    pair : array-like of int, shape (n_judgments,)
        Row of ``pair_index`` each judgment is about.
    verdict : array-like of int, shape (n_judgments,)
        :data:`scoring.FIRST` (``a`` harder) or :data:`scoring.SECOND`
        (``b`` harder); anything else (a skip) is not a vote.

    Returns
    -------
    harder, other : ndarray of int64, shape (n_votes,)
    kept : ndarray of bool, shape (n_judgments,)
        Which judgments were votes (to select their evaluators).

    Examples
    --------
    >>> from scoring import FIRST, SECOND, SKIP
    >>> h, o, kept = oriented_judgments([[3, 5]], [0, 0, 0], [FIRST, SECOND, SKIP])
    >>> h.tolist(), o.tolist(), kept.tolist()
    ([3, 5], [5, 3], [True, True, False])
    """
    idx = np.asarray(pair_index, dtype=np.int64).reshape(-1, 2)
    p = np.asarray(pair, dtype=np.int64)
    v = np.asarray(verdict, dtype=np.int64)
    if p.shape != v.shape or p.ndim != 1:
        raise ValueError(f"pair and verdict must be 1-D of equal length; got shapes {p.shape} and {v.shape}")
    kept = (v == int(FIRST)) | (v == int(SECOND))
    first = v[kept] == int(FIRST)
    a, b = idx[p[kept], 0], idx[p[kept], 1]
    return np.where(first, a, b), np.where(first, b, a), kept


