"""Parsers for the question and model metadata files that go with tabular responses.

The file formats and the decisions the parsers follow are described in the
docstring of :mod:`annotate.catalog.loaders.tabular`, which re-exports
:func:`read_questions_file` and :func:`read_models_file`.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders._tabular_common import (
    ACCESS_VALUES,
    BAD_ACCESS,
    BAD_OPTIONS,
    BAD_PARAMETERS,
    BLANK_MODEL,
    BLANK_QUESTION_ID,
    MODEL_COLUMN_HINT,
    PARAMETERS_LABEL_NOTE,
    _check_columns,
    _check_datasets,
    _check_model_column,
    _dedupe,
    _fmt_list,
    _note_ignored,
    _parse_options,
    _Problems,
    _read_csv,
    _source,
    _validate_common,
)
from annotate.catalog.loaders.base import MODEL_COLUMNS, OPTIONS_TEXT
from annotate.catalog.loaders.model_names import UNKNOWN, infer_from_model_name
from annotate.core import max_json_depth

if TYPE_CHECKING:
    import pandas as pd


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
    import pandas as pd
    table = _read_csv(path, problems, cells=object)  # every value is read in Python below
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
    if "options_json" in table.header:
        limit = max_json_depth()  # read once, not once a row
        options: list[list[str]] = []
        options_texts: list[str | None] = []  # each cell as decoded (stripped), for the load to store as is
        for i, text in enumerate(frame["options_json"].to_numpy(dtype=object).tolist()):
            stripped = text.strip()
            parsed = _parse_options(stripped, limit)
            if parsed is None:
                problems.add(table.file, BAD_OPTIONS.format(value=text), row=int(rows[i]), column="options_json")
                parsed, stripped = [], None
            options.append(parsed)
            options_texts.append(stripped)
    else:
        options = [[] for _ in range(n)]
        options_texts = [None] * n
    if keep_columns:
        kept = []
        for c in keep_columns:
            values = frame[c].to_numpy(dtype=object, copy=True)
            values[values == ""] = None
            kept.append(values.tolist())
        # A dict a row, built without a Python call a row: dict(zip(keep_columns, row values)).
        metadata = list(map(dict, map(zip, itertools.repeat(keep_columns), zip(*kept))))
    else:
        metadata = [{} for _ in range(n)]
    return pd.DataFrame(
        {
            "dataset": frame["dataset"].to_numpy(dtype=object),
            "external_id": frame[id_column].to_numpy(dtype=object),
            "subject": frame[subject].replace("", None).to_numpy(dtype=object) if subject else [None] * n,
            # Texts stay Python str (object columns): the load reads them as such, so no Arrow copy.
            "text": pd.Series(frame["question"].to_numpy(dtype=object) if "question" in table.header else [""] * n,
                              dtype=object),
            "options": options,
            "reference_answer": pd.Series(
                frame["answer"].str.strip().to_numpy(dtype=object) if "answer" in table.header else [""] * n,
                dtype=object),
            "metadata": metadata,
            "source": _source(table.file, rows).to_numpy(dtype=object),
            OPTIONS_TEXT: pd.Series(options_texts, dtype=object),
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
        Columns ``QUESTION_COLUMNS`` plus ``source`` ("file:row") and
        :data:`~annotate.catalog.loaders.base.OPTIONS_TEXT` (each options cell
        as read, None where it was not decoded), one row per (dataset,
        external_id); ``text`` and ``reference_answer`` hold Python str.
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
    import pandas as pd
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


def _read_models(path: Path, problems: _Problems, notes: list[str], *,
                 model_column: str = "model") -> pd.DataFrame | None:
    table = _read_csv(path, problems)
    if table is None:
        return None
    optional = ["parameters_b", "params_b_from_name", "family", "access"]
    if not _check_columns(table, [model_column], optional, problems):
        if model_column == "model":
            problems.add(table.file, MODEL_COLUMN_HINT, row=1)
        return None
    params_column = next((c for c in ("parameters_b", "params_b_from_name") if c in table.header), None)
    frame = table.frame.assign(**{model_column: table.frame[model_column].str.strip()})
    rows = table.rows
    blank = np.flatnonzero((frame[model_column] == "").to_numpy())
    for position in blank:
        problems.add(table.file, BLANK_MODEL, row=int(rows[position]), column=model_column)
    if len(blank):
        return None
    frame, rows = _dedupe(
        frame, rows, key=[model_column], compare=[c for c in table.header if c != model_column], file=table.file,
        problems=problems, notes=notes, key_label="model",
    )
    explicit = {c: frame[c].to_numpy(dtype=object).tolist() for c in table.header if c != model_column}
    return _model_rows(
        frame[model_column].tolist(), explicit, file=table.file, rows=rows, params_column=params_column,
        problems=problems, notes=notes,
    )


def read_models_file(path: Path | str, *, model_column: str = "model") -> tuple[pd.DataFrame, list[str]]:
    """Read a model-metadata file.

    Parameters
    ----------
    path : path-like
        CSV with a model name column and optional ``parameters_b`` (or
        ``params_b_from_name``; billions, blank = unknown), ``family`` and
        ``access`` (``open_weight``/``proprietary``/``unknown``). Other columns
        are kept in ``metadata`` as strings. A parameter count that is not a
        number (``"8x7B (MoE)"``) is kept as ``metadata["parameters_label"]``.
    model_column : str, default "model"
        The column holding the model names, as the responses file spells
        them (LiveCodeBench: ``model_repr``). A column named ``model`` that
        is not this one is kept in ``metadata`` like any other.

    Returns
    -------
    models : DataFrame
        Columns ``MODEL_COLUMNS`` plus ``source``. Blank family/access/size are
        guessed from the name (:func:`annotate.catalog.loaders.model_names.infer_from_model_name`)
        and the guessed fields listed in ``metadata["inferred"]``.
    notes : list of str

    Raises
    ------
    LoadError
        Every problem found, each with file, row and column.
    """
    problems, notes = _Problems(), []
    frame = _read_models(Path(path), problems, notes, model_column=_check_model_column(model_column))
    problems.raise_if_any()
    return frame, notes
