"""Pairwise judgments made elsewhere, imported as a study of origin "imported".

Formats
-------
CSV (one header row) or JSON Lines (one object per line), with the fields

``evaluator``
    Required. Who judged (any text: an id, an e-mail, a model name). Stored as
    a pseudonymous account; the text is kept as the evaluator's participant id.
``group``
    Optional (blank = none): e.g. ``crowd``, ``experts``, ``LLM judge``. The
    report compares the groups with each other and with every method.
``dataset_a``, ``question_a``, ``dataset_b``, ``question_b``
    Required. The two questions, by dataset name and the dataset's own id
    (as loaded with the responses).
``harder``
    Required. ``a``, ``b`` or ``skip``.
``submitted_at``
    Optional ISO 8601 time (default: the import time).
``seconds``
    Optional number from 0 to ``SECONDS_MAX`` (a year): time spent (default
    0); the judgment is stored as shown that long before ``submitted_at``
    (which, less the seconds, must fall after the year 1).

Label Studio
    The JSON export (a list of tasks) of a pairwise-comparison project
    (``<Pairwise name=... toName="a,b"/>``, the annotators asked which of the
    two questions is harder). Each task's ``data`` carries ``dataset_a``,
    ``question_a``, ``dataset_b``, ``question_b`` (the left item is ``a``);
    each annotation's ``completed_by`` is the evaluator, its ``pairwise``
    result's ``value.selected`` is ``left`` (``a`` harder) or ``right``; a
    cancelled annotation (``was_cancelled``) is a skip; ``lead_time`` gives
    the seconds and ``created_at`` the time. A file's ``group`` applies to
    every annotator in it.

Checks (the same spirit as response uploads): every problem is named by file,
row and column, all of them are listed, and nothing is written when there is
one; an unknown question, a question paired with itself, and a second
judgment of one pair by one evaluator are problems; the same bytes are never
imported twice.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotate.core import (
    SEMICOLON_SEPARATED,
    CsvTextError,
    column_name,
    column_value_problem,
    csv_rows,
    csv_separator,
    unknown_name,
)
from annotate.models import (
    Choice,
    Dataset,
    Judgment,
    Pair,
    PairStrategy,
    Participation,
    Question,
    ScoringRun,
    Study,
    StudyOrigin,
    StudyStatus,
)
from annotate.studies.selectors.studies import EVALUATOR_GROUP
from annotate.studies.services.judging import pair_votes_recount

__all__ = ["BY_EXTENSION", "FORMATS", "MAX_IMPORT_BYTES", "ImportFile", "JudgmentImportError", "format_from_name",
           "judgments_import"]

FORMATS = ("csv", "jsonl", "label-studio")
#: A file's format from its extension when none is given.
BY_EXTENSION = {".csv": "csv", ".jsonl": "jsonl", ".json": "label-studio"}
#: The largest file one import accepts (bytes), from the browser or the API.
MAX_IMPORT_BYTES = 50 * 1024 * 1024
REQUIRED = ("evaluator", "dataset_a", "question_a", "dataset_b", "question_b", "harder")
OPTIONAL = ("group", "submitted_at", "seconds")
MAX_PROBLEMS = 50
ERR_FILE_SIZE = "{name} is {size:,} bytes; at most {limit:,} are accepted"
ERR_FILE_GROUP = "the group of {name} {problem}"
ERR_FILE_EXTENSION = ("cannot tell the format of {name} from its extension (.csv, .jsonl, or .json for Label "
                      "Studio); choose the format ({formats})")

PROBLEM = "{file}, row {row}, column {column}: {message}"
ERR_MISSING_COLUMNS = "missing column(s) {missing}; the header must name {required}"
ERR_NO_HEADER = "the file is empty; expected a header row"
ERR_BLANK = "blank; a value is required"
ERR_HARDER = "{value!r} is not a, b or skip"
ERR_SECONDS = "{value!r} is not a number >= 0"
ERR_SECONDS_MAX = "{value!r} is more than {most:,} seconds"
ERR_SHOWN = "{value!r} seconds before submitted_at {time!r} is before the year 1"
#: Most seconds a judgment may take (a year): more cannot be a time on a pair.
SECONDS_MAX = 366 * 24 * 3600
ERR_TIME = "{value!r} is not an ISO 8601 time"
#: Longest group name (the column's limit), for the import form's field.
GROUP_MAX_CHARS = Participation._meta.get_field("group").max_length
#: The column each text of a row is stored in or looked up in: its characters (as a name or id) and length are
#: checked against it.
TEXT_COLUMNS = {
    "evaluator": (Participation, "platform_participant_id"),
    "group": (Participation, "group"),
    "dataset_a": (Dataset, "name"),
    "question_a": (Question, "external_id"),
    "dataset_b": (Dataset, "name"),
    "question_b": (Question, "external_id"),
}
ERR_UNKNOWN_QUESTION = "no question {question!r} in dataset {dataset!r}"
ERR_SAME_QUESTION = "question {question!r} of dataset {dataset!r} is paired with itself"
ERR_TWICE = "evaluator {evaluator!r} already judged this pair at row {first}"
ERR_TWO_GROUPS = ("evaluator {evaluator!r} is in group {group!r} here but in group {first_group!r} at {first_file}, "
                  "row {first}; an evaluator belongs to one group")
ERR_JSON = "not a JSON object: {detail}"
ERR_LS_TOP = "a Label Studio export is a JSON list of tasks; {detail}"
ERR_LS_NOT_TASK = ("not a Label Studio task (an object with a 'data' object and an 'annotations' list); "
                   "found {found}")
ERR_LS_NOT_ANNOTATION = "not a Label Studio annotation (an object); found {found}"
#: Characters of a JSON value a message shows.
SHOWN_CHARS = 60
ERR_LS_SELECTED = "{value!r} is not left or right"
ERR_LS_NO_RESULT = "no pairwise result and not cancelled"
ERR_FORMAT = "format must be one of {formats}; got {value!r}"
ERR_EMPTY = "no judgment in the file(s)"
ERR_SAME_BYTES = "these bytes were already imported as study {study!r} (id {pk}); nothing was written"
ERR_NAME = "a study named {name!r} already exists; choose another name"
ERR_NAME_BLANK = "the study needs a name"


class JudgmentImportError(ValueError):
    """The file(s) cannot be imported; ``problems`` lists each one (file, row, column)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = problems[:MAX_PROBLEMS]
        more = f"\n... and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        super().__init__(f"{len(problems)} problem(s); nothing was imported:\n" + "\n".join(shown) + more)


