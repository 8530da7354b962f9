"""Parsers for tabular response files and the metadata files that go with them.

Formats
-------
wide
    CSV with the question id column first (default ``question_id``) and one
    column per model, like ``mmlu-pro/responses_binary.csv``. The dataset is
    given by the caller.
long
    CSV or TSV with one row per (question, model): required columns
    ``question_id``, ``model``, ``credit``; optional ``dataset``, the subject
    column (default ``subject``), ``question`` (text), ``options_json``,
    ``answer`` and any kept columns.
jsonl
    JSON Lines with the same keys as the long format, one object per line;
    ``credit`` is a JSON number, or ``null`` for "not observed".
questions file
    ``question_id`` plus optional ``dataset``, subject column, ``question``,
    ``options_json`` (JSON list), ``answer`` and kept columns (into
    ``Question.metadata``).
models file
    ``model`` plus optional ``parameters_b`` (or ``params_b_from_name``),
    ``family`` and ``access`` (``open_weight``/``proprietary``/``unknown``);
    every other column goes into ``LanguageModel.metadata``. Blank fields are
    guessed from the name by :mod:`annotate.loaders.model_names` and listed in
    ``metadata["inferred"]``.

Decisions (each has a test)
---------------------------
- Text is UTF-8. A UTF-8 byte-order mark is accepted transparently; UTF-16/32
  files (their byte-order marks) and undecodable bytes are refused.
- Separator: comma, or tab when the header has tabs and no commas. A
  ``;``-separated file and a decimal comma (``0,5``) are refused with a
  message saying how to fix them; they never load as "0 rows".
- A blank credit is "not observed" (no row), never a failure. Any other
  value must be a finite number in [0, 1]. Rows shorter than the header are
  padded with blank cells (spreadsheets drop trailing empty cells); rows
  longer than the header are refused. Completely blank rows are skipped.
- Exact duplicate rows are ignored and reported in the notes; duplicates that
  disagree are refused with both row numbers.
- A header field longer than the csv module's limit (131,072 characters) and
  any other ``csv.Error`` are a problem at row 1, never a traceback.
- A value quoted in a problem is cut to 80 characters plus its full length
  (:func:`shorten_quoted`); notes list at most 50 names plus "and N more".
- No dataset column (or key) and no default dataset is one problem for the
  file, not one per row. A problem list stops at ``MAX_PROBLEMS`` and ends
  with the exact count of the rest.
- Questions without any subject load, with a note that no study can be made
  from them until subjects are loaded.
- ``Problem.row`` is the record number as a spreadsheet shows it: the header
  is row 1, the first data record row 2 (a quoted field spanning several lines
  counts once). In JSON Lines it is the line number.

References
----------
The response matrix these files describe is :math:`A` (binary, Section 2.2)
or :math:`A_c \\in [0, 1]^{Q \\times M}` (partial credit, Section 2.4) of the
EIP paper; subjects matter because human judges compare questions of the same
subject (Section 3.3).
"""
from __future__ import annotations

import ast
import codecs
import csv
import io
import json
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from annotate.loaders.base import (
    MODEL_COLUMNS,
    MORE_PROBLEMS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    LoadError,
    ParsedResponseSet,
    Problem,
)
from annotate.loaders.model_names import OPEN_WEIGHT, PROPRIETARY, UNKNOWN, infer_from_model_name

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
SEMICOLON_SEPARATED = (
    "the header is separated by ';'; save the file as comma-separated (CSV) with a decimal point (0.5, not 0,5)"
)
BLANK_COLUMN_NAME = "column {position} of the header has no name"
DUPLICATE_COLUMN = "column {name!r} appears more than once in the header (columns {positions})"
MALFORMED_ROW = "row has {found} fields but the header has {expected}"
LONGER_THAN_HEADER = "a data row has more fields than the header"
CSV_ERROR = "cannot read the file as CSV: {detail}"
FIELD_TOO_LONG = (
    "field {position} of the header is {length:,} characters long; a CSV field may hold at most {limit:,} characters"
)
HEADER_FIELD_TOO_LONG = "a field of the header is longer than {limit:,} characters, the most a CSV field may hold"
NO_DATASET = (
    "there is no dataset column (or it is blank on every row) and no default dataset was given; "
    "pass --dataset (command) or fill the Dataset field (admin)"
)
NO_SUBJECT_NOTE = (
    "{file}: no subject column: questions have no subject, so no study can be made from them until subjects "
    "are loaded (give --questions with --subject-column, or a questions file and the subject column in the admin)"
)
WRONG_FIRST_COLUMN = "expected the first column to be {expected!r}, followed by one column per model; found {found}"
NO_MODEL_COLUMNS = "expected one column per model after {expected!r}; found only {found}"
MISSING_COLUMNS = "missing column(s) {missing}; expected {expected}; found {found}"
IGNORED_COLUMNS_NOTE = "{file}: column(s) not kept: {columns} (name them as columns to keep to store them)"
BLANK_QUESTION_ID = "question id is blank"
BLANK_MODEL = "model name is blank"
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
_DECIMAL_COMMA = re.compile(r"^[+-]?\d*,\d+$")
_PANDAS_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


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


def _decode(path: Path, problems: _Problems) -> str | None:
    file = path.name
    if not path.is_file():
        problems.add(file, FILE_NOT_FOUND.format(path=path))
        return None
    raw = path.read_bytes()
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if raw.startswith(bom):
            problems.add(file, UTF16_BOM.format(encoding=encoding))
            return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.add(file, NOT_UTF8.format(byte=raw[exc.start], offset=exc.start))
        return None
    if not text.strip():
        problems.add(file, EMPTY_FILE)
        return None
    return text


