"""The one upload service: response files in, a previewed and loaded response set out.

The admin upload page, the JSON API (``POST /api/response-sets/``) and
``manage.py load_responses`` all come here, so every door reads the same
formats with the same options:

- tabular: a responses file (wide CSV, long CSV/TSV or JSON Lines) with
  optional questions and models files, or a folder in the MMLU-Pro layout
  (command only);
- evaluation-harness logs (lm-eval, Inspect ``.eval``/``.json``, HELM,
  OpenCompass): several files and/or ``.zip`` archives of log folders.

Two ways through
----------------
Files already on disk (the command): :func:`upload_check` parses once and
checks once, :func:`upload_load` writes that plan.

Uploaded files (the admin page, the API): :func:`upload_store` saves them in a
private folder ``UPLOAD_ROOT/<token>/`` (mode 0700, one folder per role, base
names only, each ``.zip`` unpacked safely by :func:`zip_unpack`), then
:func:`upload_preview` parses and checks them once and keeps the parsed upload
and its plan next to the files (``parsed.pickle``), keyed by the SHA-256 of the
stored bytes and the options (``parsed.sha256``). The confirmed load runs in
the worker (:mod:`annotate.catalog.services.upload_jobs`, through
:func:`checked_upload`), which recomputes that checksum and, when it matches,
loads the kept plan without parsing again (the loading service checks again
only if the catalog changed meanwhile); otherwise it parses again.
:func:`upload_receive` stores, previews and (unless a dry run) loads in one call, for the API.

Files are removed after a load, after any failed store, preview or load
(:func:`upload_discard`), and when older than ``UPLOAD_MAX_AGE_S`` (swept by
:func:`uploads_sweep` on every new upload). Problems name the uploaded files,
never the upload folder.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from django.contrib.auth.base_user import AbstractBaseUser

from annotate.catalog.loaders.base import LoadError, ParsedResponseSet, Problem
from annotate.catalog.loaders.harness import parse_harness_logs
from annotate.catalog.loaders.limits import (
    CHUNK_BYTES,
    max_cells,
    max_upload_bytes,
)
from annotate.catalog.loaders.links import refuse_links
from annotate.catalog.loaders.tabular_files import detect_format, parse_files, parse_folder
from annotate.catalog.selectors.catalog import response_set_by_checksum
from annotate.catalog.services.load_plan import ALREADY_LOADED, LoadPlan, LoadPreview
from annotate.catalog.services.loading import Progress, response_set_load, response_set_plan
from annotate.catalog.services.name_variants import MERGE_OPTION
from annotate.core import csv_separator
from annotate.models import ResponseSet

UPLOAD_TOO_LARGE = "the upload is larger than {limit:,} bytes (EIP_UPLOAD_MAX_BYTES); nothing was loaded"
TOO_MANY_CELLS = (
    "{cells:,} model-question cells ({questions:,} questions x {models:,} models) is more than the limit of "
    "{limit:,} (EIP_UPLOAD_MAX_CELLS); split the upload; nothing was loaded"
)
TOO_MANY_ROWS = (
    "{rows:,} response rows is more than the limit of {limit:,} model-question cells (EIP_UPLOAD_MAX_CELLS); "
    "split the upload; nothing was loaded"
)
ONE_SOURCE = "give exactly one of responses, folder and logs; got {given}"
FOLDER_ALONE = "a folder is read as responses_binary.csv, questions.csv and models.csv; got {given} too"
LOGS_ALONE = "harness logs carry their own questions and models; got {given} too"


class UploadedFileLike(Protocol):
    """What an upload needs of Django's ``UploadedFile``: a client-side name and chunks of bytes."""

    name: str | None

    def chunks(self, chunk_size: int | None = None): ...


