"""The whole-file readers of long CSV/TSV and JSON Lines as they were before they streamed
(commit f612896), kept as the reference the streamed readers must equal cell for cell,
problem for problem (tests/annotate/catalog/loaders/test_long_stream.py)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from annotate.catalog.loaders._tabular_common import (
    ATTRIBUTE_CONFLICT,
    BAD_OPTIONS,
    BLANK_MODEL,
    BLANK_QUESTION_ID,
    IGNORED_COLUMNS_NOTE,
    JSON_BAD_ID,
    JSON_INVALID,
    JSON_MISSING_KEY,
    JSON_NOT_OBJECT,
    NUL_CHARACTER,
    TWO_SUBJECTS,
    _check_columns,
    _check_datasets,
    _decode,
    _dedupe,
    _fmt_list,
    _note_ignored,
    _parse_credit_strings,
    _parse_options,
    _Problems,
    _read_csv,
    _report_credits,
    _source,
)
from annotate.catalog.loaders.base import QUESTION_COLUMNS
from annotate.catalog.loaders.long_stream import _json_text
from annotate.catalog.loaders.tabular import _attribute_columns, _Responses
from annotate.core.jsonsafe import loads_bounded, max_json_depth


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
        limit = max_json_depth()  # read once, not once a row
        for i, text in enumerate(consolidated["options_json"].tolist()):
            parsed = _parse_options(text, limit)
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
    questions = questions[[*QUESTION_COLUMNS, "source"]]
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


def _read_long(path: Path, problems: _Problems, notes: list[str], *, dataset: str | None, id_column: str,
               subject_column: str | None, keep_columns: list[str], attributes_required: bool) -> _Responses | None:
    table = _read_csv(path, problems)
    if table is None:
        return None
    subject, keep_columns, must = _attribute_columns(table.header, subject_column, keep_columns, attributes_required)
    required = [id_column, "model", "credit", *must]
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


def _read_jsonl(path: Path, problems: _Problems, notes: list[str], *, dataset: str | None, id_column: str,
                subject_column: str | None, keep_columns: list[str], attributes_required: bool) -> _Responses | None:
    file = path.name
    text = _decode(path, problems, csv_records=False)  # a JSON Lines row is its line
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
            record = loads_bounded(line)
        except json.JSONDecodeError as exc:
            problems.add(file, JSON_INVALID.format(detail=exc.msg), row=line_number)
            ok = False
            continue
        if not isinstance(record, dict):
            problems.add(file, JSON_NOT_OBJECT.format(kind=type(record).__name__), row=line_number)
            ok = False
            continue
        if any(isinstance(v, str) and "\x00" in v for v in record.values()):  # a \u0000 escape
            problems.add(file, NUL_CHARACTER, row=line_number)
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


