"""Observed-information (Louis 1982) standard errors of :mod:`scoring.irt_mml`'s fits (private).

The complete-data information minus each model's posterior covariance of
its complete-data score, and the diagonal of its inverse (directly, or by
the Woodbury identity when there are more parameters than (model, node)
columns). Clean input assumed: :mod:`scoring.irt_mml` validates.
"""
from __future__ import annotations

import numpy as np

from scoring._irt_mml_em import _expected_counts, _item_derivatives, _sigmoid
from scoring._typing import BoolArray, FloatArray

#: Posterior weights below this are left out of the standard errors' score covariance.
_POSTERIOR_FLOOR = 1e-12


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

