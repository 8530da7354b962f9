"""Shared pieces of the harness-log parsers: score conversion, the collector
that turns per-sample scores into a :class:`ParsedResponseSet`, and small
text helpers.

Every parser reads its files, calls :meth:`Collector.add_question`,
:meth:`Collector.add_model` and :meth:`Collector.add_score`, and reports bad
input through :meth:`Collector.problem` or :meth:`Collector.bad_value`. The
collector keeps one record per (model, task, sample, epoch[, filter]): the
same record logged twice (a repeated line, two runs of one task, a retried
log that copies the finished samples of a cancelled one) is collapsed when
identical and refused when conflicting, unless ``duplicates="newest"`` keeps
the newest run's record. It averages the distinct epochs (or replicas) of one
(question, model) cell into partial credit and raises one :class:`LoadError`
carrying every problem at the end.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotate.catalog.loaders.base import (
    MODEL_COLUMNS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    LoadError,
    ParsedResponseSet,
    Problem,
)
from annotate.catalog.loaders.names import finish_parsed
from annotate.core import counted, load_bounded

if TYPE_CHECKING:
    pass

MAX_PROBLEMS = 50

# Error messages (tests match them exactly).
NULL_NOT_A_SCORE = "null is not a score"
NAN_NOT_A_SCORE = "NaN is not a score"
LIST_NOT_A_SCORE = (
    "a list ({value}) is not a score; pairs such as (reference, prediction) need the metric that scores them"
)
DICT_NOT_A_SCORE = "a dict ({value}) is not a score"
STRING_NOT_A_SCORE = "the string {value!r} is not a score"
LETTER_NOT_A_SCORE = "the string {value!r} is not a score letter (C, I, P or N)"
OUT_OF_RANGE = "score {value!r} is outside [0, 1]"
TYPE_NOT_A_SCORE = "a value of type {kind} is not a score"
NO_SCORES = "nothing to load: no file held a score"
CONFLICTING_RECORDS = (
    "{what} is logged twice with different scores: {first_credit:g} at {first} and {credit:g} here;"
    " remove one of the runs, or keep the newest run's score (--newest-run; 'Keep the newest run' on the upload form)"
)
CONFLICTING_IN_RUN = (
    "{what} is logged twice in one run with different scores: {first_credit:g} at {first} and {credit:g} here;"
    " the log contradicts itself, so neither is read"
)
NO_RUN_TIME = (
    "{what} is logged twice with different scores: {first_credit:g} at {first} and {credit:g} here,"
    " and the runs carry no time that tells which is newer; remove one of the runs"
)

# How records of one sample logged more than once are resolved.
DUPLICATES = ("refuse", "newest")

# Inspect AI's score letters (inspect_ai/scorer/_metric.py: CORRECT="C",
# INCORRECT="I", PARTIAL="P", NOANSWER="N"; value_to_float maps them to
# 1, 0, 0.5 and 0).
INSPECT_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}

# Keys of a harness's question record that hold the question itself, in the
# order they are tried (case-insensitive).
QUESTION_KEYS = (
    "question", "query", "problem", "input", "prompt", "text", "sentence",
    "ctx", "goal", "premise", "passage", "context",
)


class NotAScore(ValueError):
    """A logged value that cannot be read as credit in [0, 1]; ``kind`` names the
    reason for the skip count (null, list, dict, string, range)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Run:
    """One run of a task, as the harness logged it.

    ``label`` names it in messages (the log file, or the run's folder);
    ``started`` is when the run started, from the log itself (file name
    timestamp, ``eval.created``, work-folder name, suite summary), or None
    when the format does not say.
    """

    label: str
    started: datetime | None = None


@dataclass(frozen=True)
class _Record:
    """One logged score of one (question, model, epoch) and where it was read."""

    credit: float
    source: str
    file: str
    row: int | None
    column: str | None
    run: Run

    @property
    def place(self) -> str:
        """Where it was read, as a :class:`Problem` names a place."""
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        return where


