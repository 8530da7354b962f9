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

Layout (``LAYOUT_VERSION`` 2)
-----------------------------
::

    <root>/response-set-<pk>.zarr/     a Zarr v3 group (<root>: EIP_STORE_URL, else EIP_STORE_DIR)
        zarr.json       attributes: layout, response_set, n_questions, n_models,
                        n_observed, credit_dtype, credit_denominator, fully_observed
        credit/         (n_questions, n_models), the first form that holds every
                        credit exactly:
                        uint8 0/1 (binary sets, ``credit_denominator`` 1);
                        uint8 numerators k of k/n, n = ``credit_denominator``
                        in 2..255 (partial credit that is a fraction with a
                        small denominator: pass@1 over n samples, n epochs);
                        float32 (every value exact in float32);
                        float64 (any other partial credit: kept exact, so
                        scores never move); 0 where not observed
        observed/       (n_questions, n_models) bool, True = observed
    <root>/.tmp/response-set-<pk>-<token>.zarr   while a load writes it

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

Layout 1 (before fractions) is layout 2 without ``credit_denominator``;
readers take a missing denominator as 1.

Exactness of fractions: a credit ``v`` is stored as ``k`` over ``n`` only
when ``float(k) / float(n) == v`` exactly (:func:`scoring.fraction_denominator`
and :func:`scoring.fraction.to_numerators` check every value), so reading
back ``k / n`` in float64 gives every cell bit for bit. A 1,000,000 x 2,000
set with credit k/10 takes 2 GB of numerators instead of 16 GB of float64.

A missing cell is neither a success nor a failure (EIP paper, section 2.2):
its credit byte is 0 and must always be read together with the mask
(:func:`read_dense` gives float64 with NaN; :func:`read_compact` gives uint8
when binary and fully observed, a :class:`scoring.FractionMatrix` for
fractions (numerators and the mask bit-packed in memory, one bit a cell),
else float32 or float64 with NaN). On disk the mask is a bool array
compressed with zstd, which takes well under a bit a cell for the usual few
gaps, and is what Dask reads.

