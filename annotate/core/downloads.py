"""Tidy downloads: a table as CSV or Parquet, a codebook beside it, a zip of both.

Every table a researcher downloads goes through here, so every download
follows the same rules (STYLE.md, "Downloads are tidy"):

* one table per file, one header row of ``snake_case`` column names, no title
  or note lines inside: ``pandas.read_csv(path)`` reads it as is;
* ids are integers; a blank cell is a missing value (never "undefined",
  "–" or "NaN"); booleans are ``True``/``False``; floats are written with
  full precision (``repr``), so they read back exactly;
* UTF-8 without a byte-order mark, CRLF line ends (RFC 4180), comma separated;
* a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return and is not a plain number gets a leading ``'`` (OWASP
  "CSV injection"; the Parquet file keeps the text unchanged);
* what each column means, its units, the parameters the values were computed
  with, the product version and the generation time live in a codebook
  (Markdown) beside the tables, and in the Parquet file's metadata.

This module knows nothing about the database: selectors build the frames,
views and commands call the functions below to render them.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
import zipfile
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import numpy as np
from django.utils.text import slugify

from annotate.core.wording import counted

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CONTENT_TYPES",
    "ENCODING_NOTE",
    "Column",
    "TidyTable",
    "bundle_bytes",
    "codebook_markdown",
    "csv_bytes",
    "download_name",
    "kind_of",
    "parquet_bytes",
    "render_table",
    "product_version",
    "snake_case",
    "tidy_frame",
    "zip_bytes",
]

PRODUCT = "eip-annotate"
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
    "md": "text/markdown; charset=utf-8",
    "zip": "application/zip",
    "json": "application/json",
    "png": "image/png",
    "svg": "image/svg+xml",
}
TABLE_FORMATS = ("csv", "parquet")
#: Column kinds a codebook names (what ``pandas.read_csv`` gives back).
KINDS = ("integer", "number", "text", "boolean")
#: CSV line ends (RFC 4180). With CRLF, the csv module quotes a text cell holding a bare CR or LF,
#: so a cell with a line break reads back whole.
LINE_END = "\r\n"
#: What every codebook says about its files' bytes (the run, analysis and report codebooks, the command bundles).
ENCODING_NOTE = ("Encoding: every text file of this download (CSV, JSON, Markdown, this codebook included) is "
                 "UTF-8 without a byte-order mark; CSV rows end in CRLF (RFC 4180).")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

ERR_SNAKE = "cannot make a snake_case column name of {value!r}"
ERR_DUPLICATE = "column names must be unique after snake_case; {names} repeat"
ERR_KIND = "kind of column {name!r} must be one of {kinds}; got {value!r}"
ERR_COLUMNS = "table {table!r}: the codebook describes {described}, the frame has {columns}"
ERR_FORMAT = "fmt must be one of {formats}; got {value!r}"
ERR_FILE_NAME = "file names in a zip must be unique; {name!r} repeats"


@dataclass(frozen=True)
class Column:
    """What one column of a downloaded table means (one codebook line).

    Attributes
    ----------
    name : str
        The column's ``snake_case`` name in the file.
    kind : {"integer", "number", "text", "boolean"}
        What ``pandas.read_csv`` reads it as (integer columns never hold a
        blank; a column with blanks reads as float or text).
    description : str
        What the value is.
    unit : str, default ""
        Units or scale ("logits", "in [0, 1]", "seconds"); empty when none.
    """

    name: str
    kind: str
    description: str
    unit: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(ERR_KIND.format(name=self.name, kinds=list(KINDS), value=self.kind))


@dataclass(frozen=True)
class TidyTable:
    """One downloadable table: the frame, its file stem, its codebook entries.

    Attributes
    ----------
    name : str
        File stem (``questions`` -> ``questions.csv``).
    title : str
        One line for the codebook.
    frame : pandas.DataFrame
        The rows; column names already ``snake_case`` (see :func:`tidy_frame`).
    columns : tuple of Column
        One entry per frame column, in the frame's order.
    notes : tuple of str, default ()
        Remarks about the whole table (they go to the codebook, never into
        the CSV).
    """

    name: str
    title: str
    frame: pd.DataFrame
    columns: tuple[Column, ...]
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        described = [c.name for c in self.columns]
        if described != list(self.frame.columns):
            raise ValueError(ERR_COLUMNS.format(table=self.name, described=described,
                                                columns=list(self.frame.columns)))


def snake_case(text: str) -> str:
    """A display header as a ``snake_case`` column name.

    Letters and digits are kept (lower-cased), every other run of characters
    becomes one underscore.

    Raises
    ------
    ValueError
        If nothing is left (e.g. ``"+ -"``).

    Examples
    --------
    >>> snake_case("rank change (+ = EIP higher)"), snake_case("share [0, 33)")
    ('rank_change_eip_higher', 'share_0_33')
    """
    name = re.sub(r"[^0-9a-z]+", "_", str(text).lower()).strip("_")
    if not name:
        raise ValueError(ERR_SNAKE.format(value=text))
    return f"c_{name}" if name[0].isdigit() else name


def tidy_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with ``snake_case`` column names and empty strings as missing.

    Raises
    ------
    ValueError
        If two columns get the same name.
    """
    import pandas as pd
    names = [snake_case(c) for c in frame.columns]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(ERR_DUPLICATE.format(names=repeated))
    out = frame.copy()
    out.columns = names
    for name in names:
        if out[name].dtype == object or pd.api.types.is_string_dtype(out[name].dtype):
            out[name] = out[name].mask(out[name].eq(""), None)
    return out