def parse_time(value: Any, fmt: str | None = None) -> datetime | None:
    """A run's start time from a log's text: ISO 8601 (``fmt`` None) or
    ``datetime.strptime`` with ``fmt``; None when absent or unreadable.
    Naive times are taken as UTC, so that logs of one upload compare."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value) if fmt is None else datetime.strptime(value, fmt)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_credit(value: Any, *, letters: bool = False) -> float:
    """Read one logged score as credit in [0, 1].

    Parameters
    ----------
    value : object
        The value as parsed from JSON.
    letters : bool, default False
        Accept Inspect AI's score letters: C -> 1, I -> 0, P -> 0.5, N -> 0.

    Returns
    -------
    float
        Credit in [0, 1]. Booleans are exact-match verdicts: True -> 1.0,
        False -> 0.0.

    Raises
    ------
    NotAScore
        For null, NaN, numbers outside [0, 1], lists (pairs), dicts, and
        strings other than the letters: they are not scores and are never
        coerced.
    """
    if value is None:
        raise NotAScore(NULL_NOT_A_SCORE, "null")
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        credit = float(value)
        if math.isnan(credit):
            raise NotAScore(NAN_NOT_A_SCORE, "NaN")
        if not 0.0 <= credit <= 1.0:
            raise NotAScore(OUT_OF_RANGE.format(value=value), "out of [0, 1]")
        return credit
    if isinstance(value, str):
        if letters:
            if value in INSPECT_LETTERS:
                return INSPECT_LETTERS[value]
            raise NotAScore(LETTER_NOT_A_SCORE.format(value=value), "string")
        raise NotAScore(STRING_NOT_A_SCORE.format(value=value), "string")
    if isinstance(value, list):
        raise NotAScore(LIST_NOT_A_SCORE.format(value=_short(value)), "list")
    if isinstance(value, dict):
        raise NotAScore(DICT_NOT_A_SCORE.format(value=_short(value)), "dict")
    raise NotAScore(TYPE_NOT_A_SCORE.format(kind=type(value).__name__), "other")


def question_text(record: Any) -> str:
    """The question-like field of a harness's question record ("" if none)."""
    if isinstance(record, str):
        return record
    if not isinstance(record, dict):
        return ""
    lowered = {str(k).lower(): v for k, v in record.items()}
    for key in QUESTION_KEYS:
        value = lowered.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def question_options(record: Any) -> list[str]:
    """Answer options from a question record: ``choices`` (a list, or the
    Hugging Face ``{"text": [...], "label": [...]}`` form), ``options`` or
    ``endings``; [] when there are none or they are not all strings."""
    if not isinstance(record, dict):
        return []
    for key in ("choices", "options", "endings"):
        value = record.get(key)
        if isinstance(value, dict):
            value = value.get("text")
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return list(value)
    return []


