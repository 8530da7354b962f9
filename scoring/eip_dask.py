"""EIP over Dask arrays: matrices larger than memory or than one machine.

The same one-pass iteration as :func:`scoring.eip.eip` (equations 2-3),
run block by block over a Dask array whose chunks are blocks of rows (all
model columns in one chunk). One pass builds the graph (row sums ``S(q)``,
failure sums, the column sums ``F(m)`` and the validation of every cell);
then each iteration is one pass in which every row block computes its new
``pi_Q`` rows and its share of ``A^T (pi_Q / S)`` with the very helpers of
:mod:`scoring.eip` (each block is cut into ~``chunk_bytes`` sub-blocks as
there). Only vectors of length ``n_models`` and one scalar per block travel
to the client per iteration; the ``pi_Q`` blocks stay where they were
computed (on the workers of a ``distributed`` cluster). The result equals
``eip()`` up to the order of floating-point sums (a few ulps; the tests check
1e-12) with the same iteration count.

The matrix is either read again from its source at every iteration (a Zarr
store on a shared file system: past the memory of the cluster) or, with
``persist=True``, held in the workers' memory for the run.

dask, distributed and zarr are imported inside the functions that use them:
importing this module costs nothing.

References
----------
EIP: Weighted Ranking of LLMs by Quantifying Question Difficulty, sections
2.1-2.4 (equations 2-3); appendices C (convergence) and D (cost).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import BoolArray, FloatArray, ResponseArray
from scoring._validation import check_in_open_interval, check_positive, check_positive_int
from scoring.eip import (
    NO_KEPT_QUESTIONS,
    EIPResult,
    _as_credit,
    _block_step,
    _block_sums,
    _graph_from_sums,
    _non_finite,
    _result,
    _subnormal_error,
    _subnormal_row,
)
from scoring.exceptions import ConvergenceError

if TYPE_CHECKING:
    import dask.array as da
    from dask.delayed import Delayed
    from distributed import Client

__all__ = [
    "LOCAL",
    "DaskEIP",
    "SchedulerUnreachableError",
    "check_scheduler",
    "dask_client",
    "eip_dask",
]

#: ``scheduler`` value that starts a ``distributed.LocalCluster`` for the run.
LOCAL = "local"
#: Default rows per Dask block for inputs that are not Dask arrays already:
#: blocks of about this many bytes of the input's dtype.
DEFAULT_BLOCK_BYTES = 16 * 2**20
_ADDRESS = re.compile(r"^(tcp|tls|ws|wss|ucx|inproc)://[^\s/:]+(:\d{1,5})?/?$")

ERR_SCHEDULER = (
    "{name}={value!r} is not a Dask scheduler: use {off!r} (off), 'local' (a LocalCluster started for the run) "
    "or a scheduler address such as 'tcp://dask-scheduler:8786'"
)
ERR_UNREACHABLE = (
    "{name}={value!r}: no Dask scheduler answered within {timeout:g} s ({error}); start one with "
    "`dask-scheduler` (and `dask-worker {value}` on each worker) or correct the address"
)
ERR_NOT_2D = "R must be 2-dimensional (n_questions, n_models); got shape {shape}"
ERR_EMPTY = "R is empty: shape {shape}"
ERR_DTYPE = "R must have a numeric dtype (float credit, or 0/1 bool/integer); got {dtype}"
ERR_MASK = "observed must be a bool array of R's shape {shape}; got dtype {dtype} and shape {got}"
ERR_CREDIT = (
    "R has credit {value!r} at (question {row}, model {column}); credit must lie in [0, 1] "
    "(integer matrices must be 0/1)"
)
ERR_NO_OBSERVED = "R has models with no observed cell (columns {columns}); drop them before scoring"
ERR_ZARR = "{store} has no array {name!r} (a response-set store holds 'credit' and 'observed')"


class SchedulerUnreachableError(ConnectionError):
    """No Dask scheduler answered at the configured address."""


@dataclass(frozen=True)
class DaskEIP:
    """An :class:`~scoring.eip.EIPResult` computed on a cluster, and where.

    Attributes
    ----------
    result : EIPResult
        As returned by :func:`scoring.eip.eip`.
    scheduler : str
        The scheduler setting used (``"local"`` or an address).
    address : str
        The address the client connected to.
    n_workers : int
        Workers of the cluster when the run started.
    n_blocks : int
        Row blocks of the matrix (tasks per iteration).
    """

    result: EIPResult
    scheduler: str
    address: str
    n_workers: int
    n_blocks: int


# --- validation and setup ------------------------------------------------------------


def check_scheduler(value: object, *, name: str = "EIP_DASK_SCHEDULER") -> str:
    """Validate a scheduler setting and return it stripped.

    Parameters
    ----------
    value : str
        ``""`` (Dask off), ``"local"`` or an address ``scheme://host[:port]``
        with scheme tcp, tls, ws, wss, ucx or inproc.
    name : str, default "EIP_DASK_SCHEDULER"
        The setting's name, for the message.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``value`` is none of these (``ERR_SCHEDULER``).
    """
    if not isinstance(value, str):
        raise ValueError(ERR_SCHEDULER.format(name=name, value=value, off=""))
    text = value.strip()
    if text in ("", LOCAL) or _ADDRESS.match(text):
        return text
    raise ValueError(ERR_SCHEDULER.format(name=name, value=value, off=""))


@contextmanager
def dask_client(
    scheduler: str, *, timeout: float = 10.0, local_workers: int | None = None, name: str = "EIP_DASK_SCHEDULER"
) -> Iterator[Client]:
    """A ``distributed.Client`` on the cluster ``scheduler`` names, closed on exit.

    Parameters
    ----------
    scheduler : str
        ``"local"``: a ``LocalCluster`` (worker processes, one thread each,
        no dashboard) is started for the block and shut down after it;
        otherwise the address of a running ``dask-scheduler``.
    timeout : float, default 10
        Seconds to wait for the scheduler to answer.
    local_workers : int, optional
        Workers of a local cluster (default: the CPU count, at most 4).
    name : str, default "EIP_DASK_SCHEDULER"
        The setting's name, for messages.

    Yields
    ------
    distributed.Client
        Not set as Dask's default scheduler (nothing global changes).

    Raises
    ------
    ValueError
        If ``scheduler`` is empty or not a scheduler (:func:`check_scheduler`).
    SchedulerUnreachableError
        If no scheduler answers at the address within ``timeout``.
    """
    import distributed

    local_cluster: Callable[..., distributed.LocalCluster] = distributed.LocalCluster
    new_client: Callable[..., Client] = distributed.Client
    text = check_scheduler(scheduler, name=name)
    if not text:
        raise ValueError(ERR_SCHEDULER.format(name=name, value=scheduler, off="") + "; Dask is off here")
    if text == LOCAL:
        workers = local_workers or max(1, min(os.cpu_count() or 1, 4))
        with (
            local_cluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
            new_client(cluster, set_as_default=False) as client,
        ):
            yield client
        return
    try:
        client = new_client(text, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnreachableError(
            ERR_UNREACHABLE.format(name=name, value=text, timeout=timeout, error=exc)
        ) from exc
    with client:
        yield client


# --- the runner: compute / persist on a client or on Dask's default scheduler ----


class _Runner:
    """Typed wrappers around ``persist`` and ``compute`` (dask's own are untyped)."""

    def __init__(self, client: Client | None) -> None:
        self.client = client

    def persist(self, objs: Sequence[Any]) -> list[Any]:
        if self.client is not None:
            persist_on: Callable[[list[Any]], list[Any]] = self.client.persist
            return list(persist_on(list(objs)))
        from dask.base import persist

        persist_here: Callable[..., tuple[Any, ...]] = persist
        return list(persist_here(*objs))

    def hold(self, values: list[FloatArray]) -> list[Any]:
        """Arrays the tasks will use: sent to the workers once (futures), or as they are."""
        if self.client is not None:
            scatter: Callable[[list[FloatArray]], list[Any]] = self.client.scatter
            return scatter(values)
        return list(values)

    def compute(self, objs: Sequence[Any]) -> list[Any]:
        if self.client is not None:
            submit: Callable[[list[Any]], list[Any]] = self.client.compute
            gather: Callable[[list[Any]], list[Any]] = self.client.gather
            return list(gather(submit(list(objs))))
        from dask.base import compute

        compute_here: Callable[..., tuple[Any, ...]] = compute
        return list(compute_here(*objs))


def _delayed(func: Callable[..., Any]) -> Callable[..., Any]:
    """``dask.delayed(func, pure=True)``: calling it builds a task instead of running ``func``."""
    from dask.delayed import delayed

    wrap: Callable[..., Callable[..., Any]] = delayed
    return wrap(func, pure=True)


# --- input ---------------------------------------------------------------------------


def _to_dask(values: Any, row_chunk: int | None, like: da.Array | None = None) -> da.Array:
    """``values`` as a Dask array cut into row blocks, all columns in one chunk."""
    import dask.array as da

    from_array: Callable[..., da.Array] = da.from_array
    # name=False: a random name instead of hashing every byte of a large array.
    arr = values if isinstance(values, da.Array) else from_array(np.asarray(values), chunks=-1, name=False)
    if arr.ndim != 2:
        raise ValueError(ERR_NOT_2D.format(shape=arr.shape))
    rechunk: Callable[..., da.Array] = arr.rechunk
    if like is not None:
        return rechunk(like.chunks)
    if row_chunk is None:
        if isinstance(values, da.Array):
            rows: Any = values.chunks[0]
        else:
            per_row = max(1, arr.shape[1] * arr.dtype.itemsize)
            rows = max(1, DEFAULT_BLOCK_BYTES // per_row)
    else:
        rows = check_positive_int(row_chunk, name="row_chunk")
    return rechunk({0: rows, 1: -1})


def _check_input(X: da.Array, mask_arr: da.Array | None) -> None:
    if X.ndim != 2:
        raise ValueError(ERR_NOT_2D.format(shape=X.shape))
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(ERR_EMPTY.format(shape=X.shape))
    if X.dtype.kind not in "fbiu":
        raise ValueError(ERR_DTYPE.format(dtype=X.dtype))
    if mask_arr is not None and (mask_arr.dtype != np.bool_ or mask_arr.shape != X.shape):
        raise ValueError(ERR_MASK.format(shape=X.shape, dtype=mask_arr.dtype, got=mask_arr.shape))


def _missing(chunk: ResponseArray, mask: BoolArray | None) -> BoolArray | None:
    """Unobserved cells of a block (mask False, or NaN credit), or None when all are observed."""
    missing = None if mask is None else ~mask
    if chunk.dtype.kind == "f":
        nan = np.isnan(chunk)
        missing = nan if missing is None else missing | nan
    return missing if missing is not None and missing.any() else None


# --- worker-side block functions (module level: pickled by reference) ----------------


@dataclass(frozen=True)
class _BlockSums:
    s: FloatArray
    fail: FloatArray
    n_obs: FloatArray
    f: FloatArray
    observed_per_model: FloatArray
    sub_missing: tuple[bool, ...]
    problem: str | None


def _graph_block(
    block: ResponseArray, mask: BoolArray | None, weighted: bool, rows_per_chunk: int, row0: int
) -> _BlockSums:
    """The graph sums of one row block, sub-block by sub-block (see :func:`scoring.eip._block_sums`)."""
    n_rows, n_models = block.shape
    s, fail, n_obs = np.empty(n_rows), np.empty(n_rows), np.empty(n_rows)
    f = np.zeros(n_models)
    per_model = np.zeros(n_models)
    ones = np.ones(n_models)
    sub_missing = []
    for start in range(0, n_rows, rows_per_chunk):
        rows = slice(start, start + rows_per_chunk)
        chunk = block[rows]
        missing = _missing(chunk, None if mask is None else mask[rows])
        credit, observed = _as_credit(chunk, missing)
        bad = ~((credit >= 0) & (credit <= 1))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            value = float(credit[i, j]) if chunk.dtype.kind == "f" else int(chunk[i, j])
            return _BlockSums(s, fail, n_obs, f, per_model, (), ERR_CREDIT.format(
                value=value, row=row0 + start + int(i), column=int(j)))
        sub_missing.append(missing is not None)
        per_model += chunk.shape[0] if observed is None else observed.sum(axis=0)
        f += _block_sums(credit, observed, weighted, ones, s[rows], fail[rows], n_obs[rows])
    return _BlockSums(s, fail, n_obs, f, per_model, tuple(sub_missing), None)


def _step_rows(
    block: ResponseArray,
    mask: BoolArray | None,
    pi_q: FloatArray,
    kept: FloatArray,
    inv_s: FloatArray,
    sub_missing: tuple[bool, ...],
    y: FloatArray,
    y_sum: float,
    alpha: float,
    teleport_q: float,
    rows_per_chunk: int,
) -> tuple[FloatArray, FloatArray, float]:
    """One iteration over one row block: ``(new pi_Q rows, share of A^T (pi_Q / S), L1 change of pi_Q)``."""
    n_rows, n_models = block.shape
    new_q = np.empty(n_rows)
    acc = np.zeros(n_models)
    buffer = None
    if block.dtype != np.float64:
        buffer = np.empty((min(rows_per_chunk, n_rows), n_models))
    for start, has_missing in zip(range(0, n_rows, rows_per_chunk), sub_missing):
        rows = slice(start, start + rows_per_chunk)
        chunk = block[rows]
        observed: FloatArray | None
        if has_missing:
            credit, observed = _as_credit(chunk, _missing(chunk, None if mask is None else mask[rows]))
        elif buffer is not None:
            credit = buffer[: chunk.shape[0]]
            np.copyto(credit, chunk)
            observed = None
        else:
            credit, observed = _as_credit(chunk, None)
        acc += _block_step(credit, observed, y, y_sum, alpha, teleport_q, kept[rows], inv_s[rows], new_q[rows])
    return new_q, acc, float(np.abs(new_q - pi_q).sum())


def _first(step: tuple[FloatArray, FloatArray, float]) -> FloatArray:
    return step[0]


def _share(step: tuple[FloatArray, FloatArray, float]) -> tuple[FloatArray, float]:
    return step[1], step[2]


def _total(shares: Sequence[tuple[FloatArray, float]]) -> tuple[FloatArray, float]:
    """Sum the blocks' shares of ``A^T (pi_Q / S)`` and of the L1 change, in block order."""
    acc = np.zeros_like(shares[0][0])
    change = 0.0
    for part, block_change in shares:
        acc += part
        change += block_change
    return acc, change


# --- the iteration -------------------------------------------------------------------


def eip_dask(
    R: da.Array | ArrayLike,
    observed: da.Array | ArrayLike | None = None,
    *,
    alpha: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 1000,
    chunk_bytes: int = 2**20,
    row_chunk: int | None = None,
    persist: bool = False,
    client: Client | None = None,
) -> EIPResult:
    """Score question difficulty and model competency with EIP over a Dask array.

    Parameters
    ----------
    R : dask.array.Array or array-like of shape (n_questions, n_models)
        Float credit in [0, 1] with NaN = not observed, or a 0/1 bool/integer
        matrix (``uint8`` is 1 byte a cell), fully observed unless
        ``observed`` says otherwise. Its row chunks are kept as Dask blocks
        (columns are merged into one chunk); a NumPy input is cut into
        blocks of about 16 MiB.
    observed : dask.array.Array or array-like of bool, optional
        Shape of ``R``; True = observed. A cell is observed when the mask
        says so and (float credit) its value is not NaN; the credit of an
        unobserved cell is ignored. Default: every non-NaN cell is observed.
    alpha, tol, max_iter, chunk_bytes
        As in :func:`scoring.eip.eip` (damping in (0, 1); L1 tolerance;
        largest number of passes; bytes of float64 per sub-block a task
        processes at once).
    row_chunk : int, optional
        Rows per Dask block (default: ``R``'s own row chunks, or ~16 MiB
        blocks for a NumPy input).
    persist : bool, default False
        Hold the matrix in the workers' memory for the run (fast
        iterations; the cluster must hold it). False: every iteration reads
        it from its source again (e.g. a Zarr store), so the matrix may be
        larger than the cluster's memory.
    client : distributed.Client, optional
        Run on this cluster; default Dask's current scheduler (a
        ``distributed`` client set as default, else local threads).

    Returns
    -------
    EIPResult
        As :func:`scoring.eip.eip`: equal to it up to the order of
        floating-point sums (within 1e-12), with the same ``n_iter``.

    Raises
    ------
    ValueError
        If ``R`` is not 2-dimensional or empty, has a non-numeric dtype,
        holds credit outside [0, 1] (``ERR_CREDIT``, first bad cell by row),
        if ``observed`` is not a bool array of ``R``'s shape, if a model has
        no observed cell, if no question is kept, on a subnormal success sum,
        or on a bad ``alpha``, ``tol``, ``max_iter``, ``chunk_bytes`` or
        ``row_chunk`` (the messages of :func:`scoring.eip.eip`).
    ConvergenceError
        If the residual is still above ``tol`` after ``max_iter`` iterations.
    NonFiniteError
        If an iteration produces inf or NaN.

    Notes
    -----
    The iteration, graph and masks are those of :func:`scoring.eip.eip`
    (see its Notes; EIP paper, equations 2-3). Per iteration each block
    task returns its ``pi_Q`` rows (kept on the cluster), a vector of
    length ``n_models`` and its share of the L1 residual; the client sums
    those in block order and sends the next ``pi_M / F`` (``n_models``
    floats) back. Costs ``n_iter + 1`` passes over the matrix
    (``eip`` costs the same: one for the graph, one per iteration).

    References
    ----------
    EIP paper, sections 2.1-2.4 (equations 2-3), appendices C-D.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.uint8)
    >>> res = eip_dask(R, alpha=0.5, row_chunk=2)
    >>> np.round(res.competency * 15, 6)  # (8/15, 7/15), as eip()
    array([8., 7.])
    """
    alpha = check_in_open_interval(alpha, name="alpha", low=0, high=1)
    tol = check_positive(tol, name="tol")
    max_iter = check_positive_int(max_iter, name="max_iter")
    chunk_bytes = check_positive_int(chunk_bytes, name="chunk_bytes")
    X = _to_dask(R, row_chunk)
    mask_arr = None if observed is None else _to_dask(observed, None, like=X)
    _check_input(X, mask_arr)
    runner = _Runner(client)
    if persist and client is not None and not _is_dask(R) and not _is_dask(observed):
        # An in-memory matrix: send its blocks to the workers once (not as a huge graph).
        X = _scatter(client, np.asarray(R), X.chunks[0])
        mask_arr = None if observed is None else _scatter(client, np.asarray(observed), X.chunks[0])
    elif persist:
        X, mask_arr = _persist_arrays(runner, X, mask_arr)
    return _iterate(runner, X, mask_arr, alpha=alpha, tol=tol, max_iter=max_iter, chunk_bytes=chunk_bytes)


def _is_dask(values: object) -> bool:
    import dask.array as da

    return isinstance(values, da.Array)


def _scatter(client: Client, values: NDArray[Any], rows: tuple[int, ...]) -> da.Array:
    """``values`` cut into blocks of ``rows`` rows held by the workers, as one Dask array."""
    import dask.array as da

    starts = np.concatenate([[0], np.cumsum(rows)]).astype(int).tolist()
    scatter: Callable[[list[NDArray[Any]]], list[Any]] = client.scatter
    futures = scatter([values[a:b] for a, b in pairwise(starts)])
    from_delayed: Callable[..., da.Array] = da.from_delayed
    concatenate: Callable[[list[da.Array]], da.Array] = da.concatenate
    return concatenate([from_delayed(f, shape=(b - a, values.shape[1]), dtype=values.dtype)
                        for f, (a, b) in zip(futures, pairwise(starts))])


def _persist_arrays(runner: _Runner, X: da.Array, mask_arr: da.Array | None) -> tuple[da.Array, da.Array | None]:
    held = runner.persist([X] if mask_arr is None else [X, mask_arr])
    return held[0], (None if mask_arr is None else held[1])


def _blocks(X: da.Array, mask_arr: da.Array | None) -> tuple[list[Delayed], list[Delayed | None], list[int]]:
    """The row blocks of ``X`` and ``mask_arr`` as Delayed objects, with each block's first row."""
    x_blocks = _to_delayed(X)
    o_blocks: list[Delayed | None] = [None] * len(x_blocks) if mask_arr is None else list(_to_delayed(mask_arr))
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int).tolist()
    return x_blocks, o_blocks, starts


def _to_delayed(arr: da.Array) -> list[Delayed]:
    """The blocks of a Dask array cut into row blocks, in row order."""
    to_delayed: Callable[[], NDArray[np.object_]] = arr.to_delayed
    return list(to_delayed().ravel())


def _iterate(
    runner: _Runner, X: da.Array, mask_arr: da.Array | None, *,
    alpha: float, tol: float, max_iter: int, chunk_bytes: int,
) -> EIPResult:
    n_questions, n_models = X.shape
    rows_per_chunk = max(1, chunk_bytes // (8 * n_models))
    weighted = X.dtype.kind == "f" or mask_arr is not None
    x_blocks, o_blocks, starts = _blocks(X, mask_arr)
    bounds = [*starts, n_questions]

    graph_block = _delayed(_graph_block)
    sums: list[_BlockSums] = runner.compute([
        graph_block(x, o, weighted, rows_per_chunk, start) for x, o, start in zip(x_blocks, o_blocks, starts)
    ])
    problems = [b.problem for b in sums if b.problem is not None]
    if problems:
        raise ValueError(problems[0])
    per_model = np.sum([b.observed_per_model for b in sums], axis=0)
    if (per_model == 0).any():
        raise ValueError(ERR_NO_OBSERVED.format(columns=np.flatnonzero(per_model == 0).tolist()[:10]))
    s = np.concatenate([b.s for b in sums])
    f = np.zeros(n_models)
    for b in sums:
        f += b.f
    row = _subnormal_row(s)
    if row is not None:
        raise _subnormal_error(_row_values(runner, X, mask_arr, row), row, float(s[row]))
    graph = _graph_from_sums(s, np.concatenate([b.fail for b in sums]), np.concatenate([b.n_obs for b in sums]), f,
                             chunk_missing=[], credit=None, observed=None)
    if not graph.kept.any():
        raise ValueError(NO_KEPT_QUESTIONS)

    n_kept = int(graph.kept.sum())
    kept = graph.kept.astype(np.float64)
    dangling_idx = np.flatnonzero(graph.dangling)
    pi_q0 = kept / n_kept
    as_array = _delayed(np.asarray)
    pieces = list(pairwise(bounds))
    held = runner.hold([values[a:b] for values in (kept, graph.inv_s, pi_q0) for a, b in pieces])
    kept_blocks, inv_s_blocks = held[: len(pieces)], held[len(pieces) : 2 * len(pieces)]
    q_blocks: list[Any] = held[2 * len(pieces) :]

    pi_m = np.full(n_models, 1.0 / n_models)
    step_rows, first, share = _delayed(_step_rows), _delayed(_first), _delayed(_share)
    residual = np.inf
    for n_iter in range(1, max_iter + 1):
        y = pi_m * graph.inv_f
        y_sum = float(y.sum())
        teleport_q = (alpha * pi_m[dangling_idx].sum() + (1.0 - alpha)) / n_kept
        y_d = as_array(y)
        steps = runner.persist([
            step_rows(x, o, q, k, inv, b.sub_missing, y_d, y_sum, alpha, teleport_q, rows_per_chunk)
            for x, o, q, k, inv, b in zip(x_blocks, o_blocks, q_blocks, kept_blocks, inv_s_blocks, sums)
        ])
        acc, change_q = _total(runner.compute([share(step) for step in steps]))
        new_m = alpha * acc + (1.0 - alpha) / n_models
        residual = float(change_q + np.abs(new_m - pi_m).sum())
        q_blocks = [first(step) for step in steps]
        if not np.isfinite(residual):
            raise _non_finite(bool(np.isfinite(change_q)), n_iter)
        pi_m = new_m
        if residual <= tol:
            pi_q = np.concatenate(runner.compute(q_blocks))
            return _result(pi_q, pi_m, graph, n_iter=n_iter, residual=residual, alpha=alpha, tol=tol)
    raise ConvergenceError("EIP", n_iter=max_iter, residual=residual, tol=tol)


def _row_values(runner: _Runner, X: da.Array, mask_arr: da.Array | None, row: int) -> FloatArray:
    """Row ``row`` of the matrix as float64 with NaN where not observed."""
    got = runner.compute([X[row]] if mask_arr is None else [X[row], mask_arr[row]])
    values = np.asarray(got[0], dtype=np.float64)
    if mask_arr is not None:
        values[~np.asarray(got[1], dtype=bool)] = np.nan
    return values


# --- entries: a Zarr store, a cluster -----------------------------------------------


