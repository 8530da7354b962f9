"""Wide response files read a chunk of rows at a time into :class:`~annotate.catalog.loaders.dense.DenseCells`.

CSV/TSV
    Decoded and its header checked as before (:func:`_read_csv_head`), then
    read with ``pandas.read_csv(chunksize=...)``, every cell a str, about
    ``CHUNK_CELLS`` cells per chunk. Each chunk gets the checks of the
    whole-file reader (blank rows skipped, cells stripped, credits blank or a
    finite number in [0, 1], each bad one a problem with file, row and
    column, in the same order and under the same cap). A chunk that holds a
    blank question id or repeats one, or a row the CSV parser refuses, sends
    the file back to the whole-file reader (:func:`annotate.catalog.loaders.tabular._read_wide`),
    which reports those cases exactly as it always did: the streamed reader
    returns ``FALLBACK`` and withdraws the problems it had listed.
    A file whose model cells are all exactly ``0``, ``1`` or blank, without a
    quote anywhere and without a carriage return other than that of a CRLF
    line end (so that every tokenizer splits it the same way), is first read
    by :func:`_read_csv_binary` (Arrow's CSV reader, cells compared as
    bytes, no Python string per cell); the first cell that is anything else,
    or a line the Arrow reader refuses, sends the file to the reader above
    from its start, which then decides exactly as before.
Parquet (``.parquet``, ``.pq``)
    The question id column first, then one column per model, read with
    ``pyarrow.parquet.ParquetFile.iter_batches``. Model columns hold
    integers or booleans (0/1), floats (credit; null or NaN = not observed;
    infinite or outside [0, 1] refused) or text (read as the cells of a CSV).
    ``Problem.row`` counts as in a CSV written from the same table: the
    header is row 1, the first record row 2. A question id repeated, blank
    or null is refused.

References
----------
The file is the response matrix :math:`A` (Section 2.2) or :math:`A_c`
(Section 2.4) of the EIP paper, questions as rows.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders._tabular_common import (
    BLANK_QUESTION_ID,
    EMPTY_FILE,
    FILE_NOT_FOUND,
    NO_MODEL_COLUMNS,
    WRONG_FIRST_COLUMN,
    _csv_options,
    _csv_source,
    _fmt_names,
    _parse_credit_strings,
    _Problems,
    _read_csv_head,
    _report_credits,
    header_names_ok,
)
from annotate.catalog.loaders.dense import DenseCells
from annotate.catalog.loaders.names import CREDIT_SNAP
from scoring.exact import near_zero_or_one

if TYPE_CHECKING:
    import pandas as pd

#: About this many cells are read (as Python strings, for a CSV) at a time.
CHUNK_CELLS = 1_000_000
#: Rows per Parquet batch (numbers, not strings: larger batches are cheap).
PARQUET_BATCH_ROWS = 8192
PARQUET_SUFFIXES = (".parquet", ".pq")
PARQUET_UNREADABLE = "cannot read the file as Parquet: {detail}"
PARQUET_COLUMN_TYPE = "column {column!r} holds {kind} values; expected numbers in [0, 1] (or text)"
PARQUET_DUPLICATE_ID = "question id {question_id!r} appears again (first in row {first}); name each question once"

#: Returned when only the whole-file reader reports the file's problem exactly.
FALLBACK = object()


class _Fallback(Exception):
    pass


def is_parquet(path: Path | str) -> bool:
    """True for a ``.parquet``/``.pq`` file name."""
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def read_wide_stream(path: Path, problems: _Problems, *, dataset: str, id_column: str) -> object:
    """A wide CSV or Parquet file as :class:`DenseCells`, a chunk at a time.

    Parameters
    ----------
    path : Path
    problems : _Problems
        Receives every problem found (file, row, column).
    dataset : str
        Dataset of every question.
    id_column : str
        Expected name of the first column.

    Returns
    -------
    DenseCells, or None, or FALLBACK
        The cells (finished) when the file is clean; None when a problem was
        listed; ``FALLBACK`` when the caller must read the file whole (see the
        module notes; the problems listed here are withdrawn).
    """
    n_items, n_dropped = len(problems.items), problems.dropped
    try:
        if is_parquet(path):
            return _read_parquet(path, problems, dataset=dataset, id_column=id_column)
        return _read_csv_chunks(path, problems, dataset=dataset, id_column=id_column)
    except _Fallback:
        del problems.items[n_items:]
        problems.dropped = n_dropped
        return FALLBACK


def _check_header(file: str, header: list[str], id_column: str, problems: _Problems) -> bool:
    if header[0] != id_column:
        message = WRONG_FIRST_COLUMN.format(expected=id_column, found=_fmt_names(header))
        problems.add(file, message, row=1, column=header[0])
        return False
    if len(header) < 2:
        problems.add(file, NO_MODEL_COLUMNS.format(expected=id_column, found=_fmt_names(header)), row=1)
        return False
    return True


def _snap(number: np.ndarray, observed: np.ndarray, cells: DenseCells) -> None:
    """Credits within ``CREDIT_SNAP`` of 0 or 1 made 0 or 1 (in place), counted on ``cells``."""
    near_low, near_high = near_zero_or_one(number, CREDIT_SNAP)
    low = observed & near_low & (number > 0.0)
    high = observed & near_high & (number < 1.0)
    n_low, n_high = int(low.sum()), int(high.sum())
    if n_low:
        number[low] = 0.0
    if n_high:
        number[high] = 1.0
    cells.snapped_low += n_low
    cells.snapped_high += n_high


def _read_csv_chunks(path: Path, problems: _Problems, *, dataset: str, id_column: str) -> DenseCells | None:
    import pandas as pd
    head = _read_csv_head(path, problems)
    if head is None:
        return None
    file, header = head.file, head.header
    if not _check_header(file, header, id_column, problems):
        return None
    models = header[1:]
    model_names = np.array(models, dtype=object)
    cells = DenseCells(file, models, dataset=dataset)
    try:
        if _read_csv_binary(head, cells):
            return cells.finish()
    except _Fallback:
        cells.discard()
        raise
    cells.discard()
    cells = DenseCells(file, models, dataset=dataset)
    seen: set[str] = set()
    ok, offset = True, 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            options = {**_csv_options(head), "dtype": object}  # Python str cells, no string-array copies
            reader = pd.read_csv(_csv_source(head), chunksize=max(1, CHUNK_CELLS // len(header)), **options)
            for chunk in reader:
                rows = np.arange(len(chunk), dtype=np.int64) + offset + 2
                offset += len(chunk)
                ok = _csv_chunk(chunk, rows, cells, seen, model_names, id_column, problems, add=ok) and ok
    except (pd.errors.ParserWarning, pd.errors.ParserError) as exc:
        cells.discard()
        raise _Fallback from exc
    except _Fallback:
        cells.discard()
        raise
    if not ok:
        cells.discard()
        return None
    return cells.finish()


def _csv_chunk(chunk: pd.DataFrame, rows: np.ndarray, cells: DenseCells, seen: set[str],
               model_names: np.ndarray, id_column: str, problems: _Problems, *, add: bool) -> bool:
    """Check one chunk and, when ``add``, add it to ``cells``; False when a credit is bad."""
    import pandas as pd
    if len(chunk):
        blank_row = (chunk == "").to_numpy().all(axis=1)
        if blank_row.any():
            chunk, rows = chunk.loc[~blank_row], rows[~blank_row]
    if not len(chunk):
        return True
    ids = np.array([v.strip() for v in chunk[id_column].tolist()], dtype=object)
    _check_ids(ids, seen)
    raw = chunk.iloc[:, 1:].to_numpy(dtype=object)
    shape = raw.shape
    # Each distinct cell text is stripped and parsed once.
    codes, uniques = pd.factorize(raw.ravel(), use_na_sentinel=False)
    stripped = np.array([v.strip() for v in uniques.tolist()], dtype=object)
    number, blank, bad = (a[codes] for a in _parse_credit_strings(stripped))
    del raw
    if bad.any():
        n_models = len(model_names)
        _report_credits(problems, cells.file, bad, stripped[codes], number, np.repeat(rows, n_models),
                        np.tile(model_names, len(rows)))
        return False
    if add:
        number, observed = number.reshape(shape), ~blank.reshape(shape)
        _snap(number, observed, cells)
        cells.add(ids, rows, number, observed)
    return True


#: The only model cells :func:`_read_csv_binary` takes (code = position: 0, 1, blank).
_BINARY_CELLS = ("0", "1", "")
_BLANK_CODE = 2


def _read_csv_binary(head: object, cells: DenseCells) -> bool:
    """Add a wide CSV of 0/1/blank cells to ``cells``, a batch of rows at a time; False (and
    nothing usable in ``cells``) when the file is not such a file.

    Gives what :func:`_csv_chunk` gives for such a file: the same rows, ids (stripped),
    row numbers, credits 0/1 and blank cells not observed; rows blank in every cell
    skipped; a blank or repeated id raises ``_Fallback``. Any other cell text (``" 1"``,
    ``"1.0"``, ``"true"``), a quote anywhere, a carriage return that is not followed by a
    line feed (CRLF line ends are read as LF ones, as both readers do), or a line with another
    number of cells returns False, and the caller reads the file with :func:`_csv_chunk`.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    text = head.text  # type: ignore[attr-defined]
    if '"' in text or text.count("\r") != text.count("\r\n"):  # a carriage return only ends a line
        return False
    header = head.header  # type: ignore[attr-defined]
    n_models = len(header) - 1
    read = pa_csv.ReadOptions(column_names=header, skip_rows=1, use_threads=True,
                              block_size=max(1 << 20, 2 * CHUNK_CELLS))
    parse = pa_csv.ParseOptions(delimiter=head.sep, quote_char=False, ignore_empty_lines=False)  # type: ignore[attr-defined]
    convert = pa_csv.ConvertOptions(column_types=dict.fromkeys(header, pa.string()), strings_can_be_null=False)
    value_set = pa.array(_BINARY_CELLS)
    seen: set[str] = set()
    offset = 0
    try:
        data = head.data or text.encode("utf-8")  # type: ignore[attr-defined]
        reader = pa_csv.open_csv(pa.BufferReader(data), read_options=read, parse_options=parse,
                                 convert_options=convert)
        for batch in reader:
            n = batch.num_rows
            if n == 0:
                continue
            codes = np.empty((n, n_models), dtype=np.int8)
            for j in range(n_models):
                code = pc.index_in(batch.column(j + 1), value_set=value_set)
                if code.null_count:
                    return False
                codes[:, j] = code.to_numpy(zero_copy_only=False)
            rows = np.arange(n, dtype=np.int64) + offset + 2
            offset += n
            raw_ids = np.array(batch.column(0).to_pylist(), dtype=object)
            observed = codes != _BLANK_CODE
            blank_row = (raw_ids == "") & ~observed.any(axis=1)
            if blank_row.any():
                keep = ~blank_row
                raw_ids, rows, codes, observed = raw_ids[keep], rows[keep], codes[keep], observed[keep]
            if not len(raw_ids):
                continue
            ids = np.array([v.strip() for v in raw_ids.tolist()], dtype=object)
            _check_ids(ids, seen)
            credit = np.where(observed, codes, 0).astype(np.uint8)
            cells.add(ids, rows, credit, observed)
    except pa.ArrowInvalid:
        return False
    return True


