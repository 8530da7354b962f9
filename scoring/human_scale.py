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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import coo_matrix, csr_matrix, diags
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import cg

from scoring._bradley_terry import merge_directions, newton_ascent, pair_terms, sigmoid as _sigmoid
from scoring._quantiles import column_nanquantile
from scoring._threads import one_blas_thread as _one_blas_thread
from scoring.exceptions import ConvergenceError, NoEstimateError
from scoring.pairs import FIRST, SECOND

__all__ = [
    "DISCONNECTED_WARNING",
    "MISFIT_THRESHOLD",
    "HumanScale",
    "HumanScaleWarning",
    "bradley_terry",
    "human_scale",
    "oriented_judgments",
    "ScaleCorrelation",
    "scale_correlation",
    "scale_correlations",
    "scale_correlations_by_scope",
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

_FloatArray = NDArray[np.float64]
_IntArray = NDArray[np.int64]


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


def _check_positive_int(value: object, *, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_float(value: object, *, name: str, low: float, high: float | None, open_low: bool = False) -> float:
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    v = float(value) if ok else float("nan")  # type: ignore[arg-type]
    if not ok or not np.isfinite(v) or v < low or (open_low and v == low) or (high is not None and v >= high):
        bounds = f"{'>' if open_low else '>='} {low}" + ("" if high is None else f" and < {high}")
        raise ValueError(f"{name} must be a number {bounds}; got {value!r}")
    return v


# --- kernel ---------------------------------------------------------------------------


def _components(h: _IntArray, o: _IntArray, n_items: int) -> tuple[_IntArray, int]:
    """Component label per item, numbered by decreasing size (ties: smallest item first); -1 unjudged."""
    judged = np.zeros(n_items, dtype=bool)
    judged[h] = True
    judged[o] = True
    graph = coo_matrix((np.ones(h.size), (h, o)), shape=(n_items, n_items))
    _, raw = connected_components(graph, directed=False)
    labels = np.full(n_items, -1, dtype=np.int64)
    keys = sorted({int(c) for c in raw[judged]}, key=lambda c: (-int((raw == c).sum()), int(np.argmax(raw == c))))
    for new, old in enumerate(keys):
        labels[(raw == old) & judged] = new
    return labels, len(keys)


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


#: Components larger than this take their Newton steps by conjugate gradients on the sparse
#: Laplacian instead of a dense solve (its cost grows as n**3, and a report refits the scale ~400 times).
#: Dense components are also the ones whose refits are fitted together (stacked solves): at 317 items
#: (bench report, 50,000 pairs x 5) the stack took ~3.5 s against ~9 s for one conjugate-gradient fit
#: after the other, hence 400 rather than 300.
DENSE_MAX = 400


#: Components of at most this many items start from 0 even in a warm-started refit: small components with
#: the same judgments (common when few evaluators are drawn) then get bit-identical values, so rank ties
#: between them stay ties (a warm start would split them by ~tol and move a Spearman figure), at no cost.
WARM_MIN = 3


def _ties_within(values: _FloatArray, close: float) -> _FloatArray:
    """``values`` with runs of sorted neighbours at most ``close`` apart replaced by the run's first value.

    Two fits of the same judgments that each stop at gradient ``tol`` (a warm
    and a cold start, say) differ by at most ``2 sqrt(n) tol / penalty``; values
    that close are equal within what the fit resolves, so a rank statistic
    must treat them as ties rather than rank them by round-off.
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new_run = np.concatenate([[True], np.diff(ordered) > close])
    firsts = ordered[new_run][np.cumsum(new_run) - 1]
    out = np.empty_like(values)
    out[order] = firsts
    return out


def _fit_component(
    wi: _IntArray, wj: _IntArray, count: _FloatArray, n: int, penalty: float, *, tol: float, max_iter: int,
    with_cov: bool = True, start: _FloatArray | None = None,
) -> tuple[_FloatArray, _FloatArray, int, float, bool]:
    """Penalised Bradley-Terry on one connected component of ``n`` items.

    ``count[k]`` judgments called item ``wi[k]`` harder than item ``wj[k]``
    (distinct ordered pairs). Maximises
    ``sum_k count_k log sigma(b_wi - b_wj) - penalty/2 * sum b**2`` by Newton's
    method with step halving, starting from 0 or from ``start`` (a warm start;
    it must sum to zero); every iterate sums to zero.
    The Newton system is solved densely up to :data:`DENSE_MAX` items, by
    conjugate gradients on the sparse Laplacian above. Returns ``(b,
    covariance, n_iter, max |gradient|, converged)`` (covariance NaN unless
    ``with_cov``).
    """
    b = np.zeros(n) if start is None else np.array(start, dtype=np.float64)
    dense = n <= DENSE_MAX
    ui, uj, a, c = merge_directions(wi, wj, np.asarray(count, dtype=np.float64), n)
    tot = a + c
    last: list[Any] = [None, None, None]  # the last x the objective saw, its d and pair terms

    def terms(x: _FloatArray) -> tuple[_FloatArray, tuple[_FloatArray, _FloatArray, _FloatArray]]:
        if last[0] is not x:
            d = x[ui] - x[uj]
            last[:] = [x, d, pair_terms(d)]
        return last[1], last[2]

    def objective(x: _FloatArray) -> float:
        d, (softplus, _, _) = terms(x)
        return float(-(tot @ softplus) - c @ d - 0.5 * penalty * (x @ x))

    def gradient(x: _FloatArray) -> tuple[_FloatArray, _FloatArray]:
        _, (_, p, pq) = terms(x)
        q = a - tot * p
        g = np.bincount(ui, weights=q, minlength=n) - np.bincount(uj, weights=q, minlength=n) - penalty * x
        return g, tot * pq

    flat_ij, flat_ji = ui * n + uj, uj * n + ui

    def laplacian(w: _FloatArray) -> _FloatArray:
        # (ui, uj) are distinct unordered pairs, so each cell gets at most one weight
        flat = np.zeros(n * n)
        flat[flat_ij] = -w
        flat[flat_ji] = -w
        lap: _FloatArray = flat.reshape(n, n)
        lap[np.diag_indices(n)] = -lap.sum(axis=1)
        return lap

    structure: list[Any] = []

    def sparse_system(vals: _FloatArray) -> csr_matrix:
        """The CSR matrix of ``coo_matrix((vals, (rows, cols))).tocsr()``.

        Rows ``ui, uj, 0..n-1``, columns ``uj, ui, 0..n-1``: the sparsity pattern is fixed for
        the component, so it is found once and each step only sums ``vals`` into its slots (at
        most two values a slot, whose sum does not depend on the order).
        """
        if not structure:
            rows = np.concatenate([ui, uj, np.arange(n)])
            cols = np.concatenate([uj, ui, np.arange(n)])
            cells, slot = np.unique(rows * n + cols, return_inverse=True)
            indptr = np.searchsorted(cells // n, np.arange(n + 1)).astype(np.int32)
            structure.extend([slot.reshape(-1), (cells % n).astype(np.int32), indptr, cells.size])
        slot, indices, indptr, size = structure
        return csr_matrix((np.bincount(slot, weights=vals, minlength=size), indices, indptr), shape=(n, n))

    def newton_step(g: _FloatArray, w: _FloatArray, residual: float) -> _FloatArray:
        if dense:
            system = laplacian(w)
            system[np.diag_indices(n)] += penalty  # L + penalty * I, then + 1/n everywhere, in place
            system += 1.0 / n
            out = np.asarray(np.linalg.solve(system, g), dtype=np.float64)
        else:
            degree = np.bincount(ui, weights=w, minlength=n) + np.bincount(uj, weights=w, minlength=n)
            vals = np.concatenate([-w, -w, degree + penalty])
            mat = sparse_system(vals)
            pre = diags(1.0 / np.maximum(degree + penalty, 1e-12))
            solved, _ = cg(mat, g, rtol=1e-12, atol=0.0, maxiter=10 * n, M=pre)
            out = np.asarray(solved, dtype=np.float64)
        centred: _FloatArray = out - out.mean()
        return centred

    def done(residual: float, x: _FloatArray) -> bool:
        return residual <= tol and bool(np.all(np.isfinite(x)))

    fit = newton_ascent(b, objective=objective, gradient=gradient, solve=newton_step, done=done,
                        max_iter=max_iter, min_step=1e-10)
    b, w, n_iter, residual = fit.b, fit.w, fit.n_iter, fit.residual
    converged = done(residual, b)
    cov: _FloatArray = np.full((n, n), np.nan)
    if n > 1 and with_cov:
        cov = np.asarray(np.linalg.pinv(laplacian(w) + penalty * (np.eye(n) - 1.0 / n), hermitian=True),
                         dtype=np.float64)
    return b, cov, n_iter, residual, converged


def _fit(
    h: _IntArray, o: _IntArray, n_items: int, penalty: float, *, tol: float, max_iter: int, raise_on_fail: bool,
    with_cov: bool = True,
) -> tuple[_FloatArray, _FloatArray, _IntArray, int, int, float, bool]:
    """Fit every component; returns ``(b, se, component, n_components, n_iter, residual, converged)``."""
    codes, count = np.unique(h * n_items + o, return_counts=True)
    return _fit_codes(codes, count, n_items, penalty, tol=tol, max_iter=max_iter, raise_on_fail=raise_on_fail,
                      with_cov=with_cov)


def _fit_codes(
    codes: _IntArray, count: NDArray[np.integer] | _FloatArray, n_items: int, penalty: float, *, tol: float,
    max_iter: int, raise_on_fail: bool, with_cov: bool = True, start: _FloatArray | None = None,
) -> tuple[_FloatArray, _FloatArray, _IntArray, int, int, float, bool]:
    """:func:`_fit` on the judgments as ascending distinct codes ``harder * n_items + other``.

    With their (positive, whole) counts. Local indices keep the order of global ones, so a
    component's codes stay ascending and distinct: the same system :func:`_fit` always solved.
    ``start`` (shape ``(n_items,)``, finite on every item judged here): each component's Newton
    iteration starts from its values there, re-centred to sum to zero (a warm start).
    """
    h, o = codes // n_items, codes % n_items
    component, n_comp = _components(h, o, n_items)
    b = np.full(n_items, np.nan)
    se = np.full(n_items, np.nan)
    n_iter_total, worst, all_converged = 0, 0.0, True
    sizes = np.bincount(component[component >= 0], minlength=n_comp)
    alone = np.ones(n_comp, dtype=bool)
    for size in np.unique(sizes[sizes <= SMALL_MAX]).tolist():
        same = np.flatnonzero(sizes == size)
        if same.size < 2:
            continue
        alone[same] = False
        bs, ses, iters, residuals, oks = _fit_small_components(
            h, o, np.asarray(count, dtype=np.float64), component, same, size, penalty, tol=tol, max_iter=max_iter,
            with_cov=with_cov, start=start)
        if not oks.all() and raise_on_fail:
            bad = int(np.flatnonzero(~oks)[0])
            raise ConvergenceError("Bradley-Terry", n_iter=int(iters[bad]), residual=float(residuals[bad]), tol=tol)
        for r, c in enumerate(same.tolist()):
            members = np.flatnonzero(component == c)
            b[members], se[members] = bs[r], ses[r]
        n_iter_total += int(iters.sum())
        worst = max(worst, float(residuals.max()))
        all_converged = all_converged and bool(oks.all())
    for c in np.flatnonzero(alone).tolist():
        members = np.flatnonzero(component == c)
        local = np.full(n_items, -1, dtype=np.int64)
        local[members] = np.arange(members.size)
        keep = local[h] >= 0
        size = members.size
        x0 = None
        if start is not None and size > WARM_MIN:
            x0 = start[members]
            x0 = x0 - x0.mean()
        bc, cov, n_iter, residual, converged = _fit_component(
            local[h[keep]], local[o[keep]], np.asarray(count[keep], dtype=np.float64), size, penalty, tol=tol,
            max_iter=max_iter, with_cov=with_cov, start=x0,
        )
        if not converged and raise_on_fail:
            raise ConvergenceError("Bradley-Terry", n_iter=n_iter, residual=residual, tol=tol)
        b[members] = bc
        se[members] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        n_iter_total += n_iter
        worst = max(worst, residual)
        all_converged = all_converged and converged
    return b, se, component, n_comp, n_iter_total, worst, all_converged


#: Components of at most this many items that share their size with another component are fitted
#: together (:func:`_fit_small_components`): a sparse study has hundreds of 2-3 item components, and one
#: Newton fit each costs more in Python than in arithmetic.
SMALL_MAX = 32


def _fit_small_components(
    h: _IntArray, o: _IntArray, count: _FloatArray, component: _IntArray, which: _IntArray, size: int,
    penalty: float, *, tol: float, max_iter: int, with_cov: bool, start: _FloatArray | None,
) -> tuple[_FloatArray, _FloatArray, NDArray[np.int64], _FloatArray, NDArray[np.bool_]]:
    """:func:`_fit_component` of the components ``which`` (each of ``size`` items), all at once.

    Each component's codes in local indices (members in ascending order, as
    :func:`_fit_codes` numbers them) go into one row of a count matrix over the
    union of the local codes (a code a component lacks has count 0, which adds
    exactly 0 to every sum); the rows take their Newton steps together
    (:func:`_newton_stacked`, the same step halving and stopping rule per
    row). Returns per component (rows in the order of ``which``): values,
    standard errors, iterations, final ``max |gradient|`` and convergence.
    """
    row_of = np.full(int(component.max(initial=-1)) + 1, -1, dtype=np.int64)
    row_of[which] = np.arange(which.size)
    row_of_item = np.where(component >= 0, row_of[np.maximum(component, 0)], -1)
    # each component's members, ascending, get the local indices 0..size-1 (as in _fit_codes)
    items = np.flatnonzero(row_of_item >= 0)
    members = items[np.argsort(row_of_item[items], kind="stable")].reshape(which.size, size)
    local = np.full(component.size, -1, dtype=np.int64)
    local[members.ravel()] = np.tile(np.arange(size), which.size)
    keep = row_of_item[h] >= 0
    union, slot = np.unique(local[h[keep]] * size + local[o[keep]], return_inverse=True)
    cnt = np.zeros((which.size, union.size))
    cnt[row_of_item[h[keep]], slot.reshape(-1)] = count[keep]
    x = np.zeros((which.size, size))
    if start is not None and size > WARM_MIN:
        x0 = start[members]
        x[:] = x0 - x0.mean(axis=1, keepdims=True)
    wi, wj = union // size, union % size
    bs, converged, n_iter, residual, w = _newton_stacked(wi, wj, cnt, size, penalty, x, tol=tol, max_iter=max_iter)
    se = np.full((which.size, size), np.nan)
    if size > 1 and with_cov:
        ui, uj, *_ = merge_directions(wi, wj, cnt, size)
        lap = np.zeros((which.size, size, size))
        lap[:, ui, uj] = -w
        lap[:, uj, ui] = -w
        idx = np.arange(size)
        lap[:, idx, idx] = -lap.sum(axis=2)
        cov = np.linalg.pinv(lap + penalty * (np.eye(size) - 1.0 / size), hermitian=True)
        se = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 0.0, None))
    return bs, se, n_iter, residual, converged


def _fit_weighted(
    codes: _IntArray, inverse: _IntArray, weights: _FloatArray, n_items: int, penalty: float, *, tol: float,
    max_iter: int, start: _FloatArray | None = None,
) -> tuple[_FloatArray, bool]:
    """Refit on the judgments repeated ``weights`` times each; returns ``(b, converged)``.

    ``weights`` are whole numbers (a resampled or split set of evaluators); the counts come
    from the distinct ``codes`` and each judgment's index into them, the counts of the
    concatenated rows without concatenating them. ``start``: warm start (see :func:`_fit_codes`).
    """
    count = np.bincount(inverse, weights=weights, minlength=codes.size)
    used = count > 0
    bb, *rest = _fit_codes(codes[used], count[used], n_items, penalty, tol=tol, max_iter=max_iter,
                           raise_on_fail=False, with_cov=False, start=start)
    return bb, bool(rest[-1])


#: Refits fitted together by :func:`_fit_weighted_many` (its stacked dense systems: rows x n**2 floats).
#: 2**22 (32 MiB a system stack): the 50,000 x 5 report peaks at ~650 MiB against ~910 MiB with 2**23,
#: at the same time within the noise (bench report).
_BATCH_CELLS = 1 << 22


def _fit_weighted_many(
    codes: _IntArray, inverse: _IntArray, e: _IntArray, times: list[_FloatArray], n_items: int, penalty: float, *,
    tol: float, max_iter: int, start: _FloatArray | None, component: _IntArray, n_comp: int,
) -> list[tuple[_FloatArray, bool]]:
    """:func:`_fit_weighted` of every evaluator weighting in ``times``, the dense ones stacked.

    A refit whose comparison graph has the full fit's components (``component``,
    ``n_comp``: every judged item judged again, as connected) is fitted with
    the others of its kind: each component's Newton iterations run on all such
    refits at once (stacked dense solves, the same step halving and stopping
    rule per refit, which leaves the loop when it meets ``tol``). The rest
    (another graph, or a component above :data:`DENSE_MAX` items) are fitted
    one by one by :func:`_fit_weighted`. Each refit meets ``max |gradient| <=
    tol`` either way, so the two paths agree within the fit's resolution
    (:func:`human_scale`, ``warm_start``); in practice they agree to round-off.
    """
    out: list[tuple[_FloatArray, bool] | None] = [None] * len(times)
    h_all, o_all = codes // n_items, codes % n_items
    judged_full = component >= 0
    sizes = np.bincount(component[judged_full], minlength=n_comp)
    regular: list[int] = []
    counts: list[_FloatArray] = []
    for r, t in enumerate(times):
        count = np.asarray(np.bincount(inverse, weights=t[e], minlength=codes.size), dtype=np.float64)
        used = count > 0
        ok = sizes.size > 0 and int(sizes.max()) <= DENSE_MAX
        if ok:
            hu, ou = h_all[used], o_all[used]
            judged = np.zeros(n_items, dtype=bool)
            judged[hu] = True
            judged[ou] = True
            ok = bool(np.array_equal(judged, judged_full))
            if ok:
                graph = coo_matrix((np.ones(hu.size), (hu, ou)), shape=(n_items, n_items))
                n_raw = connected_components(graph, directed=False)[0]
                ok = n_raw - int((~judged_full).sum()) == n_comp  # unjudged items are singletons
        if ok:
            regular.append(r)
            counts.append(count)
        else:
            out[r] = _fit_weighted(codes, inverse, t[e], n_items, penalty, tol=tol, max_iter=max_iter, start=start)
    if regular:
        block = max(1, _BATCH_CELLS // max(int(sizes.max()) ** 2, 1))
        for lo in range(0, len(regular), block):
            rows = regular[lo:lo + block]
            b_rows, ok_rows = _fit_stacked(h_all, o_all, np.stack(counts[lo:lo + block]), n_items, penalty,
                                           tol=tol, max_iter=max_iter, start=start, component=component,
                                           n_comp=n_comp)
            for j, r in enumerate(rows):
                out[r] = (b_rows[j], bool(ok_rows[j]))
    return [x for x in out if x is not None]


def _fit_stacked(
    h: _IntArray, o: _IntArray, count: _FloatArray, n_items: int, penalty: float, *, tol: float, max_iter: int,
    start: _FloatArray | None, component: _IntArray, n_comp: int,
) -> tuple[_FloatArray, NDArray[np.bool_]]:
    """Penalised Bradley-Terry of ``R`` weightings of the same codes, every row at once.

    ``count`` has shape (R, n_codes); per component of ``component``, Newton's method as
    :func:`_fit_component` (dense) on every row at once.
    """
    n_rows = count.shape[0]
    b = np.full((n_rows, n_items), np.nan)
    converged = np.ones(n_rows, dtype=bool)
    for c in range(n_comp):
        members = np.flatnonzero(component == c)
        size = members.size
        local = np.full(n_items, -1, dtype=np.int64)
        local[members] = np.arange(size)
        keep = local[h] >= 0
        wi, wj = local[h[keep]], local[o[keep]]
        cnt = count[:, keep]
        # the sequential fit sees only the codes a refit used; a code with count 0 adds exactly 0 to every sum
        x = np.zeros((n_rows, size))
        if start is not None and size > WARM_MIN:
            x0 = start[members]
            x[:] = x0 - x0.mean()
        bc, ok, *_ = _newton_stacked(wi, wj, cnt, size, penalty, x, tol=tol, max_iter=max_iter)
        b[:, members] = bc
        converged &= ok
    return b, converged


def _newton_stacked(
    wi: _IntArray, wj: _IntArray, count: _FloatArray, n: int, penalty: float, b: _FloatArray, *, tol: float,
    max_iter: int,
) -> tuple[_FloatArray, NDArray[np.bool_], NDArray[np.int64], _FloatArray, _FloatArray]:
    """Rows of ``b`` (shape (R, n), each summing to zero) to the penalised optimum of their ``count`` row.

    Returns ``(b, converged, n_iter, residual, w)`` per row (``w``: the curvature weights of the
    unordered pairs :func:`merge_directions` gives, at the returned ``b``).
    """
    n_rows = b.shape[0]
    ui, uj, a, c = merge_directions(wi, wj, count, n)
    tot = a + c
    flat_ij, flat_ji = ui * n + uj, uj * n + ui
    row_items = (np.arange(n_rows, dtype=np.int64) * n)[:, None]
    idx = np.arange(n)

    def evaluate(x: _FloatArray, rows: NDArray[np.intp]) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
        """Objective, gradient and curvature weights of the rows ``rows`` at ``x``."""
        k = x.shape[0]
        d = x[:, ui] - x[:, uj]
        softplus, p, pq = pair_terms(d)
        t_r, c_r = tot[rows], c[rows]
        value: _FloatArray = (-np.einsum("ij,ij->i", t_r, softplus) - np.einsum("ij,ij->i", c_r, d)
                              - 0.5 * penalty * np.einsum("ij,ij->i", x, x))
        q = a[rows] - t_r * p
        off = row_items[:k]
        g = (np.bincount((ui + off).ravel(), weights=q.ravel(), minlength=k * n)
             - np.bincount((uj + off).ravel(), weights=q.ravel(), minlength=k * n)).reshape(k, n) - penalty * x
        return value, g, t_r * pq

    def newton_step(g: _FloatArray, w: _FloatArray) -> _FloatArray:
        k = g.shape[0]
        flat = np.zeros((k, n * n))
        flat[:, flat_ij] = -w
        flat[:, flat_ji] = -w
        lap = flat.reshape(k, n, n)
        lap[:, idx, idx] = -lap.sum(axis=2)
        lap[:, idx, idx] += penalty
        lap += 1.0 / n
        out = np.linalg.solve(lap, g[:, :, None])[:, :, 0]
        centred: _FloatArray = out - out.mean(axis=1, keepdims=True)
        return centred

    everyone = np.arange(n_rows)
    value, grad, w = evaluate(b, everyone)
    residual = np.abs(grad).max(axis=1) if n else np.zeros(n_rows)
    converged = residual <= tol
    iters = np.zeros(n_rows, dtype=np.int64)
    n_iter = 0
    while n_iter < max_iter and not converged.all():
        n_iter += 1
        rows = np.flatnonzero(~converged)
        iters[rows] += 1
        step = newton_step(grad[rows], w[rows])
        t = np.ones(rows.size)
        trial = b[rows] + step
        new_value, g_new, w_new = evaluate(trial, rows)
        pending = ~((new_value >= value[rows] - 1e-12 * np.abs(value[rows])) | (t < 1e-10))
        while pending.any():
            t[pending] *= 0.5
            sub = np.flatnonzero(pending)
            trial[sub] = b[rows[sub]] + t[sub, None] * step[sub]
            new_value[sub], g_new[sub], w_new[sub] = evaluate(trial[sub], rows[sub])
            pending[sub] = ~((new_value[sub] >= value[rows[sub]] - 1e-12 * np.abs(value[rows[sub]]))
                             | (t[sub] < 1e-10))
        b[rows] = trial
        value[rows] = new_value
        grad[rows], w[rows] = g_new, w_new
        residual[rows] = np.abs(g_new).max(axis=1)
        converged[rows] = (residual[rows] <= tol) & np.all(np.isfinite(trial), axis=1)
    return b, converged, iters, residual, w


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
    penalty = _check_float(penalty, name="penalty", low=0.0, high=None)
    tol = _check_float(tol, name="tol", low=0.0, high=None, open_low=True)
    max_iter = _check_positive_int(max_iter, name="max_iter", minimum=1)
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
    penalty = _check_float(penalty, name="penalty", low=0.0, high=None)
    n_boot = _check_positive_int(n_boot, name="n_boot", minimum=0)
    n_splits = _check_positive_int(n_splits, name="n_splits", minimum=0)
    ci_level = _check_float(ci_level, name="ci_level", low=0.0, high=1.0, open_low=True)
    misfit_threshold = _check_float(misfit_threshold, name="misfit_threshold", low=0.0, high=None, open_low=True)
    tol = _check_float(tol, name="tol", low=0.0, high=None, open_low=True)
    max_iter = _check_positive_int(max_iter, name="max_iter", minimum=1)
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


@dataclass(frozen=True)
class ScaleCorrelation:
    """A method's difficulty against the human scale (:func:`scale_correlation`).

    Attributes
    ----------
    value : float
        Coefficient in [-1, 1]; NaN when undefined.
    ci_low, ci_high : float
        Percentile bootstrap interval; NaN when undefined.
    n : int
        Questions in the coefficient.
    n_components : int
        Components it was computed in (each with >= 3 usable questions).
    n_boot_defined : int
        Bootstrap replicates with a defined coefficient.
    undefined_reason : str or None
    """

    value: float
    ci_low: float
    ci_high: float
    n: int
    n_components: int
    n_boot_defined: int
    undefined_reason: str | None


REASON_FEW_QUESTIONS = "no connected component has 3 or more questions with both a human and a method value"
REASON_CONSTANT = "the human scale or the method is constant within every usable component"
_KINDS = ("spearman", "kendall")


def _centred_ranks(x: _FloatArray) -> _FloatArray:
    """Average ranks per row of an (n_rows, n) array, minus the row mean (NaN propagates)."""
    from scipy import stats

    r = stats.rankdata(x, axis=1)
    out: _FloatArray = r - r.mean(axis=1, keepdims=True)
    return out


def _spearman_of_ranks(rx: _FloatArray, ry: _FloatArray) -> _FloatArray:
    """Spearman per row from centred ranks (:func:`_centred_ranks`); NaN for a constant row."""
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out: _FloatArray = np.where(den > 0, (rx * ry).sum(axis=1) / den, np.nan)
    return out


def _row_spearman(x: _FloatArray, y: _FloatArray) -> _FloatArray:
    """Spearman per row of two (n_rows, n) arrays (average ranks for ties); NaN for a constant row."""
    return _spearman_of_ranks(_centred_ranks(x), _centred_ranks(y))


def _row_kendall(x: _FloatArray, y: _FloatArray, chunk: int = 64) -> _FloatArray:
    """Kendall's tau-b per row of two (n_rows, n) arrays; NaN for a constant row."""
    out = np.full(x.shape[0], np.nan)
    iu = np.triu_indices(x.shape[1], k=1)
    for start in range(0, x.shape[0], chunk):
        xs, ys = x[start:start + chunk], y[start:start + chunk]
        sx = np.sign(xs[:, iu[0]] - xs[:, iu[1]])
        sy = np.sign(ys[:, iu[0]] - ys[:, iu[1]])
        den = np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + chunk] = np.where(den > 0, (sx * sy).sum(axis=1) / den, np.nan)
    return out