Atomicity: a load writes into a temporary directory under ``.tmp/`` and
:func:`store_publish` renames it into place (one ``os.replace`` on the same
file system) inside the transaction that marks the set loaded; a failed or
killed load leaves only the temporary directory, which the load's cleanup
(or the next load's sweep of abandoned loads) removes. Deleting a response set
removes its store after the transaction commits (see
:func:`store_remove_on_commit`).

Where: every function takes a location, a local folder (``Path``) or a URL
with a protocol (``str``), which is opened through fsspec
(``zarr.storage.FsspecStore``): ``file://`` for a shared file system,
``s3://`` for an object store, ``memory://`` in tests. :func:`store_root`
is ``EIP_STORE_URL`` when set, so the web servers, the task workers and the
Dask workers of several machines read and write the same stores.

zarr and fsspec are imported inside the functions that use them (Django startup stays light).
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

    from scoring.fraction import FractionMatrix

LAYOUT_VERSION = 2
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
ERR_DENOMINATOR = "a credit denominator n > 1 needs the uint8 dtype (numerators); got dtype {dtype} and n = {n}"


#: Where a store lives: a local folder (``Path``) or a URL that fsspec opens
#: (``file:///srv/eip/store/...``, ``memory://...``, ``s3://bucket/...``).
Location = Path | str


def store_root() -> Location:
    """Where every store lives: the setting ``EIP_STORE_URL`` when set (a URL opened through
    fsspec), else the local folder ``EIP_STORE_DIR``."""
    url = getattr(settings, "EIP_STORE_URL", "") or ""
    if url:
        return url.rstrip("/")
    return Path(settings.EIP_STORE_DIR)


def is_url(location: Location) -> bool:
    """True for a location fsspec opens (it has a protocol), False for a local folder."""
    return isinstance(location, str) and "://" in location


def _as_location(location: Location) -> Location:
    return location if is_url(location) else Path(location)


def _join(root: Location, name: str) -> Location:
    return f"{root}/{name}" if is_url(root) else Path(root) / name


def _filesystem(location: Location):
    """``(fs, path)`` of a URL through :func:`fsspec.core.url_to_fs` (local files make their folders)."""
    import fsspec
    options = {"auto_mkdir": True} if str(location).startswith(("file://", "local://")) else {}
    return fsspec.core.url_to_fs(str(location), **options)


def _zarr_store(location: Location, *, read_only: bool) -> Any:
    """What :func:`zarr.open_group` opens: a local folder's path, or an fsspec store for a URL."""
    if not is_url(location):
        return str(location)
    from zarr.storage import FsspecStore
    options = {"auto_mkdir": True} if str(location).startswith(("file://", "local://")) else {}
    return FsspecStore.from_url(str(location), storage_options=options, read_only=read_only)


def store_exists(location: Location) -> bool:
    """Is there a store (a Zarr group) at ``location``?"""
    location = _as_location(location)
    if not is_url(location):
        return Path(location).is_dir()
    fs, path = _filesystem(location)
    return bool(fs.exists(f"{path}/zarr.json"))


def _remove_tree(location: Location) -> None:
    location = _as_location(location)
    if not is_url(location):
        shutil.rmtree(location, ignore_errors=True)
        return
    fs, path = _filesystem(location)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def _name(location: Location) -> str:
    return str(location).rstrip("/").rsplit("/", 1)[-1]


def _pk(response_set: Any) -> int:
    pk = getattr(response_set, "pk", response_set)
    if isinstance(pk, bool) or not isinstance(pk, int | np.integer):
        raise ValueError(f"response_set must be a saved ResponseSet or its id; got {response_set!r}")
    return int(pk)


def store_path(response_set: Any) -> Location:
    """Where the matrix of ``response_set`` (a ResponseSet or its id) lives (a Path, or a URL)."""
    return _join(store_root(), f"response-set-{_pk(response_set)}.zarr")


def temp_store_path(response_set: Any) -> Location:
    """A fresh temporary location for a load of ``response_set`` to write into."""
    return _join(_join(store_root(), TEMP_FOLDER), f"response-set-{_pk(response_set)}-{uuid.uuid4().hex[:12]}.zarr")


def credit_dtype(credits: np.ndarray) -> np.dtype:
    """The smallest lossless float or binary dtype: uint8 when every credit is 0 or 1,
    float32 when every credit is a float32 exactly (0.5, 0.25, ...), else float64.

    See :func:`credit_form`, which also considers fractions k/n.
    """
    values = np.asarray(credits)
    if values.size == 0 or bool(np.all((values == 0) | (values == 1))):
        return BINARY_DTYPE
    if bool(np.all(values.astype(PARTIAL_DTYPE).astype(values.dtype) == values)):
        return PARTIAL_DTYPE
    return EXACT_DTYPE


@dataclass(frozen=True)
class CreditForm:
    """How a set's credit is stored: ``dtype`` and, for uint8, the ``denominator`` n
    (1: binary 0/1; 2..255: numerators k of k/n)."""

    dtype: np.dtype
    denominator: int = 1


def credit_form(credits: np.ndarray) -> CreditForm:
    """The first exact form of the module's layout for these observed credits.

    Parameters
    ----------
    credits : ndarray of float, any shape
        Observed credits in [0, 1] (no NaN).

    Returns
    -------
    CreditForm
        uint8 with denominator 1 (every credit 0 or 1), uint8 with the
        smallest denominator n <= 255 such that every credit is exactly k/n
        (:func:`scoring.fraction_denominator`), else float32 when every credit
        is exact in float32, else float64.
    """
    from scoring.fraction import fraction_denominator
    values = np.asarray(credits)
    if values.size == 0 or bool(np.all((values == 0) | (values == 1))):
        return CreditForm(BINARY_DTYPE, 1)
    n = fraction_denominator(values)
    if n is not None:
        return CreditForm(BINARY_DTYPE, n)
    return CreditForm(credit_dtype(values))


class DenominatorScan:
    """The fraction denominator of credits seen a block at a time (:func:`credit_form` streamed).

    The first block with partial credit finds its denominator from its
    distinct values; later blocks are checked against it in one vectorised
    pass (``rint(v * n) / n == v``) and only a block that fails is searched
    again (the denominators then combine by their lcm). ``denominator`` is
    1 while every credit seen is 0 or 1, None once no n <= 255 holds them all.
    """

    def __init__(self) -> None:
        self.denominator: int | None = 1

    def add(self, values: np.ndarray) -> int | None:
        """Take one block of observed credits (float, no NaN); returns the denominator so far."""
        from scoring.fraction import combine_denominators, fraction_denominator
        n = self.denominator
        if n is None or values.size == 0:
            return n
        values = np.asarray(values, dtype=np.float64)
        if bool(np.all(np.rint(values * n) / n == values)):
            return n
        self.denominator = combine_denominators(n, fraction_denominator(values))
        return self.denominator


class MatrixWriter:
    """Writes one store a block of rows at a time (see the module's layout).

    Parameters
    ----------
    path : Path or str
        A location with no store yet (normally :func:`temp_store_path`): a
        local folder or a URL fsspec opens.
    n_questions, n_models : int
        The matrix shape.
    dtype : numpy dtype
        ``uint8`` (binary, or numerators with ``denominator``), ``float32``
        or ``float64`` (partial credit; see :func:`credit_form`).
    denominator : int, default 1
        With uint8: n of the credit k/n (1 = binary 0/1). Blocks are given
        as credit (float k/n, or 0/1) and stored as numerators; a credit that
        is not exactly k/n is refused, naming the cell.
    response_set : int, optional
        Recorded in the attributes.
    """

    def __init__(self, path: Location, *, n_questions: int, n_models: int, dtype: Any, denominator: int = 1,
                 response_set: int | None = None) -> None:
        import zarr
        self.dtype = np.dtype(dtype)
        if self.dtype not in (BINARY_DTYPE, PARTIAL_DTYPE, EXACT_DTYPE):
            raise ValueError(ERR_DTYPE.format(dtype=self.dtype))
        if denominator != 1 and (self.dtype != BINARY_DTYPE or not 2 <= denominator <= 255):
            raise ValueError(ERR_DENOMINATOR.format(dtype=self.dtype, n=denominator))
        self.denominator = int(denominator)
        self.path = _as_location(path)
        self.shape = (int(n_questions), int(n_models))
        self.response_set = response_set
        self._observed_by_block: dict[int, int] = {}  # a block written again counts once
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        chunks = (max(1, min(ROW_CHUNK, self.shape[0])), max(1, min(COLUMN_CHUNK, self.shape[1])))
        self._group = zarr.open_group(_zarr_store(self.path, read_only=False), mode="w-")
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
        if self.denominator > 1:
            from scoring.fraction import to_numerators
            if credit.dtype == BINARY_DTYPE:  # 0/1 integers: numerators 0 or n
                if (credit > 1).any():
                    raise ValueError(ERR_NOT_BINARY.format(value=credit[credit > 1].flat[0].item()))
                return credit * np.uint8(self.denominator)
            bad = ~((credit >= 0) & (credit <= 1))
            if bad.any():
                raise ValueError(ERR_CREDIT.format(value=credit[bad].flat[0].item()))
            return to_numerators(credit, self.denominator, np.ones(credit.shape, dtype=bool))
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
            "credit_denominator": self.denominator,
            "fully_observed": self.n_observed == self.shape[0] * self.shape[1],
        }
        self._group.attrs.update(attrs)
        return attrs