def _check_ids(ids: np.ndarray, seen: set[str]) -> None:
    """A blank or repeated question id: only the whole-file reader reports it exactly."""
    if (ids == "").any():
        raise _Fallback
    before = len(seen)
    seen.update(ids.tolist())
    if len(seen) - before != len(ids):
        raise _Fallback


# --- Parquet ---------------------------------------------------------------------------------


def _read_parquet(path: Path, problems: _Problems, *, dataset: str, id_column: str) -> DenseCells | None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    file = path.name
    if not path.is_file():
        problems.add(file, FILE_NOT_FOUND.format(path=path))
        return None
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        problems.add(file, PARQUET_UNREADABLE.format(detail=str(exc).strip()))
        return None
    schema = parquet.schema_arrow
    header = [str(name).strip() for name in schema.names]
    if not header:
        problems.add(file, EMPTY_FILE)
        return None
    ok = header_names_ok(header, file, problems)
    if not ok or not _check_header(file, header, id_column, problems):
        return None
    models = header[1:]
    kinds = [_kind(schema.field(j).type) for j in range(1, len(header))]
    for name, kind, j in zip(models, kinds, range(1, len(header))):
        if kind is None:
            problems.add(file, PARQUET_COLUMN_TYPE.format(column=name, kind=str(schema.field(j).type)),
                         row=1, column=name)
            ok = False
    if not ok:
        return None
    model_names = np.array(models, dtype=object)
    cells = DenseCells(file, models, dataset=dataset)
    first_row: dict[str, int] = {}
    offset, credits_ok, ids_ok = 0, True, True
    try:
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS):
            n = batch.num_rows
            rows = np.arange(n, dtype=np.int64) + offset + 2
            offset += n
            ids = np.array(["" if v is None else str(v).strip() for v in batch.column(0).to_pylist()], dtype=object)
            for position, value in enumerate(ids.tolist()):
                row = int(rows[position])
                if value == "":
                    problems.add(file, BLANK_QUESTION_ID, row=row, column=id_column)
                    ids_ok = False
                elif value in first_row:
                    problems.add(file, PARQUET_DUPLICATE_ID.format(question_id=value, first=first_row[value]),
                                 row=row, column=id_column)
                    ids_ok = False
                else:
                    first_row[value] = row
            number, observed, bad, texts = _parquet_block(batch, kinds)
            if bad is not None and bad.any():
                credits_ok = False
                flat_bad = bad.ravel()
                _report_credits(problems, file, flat_bad, texts(flat_bad), number.ravel(),
                                np.repeat(rows, len(models)), np.tile(model_names, n))
            if credits_ok and ids_ok:
                if number.dtype.kind == "f":
                    _snap(number, observed, cells)
                cells.add(ids, rows, number, observed)
    except pa.ArrowException as exc:
        problems.add(file, PARQUET_UNREADABLE.format(detail=str(exc).strip()))
        credits_ok = False
    if not (credits_ok and ids_ok):
        cells.discard()
        return None
    return cells.finish()