#: Cells (rows x items**2) of the sign matrices :func:`_kendall_of_counts` holds at once (4 MiB of float32).
_KENDALL_CELLS = 1 << 20


def _dense_ranks(x: _FloatArray) -> NDArray[np.int64]:
    """Per row, 1 + the number of distinct smaller values (equal values, equal rank)."""
    order = np.argsort(x, axis=1, kind="stable")
    ordered = np.take_along_axis(x, order, axis=1)
    new = np.ones(x.shape, dtype=bool)
    new[:, 1:] = np.diff(ordered, axis=1) > 0
    out = np.empty(x.shape, dtype=np.int64)
    np.put_along_axis(out, order, np.cumsum(new, axis=1), axis=1)
    return out


def _untied_pairs(ranks: NDArray[np.int64], counts: _FloatArray) -> _FloatArray:
    """Per row, pairs of the sample (item ``k`` held ``counts[r, k]`` times) whose values differ.

    ``(N**2 - sum over groups of equal values of (group size)**2) / 2`` with ``N`` the row's sample
    size: whole numbers, exact in float64.
    """
    n_rows, n = counts.shape
    offsets = (np.arange(n_rows, dtype=np.int64) * (n + 1))[:, None]
    sizes = np.bincount((ranks + offsets).ravel(), weights=counts.ravel(), minlength=n_rows * (n + 1))
    total = counts.sum(axis=1)
    out: _FloatArray = (total * total - (sizes * sizes).reshape(n_rows, n + 1).sum(axis=1)) / 2.0
    return out


