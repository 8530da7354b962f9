"""The compact parsed form of a wide or long file: dense blocks of the matrix, spilled to disk.

A wide file (CSV or Parquet, one row per question, one column per model) is
read a chunk of rows at a time (:mod:`annotate.catalog.loaders.tabular`); each chunk's
credits become one dense block, saved as a ``.npy`` file in a temporary
folder, so that no more than one chunk of the file is in memory at once and
the long form (one row and one Python string per cell) is never built for a
large file. A long file (CSV/TSV or JSON Lines, one record per cell) is read
twice a chunk at a time into one dense matrix, then cut into the same blocks
(:mod:`annotate.catalog.loaders.long_stream`).

Block encoding (the narrowest that keeps every value)
    ``uint8``: 0 or 1, ``MISSING_UINT8`` (255) where not observed;
    ``uint8`` numerators k of k/n (n < 255 kept with the block) when every
    credit seen so far is such a fraction, 255 where not observed;
    ``float32`` or ``float64``: the credit, NaN where not observed.

:class:`DenseCells` also keeps what the checks and the preview need without
reading the blocks again: observed cells per question and per model, the
first question observing each model, and the connected components of the
model-question graph.

The long form of :class:`~annotate.catalog.loaders.base.ParsedResponseSet`
(``responses``) is built from the blocks only when something asks for it
(small uploads, a rename of case variants); it is the one the older parser
built, cell for cell: row-major (question by question, models left to
right), ``source`` "file:row".

References
----------
The blocks tile the response matrix :math:`A` (Section 2.2) or :math:`A_c`
(Section 2.4) of the EIP paper.
"""
from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders.limits import scratch_dir
from annotate.catalog.matrix_store import DenominatorScan

#: Columns of the responses table of a parsed response set (one row per observed cell).
RESPONSE_COLUMNS = ["dataset", "external_id", "model", "credit", "source"]

if TYPE_CHECKING:
    import pandas as pd

#: The value of a not-observed cell in a uint8 block.
MISSING_UINT8 = 255
BINARY = np.dtype(np.uint8)
PARTIAL = np.dtype(np.float32)
EXACT = np.dtype(np.float64)