def as_text(value: Any) -> str:
    """A reference answer or target as text: strings as they are, lists joined
    with " | ", None as "", anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " | ".join(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def subject_for(task: str, dataset: str) -> str:
    """The task (subtask) name as subject, also when the task is the whole
    dataset: studies pair only questions that have a subject, so a study can
    then be made from the logs of a single task (gsm8k, arc_easy) alone."""
    return task


@dataclass
class Collector:
    """Accumulates what one parse found; internal to the harness parsers.

    ``root`` is the folder that file names in messages are relative to.
    """

    file_format: str
    root: Path
    skip_invalid: bool = False
    duplicates: str = "refuse"
    questions: dict[tuple[str, str], dict] = field(default_factory=dict)
    models: dict[str, dict] = field(default_factory=dict)
    # (dataset, external_id, model) -> epoch (or replica; None for one) -> records
    scores: dict[tuple[str, str, str], dict[Any, list[_Record]]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files_read: list[Path] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    text_conflicts: int = 0
    collapsed: int = 0
    superseded: int = 0
    excluded: Counter = field(default_factory=Counter)
    options: dict = field(default_factory=dict)
    unpacked_bytes: int = 0  # decompressed bytes read from archives so far (limits.max_unpacked_total_bytes)

    @property
    def root_name(self) -> str:
        """The upload's root folder as shown in messages about the whole upload."""
        return self.root.name or str(self.root)

    def name(self, path: Path) -> str:
        """``path`` as shown in messages: relative to the upload's root folder."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def read(self, path: Path) -> None:
        """Record that ``path`` was read (for the checksum)."""
        if path not in self.files_read:
            self.files_read.append(path)

    def problem(self, file: str, message: str, row: int | None = None, column: str | None = None) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(file=file, message=message, row=row, column=column))

    def bad_value(self, error: NotAScore, file: str, row: int | None, column: str | None) -> None:
        """A value that is not a score: a problem, or a skip when ``skip_invalid``."""
        if self.skip_invalid:
            self.skipped[error.kind] += 1
        else:
            self.problem(file, str(error), row, column)

    def add_question(
        self,
        *,
        dataset: str,
        external_id: str,
        subject: str | None,
        text: str = "",
        options: list[str] | None = None,
        reference_answer: str = "",
        metadata: dict | None = None,
        source: str = "",
    ) -> None:
        """Record a question; the first record of a (dataset, external_id) wins,
        later ones only fill its empty fields. ``source`` is "file:where"."""
        key = (dataset, external_id)
        existing = self.questions.get(key)
        if existing is None:
            self.questions[key] = {
                "dataset": dataset,
                "external_id": external_id,
                "subject": subject,
                "text": text,
                "options": list(options or []),
                "reference_answer": reference_answer,
                "metadata": dict(metadata or {}),
                "source": source,
            }
            return
        if text and existing["text"] and text != existing["text"]:
            self.text_conflicts += 1
        for column, value in (("text", text), ("options", list(options or [])),
                              ("reference_answer", reference_answer)):
            if value and not existing[column]:
                existing[column] = value

    def add_model(self, name: str, metadata: dict | None = None, source: str = "") -> None:
        """Same name across files merges; the first file's metadata is kept.

        Family, size and access are not in harness logs: they are left blank
        ("", NaN, "unknown") here; the loading service guesses them from the
        name and marks the guesses as inferred."""
        if name not in self.models:
            self.models[name] = {
                "name": name,
                "family": "",
                "parameters_b": float("nan"),
                "access": "unknown",
                "metadata": dict(metadata or {}),
                "source": source,
            }

    def add_score(
        self,
        *,
        dataset: str,
        external_id: str,
        model: str,
        credit: float,
        file: str,
        row: int | None = None,
        column: str | None = None,
        source: str,
        epoch: Any = None,
        run: Run | None = None,
    ) -> None:
        """Record one score of one (question, model, epoch).

        ``file``, ``row`` and ``column`` locate it for messages, ``source`` is
        the response's "file:where"; ``epoch`` tells epochs (or replicas) of one
        sample apart (None for a format with one per sample); ``run`` is the run
        it belongs to (default: the file, with no start time).
        """
        record = _Record(credit=credit, source=source, file=file, row=row, column=column,
                         run=run or Run(label=file))
        by_epoch = self.scores.setdefault((dataset, external_id, model), {})
        by_epoch.setdefault(epoch, []).append(record)

    def _one_record(self, cell: tuple[str, str, str], epoch: Any, records: list[_Record]) -> _Record | None:
        """The record of one (question, model, epoch) logged once or more; None
        (and a problem) when its records conflict and cannot be resolved."""
        first = records[0]
        if all(r.credit == first.credit for r in records):
            self.collapsed += len(records) - 1
            return first
        candidates = records
        if self.duplicates == "newest" and all(r.run.started is not None for r in records):
            newest = max(r.run.started for r in records)
            candidates = [r for r in records if r.run.started == newest]
            if all(r.credit == candidates[0].credit for r in candidates):
                self.superseded += sum(1 for r in records if r.credit != candidates[0].credit)
                return candidates[0]
        base = candidates[0]
        other = next(r for r in candidates if r.credit != base.credit)
        if other.run == base.run:
            message = CONFLICTING_IN_RUN
        elif self.duplicates == "newest":
            message = NO_RUN_TIME  # no times, or two runs of the same time
        else:
            message = CONFLICTING_RECORDS
        _, external_id, model = cell
        what = f"sample {external_id!r} of model {model!r}" + (f" (epoch {epoch})" if epoch is not None else "")
        self.problem(other.file, message.format(what=what, first_credit=base.credit, first=base.place,
                                                credit=other.credit), other.row, other.column)
        return None

    def finish(self) -> ParsedResponseSet:
        """Keep one record per (question, model, epoch), average the distinct
        epochs of each cell, write the notes and build the tables.

        A record logged more than once counts once when every copy has the
        same score. Copies that differ are refused (a problem naming both
        places) unless ``duplicates == "newest"`` and the runs' start times
        single out one newest run whose copies agree.

        Raises
        ------
        LoadError
            If any problem was recorded (conflicting copies included), or if
            no score was found.
        """
        import pandas as pd
        rows = []
        repeated = 0
        most = 1
        for cell, by_epoch in self.scores.items():
            kept = [self._one_record(cell, epoch, records) for epoch, records in by_epoch.items()]
            if any(record is None for record in kept):
                continue
            if len(kept) > 1:
                repeated += 1
                most = max(most, len(kept))
            # Partial credit: the mean over the distinct epochs (or replicas).
            credit = sum(r.credit for r in kept) / len(kept)
            rows.append((*cell, credit, kept[0].source))  # the first epoch's "file:where"
        if self.problems:
            raise LoadError(self.problems)
        if not rows:
            where = self.root_name
            raise LoadError([Problem(file=where, message=NO_SCORES)]
                            + [Problem(file=where, message=note) for note in self.notes])
        if repeated:
            self.notes.append(
                f"{repeated} of {counted(len(rows), 'response')} had several samples (epochs or repeats, "
                f"up to {most} per cell); their mean was used as partial credit"
            )
        if self.collapsed:
            self.notes.append(
                f"{counted(self.collapsed, 'record')} repeated a sample already read with the same score "
                "(a repeated line or a second run); each sample was counted once"
            )
        if self.superseded:
            self.notes.append(
                f"{counted(self.superseded, 'record')} of older runs conflicted with the newest run's and "
                f"{'was' if self.superseded == 1 else 'were'} replaced "
                "(duplicates='newest')"
            )
        if self.excluded:
            detail = ", ".join(f"{kind}: {n}" for kind, n in sorted(self.excluded.items()))
            self.notes.append(
                f"{counted(sum(self.excluded.values()), 'sample')} that did not finish "
                f"{'was' if sum(self.excluded.values()) == 1 else 'were'} not counted ({detail})"
            )
        if self.skipped:
            detail = ", ".join(f"{kind}: {n}" for kind, n in sorted(self.skipped.items()))
            n_skipped = sum(self.skipped.values())
            self.notes.append(
                f"{counted(n_skipped, 'value')} that "
                f"{'is not a score was' if n_skipped == 1 else 'are not scores were'} skipped ({detail})"
            )
        if self.text_conflicts:
            self.notes.append(
                f"{self.text_conflicts} question texts differed between files; the first one read was kept"
            )
        asked = {(d, e) for d, e, *_ in rows}
        questions = [q for key, q in self.questions.items() if key in asked]
        return finish_parsed(ParsedResponseSet(
            questions=pd.DataFrame(questions, columns=[*QUESTION_COLUMNS, "source"]),
            models=pd.DataFrame(list(self.models.values()), columns=[*MODEL_COLUMNS, "source"]),
            responses=pd.DataFrame(rows, columns=RESPONSE_COLUMNS).astype({"credit": "float64"}),
            file_format=self.file_format,
            source_files=list(self.files_read),
            notes=list(self.notes),
            options=dict(self.options),
        ))


def load_json(path: Path, collector: Collector) -> Any:
    """Parse a JSON file, or record a problem and return None."""
    collector.read(path)
    try:
        with path.open(encoding="utf-8") as fh:
            return load_bounded(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        collector.problem(collector.name(path), f"not readable as JSON: {exc}")
        return None