def _kendall_of_counts(x: _FloatArray, counts: _FloatArray, ys: list[_FloatArray]) -> _FloatArray:
    """Kendall's tau-b of bootstrap samples given as counts, for several ``y`` at once.

    Row ``r``'s sample holds item ``k`` ``counts[r, k]`` times, with values
    ``x[r, k]`` and ``ys[m][k]`` (``x`` finite on every item with a count; an
    item without a count never enters). Returns shape ``(n_rows, len(ys))``,
    equal to :func:`_row_kendall` of the samples written out: tau-b is
    ``S / sqrt(n_x n_y)`` with ``S`` (concordant minus discordant pairs) and
    ``n_x``, ``n_y`` (pairs untied in ``x``, in ``y``) whole numbers, counted
    here exactly as ``sum_{k<l} c_k c_l sign(x_k - x_l) sign(y_k - y_l)`` and
    the tie-group formula (float32 products summed by a matrix product:
    exact while ``(sum c)**2 < 2**24``, float64 above), in
    ``O(n_rows n**2)`` for every ``y`` together, not per ``y`` and per pair of
    sample positions.
    """
    n_rows, n = counts.shape
    exact32 = float(counts.sum(axis=1).max(initial=0.0)) ** 2 < 2.0**24
    dtype = np.float32 if exact32 else np.float64
    rank_type: type[np.signedinteger[Any]] = np.int16 if n < 2**15 else np.int64
    signs_y: NDArray[Any] = np.stack([np.sign(y[:, None] - y[None, :]).ravel() for y in ys], axis=1).astype(dtype)
    y_ranks = [_dense_ranks(y[None, :])[0] for y in ys]
    ranks = _dense_ranks(x)
    n_x = _untied_pairs(ranks, counts)
    s_full = np.empty((n_rows, len(ys)))
    block = max(1, _KENDALL_CELLS // max(n * n, 1))
    for start in range(0, n_rows, block):
        r: NDArray[Any] = ranks[start:start + block].astype(rank_type)
        c: NDArray[Any] = counts[start:start + block].astype(dtype)
        cells: NDArray[Any] = np.sign(r[:, :, None] - r[:, None, :]).astype(dtype)
        cells *= c[:, :, None]
        cells *= c[:, None, :]
        s_full[start:start + block] = cells.reshape(r.shape[0], n * n) @ signs_y
    out = np.empty((n_rows, len(ys)))
    for m, yr in enumerate(y_ranks):
        n_y = _untied_pairs(np.broadcast_to(yr, counts.shape), counts)
        den = np.sqrt(n_x * n_y)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, m] = np.where(den > 0, (s_full[:, m] / 2.0) / den, np.nan)
    return out


