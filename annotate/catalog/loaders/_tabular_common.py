"""Shared reading and checks of the tabular loaders: messages, CSV reading, credits, duplicates.

The parsers live in :mod:`annotate.catalog.loaders.tabular` (response files) and
:mod:`annotate.catalog.loaders.metadata` (question and model files); the decisions
they follow are listed in the docstring of :mod:`annotate.catalog.loaders.tabular`,
which re-exports every public name and message defined here.
"""
from __future__ import annotations

import ast
import codecs
import csv
import dataclasses
import io
import itertools
import json
import math
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.model_names import OPEN_WEIGHT, PROPRIETARY, UNKNOWN
from annotate.core import (  # the CSV messages every reader of the site shares
    SEMICOLON_SEPARATED,
    csv_error_words,
    csv_line_row,
    csv_separator,
    loads_bounded,
)

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("auto", "wide", "long", "jsonl")
ACCESS_VALUES = (OPEN_WEIGHT, PROPRIETARY, UNKNOWN)
FOLDER_RESPONSES = "responses_binary.csv"
FOLDER_QUESTIONS = "questions.csv"
FOLDER_MODELS = "models.csv"
MAX_PROBLEMS = 200
CSV_FIELD_LIMIT = csv.field_size_limit()  # 131,072 characters unless raised process-wide
QUOTED_VALUE_LIMIT = 80
NOTE_NAMES_LIMIT = 50

# Messages (tests match them exactly).
FILE_NOT_FOUND = "file not found: {path}"
EMPTY_FILE = "the file is empty; expected a header row"
UTF16_BOM = "the file starts with a {encoding} byte-order mark; save it as UTF-8 (a UTF-8 byte-order mark is fine)"
NOT_UTF8 = "the file is not UTF-8 text (byte 0x{byte:02x} at offset {offset}); save it as UTF-8"
NUL_CHARACTER = "the row holds a NUL character (byte 0x00 or \\u0000), which a database text field cannot store"
BLANK_COLUMN_NAME = "column {position} of the header has no name"
DUPLICATE_COLUMN = "column {name!r} appears more than once in the header (columns {positions})"
LONGER_THAN_HEADER = "a data row has more fields than the header"
FIELD_TOO_LONG = (
    "field {position} of the header is {length:,} characters long; a CSV field may hold at most {limit:,} characters"
)
HEADER_FIELD_TOO_LONG = "a field of the header is longer than {limit:,} characters, the most a CSV field may hold"
NO_DATASET = (
    "there is no dataset column (or it is blank on every row) and no default dataset was given; "
    "pass --dataset (command) or fill the Dataset field (admin)"
)
#: What :data:`NO_SUBJECT_NOTE` says after the file's name: a load plan, which knows the stored
#: questions' subjects, finds the parser's note by it and judges it again.
NO_SUBJECT_TAIL = (
    "no subject column: questions have no subject, so no study can be made from them until subjects "
    "are loaded (give --questions with --subject-column, or a questions file and the subject column in the admin)"
)
NO_SUBJECT_NOTE = "{file}: " + NO_SUBJECT_TAIL
WRONG_FIRST_COLUMN = "expected the first column to be {expected!r}, followed by one column per model; found {found}"
NO_MODEL_COLUMNS = "expected one column per model after {expected!r}; found only {found}"
MISSING_COLUMNS = "missing column(s) {missing}; expected {expected}; found {found}"
IGNORED_COLUMNS_NOTE = "{file}: column(s) not kept: {columns} (name them as columns to keep to store them)"
BLANK_QUESTION_ID = "question id is blank"
BLANK_MODEL = "model name is blank"
MODEL_COLUMN_HINT = (
    "if the model names are in another column, name it as the model name column "
    "(upload page: 'Model name column'; load_responses: --model-column; API: model_column)"
)
BLANK_DATASET = "dataset is blank and no default dataset was given"
CREDIT_NOT_A_NUMBER = (
    "credit {value!r} is not a number; expected a number in [0, 1], or a blank cell for 'not observed'"
)
CREDIT_DECIMAL_COMMA = "credit {value!r} uses a decimal comma; write it with a decimal point (e.g. 0.5)"
CREDIT_NOT_FINITE = "credit {value!r} is NaN or infinite; leave the cell blank for 'not observed'"
CREDIT_OUT_OF_RANGE = "credit {value!r} is outside [0, 1]"
CONFLICTING_DUPLICATE = "conflicts with row {first}: same {key} but {column} is {a!r} there and {b!r} here"
TWO_SUBJECTS = "question {question_id!r} is given two subjects: {a!r} (row {first}) and {b!r} (row {row})"
ATTRIBUTE_CONFLICT = "question {question_id!r} has {column} {a!r} in row {first} and {b!r} in row {row}"
QUESTIONS_FILE_CONFLICT = "question {question_id!r} has {column} {a!r} here but {b!r} in {other_file} row {other_row}"
EXACT_DUPLICATES_NOTE = "{file}: ignored {count} exact duplicate row(s): {examples}"
UNKNOWN_QUESTION = "question id {question_id!r} is not in the questions file {other_file}"
ID_SPELLED_TWO_WAYS = (
    "question id {given!r} is the id {other!r} of row {first} written another way (they are one id once "
    "invisible characters and spacing are cleaned, as ids are stored); write it one way"
)
UNKNOWN_MODEL = "model {model!r} is not in the models file {other_file}"
UNUSED_NOTE = "{file}: {count} {what} with no responses in this upload (created anyway)"
NO_RESPONSES = "no observed responses: every credit is blank"
BAD_OPTIONS = "options {value!r} is not a JSON list"
BAD_PARAMETERS = "parameter count {value!r} must be a positive, finite number of billions (or blank)"
PARAMETERS_LABEL_NOTE = "{file}: parameter count(s) that are not numbers kept as labels: {labels}"
BAD_ACCESS = "access {value!r} is not one of open_weight, proprietary, unknown (leave blank to infer it from the name)"
JSON_INVALID = "line is not valid JSON: {detail}"
JSON_NOT_OBJECT = "line is a JSON {kind}, expected an object"
JSON_MISSING_KEY = "key {key!r} is missing; expected keys {expected}"
JSON_BAD_ID = "{key} must be a string or an integer, got {value!r}"
FORMAT_DETECTED_NOTE = "{file}: format detected as {file_format!r} from the {reason}"

