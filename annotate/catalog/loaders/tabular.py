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
    guessed from the name by :mod:`annotate.catalog.loaders.model_names` and listed in
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
- Question ids and model names are matched across files as they will be
  stored (cleaned: :mod:`annotate.catalog.loaders.names`), so an invisible
  character in one file only does not refuse the upload; two spellings of one
  question id in one file (``q3`` and ``q3\\u200b``) are refused at the later one.
- A header field longer than the csv module's limit (131,072 characters) and
  any other ``csv.Error`` are a problem at row 1, never a traceback.
- A value quoted in a problem is cut to 80 characters plus its full length
  (:func:`shorten_quoted`); notes list at most 50 names plus "and N more".
- No dataset column (or key) and no default dataset is one problem for the
  file, not one per row. A problem list stops at ``MAX_PROBLEMS`` and ends
  with the exact count of the rest.
- Questions without any subject load, with a note that no study can be made
  from them until subjects are loaded.
- Long CSV/TSV and JSON Lines files are read a chunk of records at a time
  (:mod:`annotate.catalog.loaders.long_stream`), wide files likewise
  (:mod:`annotate.catalog.loaders.wide_stream`): the parse is the one a whole-file
  reader would make, problems and notes included, without one Python object
  per record.
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders._tabular_common import (
    ACCESS_VALUES,
    ATTRIBUTE_CONFLICT,
    BAD_ACCESS,
    BAD_OPTIONS,
    BAD_PARAMETERS,
    BLANK_COLUMN_NAME,
    BLANK_DATASET,
    BLANK_MODEL,
    BLANK_QUESTION_ID,
    CONFLICTING_DUPLICATE,
    CREDIT_DECIMAL_COMMA,
    CREDIT_NOT_A_NUMBER,
    CREDIT_NOT_FINITE,
    CREDIT_OUT_OF_RANGE,
    CSV_FIELD_LIMIT,
    DUPLICATE_COLUMN,
    EMPTY_FILE,
    EXACT_DUPLICATES_NOTE,
    FIELD_TOO_LONG,
    FILE_NOT_FOUND,
    FOLDER_MODELS,
    FOLDER_QUESTIONS,
    FOLDER_RESPONSES,
    FORMAT_DETECTED_NOTE,
    FORMATS,
    HEADER_FIELD_TOO_LONG,
    ID_SPELLED_TWO_WAYS,
    IGNORED_COLUMNS_NOTE,
    JSON_BAD_ID,
    JSON_INVALID,
    JSON_MISSING_KEY,
    JSON_NOT_OBJECT,
    LONGER_THAN_HEADER,
    MAX_PROBLEMS,
    MISSING_COLUMNS,
    NO_DATASET,
    NO_MODEL_COLUMNS,
    NO_RESPONSES,
    NO_SUBJECT_NOTE,
    NO_SUBJECT_TAIL,
    NOT_UTF8,
    NOTE_NAMES_LIMIT,
    NUL_CHARACTER,
    PARAMETERS_LABEL_NOTE,
    QUESTIONS_FILE_CONFLICT,
    QUOTED_VALUE_LIMIT,
    SEMICOLON_SEPARATED,
    TWO_SUBJECTS,
    UNKNOWN_MODEL,
    UNKNOWN_QUESTION,
    UNUSED_NOTE,
    UTF16_BOM,
    WRONG_FIRST_COLUMN,
    _check_columns,
    _check_model_column,
    _dedupe,
    _fmt_list,
    _fmt_names,
    _note_ignored,
    _parse_credit_strings,
    _Problems,
    _read_csv,
    _read_csv_head,
    _report_credits,
    _source,
    _validate_common,
    check_text,
    shorten_quoted,
)
from annotate.catalog.loaders.base import (
    RESPONSE_COLUMNS,
    ParsedResponseSet,
)
from annotate.catalog.loaders.dense import DenseCells
from annotate.catalog.loaders.long_stream import (
    CsvRefused,
    JsonState,
    LongReader,
    LongResult,
    csv_chunks,
    csv_refused,
    jsonl_chunks,
)
from annotate.catalog.loaders.metadata import (
    _model_rows,
    _read_models,
    _read_questions,
    read_models_file,
    read_questions_file,
)
from annotate.catalog.loaders.names import clean_name, clean_names, finish_parsed, spelled_two_ways
from annotate.catalog.loaders.wide_stream import read_wide_stream
from annotate.core import CSV_ERROR, MALFORMED_ROW  # re-exported: the loaders' messages, in one list

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ACCESS_VALUES",
    "ATTRIBUTE_CONFLICT",
    "BAD_ACCESS",
    "BAD_OPTIONS",
    "BAD_PARAMETERS",
    "BLANK_COLUMN_NAME",
    "BLANK_DATASET",
    "BLANK_MODEL",
    "BLANK_QUESTION_ID",
    "CONFLICTING_DUPLICATE",
    "CREDIT_DECIMAL_COMMA",
    "CREDIT_NOT_A_NUMBER",
    "CREDIT_NOT_FINITE",
    "CREDIT_OUT_OF_RANGE",
    "CSV_ERROR",
    "CSV_FIELD_LIMIT",
    "DUPLICATE_COLUMN",
    "EMPTY_FILE",
    "EXACT_DUPLICATES_NOTE",
    "FIELD_TOO_LONG",
    "FILE_NOT_FOUND",
    "FOLDER_MODELS",
    "FOLDER_QUESTIONS",
    "FOLDER_RESPONSES",
    "FORMATS",
    "FORMAT_DETECTED_NOTE",
    "HEADER_FIELD_TOO_LONG",
    "ID_SPELLED_TWO_WAYS",
    "IGNORED_COLUMNS_NOTE",
    "JSON_BAD_ID",
    "JSON_INVALID",
    "JSON_MISSING_KEY",
    "JSON_NOT_OBJECT",
    "LONGER_THAN_HEADER",
    "MALFORMED_ROW",
    "MAX_PROBLEMS",
    "MISSING_COLUMNS",
    "NOTE_NAMES_LIMIT",
    "NOT_UTF8",
    "NUL_CHARACTER",
    "NO_DATASET",
    "NO_MODEL_COLUMNS",
    "NO_RESPONSES",
    "NO_SUBJECT_NOTE",
    "NO_SUBJECT_TAIL",
    "PARAMETERS_LABEL_NOTE",
    "QUESTIONS_FILE_CONFLICT",
    "QUOTED_VALUE_LIMIT",
    "SEMICOLON_SEPARATED",
    "TWO_SUBJECTS",
    "UNKNOWN_MODEL",
    "UNKNOWN_QUESTION",
    "UNUSED_NOTE",
    "UTF16_BOM",
    "WRONG_FIRST_COLUMN",
    "parse_jsonl",
    "parse_long",
    "parse_wide",
    "read_models_file",
    "read_questions_file",
    "shorten_quoted",
]