@dataclass(frozen=True)
class UploadOptions:
    """How to read an upload (the admin form's, the API's and the command's options).

    Attributes
    ----------
    file_format : str, default "auto"
        "auto", a tabular format ("wide", "long", "jsonl") or a harness
        ("lm-eval", "inspect", "helm", "opencompass").
    dataset : str or None
        Dataset name (required for a wide file; for logs, default the task
        group or task).
    name : str or None
        Response set name; None: the responses file name (or the first log
        file, ``.zip`` or folder name) without its extension.
    new_version : bool, default False
        Load as the next version of an existing name.
    subject_column, keep_columns, id_column, model_column
        Tabular files only: the subject column, question columns kept into
        metadata, the question id column, the models file's model name column.
    metric, log_filter, skip_invalid
        Harness logs only: the score to read, the lm-eval filter, and whether
        to skip values that are not scores.
    newest_run : bool, default False
        Harness logs only: a sample logged by several runs with different
        scores takes the newest run's score (``duplicates="newest"`` of
        :func:`~annotate.catalog.loaders.harness.parse_harness_logs`) instead of
        refusing the upload.
    merge_case_variants : bool, default False
        Names that differ only by case ("GPT-4", "gpt-4") are loaded as one,
        the stored spelling (or the first in the upload) kept, instead of
        refusing the upload (see :mod:`annotate.catalog.services.name_variants`).
    text_format : {"plain", "markdown"} or None, default None
        The text format of the datasets the load creates (see
        :class:`~annotate.models.TextFormat`); None: each one's suggested
        format, which the preview shows. Read at load time only, so a
        preview's parse is reused whatever is chosen.
    """

    file_format: str = "auto"
    dataset: str | None = None
    name: str | None = None
    new_version: bool = False
    subject_column: str | None = None
    keep_columns: tuple[str, ...] = ()
    id_column: str = "question_id"
    model_column: str = "model"
    metric: str | None = None
    log_filter: str | None = None
    skip_invalid: bool = False
    newest_run: bool = False
    merge_case_variants: bool = False
    text_format: str | None = None

    @classmethod
    def of(cls, data: Mapping[str, object]) -> UploadOptions:
        """The options among ``data`` (e.g. a form's ``cleaned_data``); other keys are ignored."""
        known = {f.name for f in dataclasses.fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        if given.get("keep_columns") is not None:
            given["keep_columns"] = tuple(given["keep_columns"])
        for key, default in (("file_format", "auto"), ("id_column", "question_id"), ("model_column", "model"),
                             ("keep_columns", ())):
            if not given.get(key):
                given[key] = default
        given["new_version"] = bool(given.get("new_version"))
        given["skip_invalid"] = bool(given.get("skip_invalid"))
        given["newest_run"] = bool(given.get("newest_run"))
        given["merge_case_variants"] = bool(given.get("merge_case_variants"))
        given["text_format"] = given.get("text_format") or None
        return cls(**given)

    def as_dict(self) -> dict[str, object]:
        """JSON-safe (for a session); :meth:`of` reads it back."""
        return {**dataclasses.asdict(self), "keep_columns": list(self.keep_columns)}


@dataclass(frozen=True)
class UploadSource:
    """Files on disk to read: a responses file (with optional questions and models
    files), a folder in the MMLU-Pro layout, or harness logs (files and/or folders)."""

    responses: Path | None = None
    questions: Path | None = None
    models: Path | None = None
    folder: Path | None = None
    logs: tuple[Path, ...] = ()


@dataclass(frozen=True)
class StoredUpload:
    """An upload saved by :func:`upload_store`, waiting for preview and confirm.

    Attributes
    ----------
    token : str
        32 hex digits; the folder ``UPLOAD_ROOT/<token>/``. Whoever holds it
        can confirm, so keep it where only the uploader sees it (a session).
    files : dict of str to str
        Stored paths by role: "responses", "questions", "models", or "logs"
        (the folder holding every log file and unpacked ``.zip``).
    options : UploadOptions
        With ``name`` filled in (the default derived from the file names).
    checksum : str
        SHA-256 (hex) of the stored files (relative names and bytes) and the
        options; the key of the kept parse.
    """

    token: str
    files: dict[str, str]
    options: UploadOptions
    checksum: str

    def as_session(self) -> dict[str, object]:
        """JSON-safe, for a session; :meth:`from_session` reads it back."""
        return {"files": dict(self.files), "options": self.options.as_dict(), "checksum": self.checksum}

    @classmethod
    def from_session(cls, token: str, data: Mapping[str, object]) -> StoredUpload:
        """The upload ``token`` as :meth:`as_session` wrote it."""
        return cls(token=token, files=dict(data["files"]), options=UploadOptions.of(data["options"]),
                   checksum=str(data.get("checksum", "")))


@dataclass(frozen=True)
class CheckedUpload:
    """An upload parsed once and checked once against the database.

    Attributes
    ----------
    parsed : ParsedResponseSet
    plan : LoadPlan
        What a load would write; :func:`upload_load` and the worker's load
        (:mod:`annotate.catalog.services.upload_jobs`) write it without checking
        again while the catalog is unchanged.
    """

    parsed: ParsedResponseSet
    plan: LoadPlan

    @property
    def preview(self) -> LoadPreview:
        return self.plan.preview

    @property
    def scores_read(self) -> list[tuple[str, str, str]]:
        """(task, metric, filter) a harness parser read; [] for tabular files."""
        options = self.parsed.options
        filters = options.get("filters_used") or {}
        return [(task, str(metric) if metric else "", filters.get(task) or "")
                for task, metric in (options.get("metrics_used") or {}).items()]


@dataclass(frozen=True)
class UploadOutcome:
    """A loaded response set, or (dry run) None and the preview of one."""

    response_set: ResponseSet | None
    preview: LoadPreview


# -- reading files on disk -------------------------------------------------------------


def _check_source(source: UploadSource) -> None:
    kinds = [k for k, given in (("responses", source.responses is not None), ("folder", source.folder is not None),
                                ("logs", bool(source.logs))) if given]
    if len(kinds) != 1:
        raise ValueError(ONE_SOURCE.format(given=kinds or "none"))
    extras = [k for k in ("questions", "models") if getattr(source, k) is not None]
    if extras and source.folder is not None:
        raise ValueError(FOLDER_ALONE.format(given=extras))
    if extras and source.logs:
        raise ValueError(LOGS_ALONE.format(given=extras))


def upload_parse(*, source: UploadSource, options: UploadOptions) -> ParsedResponseSet:
    """Read an upload's files with the parser its kind and format call for.

    The one place that chooses a parser: harness logs go to
    :func:`~annotate.catalog.loaders.harness.parse_harness_logs`, a folder to
    :func:`~annotate.catalog.loaders.tabular_files.parse_folder`, a responses file to
    :func:`~annotate.catalog.loaders.tabular_files.parse_files`. Writes nothing.

    Parameters
    ----------
    source : UploadSource
        Exactly one of ``responses`` (with optional ``questions`` and
        ``models``), ``folder`` and ``logs``.
    options : UploadOptions

    Returns
    -------
    ParsedResponseSet

    Raises
    ------
    LoadError
        The files cannot be read; every problem names file, row and column.
    ValueError
        ``source`` gives none or several kinds of files, or an option is
        malformed for the parser.
    """
    parsed = _parse_checked(source, options)
    if options.merge_case_variants:
        parsed.options[MERGE_OPTION] = True  # read by the loading service (and stored with the set)
    return parsed


def _parse_checked(source: UploadSource, options: UploadOptions) -> ParsedResponseSet:
    """The limits checked before (sizes) and after (cells) the parse of :func:`_parse`."""
    _check_source(source)
    upload_check_limits(source=source, options=options)
    parsed = _parse(source, options)
    _, n_questions, n_models = parsed.observed_counts()
    if n_questions * n_models > max_cells():
        raise LoadError([Problem(file=_source_label(source), message=TOO_MANY_CELLS.format(
            cells=n_questions * n_models, questions=n_questions, models=n_models, limit=max_cells()))])
    return parsed


def _source_label(source: UploadSource) -> str:
    first = source.responses or source.folder or source.logs[0]
    return Path(first).name


def _files_of(source: UploadSource) -> list[Path]:
    paths = [Path(p) for p in (source.responses, source.questions, source.models) if p is not None]
    for folder in (*source.logs, *([source.folder] if source.folder is not None else [])):
        folder = Path(folder)
        paths.extend(sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else [folder])
    return paths


def _count_rows(path: Path) -> tuple[int, str]:
    """(data rows, header line) of a text file, counted in bounded chunks."""
    newlines, last, header = 0, b"\n", b""
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK_BYTES), b""):
            if not header:
                header = block.split(b"\n", 1)[0][:CHUNK_BYTES]
            newlines += block.count(b"\n")
            last = block[-1:]
    lines = newlines + (last != b"\n")
    return lines, header.decode("utf-8-sig", errors="replace")


