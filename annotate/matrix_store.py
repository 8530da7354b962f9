"""The compact store of response-set matrices: one Zarr v3 store per response set.

A response set's cells (credit of each model on each question) are not
database rows: they live in a chunked 2-D array on disk, and the database
keeps the questions, the models and which row/column of the matrix each one
is (``ResponseSetQuestion.row``, ``ResponseSetModel.column``).

Why Zarr (v3) rather than Parquet
---------------------------------
The matrix is a dense 2-D array, written a block of rows at a time while a
file loads, and read back either whole, by a block of rows, or by a subset of
columns (a run on some models). Zarr stores exactly that: an n-d array cut
into independently compressed chunks, each written once, any chunk readable
without the others; Dask reads it natively (``dask.array.from_zarr``, one
Dask chunk per Zarr chunk), so EIP on Dask points at the
same files. Parquet is a table of columns: a 2,000-model matrix would be 2,000
columns (or a long form three times larger), row groups are written whole,
and a 2-D chunked read needs a layer of our own.

Layout (``LAYOUT_VERSION`` 1)
-----------------------------
::

    <EIP_STORE_DIR>/response-set-<pk>.zarr/     a Zarr v3 group
        zarr.json       attributes: layout, response_set, n_questions, n_models,
                        n_observed, credit_dtype, fully_observed
        credit/         (n_questions, n_models) uint8 (0/1, binary sets),
                        float32 (partial credit, every value exact in float32:
                        0.5, 0.25, ...) or float64 (any other partial credit:
                        kept exact, so scores never move); 0 where not observed
        observed/       (n_questions, n_models) bool, True = observed
    <EIP_STORE_DIR>/.tmp/response-set-<pk>-<token>.zarr   while a load writes it

Row ``i`` is the question whose ``ResponseSetQuestion.row`` is ``i`` (the
order in which the load first met the questions: a wide file's row order);
column ``j`` the model whose ``ResponseSetModel.column`` is ``j``. Both
arrays are chunked ``(ROW_CHUNK, COLUMN_CHUNK)`` (capped by the shape) and
compressed with Zarr's default codec (zstd).

The observed mask is always present, so a reader never needs a special case,
but it costs nothing when a set is fully observed: its fill value is True and
all-True chunks are not written (``write_empty_chunks=False``), so a fully
observed matrix has a mask with no chunk files. ``fully_observed`` in the
attributes lets a reader skip reading it.

A missing cell is neither a success nor a failure (EIP paper, section 2.2):
its credit byte is 0 and must always be read together with the mask
(:func:`read_dense` gives float64 with NaN; :func:`read_compact` gives uint8
when fully observed, else float32 or float64 with NaN).

Atomicity: a load writes into a temporary directory under ``.tmp/`` and
:func:`store_publish` renames it into place (one ``os.replace`` on the same
file system) inside the transaction that marks the set loaded; a failed or
killed load leaves only the temporary directory, which the load's cleanup
(or the next load's sweep of abandoned loads) removes. Deleting a response set
removes its store after the transaction commits (see
:func:`store_remove_on_commit`).

zarr is imported inside the functions that use it (Django startup stays light).
"""
from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    import zarr

LAYOUT_VERSION = 1
ROW_CHUNK = 8192
COLUMN_CHUNK = 1024
CREDIT = "credit"
OBSERVED = "observed"
BINARY_DTYPE = np.dtype(np.uint8)
PARTIAL_DTYPE = np.dtype(np.float32)
EXACT_DTYPE = np.dtype(np.float64)
TEMP_FOLDER = ".tmp"

ERR_SHAPE = "{what} has shape {shape}; the store's matrix is {expected}"
ERR_NOT_BINARY = "credit dtype uint8 holds 0/1 only; got the value {value!r}"
ERR_CREDIT = "credit {value!r} is not in [0, 1]"
ERR_MISSING = "no matrix store at {path} (response set {pk})"
ERR_DTYPE = "credit dtype must be uint8 (binary), float32 or float64 (partial credit); got {dtype}"


def store_root() -> Path:
    """The folder holding every store (setting ``EIP_STORE_DIR``)."""
    return Path(settings.EIP_STORE_DIR)