@dataclass(frozen=True)
class ImportFile:
    """One file to import: its name (for messages), bytes, format and default group."""

    name: str
    data: bytes
    format: str
    group: str = ""


@dataclass(frozen=True)
class _Row:
    file: str
    row: str  # "3", or "task 2, annotation 1" for Label Studio
    evaluator: str
    group: str
    a: tuple[str, str]
    b: tuple[str, str]
    harder: str  # "a", "b", "skip"
    submitted_at: datetime | None
    seconds: float


def _problem(file: str, row: object, column: str, message: str) -> str:
    return PROBLEM.format(file=file, row=row, column=column, message=message)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _record(file: str, row: object, record: dict, group: str, problems: list[str]) -> _Row | None:
    bad = False
    values = {}
    for column in REQUIRED:
        values[column] = _text(record.get(column))
        if not values[column]:
            problems.append(_problem(file, row, column, ERR_BLANK))
            bad = True
    harder = values["harder"].lower()
    if values["harder"] and harder not in ("a", "b", "skip"):
        problems.append(_problem(file, row, "harder", ERR_HARDER.format(value=values["harder"])))
        bad = True
    seconds = 0.0
    raw_seconds = _text(record.get("seconds"))
    if raw_seconds:
        try:
            seconds = float(raw_seconds)
        except ValueError:
            seconds = -1.0
        if not math.isfinite(seconds) or seconds < 0:
            problems.append(_problem(file, row, "seconds", ERR_SECONDS.format(value=raw_seconds)))
            bad = True
        elif seconds > SECONDS_MAX:
            problems.append(_problem(file, row, "seconds", ERR_SECONDS_MAX.format(value=raw_seconds,
                                                                               most=SECONDS_MAX)))
            bad = True
    when = None
    raw_time = _text(record.get("submitted_at"))
    if raw_time:
        try:
            when = parse_datetime(raw_time)
        except ValueError:
            when = None
        if when is None:
            problems.append(_problem(file, row, "submitted_at", ERR_TIME.format(value=raw_time)))
            bad = True
        else:
            try:  # the time in UTC, and the time the pair was shown, are both after the year 1
                when = (timezone.make_aware(when, UTC) if timezone.is_naive(when) else when
                        ).astimezone(UTC)
                when - timedelta(seconds=seconds if 0 <= seconds <= SECONDS_MAX else 0)
            except OverflowError:
                problems.append(_problem(file, row, "submitted_at", ERR_SHOWN.format(value=raw_seconds or "0",
                                                                                  time=raw_time)))
                bad = True
    values["group"] = group = _text(record.get("group")) or group
    for column, (model, field) in TEXT_COLUMNS.items():
        problem = column_value_problem(values[column], model=model, field=field, name=True)
        if problem is not None:
            problems.append(_problem(file, row, column, f"the value {problem}"))
            bad = True
    if bad:
        return None
    return _Row(file=file, row=str(row), evaluator=values["evaluator"], group=group,
                a=(values["dataset_a"], values["question_a"]), b=(values["dataset_b"], values["question_b"]),
                harder=harder, submitted_at=when, seconds=seconds)