def _component_groups(hv: _FloatArray, mv: _FloatArray, comp: _IntArray) -> list[_IntArray]:
    usable = np.isfinite(hv) & np.isfinite(mv) & (comp >= 0)
    groups = [np.flatnonzero(usable & (comp == c)) for c in np.unique(comp[usable])]
    return [g for g in groups if g.size >= 3]


def _correlations(
    hv: _FloatArray, methods: list[_FloatArray], comp: _IntArray, kinds: tuple[str, ...], dr: _FloatArray | None,
    n_boot: int, ci_level: float, group_gen: Callable[[_IntArray], np.random.Generator],
    cache: dict[tuple[bytes, int, str], _FloatArray] | None = None,
) -> list[dict[str, ScaleCorrelation]]:
    """:func:`scale_correlations` on checked arrays.

    ``group_gen(g)`` gives the generator that resamples the questions ``g`` (one usable component);
    it must depend only on ``g``, so that a component's replicates are the same in every call.
    ``cache`` (optional, shared by calls with the same ``methods``, ``draws`` and ``n_boot``) keeps
    each component's replicate correlations per (component, method index, kind), NaN where undefined.
    """
    if cache is None:
        cache = {}
    nan = float("nan")
    results: list[dict[str, ScaleCorrelation]] = [{} for _ in methods]
    buckets: dict[tuple[bytes, ...], list[int]] = {}
    group_sets: dict[tuple[bytes, ...], list[_IntArray]] = {}
    for i, mv in enumerate(methods):
        groups = _component_groups(hv, mv, comp)
        key = tuple(g.tobytes() for g in groups)
        buckets.setdefault(key, []).append(i)
        group_sets[key] = groups
    for key, members in buckets.items():
        groups = group_sets[key]
        points: dict[tuple[int, str], tuple[float, int, int]] = {}
        for i in members:
            for kind in kinds:
                if not groups:
                    results[i][kind] = ScaleCorrelation(nan, nan, nan, 0, 0, 0, REASON_FEW_QUESTIONS)
                    continue
                row = _row_spearman if kind == "spearman" else _row_kendall
                values, weights = [], []
                for g in groups:
                    r = float(row(hv[g][None, :], methods[i][g][None, :])[0])
                    if np.isfinite(r):
                        values.append(r)
                        weights.append(g.size)
                if not values:
                    results[i][kind] = ScaleCorrelation(nan, nan, nan, int(sum(g.size for g in groups)), 0, 0,
                                                        REASON_CONSTANT)
                    continue
                points[(i, kind)] = (float(np.average(values, weights=weights)), int(sum(weights)), len(values))
        intervals: dict[tuple[int, str], tuple[float, float, int]] = {}
        if n_boot and points:
            total = {ik: np.zeros(n_boot) for ik in points}
            mass = {ik: np.zeros(n_boot) for ik in points}
            for g in groups:
                gk = g.tobytes()
                spearman = [i for i in members if (i, "spearman") in points and (gk, i, "spearman") not in cache]
                kendall = [i for i in members if (i, "kendall") in points and (gk, i, "kendall") not in cache]
                if spearman or kendall:
                    cache.update(_group_replicates(g, hv, methods, spearman, kendall, dr, n_boot, group_gen(g), gk))
                for i, kind in points:
                    values_b = cache[(gk, i, kind)]
                    ok = np.isfinite(values_b)
                    total[(i, kind)][ok] += g.size * values_b[ok]
                    mass[(i, kind)][ok] += g.size
            alpha = (1.0 - ci_level) / 2.0
            for ik in points:
                defined = mass[ik] > 0
                n_defined = int(defined.sum())
                low = high = nan
                if n_defined:
                    reps = total[ik][defined] / mass[ik][defined]
                    low, high = (float(q) for q in np.quantile(reps, [alpha, 1.0 - alpha]))
                intervals[ik] = (low, high, n_defined)
        for (i, kind), (value, n_used, n_comp) in points.items():
            low, high, n_defined = intervals.get((i, kind), (nan, nan, 0))
            results[i][kind] = ScaleCorrelation(value, low, high, n_used, n_comp, n_defined, None)
    return results