def _pk(response_set: Any) -> int:
    pk = getattr(response_set, "pk", response_set)
    if isinstance(pk, bool) or not isinstance(pk, int | np.integer):
        raise ValueError(f"response_set must be a saved ResponseSet or its id; got {response_set!r}")
    return int(pk)


def store_path(response_set: Any) -> Path:
    """Where the matrix of ``response_set`` (a ResponseSet or its id) lives."""
    return store_root() / f"response-set-{_pk(response_set)}.zarr"


def temp_store_path(response_set: Any) -> Path:
    """A fresh temporary path for a load of ``response_set`` to write into."""
    return store_root() / TEMP_FOLDER / f"response-set-{_pk(response_set)}-{uuid.uuid4().hex[:12]}.zarr"


def credit_dtype(credits: np.ndarray) -> np.dtype:
    """The smallest lossless dtype: uint8 when every credit is 0 or 1, float32 when
    every credit is a float32 exactly (0.5, 0.25, ...), else float64."""
    values = np.asarray(credits)
    if values.size == 0 or bool(np.all((values == 0) | (values == 1))):
        return BINARY_DTYPE
    if bool(np.all(values.astype(PARTIAL_DTYPE).astype(values.dtype) == values)):
        return PARTIAL_DTYPE
    return EXACT_DTYPE


class MatrixWriter:
    """Writes one store a block of rows at a time (see the module's layout).

    Parameters
    ----------
    path : Path
        A directory that does not exist yet (normally :func:`temp_store_path`).
    n_questions, n_models : int
        The matrix shape.
    dtype : numpy dtype
        ``uint8`` (binary), ``float32`` or ``float64`` (partial credit; see
        :func:`credit_dtype`).
    response_set : int, optional
        Recorded in the attributes.
    """

    def __init__(self, path: Path, *, n_questions: int, n_models: int, dtype: Any,
                 response_set: int | None = None) -> None:
        import zarr
        self.dtype = np.dtype(dtype)
        if self.dtype not in (BINARY_DTYPE, PARTIAL_DTYPE, EXACT_DTYPE):
            raise ValueError(ERR_DTYPE.format(dtype=self.dtype))
        self.path = Path(path)
        self.shape = (int(n_questions), int(n_models))
        self.response_set = response_set
        self._observed_by_block: dict[int, int] = {}  # a block written again counts once
        self.path.parent.mkdir(parents=True, exist_ok=True)
        chunks = (max(1, min(ROW_CHUNK, self.shape[0])), max(1, min(COLUMN_CHUNK, self.shape[1])))
        self._group = zarr.open_group(str(self.path), mode="w-")
        self._credit = self._group.create_array(CREDIT, shape=self.shape, chunks=chunks, dtype=self.dtype,
                                                fill_value=0)
        self._observed = self._group.create_array(OBSERVED, shape=self.shape, chunks=chunks, dtype=bool,
                                                  fill_value=True, config={"write_empty_chunks": False})

    def write_rows(self, start: int, credit: np.ndarray, observed: np.ndarray | None = None) -> None:
        """Write rows ``start:start + len(credit)``.

        ``credit`` holds values in [0, 1] (anything where ``observed`` is
        False is replaced by 0); ``observed`` None means every cell of the
        block is observed. Blocks starting at multiples of ``ROW_CHUNK``
        write whole chunks (fastest).
        """
        credit = np.asarray(credit)
        stop = start + credit.shape[0]
        if credit.ndim != 2 or credit.shape[1] != self.shape[1] or start < 0 or stop > self.shape[0]:
            raise ValueError(ERR_SHAPE.format(what=f"rows {start}:{stop}", shape=credit.shape, expected=self.shape))
        if observed is not None:
            observed = np.asarray(observed, dtype=bool)
            if observed.shape != credit.shape:
                raise ValueError(ERR_SHAPE.format(what="observed", shape=observed.shape, expected=credit.shape))
            credit = np.where(observed, credit, 0)
        block = self._cast(credit)
        self._credit[start:stop] = block
        if observed is not None and not observed.all():
            self._observed[start:stop] = observed
            self._observed_by_block[start] = int(observed.sum())
        else:
            self._observed_by_block[start] = block.size

    @property
    def n_observed(self) -> int:
        """Observed cells written so far."""
        return sum(self._observed_by_block.values())

    def _cast(self, credit: np.ndarray) -> np.ndarray:
        if self.dtype == BINARY_DTYPE:
            bad = credit > 1 if credit.dtype == BINARY_DTYPE else (credit != 0) & (credit != 1)
            if bad.any():
                raise ValueError(ERR_NOT_BINARY.format(value=credit[bad].flat[0].item()))
            return credit.astype(BINARY_DTYPE, copy=False)
        values = credit.astype(self.dtype, copy=False)
        bad = ~((values >= 0) & (values <= 1))
        if bad.any():
            raise ValueError(ERR_CREDIT.format(value=values[bad].flat[0].item()))
        return values

    def close(self) -> dict:
        """Write the attributes; returns them."""
        attrs = {
            "layout": LAYOUT_VERSION,
            "response_set": self.response_set,
            "n_questions": self.shape[0],
            "n_models": self.shape[1],
            "n_observed": self.n_observed,
            "credit_dtype": self.dtype.name,
            "fully_observed": self.n_observed == self.shape[0] * self.shape[1],
        }
        self._group.attrs.update(attrs)
        return attrs