def _read_csv(path: Path, problems: _Problems) -> _Table | None:
    """Read a CSV/TSV into strings, checking encoding, separator and header."""
    file = path.name
    text = _decode(path, problems)
    if text is None:
        return None
    first_line = text.split("\n", 1)[0]
    if "," in first_line:
        sep = ","
    elif "\t" in first_line:
        sep = "\t"
    elif ";" in first_line:
        problems.add(file, SEMICOLON_SEPARATED, row=1)
        return None
    else:
        sep = ","
    try:
        header = [name.strip() for name in next(csv.reader(io.StringIO(text), delimiter=sep))]
    except csv.Error as exc:
        if "field limit" in str(exc):
            long = [(i, len(p)) for i, p in enumerate(first_line.split(sep), start=1) if len(p) > CSV_FIELD_LIMIT]
            if long:
                message = FIELD_TOO_LONG.format(position=long[0][0], length=long[0][1], limit=CSV_FIELD_LIMIT)
            else:
                message = HEADER_FIELD_TOO_LONG.format(limit=CSV_FIELD_LIMIT)
            problems.add(file, message, row=1)
        else:
            problems.add(file, CSV_ERROR.format(detail=str(exc).strip()), row=1)
        return None
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
    if not ok:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                names=header,
                header=0,
                index_col=False,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=False,
                engine="c",
            )
    except pd.errors.ParserWarning:
        problems.add(file, LONGER_THAN_HEADER, row=2)
        return None
    except pd.errors.ParserError as exc:
        match = _PANDAS_FIELDS.search(str(exc))
        if match:
            expected, line, found = (int(g) for g in match.groups())
            problems.add(file, MALFORMED_ROW.format(found=found, expected=expected), row=line)
        else:
            problems.add(file, CSV_ERROR.format(detail=str(exc).strip()))
        return None
    rows = np.arange(len(frame), dtype=np.int64) + 2
    if len(frame):
        blank = (frame == "").to_numpy().all(axis=1)
        if blank.any():
            frame = frame.loc[~blank].reset_index(drop=True)
            rows = rows[~blank]
    return _Table(file=file, header=header, frame=frame, rows=rows)


def _cell(frame: pd.DataFrame, position: int, column: str) -> object:
    return frame.iat[position, frame.columns.get_loc(column)]