def _guard(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_cell(value: Any) -> str | int | float:
    """A value as a safe CSV cell: None and non-finite floats blank, booleans
    ``True``/``False`` (as pandas writes them), numbers unchanged, formula-looking text guarded.

    Examples
    --------
    >>> csv_cell("=1+1"), csv_cell(-0.25), csv_cell("-0.25"), csv_cell("-x")
    ("'=1+1", -0.25, '-0.25', "'-x")
    """
    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return "True" if value else "False"
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else ""
    return _guard(str(value))


def _csv_cells(row: Iterable[Any]) -> list[str | int | float]:
    """``[csv_cell(v) for v in row]``, the same cells, with the common exact types
    (``int``, ``float``, ``str``, ``None``) converted without the generic checks."""
    out: list[str | int | float] = []
    append = out.append
    for v in row:
        t = type(v)
        if t is int:
            append(v)
        elif t is str:
            append(_guard(v) if v.startswith(FORMULA_PREFIXES) else v)
        elif t is float:
            append(v if math.isfinite(v) else "")
        elif v is None:
            append("")
        else:
            append(csv_cell(v))
    return out


def rows_csv_bytes(rows: Iterable[Sequence[Any]]) -> bytes:
    """Rows (the first one the header) as a tidy CSV, in the same format as
    :func:`csv_bytes`: UTF-8 without BOM, CRLF line ends, cells through :func:`csv_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=LINE_END)
    for row in rows:
        writer.writerow(_csv_cells(row))
    return buffer.getvalue().encode("utf-8")


def rows_csv_lines(rows: Iterable[Sequence[Any]], *, chunk_rows: int = 1000) -> Iterator[bytes]:
    """:func:`rows_csv_bytes` as a stream: the same bytes, ``chunk_rows`` lines at a time
    (for a streamed download that never holds the whole file)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=LINE_END)
    chunk: list[list[str | int | float]] = []
    for row in rows:
        chunk.append(_csv_cells(row))
        if len(chunk) >= chunk_rows:
            writer.writerows(chunk)
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
            chunk = []
    if chunk:
        writer.writerows(chunk)
        yield buffer.getvalue().encode("utf-8")


def csv_bytes(frame: pd.DataFrame, *, header: bool = True) -> bytes:
    """The frame as a tidy CSV (see the module docstring); the index is dropped.

    Parameters
    ----------
    frame : pandas.DataFrame
        Column names as they should appear in the header; NaN and None are
        written as blank cells.
    header : bool, default True
        False leaves out the header row (a later chunk of a streamed file:
        each row is written on its own, so the chunks of a frame joined are
        the frame's bytes).

    Returns
    -------
    bytes
        UTF-8 without BOM, CRLF line ends (RFC 4180).
    """
    import pandas as pd
    out = frame.copy()
    for name in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[name].dtype) or pd.api.types.is_bool_dtype(out[name].dtype)):
            out[name] = out[name].map(_guard, na_action="ignore")
    return out.to_csv(index=False, header=header, lineterminator=LINE_END).encode("utf-8")


def _codebook_metadata(table: TidyTable | None, provenance: Mapping[str, Any] | None) -> dict[bytes, bytes]:
    document: dict[str, Any] = {"product": PRODUCT, "version": product_version()}
    if provenance:
        document.update(provenance)
    if table is not None:
        document["table"] = table.name
        document["title"] = table.title
        document["columns"] = [c.__dict__ for c in table.columns]
    return {b"eip_annotate": json.dumps(document, ensure_ascii=False, default=str).encode("utf-8")}


def parquet_bytes(frame: pd.DataFrame, *, table: TidyTable | None = None,
                  provenance: Mapping[str, Any] | None = None) -> bytes:
    """The frame as a Parquet file (pyarrow, no index).

    The file's schema metadata holds, under ``b"eip_annotate"``, a JSON
    document with the product and version, ``provenance`` (e.g. the run and
    its parameters) and, when ``table`` is given, its title and codebook
    columns. ``pandas.read_parquet`` gives back the same frame.
    """
    import pyarrow as pa  # heavy (pyarrow.parquet loads its file systems): imported where used
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}),
                                           **_codebook_metadata(table, provenance)})
    buffer = io.BytesIO()
    pq.write_table(arrow, buffer)
    return buffer.getvalue()