def upload_check_limits(*, source: UploadSource, options: UploadOptions) -> None:
    """Refuse files on disk over the size or cell limits, before any parsing.

    Sizes come from the file system; a tabular responses file's cells are
    counted from its lines and header, streamed in chunks of ``CHUNK_BYTES``
    (wide: rows x model columns; long or JSON Lines: one cell per row).
    Harness logs are counted after parsing (their decompression is bounded
    by the archive limits).

    Raises
    ------
    LoadError
        Naming the file and the limit (``EIP_UPLOAD_MAX_BYTES`` or
        ``EIP_UPLOAD_MAX_CELLS``).
    """
    total = 0
    for path in _files_of(source):
        total += path.stat().st_size if path.is_file() else 0
        if total > max_upload_bytes():
            raise LoadError([Problem(file=path.name, message=UPLOAD_TOO_LARGE.format(limit=max_upload_bytes()))])
    responses = source.responses
    if source.folder is not None:
        responses = Path(source.folder) / "responses_binary.csv"
    if responses is None or not Path(responses).is_file():
        return
    responses = Path(responses)
    file_format = "wide" if source.folder is not None else options.file_format
    if file_format == "auto":
        file_format = detect_format(responses)[0]
    lines, header = _count_rows(responses)
    if file_format != "wide":
        rows = lines if file_format == "jsonl" else max(lines - 1, 0)  # a CSV/TSV has a header line
        if rows > max_cells():
            raise LoadError([Problem(file=responses.name, message=TOO_MANY_ROWS.format(rows=rows, limit=max_cells()))])
        return
    sep = csv_separator(header)
    n_fields = len(header.split(sep))
    n_models = max(n_fields - 1 - len(options.keep_columns) - (options.subject_column is not None), 1)
    n_questions = max(lines - 1, 0)
    if n_questions * n_models > max_cells():
        raise LoadError([Problem(file=responses.name, row=1, message=TOO_MANY_CELLS.format(
            cells=n_questions * n_models, questions=n_questions, models=n_models, limit=max_cells()))])


