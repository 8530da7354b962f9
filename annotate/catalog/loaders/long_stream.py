"""Long response files (CSV/TSV, JSON Lines) read a chunk of records at a time into
:class:`~annotate.catalog.loaders.dense.DenseCells`.

A long file names one (question, model, credit) cell per record, in any order,
so the matrix is known only once the whole file has been read. It is read in
two passes of ``CHUNK_ROWS`` records each, and never held whole:

pass 1
    Every check the whole-file reader made, a chunk at a time: blank question
    ids, model names and datasets, bad credits (each listed with file, row and
    column, in the same order and under the same cap), and the question
    attributes (subject, text, options, answer, kept columns) repeated on
    several records, which must agree. It keeps what is one per question or
    per model: the distinct question keys and model names in the order the
    file first names them, their first rows, the first non-blank value of each
    attribute.
pass 2
    The credits into one dense float64 matrix (questions x models, NaN = not
    observed). A (question, model) cell named again is an exact duplicate
    (ignored, noted) or a conflict (refused with both rows); the rows of the
    first records of such cells are found by a third pass, which only a file
    with duplicates needs. The matrix then goes into ``DenseCells`` blocks
    (questions in the order of their first response, models likewise: the
    matrix the long form gave), credits within 1e-12 of 0 or 1 snapped.

Peak memory is a few chunks, the float64 matrix (8 bytes a cell) and the
tables of questions and models; never one Python object per record.

CSV/TSV
    Decoded and its header checked as before (:func:`_read_csv_head`), then
    read with ``pandas.read_csv(chunksize=...)``, every cell a str. A row the
    CSV parser refuses is reported by the whole-file reader
    (:func:`_read_csv`), as it always was.
JSON Lines
    Split into lines as ``str.splitlines`` splits the whole text; a line that
    is not a JSON object with the required keys is a problem (pass 1).

References
----------
The cells are the response matrix :math:`A` (Section 2.2) or :math:`A_c`
(Section 2.4) of the EIP paper.
"""
from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders._tabular_common import (
    ATTRIBUTE_CONFLICT,
    BAD_OPTIONS,
    BLANK_DATASET,
    BLANK_MODEL,
    BLANK_QUESTION_ID,
    CONFLICTING_DUPLICATE,
    EXACT_DUPLICATES_NOTE,
    JSON_BAD_ID,
    JSON_INVALID,
    JSON_MISSING_KEY,
    JSON_NOT_OBJECT,
    MAX_PROBLEMS,
    NO_DATASET,
    NUL_CHARACTER,
    TWO_SUBJECTS,
    _credit_message,
    _csv_options,
    _CsvHead,
    _parse_credit_strings,
    _parse_options,
    _Problems,
    _read_csv,
    _source,
)
from annotate.catalog.loaders.base import QUESTION_COLUMNS
from annotate.catalog.loaders.dense import DenseCells
from annotate.catalog.loaders.wide_stream import _snap
from annotate.core import csv_error_words, loads_bounded, max_json_depth

if TYPE_CHECKING:
    import pandas as pd

#: Records (rows of a CSV, lines of JSON Lines) read at a time.
CHUNK_ROWS = 100_000
#: About this many cells per dense block (its temporaries are a few times its float64 size).
BLOCK_CELLS = 1 << 18
_SEP = "\x00"  # joins dataset and question id into one key (refused in the text of either)


@dataclass
class LongChunk:
    """One chunk of records: stripped str columns and the parsed credits, aligned."""

    columns: dict[str, np.ndarray]  # object arrays of str
    rows: np.ndarray  # int64, file row (CSV: header = 1) or line number (JSON Lines)
    texts: np.ndarray  # credit as written (stripped)
    number: np.ndarray  # float64
    blank: np.ndarray  # bool: not observed
    bad: np.ndarray  # bool: refused


Chunks = Callable[[], Iterator[LongChunk]]