def write_matrix(path: Path, credit: np.ndarray, observed: np.ndarray | None = None, *,
                 dtype: Any = None, response_set: int | None = None) -> dict:
    """Write a whole in-memory matrix as a store at ``path``; returns its attributes.

    ``credit`` may be float with NaN = not observed (then ``observed`` is
    derived from it). ``dtype`` defaults to :func:`credit_dtype` of the
    observed values.
    """
    credit = np.asarray(credit)
    if observed is None and credit.dtype.kind == "f":
        nan = np.isnan(credit)
        if nan.any():
            observed = ~nan
    mask = None if observed is None else np.asarray(observed, dtype=bool)
    if dtype is None:
        dtype = credit_dtype(credit if mask is None else credit[mask])
    writer = MatrixWriter(path, n_questions=credit.shape[0], n_models=credit.shape[1], dtype=dtype,
                          response_set=response_set)
    for start in range(0, credit.shape[0], ROW_CHUNK):
        stop = min(start + ROW_CHUNK, credit.shape[0])
        writer.write_rows(start, credit[start:stop], None if mask is None else mask[start:stop])
    return writer.close()


def row_blocks(rows: np.ndarray, columns: np.ndarray, credits: np.ndarray, *, n_questions: int, n_models: int,
               dtype: Any, block_rows: int = ROW_CHUNK):
    """Dense blocks of rows from the long form (one entry per observed cell).

    Yields ``(start, credit, observed, n_cells)`` for rows ``start:start +
    len(credit)``: the block's credit in ``dtype`` (0 where not observed), its
    observed mask and how many observed cells it holds. The cells are sorted
    by row once (an index array); memory beyond the inputs is one block.
    """
    rows = np.asarray(rows, dtype=np.int64)
    columns = np.asarray(columns, dtype=np.int64)
    credits = np.asarray(credits)
    order = np.argsort(rows, kind="stable")
    starts = np.arange(0, n_questions, block_rows)
    bounds = np.searchsorted(rows[order], np.append(starts, n_questions))
    for block, start in enumerate(starts.tolist()):
        stop = min(start + block_rows, n_questions)
        take = order[bounds[block]:bounds[block + 1]]
        credit = np.zeros((stop - start, n_models), dtype=dtype)
        observed = np.zeros((stop - start, n_models), dtype=bool)
        r, c = rows[take] - start, columns[take]
        credit[r, c] = credits[take]
        observed[r, c] = True
        yield start, credit, observed, int(take.size)


def write_cells(path: Path, rows: np.ndarray, columns: np.ndarray, credits: np.ndarray, *,
                n_questions: int, n_models: int, dtype: Any = None, response_set: int | None = None) -> dict:
    """Write a store from the long form (row index, column index, credit of
    each observed cell); returns its attributes. See :func:`row_blocks`."""
    credits = np.asarray(credits)
    if dtype is None:
        dtype = credit_dtype(credits)
    writer = MatrixWriter(path, n_questions=n_questions, n_models=n_models, dtype=dtype,
                          response_set=response_set)
    for start, credit, observed, _ in row_blocks(rows, columns, credits, n_questions=n_questions,
                                                 n_models=n_models, dtype=writer.dtype):
        writer.write_rows(start, credit, observed)
    return writer.close()


