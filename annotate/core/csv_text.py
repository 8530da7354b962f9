"""CSV files in the site's words: which separator a header uses, and what a
parser's complaint means, with the row and the file's line it is on.

Every CSV reader of the site (the response and metadata loaders, which read
with pandas, and the judgment import, which reads with :mod:`csv`) asks
:func:`csv_separator` about the header and hands a parser's exception to
:func:`csv_error_words`, so one file gets one sentence wherever it is
uploaded: ``separated by ';'``, never ``missing column(s) [...all six...]``;
``a quoted value that starts on line 4 is never closed``, never pandas'
``C error: EOF inside string starting at row 3``.

Rows are counted as the site counts them everywhere: the header is row 1 and
each record one row (a quoted value may hold line breaks, so a row may span
lines); a line is a line of the file.
"""
from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterable

SEMICOLON_SEPARATED = (
    "the header is separated by ';'; save the file as comma-separated (CSV) with a decimal point (0.5, not 0,5)"
)
MALFORMED_ROW = "row has {found} fields but the header has {expected}"
UNCLOSED_QUOTE = "a quoted value that starts on line {line} of the file is never closed (its closing \" is missing)"
TEXT_AFTER_QUOTE = ("a quoted value is followed by more text before the next separator (line {line} of the file); "
                    "a \" inside a value is written \"\" and the whole value quoted")
NUL_IN_LINE = "line {line} of the file holds a NUL character (byte 0x00), which is not text"
FIELD_LIMIT = "a field is longer than {limit:,} characters, the most a CSV field may hold"
CSV_ERROR = "cannot read the file as CSV: {detail}"

_PANDAS_PREFIX = re.compile(r"^Error tokenizing data\. C error: ")
_PANDAS_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_PANDAS_EOF = re.compile(r"EOF inside string starting at row (\d+)")
_FIELD_LIMIT = re.compile(r"field larger than field limit \((\d+)\)")


def csv_separator(first_line: str) -> str:
    """The separator of a CSV header line: ``","``, else ``"\\t"``, else ``";"`` (which the site
    refuses with ``SEMICOLON_SEPARATED``: a semicolon file writes decimals with a comma); ``","``
    when the line holds none (a single column).

    Examples
    --------
    >>> csv_separator("a,b"), csv_separator("a\\tb"), csv_separator("a;b"), csv_separator("a")
    (',', '\\t', ';', ',')
    """
    for sep in (",", "\t", ";"):
        if sep in first_line:
            return sep
    return ","


def csv_record_line(text: str, record: int, *, sep: str = ",") -> int:
    """The line of ``text`` on which record ``record`` (0 = the header) starts, from 1.

    Records before it are read as :mod:`csv` reads them (a quoted value may
    span lines); past the end, the line after the last.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    line = 1
    for _ in range(record):
        try:
            next(reader)
        except (StopIteration, csv.Error):
            break
        line = reader.line_num + 1
    return line


def csv_line_row(lines: Iterable[str], line: int) -> int:
    """The row (header = 1) of the record that holds line ``line`` of a CSV file (from 1).

    Parameters
    ----------
    lines : iterable of str
        The file's lines, each with its line end, split at ``"\\n"`` only;
        the separator is read from the first (:func:`csv_separator`).
    line : int
        A line of the file, from 1.

    Returns
    -------
    int
        The row as the site counts rows: records read as :mod:`csv` reads
        them, so a quoted value spanning lines is one row. A record the
        parser cannot read ends the count there (the row being read); past
        the end, the row after the last.

    Examples
    --------
    >>> csv_line_row(["a,b\\n", '1,"x\\n', 'y"\\n', "2,z\\n"], 4)
    3
    """
    iterator = iter(lines)
    first = next(iterator, "")
    reader = csv.reader(itertools.chain([first], iterator), delimiter=csv_separator(first.rstrip("\r\n")))
    row = 0
    while True:
        try:
            next(reader)
        except (StopIteration, csv.Error):
            return row + 1
        row += 1
        if reader.line_num >= line:
            return row


def csv_error_words(detail: str, *, text: str, sep: str = ",", record: int | None = None) -> tuple[str, int | None]:
    """A CSV parser's complaint in the site's words, and the row it is on.

    Parameters
    ----------
    detail : str
        The message of a ``pandas.errors.ParserError`` or a ``csv.Error``.
    text : str
        The file's text (decoded), to find the line a record starts on.
    sep : str, default ","
    record : int or None
        For a ``csv.Error``: the record being read (0 = the header), which the
        message does not say; pandas' messages say it themselves.

    Returns
    -------
    (str, int or None)
        The sentence, and the row (header = 1) when known.

    Examples
    --------
    >>> csv_error_words("Error tokenizing data. C error: EOF inside string starting at row 3",
    ...                 text='a,b\\n1,2\\n3,4\\n"open,4\\n')
    ('a quoted value that starts on line 4 of the file is never closed (its closing " is missing)', 4)
    """
    detail = _PANDAS_PREFIX.sub("", detail.strip())
    match = _PANDAS_FIELDS.search(detail)
    if match:  # pandas counts records from 1 here: the site's row
        expected, row, found = (int(g) for g in match.groups())
        return MALFORMED_ROW.format(found=found, expected=expected), row
    match = _PANDAS_EOF.search(detail)
    if match:  # ... and from 0 (the header) here
        record = int(match.group(1))
        return UNCLOSED_QUOTE.format(line=csv_record_line(text, record, sep=sep)), record + 1
    match = _FIELD_LIMIT.search(detail)
    if match:
        return FIELD_LIMIT.format(limit=int(match.group(1))), None if record is None else record + 1
    if record is not None:
        line = csv_record_line(text, record, sep=sep)
        if detail == "unexpected end of data":
            return UNCLOSED_QUOTE.format(line=line), record + 1
        if detail.endswith("expected after '\"'"):
            return TEXT_AFTER_QUOTE.format(line=line), record + 1
        if "NUL" in detail:
            return NUL_IN_LINE.format(line=line), record + 1
        return CSV_ERROR.format(detail=detail), record + 1
    return CSV_ERROR.format(detail=detail), None


def csv_rows(text: str, *, sep: str = ","):
    """The records of ``text`` (a strict :mod:`csv` reader: an unclosed quote is an error, not the
    rest of the file in one value), each as (row, fields), the header being row 1.

    Raises
    ------
    CsvTextError
        With the parser's complaint in the site's words (:func:`csv_error_words`) and its row.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    record = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            message, row = csv_error_words(str(exc), text=text, sep=sep, record=record)
            raise CsvTextError(message, row) from None
        record += 1
        yield record, fields


class CsvTextError(ValueError):
    """A file that is not readable CSV: ``message`` in the site's words, on ``row`` (header = 1) when known."""

    def __init__(self, message: str, row: int | None) -> None:
        super().__init__(message)
        self.message, self.row = message, row