# --- response files -------------------------------------------------------------


@dataclass
class _Responses:
    """Observed responses of one file, before cross-file checks."""

    file: str
    frame: pd.DataFrame | None  # dataset, external_id, model, credit, row (None: see cells)
    questions: pd.DataFrame | None  # QUESTION_COLUMNS + source, from attributes in the file (long/jsonl)
    model_first_row: dict[str, int]  # model -> first row (wide: header row 1) for error messages
    model_column: bool  # True: models are values of a "model" column; False: header names (wide)
    cells: DenseCells | None = None  # a wide or long file read a chunk at a time (frame is None)
    # A wide file: ``questions`` holds only dataset, external_id and source; this builds the whole
    # table, needed only when no questions file gives one (a list and a dict a row, else thrown away).
    question_rows: Callable[[], pd.DataFrame] | None = None

    def question_table(self) -> pd.DataFrame | None:
        """The questions of the file, every column (``questions`` unless built on demand)."""
        return self.questions if self.question_rows is None else self.question_rows()


def _wide_questions(dataset: str, ids: np.ndarray, source: np.ndarray) -> pd.DataFrame:
    """The questions of a wide file: ids only (a questions file gives the rest)."""
    import pandas as pd
    return pd.DataFrame(
        {
            "dataset": dataset,
            "external_id": ids,
            "subject": None,
            "text": "",
            "options": [[] for _ in range(len(ids))],
            "reference_answer": "",
            "metadata": [{} for _ in range(len(ids))],
            "source": source,
        }
    )