def _parse_credit_strings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Credits from stripped strings -> (float array, blank mask, bad mask)."""
    series = pd.Series(values, dtype=object)
    blank = (series == "").to_numpy()
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


def _check_columns(table: _Table, required: list[str], optional: list[str], problems: _Problems) -> bool:
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


def _note_ignored(table: _Table, used: Sequence[str], notes: list[str]) -> None:
    ignored = [c for c in table.header if c not in used]
    if ignored:
        notes.append(IGNORED_COLUMNS_NOTE.format(file=table.file, columns=_fmt_list(ignored)))


def _parse_options(text: str) -> list[str] | None:
    if text == "":
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, list):
        return None
    return [v if isinstance(v, str) else json.dumps(v) for v in value]


def _source(file: str, rows: np.ndarray) -> pd.Series:
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


# --- questions and models files -------------------------------------------------


def _read_questions(
    path: Path,
    problems: _Problems,
    notes: list[str],
    *,
    dataset: str | None,
    subject_column: str | None,
    keep_columns: list[str],
    id_column: str,
) -> pd.DataFrame | None:
    table = _read_csv(path, problems)
    if table is None:
        return None
    subject = subject_column or ("subject" if "subject" in table.header else None)
    required = [id_column] + ([subject_column] if subject_column else []) + list(keep_columns)
    optional = [c for c in ("dataset", "subject", "question", "options_json", "answer") if c not in required]
    if not _check_columns(table, required, optional, problems):
        return None
    used = required + [c for c in optional if c in table.header and (c != "subject" or subject == "subject")]
    _note_ignored(table, used, notes)
    frame, rows = table.frame, table.rows
    frame = frame.assign(**{id_column: frame[id_column].str.strip()})
    if subject:
        frame = frame.assign(**{subject: frame[subject].str.strip()})
    ok = True
    for position in np.flatnonzero((frame[id_column] == "").to_numpy()):
        problems.add(table.file, BLANK_QUESTION_ID, row=int(rows[position]), column=id_column)
        ok = False
    if "dataset" in table.header:
        ds = frame["dataset"].str.strip()
        if dataset is not None:
            ds = ds.where(ds != "", dataset)
        frame = frame.assign(dataset=ds)
    else:
        frame = frame.assign(dataset=dataset or "")
    ok = _check_datasets(frame["dataset"], rows, file=table.file, problems=problems) and ok
    if not ok:
        return None
    compare = [c for c in used if c != id_column and c != "dataset"]
    frame, rows = _dedupe(
        frame, rows, key=["dataset", id_column], compare=compare, file=table.file, problems=problems,
        notes=notes, key_label="question id", subject_column=subject, id_column=id_column,
    )
    n = len(frame)
    options: list[list[str]] = [[] for _ in range(n)]
    if "options_json" in table.header:
        for i, text in enumerate(frame["options_json"].to_numpy(dtype=object)):
            parsed = _parse_options(text.strip())
            if parsed is None:
                problems.add(table.file, BAD_OPTIONS.format(value=text), row=int(rows[i]), column="options_json")
            else:
                options[i] = parsed
    if keep_columns:
        kept = frame[list(keep_columns)].to_numpy(dtype=object)
        metadata = [{c: (v if v != "" else None) for c, v in zip(keep_columns, values)} for values in kept]
    else:
        metadata = [{} for _ in range(n)]
    return pd.DataFrame(
        {
            "dataset": frame["dataset"].to_numpy(dtype=object),
            "external_id": frame[id_column].to_numpy(dtype=object),
            "subject": frame[subject].replace("", None).to_numpy(dtype=object) if subject else [None] * n,
            "text": frame["question"].to_numpy(dtype=object) if "question" in table.header else [""] * n,
            "options": options,
            "reference_answer": (
                frame["answer"].str.strip().to_numpy(dtype=object) if "answer" in table.header else [""] * n
            ),
            "metadata": metadata,
            "source": _source(table.file, rows).to_numpy(dtype=object),
        }
    )


def read_questions_file(
    path: Path | str,
    *,
    dataset: str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
) -> tuple[pd.DataFrame, list[str]]:
    """Read a question-metadata file.

    Parameters
    ----------
    path : path-like
        CSV (or TSV) with the id column and optional ``dataset``, subject
        column, ``question``, ``options_json``, ``answer`` and kept columns.
    dataset : str or None, default None
        Dataset of rows without a ``dataset`` value; required when the file has
        no ``dataset`` column.
    subject_column : str or None, default None
        Column holding the subject (MMLU-Pro: ``"category"``); must exist when
        given. None uses a ``subject`` column if there is one.
    keep_columns : sequence of str, default ()
        Extra columns stored into ``Question.metadata`` (blank -> None).
    id_column : str, default "question_id"

    Returns
    -------
    questions : DataFrame
        Columns ``QUESTION_COLUMNS`` plus ``source`` ("file:row"), one row per
        (dataset, external_id).
    notes : list of str
        Ignored columns and exact duplicate rows.

    Raises
    ------
    LoadError
        Every problem found, each with file, row and column.
    ValueError
        If an argument is malformed (names the parameter).
    """
    keep = _validate_common(dataset, subject_column, keep_columns, id_column)
    problems, notes = _Problems(), []
    frame = _read_questions(
        Path(path), problems, notes, dataset=dataset, subject_column=subject_column, keep_columns=keep,
        id_column=id_column,
    )
    problems.raise_if_any()
    return frame, notes


def _model_rows(
    names: Sequence[str],
    explicit: dict[str, list[str]],
    *,
    file: str,
    rows: np.ndarray | None,
    params_column: str | None,
    problems: _Problems,
    notes: list[str],
) -> pd.DataFrame:
    """Models table; blank or absent fields are guessed from the name and marked inferred.

    ``explicit`` maps column name -> list of str aligned with ``names``;
    ``params_column`` names the parameter-count column in it, if any.
    """
    blank = [""] * len(names)
    params_col = explicit.get(params_column, blank) if params_column else blank
    family_col = explicit.get("family", blank)
    access_col = explicit.get("access", blank)
    extra = {k: v for k, v in explicit.items() if k not in (params_column, "family", "access")}
    out: dict[str, list] = {c: [] for c in MODEL_COLUMNS}
    labels: list[str] = []
    for i, name in enumerate(names):
        guess = infer_from_model_name(name)
        row = int(rows[i]) if rows is not None else None
        metadata = {k: values[i] for k, values in extra.items() if values[i] != ""}
        inferred: list[str] = []
        raw = params_col[i].strip()
        parameters: float | None = None
        if raw:
            try:
                parameters = float(raw)
            except ValueError:
                metadata["parameters_label"] = raw
                labels.append(f"{name}: {raw!r}")
            else:
                if not math.isfinite(parameters) or parameters <= 0:
                    problems.add(file, BAD_PARAMETERS.format(value=raw), row=row, column=params_column)
                    parameters = None
        else:
            if guess.parameters_b is not None:
                parameters = guess.parameters_b
                inferred.append("parameters_b")
            if guess.parameters_label is not None:
                metadata["parameters_label"] = guess.parameters_label
                inferred.append("parameters_label")
        family = family_col[i].strip()
        if not family and guess.family:
            family = guess.family
            inferred.append("family")
        access = access_col[i].strip()
        if access and access not in ACCESS_VALUES:
            problems.add(file, BAD_ACCESS.format(value=access), row=row, column="access")
        if not access:
            access = guess.access
            if access != UNKNOWN:
                inferred.append("access")
        if inferred:
            metadata["inferred"] = inferred
        for column, value in zip(MODEL_COLUMNS, (name, family, parameters, access, metadata)):
            out[column].append(value)
    if labels:
        notes.append(PARAMETERS_LABEL_NOTE.format(file=file, labels=_fmt_list(labels, sep="; ")))
    frame = pd.DataFrame(out, columns=MODEL_COLUMNS)
    frame["parameters_b"] = pd.to_numeric(frame["parameters_b"], errors="coerce").astype(np.float64)
    if rows is not None:
        frame["source"] = _source(file, rows).to_numpy(dtype=object)
    return frame


def _read_models(path: Path, problems: _Problems, notes: list[str]) -> pd.DataFrame | None:
    table = _read_csv(path, problems)
    if table is None:
        return None
    optional = ["parameters_b", "params_b_from_name", "family", "access"]
    if not _check_columns(table, ["model"], optional, problems):
        return None
    params_column = next((c for c in ("parameters_b", "params_b_from_name") if c in table.header), None)
    frame = table.frame.assign(model=table.frame["model"].str.strip())
    rows = table.rows
    blank = np.flatnonzero((frame["model"] == "").to_numpy())
    for position in blank:
        problems.add(table.file, BLANK_MODEL, row=int(rows[position]), column="model")
    if len(blank):
        return None
    frame, rows = _dedupe(
        frame, rows, key=["model"], compare=[c for c in table.header if c != "model"], file=table.file,
        problems=problems, notes=notes, key_label="model",
    )
    explicit = {c: frame[c].to_numpy(dtype=object).tolist() for c in table.header if c != "model"}
    return _model_rows(
        frame["model"].tolist(), explicit, file=table.file, rows=rows, params_column=params_column,
        problems=problems, notes=notes,
    )


def read_models_file(path: Path | str) -> tuple[pd.DataFrame, list[str]]:
    """Read a model-metadata file.

    Parameters
    ----------
    path : path-like
        CSV with a ``model`` column and optional ``parameters_b`` (or
        ``params_b_from_name``; billions, blank = unknown), ``family`` and
        ``access`` (``open_weight``/``proprietary``/``unknown``). Other columns
        are kept in ``metadata`` as strings. A parameter count that is not a
        number (``"8x7B (MoE)"``) is kept as ``metadata["parameters_label"]``.

    Returns
    -------
    models : DataFrame
        Columns ``MODEL_COLUMNS`` plus ``source``. Blank family/access/size are
        guessed from the name (:func:`annotate.loaders.model_names.infer_from_model_name`)
        and the guessed fields listed in ``metadata["inferred"]``.
    notes : list of str

    Raises
    ------
    LoadError
        Every problem found, each with file, row and column.
    """
    problems, notes = _Problems(), []
    frame = _read_models(Path(path), problems, notes)
    problems.raise_if_any()
    return frame, notes


# --- response files -------------------------------------------------------------


@dataclass
class _Responses:
    """Observed responses of one file, before cross-file checks."""

    file: str
    frame: pd.DataFrame  # dataset, external_id, model, credit, row
    questions: pd.DataFrame | None  # QUESTION_COLUMNS + source, from attributes in the file (long/jsonl)
    model_first_row: dict[str, int]  # model -> first row (wide: header row 1) for error messages
    model_column: bool  # True: models are values of a "model" column; False: header names (wide)


def _read_wide(path: Path, problems: _Problems, notes: list[str], *, dataset: str, id_column: str) -> _Responses | None:
    table = _read_csv(path, problems)
    if table is None:
        return None
    header, file = table.header, table.file
    if header[0] != id_column:
        message = WRONG_FIRST_COLUMN.format(expected=id_column, found=_fmt_names(header))
        problems.add(file, message, row=1, column=header[0])
        return None
    if len(header) < 2:
        problems.add(file, NO_MODEL_COLUMNS.format(expected=id_column, found=_fmt_names(header)), row=1)
        return None
    frame = table.frame.apply(lambda s: s.str.strip())
    rows = table.rows
    blank_ids = np.flatnonzero((frame[id_column] == "").to_numpy())
    for position in blank_ids:
        problems.add(file, BLANK_QUESTION_ID, row=int(rows[position]), column=id_column)
    if len(blank_ids):
        return None
    frame, rows = _dedupe(
        frame, rows, key=[id_column], compare=header[1:], file=file, problems=problems, notes=notes,
        key_label="question id",
    )
    models = np.array(header[1:], dtype=object)
    texts = frame[header[1:]].to_numpy(dtype=object)  # (n_questions, n_models)
    number, blank, bad = _parse_credit_strings(texts.ravel())
    if bad.any():
        n_models = len(models)
        flat_rows = np.repeat(rows, n_models)
        flat_columns = np.tile(models, len(rows))
        _report_credits(problems, file, bad, texts.ravel(), number, flat_rows, flat_columns)
        return None
    observed = np.flatnonzero(~blank)
    q_index, m_index = np.divmod(observed, len(models))
    ids = frame[id_column].to_numpy(dtype=object)
    responses = pd.DataFrame(
        {
            "dataset": dataset,
            "external_id": ids[q_index],
            "model": models[m_index],
            "credit": number[observed],
            "row": rows[q_index],
        }
    )
    questions = pd.DataFrame(
        {
            "dataset": dataset,
            "external_id": ids,
            "subject": None,
            "text": "",
            "options": [[] for _ in range(len(ids))],
            "reference_answer": "",
            "metadata": [{} for _ in range(len(ids))],
            "source": _source(file, rows).to_numpy(dtype=object),
        }
    )
    return _Responses(file, responses, questions, {m: 1 for m in header[1:]}, model_column=False)


def _consolidate(
    keys: pd.DataFrame, values: np.ndarray, rows: np.ndarray, *, column: str, id_column: str, is_subject: bool,
    file: str, problems: _Problems,
) -> pd.DataFrame:
    """First non-blank value per question key; report keys given two different values."""
    sub = keys.assign(value=values, row=rows)
    sub = sub.loc[sub["value"] != ""]
    first = sub.drop_duplicates(["dataset", "external_id"])
    variants = sub.drop_duplicates(["dataset", "external_id", "value"])
    clash = variants.loc[variants.duplicated(["dataset", "external_id"])]
    if len(clash):
        clash = clash.merge(first, on=["dataset", "external_id"], suffixes=("", "_first"))
        for record in clash.itertuples(index=False):
            if is_subject:
                message = TWO_SUBJECTS.format(
                    question_id=record.external_id, a=record.value_first, b=record.value, first=record.row_first,
                    row=record.row,
                )
            else:
                message = ATTRIBUTE_CONFLICT.format(
                    question_id=record.external_id, column=column, a=record.value_first, first=record.row_first,
                    b=record.value, row=record.row,
                )
            problems.add(file, message, row=int(record.row), column=column)
    return first[["dataset", "external_id", "value"]]


def _assemble_long(
    file: str,
    frame: pd.DataFrame,
    texts: np.ndarray,
    number: np.ndarray,
    blank: np.ndarray,
    bad: np.ndarray,
    rows: np.ndarray,
    *,
    dataset: str | None,
    id_column: str,
    subject: str | None,
    keep_columns: list[str],
    problems: _Problems,
    notes: list[str],
) -> _Responses | None:
    """Shared by long CSV/TSV and JSON Lines: ``frame`` holds stripped strings."""
    ok = True
    for column, message in ((id_column, BLANK_QUESTION_ID), ("model", BLANK_MODEL)):
        for position in np.flatnonzero((frame[column] == "").to_numpy()):
            problems.add(file, message, row=int(rows[position]), column=column)
            ok = False
    ds = frame["dataset"] if "dataset" in frame.columns else pd.Series("", index=frame.index, dtype=object)
    if dataset is not None:
        ds = ds.where(ds != "", dataset)
    ok = _check_datasets(ds, rows, file=file, problems=problems) and ok
    _report_credits(problems, file, bad, texts, number, rows, np.full(len(rows), "credit", dtype=object))
    if not ok or bad.any():
        return None
    keys = pd.DataFrame({"dataset": ds.to_numpy(dtype=object), "external_id": frame[id_column].to_numpy(dtype=object)})
    # Question attributes repeated on every row must agree within a question.
    attributes = [(subject, "subject")] if subject else []
    attributes += [(c, c) for c in ("question", "options_json", "answer") if c in frame.columns]
    attributes += [(c, c) for c in keep_columns]
    questions = keys.drop_duplicates().reset_index(drop=True)
    first_rows = keys.assign(row=rows).drop_duplicates(["dataset", "external_id"])["row"].to_numpy()
    questions["source"] = _source(file, first_rows).to_numpy(dtype=object)
    consolidated: dict[str, pd.Series] = {}
    for column, role in attributes:
        first = _consolidate(
            keys, frame[column].to_numpy(dtype=object), rows, column=column, id_column=id_column,
            is_subject=role == "subject", file=file, problems=problems,
        )
        merged = questions[["dataset", "external_id"]].merge(first, on=["dataset", "external_id"], how="left")
        consolidated[role] = merged["value"].fillna("")
    n = len(questions)
    options: list[list[str]] = [[] for _ in range(n)]
    if "options_json" in consolidated:
        for i, text in enumerate(consolidated["options_json"].tolist()):
            parsed = _parse_options(text)
            if parsed is None:
                problems.add(file, BAD_OPTIONS.format(value=text), row=int(first_rows[i]), column="options_json")
            else:
                options[i] = parsed
    questions["subject"] = consolidated["subject"].replace("", None).to_numpy(dtype=object) if subject else None
    questions["text"] = consolidated["question"].to_numpy(dtype=object) if "question" in consolidated else ""
    questions["options"] = options
    questions["reference_answer"] = consolidated["answer"].to_numpy(dtype=object) if "answer" in consolidated else ""
    if keep_columns:
        kept = np.column_stack([consolidated[c].to_numpy(dtype=object) for c in keep_columns])
        questions["metadata"] = [{c: (v if v != "" else None) for c, v in zip(keep_columns, values)} for values in kept]
    else:
        questions["metadata"] = [{} for _ in range(n)]
    questions = questions[QUESTION_COLUMNS + ["source"]]
    observed = ~blank
    responses = pd.DataFrame(
        {
            "dataset": keys["dataset"].to_numpy(dtype=object)[observed],
            "external_id": keys["external_id"].to_numpy(dtype=object)[observed],
            "model": frame["model"].to_numpy(dtype=object)[observed],
            "credit": number[observed],
            "row": rows[observed],
        }
    )
    kept_rows = responses["row"].to_numpy()
    responses, kept_rows = _dedupe(
        responses, kept_rows, key=["dataset", "external_id", "model"], compare=["credit"], file=file,
        problems=problems, notes=notes, key_label="question id and model",
    )
    first_model_rows = pd.Series(rows).groupby(frame["model"].to_numpy(dtype=object), sort=False).first()
    model_first_row = {str(k): int(v) for k, v in first_model_rows.items()}
    return _Responses(file, responses, questions, model_first_row, model_column=True)


def _attribute_columns(
    available: Sequence[str], subject_column: str | None, keep_columns: list[str], required: bool
) -> tuple[str | None, list[str], list[str]]:
    """(subject column, kept columns, required columns) of a long/jsonl file.

    With a questions file (``required=False``) question attributes in the
    responses file are optional (and checked against the questions file).
    """
    if subject_column:
        subject = subject_column if (required or subject_column in available) else None
    else:
        subject = "subject" if "subject" in available else None
    keep = keep_columns if required else [c for c in keep_columns if c in available]
    must = ([subject_column] if (required and subject_column) else []) + (keep_columns if required else [])
    return subject, keep, must


def _read_long(path: Path, problems: _Problems, notes: list[str], *, dataset: str | None, id_column: str,
               subject_column: str | None, keep_columns: list[str], attributes_required: bool) -> _Responses | None:
    table = _read_csv(path, problems)
    if table is None:
        return None
    subject, keep_columns, must = _attribute_columns(table.header, subject_column, keep_columns, attributes_required)
    required = [id_column, "model", "credit"] + must
    optional = [c for c in ("dataset", "subject", "question", "options_json", "answer") if c not in required]
    if not _check_columns(table, required, optional, problems):
        return None
    used = [id_column, "model", "credit"] + ([subject] if subject else []) + keep_columns
    used += [c for c in ("dataset", "question", "options_json", "answer") if c in table.header]
    _note_ignored(table, used, notes)
    frame = pd.DataFrame({c: table.frame[c].str.strip() for c in used if c in table.header})
    texts = frame["credit"].to_numpy(dtype=object)
    number, blank, bad = _parse_credit_strings(texts)
    return _assemble_long(
        table.file, frame, texts, number, blank, bad, table.rows, dataset=dataset, id_column=id_column,
        subject=subject, keep_columns=keep_columns, problems=problems, notes=notes,
    )


def _json_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value)


def _read_jsonl(path: Path, problems: _Problems, notes: list[str], *, dataset: str | None, id_column: str,
                subject_column: str | None, keep_columns: list[str], attributes_required: bool) -> _Responses | None:
    file = path.name
    text = _decode(path, problems)
    if text is None:
        return None
    required = [id_column, "model", "credit"]
    must = ([subject_column] if (attributes_required and subject_column) else []) + (
        keep_columns if attributes_required else []
    )
    subject = subject_column or "subject"
    known = [id_column, "model", "dataset", subject, "question", "options_json", "answer"]
    wanted = list(dict.fromkeys(known + keep_columns))
    columns: dict[str, list[str]] = {c: [] for c in wanted}
    credit_texts: list[str] = []
    credit_numbers: list[float] = []
    credit_bad: list[bool] = []
    rows: list[int] = []
    seen_keys: set[str] = set()
    ok = True
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(file, JSON_INVALID.format(detail=exc.msg), row=line_number)
            ok = False
            continue
        if not isinstance(record, dict):
            problems.add(file, JSON_NOT_OBJECT.format(kind=type(record).__name__), row=line_number)
            ok = False
            continue
        missing = [k for k in required + must if k not in record]
        for key in missing:
            expected = ", ".join(repr(k) for k in required + must)
            problems.add(file, JSON_MISSING_KEY.format(key=key, expected=expected), row=line_number, column=key)
        if missing:
            ok = False
            continue
        seen_keys.update(record)
        for key in (id_column, "model"):
            value = record[key]
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                problems.add(file, JSON_BAD_ID.format(key=key, value=value), row=line_number, column=key)
                ok = False
        for column in wanted:
            columns[column].append(_json_text(record.get(column)))
        credit = record["credit"]
        if credit is None:
            text, number, bad = "", math.nan, False
        elif isinstance(credit, bool) or not isinstance(credit, (int, float)):
            text, number, bad = _json_text(credit), math.nan, True
        else:
            text, number = repr(credit), float(credit)
            bad = not math.isfinite(number) or number < 0.0 or number > 1.0
        credit_texts.append(text)
        credit_numbers.append(number)
        credit_bad.append(bad)
        rows.append(line_number)
    if not ok:
        return None
    ignored = sorted(seen_keys - set(wanted) - {"credit"})
    if ignored:
        notes.append(IGNORED_COLUMNS_NOTE.format(file=file, columns=_fmt_list(ignored)))
    frame = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in columns.items()})
    number = np.asarray(credit_numbers, dtype=np.float64)
    bad = np.asarray(credit_bad, dtype=bool)
    texts = np.asarray(credit_texts, dtype=object)
    blank = (texts == "") & ~bad
    subject, keep_columns, _ = _attribute_columns(sorted(seen_keys), subject_column, keep_columns, attributes_required)
    return _assemble_long(
        file, frame, texts, number, blank, bad, np.asarray(rows, dtype=np.int64), dataset=dataset,
        id_column=id_column, subject=subject, keep_columns=keep_columns, problems=problems, notes=notes,
    )


# --- putting files together -----------------------------------------------------


def _combine(
    responses: _Responses,
    questions_file: pd.DataFrame | None,
    questions_name: str | None,
    models_file: pd.DataFrame | None,
    models_name: str | None,
    *,
    id_column: str,
    problems: _Problems,
    notes: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    file = responses.file
    frame = responses.frame
    # Questions.
    if questions_file is not None:
        known = questions_file[["dataset", "external_id"]].assign(_known=True)
        used = responses.questions[["dataset", "external_id", "source"]]
        check = used.merge(known, on=["dataset", "external_id"], how="left")
        for record in check.loc[check["_known"].isna()].itertuples(index=False):
            problems.add(
                file, UNKNOWN_QUESTION.format(question_id=record.external_id, other_file=questions_name),
                row=int(record.source.rsplit(":", 1)[1]), column=id_column,
            )
        if responses.model_column:
            both = responses.questions.merge(questions_file, on=["dataset", "external_id"], suffixes=("", "_file"))
            for column in ("subject", "text", "reference_answer"):
                given = both[column].fillna("").astype(str)
                stored = both[f"{column}_file"].fillna("").astype(str)
                clash = both.loc[((given != "") & (stored != "") & (given != stored)).to_numpy()]
                label = {"text": "question", "reference_answer": "answer"}.get(column, column)
                for record in clash.itertuples(index=False):
                    a, b = getattr(record, column), getattr(record, f"{column}_file")
                    other_file, other_row = record.source_file.rsplit(":", 1)
                    problems.add(
                        file, QUESTIONS_FILE_CONFLICT.format(
                            question_id=record.external_id, column=label, a=a, b=b, other_file=other_file,
                            other_row=other_row,
                        ),
                        row=int(record.source.rsplit(":", 1)[1]), column=label,
                    )
        unused = len(questions_file) - questions_file.merge(
            responses.questions[["dataset", "external_id"]], on=["dataset", "external_id"]
        ).shape[0]
        if unused:
            notes.append(UNUSED_NOTE.format(file=questions_name, count=unused, what="question(s)"))
        questions = questions_file
    else:
        questions = responses.questions
    # Models.
    names = list(responses.model_first_row)  # every model named in the file, observed or not
    if models_file is not None:
        known_models = set(models_file["name"])
        for name in names:
            if name not in known_models:
                problems.add(
                    file, UNKNOWN_MODEL.format(model=name, other_file=models_name),
                    row=responses.model_first_row.get(name), column="model" if responses.model_column else name,
                )
        unused = len(known_models - set(names))
        if unused:
            notes.append(UNUSED_NOTE.format(file=models_name, count=unused, what="model(s)"))
        models = models_file
    else:
        models = _model_rows(names, {}, file=file, rows=None, params_column=None, problems=problems, notes=notes)
    if len(frame) == 0:
        problems.add(file, NO_RESPONSES)
    out = frame[["dataset", "external_id", "model", "credit"]].copy()
    out["source"] = _source(file, frame["row"].to_numpy()).to_numpy(dtype=object)
    return questions.reset_index(drop=True), models.reset_index(drop=True), out[RESPONSE_COLUMNS]


def _parse(
    file_format: str,
    responses: Path | str,
    *,
    dataset: str | None,
    questions: Path | str | None,
    models: Path | str | None,
    subject_column: str | None,
    keep_columns: Sequence[str],
    id_column: str,
    notes: list[str] | None = None,
) -> ParsedResponseSet:
    keep = _validate_common(dataset, subject_column, keep_columns, id_column)
    if file_format == "wide" and dataset is None:
        raise ValueError("dataset must be given for a wide file (it has no dataset column), got None")
    problems, notes = _Problems(), list(notes or [])
    responses_path = Path(responses)
    questions_path = Path(questions) if questions is not None else None
    models_path = Path(models) if models is not None else None
    question_frame = (
        _read_questions(questions_path, problems, notes, dataset=dataset, subject_column=subject_column,
                        keep_columns=keep, id_column=id_column)
        if questions_path else None
    )
    model_frame = _read_models(models_path, problems, notes) if models_path else None
    # Attributes the questions file provides are optional in the responses file.
    reader = {"wide": None, "long": _read_long, "jsonl": _read_jsonl}[file_format]
    if reader is None:
        parsed = _read_wide(responses_path, problems, notes, dataset=dataset, id_column=id_column)
    else:
        parsed = reader(responses_path, problems, notes, dataset=dataset, id_column=id_column,
                        subject_column=subject_column, keep_columns=keep, attributes_required=questions_path is None)
    problems.raise_if_any()
    if (questions_path and question_frame is None) or (models_path and model_frame is None) or parsed is None:
        raise AssertionError("a reader returned nothing without reporting a problem")  # pragma: no cover
    question_table, model_table, response_table = _combine(
        parsed, question_frame, questions_path.name if questions_path else None,
        model_frame, models_path.name if models_path else None,
        id_column=id_column, problems=problems, notes=notes,
    )
    problems.raise_if_any()
    if len(question_table) and not question_table["subject"].map(lambda v: isinstance(v, str) and v != "").any():
        notes.append(NO_SUBJECT_NOTE.format(file=(questions_path or responses_path).name))
    return ParsedResponseSet(
        questions=question_table,
        models=model_table,
        responses=response_table,
        file_format=file_format,
        source_files=[p for p in (responses_path, questions_path, models_path) if p is not None],
        notes=notes,
        options={
            "dataset": dataset,
            "subject_column": subject_column,
            "keep_columns": keep,
            "id_column": id_column,
        },
    )


_PARAMETERS_DOC = """
    dataset : str or None
        Dataset name for every response (wide) or for rows without a
        ``dataset`` value (long, jsonl). Required for a wide file.
    questions : path-like or None, default None
        Question-metadata file (see :func:`read_questions_file`). When given,
        every response's question must be in it.
    models : path-like or None, default None
        Model-metadata file (see :func:`read_models_file`). When given, every
        model must be in it; otherwise models are built from their names with
        guessed family/access/size (listed in ``metadata["inferred"]``).
    subject_column : str or None, default None
        Column holding the subject (MMLU-Pro: ``"category"``); read from the
        questions file when there is one, else from the responses file.
    keep_columns : sequence of str, default ()
        Optional question columns stored into ``Question.metadata``.
    id_column : str, default "question_id"