def _group_replicates(
    g: _IntArray, hv: _FloatArray, methods: list[_FloatArray], spearman: list[int], kendall: list[int],
    dr: _FloatArray | None, n_boot: int, gen: np.random.Generator, gk: bytes,
) -> dict[tuple[bytes, int, str], _FloatArray]:
    """Bootstrap replicates of one component's correlations (NaN where a replicate is undefined).

    The component's questions ``g`` are resampled ``n_boot`` times from ``gen``; the human side of
    replicate ``r`` is the scale's bootstrap draw ``r mod n_draws`` when ``dr`` is given.
    """
    out: dict[tuple[bytes, int, str], _FloatArray] = {}
    local = gen.integers(0, g.size, size=(n_boot, g.size))
    pick = g[local]
    if dr is not None and dr.shape[0]:
        scale = dr[np.arange(n_boot) % dr.shape[0]]
        hb = np.take_along_axis(scale, pick, axis=1)
        x = scale[:, g]
    else:
        hb = hv[pick]
        x = np.broadcast_to(hv[g], (n_boot, g.size))
    finite = np.isfinite(hb).all(axis=1)
    if spearman:
        rx = _centred_ranks(hb)
        for i in spearman:
            out[(gk, i, "spearman")] = _spearman_of_ranks(rx, _centred_ranks(methods[i][pick]))
    if kendall:
        offsets = (np.arange(n_boot, dtype=np.int64) * g.size)[:, None]
        drawn = np.bincount((local + offsets).ravel(), minlength=n_boot * g.size)
        counts = drawn.reshape(n_boot, g.size).astype(np.float64)
        # rows with a drawn item the replicate's scale lacks are dropped (finite); an item not drawn has
        # count 0 and never enters
        taus = _kendall_of_counts(np.where(np.isfinite(x), x, 0.0), counts, [methods[i][g] for i in kendall])
        for m, i in enumerate(kendall):
            out[(gk, i, "kendall")] = taus[:, m]
    return {key: np.where(finite, values, np.nan) for key, values in out.items()}


