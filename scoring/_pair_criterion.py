"""The criterion of adaptive pair selection: which unseen same-subject pair a vote would teach most.

The arithmetic behind :func:`scoring.adaptive_pairs.choose_next_pair`
(see its docstring for the criterion and its sources): each question's
rank weight, the subject's Laplace covariance, scoring of candidate pairs
in blocks (dense covariance) or along the diagonal path with an exact
bound that skips pairs which cannot reach the best, tie-breaking by
reservoir sampling, and the uniform random draw of the random share.

Pure numpy/scipy; never imports Django.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix

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


def _pq(d: _FloatArray) -> _FloatArray:
    """``p (1 - p)`` for ``p = sigma(d)``, accurate in the tails."""
    z = np.exp(-np.abs(d))
    out: _FloatArray = z / (1.0 + z) ** 2
    return out


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