def render_table(table: TidyTable, *, fmt: str, provenance: Mapping[str, Any] | None = None) -> bytes:
    """One table as ``fmt`` "csv" (:func:`csv_bytes`) or "parquet"
    (:func:`parquet_bytes`, with the table's codebook and ``provenance`` in
    its metadata).

    Raises
    ------
    ValueError
        If ``fmt`` is neither.
    """
    if fmt == "csv":
        return csv_bytes(table.frame)
    if fmt == "parquet":
        return parquet_bytes(table.frame, table=table, provenance=provenance)
    raise ValueError(ERR_FORMAT.format(formats=list(TABLE_FORMATS), value=fmt))


def product_version() -> str:
    """The installed version of the ``eip-annotate`` distribution ("unknown"
    when it is not installed, e.g. run from a bare checkout)."""
    try:
        return version(PRODUCT)
    except PackageNotFoundError:
        return "unknown"


def _md(text: Any) -> str:
    """A value safe inside a Markdown table cell."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _value_text(value: Any) -> str:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return str(value)


def codebook_markdown(*, title: str, tables: Sequence[TidyTable], provenance: Mapping[str, Any],
                      parameters: Mapping[str, Any] | None = None, parquet: Collection[str] = (),
                      generated_at: datetime | None = None) -> bytes:
    """A codebook for ``tables`` as Markdown (UTF-8).

    Parameters
    ----------
    title : str
        First heading, e.g. "Scoring run 12 of EIP-demo v1".
    tables : sequence of TidyTable
        Each gets a section: its title, notes and one line per column (name,
        kind, meaning, units).
    provenance : mapping
        Where the numbers come from (source, response set, run id, ...),
        one bullet each.
    parameters : mapping, optional
        The parameters the values were computed with, one bullet each (a
        mapping value is written as JSON).
    parquet : collection of str, default ()
        Names of the tables also offered as Parquet (every table is a CSV).
    generated_at : datetime, optional
        Defaults to now (UTC).

    Returns
    -------
    bytes
    """
    when = (generated_at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
    lines = [f"# Codebook: {title}", "",
             f"- product: {PRODUCT} {product_version()}",
             f"- generated: {when}"]
    lines += [f"- {key}: {_value_text(value)}" for key, value in provenance.items()]
    if parameters:
        lines += ["", "## Parameters", ""]
        lines += [f"- {key}: {_value_text(value)}" for key, value in parameters.items()]
    lines += ["", "## Files", "", ENCODING_NOTE, "",
              "One table per file, one header row, no notes inside; ids are integers, a blank cell is a "
              "missing value, booleans are True/False. CSV: UTF-8 (no byte-order mark), comma separated, "
              "floats at full precision; a text cell starting with = + - @ gets a leading ' (spreadsheet "
              "formula guard). Read with `pandas.read_csv(path)`"
              + (" or `pandas.read_parquet(path)` (same columns; the codebook is also in the file's metadata)"
                 if parquet else "") + "."]
    for table in tables:
        names = ", ".join(f"`{table.name}.{ext}`" for ext in ("csv", "parquet")
                          if ext == "csv" or table.name in parquet)
        lines += ["", f"## {names}: {table.title}", "", f"{counted(len(table.frame), 'row')}."]
        lines += [f"- {note}" for note in table.notes]
        lines += ["", "| column | type | meaning | units / scale |", "|---|---|---|---|"]
        lines += [f"| `{c.name}` | {c.kind} | {_md(c.description)} | {_md(c.unit)} |" for c in table.columns]
    return ("\n".join(lines) + "\n").encode("utf-8")


def zip_bytes(files: Iterable[tuple[str, bytes]]) -> bytes:
    """``(name, content)`` pairs as a deflated zip (a fixed date on every
    member, so the same content gives the same bytes).

    Raises
    ------
    ValueError
        If a name repeats.
    """
    buffer = io.BytesIO()
    seen: set[str] = set()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files:
            if name in seen:
                raise ValueError(ERR_FILE_NAME.format(name=name))
            seen.add(name)
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def bundle_bytes(*, tables: Sequence[TidyTable], codebook: bytes,
                 extra: Iterable[tuple[str, bytes]] = ()) -> bytes:
    """A zip of ``<name>.csv`` per table, ``codebook.md`` and ``extra`` files."""
    files = [(f"{t.name}.csv", csv_bytes(t.frame)) for t in tables]
    return zip_bytes([*files, ("codebook.md", codebook), *extra])


def download_name(*parts: object, ext: str) -> str:
    """A file name from ``parts``, slugified and joined by ``-``.

    Examples
    --------
    >>> download_name("run", 12, "EIP-demo v1", "questions", ext="csv")
    'run-12-eip-demo-v1-questions.csv'
    """
    stem = "-".join(s for s in (slugify(str(p)) for p in parts) if s)
    return f"{stem or 'download'}.{ext}"


def kind_of(series: pd.Series) -> str:
    """The codebook kind of a frame column (bool, int, float, else text)."""
    import pandas as pd
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "number"
    present = series.dropna()
    if len(present) and all(isinstance(v, (bool, np.bool_)) for v in present):
        return "boolean"
    if len(present) and all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                            for v in present):
        return "number"
    return "text"