def _wide_responses(file: str, frame: pd.DataFrame | None, *, dataset: str, ids: np.ndarray, rows: np.ndarray,
                    models: list[str], cells: DenseCells | None = None) -> _Responses:
    """The :class:`_Responses` of a wide file: its questions' keys and sources now, the
    whole question table (:func:`_wide_questions`) when asked for."""
    import pandas as pd
    source = _source(file, rows).to_numpy(dtype=object)
    keys = pd.DataFrame({"dataset": dataset, "external_id": ids, "source": source})
    return _Responses(file, frame, keys, dict.fromkeys(models, 1), model_column=False, cells=cells,
                      question_rows=lambda: _wide_questions(dataset, ids, source))


def _read_wide(path: Path, problems: _Problems, notes: list[str], *, dataset: str, id_column: str) -> _Responses | None:
    """A wide file, streamed into dense blocks (:mod:`annotate.catalog.loaders.wide_stream`) unless only
    the whole-file reader below reports its problem exactly."""
    streamed = read_wide_stream(path, problems, dataset=dataset, id_column=id_column)
    if streamed is None:
        return None
    if isinstance(streamed, DenseCells):
        return _wide_responses(streamed.file, None, dataset=dataset, ids=streamed.ids, rows=streamed.rows,
                               models=streamed.models.tolist(), cells=streamed)
    return _read_wide_whole(path, problems, notes, dataset=dataset, id_column=id_column)


def _read_wide_whole(path: Path, problems: _Problems, notes: list[str], *, dataset: str,
                     id_column: str) -> _Responses | None:
    import pandas as pd
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
    return _wide_responses(file, responses, dataset=dataset, ids=ids, rows=rows, models=header[1:])


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


def _long_attributes(columns: Sequence[str], subject: str | None, keep_columns: list[str]) -> list[tuple[str, str]]:
    """(column, role) of the question attributes a long/jsonl file repeats on its records."""
    attributes = [(subject, "subject")] if subject else []
    attributes += [(c, c) for c in ("question", "options_json", "answer") if c in columns]
    return attributes + [(c, c) for c in keep_columns]


def _long_responses(result: LongResult | None, file: str) -> _Responses | None:
    if result is None:
        return None
    return _Responses(file, None, result.questions, result.model_first_row, model_column=True, cells=result.cells)


def _read_long(path: Path, problems: _Problems, notes: list[str], *, dataset: str | None, id_column: str,
               subject_column: str | None, keep_columns: list[str], attributes_required: bool) -> _Responses | None:
    """A long CSV/TSV, read a chunk at a time (:mod:`annotate.catalog.loaders.long_stream`)."""
    head = _read_csv_head(path, problems, keep_text=False)
    if head is None:
        return None
    subject, keep_columns, must = _attribute_columns(head.header, subject_column, keep_columns, attributes_required)
    required = [id_column, "model", "credit", *must]
    optional = [c for c in ("dataset", "subject", "question", "options_json", "answer") if c not in required]
    if not _check_columns(head, required, optional, problems):
        return None
    used = [id_column, "model", "credit"] + ([subject] if subject else []) + keep_columns
    used += [c for c in ("dataset", "question", "options_json", "answer") if c in head.header]
    used = list(dict.fromkeys(used))
    _note_ignored(head, used, notes)
    attributes = _long_attributes(used, subject, keep_columns)
    reader = LongReader(csv_chunks(path, head, used), file=head.file, dataset=dataset, id_column=id_column,
                        candidates=[c for c, _ in attributes], problems=problems, notes=notes)
    file = head.file
    n_items, n_dropped = len(problems.items), problems.dropped
    try:
        reader.check()
        return _long_responses(reader.read(attributes, subject, keep_columns), file)
    except CsvRefused as exc:
        del problems.items[n_items:]
        problems.dropped = n_dropped
        csv_refused(path, problems, str(exc))
        return None