class _Keys:
    """Distinct keys in the order the file first names them, with their first rows."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.first_row = np.empty(0, dtype=np.int64)
        self.first_observed = np.empty(0, dtype=np.int64)

    def add(self, keys: np.ndarray, rows: np.ndarray, observed: np.ndarray) -> np.ndarray:
        """Global codes of ``keys``; new keys appended."""
        import pandas as pd
        codes, uniques = pd.factorize(keys)
        index = self.index
        glob = np.fromiter((index.setdefault(k, len(index)) for k in uniques.tolist()), dtype=np.int64,
                           count=len(uniques))
        n_new = len(index) - len(self.first_row)
        if n_new:
            self.first_row = np.concatenate([self.first_row, np.full(n_new, -1, dtype=np.int64)])
            self.first_observed = np.concatenate([self.first_observed, np.full(n_new, -1, dtype=np.int64)])
        codes = glob[codes]
        _fill_first(self.first_row, codes, rows)
        _fill_first(self.first_observed, codes[observed], rows[observed])
        return codes

    def names(self) -> np.ndarray:
        return np.array(list(self.index), dtype=object)


def _fill_first(target: np.ndarray, codes: np.ndarray, rows: np.ndarray) -> None:
    """``target[c]`` = the row of the first occurrence of each code ``c`` not set yet (-1)."""
    if not len(codes):
        return
    unique, first = np.unique(codes, return_index=True)
    unset = target[unique] < 0
    target[unique[unset]] = rows[first[unset]]


@dataclass
class _Attribute:
    """The first non-blank value of one attribute per question, and the values that disagree."""

    first_value: dict[int, str] = field(default_factory=dict)
    first_row: dict[int, int] = field(default_factory=dict)
    seen: set[tuple[int, str]] = field(default_factory=set)
    conflicts: list[tuple[int, int, str]] = field(default_factory=list)  # (row, question, value)

    def add(self, questions: np.ndarray, values: np.ndarray, rows: np.ndarray) -> None:
        import pandas as pd
        given = values != ""
        if not given.any():
            return
        sub = pd.DataFrame({"q": questions[given], "v": values[given], "r": rows[given]}).drop_duplicates(["q", "v"])
        first_value, seen = self.first_value, self.seen
        for q, v, r in zip(sub["q"].tolist(), sub["v"].tolist(), sub["r"].tolist()):
            if (q, v) in seen:
                continue
            seen.add((q, v))
            if q not in first_value:
                first_value[q] = v
                self.first_row[q] = r
            else:
                self.conflicts.append((r, q, v))


@dataclass
class _Capped:
    """The first ``MAX_PROBLEMS`` items of one kind of problem, and how many there were."""

    items: list[tuple] = field(default_factory=list)
    count: int = 0

    def extend(self, items: list[tuple]) -> None:
        self.count += len(items)
        room = MAX_PROBLEMS - len(self.items)
        if room > 0:
            self.items.extend(items[:room])

    def report(self, problems: _Problems, add: Callable[[tuple], None]) -> None:
        """Each kept item through ``add`` while the list has room; the rest counted."""
        room = max(MAX_PROBLEMS - len(problems.items), 0)
        for item in self.items[:room]:
            add(item)
        problems.dropped += max(self.count - room, 0)


@dataclass
class LongResult:
    questions: pd.DataFrame  # QUESTION_COLUMNS + source
    model_first_row: dict[str, int]
    cells: DenseCells


class LongReader:
    """Both passes over the chunks of one long file (see the module notes).

    Parameters
    ----------
    chunks : callable
        Returns a fresh iterator of :class:`LongChunk` over the whole file.
    file : str
    dataset : str or None
        Dataset of records without one.
    id_column : str
    candidates : list of str
        Attribute columns to follow in pass 1 (those used are chosen after it).
    problems : _Problems
    notes : list of str
    """

    def __init__(self, chunks: Chunks, *, file: str, dataset: str | None, id_column: str,
                 candidates: list[str], problems: _Problems, notes: list[str]) -> None:
        self.chunks = chunks
        self.file = file
        self.dataset = dataset
        self.id_column = id_column
        self.problems = problems
        self.notes = notes
        self.questions = _Keys()
        self.models = _Keys()
        self.q_datasets: list[str] = []
        self.q_ids: list[str] = []
        self.attributes = {c: _Attribute() for c in dict.fromkeys(candidates)}
        self.blank_ids = _Capped()
        self.blank_models = _Capped()
        self.blank_datasets = _Capped()
        self.bad_credits = _Capped()
        self.n_records = 0

    # -- pass 1 -------------------------------------------------------------------------------

    def _keys(self, chunk: LongChunk) -> tuple[np.ndarray, np.ndarray]:
        """(datasets, question keys) of a chunk's records."""
        n = len(chunk.rows)
        ds = chunk.columns.get("dataset")
        if ds is None:
            ds = np.full(n, "", dtype=object)
        if self.dataset is not None:
            ds = np.where(ds != "", ds, self.dataset).astype(object)
        return ds, ds + _SEP + chunk.columns[self.id_column]

    def check(self) -> None:
        """Pass 1: checks, question keys, model names, attributes."""
        for chunk in self.chunks():
            rows, columns = chunk.rows, chunk.columns
            self.n_records += len(rows)
            self.blank_ids.extend([(r,) for r in rows[columns[self.id_column] == ""].tolist()])
            self.blank_models.extend([(r,) for r in rows[columns["model"] == ""].tolist()])
            ds, keys = self._keys(chunk)
            self.blank_datasets.extend([(r,) for r in rows[ds == ""].tolist()])
            where = np.flatnonzero(chunk.bad)
            self.bad_credits.extend(list(zip(chunk.texts[where].tolist(), chunk.number[where].tolist(),
                                             rows[where].tolist())))
            observed = ~chunk.blank
            n_before = len(self.questions.index)
            codes = self.questions.add(keys, rows, observed)
            if len(self.questions.index) > n_before:
                new = np.unique(codes[codes >= n_before], return_index=True)[1]
                positions = np.flatnonzero(codes >= n_before)[new]
                self.q_datasets.extend(ds[positions].tolist())
                self.q_ids.extend(columns[self.id_column][positions].tolist())
            self.models.add(columns["model"], rows, observed)
            for column, attribute in self.attributes.items():
                if column in columns:
                    attribute.add(codes, columns[column], rows)

    def report_checks(self) -> bool:
        """The problems of pass 1, in the order the whole-file reader listed them; True if none."""
        problems, file = self.problems, self.file
        self.blank_ids.report(problems, lambda i: problems.add(file, BLANK_QUESTION_ID, row=i[0],
                                                              column=self.id_column))
        self.blank_models.report(problems, lambda i: problems.add(file, BLANK_MODEL, row=i[0], column="model"))
        if self.n_records and self.blank_datasets.count == self.n_records:
            problems.add(file, NO_DATASET, column="dataset")
        else:
            self.blank_datasets.report(problems, lambda i: problems.add(file, BLANK_DATASET, row=i[0],
                                                                       column="dataset"))
        self.bad_credits.report(problems, lambda i: problems.add(file, _credit_message(str(i[0]), float(i[1])),
                                                                row=int(i[2]), column="credit"))
        return not (self.blank_ids.count or self.blank_models.count or self.blank_datasets.count
                    or self.bad_credits.count)

    def questions_table(self, attributes: list[tuple[str, str]], subject: str | None,
                        keep_columns: list[str]) -> pd.DataFrame:
        """The questions (first-named order), attributes consolidated; conflicts and bad options
        listed as problems."""
        import pandas as pd
        problems, file = self.problems, self.file
        first_rows = self.questions.first_row
        n = len(first_rows)
        for column, role in attributes:
            attribute = self.attributes[column]
            for row, q, value in attribute.conflicts:
                if role == "subject":
                    message = TWO_SUBJECTS.format(question_id=self.q_ids[q], a=attribute.first_value[q], b=value,
                                                  first=attribute.first_row[q], row=row)
                else:
                    message = ATTRIBUTE_CONFLICT.format(question_id=self.q_ids[q], column=column,
                                                        a=attribute.first_value[q], first=attribute.first_row[q],
                                                        b=value, row=row)
                problems.add(file, message, row=row, column=column)
        consolidated = {role: [self.attributes[column].first_value.get(q, "") for q in range(n)]
                        for column, role in attributes}
        questions = pd.DataFrame({"dataset": np.array(self.q_datasets, dtype=object),
                                  "external_id": np.array(self.q_ids, dtype=object)})
        questions["source"] = _source(file, first_rows).to_numpy(dtype=object)
        options: list[list[str]] = [[] for _ in range(n)]
        if "options_json" in consolidated:
            limit = max_json_depth()  # read once, not once a row
            for i, text in enumerate(consolidated["options_json"]):
                parsed = _parse_options(text, limit)
                if parsed is None:
                    problems.add(file, BAD_OPTIONS.format(value=text), row=int(first_rows[i]), column="options_json")
                else:
                    options[i] = parsed
        questions["subject"] = (np.array([v if v != "" else None for v in consolidated["subject"]], dtype=object)
                                if subject else None)
        questions["text"] = np.array(consolidated["question"], dtype=object) if "question" in consolidated else ""
        questions["options"] = options
        questions["reference_answer"] = (np.array(consolidated["answer"], dtype=object)
                                         if "answer" in consolidated else "")
        if keep_columns:
            kept = zip(*(consolidated[c] for c in keep_columns))
            questions["metadata"] = [{c: (v if v != "" else None) for c, v in zip(keep_columns, values)}
                                     for values in kept]
        else:
            questions["metadata"] = [{} for _ in range(n)]
        return questions[[*QUESTION_COLUMNS, "source"]]

    # -- pass 2 -------------------------------------------------------------------------------

    def fill(self) -> DenseCells:
        """Pass 2 (and 3 when a cell is named twice): the credits into ``DenseCells``."""
        import pandas as pd
        problems, file = self.problems, self.file
        n_questions, n_models = len(self.questions.index), len(self.models.index)
        question_index = pd.Index(self.questions.names())
        model_index = pd.Index(self.models.names())
        value = np.full((n_questions, n_models), np.nan, dtype=np.float64)
        flat = value.reshape(-1)
        conflicts = _Capped()  # (row, cell, credit here)
        exact: list[tuple[int, int]] = []  # (row, cell) of the first five
        n_exact = 0
        for chunk in self.chunks():
            observed = ~chunk.blank
            if not observed.any():
                continue
            _, keys = self._keys(chunk)
            q = question_index.get_indexer(keys[observed])
            m = model_index.get_indexer(chunk.columns["model"][observed])
            cell = q.astype(np.int64) * n_models + m
            number, rows = chunk.number[observed], chunk.rows[observed]
            unique, first = np.unique(cell, return_index=True)
            new = np.isnan(flat[unique])
            taken = first[new]
            flat[cell[taken]] = number[taken]
            again = np.ones(len(cell), dtype=bool)
            again[taken] = False
            for p in np.flatnonzero(again).tolist():  # a cell named before: in file order
                if number[p] != flat[cell[p]]:
                    conflicts.extend([(int(rows[p]), int(cell[p]), float(number[p]))])
                else:
                    n_exact += 1
                    if len(exact) < 6:
                        exact.append((int(rows[p]), int(cell[p])))
        if conflicts.count or exact:
            first_rows = self._first_rows({c for _, c, _ in conflicts.items} | {c for _, c in exact},
                                          question_index, model_index, n_models)
            conflicts.report(problems, lambda i: problems.add(
                file, CONFLICTING_DUPLICATE.format(first=first_rows[i[1]], key="question id and model",
                                                   column="credit", a=float(flat[i[1]]), b=i[2]),
                row=i[0], column="credit"))
            if exact:
                examples = ", ".join(f"row {r} repeats row {first_rows[c]}" for r, c in exact[:5])
                examples += ", ..." if n_exact > 5 else ""
                self.notes.append(EXACT_DUPLICATES_NOTE.format(file=file, count=n_exact, examples=examples))
        return self._cells(value)

    def _first_rows(self, wanted: set[int], question_index: pd.Index, model_index: pd.Index,
                    n_models: int) -> dict[int, int]:
        """Pass 3: the row of the first observed record of each cell in ``wanted``."""
        out: dict[int, int] = {}
        targets = np.array(sorted(wanted), dtype=np.int64)
        for chunk in self.chunks():
            observed = ~chunk.blank
            _, keys = self._keys(chunk)
            cell = (question_index.get_indexer(keys[observed]).astype(np.int64) * n_models
                    + model_index.get_indexer(chunk.columns["model"][observed]))
            rows = chunk.rows[observed]
            for p in np.flatnonzero(np.isin(cell, targets)).tolist():
                out.setdefault(int(cell[p]), int(rows[p]))
            if len(out) == len(targets):
                break
        return out

    def _cells(self, value: np.ndarray) -> DenseCells:
        """The matrix as DenseCells: questions and models in the order of their first response."""
        q_first, m_first = self.questions.first_observed, self.models.first_observed
        # observed first (by first response), then the rest (by first record); -1 = never observed
        q_order = np.lexsort((self.questions.first_row, q_first, q_first < 0))
        m_order = np.lexsort((self.models.first_row, m_first, m_first < 0))
        names = self.models.names()
        cells = DenseCells(self.file, names[m_order].tolist(), dataset=self.dataset or "")
        ids = np.array(self.q_ids, dtype=object)
        datasets = np.array(self.q_datasets, dtype=object)
        rows = np.where(q_first >= 0, q_first, self.questions.first_row)
        block_rows = max(1, BLOCK_CELLS // max(1, len(m_order)))
        try:
            for start in range(0, len(q_order), block_rows):
                order = q_order[start:start + block_rows]
                credit = value[order][:, m_order]
                observed = ~np.isnan(credit)
                _snap(credit, observed, cells)
                cells.add(ids[order], rows[order], credit, observed, datasets=datasets[order])
        except BaseException:
            cells.discard()
            raise
        cells.column_rank = np.arange(len(m_order), dtype=np.int64)  # the long form's order, not the first question's
        cells.response_rows = m_first[m_order]
        return cells.finish()

    def read(self, attributes: list[tuple[str, str]], subject: str | None,
             keep_columns: list[str]) -> LongResult | None:
        """After :meth:`check`: its problems, then pass 2; None when a problem of pass 1 stops
        the file. ``attributes`` are (column, role) pairs as in the whole-file reader."""
        if not self.report_checks():
            return None
        questions = self.questions_table(attributes, subject, keep_columns)
        cells = self.fill()
        model_first_row = {str(name): int(row) for name, row in zip(self.models.names().tolist(),
                                                                     self.models.first_row.tolist())}
        return LongResult(questions, model_first_row, cells)


# --- CSV/TSV -----------------------------------------------------------------------------------


class CsvRefused(Exception):
    """The CSV parser refused a row (the whole-file reader reports it)."""


def csv_chunks(path: Path, head: _CsvHead, used: list[str]) -> Chunks:
    """The chunks of a long CSV/TSV whose head was checked.

    Parameters
    ----------
    path : Path
    head : _CsvHead
        Separator and header, from :func:`_read_csv_head`.
    used : list of str
        Columns kept (stripped); ``credit`` among them.

    Returns
    -------
    callable
        Each call reads the file again: ``CHUNK_ROWS`` records a chunk, blank
        rows skipped, row numbers as a spreadsheet shows them (header = 1).
        Iterating raises :class:`CsvRefused` on a row the parser refuses.
    """
    options = {**_csv_options(head), "dtype": object}  # Python str cells

    def chunks() -> Iterator[LongChunk]:
        import pandas as pd
        offset = 0
        with pd.read_csv(path, encoding="utf-8-sig", chunksize=max(1, CHUNK_ROWS), **options) as reader:
            while True:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("error", pd.errors.ParserWarning)
                        chunk = next(reader)
                except StopIteration:
                    return
                except (pd.errors.ParserWarning, pd.errors.ParserError) as exc:
                    raise CsvRefused(str(exc)) from exc
                rows = np.arange(len(chunk), dtype=np.int64) + offset + 2
                offset += len(chunk)
                if len(chunk):
                    blank_row = (chunk == "").to_numpy().all(axis=1)
                    if blank_row.any():
                        chunk, rows = chunk.loc[~blank_row], rows[~blank_row]
                columns = {c: np.array([v.strip() for v in chunk[c].tolist()], dtype=object) for c in used}
                texts = columns["credit"]
                number, blank, bad = _parse_credit_strings(texts)
                yield LongChunk(columns, rows, texts, number, blank, bad)

    return chunks


def csv_refused(path: Path, problems: _Problems, detail: str) -> None:
    """A row the chunked parser refused, reported by the whole-file reader as before.

    Parameters
    ----------
    path : Path
    problems : _Problems
        Receives the problem (file, row).
    detail : str
        The parser's message, used only if the whole-file reader finds nothing.
    """
    n_items = len(problems.items)
    if _read_csv(path, problems) is not None or len(problems.items) == n_items:  # pragma: no cover - defensive
        text = path.read_text(encoding="utf-8-sig", errors="replace")
        problems.add(path.name, csv_error_words(detail, text=text)[0])


# --- JSON Lines ------------------------------------------------------------------------------


def _json_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value)


