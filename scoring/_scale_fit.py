"""The Bradley-Terry fit of a human scale: penalised maximum likelihood by Newton's method.

The comparison graph's connected components, one fit per component (dense
Newton for small ones, conjugate gradients for large ones, warm starts from a
tie-free fit), many small components stacked into one batched Newton, and the
weighted fits the bootstrap and the split halves use.
:mod:`scoring.human_scale` validates the input and assembles the scale;
nothing here checks input.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix, csr_matrix, diags
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import cg

from scoring._bradley_terry import merge_directions, newton_ascent, pair_terms
from scoring._typing import FloatArray as _FloatArray, IntArray as _IntArray
from scoring.exceptions import ConvergenceError


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


def _constrained_inverse(information: _FloatArray) -> _FloatArray:
    """Moore-Penrose inverse of information matrices whose null space is the constant vector.

    ``information`` has shape (..., n, n): symmetric, ``M 1 = 0``, positive
    definite on the sum-to-zero subspace (a connected component's Laplacian
    plus ``penalty (I - J/n)``). ``M + J/n`` has the same eigenvectors with
    eigenvalue 1 on ``1/sqrt(n)``, so ``M^+ = (M + J/n)^-1 - J/n`` exactly,
    and ``M + J/n`` is well conditioned (its smallest eigenvalue is at least
    ``min(1, penalty)`` with a penalty). A truncated-eigenvalue pseudo-inverse
    (``numpy.linalg.pinv``) is not safe here: the zero eigenvalue comes out of
    the eigendecomposition with a round-off of about ``n eps |M|``, which can
    exceed pinv's default cutoff ``1e-15 |M|``; its reciprocal (~1e14) then
    lands on every item's variance along the constant direction.
    """
    n = information.shape[-1]
    inverse: _FloatArray = np.linalg.inv(information + 1.0 / n) - 1.0 / n
    return inverse


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
        cov = _constrained_inverse(laplacian(w) + penalty * (np.eye(n) - 1.0 / n))
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
        cov = _constrained_inverse(lap + penalty * (np.eye(size) - 1.0 / size))
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