def source_checksum(*, source: UploadSource) -> str | None:
    """The SHA-256 a load of these tabular files would store (as
    :func:`annotate.catalog.services.load_plan.checksum_of` computes it after parsing),
    computed from the bytes alone; None for harness logs (whose checksum
    depends on the order their parser reads them)."""
    _check_source(source)
    if source.logs:
        return None
    if source.folder is not None:
        folder = Path(source.folder)
        paths = [folder / n for n in ("responses_binary.csv", "questions.csv", "models.csv") if (folder / n).is_file()]
    else:
        paths = [Path(p) for p in (source.responses, source.questions, source.models) if p is not None]
    outer = hashlib.sha256()
    for path in paths:
        inner = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(CHUNK_BYTES), b""):
                inner.update(block)
        outer.update(inner.digest())
    return outer.hexdigest()


def upload_refuse_loaded(*, source: UploadSource) -> None:
    """Refuse files whose bytes are already loaded, before any parsing.

    Raises
    ------
    LoadError
        ``ALREADY_LOADED`` naming the existing response set.
    """
    checksum = source_checksum(source=source)
    existing = response_set_by_checksum(checksum=checksum) if checksum else None
    if existing is not None:
        raise LoadError([Problem(file=_source_label(source), message=ALREADY_LOADED.format(
            existing=str(existing), pk=existing.pk))])