def _open_group(path: Path) -> zarr.Group:
    import zarr
    if not Path(path).is_dir():
        raise FileNotFoundError(ERR_MISSING.format(path=path, pk=Path(path).stem))
    return zarr.open_group(str(path), mode="r")


def store_info(path: Path) -> dict:
    """The attributes of a store (see the module's layout)."""
    return dict(_open_group(path).attrs)


def open_credit(path: Path) -> zarr.Array:
    """The credit array of a store, read-only and lazy (what ``dask.array.from_zarr`` wants)."""
    return _open_group(path)[CREDIT]  # type: ignore[return-value]


def open_observed(path: Path) -> zarr.Array:
    """The observed mask of a store, read-only and lazy."""
    return _open_group(path)[OBSERVED]  # type: ignore[return-value]


def _select(array: zarr.Array, rows: np.ndarray | None, columns: np.ndarray | None) -> np.ndarray:
    if rows is None and columns is None:
        return array[...]
    r = slice(None) if rows is None else np.asarray(rows, dtype=np.int64)
    c = slice(None) if columns is None else np.asarray(columns, dtype=np.int64)
    return array.get_orthogonal_selection((r, c))


@dataclass(frozen=True)
class StoredMatrix:
    """A store's matrix in memory: ``credit`` in its stored dtype (0 where not
    observed) and ``observed`` (None when every selected cell is observed)."""

    credit: np.ndarray
    observed: np.ndarray | None


def read_matrix(path: Path, *, rows: np.ndarray | None = None, columns: np.ndarray | None = None) -> StoredMatrix:
    """Read a store (or the given rows and columns of it, in the given order).

    Returns the credit in its stored dtype (uint8, float32 or float64) and the
    observed mask (None when the selection is fully observed).
    """
    group = _open_group(path)
    credit = _select(group[CREDIT], rows, columns)  # type: ignore[arg-type]
    observed = None
    if not group.attrs.get("fully_observed", False):
        observed = _select(group[OBSERVED], rows, columns)  # type: ignore[arg-type]
        if observed.all():
            observed = None
    return StoredMatrix(credit=credit, observed=observed)


def read_dense(path: Path, *, rows: np.ndarray | None = None, columns: np.ndarray | None = None) -> np.ndarray:
    """The matrix as float64 with NaN where not observed (the form :mod:`scoring` takes)."""
    stored = read_matrix(path, rows=rows, columns=columns)
    dense = stored.credit.astype(np.float64)
    if stored.observed is not None:
        dense[~stored.observed] = np.nan
    return dense


def read_compact(path: Path, *, rows: np.ndarray | None = None, columns: np.ndarray | None = None) -> np.ndarray:
    """The matrix in the smallest form EIP takes without a float64 copy.

    uint8 0/1 when the selection is binary and fully observed (``scoring.eip``
    streams it in blocks); otherwise float32 with NaN where not observed
    (``eip`` treats NaN as not observed; integer dtypes cannot say "missing"),
    or float64 when the stored credit is float64.
    """
    stored = read_matrix(path, rows=rows, columns=columns)
    if stored.observed is None:
        return stored.credit
    compact = stored.credit.astype(np.result_type(stored.credit.dtype, np.float32))
    compact[~stored.observed] = np.nan
    return compact


def store_publish(temp: Path, response_set: Any) -> Path:
    """Move a written temporary store into place (an atomic rename); returns the final path.

    Call it inside the transaction that makes the set visible, as its last
    step; if that transaction then fails, call :func:`store_remove`.
    """
    final = store_path(response_set)
    if final.exists():  # a leftover of a killed load of this very id
        shutil.rmtree(final)
    os.replace(temp, final)
    return final


def store_remove(response_set: Any) -> None:
    """Remove the store of ``response_set`` and any temporary store of its loads."""
    pk = _pk(response_set)
    shutil.rmtree(store_path(pk), ignore_errors=True)
    temp = store_root() / TEMP_FOLDER
    if temp.is_dir():
        for leftover in temp.glob(f"response-set-{pk}-*.zarr"):
            shutil.rmtree(leftover, ignore_errors=True)


def store_remove_on_commit(response_set: Any) -> None:
    """Remove the store once the current transaction commits (right away outside one)."""
    from django.db import transaction
    pk = _pk(response_set)
    transaction.on_commit(lambda: store_remove(pk))