def write_matrix(path: Location, credit: np.ndarray, observed: np.ndarray | None = None, *,
                 dtype: Any = None, denominator: int = 1, response_set: int | None = None) -> dict:
    """Write a whole in-memory matrix as a store at ``path``; returns its attributes.

    ``credit`` may be float with NaN = not observed (then ``observed`` is
    derived from it). ``dtype`` and ``denominator`` default to
    :func:`credit_form` of the observed values.
    """
    credit = np.asarray(credit)
    if observed is None and credit.dtype.kind == "f":
        nan = np.isnan(credit)
        if nan.any():
            observed = ~nan
    mask = None if observed is None else np.asarray(observed, dtype=bool)
    if dtype is None:
        form = credit_form(credit if mask is None else credit[mask])
        dtype, denominator = form.dtype, form.denominator
    writer = MatrixWriter(path, n_questions=credit.shape[0], n_models=credit.shape[1], dtype=dtype,
                          denominator=denominator, response_set=response_set)
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


def write_cells(path: Location, rows: np.ndarray, columns: np.ndarray, credits: np.ndarray, *,
                n_questions: int, n_models: int, dtype: Any = None, denominator: int = 1,
                response_set: int | None = None) -> dict:
    """Write a store from the long form (row index, column index, credit of
    each observed cell); returns its attributes. See :func:`row_blocks`;
    ``dtype`` and ``denominator`` default to :func:`credit_form` of the credits."""
    credits = np.asarray(credits)
    if dtype is None:
        form = credit_form(credits)
        dtype, denominator = form.dtype, form.denominator
    writer = MatrixWriter(path, n_questions=n_questions, n_models=n_models, dtype=dtype,
                          denominator=denominator, response_set=response_set)
    block_dtype = np.float64 if writer.denominator > 1 else writer.dtype
    for start, credit, observed, _ in row_blocks(rows, columns, credits, n_questions=n_questions,
                                                 n_models=n_models, dtype=block_dtype):
        writer.write_rows(start, credit, observed)
    return writer.close()


