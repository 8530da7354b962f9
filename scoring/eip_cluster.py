"""EIP on a standing Dask cluster, or straight from a response set's Zarr store.

The entry points the scoring service calls when a run is sent to a cluster:
:func:`eip_on_cluster` (a matrix in memory) and :func:`eip_on_cluster_from_zarr`
(the cells read by the workers from the store), and the in-process
:func:`eip_dask_from_zarr`. The propagation itself is :func:`scoring.eip_dask.eip_dask`.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from scoring._typing import IndexArray
from scoring.eip import (
    EIPResult,
)
from scoring.eip_dask import ERR_ZARR, DaskEIP, _to_dask, dask_client, eip_dask

if TYPE_CHECKING:
    import dask.array as da
    from distributed import Client

__all__ = ["eip_dask_from_zarr", "eip_on_cluster", "eip_on_cluster_from_zarr"]


def eip_dask_from_zarr(
    store: str | Path | Any,
    *,
    credit: str = "credit",
    observed: str = "observed",
    rows: ArrayLike | None = None,
    columns: ArrayLike | None = None,
    alpha: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 1000,
    chunk_bytes: int = 2**20,
    row_chunk: int | None = None,
    persist: bool = False,
    client: Client | None = None,
) -> EIPResult:
    """EIP of a response matrix kept in a Zarr (v3) group, read with ``dask.array.from_zarr``.

    Parameters
    ----------
    store : str, Path or zarr store
        The group: arrays ``credit`` (uint8 0/1 or float32 in [0, 1], shape
        (n_questions, n_models), rows = questions, columns = models) and,
        optionally, ``observed`` (bool, same shape, True = observed). The
        group attribute ``fully_observed`` = True skips reading the mask;
        ``credit_denominator`` = n > 1 says ``credit`` holds uint8
        numerators k of the credit k / n (read as float64 block by block).
        A URL string (``memory://``, ``s3://``, ``file://``) is opened
        through fsspec.
        On a cluster every worker opens the store itself: the path must be
        readable there (shared file system or object store URL).
    credit, observed : str, default "credit", "observed"
        Array names inside the group.
    rows, columns : array-like of int, optional
        Score only these questions (rows) and models (columns), in this
        order (default all).
    alpha, tol, max_iter, chunk_bytes, row_chunk, persist, client
        As in :func:`eip_dask` (``row_chunk`` defaults to the store's row
        chunks).

    Returns
    -------
    EIPResult
        For the (selected) matrix, as :func:`scoring.eip.eip`.

    Raises
    ------
    ValueError
        If the group has no ``credit`` array (``ERR_ZARR``), and as
        :func:`eip_dask`.
    """
    import dask.array as da
    import zarr

    group = zarr.open_group(str(store) if isinstance(store, Path) else store, mode="r")
    names = set(group.array_keys())
    if credit not in names:
        raise ValueError(ERR_ZARR.format(store=store, name=credit))
    from_zarr: Callable[[Any], da.Array] = da.from_zarr
    X = from_zarr(group[credit])
    raw_denominator: Any = group.attrs.get("credit_denominator", 1)
    denominator = int(raw_denominator)
    if denominator > 1:  # exact partial credit k/n stored as uint8 numerators
        X = X / np.float64(denominator)
    mask_arr = None
    if observed in names and group.attrs.get("fully_observed") is not True:
        mask_arr = from_zarr(group[observed])
    X, mask_arr = _select(X, rows, columns), None if mask_arr is None else _select(mask_arr, rows, columns)
    return eip_dask(X, mask_arr, alpha=alpha, tol=tol, max_iter=max_iter, chunk_bytes=chunk_bytes, row_chunk=row_chunk,
                    persist=persist, client=client)


def _select(arr: da.Array, rows: ArrayLike | None, columns: ArrayLike | None) -> da.Array:
    if rows is not None:
        index: IndexArray = np.asarray(rows, dtype=np.intp)
        arr = arr[index]
    if columns is not None:
        index = np.asarray(columns, dtype=np.intp)
        arr = arr[:, index]
    return arr


def eip_on_cluster(
    R: da.Array | ArrayLike,
    observed: da.Array | ArrayLike | None = None,
    *,
    scheduler: str,
    alpha: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 1000,
    chunk_bytes: int = 2**20,
    row_chunk: int | None = None,
    persist: bool = True,
    timeout: float = 10.0,
    local_workers: int | None = None,
    name: str = "EIP_DASK_SCHEDULER",
) -> DaskEIP:
    """:func:`eip_dask` on the ``distributed`` cluster a scheduler setting names.

    Parameters
    ----------
    R, observed, alpha, tol, max_iter, chunk_bytes, row_chunk
        As in :func:`eip_dask`.
    scheduler : str
        ``"local"`` (a LocalCluster for this run) or a scheduler address
        such as ``tcp://dask-scheduler:8786`` (see :func:`dask_client`).
    persist : bool, default True
        Hold the matrix in the workers' memory for the run (an in-memory
        matrix is then sent once, not at every iteration).
    timeout : float, default 10
        Seconds to wait for the scheduler.
    local_workers : int, optional
        Workers of a ``"local"`` cluster.
    name : str, default "EIP_DASK_SCHEDULER"
        The setting's name, for messages.

    Returns
    -------
    DaskEIP
        The result plus the scheduler, its address, the worker count and
        the number of row blocks.

    Raises
    ------
    ValueError
        On a bad scheduler setting, and as :func:`eip_dask`.
    SchedulerUnreachableError
        If no scheduler answers within ``timeout``.
    """
    n_blocks = len(_to_dask(R, row_chunk).chunks[0])
    with dask_client(scheduler, timeout=timeout, local_workers=local_workers, name=name) as client:
        info = _scheduler_info(client)
        result = eip_dask(R, observed, alpha=alpha, tol=tol, max_iter=max_iter, chunk_bytes=chunk_bytes,
                          row_chunk=row_chunk, persist=persist, client=client)
    return DaskEIP(result=result, scheduler=scheduler.strip(), address=str(info.get("address", "")),
                   n_workers=len(info.get("workers", {})), n_blocks=n_blocks)


def eip_on_cluster_from_zarr(
    store: str | Path,
    *,
    scheduler: str,
    rows: ArrayLike | None = None,
    columns: ArrayLike | None = None,
    alpha: float = 0.85,
    tol: float = 1e-10,
    max_iter: int = 1000,
    chunk_bytes: int = 2**20,
    row_chunk: int | None = None,
    persist: bool = False,
    timeout: float = 10.0,
    local_workers: int | None = None,
    name: str = "EIP_DASK_SCHEDULER",
) -> DaskEIP:
    """:func:`eip_dask_from_zarr` on the cluster a scheduler setting names.

    Parameters
    ----------
    store : str or Path
        The Zarr group (see :func:`eip_dask_from_zarr`); every worker opens
        it, so the path must be readable on every worker.
    scheduler, timeout, local_workers, name
        As in :func:`eip_on_cluster`.
    rows, columns, alpha, tol, max_iter, chunk_bytes, row_chunk
        As in :func:`eip_dask_from_zarr`.
    persist : bool, default False
        False: the workers read the store again at every iteration (the
        matrix may exceed the cluster's memory).

    Returns
    -------
    DaskEIP
        ``n_blocks`` is 0 (the blocks follow the store's chunks).

    Raises
    ------
    ValueError, SchedulerUnreachableError
        As :func:`eip_on_cluster` and :func:`eip_dask_from_zarr`.
    """
    with dask_client(scheduler, timeout=timeout, local_workers=local_workers, name=name) as client:
        info = _scheduler_info(client)
        result = eip_dask_from_zarr(store, rows=rows, columns=columns, alpha=alpha, tol=tol, max_iter=max_iter,
                                    chunk_bytes=chunk_bytes, row_chunk=row_chunk, persist=persist, client=client)
    return DaskEIP(result=result, scheduler=scheduler.strip(), address=str(info.get("address", "")),
                   n_workers=len(info.get("workers", {})), n_blocks=0)


def _scheduler_info(client: Client) -> dict[str, Any]:
    scheduler_info: Callable[[], dict[str, Any]] = client.scheduler_info
    return scheduler_info()
