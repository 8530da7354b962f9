"""Empirical Interaction Propagation (EIP): question difficulty and model competency.

EIP builds a directed bipartite graph between questions and models: a model
that solves a question receives part of the question's difficulty score, and
a question that a model fails receives part of the model's competency score.
Damped propagation in both directions converges to a unique pair of
stationary distributions (``pi_Q`` over questions, ``pi_M`` over models).

The kernel streams the response matrix in blocks of rows of about
``chunk_bytes`` bytes of float64, so a compact ``uint8`` matrix of 1,000,000 x 2,000 cells is
never copied to float as a whole, and both half-steps of one iteration share a
single pass over the matrix.

References
----------
EIP: Weighted Ranking of LLMs by Quantifying Question Difficulty, sections
2.1-2.4 (equations 2-3) and 3.4; appendices C (convergence) and D (cost).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import BoolArray, FloatArray, ResponseArray
from scoring._validation import (
    check_in_open_interval,
    check_positive,
    check_positive_int,
    check_response_source,
)
from scoring.exceptions import ConvergenceError, NonFiniteError
from scoring.fraction import FractionMatrix

__all__ = ["EIPResult", "eip"]

#: A question whose success weights sum to less than the smallest normal
#: float64 (about 2.2e-308): ``1 / S(q)`` would overflow to inf.
SUBNORMAL_SUCCESS = (
    "R has credit {value!r} at (question {row}, model {column}): question {row}'s credits sum to {total!r}, "
    "below the smallest normal float64 ({tiny:.3g}), so EIP cannot divide by that sum; round credits this "
    "small to 0 (the loaders round credits below 1e-12 to 0)"
)
_TINY = float(np.finfo(np.float64).tiny)

NO_KEPT_QUESTIONS = (
    "R has no question with both a success and a failure: every question was "
    "solved by all of its observed models, failed by all of them or never "
    "observed, so this pool of models cannot rank any question (EIP is "
    "undefined; paper section 2.2)"
)

# Display scale for difficulty (see EIPResult): kept questions span [1, 99],
# all-solved questions sit at 0 and all-failed ones at 100.
_SCALED_SOLVED = 0.0
_SCALED_FAILED = 100.0
_SCALED_LOW = 1.0
_SCALED_HIGH = 99.0
_SCALED_TIE = 50.0

_ScalarT = TypeVar("_ScalarT", bound=np.generic)


@dataclass(frozen=True)
class EIPResult:
    """Stationary difficulty and competency scores from :func:`eip`.

    All arrays are read-only.

    Attributes
    ----------
    difficulty : ndarray of shape (n_questions,)
        ``pi_Q``: the difficulty score of each kept question; sums to 1 over
        kept questions. NaN for excluded questions (all solved, all failed or
        never observed).
    competency : ndarray of shape (n_models,)
        ``pi_M``: the competency score of each model; sums to 1.
    difficulty_scaled : ndarray of shape (n_questions,)
        Display scale in [0, 100] used for comparing questions: kept
        questions min-max mapped onto [1, 99] (all 50 when they are all
        equal), all-solved questions 0 (easiest), all-failed questions 100
        (hardest), never-observed questions NaN.
    competency_scaled : ndarray of shape (n_models,)
        ``pi_M`` min-max mapped onto [0, 100] (all 50 when all are equal).
    kept : ndarray of bool, shape (n_questions,)
        Questions in the graph: observed credit sums to more than 0 and
        failure weight ``sum(1 - credit)`` sums to more than 0.
    all_solved : ndarray of bool, shape (n_questions,)
        Every observed cell has credit 1 (at least one observed cell).
    all_failed : ndarray of bool, shape (n_questions,)
        Every observed cell has credit 0 (at least one observed cell).
    dangling : ndarray of bool, shape (n_models,)
        Models with no failure weight on kept questions; their competency is
        spread uniformly over kept questions (see :func:`eip`, Notes).
    n_iter : int
        Iterations performed (each is one pass over the matrix).
    residual : float
        Final ``||pi_Q^t - pi_Q^(t-1)||_1 + ||pi_M^t - pi_M^(t-1)||_1``.
    converged : bool
        Always True: :func:`eip` raises instead of returning an unconverged
        result.
    alpha : float
        Damping factor used.
    tol : float
        Tolerance used.
    """

    difficulty: FloatArray
    competency: FloatArray
    difficulty_scaled: FloatArray
    competency_scaled: FloatArray
    kept: BoolArray
    all_solved: BoolArray
    all_failed: BoolArray
    dangling: BoolArray
    n_iter: int
    residual: float
    converged: bool
    alpha: float
    tol: float


def eip(
    R: ArrayLike | FractionMatrix,
    *,
    alpha: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 1000,
    chunk_bytes: int = 2**20,
) -> EIPResult:
    """Score question difficulty and model competency with EIP.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Float credit in [0, 1] with NaN = not observed (neither a success nor
        a failure); or a bool/integer 0/1 matrix, fully observed. Compact
        dtypes such as ``uint8`` are streamed in blocks and never copied to
        float as a whole (unless that copy is at most 16 MiB). A
        :class:`~scoring.fraction.FractionMatrix` (partial credit k/n as
        uint8 numerators and a bit-packed mask) is read the same way, a
        block of rows at a time as float64.
    alpha : float, default 0.85
        Damping factor in (0, 1): the probability of following an edge rather
        than teleporting uniformly.
    tol : float, default 1e-10
        Stop when the L1 residual (see Notes) is at most ``tol``; the L1
        distance to the exact fixed point is then at most
        ``alpha / (1 - alpha) * tol``. Not scaled by problem size. The default
        sits well above the float64 rounding floor (residuals of 1e-15 are
        reached) and far below the smallest score of interest (``1 /
        n_questions`` is still 1e-6 at a million questions), and it is cheap:
        MMLU-Pro (12,032 x 32) takes 11 iterations, LiveCodeBench 10-15 and
        the simulated benchmark matrices 7-9.
    max_iter : int, default 1000
        Largest number of iterations (passes over the matrix).
    chunk_bytes : int, default 1 MiB
        Approximate size of the float64 block of rows processed at once
        (twice that when the block has missing cells). Blocks that stay in
        the CPU cache between the two half-steps are fastest, above all when
        other processes compete for the cores (``python -m bench eip``). Inputs whose
        float64 form is at most 16 MiB are converted once, before the loop;
        larger ones are cast block by block and never copied to float whole.

    Returns
    -------
    EIPResult
        ``difficulty`` (``pi_Q``, sums to 1 over kept questions, NaN
        elsewhere), ``competency`` (``pi_M``, sums to 1), their 0-100 display
        scales, the ``kept`` / ``all_solved`` / ``all_failed`` / ``dangling``
        masks, ``n_iter`` and ``residual``.

    Raises
    ------
    ValueError
        If ``R`` is not a valid response matrix (see
        :func:`scoring._validation.check_response_matrix`), if ``alpha`` is
        not in (0, 1), ``tol`` is not positive, ``max_iter`` or
        ``chunk_bytes`` is not an integer >= 1, or if no question is kept
        (every question all solved, all failed or unobserved).
        Also if a question's credits sum to a subnormal number (``0 < S(q)
        < 2.2e-308``, e.g. a single credit of 5e-324): ``1 / S(q)`` would
        overflow (``SUBNORMAL_SUCCESS``).
    ConvergenceError
        If the residual is still above ``tol`` after ``max_iter`` iterations.
    NonFiniteError
        If an iteration produces inf or NaN (it never returns NaN scores
        for kept questions, nor blames ``max_iter`` for a numerical fault).

    Notes
    -----
    Edges exist for observed cells only: success weight ``A_qm = credit``,
    failure weight ``B_qm = 1 - credit``, both 0 for a NaN cell.
    ``S(q) = sum_m A_qm``; ``F(m) = sum_q B_qm`` over kept questions. A
    question is kept when ``S(q) > 0`` and ``sum_m B_qm > 0`` (section 2.2).
    With ``Q`` kept questions and ``M`` models, starting from uniform
    vectors, one iteration is (equations 2-3)::

        pi_Q <- alpha * B @ (pi_M / F) + alpha * sum(pi_M[dangling]) / Q + (1 - alpha) / Q
        pi_M <- alpha * A.T @ (pi_Q / S) + (1 - alpha) / M

    with the just-updated ``pi_Q`` in the second line. A *dangling* model
    (``F(m) = 0``: it failed nothing that is kept) has no edge to any
    question; as in PageRank its mass is spread uniformly over kept
    questions. Both vectors therefore keep summing to 1. ``B @ y`` is computed
    as ``O @ y - A @ y`` (``O`` the observed mask, ``O @ y = sum(y)`` when a
    block is fully observed), so ``1 - A`` and the normalised transition
    matrices are never formed. Partial credit (section 2.4) uses the same
    code path.

    **What tol bounds.** Both half-maps ``pi_M -> pi_Q`` and
    ``pi_Q -> pi_M`` are ``alpha`` times a column-stochastic matrix plus a
    constant, so each is an L1 contraction with factor ``alpha`` and
    ``pi_M -> pi_M`` contracts by ``alpha**2``. Writing ``d_t =
    ||pi_M^t - pi_M^(t-1)||_1`` (``t >= 1``), the increments satisfy
    ``d_(t+j) <= alpha**(2j) d_t`` and
    ``||pi_Q^(t+j) - pi_Q^(t+j-1)||_1 <= alpha**(2j-1) d_t``. Summing
    the tails, the L1 distance of ``(pi_Q^t, pi_M^t)`` to the exact fixed point
    is at most ``(alpha**2 + alpha) / (1 - alpha**2) * d_t
    = alpha / (1 - alpha) * d_t <= alpha / (1 - alpha) * residual``
    (about ``5.7 * tol`` at ``alpha = 0.85``).

    The cost is ``O(n_iter * n_questions * n_models)`` (appendix D).

    References
    ----------
    EIP: Weighted Ranking of LLMs by Quantifying Question Difficulty,
    sections 2.1-2.3 (graph, equations 2-3), 2.4 (partial credit), 3.4 and
    appendices C-D (convergence and cost).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.uint8)
    >>> res = eip(R, alpha=0.5)
    >>> np.round(res.competency * 15, 6)  # (8/15, 7/15)
    array([8., 7.])
    >>> np.round(res.difficulty * 60, 6)  # (17/60, 17/60, 26/60)
    array([17., 17., 26.])
    """
    R = check_response_source(R)
    if isinstance(R, FractionMatrix) and R.size * 8 <= _CACHE_BYTES:
        R = R.to_dense()  # small: the cached float64 path below
    alpha = check_in_open_interval(alpha, name="alpha", low=0, high=1)
    tol = check_positive(tol, name="tol")
    max_iter = check_positive_int(max_iter, name="max_iter")
    chunk_bytes = check_positive_int(chunk_bytes, name="chunk_bytes")

    n_models = R.shape[1]
    rows_per_chunk = max(1, chunk_bytes // (8 * n_models))
    graph = _build_graph(R, rows_per_chunk)
    if not graph.kept.any():
        raise ValueError(NO_KEPT_QUESTIONS)

    pi_q, pi_m, n_iter, residual = _propagate(
        R, graph, alpha=alpha, tol=tol, max_iter=max_iter, rows_per_chunk=rows_per_chunk
    )

    return _result(pi_q, pi_m, graph, n_iter=n_iter, residual=residual, alpha=alpha, tol=tol)


# Inputs whose float64 form is at most this big are converted once, before the
# loop; larger ones are cast chunk by chunk in every iteration.
_CACHE_BYTES = 16 * 2**20


@dataclass(frozen=True)
class _Graph:
    """Per-matrix quantities computed once, before the iteration."""

    kept: BoolArray  # (Q,)
    all_solved: BoolArray  # (Q,)
    all_failed: BoolArray  # (Q,)
    inv_s: FloatArray  # (Q,) 1 / S(q) on kept rows, 0 elsewhere
    inv_f: FloatArray  # (M,) 1 / F(m), 0 for dangling models
    dangling: BoolArray  # (M,)
    chunk_missing: list[bool]  # per row chunk: does it hold a NaN cell?
    credit: FloatArray | None  # small inputs: the whole matrix as float64, NaN -> 0
    observed: FloatArray | None  # its float64 observed mask (None: fully observed)


def _chunk_starts(n_rows: int, rows_per_chunk: int) -> range:
    return range(0, n_rows, rows_per_chunk)


def _as_credit(
    chunk: ResponseArray, missing: BoolArray | None
) -> tuple[FloatArray, FloatArray | None]:
    """Return ``(A, O)`` for a block of rows: float64 credit and observed mask.

    ``A`` is the credit with NaN -> 0; ``O`` the float64 observed mask, None
    when every cell of the block is observed. ``missing`` is the block's NaN
    mask, or None when it has no NaN cell.
    """
    if missing is None:
        return chunk.astype(np.float64, copy=False), None
    credit = np.where(missing, 0.0, chunk).astype(np.float64, copy=False)
    return credit, (~missing).astype(np.float64)


def _nan_mask(chunk: ResponseArray) -> BoolArray | None:
    """The NaN mask of a float block, or None when the block has no NaN."""
    if chunk.dtype.kind != "f":
        return None
    missing = np.isnan(chunk)
    return missing if missing.any() else None


def _build_graph(R: ResponseArray | FractionMatrix, rows_per_chunk: int) -> _Graph:
    n_questions, n_models = R.shape
    cached_credit = cached_observed = None
    if not isinstance(R, FractionMatrix) and n_questions * n_models * 8 <= _CACHE_BYTES:
        cached_credit, cached_observed = _as_credit(R, _nan_mask(R))
        cached_credit = np.ascontiguousarray(cached_credit)
        if cached_observed is not None:
            cached_observed = np.ascontiguousarray(cached_observed)
    s = np.empty(n_questions)
    fail = np.empty(n_questions)
    n_obs = np.empty(n_questions)
    f = np.zeros(n_models)
    ones = np.ones(n_models)  # row sums as matrix-vector products (BLAS, faster than sum(axis=1))
    chunk_missing: list[bool] = []
    for start in _chunk_starts(n_questions, rows_per_chunk):
        rows = slice(start, start + rows_per_chunk)
        if cached_credit is not None:
            credit = cached_credit[rows]
            observed = None if cached_observed is None else cached_observed[rows]
            if observed is not None and observed.all():
                observed = None
        else:
            chunk = R[rows]
            credit, observed = _as_credit(chunk, _nan_mask(chunk))
        chunk_missing.append(observed is not None)
        f += _block_sums(credit, observed, R.dtype.kind == "f", ones, s[rows], fail[rows], n_obs[rows])
    _check_success_weights(R, s)
    return _graph_from_sums(s, fail, n_obs, f, chunk_missing=chunk_missing, credit=cached_credit,
                            observed=cached_observed)


def _block_sums(
    credit: FloatArray,
    observed: FloatArray | None,
    weighted: bool,
    ones: FloatArray,
    s: FloatArray,
    fail: FloatArray,
    n_obs: FloatArray,
) -> FloatArray:
    """One block's graph sums (shared with :mod:`scoring.eip_dask`).

    Writes ``S(q)``, ``sum_m B_qm`` and the observed count of each row of the
    block into ``s``, ``fail`` and ``n_obs`` and returns the block's share of
    ``F(m)`` (its kept rows' failure weights). ``weighted`` is True for float
    credit or a block read with an observed mask (failure weights summed
    cell by cell), False for a fully observed 0/1 integer matrix.
    """
    n_models = credit.shape[1]
    s[:] = credit @ ones
    n_obs[:] = n_models if observed is None else observed @ ones
    if weighted:
        # Sum the failure weights themselves: 1 - credit is exactly 0 only
        # for credit 1, so a sum is 0 exactly when (and only when) there
        # is no failure weight at all (no cancellation as in n_obs - S).
        failure = 1.0 - credit if observed is None else observed - credit
        fail[:] = failure @ ones
        kept_rows = (s > 0) & (fail > 0)
        part: FloatArray = kept_rows.astype(np.float64) @ failure
        return part
    # 0/1 integers: these differences of whole numbers are exact.
    fail[:] = n_models - s
    kept_float = ((s > 0) & (fail > 0)).astype(np.float64)
    part = kept_float.sum() - kept_float @ credit
    return part


def _graph_from_sums(
    s: FloatArray,
    fail: FloatArray,
    n_obs: FloatArray,
    f: FloatArray,
    *,
    chunk_missing: list[bool],
    credit: FloatArray | None,
    observed: FloatArray | None,
) -> _Graph:
    """The masks and normalisations of the graph from its row and column sums."""
    n_questions, n_models = s.shape[0], f.shape[0]
    kept = (s > 0) & (fail > 0)
    dangling = f <= 0
    inv_s = np.zeros(n_questions)
    inv_s[kept] = 1.0 / s[kept]
    inv_f = np.zeros(n_models)
    inv_f[~dangling] = 1.0 / f[~dangling]
    return _Graph(
        kept=kept,
        all_solved=(n_obs > 0) & (fail == 0),
        all_failed=(n_obs > 0) & (s == 0),
        inv_s=inv_s,
        inv_f=inv_f,
        dangling=dangling,
        chunk_missing=chunk_missing,
        credit=credit,
        observed=observed,
    )


def _check_success_weights(R: ResponseArray | FractionMatrix, s: FloatArray) -> None:
    """Refuse a question whose success weights sum to a subnormal (``0 < S(q) < tiny``)."""
    row = _subnormal_row(s)
    if row is not None:
        raise _subnormal_error(np.asarray(R[row], dtype=np.float64), row, float(s[row]))


def _subnormal_row(s: FloatArray) -> int | None:
    """The first question whose success weights sum to a subnormal, or None."""
    small = np.flatnonzero((s > 0) & (s < _TINY))
    return None if small.size == 0 else int(small[0])


def _subnormal_error(values: FloatArray, row: int, total: float) -> ValueError:
    """``SUBNORMAL_SUCCESS`` for question ``row`` with credits ``values`` (NaN = not observed)."""
    column = int(np.flatnonzero(np.nan_to_num(values) > 0)[0])
    return ValueError(SUBNORMAL_SUCCESS.format(
        value=float(values[column]), row=row, column=column, total=total, tiny=_TINY))


def _chunks(
    R: ResponseArray | FractionMatrix, graph: _Graph, rows_per_chunk: int, buffer: FloatArray | None
) -> Iterator[tuple[slice, FloatArray, FloatArray | None]]:
    """Yield ``(rows, A, O)`` row blocks as float64 (see :func:`_as_credit`)."""
    for start, has_missing in zip(_chunk_starts(R.shape[0], rows_per_chunk), graph.chunk_missing):
        rows = slice(start, start + rows_per_chunk)
        if graph.credit is not None:
            observed = graph.observed if has_missing else None
            yield rows, graph.credit[rows], None if observed is None else observed[rows]
            continue
        chunk = R[rows]
        if buffer is not None and not has_missing:
            # Compact or float32 input: cast into one reused buffer instead of
            # allocating (and page-faulting) a fresh block every time.
            credit = buffer[: chunk.shape[0]]
            np.copyto(credit, chunk)
            yield rows, credit, None
        else:
            yield rows, *_as_credit(chunk, np.isnan(chunk) if has_missing else None)


def _propagate(
    R: ResponseArray | FractionMatrix, graph: _Graph, *, alpha: float, tol: float, max_iter: int, rows_per_chunk: int
) -> tuple[FloatArray, FloatArray, int, float]:
    """Iterate equations 2-3 with one fused pass over ``R`` per iteration.

    Returns ``(pi_Q, pi_M, n_iter, residual)``; ``pi_Q`` is 0 off kept rows.
    """
    n_questions, n_models = R.shape
    kept = graph.kept.astype(np.float64)
    n_kept = int(graph.kept.sum())
    dangling_idx = np.flatnonzero(graph.dangling)
    buffer = None
    if graph.credit is None and R.dtype != np.float64:
        buffer = np.empty((min(rows_per_chunk, n_questions), n_models))

    pi_q = kept / n_kept
    pi_m = np.full(n_models, 1.0 / n_models)
    new_q = np.empty(n_questions)
    diff = np.empty(n_questions)
    residual = np.inf
    for n_iter in range(1, max_iter + 1):
        y = pi_m * graph.inv_f
        y_sum = y.sum()
        teleport_q = (alpha * pi_m[dangling_idx].sum() + (1.0 - alpha)) / n_kept
        acc = np.zeros(n_models)
        for rows, credit, observed in _chunks(R, graph, rows_per_chunk, buffer):
            acc += _block_step(credit, observed, y, y_sum, alpha, teleport_q, kept[rows], graph.inv_s[rows],
                               new_q[rows])
        new_m = alpha * acc + (1.0 - alpha) / n_models
        np.subtract(new_q, pi_q, out=diff)
        np.abs(diff, out=diff)
        residual = float(diff.sum() + np.abs(new_m - pi_m).sum())
        if not np.isfinite(residual):
            raise _non_finite(bool(np.isfinite(new_q).all()), n_iter)
        pi_q, new_q = new_q, pi_q
        pi_m = new_m
        if residual <= tol:
            return pi_q, pi_m, n_iter, residual
    raise ConvergenceError("EIP", n_iter=max_iter, residual=residual, tol=tol)


def _block_step(
    credit: FloatArray,
    observed: FloatArray | None,
    y: FloatArray,
    y_sum: float,
    alpha: float,
    teleport_q: float,
    kept: FloatArray,
    inv_s: FloatArray,
    out: FloatArray,
) -> FloatArray:
    """One block of rows of one iteration (shared with :mod:`scoring.eip_dask`).

    Writes the block's new ``pi_Q`` rows into ``out`` and returns its share of
    ``A^T (pi_Q / S)`` (length n_models). ``kept`` is the block's kept mask
    as 0/1 floats, ``inv_s`` its ``1 / S(q)`` (0 off kept rows).
    """
    # q = alpha * (O @ y - A @ y) + teleport, on kept rows only.
    q = credit @ y
    np.subtract(y_sum if observed is None else observed @ y, q, out=q)
    q *= alpha
    q += teleport_q
    q *= kept
    out[:] = q
    # Fused second half-step: this block's share of A^T (pi_Q / S).
    q *= inv_s
    share: FloatArray = q @ credit
    return share


def _non_finite(question_vector_finite: bool, n_iter: int) -> NonFiniteError:
    quantity = "the model vector pi_M" if question_vector_finite else "the question vector pi_Q"
    return NonFiniteError("EIP", quantity=quantity, n_iter=n_iter)


def _result(
    pi_q: FloatArray, pi_m: FloatArray, graph: _Graph, *, n_iter: int, residual: float, alpha: float, tol: float
) -> EIPResult:
    """Assemble the read-only :class:`EIPResult` (``pi_Q`` is NaN off kept rows)."""
    difficulty = np.where(graph.kept, pi_q, np.nan)
    return EIPResult(
        difficulty=_frozen(difficulty),
        competency=_frozen(pi_m),
        difficulty_scaled=_frozen(_scale_difficulty(difficulty, graph)),
        competency_scaled=_frozen(_scale_competency(pi_m)),
        kept=_frozen(graph.kept),
        all_solved=_frozen(graph.all_solved),
        all_failed=_frozen(graph.all_failed),
        dangling=_frozen(graph.dangling),
        n_iter=n_iter,
        residual=residual,
        converged=True,
        alpha=alpha,
        tol=tol,
    )


def _scale_difficulty(difficulty: FloatArray, graph: _Graph) -> FloatArray:
    scaled = np.full(difficulty.shape, np.nan)
    kept_values = difficulty[graph.kept]
    lo, hi = kept_values.min(), kept_values.max()
    if hi > lo:
        scaled[graph.kept] = _SCALED_LOW + (_SCALED_HIGH - _SCALED_LOW) * (kept_values - lo) / (hi - lo)
    else:
        scaled[graph.kept] = _SCALED_TIE
    scaled[graph.all_solved] = _SCALED_SOLVED
    scaled[graph.all_failed] = _SCALED_FAILED
    return scaled


def _scale_competency(competency: FloatArray) -> FloatArray:
    lo, hi = competency.min(), competency.max()
    if hi > lo:
        scaled: FloatArray = 100.0 * (competency - lo) / (hi - lo)
        return scaled
    return np.full(competency.shape, _SCALED_TIE)


def _frozen(values: NDArray[_ScalarT]) -> NDArray[_ScalarT]:
    values = np.array(values, copy=True)
    values.setflags(write=False)
    return values