def _open_group(path: Location) -> zarr.Group:
    import zarr
    path = _as_location(path)
    if not store_exists(path):
        raise FileNotFoundError(ERR_MISSING.format(path=path, pk=_name(path).removesuffix(".zarr")))
    return zarr.open_group(_zarr_store(path, read_only=True), mode="r")


def store_info(path: Location) -> dict:
    """The attributes of a store (see the module's layout)."""
    return dict(_open_group(path).attrs)


def open_credit(path: Location) -> zarr.Array:
    """The credit array of a store, read-only and lazy (what ``dask.array.from_zarr`` wants)."""
    return _open_group(path)[CREDIT]  # type: ignore[return-value]


def open_observed(path: Location) -> zarr.Array:
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
    observed), ``observed`` (None when every selected cell is observed) and
    the ``denominator`` n (credit = ``credit / n`` when n > 1: numerators)."""

    credit: np.ndarray
    observed: np.ndarray | None
    denominator: int = 1


def _denominator(group: zarr.Group) -> int:
    return int(group.attrs.get("credit_denominator", 1))  # type: ignore[arg-type]


def read_matrix(path: Location, *, rows: np.ndarray | None = None, columns: np.ndarray | None = None) -> StoredMatrix:
    """Read a store (or the given rows and columns of it, in the given order).

    Returns the credit in its stored dtype (uint8, float32 or float64), the
    observed mask (None when the selection is fully observed) and the
    denominator (uint8 numerators of fractions when above 1).
    """
    group = _open_group(path)
    credit = _select(group[CREDIT], rows, columns)  # type: ignore[arg-type]
    observed = None
    if not group.attrs.get("fully_observed", False):
        observed = _select(group[OBSERVED], rows, columns)  # type: ignore[arg-type]
        if observed.all():
            observed = None
    return StoredMatrix(credit=credit, observed=observed, denominator=_denominator(group))


def read_fraction(path: Location, *, rows: np.ndarray | None = None,
                  columns: np.ndarray | None = None) -> FractionMatrix:
    """A fraction store (or the given rows and columns of it) as a :class:`scoring.FractionMatrix`.

    The numerators are read as stored (one byte a cell); the observed mask is
    read ``ROW_CHUNK`` rows at a time and bit-packed, so no bool matrix as
    large as the selection is ever held. ``observed_bits`` is None when the
    selection is fully observed.

    Raises
    ------
    ValueError
        If the store does not hold fractions (``credit_denominator`` <= 1).
    """
    from scoring.fraction import FractionMatrix, pack_observed
    group = _open_group(path)
    n = _denominator(group)
    if n <= 1:
        raise ValueError(f"{path} holds no fractions (credit_denominator {n}); use read_matrix")
    numerators = _select(group[CREDIT], rows, columns)  # type: ignore[arg-type]
    bits = None
    if not group.attrs.get("fully_observed", False):
        mask_array = group[OBSERVED]
        n_rows = numerators.shape[0]
        packed, complete = [], True
        for start in range(0, n_rows, ROW_CHUNK):
            block_rows = (np.arange(start, min(start + ROW_CHUNK, n_rows)) if rows is None
                          else np.asarray(rows, dtype=np.int64)[start:start + ROW_CHUNK])
            block = _select(mask_array, block_rows, columns)  # type: ignore[arg-type]
            complete = complete and bool(block.all())
            packed.append(pack_observed(block))
        if not complete:
            bits = np.concatenate(packed) if packed else None
    return FractionMatrix(numerators, n, bits)


def read_dense(path: Location, *, rows: np.ndarray | None = None, columns: np.ndarray | None = None) -> np.ndarray:
    """The matrix as float64 with NaN where not observed (the form :mod:`scoring` takes)."""
    stored = read_matrix(path, rows=rows, columns=columns)
    dense = stored.credit.astype(np.float64)
    if stored.denominator > 1:
        dense /= stored.denominator
    if stored.observed is not None:
        dense[~stored.observed] = np.nan
    return dense


def read_compact(path: Location, *, rows: np.ndarray | None = None,
                 columns: np.ndarray | None = None) -> np.ndarray | FractionMatrix:
    """The matrix in the smallest form EIP takes without a float64 copy.

    A :class:`scoring.FractionMatrix` for a store of fractions (numerators
    and a bit-packed mask: :func:`read_fraction`); uint8 0/1 when the
    selection is binary and fully observed (``scoring.eip`` streams it in
    blocks); otherwise float32 with NaN where not observed (``eip`` treats
    NaN as not observed; integer dtypes cannot say "missing"), or float64
    when the stored credit is float64.
    """
    if _denominator(_open_group(path)) > 1:
        return read_fraction(path, rows=rows, columns=columns)
    stored = read_matrix(path, rows=rows, columns=columns)
    if stored.observed is None:
        return stored.credit
    compact = stored.credit.astype(np.result_type(stored.credit.dtype, np.float32))
    compact[~stored.observed] = np.nan
    return compact


def store_publish(temp: Location, response_set: Any) -> Location:
    """Move a written temporary store into place; returns the final location.

    A local folder (or a ``file://`` URL) is renamed (``os.replace``: atomic
    on one file system); on other fsspec file systems (an object store) the
    store is moved with ``fs.mv`` (a copy and a delete; the set stays hidden
    until the transaction that calls this commits). Call it inside the
    transaction that makes the set visible, as its last step; if that
    transaction then fails, call :func:`store_remove`.
    """
    final = store_path(response_set)
    temp = _as_location(temp)
    if store_exists(final) or (isinstance(final, Path) and final.exists()):
        _remove_tree(final)  # a leftover of a killed load of this very id
    if isinstance(temp, Path) and isinstance(final, Path):
        os.replace(temp, final)
    else:
        fs, source = _filesystem(temp)
        _, target = _filesystem(final)
        fs.mv(source, target, recursive=True)
    return final


def store_remove(response_set: Any) -> None:
    """Remove the store of ``response_set`` and any temporary store of its loads."""
    pk = _pk(response_set)
    _remove_tree(store_path(pk))
    temp = _join(store_root(), TEMP_FOLDER)
    pattern = f"response-set-{pk}-*.zarr"
    if isinstance(temp, Path):
        if temp.is_dir():
            for leftover in temp.glob(pattern):
                shutil.rmtree(leftover, ignore_errors=True)
        return
    fs, path = _filesystem(temp)
    for leftover in fs.glob(f"{path}/{pattern}"):
        fs.rm(leftover, recursive=True)


def store_remove_on_commit(response_set: Any) -> None:
    """Remove the store once the current transaction commits (right away outside one)."""
    from django.db import transaction
    pk = _pk(response_set)
    transaction.on_commit(lambda: store_remove(pk))