def _read_jsonl(path: Path, problems: _Problems, notes: list[str], *, dataset: str | None, id_column: str,
                subject_column: str | None, keep_columns: list[str], attributes_required: bool) -> _Responses | None:
    """JSON Lines, read a batch of lines at a time (:mod:`annotate.catalog.loaders.long_stream`)."""
    file = path.name
    if not check_text(path, problems, csv_records=False):  # encoding, NUL and emptiness, a block at a time
        return None
    required = [id_column, "model", "credit"]
    must = ([subject_column] if (attributes_required and subject_column) else []) + (
        keep_columns if attributes_required else []
    )
    subject = subject_column or "subject"
    known = [id_column, "model", "dataset", subject, "question", "options_json", "answer"]
    wanted = list(dict.fromkeys(known + keep_columns))
    state = JsonState()
    chunks = jsonl_chunks(path, file=file, wanted=wanted, required=required + must, problems=problems, state=state)
    candidates = [c for c in wanted if c not in (id_column, "model", "dataset")]
    reader = LongReader(chunks, file=file, dataset=dataset, id_column=id_column, candidates=candidates,
                        problems=problems, notes=notes)
    reader.check()
    if not state.ok:
        return None
    ignored = sorted(state.seen_keys - set(wanted) - {"credit"})
    if ignored:
        notes.append(IGNORED_COLUMNS_NOTE.format(file=file, columns=_fmt_list(ignored)))
    subject_used, keep_columns, _ = _attribute_columns(sorted(state.seen_keys), subject_column, keep_columns,
                                                       attributes_required)
    attributes = _long_attributes(wanted, subject_used, keep_columns)
    return _long_responses(reader.read(attributes, subject_used, keep_columns), file)


# --- putting files together -----------------------------------------------------