def encode_block(credit: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """One block in its narrowest encoding (see the module notes).

    Parameters
    ----------
    credit : ndarray of float64 or uint8, shape (n_rows, n_models)
        Credits in [0, 1] (uint8: 0 or 1); anything where ``observed`` is
        False is ignored.
    observed : ndarray of bool, same shape

    Returns
    -------
    ndarray
        uint8 (255 = not observed), float32 or float64 (NaN = not observed).
    """
    if credit.dtype == BINARY:  # 0/1 already (a Parquet file of integers)
        if bool(observed.all()):
            return credit
        return np.where(observed, credit, MISSING_UINT8).astype(BINARY)
    values = credit[observed]
    if bool(np.all((values == 0.0) | (values == 1.0))):
        block = np.full(credit.shape, MISSING_UINT8, dtype=BINARY)
        block[observed] = values.astype(BINARY)
        return block
    out = np.where(observed, credit, np.nan)
    narrow = out.astype(PARTIAL)
    if bool(np.all(narrow[observed].astype(EXACT) == values)):
        return narrow
    return out


def decode_block(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(credit, observed) of an encoded block; credit in the block's dtype, 0 where not observed."""
    if block.dtype == BINARY:
        observed = block != MISSING_UINT8
        if bool(observed.all()):
            return block, observed
        return np.where(observed, block, 0).astype(BINARY), observed
    observed = ~np.isnan(block)
    return np.where(observed, block, 0.0).astype(block.dtype), observed


def encode_fraction_block(credit: np.ndarray, observed: np.ndarray, denominator: int) -> np.ndarray:
    """A block of credits k/n (n = ``denominator`` < 255, checked exact by the caller) as its
    numerators k in uint8, ``MISSING_UINT8`` (255) where not observed: one byte a cell."""
    block = np.full(credit.shape, MISSING_UINT8, dtype=BINARY)
    block[observed] = np.rint(credit[observed] * denominator).astype(BINARY)
    return block


def decode_fraction_block(block: np.ndarray, denominator: int) -> tuple[np.ndarray, np.ndarray]:
    """(credit, observed) of :func:`encode_fraction_block`'s block: float64 ``k / n`` (the
    credits bit for bit), 0 where not observed."""
    observed = block != MISSING_UINT8
    return np.where(observed, block, 0) / float(denominator), observed


class _UnionFind:
    """Connected components of the models, joined by the questions they share."""

    def __init__(self, n: int) -> None:
        self.parent = np.arange(n, dtype=np.int64)

    def find(self, i: int) -> int:
        parent = self.parent
        root = i
        while parent[root] != root:
            root = int(parent[root])
        while parent[i] != root:
            parent[i], i = root, int(parent[i])
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def union_rows(self, observed: np.ndarray) -> None:
        """Join the models observed on one question, for every row of ``observed``.

        Each row joins its first observed model to the others; rows are grouped by
        that first model, so the work is one pass over the block plus a few joins
        per distinct first model (one, for a fully observed block)."""
        if observed.size == 0:
            return
        if bool(observed.all()):
            for j in range(1, observed.shape[1]):
                self.union(0, j)
            return
        has = observed.any(axis=1)
        if not has.any():
            return
        observed = observed[has]
        first = observed.argmax(axis=1)
        for f in np.unique(first).tolist():
            for j in np.flatnonzero(observed[first == f].any(axis=0)).tolist():
                if j != f:
                    self.union(f, j)


class DenseCells:
    """The cells of a wide or long file as dense blocks on disk (see the module notes).

    Parameters
    ----------
    file : str
        File name, for "file:row" sources.
    models : sequence of str
        Model names, in header order (the block columns).

    Attributes
    ----------
    dataset : str
        Dataset of the questions added without their own (a wide file's).
    datasets : ndarray of object, shape (n_questions,)
        Dataset of each question (a long file may name several).
    ids : ndarray of object, shape (n_questions,)
        Question ids, in file order (the block rows).
    rows : ndarray of int64, shape (n_questions,)
        Row of each question in the file (header = row 1).
    models : ndarray of object, shape (n_models,)
    row_counts, col_counts : ndarray of int64
        Observed cells per question and per model.
    col_first : ndarray of int64, shape (n_models,)
        Index of the first question observing each model (``n_questions`` if none).
    column_rank : ndarray of int64, shape (n_models,), or None
        When set (a long file), :meth:`model_order` orders the models by it.
    response_rows : ndarray of int64, shape (n_models,), or None
        When set (a long file), the row of each model's first response
        (see :meth:`model_row`).
    snapped_low, snapped_high : int
        Credits within 1e-12 of 0 or 1 rounded to 0 or 1 while reading.
    """

    def __init__(self, file: str, models: list[str], *, dataset: str) -> None:
        self.file = file
        self.dataset = dataset
        self.models = np.array(models, dtype=object)
        self.folder = Path(tempfile.mkdtemp(prefix="eip-wide-", dir=scratch_dir()))
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        # (start, n_rows, path, dtype of the credit, denominator n of a block kept as numerators k of k/n or 1)
        self._blocks: list[tuple[int, int, Path, np.dtype, int]] = []
        self._ids: list[np.ndarray] = []
        self._datasets: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []
        self._row_counts: list[np.ndarray] = []
        self.col_counts = np.zeros(len(models), dtype=np.int64)
        self._col_first = np.full(len(models), -1, dtype=np.int64)
        self._components = _UnionFind(len(models))
        self.n_questions = 0
        self.snapped_low = 0
        self.snapped_high = 0
        self.ids = np.empty(0, dtype=object)
        self.datasets = np.empty(0, dtype=object)
        self.rows = np.empty(0, dtype=np.int64)
        self.row_counts = np.empty(0, dtype=np.int64)
        self.column_rank: np.ndarray | None = None
        self.response_rows: np.ndarray | None = None
        self._fractions = DenominatorScan()

    # -- building --------------------------------------------------------------

    def add(self, ids: np.ndarray, rows: np.ndarray, credit: np.ndarray, observed: np.ndarray,
            datasets: np.ndarray | None = None) -> None:
        """Append a chunk of questions: ids, file rows, credits (float64) and observed mask, and
        their datasets (default ``dataset``)."""
        start = self.n_questions
        n = len(ids)
        if n == 0:
            return
        block = encode_block(credit, observed)
        kind, denominator = block.dtype, 1
        if block.dtype != BINARY:
            fraction = self._fractions.add(credit[observed])
            if fraction is not None and 1 < fraction < MISSING_UINT8:  # k/n: one byte a cell on disk
                block, denominator = encode_fraction_block(credit, observed, fraction), fraction
        path = self.folder / f"block-{len(self._blocks):06d}.npy"
        np.save(path, block, allow_pickle=False)
        self._blocks.append((start, n, path, kind, denominator))
        self._ids.append(np.asarray(ids, dtype=object))
        self._datasets.append(np.full(n, self.dataset, dtype=object) if datasets is None
                              else np.asarray(datasets, dtype=object))
        self._rows.append(np.asarray(rows, dtype=np.int64))
        self._row_counts.append(observed.sum(axis=1).astype(np.int64))
        self.col_counts += observed.sum(axis=0)
        seen = observed.any(axis=0)
        new = seen & (self._col_first < 0)
        if new.any():
            self._col_first[new] = start + observed[:, new].argmax(axis=0)
        self._components.union_rows(observed)
        self.n_questions += n

    def finish(self) -> DenseCells:
        """Join the chunk-level arrays; returns self."""
        self.ids = np.concatenate(self._ids) if self._ids else np.empty(0, dtype=object)
        self.datasets = np.concatenate(self._datasets) if self._datasets else np.empty(0, dtype=object)
        self.rows = np.concatenate(self._rows) if self._rows else np.empty(0, dtype=np.int64)
        self.row_counts = np.concatenate(self._row_counts) if self._row_counts else np.empty(0, dtype=np.int64)
        self._ids, self._datasets, self._rows, self._row_counts = [], [], [], []
        return self

    def __getstate__(self) -> dict:
        """For pickling (an upload's parse is kept beside its files): the blocks go into the
        pickle, since the folder they are in goes with this object."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("folder", "_finalizer", "_blocks")}
        state["_block_data"] = [(start, np.load(path, allow_pickle=False), kind.str, denominator)
                                for start, _, path, kind, denominator in self._blocks]
        return state

    def __setstate__(self, state: dict) -> None:
        data = state.pop("_block_data")
        self.__dict__.update(state)
        self.folder = Path(tempfile.mkdtemp(prefix="eip-wide-", dir=scratch_dir()))
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        self._blocks = []
        for start, block, *form in data:  # (start, block) in parses pickled before fraction blocks
            kind, denominator = (np.dtype(form[0]), int(form[1])) if form else (block.dtype, 1)
            path = self.folder / f"block-{len(self._blocks):06d}.npy"
            np.save(path, block, allow_pickle=False)
            self._blocks.append((start, block.shape[0], path, kind, denominator))

    def discard(self) -> None:
        """Remove the block files now (they are removed with the object otherwise)."""
        self._finalizer()

    # -- reading ---------------------------------------------------------------

    @property
    def col_first(self) -> np.ndarray:
        return np.where(self._col_first < 0, self.n_questions, self._col_first)

    @property
    def n_observed(self) -> int:
        return int(self.col_counts.sum())

    @property
    def dtype(self) -> np.dtype:
        """The smallest dtype holding every block (as :func:`annotate.catalog.matrix_store.credit_dtype`)."""
        kinds = {dtype for _, _, _, dtype, _ in self._blocks}
        if not kinds or kinds == {BINARY}:
            return BINARY
        return EXACT if EXACT in kinds else PARTIAL

    @property
    def denominator(self) -> int:
        """n > 1 when every partial credit is exactly k/n for one n <= 255 (the store then keeps
        uint8 numerators, see :func:`annotate.catalog.matrix_store.credit_form`); 1 otherwise."""
        scan = getattr(self, "_fractions", None)  # a parse pickled before fractions were stored
        n = None if scan is None else scan.denominator
        return 1 if n is None or self.dtype == BINARY else n

    def blocks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(start row, credit, observed) of each block, in file order; one block in memory at a time."""
        for start, _, path, _, denominator in self._blocks:
            block = np.load(path, allow_pickle=False)
            credit, observed = (decode_block(block) if denominator == 1
                                else decode_fraction_block(block, denominator))
            yield start, credit, observed

    def n_components(self) -> int:
        """Connected components of the model-question graph (observed models and questions only)."""
        used = np.flatnonzero(self.col_counts > 0)
        return len({self._components.find(int(j)) for j in used})

    def model_order(self) -> np.ndarray:
        """Observed models in the order the long form first names them (by first question, then
        header; by ``column_rank`` when set)."""
        used = np.flatnonzero(self.col_counts > 0)
        if self.column_rank is not None:
            return used[np.argsort(self.column_rank[used], kind="stable")]
        return used[np.lexsort((used, self.col_first[used]))]

    def model_row(self, j: int) -> int:
        """File row of the first response of observed model ``j`` (a wide file: its first question's)."""
        if self.response_rows is not None:
            return int(self.response_rows[j])
        return int(self.rows[self.col_first[j]])

    def first_cells(self, n: int) -> list[tuple[int, int, float]]:
        """The first ``n`` observed cells, row-major: (question index, model index, credit)."""
        out: list[tuple[int, int, float]] = []
        for start, credit, observed in self.blocks():
            for r, c in zip(*np.nonzero(observed)):
                out.append((start + int(r), int(c), float(credit[r, c])))
                if len(out) >= n:
                    return out
        return out

    def long_form(self) -> pd.DataFrame:
        """The responses table (``RESPONSE_COLUMNS``), one row per observed cell, row-major."""
        import pandas as pd

        datasets, ids, models, credits, rows = [], [], [], [], []
        for start, credit, observed in self.blocks():
            q, m = np.nonzero(observed)
            datasets.append(self.datasets[start + q])
            ids.append(self.ids[start + q])
            models.append(self.models[m])
            credits.append(credit[q, m].astype(np.float64))
            rows.append(self.rows[start + q])
        joined = [np.concatenate(p) if p else np.empty(0, dtype=dtype)
                  for p, dtype in ((datasets, object), (ids, object), (models, object), (credits, np.float64),
                                   (rows, np.int64))]
        source = ((self.file + ":") + pd.Series(joined[4], dtype=np.int64).astype(str)).to_numpy(dtype=object)
        frame = pd.DataFrame({"dataset": joined[0], "external_id": joined[1], "model": joined[2],
                              "credit": joined[3], "source": source})
        return frame[RESPONSE_COLUMNS]