def format_from_name(name: str) -> str | None:
    """The import format a file's extension names (``.csv``, ``.jsonl``, ``.json`` = Label Studio), or None."""
    dot = name.rfind(".")
    return BY_EXTENSION.get(name[dot:].lower()) if dot >= 0 else None


def import_file_read(*, name: str, size: int | None, read: Callable[[], bytes], format: str | None = None,
                     group: str = "") -> ImportFile:
    """One file of an import, checked before its bytes are read (the page, the API and the command alike).

    Parameters
    ----------
    name : str
        The file's name, for messages and (without ``format``) its format.
    size : int or None
        Its size in bytes when known before reading (checked against
        ``MAX_IMPORT_BYTES``, 50 MiB); None: checked after reading.
    read : callable
        Returns the file's bytes; called only when the size and format pass.
    format : str or None, default None
        One of ``FORMATS``; None: told by the extension (:func:`format_from_name`).
    group : str, default ""
        The evaluators' group of rows that name none.

    Returns
    -------
    ImportFile

    Raises
    ------
    ValueError
        ``ERR_FILE_SIZE`` over the limit, ``ERR_FILE_EXTENSION`` when no format is
        given and the extension names none, ``ERR_FILE_GROUP`` for a group that is
        not a clean name (:func:`annotate.core.column_value_problem`).
    """
    problem = column_value_problem(group, model=Participation, field="group", name=True)
    if problem is not None:
        raise ValueError(ERR_FILE_GROUP.format(name=name, problem=problem))
    if size is not None and size > MAX_IMPORT_BYTES:
        raise ValueError(ERR_FILE_SIZE.format(name=name, size=size, limit=MAX_IMPORT_BYTES))
    fmt = format or format_from_name(name)
    if fmt is None:
        raise ValueError(ERR_FILE_EXTENSION.format(name=name, formats=", ".join(FORMATS)))
    data = read()
    if len(data) > MAX_IMPORT_BYTES:
        raise ValueError(ERR_FILE_SIZE.format(name=name, size=len(data), limit=MAX_IMPORT_BYTES))
    return ImportFile(name=name, data=data, format=fmt, group=group)