"""


def parse_wide(
    responses: Path | str,
    *,
    dataset: str,
    questions: Path | str | None = None,
    models: Path | str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
) -> ParsedResponseSet:
    """Parse a wide CSV: the question id column, then one credit column per model.

    Parameters
    ----------
    responses : path-like
        CSV of shape (n_questions rows, 1 + n_models columns); a cell is a
        credit in [0, 1], blank = not observed.
    {params}
    Returns
    -------
    ParsedResponseSet
        ``file_format="wide"``; ``responses`` has one row per non-blank cell,
        in file order (question by question, models left to right).

    Raises
    ------
    LoadError
        Every problem found (up to ``MAX_PROBLEMS``), each with file, row and column.
    ValueError
        If an argument is malformed (names the parameter).

    References
    ----------
    The file is the response matrix :math:`A` (Section 2.2) or :math:`A_c`
    (Section 2.4) of the EIP paper, questions as rows.
    """
    return _parse("wide", responses, dataset=dataset, questions=questions, models=models,
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column)


def parse_long(
    responses: Path | str,
    *,
    dataset: str | None = None,
    questions: Path | str | None = None,
    models: Path | str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
) -> ParsedResponseSet:
    """Parse a long CSV or TSV: one row per (question, model) with its credit.

    Parameters
    ----------
    responses : path-like
        Columns ``question_id``, ``model``, ``credit`` (in [0, 1], blank = not
        observed) and optionally ``dataset``, the subject column, ``question``,
        ``options_json``, ``answer`` and kept columns; question attributes
        repeated on several rows must agree.
    {params}
    Returns
    -------
    ParsedResponseSet
        ``file_format="long"``.

    Raises
    ------
    LoadError
        Every problem found, each with file, row and column.
    ValueError
        If an argument is malformed (names the parameter).
    """
    return _parse("long", responses, dataset=dataset, questions=questions, models=models,
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column)


def parse_jsonl(
    responses: Path | str,
    *,
    dataset: str | None = None,
    questions: Path | str | None = None,
    models: Path | str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
) -> ParsedResponseSet:
    """Parse JSON Lines: one object per line with the keys of the long format.

    Parameters
    ----------
    responses : path-like
        One JSON object per line; ``credit`` a JSON number in [0, 1] or
        ``null`` (not observed); ids strings or integers. ``Problem.row`` is
        the line number.
    {params}
    Returns
    -------
    ParsedResponseSet
        ``file_format="jsonl"``.

    Raises
    ------
    LoadError
        Every problem found, each with file, row and key.
    ValueError
        If an argument is malformed (names the parameter).
    """
    return _parse("jsonl", responses, dataset=dataset, questions=questions, models=models,
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column)


for _function in (parse_wide, parse_long, parse_jsonl):
    _function.__doc__ = _function.__doc__.replace("{params}", _PARAMETERS_DOC.strip("\n") + "\n")


def detect_format(path: Path | str) -> tuple[str, str]:
    """Guess the format of a responses file; returns (format, reason).

    ``.jsonl``/``.ndjson`` -> "jsonl"; otherwise a header with both ``model``
    and ``credit`` columns -> "long", anything else -> "wide".
    """
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl", "file extension"
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as handle:
            first = handle.readline()
    except OSError:
        return "wide", "default (file unreadable)"
    names = {n.strip() for n in re.split(r"[,\t;]", first)}
    if {"model", "credit"} <= names:
        return "long", "header (model and credit columns)"
    return "wide", "header (no model and credit columns)"


def parse_files(
    *,
    responses: Path | str,
    file_format: str = "auto",
    dataset: str | None = None,
    questions: Path | str | None = None,
    models: Path | str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
) -> ParsedResponseSet:
    """Parse a responses file of any tabular format, with optional metadata files.

    Parameters
    ----------
    responses : path-like
    file_format : {"auto", "wide", "long", "jsonl"}, default "auto"
        "auto" uses :func:`detect_format` and says so in the notes.
    dataset, questions, models, subject_column, keep_columns, id_column
        As in :func:`parse_wide`.

    Returns
    -------
    ParsedResponseSet

    Raises
    ------
    LoadError
        Every problem found, each with file, row and column.
    ValueError
        If ``file_format`` is not one of FORMATS or another argument is malformed.
    """
    if file_format not in FORMATS:
        raise ValueError(f"file_format must be one of {FORMATS}, got {file_format!r}")
    notes: list[str] = []
    if file_format == "auto":
        file_format, reason = detect_format(responses)
        notes.append(FORMAT_DETECTED_NOTE.format(file=Path(responses).name, file_format=file_format, reason=reason))
    return _parse(file_format, responses, dataset=dataset, questions=questions, models=models,
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column, notes=notes)


def parse_folder(
    folder: Path | str,
    *,
    dataset: str,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
) -> ParsedResponseSet:
    """Parse a folder in the MMLU-Pro layout.

    The folder holds ``responses_binary.csv`` (wide) and, optionally,
    ``questions.csv`` and ``models.csv``; other files are ignored.

    Parameters
    ----------
    folder : path-like
    dataset : str
        Dataset name of every question (e.g. "MMLU-Pro").
    subject_column, keep_columns, id_column
        As in :func:`parse_wide`; MMLU-Pro uses ``subject_column="category"``.

    Returns
    -------
    ParsedResponseSet
        ``file_format="wide"``.

    Raises
    ------
    LoadError
        If the folder or ``responses_binary.csv`` is missing, or any file has a problem.
    ValueError
        If an argument is malformed (names the parameter).

    Examples
    --------
    >>> parsed = parse_folder("../shared/data/mmlu-pro", dataset="MMLU-Pro",
    ...                       subject_column="category")  # doctest: +SKIP
    """
    folder = Path(folder)
    responses = folder / FOLDER_RESPONSES
    if not responses.is_file():
        raise LoadError([Problem(file=FOLDER_RESPONSES, message=FILE_NOT_FOUND.format(path=responses))])
    questions = folder / FOLDER_QUESTIONS
    models = folder / FOLDER_MODELS
    return parse_wide(
        responses, dataset=dataset, questions=questions if questions.is_file() else None,
        models=models if models.is_file() else None, subject_column=subject_column,
        keep_columns=keep_columns, id_column=id_column,
    )