@dataclass
class JsonState:
    """What pass 1 over JSON Lines learnt besides the cells: whether every line was a valid
    record, and the keys seen."""

    ok: bool = True
    seen_keys: set[str] = field(default_factory=set)


def jsonl_chunks(path: Path, *, file: str, wanted: list[str], required: list[str], problems: _Problems,
                 state: JsonState) -> Chunks:
    """The chunks of a JSON Lines file whose text was checked (:func:`_decode`).

    Parameters
    ----------
    path : Path
    file : str
        Name in problems.
    wanted : list of str
        Keys kept (as text: a string stripped, a number or list as JSON, null blank).
    required : list of str
        Keys every record must have, the question id and the model first.
    problems : _Problems
    state : JsonState
        Set by the first pass: ``ok`` False when a line is not a valid record
        (each such line a problem, listed by the first pass only), keys seen.

    Returns
    -------
    callable
        Each call reads the file again, ``CHUNK_ROWS`` records a chunk; rows
        are line numbers as ``str.splitlines`` counts them.
    """
    first_pass = [True]

    def chunks() -> Iterator[LongChunk]:
        report = first_pass[0]
        first_pass[0] = False
        columns: dict[str, list[str]] = {c: [] for c in wanted}
        texts: list[str] = []
        numbers: list[float] = []
        bads: list[bool] = []
        rows: list[int] = []

        def flush() -> LongChunk:
            bad = np.asarray(bads, dtype=bool)
            text = np.asarray(texts, dtype=object)
            out = LongChunk({c: np.asarray(v, dtype=object) for c, v in columns.items()},
                            np.asarray(rows, dtype=np.int64), text, np.asarray(numbers, dtype=np.float64),
                            (text == "") & ~bad, bad)
            for v in columns.values():
                v.clear()
            for lst in (texts, numbers, bads, rows):
                lst.clear()
            return out

        def refuse(message: str, line_number: int, column: str | None = None) -> None:
            state.ok = False
            if report:
                problems.add(file, message, row=line_number, column=column)

        line_number = 0
        with path.open(encoding="utf-8-sig", newline=None) as handle:
            for physical in handle:
                for line in physical.splitlines():  # the lines str.splitlines gives for the whole text
                    line_number += 1
                    if not line.strip():
                        continue
                    try:
                        record = loads_bounded(line)
                    except json.JSONDecodeError as exc:
                        refuse(JSON_INVALID.format(detail=exc.msg), line_number)
                        continue
                    if not isinstance(record, dict):
                        refuse(JSON_NOT_OBJECT.format(kind=type(record).__name__), line_number)
                        continue
                    if any(isinstance(v, str) and "\x00" in v for v in record.values()):  # a \u0000 escape
                        refuse(NUL_CHARACTER, line_number)
                        continue
                    missing = [k for k in required if k not in record]
                    for key in missing:
                        expected = ", ".join(repr(k) for k in required)
                        refuse(JSON_MISSING_KEY.format(key=key, expected=expected), line_number, key)
                    if missing:
                        continue
                    if report:
                        state.seen_keys.update(record)
                    for key in required[:2]:  # the question id and the model
                        value = record[key]
                        if isinstance(value, bool) or not isinstance(value, (str, int)):
                            refuse(JSON_BAD_ID.format(key=key, value=value), line_number, key)
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
                    texts.append(text)
                    numbers.append(number)
                    bads.append(bad)
                    rows.append(line_number)
                    if len(rows) >= CHUNK_ROWS:
                        yield flush()
        if rows:
            yield flush()

    return chunks