def _kind(arrow_type: object) -> str | None:
    import pyarrow.types as t
    if t.is_integer(arrow_type) or t.is_boolean(arrow_type):
        return "int"
    if t.is_floating(arrow_type) or t.is_decimal(arrow_type):
        return "float"
    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_null(arrow_type):
        return "text"
    return None


def _parquet_block(batch: object, kinds: list[str]):
    """(credit, observed, bad or None, texts of flat cells) of one record batch's model columns.

    Integer columns without nulls give an integer block (no float copy)."""
    columns = [batch.column(j + 1) for j in range(len(kinds))]  # type: ignore[attr-defined]
    n = batch.num_rows  # type: ignore[attr-defined]
    if all(k == "int" for k in kinds) and all(c.null_count == 0 for c in columns):
        block = np.empty((n, len(kinds)), dtype=np.uint8, order="F")  # column writes are contiguous
        any_bad = False
        for j, column in enumerate(columns):
            values = column.to_numpy(zero_copy_only=False)
            if values.size and (values.max() > 1 or values.min() < 0):
                any_bad = True
            block[:, j] = values
        observed = np.ones(block.shape, dtype=bool)
        if any_bad:
            numbers = np.column_stack([c.to_numpy(zero_copy_only=False).astype(np.float64) for c in columns])
            bad = (numbers < 0) | (numbers > 1)
            return numbers, observed, bad, lambda flat_bad: _number_texts(numbers.ravel(), flat_bad)
        return block, observed, None, None
    number = np.empty((n, len(kinds)), dtype=np.float64)
    blank = np.zeros((n, len(kinds)), dtype=bool)
    bad = np.zeros((n, len(kinds)), dtype=bool)
    texts: dict[int, np.ndarray] = {}
    for j, (kind, column) in enumerate(zip(kinds, columns)):
        if kind == "text":
            values = np.array(["" if v is None else str(v).strip() for v in column.to_pylist()], dtype=object)
            number[:, j], blank[:, j], bad[:, j] = _parse_credit_strings(values)
            texts[j] = values
            continue
        values = column.to_numpy(zero_copy_only=False).astype(np.float64)
        if column.null_count:
            values[np.asarray(column.is_null())] = np.nan
        number[:, j] = values
        blank[:, j] = np.isnan(values)
        with np.errstate(invalid="ignore"):
            bad[:, j] = np.isinf(values) | (values < 0.0) | (values > 1.0)

    def cell_texts(flat_bad: np.ndarray) -> np.ndarray:
        out = _number_texts(number.ravel(), flat_bad)
        for j, values in texts.items():
            out.reshape(number.shape)[:, j] = values
        return out

    return number, ~blank, bad, cell_texts


def _number_texts(numbers: np.ndarray, flat_bad: np.ndarray) -> np.ndarray:
    out = np.full(numbers.shape, "", dtype=object)
    for i in np.flatnonzero(flat_bad):
        value = numbers[i]
        out[i] = repr(int(value)) if float(value).is_integer() else repr(float(value))
    return out