def _group_generator(seed: int) -> Callable[[_IntArray], np.random.Generator]:
    """The generator of a component's resampling: seeded by ``seed``, its first question and its size."""
    return lambda g: np.random.default_rng([seed, int(g[0]), int(g.size)])


def _check_correlation_inputs(
    human: ArrayLike, methods: list[ArrayLike], component: ArrayLike, draws: ArrayLike | None, n_boot: int,
    ci_level: float,
) -> tuple[_FloatArray, list[_FloatArray], _IntArray, _FloatArray | None, int, float]:
    hv = np.asarray(human, dtype=np.float64)
    mvs = [np.asarray(m, dtype=np.float64) for m in methods]
    comp = np.asarray(component, dtype=np.int64)
    for mv in mvs:
        if hv.ndim != 1 or hv.shape != mv.shape or hv.shape != comp.shape:
            raise ValueError(
                f"human, method and component must be 1-D of equal length; got shapes {hv.shape}, {mv.shape}, "
                f"{comp.shape}"
            )
    n_boot = _check_positive_int(n_boot, name="n_boot", minimum=0)
    ci_level = _check_float(ci_level, name="ci_level", low=0.0, high=1.0, open_low=True)
    dr = None if draws is None else np.asarray(draws, dtype=np.float64).reshape(-1, hv.size)
    return hv, mvs, comp, dr, n_boot, ci_level