def _parse(source: UploadSource, options: UploadOptions) -> ParsedResponseSet:
    if source.logs:
        return parse_harness_logs(
            list(source.logs), format=None if options.file_format == "auto" else options.file_format,
            metric=options.metric, filter=options.log_filter, dataset=options.dataset,
            skip_invalid=options.skip_invalid, duplicates="newest" if options.newest_run else "refuse",
        )
    if source.folder is not None:
        return parse_folder(source.folder, dataset=options.dataset, subject_column=options.subject_column,
                            keep_columns=list(options.keep_columns), id_column=options.id_column,
                            model_column=options.model_column)
    return parse_files(
        responses=source.responses, file_format=options.file_format, dataset=options.dataset,
        questions=source.questions, models=source.models, subject_column=options.subject_column,
        keep_columns=list(options.keep_columns), id_column=options.id_column,
        model_column=options.model_column,
    )


def _stem(file_name: str) -> str:
    """A file name without its extension (``.zip`` included)."""
    name = Path(file_name).name
    return name[:-4] if name.lower().endswith(".zip") else Path(name).stem


def upload_default_name(*, source: UploadSource) -> str:
    """The response set name when none is given: the folder's name, the responses
    file's name without extension, or the first log's (file, ``.zip`` or folder)."""
    _check_source(source)
    if source.folder is not None:
        return source.folder.resolve().name
    if source.responses is not None:
        return Path(source.responses).stem
    first = Path(source.logs[0]).resolve()
    return first.name if first.is_dir() else _stem(first.name)


def upload_check(*, source: UploadSource, options: UploadOptions) -> CheckedUpload:
    """Parse files on disk once and check them against the database once.

    Parameters
    ----------
    source : UploadSource
    options : UploadOptions
        ``name`` None takes :func:`upload_default_name`.

    Returns
    -------
    CheckedUpload
        Its ``preview`` says what a load would write; nothing is written.

    Raises
    ------
    LoadError
        The files cannot be loaded (see :func:`upload_parse` and
        :func:`annotate.catalog.services.loading.response_set_preview`), or a given
        path or a file under a given folder is a symbolic link
        (:data:`annotate.catalog.loaders.links.LINK_REFUSED`, as the admin refuses
        links in a ``.zip``).
    ValueError
        A malformed source or option.
    """
    _check_source(source)
    refuse_links([p for p in (source.responses, source.questions, source.models, source.folder, *source.logs)
                  if p is not None])  # links are refused as the admin refuses them in a .zip
    upload_refuse_loaded(source=source)
    parsed = upload_parse(source=source, options=options)
    name = options.name or upload_default_name(source=source)
    return CheckedUpload(parsed=parsed,
                         plan=response_set_plan(parsed=parsed, name=name, new_version=options.new_version))


def upload_load(
    *, checked: CheckedUpload, user: AbstractBaseUser | None = None, progress: Progress | None = None,
    published: Callable[[ResponseSet], None] | None = None, text_format: str | None = None,
) -> ResponseSet:
    """Write a checked upload in one transaction, reusing its plan.

    Parameters
    ----------
    checked : CheckedUpload
        From :func:`upload_check` or :func:`upload_preview`.
    user : User or None, default None
        Stored as ``uploaded_by``.
    progress : callable (done, total) -> None, optional
        Called after each batch of responses is written.
    published : callable (ResponseSet) -> None, optional
        Called inside the transaction that makes the set visible (see
        :func:`~annotate.catalog.services.loading.response_set_load`).
    text_format : {"plain", "markdown"} or None, default None
        The text format of the datasets the load creates; None: each one's
        suggested format (``checked.preview.text_formats``).

    Returns
    -------
    ResponseSet

    Raises
    ------
    LoadError
        Nothing was written (the catalog changed since the check and the
        upload no longer fits, e.g. the same files were loaded meanwhile).
    ValueError
        ``text_format`` is not a text format.
    """
    plan = checked.plan
    return response_set_load(parsed=checked.parsed, name=plan.name, user=user, new_version=plan.new_version,
                             progress=progress, plan=plan, published=published, text_format=text_format)


# -- storing uploaded files ------------------------------------------------------------


# -- safe unpacking --------------------------------------------------------------------