_NAN_WORDS = {"nan", "+nan", "-nan"}
_RAW_DECODE = json.JSONDecoder().raw_decode  # what json.loads runs, without its whitespace checks
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+$")


class _Problems:
    """Collects problems up to MAX_PROBLEMS; counts the rest."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self.dropped = 0

    def add(self, file: str, message: str, row: int | None = None, column: str | None = None) -> None:
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(Problem(file=file, message=shorten_quoted(message), row=row, column=column))
        else:
            self.dropped += 1

    def raise_if_any(self) -> None:
        if self.items:
            raise LoadError(list(self.items), n_unlisted=self.dropped)


_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"')

_LENGTH_NOTE = re.compile(r" \([\d,]+ characters\)")


def shorten_quoted(message: str, limit: int = QUOTED_VALUE_LIMIT) -> str:
    """``message`` with every quoted value longer than ``limit`` characters cut short.

    Messages quote the offending value with ``{value!r}``; a 300,000-character
    cell would otherwise be repeated whole. A Python string literal in the
    message whose value is longer than ``limit`` becomes its first ``limit``
    characters, an ellipsis and the full length: ``'qqqq…' (300,000
    characters)``. Anything that is not a string literal is left alone, and so
    is a value cut already: shortening twice changes nothing.

    Parameters
    ----------
    message : str
    limit : int, default QUOTED_VALUE_LIMIT (80)
        Longest value kept whole, in characters.

    Returns
    -------
    str
    """
    if len(message) <= limit + 2:
        return message

    def cut(match: re.Match) -> str:
        literal = match.group(0)
        if len(literal) <= limit + 2 or _LENGTH_NOTE.match(message, match.end()):
            return literal  # short, or cut already (so shortening twice changes nothing)
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            return literal
        if not isinstance(value, str) or len(value) <= limit:
            return literal
        return f"{value[:limit] + '…'!r} ({len(value):,} characters)"

    return _QUOTED.sub(cut, message)


@dataclass(frozen=True)
class _Table:
    file: str
    header: list[str]
    frame: pd.DataFrame  # every cell a str, columns = header, blank rows dropped
    rows: np.ndarray  # spreadsheet row number of each frame row (header = 1)


def _plain(value: object) -> object:
    """A numpy scalar as the Python value it holds (so messages print 1.0, not np.float64(1.0))."""
    return value.item() if isinstance(value, np.generic) else value


def _fmt_names(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(repr(n) for n in list(names)[:limit])
    if len(names) > limit:
        shown += f", ... ({len(names)} columns)"
    return shown or "nothing"


def _fmt_list(items: Sequence[str], limit: int = NOTE_NAMES_LIMIT, sep: str = ", ") -> str:
    """The first ``limit`` items joined, then "and N more" (N exact), each item shortened."""
    shown = sep.join(_short(str(i)) for i in items[:limit])
    if len(items) > limit:
        shown += f" and {len(items) - limit:,} more"
    return shown


def _short(text: str, limit: int = QUOTED_VALUE_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


#: Bytes read at a time by :func:`check_text` (a test makes it small).
TEXT_BLOCK_BYTES = 1 << 20


def check_text(path: Path, problems: _Problems, *, csv_records: bool = True) -> bool:
    """The checks of :func:`_decode` (missing file, UTF-16/32 byte-order mark, bytes that are
    not UTF-8, a blank file, a NUL character), the file read a block at a time and never held.

    Parameters
    ----------
    path : Path
    problems : _Problems
        Receives the problem found, exactly as :func:`_decode` words and locates it.
    csv_records : bool, default True
        The row of a NUL character: the CSV record that holds it (header = row 1, a quoted
        value spanning lines one row: :func:`annotate.core.csv_line_row`); False: its line
        (JSON Lines).

    Returns
    -------
    bool
        True when the file is UTF-8 text the parsers can read.
    """
    file = path.name
    if not path.is_file():
        problems.add(file, FILE_NOT_FOUND.format(path=path))
        return False
    with path.open("rb") as handle:
        head = handle.read(4)
        if (encoding := _unsupported_bom(head)) is not None:
            problems.add(file, UTF16_BOM.format(encoding=encoding))
            return False
        handle.seek(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
        decoder = codecs.getincrementaldecoder("utf-8")()
        fed, newlines, blank, nul_row = 0, 0, True, 0
        while True:
            block = handle.read(TEXT_BLOCK_BYTES)
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                offset = fed - pending + exc.start  # from the end of a UTF-8 byte-order mark, as _decode gives it
                handle.seek(offset)  # and the byte _decode names: raw[offset], from the file's start
                problems.add(file, NOT_UTF8.format(byte=handle.read(1)[0], offset=offset))
                return False
            fed += len(block)
            if blank and text and not text.isspace():
                blank = False
            if not nul_row:
                nul = text.find("\x00")
                if nul >= 0:
                    nul_row = newlines + text.count("\n", 0, nul) + 1
            newlines += text.count("\n")
            if not block:
                break
    if blank:
        problems.add(file, EMPTY_FILE)
        return False
    if nul_row:
        if csv_records:
            with path.open(encoding="utf-8-sig", newline="\n") as handle:  # lines split at "\n" only
                nul_row = csv_line_row(handle, nul_row)
        problems.add(file, NUL_CHARACTER, row=nul_row)
        return False
    return True


def _unsupported_bom(head: bytes) -> str | None:
    """The encoding named by a UTF-16 or UTF-32 byte-order mark at the start of ``head``, else None.

    UTF-32 first: its little-endian mark begins with UTF-16's.
    """
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if head.startswith(bom):
            return encoding
    return None


def _decode(path: Path, problems: _Problems, *, csv_records: bool = True) -> str | None:
    decoded = _decode_with_bytes(path, problems, csv_records=csv_records)
    return None if decoded is None else decoded[1]


def _decode_with_bytes(path: Path, problems: _Problems, *, csv_records: bool = True) -> tuple[bytes, str] | None:
    """(the file's bytes after any UTF-8 byte-order mark, their text) when :func:`_decode`'s
    checks pass; None (and the problem added) otherwise. A NUL character is placed at the CSV
    record that holds it (header = row 1), or at its line when not ``csv_records``."""
    file = path.name
    if not path.is_file():
        problems.add(file, FILE_NOT_FOUND.format(path=path))
        return None
    raw = path.read_bytes()
    if (encoding := _unsupported_bom(raw[:4])) is not None:
        problems.add(file, UTF16_BOM.format(encoding=encoding))
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.add(file, NOT_UTF8.format(byte=raw[exc.start], offset=exc.start))
        return None
    if not text or text.isspace():  # not text.strip(): a copy of the file
        problems.add(file, EMPTY_FILE)
        return None
    nul = text.find("\x00")
    if nul >= 0:  # PostgreSQL refuses it in text (SQLite would store it)
        line = text.count("\n", 0, nul) + 1
        problems.add(file, NUL_CHARACTER, row=csv_line_row(_lines(text), line) if csv_records else line)
        return None
    return (raw[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw), text


#: The ASCII characters ``str.isspace`` calls whitespace (a file of nothing else is blank).
_ASCII_SPACE = re.compile(rb"[\t\n\x0b\x0c\r\x1c-\x1f ]*")


def _utf8_valid(data: bytes) -> bool:
    """True when ``data`` is well-formed UTF-8 (what ``bytes.decode("utf-8")`` accepts), checked
    by Arrow in place, without building the text."""
    import pyarrow as pa
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    try:
        pa.LargeStringArray.from_buffers(1, offsets, pa.py_buffer(data)).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _checked_bytes(path: Path, problems: _Problems) -> bytes | None:
    """The bytes :func:`_decode_with_bytes` returns, without decoding the text when the file
    plainly passes its checks (no UTF-16/32 byte-order mark, well-formed UTF-8, an ASCII
    character that is not whitespace before any other, no NUL byte); any other file goes
    through :func:`_decode_with_bytes`, which words and places the problem."""
    if path.is_file():
        raw = path.read_bytes()
        data = raw[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw
        first = _ASCII_SPACE.match(data).end()  # type: ignore[union-attr]
        if (first < len(data) and data[first] < 0x80 and _unsupported_bom(raw[:4]) is None
                and b"\x00" not in data and _utf8_valid(data)):
            return data
    decoded = _decode_with_bytes(path, problems)
    return None if decoded is None else decoded[0]


@dataclass(frozen=True)
class _CsvHead:
    file: str
    text: str  # the whole file, decoded ("" when not kept: see _read_csv_head)
    sep: str
    header: list[str]
    data: bytes = b""  # the same file as UTF-8 bytes (without a byte-order mark): what pandas reads fastest


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text``, ends kept, one at a time (as ``io.StringIO(text)`` gives them,
    without its copy of the whole text, four bytes a character)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end + 1
        yield text[start:stop]
        start = stop


def _byte_lines(data: bytes) -> Iterator[str]:
    """The lines of ``data`` (well-formed UTF-8), each decoded as it is asked for: what
    :func:`_lines` gives of ``data.decode()``."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        stop = len(data) if end < 0 else end + 1
        yield data[start:stop].decode("utf-8")
        start = stop


def _read_csv_head(path: Path, problems: _Problems, *, keep_text: bool = True,
                   whole_text: bool = True) -> _CsvHead | None:
    """Decode a CSV/TSV and check its encoding, separator and header (the rows are not read).

    ``keep_text=False``: the file is checked a block at a time (:func:`check_text`) and
    only its header is read; ``text`` is then "" (the caller reads the file itself).
    ``whole_text=False``: the file's bytes are checked (:func:`_checked_bytes`) and kept in
    ``data``, and only the header is decoded; ``text`` is then "" (the caller reads ``data``)."""
    file = path.name
    if keep_text and not whole_text:
        data = _checked_bytes(path, problems)
        if data is None:
            return None
        head = _csv_head(file, "", _byte_lines(data), problems)
        return None if head is None else dataclasses.replace(head, data=data)
    if keep_text:
        decoded = _decode_with_bytes(path, problems)
        if decoded is None:
            return None
        data, text = decoded
        head = _csv_head(file, text, _lines(text), problems)
        return None if head is None else dataclasses.replace(head, data=data)
    if not check_text(path, problems):
        return None
    with path.open(encoding="utf-8-sig", newline="\n") as handle:  # lines as io.StringIO(text) splits them
        return _csv_head(file, "", handle, problems)


def _csv_head(file: str, text: str, lines: Iterator[str], problems: _Problems) -> _CsvHead | None:
    first = next(lines, "")
    first_line = first[:-1] if first.endswith("\n") else first
    lines = itertools.chain([first], lines)
    sep = csv_separator(first_line)
    if sep == ";":
        problems.add(file, SEMICOLON_SEPARATED, row=1)
        return None
    try:
        header = [name.strip() for name in next(csv.reader(lines, delimiter=sep))]
    except csv.Error as exc:
        if "field limit" in str(exc):
            long = [(i, len(p)) for i, p in enumerate(first_line.split(sep), start=1) if len(p) > CSV_FIELD_LIMIT]
            if long:
                message = FIELD_TOO_LONG.format(position=long[0][0], length=long[0][1], limit=CSV_FIELD_LIMIT)
            else:
                message = HEADER_FIELD_TOO_LONG.format(limit=CSV_FIELD_LIMIT)
            problems.add(file, message, row=1)
        else:
            problems.add(file, csv_error_words(str(exc), text=first, sep=sep, record=0)[0], row=1)
        return None
    ok = header_names_ok(header, file, problems)
    if not ok:
        return None
    return _CsvHead(file=file, text=text, sep=sep, header=header)


def _csv_options(head: _CsvHead) -> dict:
    """The ``pandas.read_csv`` options every cell read as a str (the chunked reader uses them too)."""
    return {"sep": head.sep, "names": head.header, "header": 0, "index_col": False, "dtype": str,
            "keep_default_na": False, "na_filter": False, "skip_blank_lines": False, "engine": "c"}


def _csv_source(head: _CsvHead) -> io.BytesIO | io.StringIO:
    """What ``pandas.read_csv`` reads of a decoded file: its UTF-8 bytes (the C parser reads
    bytes about twice as fast as it reads a text stream, which it encodes back to UTF-8
    first: the same bytes, so the same cells), or the text when the bytes were not kept."""
    return io.BytesIO(head.data) if head.data else io.StringIO(head.text)


def _read_csv(path: Path, problems: _Problems, *, cells: type = str) -> _Table | None:
    """Read a CSV/TSV into strings, checking encoding, separator and header.

    ``cells=object`` gives columns of Python str (the same values, without
    building Arrow string arrays: faster for a caller that reads each value
    in Python anyway)."""
    import pandas as pd
    head = _read_csv_head(path, problems, whole_text=False)  # pandas reads the bytes
    if head is None:
        return None
    file, header = head.file, head.header
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(_csv_source(head), **{**_csv_options(head), "dtype": cells})
    except pd.errors.ParserWarning:
        problems.add(file, LONGER_THAN_HEADER, row=2)
        return None
    except pd.errors.ParserError as exc:
        text = head.text or head.data.decode("utf-8")  # checked as UTF-8 already, its byte-order mark cut
        message, row = csv_error_words(str(exc), text=text, sep=head.sep)
        problems.add(file, message, row=row)
        return None
    rows = np.arange(len(frame), dtype=np.int64) + 2
    if len(frame):
        # Rows blank in every cell; only those blank in the first are compared whole.
        blank = (frame.iloc[:, 0] == "").to_numpy(dtype=bool, na_value=False).copy()
        if blank.any():
            candidates = np.flatnonzero(blank)
            blank[candidates] = (frame.iloc[candidates] == "").to_numpy().all(axis=1)
        if blank.any():
            frame = frame.loc[~blank].reset_index(drop=True)
            rows = rows[~blank]
    return _Table(file=file, header=header, frame=frame, rows=rows)


def _cell(frame: pd.DataFrame, position: int, column: str) -> object:
    return frame.iat[position, frame.columns.get_loc(column)]


def _parse_credit_strings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Credits from stripped strings -> (float array, blank mask, bad mask).

    Each distinct string is parsed once (a column of credits repeats a few
    strings: "0", "1", "")."""
    import pandas as pd
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), use_na_sentinel=False)
    number, blank, bad = _parse_unique_credits(np.asarray(uniques, dtype=object))
    return number[codes], blank[codes], bad[codes]


def _parse_unique_credits(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import pandas as pd
    series = pd.Series(values, dtype=object)
    blank = (series == "").to_numpy(dtype=bool)
    number = pd.to_numeric(series.where(~blank, None), errors="coerce").to_numpy(dtype=np.float64)
    bad = ~blank & ~np.isfinite(number)
    bad |= np.isfinite(number) & ((number < 0.0) | (number > 1.0))
    return number, blank, bad


def _report_credits(
    problems: _Problems,
    file: str,
    bad: np.ndarray,
    texts: np.ndarray,
    number: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
) -> None:
    """One problem per bad credit (flat arrays aligned with ``bad``), up to the cap."""
    where = np.flatnonzero(bad)
    room = max(MAX_PROBLEMS - len(problems.items), 0)
    for i in where[:room]:
        problems.add(file, _credit_message(str(texts[i]), float(number[i])), row=int(rows[i]), column=str(columns[i]))
    problems.dropped += max(len(where) - room, 0)


def _credit_message(text: str, number: float) -> str:
    if math.isnan(number):
        if text.lower() in _NAN_WORDS:
            return CREDIT_NOT_FINITE.format(value=text)
        if _DECIMAL_COMMA.match(text):
            return CREDIT_DECIMAL_COMMA.format(value=text)
        return CREDIT_NOT_A_NUMBER.format(value=text)
    if math.isinf(number):
        return CREDIT_NOT_FINITE.format(value=text)
    return CREDIT_OUT_OF_RANGE.format(value=text)


def _dedupe(
    frame: pd.DataFrame,
    rows: np.ndarray,
    *,
    key: list[str],
    compare: list[str],
    file: str,
    problems: _Problems,
    notes: list[str],
    key_label: str,
    subject_column: str | None = None,
    id_column: str = "question_id",
) -> tuple[pd.DataFrame, np.ndarray]:
    """Drop exact duplicates of ``key`` (noted); report disagreeing ones (both rows)."""
    dup = frame.duplicated(key, keep=False).to_numpy()
    if not dup.any():
        return frame, rows
    first_seen: dict[tuple, int] = {}
    drop = np.zeros(len(frame), dtype=bool)
    exact: list[tuple[int, int]] = []
    sub = frame.loc[dup, key + [c for c in compare if c not in key]]
    for position, record in zip(np.flatnonzero(dup), sub.itertuples(index=False, name=None)):
        k = tuple(record[: len(key)])
        if k not in first_seen:
            first_seen[k] = position
            continue
        first = first_seen[k]
        differing = [c for c in compare if _cell(frame, first, c) != _cell(frame, position, c)]
        if not differing:
            drop[position] = True
            exact.append((int(rows[position]), int(rows[first])))
            continue
        column = subject_column if subject_column in differing else differing[0]
        a, b = _plain(_cell(frame, first, column)), _plain(_cell(frame, position, column))
        if column == subject_column:
            message = TWO_SUBJECTS.format(
                question_id=_cell(frame, position, id_column), a=a, b=b,
                first=int(rows[first]), row=int(rows[position]),
            )
        else:
            message = CONFLICTING_DUPLICATE.format(first=int(rows[first]), key=key_label, column=column, a=a, b=b)
        problems.add(file, message, row=int(rows[position]), column=column)
    if exact:
        examples = ", ".join(f"row {r} repeats row {f}" for r, f in exact[:5]) + (", ..." if len(exact) > 5 else "")
        notes.append(EXACT_DUPLICATES_NOTE.format(file=file, count=len(exact), examples=examples))
    return frame.loc[~drop].reset_index(drop=True), rows[~drop]


def _check_datasets(datasets: pd.Series, rows: np.ndarray, *, file: str, problems: _Problems) -> bool:
    """One problem per blank dataset, or one for the file when every row is blank."""
    blank = (datasets == "").to_numpy()
    if len(blank) and blank.all():
        problems.add(file, NO_DATASET, column="dataset")
        return False
    for position in np.flatnonzero(blank):
        problems.add(file, BLANK_DATASET, row=int(rows[position]), column="dataset")
    return not blank.any()


def _check_columns(table: _Table | _CsvHead, required: list[str], optional: list[str], problems: _Problems) -> bool:
    missing = [c for c in required if c not in table.header]
    if missing:
        expected = ", ".join(repr(c) for c in required)
        if optional:
            expected += " (optional: " + ", ".join(repr(c) for c in optional) + ")"
        problems.add(
            table.file,
            MISSING_COLUMNS.format(
                missing=", ".join(repr(c) for c in missing), expected=expected, found=_fmt_names(table.header)
            ),
            row=1,
        )
        return False
    return True


def _note_ignored(table: _Table | _CsvHead, used: Sequence[str], notes: list[str]) -> None:
    ignored = [c for c in table.header if c not in used]
    if ignored:
        notes.append(IGNORED_COLUMNS_NOTE.format(file=table.file, columns=_fmt_list(ignored)))


def _parse_options(text: str, max_depth: int | None = None) -> list[str] | None:
    """The options of one ``options_json`` cell ([] when blank), None when it is not a
    JSON array; ``max_depth`` as in :func:`~annotate.core.jsonsafe.loads_bounded` (a caller
    parsing many cells passes the setting, read once)."""
    if text == "":
        return []
    if max_depth is not None and max_depth >= 1:  # a list of str, the common cell: one scan, no depth count
        try:
            value, end = _RAW_DECODE(text)
        except (json.JSONDecodeError, RecursionError):
            end = -1
        if end == len(text) and type(value) is list:
            try:
                "".join(value)  # raises TypeError unless every item is a str (JSON gives no str subclass)
            except TypeError:
                pass
            else:
                return value
    try:
        value = loads_bounded(text, max_depth=max_depth)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, list):
        return None
    return [v if isinstance(v, str) else json.dumps(v) for v in value]


def _source(file: str, rows: np.ndarray) -> pd.Series:
    import pandas as pd
    return (file + ":") + pd.Series(rows, dtype=np.int64).astype(str)


def _validate_common(
    dataset: str | None, subject_column: str | None, keep_columns: Sequence[str], id_column: str
) -> list[str]:
    if dataset is not None and (not isinstance(dataset, str) or not dataset.strip()):
        raise ValueError(f"dataset must be a non-blank string or None, got {dataset!r}")
    if not isinstance(id_column, str) or not id_column.strip():
        raise ValueError(f"id_column must be a non-blank string, got {id_column!r}")
    if subject_column is not None and (not isinstance(subject_column, str) or not subject_column.strip()):
        raise ValueError(f"subject_column must be a non-blank string or None, got {subject_column!r}")
    if isinstance(keep_columns, str):
        raise ValueError(f"keep_columns must be a sequence of column names, not one string: {keep_columns!r}")
    keep = [str(c).strip() for c in keep_columns]
    if any(not c for c in keep):
        raise ValueError(f"keep_columns must not contain blank names, got {list(keep_columns)!r}")
    reserved = {id_column, "dataset", "model", "credit", "question", "options_json", "answer"} | (
        {subject_column} if subject_column else set()
    )
    clash = sorted(set(keep) & reserved)
    if clash:
        raise ValueError(f"keep_columns must not repeat a column the loader already reads, got {clash!r}")
    return keep


def _check_model_column(model_column: str) -> str:
    """The model name column of a models file, stripped; ValueError when blank or not a string."""
    if not isinstance(model_column, str) or not model_column.strip():
        raise ValueError(f"model_column must be a non-blank string, got {model_column!r}")
    return model_column.strip()


def header_names_ok(header: Sequence[str], file: str, problems: _Problems) -> bool:
    """Add a problem (row 1) for every blank column name and every name given twice; True if none."""
    ok = True
    positions: dict[str, list[int]] = {}
    for position, name in enumerate(header, start=1):
        if not name:
            problems.add(file, BLANK_COLUMN_NAME.format(position=position), row=1)
            ok = False
        positions.setdefault(name, []).append(position)
    for name, where in positions.items():
        if name and len(where) > 1:
            message = DUPLICATE_COLUMN.format(name=name, positions=", ".join(map(str, where)))
            problems.add(file, message, row=1, column=name)
            ok = False
    return ok