def scale_correlation(
    human: ArrayLike,
    method: ArrayLike,
    component: ArrayLike,
    *,
    kind: str = "spearman",
    draws: ArrayLike | None = None,
    n_boot: int = 200,
    ci_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> ScaleCorrelation:
    """Correlation of a method's difficulty with the human scale, within components.

    Values of different connected components of the comparison graph are not
    on a common scale, so the coefficient is computed in each component with
    3 or more usable questions (finite human and method values) and averaged,
    weighted by the number of questions; with one component it is the plain
    coefficient.

    Parameters
    ----------
    human : array-like of float, shape (n_items,)
        The human scale (:attr:`HumanScale.difficulty`); NaN = leave out.
    method : array-like of float, shape (n_items,)
        The method's difficulty (higher = harder); NaN = no value.
    component : array-like of int, shape (n_items,)
        Component of each item (:attr:`HumanScale.component`; -1 = unjudged).
    kind : {"spearman", "kendall"}, default "spearman"
        Spearman's rho or Kendall's tau-b.
    draws : array-like of float, shape (n_draws, n_items), optional
        Bootstrap replicates of the human scale (:attr:`HumanScale.draws`).
        Replicate ``r`` uses ``draws[r % n_draws]`` as the human scale, so
        the interval carries the scale's uncertainty as well as the
        questions'; without draws only questions are resampled.
    n_boot : int, default 200
        Bootstrap replicates; each resamples questions with replacement within
        each component (0: no interval).
    ci_level : float, default 0.95
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ScaleCorrelation

    Examples
    --------
    >>> c = scale_correlation([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 2.0, 4.0], [0, 0, 0, 0], n_boot=0)
    >>> round(c.value, 4), c.n
    (0.8, 4)
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}; got {kind!r}")
    hv, mvs, comp, dr, n_boot, ci_level = _check_correlation_inputs(human, [method], component, draws, n_boot,
                                                                    ci_level)
    if isinstance(rng, np.random.Generator):
        base = int(rng.integers(0, 2**63))
    elif rng is None:
        base = int(np.random.default_rng().integers(0, 2**63))
    else:
        base = int(rng)
    return _correlations(hv, mvs, comp, (kind,), dr, n_boot, ci_level, _group_generator(base))[0][kind]


def scale_correlations(
    human: ArrayLike,
    methods: Sequence[ArrayLike],
    component: ArrayLike,
    *,
    draws: ArrayLike | None = None,
    n_boot: int = 200,
    ci_level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, ScaleCorrelation]]:
    """:func:`scale_correlation` of several methods, Spearman and Kendall, with shared work.

    Parameters
    ----------
    human : array-like of float, shape (n_items,)
    methods : sequence of array-like of float, each shape (n_items,)
    component : array-like of int, shape (n_items,)
    draws : array-like of float, shape (n_draws, n_items), optional
    n_boot : int, default 200
    ci_level : float, default 0.95
    seed : int, default 0
        Seed (>= 0) of the question resampling.

    Returns
    -------
    list of dict
        Per method, ``{"spearman": ScaleCorrelation, "kendall": ScaleCorrelation}``,
        each equal to ``scale_correlation(human, method, component, kind=kind,
        draws=draws, n_boot=n_boot, ci_level=ci_level, rng=seed)``.

    Raises
    ------
    ValueError
        As :func:`scale_correlation`; also if ``seed`` is not an integer >= 0.

    Notes
    -----
    Each usable component's questions are resampled by a generator seeded
    with ``seed``, the component's first question and its size, so a
    component's replicates do not depend on the other components (a
    subject's interval is the same alone or within all subjects). Calls with
    the same seed and the same usable questions resample the same
    questions, so they are drawn once for every such method and both kinds;
    the human scale's ranks are taken once per replicate; and Kendall's tau
    of a replicate is counted from how often each question was drawn (one
    sign matrix per replicate for every method; :func:`_kendall_of_counts`)
    rather than over every pair of drawn positions, per method.

    Examples
    --------
    >>> [c] = scale_correlations([0.0, 1.0, 2.0, 3.0], [[1.0, 3.0, 2.0, 4.0]], [0, 0, 0, 0], n_boot=0)
    >>> round(c["spearman"].value, 4), round(c["kendall"].value, 4)
    (0.8, 0.6667)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0; got {seed!r}")
    hv, mvs, comp, dr, n_boot, ci_level = _check_correlation_inputs(human, list(methods), component, draws, n_boot,
                                                                    ci_level)
    return _correlations(hv, mvs, comp, _KINDS, dr, n_boot, ci_level, _group_generator(int(seed)))


def scale_correlations_by_scope(
    human: ArrayLike,
    methods: Sequence[ArrayLike],
    component: ArrayLike,
    scopes: Sequence[ArrayLike],
    *,
    draws: ArrayLike | None = None,
    n_boot: int = 200,
    ci_level: float = 0.95,
    seed: int = 0,
) -> list[list[dict[str, ScaleCorrelation]]]:
    """:func:`scale_correlations` of several scopes (subsets of the questions) at once.

    Parameters
    ----------
    human, methods, component, draws, n_boot, ci_level, seed
        As for :func:`scale_correlations`.
    scopes : sequence of array-like of bool, each shape (n_items,)
        The questions of each scope (e.g. all, then one subject each).

    Returns
    -------
    list of list of dict
        Per scope, ``scale_correlations(np.where(scope, human, nan), methods, component, ...)``.
        A component lying in several scopes (a subject's components are also
        the overall scope's) is resampled and correlated once.

    Raises
    ------
    ValueError
        As :func:`scale_correlations`; also if a scope's shape is not ``human``'s.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0; got {seed!r}")
    hv, mvs, comp, dr, n_boot, ci_level = _check_correlation_inputs(human, list(methods), component, draws, n_boot,
                                                                    ci_level)
    cache: dict[tuple[bytes, int, str], _FloatArray] = {}
    out = []
    for k, scope in enumerate(scopes):
        mask = np.asarray(scope, dtype=bool)
        if mask.shape != hv.shape:
            raise ValueError(f"scopes[{k}] must have shape {hv.shape}; got {mask.shape}")
        out.append(_correlations(np.where(mask, hv, np.nan), mvs, comp, _KINDS, dr, n_boot, ci_level,
                                 _group_generator(int(seed)), cache))
    return out
