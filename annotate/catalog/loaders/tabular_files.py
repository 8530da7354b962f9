"""Tabular uploads by file: which layout a file is in, and parsing files or a folder.

:func:`detect_format` reads a file's name and first bytes to tell a wide, a
long or a JSON Lines file; :func:`parse_files` and :func:`parse_folder` parse
the files of one upload with the parsers of :mod:`annotate.catalog.loaders.tabular`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from annotate.catalog.loaders._tabular_common import (
    FILE_NOT_FOUND,
    FOLDER_MODELS,
    FOLDER_QUESTIONS,
    FOLDER_RESPONSES,
    FORMAT_DETECTED_NOTE,
    FORMATS,
)
from annotate.catalog.loaders.base import (
    LoadError,
    ParsedResponseSet,
    Problem,
)
from annotate.catalog.loaders.wide_stream import is_parquet

if TYPE_CHECKING:
    pass
from annotate.catalog.loaders.tabular import _parse, parse_wide

__all__ = ["detect_format", "parse_files", "parse_folder"]


def detect_format(path: Path | str) -> tuple[str, str]:
    """Guess the format of a responses file; returns (format, reason).

    ``.jsonl``/``.ndjson`` -> "jsonl"; otherwise a header with both ``model``
    and ``credit`` columns -> "long", anything else -> "wide".
    """
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl", "file extension"
    if is_parquet(path):
        return "wide", "file extension (Parquet)"
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
    model_column: str = "model",
) -> ParsedResponseSet:
    """Parse a responses file of any tabular format, with optional metadata files.

    Parameters
    ----------
    responses : path-like
    file_format : {"auto", "wide", "long", "jsonl"}, default "auto"
        "auto" uses :func:`detect_format` and says so in the notes.
    dataset, questions, models, subject_column, keep_columns, id_column, model_column
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
                  subject_column=subject_column, keep_columns=keep_columns, id_column=id_column,
                  model_column=model_column, notes=notes)


def parse_folder(
    folder: Path | str,
    *,
    dataset: str,
    subject_column: str | None = None,
    keep_columns: Sequence[str] = (),
    id_column: str = "question_id",
    model_column: str = "model",
) -> ParsedResponseSet:
    """Parse a folder in the MMLU-Pro layout.

    The folder holds ``responses_binary.csv`` (wide) and, optionally,
    ``questions.csv`` and ``models.csv``; other files are ignored.

    Parameters
    ----------
    folder : path-like
    dataset : str
        Dataset name of every question (e.g. "MMLU-Pro").
    subject_column, keep_columns, id_column, model_column
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
        keep_columns=keep_columns, id_column=id_column, model_column=model_column,
    )