def _decode(f: ImportFile) -> str:
    return f.data.decode("utf-8-sig")


def _parse_csv(f: ImportFile, problems: list[str]) -> list[_Row]:
    text = _decode(f)
    sep = csv_separator(text.split("\n", 1)[0])
    if sep == ";":  # the separator is said, not six columns "missing" (the response uploads say the same)
        problems.append(_problem(f.name, 1, "-", SEMICOLON_SEPARATED))
        return []
    rows: list[_Row] = []
    header: list[str] = []
    try:
        for number, fields in csv_rows(text, sep=sep):
            if number == 1:
                header = [h.strip() for h in fields]
                missing = [c for c in REQUIRED if c not in header]
                if missing:
                    problems.append(_problem(f.name, 1, ", ".join(missing), ERR_MISSING_COLUMNS.format(
                        missing=missing, required=list(REQUIRED))))
                    return []
                continue
            if not fields:  # a blank line
                continue
            row = _record(f.name, number, dict(zip(header, fields, strict=False)), f.group, problems)
            if row is not None:
                rows.append(row)
    except CsvTextError as error:
        problems.append(_problem(f.name, error.row or "-", "-", error.message))
    if not header:
        problems.append(_problem(f.name, 1, "-", ERR_NO_HEADER))
    return rows