def _cleaned_keys(questions: pd.DataFrame, *, id_column: str, problems: _Problems) -> pd.DataFrame:
    """``questions`` (one file's, with their ``source`` "file:row") keyed as they will be stored: dataset
    and id cleaned (:func:`annotate.catalog.loaders.names.clean_names`), the id as written kept in
    ``raw_id``, one row per stored key. A question id of the file written two ways that clean to one
    (:func:`annotate.catalog.loaders.names.spelled_two_ways`) is a problem at the later spelling's row."""
    raw_datasets, raw_ids = questions["dataset"], questions["external_id"]
    datasets, ids = clean_names(raw_datasets), clean_names(raw_ids)
    cleaned = questions.assign(raw_id=raw_ids, dataset=datasets, external_id=ids)
    if datasets is raw_datasets and ids is raw_ids:
        return cleaned  # nothing cleaned: the file's keys, one a question already
    raw, sources = raw_ids.tolist(), questions["source"].tolist()
    for first, other in spelled_two_ways(raw_datasets, raw_ids, cleaned=(datasets, ids)):
        file, row = sources[other].rsplit(":", 1)
        problems.add(file, ID_SPELLED_TWO_WAYS.format(given=raw[other], other=raw[first],
                                                      first=sources[first].rsplit(":", 1)[1]),
                     row=int(row), column=id_column)
    return cleaned.drop_duplicates(["dataset", "external_id"])


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
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    file = responses.file
    frame = responses.frame
    # Questions, matched as they will be stored: both files' ids are cleaned after the parse (names.py).
    given = _cleaned_keys(responses.questions, id_column=id_column, problems=problems)
    if questions_file is not None:
        known = _cleaned_keys(questions_file, id_column=id_column, problems=problems)
        keys = ["dataset", "external_id"]
        check = given[[*keys, "raw_id", "source"]].merge(known[keys].assign(_known=True), on=keys, how="left")
        for record in check.loc[check["_known"].isna()].itertuples(index=False):
            problems.add(
                file, UNKNOWN_QUESTION.format(question_id=record.raw_id, other_file=questions_name),
                row=int(record.source.rsplit(":", 1)[1]), column=id_column,
            )
        if responses.model_column:
            both = given.merge(known.drop(columns="raw_id"), on=["dataset", "external_id"], suffixes=("", "_file"))
            for column in ("subject", "text", "reference_answer"):
                given_values = both[column].fillna("").astype(str)
                stored = both[f"{column}_file"].fillna("").astype(str)
                if column == "subject":  # a name: stored cleaned, so compared cleaned
                    given_values, stored = clean_names(given_values), clean_names(stored)
                clash = both.loc[((given_values != "") & (stored != "") & (given_values != stored)).to_numpy()]
                label = {"text": "question", "reference_answer": "answer"}.get(column, column)
                for record in clash.itertuples(index=False):
                    a, b = getattr(record, column), getattr(record, f"{column}_file")
                    other_file, other_row = record.source_file.rsplit(":", 1)
                    problems.add(
                        file, QUESTIONS_FILE_CONFLICT.format(
                            question_id=record.raw_id, column=label, a=a, b=b, other_file=other_file,
                            other_row=other_row,
                        ),
                        row=int(record.source.rsplit(":", 1)[1]), column=label,
                    )
        unused = len(known) - known[keys].merge(given[keys], on=keys).shape[0]
        if unused:
            notes.append(UNUSED_NOTE.format(file=questions_name, count=unused, what="question(s)"))
        questions = questions_file
    else:
        questions = responses.question_table()
    # Models.
    names = list(responses.model_first_row)  # every model named in the file, observed or not
    if models_file is not None:
        # Compared as they will be stored: both files' names are cleaned after the parse (names.py).
        known_models = {clean_name(name) for name in models_file["name"]}
        for name in names:
            if clean_name(name) not in known_models:
                problems.add(
                    file, UNKNOWN_MODEL.format(model=name, other_file=models_name),
                    row=responses.model_first_row.get(name), column="model" if responses.model_column else name,
                )
        unused = len(known_models - {clean_name(name) for name in names})
        if unused:
            notes.append(UNUSED_NOTE.format(file=models_name, count=unused, what="model(s)"))
        models = models_file
    else:
        models = _model_rows(names, {}, file=file, rows=None, params_column=None, problems=problems, notes=notes)
    if responses.cells is not None:
        if responses.cells.n_observed == 0:
            problems.add(file, NO_RESPONSES)
        return questions.reset_index(drop=True), models.reset_index(drop=True), None
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
    model_column: str = "model",
    notes: list[str] | None = None,
) -> ParsedResponseSet:
    keep = _validate_common(dataset, subject_column, keep_columns, id_column)
    model_column = _check_model_column(model_column)
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
    model_frame = _read_models(models_path, problems, notes, model_column=model_column) if models_path else None
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
    return finish_parsed(ParsedResponseSet(
        questions=question_table,
        models=model_table,
        responses=response_table,
        cells=parsed.cells,
        file_format=file_format,
        source_files=[p for p in (responses_path, questions_path, models_path) if p is not None],
        notes=notes,
        options={
            "dataset": dataset,
            "subject_column": subject_column,
            "keep_columns": keep,
            "id_column": id_column,
            "model_column": model_column,
        },
    ))


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
    model_column : str, default "model"
        The models file's column holding the model names (LiveCodeBench:
        ``model_repr``); read only when a models file is given.
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
    model_column: str = "model",
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
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column,
                  model_column=model_column)


def parse_long(
    responses: Path | str,
    *,
    dataset: str | None = None,
    questions: Path | str | None = None,
    models: Path | str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
    model_column: str = "model",
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
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column,
                  model_column=model_column)


def parse_jsonl(
    responses: Path | str,
    *,
    dataset: str | None = None,
    questions: Path | str | None = None,
    models: Path | str | None = None,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
    model_column: str = "model",
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
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column,
                  model_column=model_column)


for _function in (parse_wide, parse_long, parse_jsonl):
    _function.__doc__ = _function.__doc__.replace("{params}", _PARAMETERS_DOC.strip("\n") + "\n")