def _parse_jsonl(f: ImportFile, problems: list[str]) -> list[_Row]:
    rows = []
    for number, line in enumerate(_decode(f).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(_problem(f.name, number, "-", ERR_JSON.format(detail=error.msg)))
            continue
        if not isinstance(record, dict):
            problems.append(_problem(f.name, number, "-", ERR_JSON.format(detail=type(record).__name__)))
            continue
        row = _record(f.name, number, record, f.group, problems)
        if row is not None:
            rows.append(row)
    return rows


def _annotator(value: object) -> str:
    if isinstance(value, dict):
        return _text(value.get("email") or value.get("id"))
    return _text(value)


def _parse_label_studio(f: ImportFile, problems: list[str]) -> list[_Row]:
    try:
        tasks = json.loads(_decode(f))
    except json.JSONDecodeError as error:
        problems.append(_problem(f.name, error.lineno, "-", ERR_LS_TOP.format(detail=error.msg)))
        return []
    if not isinstance(tasks, list):
        problems.append(_problem(f.name, 1, "-", ERR_LS_TOP.format(detail=f"got a {type(tasks).__name__}")))
        return []
    rows = []
    for t, task in enumerate(tasks, start=1):
        refused = _not_a_task(task)
        if refused is not None:  # said with its position and what is there, as a CSV's row and column
            problems.append(_problem(f.name, f"task {t}", refused[0], ERR_LS_NOT_TASK.format(found=refused[1])))
            continue
        data = task["data"]
        for k, annotation in enumerate(task["annotations"], start=1):
            if not isinstance(annotation, dict):
                problems.append(_problem(f.name, f"task {t} (id {task.get('id')}), annotation {k}", "-",
                                         ERR_LS_NOT_ANNOTATION.format(found=_shown(annotation))))
                continue
            where = f"task {t} (id {task.get('id')}), annotation {k}"
            record = {**{c: data.get(c) for c in ("dataset_a", "question_a", "dataset_b", "question_b")},
                      "evaluator": _annotator(annotation.get("completed_by")),
                      "submitted_at": annotation.get("created_at"), "seconds": annotation.get("lead_time")}
            if annotation.get("was_cancelled"):
                record["harder"] = "skip"
            else:
                picked = [r for r in annotation.get("result", [])
                          if isinstance(r, dict) and r.get("type") == "pairwise"]
                if not picked:
                    problems.append(_problem(f.name, where, "result", ERR_LS_NO_RESULT))
                    continue
                selected = (picked[0].get("value") or {}).get("selected")
                if selected not in ("left", "right"):
                    problems.append(_problem(f.name, where, "result.value.selected",
                                             ERR_LS_SELECTED.format(value=selected)))
                    continue
                record["harder"] = "a" if selected == "left" else "b"
            row = _record(f.name, where, record, f.group, problems)
            if row is not None:
                rows.append(row)
    return rows


def _shown(value: object) -> str:
    """A JSON value as found, for a message: its JSON text, cut to ``SHOWN_CHARS``."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


def _not_a_task(task: object) -> tuple[str, str] | None:
    """(column, what was found) when ``task`` is not a Label Studio task, else None."""
    if not isinstance(task, dict):
        return "-", _shown(task)
    if not isinstance(task.get("data"), dict):
        return "data", f"data {_shown(task.get('data'))}" if "data" in task else f"no data key (keys {sorted(task)})"
    if not isinstance(task.get("annotations", []), list):
        return "annotations", f"annotations {_shown(task['annotations'])}"
    if "annotations" not in task:
        return "annotations", f"no annotations key (keys {sorted(task)})"
    return None


_PARSERS = {"csv": _parse_csv, "jsonl": _parse_jsonl, "label-studio": _parse_label_studio}


def _digest(files: list[ImportFile]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(hashlib.sha256(f.data).digest())
    return h.hexdigest()


def _questions(rows: list[_Row], problems: list[str]) -> dict[tuple[str, str], Question]:
    keys = {k for r in rows for k in (r.a, r.b)}
    found: dict[tuple[str, str], Question] = {}
    found_datasets = set(Dataset.objects.filter(name__in={k[0] for k in keys}).values_list("name", flat=True))
    ids = sorted({k[1] for k in keys})
    for start in range(0, len(ids), 5000):
        for q in Question.objects.filter(external_id__in=ids[start:start + 5000]).select_related("dataset"):
            if (q.dataset.name, q.external_id) in keys:
                found[(q.dataset.name, q.external_id)] = q
    unknown = {k[0] for k in keys} - found_datasets
    stored_names = list(Dataset.objects.values_list("name", flat=True)) if unknown else []
    # an unknown dataset is said as such (with the stored name it likely meant), not blamed on the question id
    said = {name: unknown_name(kind="dataset", name=name, known=stored_names) for name in unknown}
    for r in rows:
        for side, key in (("a", r.a), ("b", r.b)):
            if key[0] in said:
                problems.append(_problem(r.file, r.row, f"dataset_{side}", said[key[0]]))
            elif key not in found:
                problems.append(_problem(r.file, r.row, f"question_{side}",
                                         ERR_UNKNOWN_QUESTION.format(question=key[1], dataset=key[0])))
        if r.a == r.b:
            problems.append(_problem(r.file, r.row, "question_b",
                                     ERR_SAME_QUESTION.format(question=r.a[1], dataset=r.a[0])))
    return found


@transaction.atomic
def judgments_import(
    *, files: list[ImportFile], run: ScoringRun, name: str, created_by: AbstractBaseUser | None = None,
    now: datetime | None = None,
) -> Study:
    """Import pairwise judgments as a closed study of origin "imported".

    Parameters
    ----------
    files : list of ImportFile
        The files (CSV, JSON Lines or Label Studio export), imported together.
    run : ScoringRun
        A finished scoring run: its methods are what the report compares.
    name : str
        The new study's name (unique).
    created_by : user, optional
    now : datetime, optional
        Time of judgments without ``submitted_at`` (default: now).

    Returns
    -------
    Study

    Raises
    ------
    JudgmentImportError
        Every problem of the files, by file, row and column.
    ValueError
        A blank or taken name, an unknown format, no judgment at all, or bytes
        already imported. Nothing is written in any case.
    """
    name = (name or "").strip()
    if not name:
        raise ValueError(ERR_NAME_BLANK)
    name = column_name(name, model=Study, field="name", label="name")
    if Study.objects.filter(name=name).exists():
        raise ValueError(ERR_NAME.format(name=name))
    for f in files:
        if f.format not in _PARSERS:
            raise ValueError(ERR_FORMAT.format(formats=list(FORMATS), value=f.format))
    digest = _digest(files)
    earlier = Study.objects.filter(import_sha256=digest).first()
    if earlier is not None:
        raise ValueError(ERR_SAME_BYTES.format(study=earlier.name, pk=earlier.pk))
    problems: list[str] = []
    rows: list[_Row] = []
    for f in files:
        try:
            rows += _PARSERS[f.format](f, problems)
        except UnicodeDecodeError as error:
            problems.append(_problem(f.name, "-", "-", f"not UTF-8 text ({error.reason} at byte {error.start})"))
    questions = _questions(rows, problems)
    first_seen: dict[tuple[str, frozenset], str] = {}
    for r in rows:
        key = (r.evaluator, frozenset((r.a, r.b)))
        if key in first_seen:
            problems.append(_problem(r.file, r.row, "evaluator",
                                     ERR_TWICE.format(evaluator=r.evaluator, first=first_seen[key])))
        else:
            first_seen[key] = r.row
    group_of: dict[str, _Row] = {}
    for r in rows:
        first = group_of.setdefault(r.evaluator, r)
        if first.group != r.group:
            problems.append(_problem(r.file, r.row, "group", ERR_TWO_GROUPS.format(
                evaluator=r.evaluator, group=r.group, first_group=first.group, first_file=first.file,
                first=first.row)))
    if problems:
        raise JudgmentImportError(problems)
    if not rows:
        raise ValueError(ERR_EMPTY)
    stamp = now or timezone.now()
    study = Study.objects.create(
        name=name, scoring_run=run, strategy=PairStrategy.UNIFORM, seed=0, n_pairs=1, status=StudyStatus.CLOSED,
        closed_at=stamp, origin=StudyOrigin.IMPORTED, import_sha256=digest, speeder_seconds=0.0,
        created_by=created_by, guidelines="Judgments imported from " + ", ".join(f.name for f in files) + ".",
    )
    pairs: dict[frozenset, Pair] = {}
    for r in rows:
        key = frozenset((r.a, r.b))
        if key not in pairs:
            pairs[key] = Pair(study=study, position=len(pairs), question_a=questions[r.a], question_b=questions[r.b])
    Pair.objects.bulk_create(pairs.values())
    Study.objects.filter(pk=study.pk).update(n_pairs=len(pairs))
    study.refresh_from_db()
    study.datasets.set({q.dataset_id for q in questions.values()})
    study.subjects.set({q.subject_id for q in questions.values() if q.subject_id is not None})
    User = get_user_model()
    group, _ = Group.objects.get_or_create(name=EVALUATOR_GROUP)
    participations: dict[str, Participation] = {}
    judgments = []
    for r in rows:
        part = participations.get(r.evaluator)
        if part is None:
            user = User(username=f"study{study.pk}-evaluator{len(participations) + 1:03d}", is_active=False)
            user.set_unusable_password()
            user.save()
            user.groups.add(group)
            part = Participation.objects.create(study=study, user=user, consented_at=stamp, onboarded_at=stamp,
                                                guidelines_accepted_at=stamp, finished_at=stamp, group=r.group,
                                                platform_participant_id=r.evaluator)
            participations[r.evaluator] = part
        pair = pairs[frozenset((r.a, r.b))]
        when = r.submitted_at or stamp
        shown = when - timedelta(seconds=r.seconds)
        if r.harder == "skip":
            choice, harder = Choice.SKIP, None
        else:
            harder = questions[r.a] if r.harder == "a" else questions[r.b]
            choice = Choice.LEFT if harder.pk == pair.question_a_id else Choice.RIGHT
        judgments.append(Judgment(participation=part, pair=pair, choice=choice, left_question=pair.question_a,
                                  harder_question=harder, shown_at=shown, submitted_at=when, seconds=r.seconds))
    Judgment.objects.bulk_create(judgments, batch_size=5000)
    pair_votes_recount(study_id=study.pk)
    return study
