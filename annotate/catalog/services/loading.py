"""Write a parsed response set to the database: preview, then load atomically.

The upload service (:mod:`annotate.catalog.services.uploads`, behind the admin upload
page, the API and ``manage.py load_responses``) calls :func:`response_set_plan`
once for the preview and hands the plan to :func:`response_set_load`; parsers
(see :mod:`annotate.catalog.loaders`) never touch the database.

Rules
-----
- A load lands completely or not at all, without holding the database's
  write lock for long (SQLite has one for the whole database): every check
  runs before the first write; one short transaction writes the catalog rows,
  the response set, status ``loading`` (hidden by every selector), and its
  model columns; then each batch of ``RESPONSE_BATCH_SIZE`` questions (rows of
  the matrix) is its own transaction (retried on a transient "database is
  locked"): their membership rows, and their block of the matrix written to
  a temporary Zarr store (:mod:`annotate.catalog.matrix_store`); one short
  final transaction marks the set ``loaded`` (and earlier versions
  superseded) and, as its last step, renames the temporary store into place.
  A failure removes the set, its membership rows, its store (temporary or
  not) and the catalog rows this load created; the sweep of abandoned loads
  does the same for a load that was killed.
- Cells are never database rows: the matrix (uint8 for 0/1 credit, float32
  for partial credit, plus the observed mask) is written a block of rows at a
  time. Row order is the order in which the file first names each question
  (a wide file's row order), column order the order of its models. The
  parsers still hand over the whole long form (a pandas table, checked as a
  whole): only the writing is in blocks; streaming the parse is not done yet.
- A plan is checked once: a load given the preview's plan writes it as is
  while the catalog stamp (count and highest id of datasets, subjects,
  questions, models and response sets) is unchanged, and checks again
  otherwise. An admin edit of an existing question's text or subject between
  preview and load is not seen (as it would not be seen between the checks
  and the writes of one load).
- Identical files are never loaded twice: the SHA-256 of the source files is
  unique (``ResponseSet.checksum``); a second load is refused naming the
  existing response set. Loader options are not part of the checksum.
- A changed file under an existing name is refused unless ``new_version`` is
  set; then it becomes version ``latest + 1`` and every earlier version is
  marked superseded (their responses are kept).
- Models from evaluation-harness logs, which name a model and nothing else,
  get family, size and access guessed from the name, listed in
  ``metadata["inferred"]``, as the tabular loaders do for blank fields.
- Datasets, subjects and models are shared: get-or-create by name; questions
  by (dataset, external_id). Existing rows are never changed by a load: if the
  file gives an existing question another subject or text, or an existing
  model another family/access/size, the load is refused naming it.
- Membership rows (question -> row) are inserted in batches of
  ``RESPONSE_BATCH_SIZE`` with ``bulk_create``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from annotate.catalog import matrix_store
from annotate.catalog.loaders.base import (
    MODEL_COLUMNS,
    QUESTION_COLUMNS,
    RESPONSE_COLUMNS,
    LoadError,
    ParsedResponseSet,
    Problem,
)
from annotate.catalog.loaders.harness import FORMATS as HARNESS_FORMATS
from annotate.catalog.loaders.model_names import infer_from_model_name
from annotate.catalog.loaders.tabular import shorten_quoted
from annotate.catalog.selectors.catalog import (
    catalog_stamp,
    dataset_ids_by_name,
    dataset_text_formats,
    model_table,
    question_table,
    response_set_by_checksum,
    response_set_latest,
    subject_ids_by_name,
)
from annotate.catalog.services.name_variants import case_variants_resolve
from annotate.core import (
    UNKNOWN_TEXT_FORMAT,
    TextFormatSuggestion,
    load_lock,
    responses_analyze,
    rows_insert,
    text_format_suggest,
)
from annotate.models import (
    Dataset,
    LanguageModel,
    ModelAccess,
    Question,
    ResponseSet,
    ResponseSetModel,
    ResponseSetQuestion,
    ResponseSetStatus,
    Subject,
    TextFormat,
)
from scoring.diagnostics import DEFAULT_MIN_MODELS, cell_diagnostics

if TYPE_CHECKING:
    import pandas as pd

    from annotate.catalog.loaders.dense import DenseCells

RESPONSE_BATCH_SIZE = matrix_store.ROW_CHUNK  # questions (rows of the matrix) per batch
LOCKED_RETRIES = 10
LOCKED_WAIT_S = 0.5
DELETE_BATCH_SIZE = 500
CREATED_KEY = "created_by_load"  # summary key of a loading set: catalog rows it created, as id runs
LOAD_STALE_S = 15 * 60  # a loading set without a batch for this long is abandoned

logger = logging.getLogger(__name__)
PREVIEW_ROWS = 10
QUESTION_BATCH_SIZE = 20_000  # new Question instances built (and bulk-created) at a time

ALREADY_LOADED = "these files were already loaded as response set {existing!r} (id {pk}); nothing was written"
NAME_EXISTS = (
    "a response set named {name!r} already exists (latest version {version}); to load these files as "
    "version {next_version}, use --new-version (command) or tick 'Load as a new version' (admin)"
)
NO_EARLIER_VERSION = (
    "no response set named {name!r} exists, so there is no earlier version to supersede; "
    "load it without --new-version (or untick 'Load as a new version')"
)
QUESTION_CONFLICT = (
    "question {question_id!r} of dataset {dataset!r} already exists with {field} {stored!r}, but this file "
    "gives {given!r}; existing questions are never changed by a load"
)
MODEL_CONFLICT = (
    "model {model!r} already exists with {field} {stored!r}, but this file gives {given!r}; "
    "existing models are never changed by a load"
)
CREDIT_INVALID = "credit {value!r} is not a finite number in [0, 1]"
UNKNOWN_QUESTION = "question {question_id!r} of dataset {dataset!r} is not among the parsed questions"
UNKNOWN_MODEL = "model {model!r} is not among the parsed models"
DUPLICATE_RESPONSE = "a second credit for question {question_id!r} and model {model!r} (the first is at {first})"
DUPLICATE_QUESTION = "question {question_id!r} of dataset {dataset!r} is listed twice (the first is at {first})"
DUPLICATE_MODEL = "model {model!r} is listed twice (the first is at {first})"
BLANK_VALUE = "{what} is blank"
TOO_LONG = "{what} {value!r} is longer than {limit} characters"
BAD_ACCESS = "access {value!r} is not one of {choices}"
BAD_PARAMETERS = "parameter count {value!r} must be positive (or unknown)"
NO_RESPONSES = "no observed responses to load"
PLAN_MISMATCH = "plan must be the LoadPlan that response_set_plan made for this parsed upload"
TEXT_TOO_LONG = ("question {question_id!r}: its {column} is {length:,} characters long; the limit is {limit:,} "
                 "(setting QUESTION_TEXT_MAX_CHARS)")

_LIMITS = {
    "dataset": Dataset._meta.get_field("name").max_length,
    "external_id": Question._meta.get_field("external_id").max_length,
    "subject": Subject._meta.get_field("name").max_length,
    "model": LanguageModel._meta.get_field("name").max_length,
    "family": LanguageModel._meta.get_field("family").max_length,
}
_CATALOG = (Question, LanguageModel, Subject, Dataset)  # in deletion order
_FILE_NAME_LIMIT = ResponseSet._meta.get_field("file_name").max_length

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PreviewRow:
    """One response as the preview shows it."""

    dataset: str
    question_id: str
    subject: str | None
    model: str
    credit: float


@dataclass(frozen=True)
class DatasetTextFormat:
    """How one dataset of an upload will show its question text.

    Attributes
    ----------
    dataset : str
    suggestion : TextFormatSuggestion
        What :func:`~annotate.core.rendering.text_format_suggest` proposes from
        the upload's texts of this dataset.
    stored : str or None
        The format of a dataset that already exists (a load keeps it; the
        dataset's admin page changes it); None for a new dataset, which is
        created with the chosen format, or else the suggested one.
    """

    dataset: str
    suggestion: TextFormatSuggestion
    stored: str | None

    @property
    def stored_label(self) -> str | None:
        return None if self.stored is None else TextFormat(self.stored).label


def text_formats_suggest(*, questions: pd.DataFrame) -> dict[str, TextFormatSuggestion]:
    """The text format suggested for each dataset of a parsed upload.

    Parameters
    ----------
    questions : DataFrame
        A parsed upload's questions (:data:`~annotate.catalog.loaders.base.QUESTION_COLUMNS`;
        ``dataset`` and ``text`` are read).

    Returns
    -------
    dict of str to TextFormatSuggestion
        By dataset name, in the upload's order.
    """
    return {str(name): text_format_suggest(texts.tolist())
            for name, texts in questions.groupby("dataset", sort=False)["text"]}


@dataclass(frozen=True)
class LoadPreview:
    """What :func:`response_set_load` would write, computed without writing.

    Attributes
    ----------
    name, version : str or None, int
        The response set that would be created (name None when not given).
    supersedes : str or None
        "name vN" of the version that would be marked superseded.
    checksum : str
        SHA-256 of the source files (hex).
    file_format : str
    n_responses : int
        Observed responses (cells) to insert.
    n_questions, n_models : int
        Distinct questions and models with at least one response.
    n_cells, n_missing : int
        ``n_questions * n_models`` model-question cells, and how many of them
        have no response ("N of M model-question cells not observed").
    n_low_coverage : int
        Questions answered by fewer than ``DEFAULT_MIN_MODELS`` (3) models.
    n_components : int
        Connected components of the model-question graph (see
        :func:`scoring.diagnostics.cell_diagnostics`); more than one means
        blocks of questions that no common model answered.
    datasets_new, datasets_existing, subjects_new, subjects_existing,
    questions_new, questions_existing, models_new, models_existing : int
        Catalog rows to create, and rows that already exist and are reused.
    new_dataset_names, new_subject_names, new_model_names : tuple of str
    notes : tuple of str
        Parser remarks (ignored columns, exact duplicates, ...).
    first_rows : tuple of PreviewRow
        The first ``PREVIEW_ROWS`` responses in file order.
    text_formats : tuple of DatasetTextFormat
        Each dataset's suggested (and, for an existing one, stored) text format.
    """

    name: str | None
    version: int
    supersedes: str | None
    checksum: str
    file_format: str
    n_responses: int
    n_questions: int
    n_models: int
    n_cells: int
    n_missing: int
    n_low_coverage: int
    n_components: int
    datasets_new: int
    datasets_existing: int
    subjects_new: int
    subjects_existing: int
    questions_new: int
    questions_existing: int
    models_new: int
    models_existing: int
    new_dataset_names: tuple[str, ...]
    new_subject_names: tuple[str, ...]
    new_model_names: tuple[str, ...]
    notes: tuple[str, ...]
    first_rows: tuple[PreviewRow, ...]
    text_formats: tuple[DatasetTextFormat, ...] = ()

    @property
    def diagnostics_line(self) -> str:
        """"N of M model-question cells not observed; ..." (see :func:`diagnostics_line`)."""
        return diagnostics_line(
            n_cells=self.n_cells, n_missing=self.n_missing, n_low_coverage=self.n_low_coverage,
            n_components=self.n_components,
        )


@dataclass
class LoadPlan:
    """Every check and count of one parsed upload against the catalog, computed once.

    Made by :func:`response_set_plan`; :func:`response_set_load` writes it
    without checking again while the catalog is unchanged (same
    :func:`~annotate.catalog.selectors.catalog.catalog_stamp`), and plans again
    otherwise. Picklable, so an upload's plan can wait between a preview and
    its confirmation.

    Attributes
    ----------
    parsed : ParsedResponseSet
        The upload it was made for (a plan is used only with this very object).
    name : str or None
    new_version : bool
    stamp : tuple
        The catalog stamp read before the checks.
    preview : LoadPreview
        What a load would write.
    """

    parsed: ParsedResponseSet
    name: str | None
    new_version: bool
    stamp: tuple
    preview: LoadPreview
    new_datasets: list[str]
    new_subjects: list[str]
    subject_names: list[str]
    new_questions: pd.DataFrame
    new_models: pd.DataFrame
    superseded_name: str | None = None


def _label(parsed: ParsedResponseSet) -> str:
    return ", ".join(Path(p).name for p in parsed.source_files) or "upload"


def _where(source: object, default: str) -> tuple[str, int | None]:
    """Split a row's ``source`` into (file, row) for a :class:`Problem`.

    "file:12" (the tabular loaders, lm-eval lines) gives ("file", 12). Any
    other non-blank source is a location only its parser understands (Inspect
    "log.json:sample 3 epoch 1", HELM "run:args/per_instance_stats.json:[12]",
    whose folder names hold ":" too, a model's results file): it is kept
    whole, (source, None). A missing or blank source gives (default, None).
    """
    if not isinstance(source, str) or not source.strip():
        return default, None
    file, colon, row = source.rpartition(":")
    if colon and file and row.isascii() and row.isdigit():
        return file, int(row)
    return source, None


def checksum_of(parsed: ParsedResponseSet) -> str:
    """SHA-256 (hex) identifying the uploaded files.

    The SHA-256 of each source file's bytes, in order, hashed together; without
    source files, a hash of the responses table.
    """
    import pandas as pd
    outer = hashlib.sha256()
    if parsed.source_files:
        for path in parsed.source_files:
            inner = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    inner.update(block)
            outer.update(inner.digest())
    else:
        table = parsed.responses[["dataset", "external_id", "model", "credit"]]
        outer.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
    return outer.hexdigest()


def _check_parsed(parsed: ParsedResponseSet) -> None:
    """The parser contract, checked cheaply; raises LoadError naming file and row."""
    import pandas as pd
    if not isinstance(parsed, ParsedResponseSet):
        raise ValueError(f"parsed must be a ParsedResponseSet, got {type(parsed).__name__}")
    contract = [("questions", QUESTION_COLUMNS), ("models", MODEL_COLUMNS)]
    if parsed.cells is None:  # the compact form has no columns to check
        contract.append(("responses", RESPONSE_COLUMNS))
    for attribute, columns in contract:
        frame = getattr(parsed, attribute)
        missing = [c for c in columns if c not in getattr(frame, "columns", [])]
        if missing:
            raise ValueError(f"parsed.{attribute} lacks column(s) {missing}")
    label = _label(parsed)
    problems: list[Problem] = []

    def add(source: object, message: str, column: str | None = None) -> None:
        file, row = _where(source, label)
        problems.append(Problem(file=file, message=message, row=row, column=column))

    cells = parsed.cells
    questions, models = parsed.questions, parsed.models
    responses = parsed.responses if cells is None else None
    q_source = questions["source"] if "source" in questions.columns else pd.Series(None, index=questions.index)
    m_source = models["source"] if "source" in models.columns else pd.Series(None, index=models.index)
    for frame, column, what, sources in (
        (questions, "dataset", "dataset", q_source),
        (questions, "external_id", "question id", q_source),
        (questions, "subject", "subject", q_source),
        (models, "name", "model", m_source),
        (models, "family", "family", m_source),
    ):
        limit = _LIMITS["model" if column == "name" else column]
        required = column in ("dataset", "external_id", "name")
        values = frame[column].to_numpy(dtype=object).tolist()
        # Only values that can be a problem are looked at one by one (a short non-blank string cannot).
        suspects = [i for i, value in enumerate(values)
                    if not (isinstance(value, str) and len(value) <= limit and (not required or value.strip()))]
        for position in suspects:
            index, value = frame.index[position], values[position]
            if value is None or (isinstance(value, float) and np.isnan(value)):
                if column in ("dataset", "external_id", "name"):
                    add(sources[index], BLANK_VALUE.format(what=what), column)
                continue
            text = str(value)
            if not text.strip() and column in ("dataset", "external_id", "name"):
                add(sources[index], BLANK_VALUE.format(what=what), column)
            elif len(text) > limit:
                add(sources[index], TOO_LONG.format(what=what, value=text, limit=limit), column)
    _check_text_lengths(questions, q_source, add)
    choices = [c.value for c in ModelAccess]
    for index, value in models["access"].items():
        if value not in choices:
            add(m_source[index], BAD_ACCESS.format(value=value, choices=", ".join(choices)), "access")
    params = pd.to_numeric(models["parameters_b"], errors="coerce").to_numpy(dtype=float)
    for index in np.flatnonzero(~np.isnan(params) & ~(params > 0)):
        add(m_source.iloc[index], BAD_PARAMETERS.format(value=params[index]), "parameters_b")
    # (table, key columns, names of the key's fields in the message, sources, message)
    key_checks = [
        (questions, ["dataset", "external_id"], ["dataset", "question_id"], q_source, DUPLICATE_QUESTION),
        (models, ["name"], ["model"], m_source, DUPLICATE_MODEL),
    ]
    if cells is None:  # the compact form names each question and model once, credits checked
        key_checks.append((responses, ["dataset", "external_id", "model"], ["dataset", "question_id", "model"],
                           responses["source"], DUPLICATE_RESPONSE))
    for frame, key, names, sources, template in key_checks:
        dup = frame.duplicated(key, keep=False)
        first: dict[tuple, object] = {}
        for index in frame.index[dup.to_numpy()]:
            k = tuple(frame.loc[index, key])
            if k not in first:
                first[k] = sources[index]
            else:
                add(sources[index], template.format(first=first[k], **dict(zip(names, k))))
    if cells is not None:
        _check_cells(cells, questions, models, add)
        if problems:
            raise _load_error(problems)
        return
    credit = pd.to_numeric(responses["credit"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(credit) | (credit < 0.0) | (credit > 1.0)
    for index in np.flatnonzero(bad)[:200]:
        value = _plain(responses["credit"].iloc[index])
        add(responses["source"].iloc[index], CREDIT_INVALID.format(value=value), "credit")
    known_q = questions[["dataset", "external_id"]].drop_duplicates().assign(_known=True)
    check = responses[["dataset", "external_id", "source"]].merge(known_q, on=["dataset", "external_id"], how="left")
    for record in check.loc[check["_known"].isna()].drop_duplicates(["dataset", "external_id"]).head(200).itertuples():
        add(record.source, UNKNOWN_QUESTION.format(question_id=record.external_id, dataset=record.dataset))
    unknown_m = ~responses["model"].isin(set(models["name"]))
    for record in responses.loc[unknown_m].drop_duplicates("model").head(200).itertuples():
        add(record.source, UNKNOWN_MODEL.format(model=record.model), "model")
    if len(responses) == 0:
        problems.append(Problem(file=label, message=NO_RESPONSES))
    if problems:
        raise _load_error(problems)


def _check_cells(cells: DenseCells, questions: pd.DataFrame, models: pd.DataFrame,
                 add: Callable[..., None]) -> None:
    """The checks of the long form that the compact form (of a wide or long file) still needs: every
    question and model with a response is in the upload's tables (each placed at its
    first response, as the long form places it)."""
    import pandas as pd
    used = np.flatnonzero(cells.row_counts > 0)
    keys = pd.DataFrame({"dataset": cells.datasets[used], "external_id": cells.ids[used], "position": used})
    known_q = questions[["dataset", "external_id"]].drop_duplicates().assign(_known=True)
    check = keys.merge(known_q, on=["dataset", "external_id"], how="left")
    for record in check.loc[check["_known"].isna()].head(200).itertuples():
        add(f"{cells.file}:{int(cells.rows[record.position])}",
            UNKNOWN_QUESTION.format(question_id=record.external_id, dataset=record.dataset))
    names = set(models["name"])
    unknown = [j for j in cells.model_order().tolist() if cells.models[j] not in names]  # first named first
    for j in unknown[:200]:
        add(f"{cells.file}:{cells.model_row(j)}", UNKNOWN_MODEL.format(model=cells.models[j]), "model")
    if cells.n_observed == 0:
        add(None, NO_RESPONSES)


def _check_text_lengths(questions: pd.DataFrame, sources: pd.Series, add: Callable[..., None]) -> None:
    """Question text, options (all together) and reference answer each no longer than
    ``QUESTION_TEXT_MAX_CHARS`` (a judging page shows them whole); each longer one is
    a problem at its row."""
    limit = settings.QUESTION_TEXT_MAX_CHARS
    for column in ("text", "options", "reference_answer"):
        values = questions[column].to_numpy(dtype=object).tolist()
        lengths = np.fromiter((len(v) if isinstance(v, str) else _text_length(v) for v in values),
                              dtype=np.int64, count=len(values))
        for position in np.flatnonzero(lengths > limit)[:200]:
            index = questions.index[position]
            add(sources[index], TEXT_TOO_LONG.format(question_id=questions.at[index, "external_id"], column=column,
                                                     length=int(lengths[position]), limit=limit), column)


def _text_length(value: object) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum([len(item) for item in value if isinstance(item, str)])
    return 0


def _load_error(problems: list[Problem]) -> LoadError:
    """The error for ``problems``, quoted values longer than 80 characters cut short."""
    return LoadError([dataclasses.replace(p, message=shorten_quoted(p.message)) for p in problems])


def _guess_from_names(models: pd.DataFrame) -> pd.DataFrame:
    """Harness models with family, size and access guessed from their names.

    Harness logs name a model and nothing else, so, as the tabular loaders do
    for blank fields, every blank field takes the guess of
    :func:`~annotate.catalog.loaders.model_names.infer_from_model_name` and is listed
    in ``metadata["inferred"]`` (a guess is never checked against, nor
    overrides, a stored model's value). A mixture-of-experts size ("8x7B")
    goes to ``metadata["parameters_label"]``.
    """
    import pandas as pd
    out = models.copy()
    family_limit = _LIMITS["family"]
    for index, row in models.iterrows():
        name = row["name"]
        if not isinstance(name, str) or not name.strip():
            continue  # refused by _check_parsed already
        guess = infer_from_model_name(name)
        metadata = dict(row["metadata"]) if isinstance(row["metadata"], dict) else {}
        inferred = list(metadata.get("inferred", []))
        if _unknown(row["parameters_b"]):
            if guess.parameters_b is not None:
                out.at[index, "parameters_b"] = guess.parameters_b
                inferred.append("parameters_b")
            if guess.parameters_label is not None:
                metadata["parameters_label"] = guess.parameters_label
                inferred.append("parameters_label")
        if (not isinstance(row["family"], str) or not row["family"]) and guess.family \
                and len(guess.family) <= family_limit:
            out.at[index, "family"] = guess.family
            inferred.append("family")
        if _unknown(row["access"]) and guess.access != ModelAccess.UNKNOWN:
            out.at[index, "access"] = guess.access
            inferred.append("access")
        if inferred:
            metadata["inferred"] = list(dict.fromkeys(inferred))
        out.at[index, "metadata"] = metadata
    out["parameters_b"] = pd.to_numeric(out["parameters_b"], errors="coerce").astype(np.float64)
    return out


def _plan(parsed: ParsedResponseSet, *, name: str | None, new_version: bool) -> LoadPlan:
    """Every check and every count, without writing; raises LoadError."""
    import pandas as pd
    stamp = catalog_stamp()  # read first: a change while checking makes the plan stale
    case_variants_resolve(parsed=parsed, label=_label(parsed))  # refuse or merge "GPT-4" / "gpt-4"
    _check_parsed(parsed)
    label = _label(parsed)
    checksum = checksum_of(parsed)
    existing = response_set_by_checksum(checksum=checksum)
    if existing is not None:
        raise _load_error([Problem(file=label, message=ALREADY_LOADED.format(existing=str(existing), pk=existing.pk))])
    version, supersedes = 1, None
    if name is not None:
        latest = response_set_latest(name=name)
        if latest is not None and not new_version:
            raise _load_error([Problem(file=label, message=NAME_EXISTS.format(
                name=name, version=latest.version, next_version=latest.version + 1))])
        if latest is None and new_version:
            raise _load_error([Problem(file=label, message=NO_EARLIER_VERSION.format(name=name))])
        if latest is not None:
            version, supersedes = latest.version + 1, str(latest)

    questions, models = parsed.questions, parsed.models
    if parsed.file_format in HARNESS_FORMATS:
        models = _guess_from_names(models)
    q_source = questions["source"] if "source" in questions.columns else pd.Series(None, index=questions.index)
    dataset_names = list(dict.fromkeys(questions["dataset"].tolist()))
    known_datasets = dataset_ids_by_name(names=dataset_names)
    subject_names = [s for s in dict.fromkeys(questions["subject"].tolist()) if isinstance(s, str) and s]
    known_subjects = subject_ids_by_name(names=subject_names)

    problems: list[Problem] = []
    stored = question_table(dataset_ids=known_datasets.values())
    keyed = questions.assign(where_=q_source.to_numpy(dtype=object)).merge(
        stored, on=["dataset", "external_id"], how="left", suffixes=("", "_db")
    )
    is_existing = keyed["id"].notna().to_numpy()
    subject_label = parsed.options.get("subject_column") or "subject"
    for record in keyed.loc[is_existing].itertuples(index=False):
        for field_name, given, stored_value, column in (
            ("subject", record.subject, record.subject_db, subject_label),
            ("text", record.text, record.text_db, "question"),
        ):
            given_text = given if isinstance(given, str) else ""
            stored_text = stored_value if isinstance(stored_value, str) else ""
            if given_text and given_text != stored_text:
                file, row = _where(record.where_, label)
                problems.append(Problem(file=file, row=row, column=column, message=QUESTION_CONFLICT.format(
                    question_id=record.external_id, dataset=record.dataset, field=field_name,
                    stored=stored_value, given=given)))
    stored_models = model_table(names=models["name"].tolist()).set_index("name")
    m_source = models["source"] if "source" in models.columns else pd.Series(None, index=models.index)
    model_is_existing = models["name"].isin(stored_models.index).to_numpy()
    for index in np.flatnonzero(model_is_existing):
        record = models.iloc[index]
        db = stored_models.loc[record["name"]]
        metadata = record["metadata"] if isinstance(record["metadata"], dict) else {}
        inferred = set(metadata.get("inferred", []))
        for field_name in ("family", "access", "parameters_b"):
            given, stored_value = record[field_name], db[field_name]
            if field_name in inferred or _unknown(given) or _unknown(stored_value) or given == stored_value:
                continue
            file, row = _where(m_source.iloc[index], label)
            problems.append(Problem(file=file, row=row, column=field_name, message=MODEL_CONFLICT.format(
                model=record["name"], field=field_name, stored=_plain(stored_value), given=_plain(given))))
    if problems:
        raise _load_error(problems)

    subjects_by_question = questions.set_index(["dataset", "external_id"])["subject"]
    cells = parsed.cells
    if cells is None:
        first = parsed.responses.head(PREVIEW_ROWS)
        first_cells = [(r.dataset, r.external_id, r.model, r.credit) for r in first.itertuples(index=False)]
        diagnostics = _cell_diagnostics(parsed.responses)
    else:
        first_cells = [(cells.datasets[q], cells.ids[q], cells.models[m], credit)
                       for q, m, credit in cells.first_cells(PREVIEW_ROWS)]
        diagnostics = _dense_diagnostics(cells)
    first_rows = tuple(
        PreviewRow(
            dataset=str(dataset), question_id=str(external_id),
            subject=_subject_or_none(subjects_by_question.get((dataset, external_id))),
            model=str(model), credit=float(credit),
        )
        for dataset, external_id, model, credit in first_cells
    )
    new_datasets = [d for d in dataset_names if d not in known_datasets]
    stored_formats = dataset_text_formats(names=known_datasets)
    new_subjects = [s for s in subject_names if s not in known_subjects]
    new_models = models.loc[~model_is_existing]
    n_responses, n_questions, n_models = parsed.observed_counts()
    preview = LoadPreview(
        name=name,
        version=version,
        supersedes=supersedes,
        checksum=checksum,
        file_format=parsed.file_format,
        n_responses=n_responses,
        n_questions=n_questions,
        n_models=n_models,
        **diagnostics,
        datasets_new=len(new_datasets),
        datasets_existing=len(known_datasets),
        subjects_new=len(new_subjects),
        subjects_existing=len(known_subjects),
        questions_new=int((~is_existing).sum()),
        questions_existing=int(is_existing.sum()),
        models_new=len(new_models),
        models_existing=int(model_is_existing.sum()),
        new_dataset_names=tuple(new_datasets),
        new_subject_names=tuple(new_subjects),
        new_model_names=tuple(new_models["name"].tolist()),
        notes=tuple(parsed.notes),
        first_rows=first_rows,
        text_formats=tuple(
            DatasetTextFormat(dataset=dataset, suggestion=suggestion, stored=stored_formats.get(dataset))
            for dataset, suggestion in text_formats_suggest(questions=questions).items()),
    )
    return LoadPlan(
        parsed=parsed,
        name=name,
        new_version=new_version,
        stamp=stamp,
        preview=preview,
        new_datasets=new_datasets,
        new_subjects=new_subjects,
        subject_names=subject_names,
        new_questions=questions.loc[~is_existing],
        new_models=new_models,
        superseded_name=name if supersedes else None,
    )


def _cell_diagnostics(responses: pd.DataFrame) -> dict[str, int]:
    """Diagnostics of the upload's model-question matrix, from its response
    rows (one per observed cell): ``n_cells``, ``n_missing``,
    ``n_low_coverage``, ``n_components`` (all 0 without a response)."""
    import pandas as pd
    if responses.empty:
        return {"n_cells": 0, "n_missing": 0, "n_low_coverage": 0, "n_components": 0}
    dataset_index, _ = pd.factorize(responses["dataset"])
    external_index, external_keys = pd.factorize(responses["external_id"])
    question_index, question_keys = pd.factorize(dataset_index.astype(np.int64) * len(external_keys) + external_index)
    model_index, model_keys = pd.factorize(responses["model"])
    d = cell_diagnostics(question_index, model_index, n_questions=len(question_keys), n_models=len(model_keys))
    return {"n_cells": d.n_cells, "n_missing": d.n_missing, "n_low_coverage": d.n_low_coverage,
            "n_components": d.n_components}


def _dense_diagnostics(cells: DenseCells, min_models: int = DEFAULT_MIN_MODELS) -> dict[str, int]:
    """:func:`_cell_diagnostics` of the compact form (wide or long file), from the counts kept while
    reading (the questions and models with a response make the matrix)."""
    used = cells.row_counts[cells.row_counts > 0]
    n_models = int((cells.col_counts > 0).sum())
    if not used.size:
        return {"n_cells": 0, "n_missing": 0, "n_low_coverage": 0, "n_components": 0}
    n_cells = int(used.size) * n_models
    return {"n_cells": n_cells, "n_missing": n_cells - cells.n_observed,
            "n_low_coverage": int((used < min_models).sum()), "n_components": cells.n_components()}


def diagnostics_line(
    *, n_cells: int, n_missing: int, n_low_coverage: int, n_components: int, min_models: int = DEFAULT_MIN_MODELS
) -> str:
    """The one-line diagnostics summary of an upload (preview page, ``load_responses``)."""
    line = (
        f"{n_missing} of {n_cells} model-question cells not observed; "
        f"{n_low_coverage} question{'s' if n_low_coverage != 1 else ''} observed by fewer than {min_models} models; "
        f"the model-question graph has {n_components} component{'s' if n_components != 1 else ''}"
    )
    if n_components > 1:
        line += " (blocks that share no model: their questions are never paired)"
    return line + "."


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def _unknown(value: object) -> bool:
    if value is None or value == "" or value == ModelAccess.UNKNOWN:
        return True
    return isinstance(value, float) and np.isnan(value)


def _subject_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _check_name(name: object, *, required: bool) -> None:
    if name is None and not required:
        return
    limit = ResponseSet._meta.get_field("name").max_length
    if not isinstance(name, str) or not name.strip() or len(name) > limit:
        raise ValueError(f"name must be a non-blank string of at most {limit} characters, got {name!r}")


def response_set_preview(
    *, parsed: ParsedResponseSet, name: str | None = None, new_version: bool = False
) -> LoadPreview:
    """Check a parsed upload against the database and say what a load would do.

    Writes nothing. Runs every check :func:`response_set_load` runs, so an
    upload that previews cleanly loads (barring a concurrent change).

    Parameters
    ----------
    parsed : ParsedResponseSet
        Output of a parser in :mod:`annotate.catalog.loaders`.
    name : str or None, default None
        Response set name; None skips the name/version checks.
    new_version : bool, default False
        As in :func:`response_set_load`.

    Returns
    -------
    LoadPreview

    Raises
    ------
    LoadError
        The upload cannot be loaded (parser contract broken, files already
        loaded, name taken, conflict with an existing question or model).
    ValueError
        If ``parsed`` or ``name`` is malformed.
    """
    return response_set_plan(parsed=parsed, name=name, new_version=new_version).preview


def response_set_plan(
    *, parsed: ParsedResponseSet, name: str | None = None, new_version: bool = False
) -> LoadPlan:
    """Check a parsed upload against the database once, for a preview and a later load.

    Writes nothing. :func:`response_set_preview` is this plan's ``preview``;
    passing the plan to :func:`response_set_load` skips checking again while
    the catalog has not changed.

    Parameters
    ----------
    parsed : ParsedResponseSet
        Output of a parser in :mod:`annotate.catalog.loaders`.
    name : str or None, default None
        Response set name; None skips the name/version checks.
    new_version : bool, default False
        As in :func:`response_set_load`.

    Returns
    -------
    LoadPlan

    Raises
    ------
    LoadError
        As :func:`response_set_preview`.
    ValueError
        If ``parsed`` or ``name`` is malformed.
    """
    _check_name(name, required=False)
    response_sets_abandoned_remove()
    return _plan(parsed, name=name, new_version=new_version)


def _usable(plan: LoadPlan | None, parsed: ParsedResponseSet, name: str, new_version: bool) -> LoadPlan | None:
    """``plan`` if it was made for this upload, name and version flag and the catalog is unchanged."""
    if plan is None:
        return None
    if not isinstance(plan, LoadPlan) or plan.parsed is not parsed:
        raise ValueError(PLAN_MISMATCH)
    if plan.name != name or plan.new_version != new_version or plan.stamp != catalog_stamp():
        return None
    return plan


def _ids(frame_keys: pd.DataFrame, table: pd.DataFrame, on: list[str]) -> np.ndarray:
    merged = frame_keys.merge(table, on=on, how="left", validate="many_to_one")
    return merged["id"].to_numpy(dtype=np.int64)


def response_set_load(
    *,
    parsed: ParsedResponseSet,
    name: str,
    user=None,
    new_version: bool = False,
    progress: Progress | None = None,
    plan: LoadPlan | None = None,
    published: Callable[[ResponseSet], None] | None = None,
    text_format: str | None = None,
) -> ResponseSet:
    """Write a parsed upload: catalog rows, the response set and its responses.

    All or nothing, in short transactions (see the module's rules): the set
    stays ``loading``, hidden from every selector, until its last batch is
    written; any failure removes what this load wrote.

    Parameters
    ----------
    parsed : ParsedResponseSet
        Output of a parser in :mod:`annotate.catalog.loaders`; credits in [0, 1], one
        row per observed (dataset, question, model) cell.
    name : str
        Response set name (at most 200 characters).
    user : User or None, default None
        Stored as ``uploaded_by``.
    new_version : bool, default False
        Load as version ``latest + 1`` of an existing name and mark earlier
        versions superseded. Without it an existing name is refused.
    progress : callable (done, total) -> None, optional
        Called after each batch is written, with the responses (observed
        cells) written so far and their total.
    plan : LoadPlan, optional
        The plan :func:`response_set_plan` made for this ``parsed`` (e.g. for
        its preview). It is written as is when it was made for the same
        ``name`` and ``new_version`` and the catalog stamp is unchanged (no
        dataset, subject, question, model or response set added or deleted
        since); otherwise every check runs again. Default: check now.
    published : callable (ResponseSet) -> None, optional
        Called inside the final transaction that makes the set visible, so
        that what it writes (e.g. an upload job marked done) becomes visible
        at the same instant as the set, never before or after it.
    text_format : {"plain", "markdown"} or None, default None
        The text format of the datasets this load creates; None: each new
        dataset's suggested format (``preview.text_formats``). Datasets that
        already exist keep theirs.

    Returns
    -------
    ResponseSet
        Status "loaded", with ``n_questions``/``n_models``/``n_responses``
        counting what has responses, and ``summary`` holding the preview counts
        and the parser notes.

    Raises
    ------
    LoadError
        Nothing was written; see :func:`response_set_preview`.
    ValueError
        If ``parsed`` or ``name`` is malformed, or ``plan`` was made for
        another parsed upload.

    References
    ----------
    The stored matrix is :math:`A` (Section 2.2) or :math:`A_c` (Section
    2.4) of the EIP paper.
    """
    _check_name(name, required=True)
    if text_format is not None and text_format not in TextFormat.values:
        raise ValueError(UNKNOWN_TEXT_FORMAT.format(choices=", ".join(TextFormat.values), value=text_format))
    plan = _usable(plan, parsed, name, new_version) or _plan(parsed, name=name, new_version=new_version)
    questions, models = parsed.questions, parsed.models

    response_sets_abandoned_remove()
    created: dict[type, list[int]] = {model: [] for model in _CATALOG}
    response_set = None
    planned = {"plan": plan}

    def lock_and_create() -> ResponseSet:
        # PostgreSQL: simultaneous loads wait here (the lock lasts this transaction, which creates the
        # catalog rows), then plan again if the first one changed the catalog meanwhile.
        load_lock()
        current = _usable(planned["plan"], parsed, name, new_version) or _plan(
            parsed, name=name, new_version=new_version)
        planned["plan"] = current
        for model in _CATALOG:
            created[model] = []
        return _create_rows(current, parsed, name, user, created, text_format)

    try:
        response_set = with_lock_retries(lock_and_create)
        plan = planned["plan"]
        stored_questions = question_table(dataset_ids=_dataset_ids(questions))[["dataset", "external_id", "id"]]
        stored_models = model_table(names=models["name"].tolist())[["name", "id"]].rename(columns={"name": "model"})
        if parsed.cells is not None:
            _write_dense(response_set.pk, parsed.cells, stored_questions, stored_models, progress)
        else:
            responses = parsed.responses
            question_ids = _ids(responses[["dataset", "external_id"]], stored_questions, ["dataset", "external_id"])
            model_ids = _ids(responses[["model"]], stored_models, ["model"])
            credits = responses["credit"].to_numpy(dtype=np.float64)
            _write_matrix(response_set.pk, question_ids, model_ids, credits, progress)
        with_lock_retries(lambda: _publish(response_set, plan.superseded_name, published))
        _temp_stores.pop(response_set.pk, None)
    except BaseException:
        _remove_partial(response_set, created)
        raise
    transaction.on_commit(responses_analyze)  # PostgreSQL: fresh planner statistics for the new rows
    response_set.status, response_set.loader, response_set.heartbeat_at = ResponseSetStatus.LOADED, "", None
    return response_set


def _dataset_ids(questions: pd.DataFrame) -> list[int]:
    return list(dataset_ids_by_name(names=questions["dataset"].unique().tolist()).values())


def with_lock_retries(write: Callable[[], object], *, retries: int = LOCKED_RETRIES, wait_s: float = LOCKED_WAIT_S):
    """Run ``write`` (one ``transaction.atomic``) again after a transient "database is locked".

    SQLite's busy timeout (settings ``OPTIONS["timeout"]``) already waits for
    the lock; this covers a writer that held it longer. Inside an outer
    transaction (a test, a caller's atomic block) nothing is retried.
    """
    for attempt in range(retries + 1):
        try:
            with transaction.atomic():
                return write()
        except OperationalError as error:
            if "locked" not in str(error).lower() or attempt == retries or connection.in_atomic_block:
                raise
            logger.warning("database is locked; retrying a load transaction (%d of %d)", attempt + 1, retries)
            time.sleep(wait_s * (attempt + 1))
    raise AssertionError("unreachable")


_QUESTION_FIELDS = ("dataset", "subject", "external_id", "text", "options", "reference_answer", "metadata")


def _insert_questions(new: pd.DataFrame, dataset_ids: dict[str, int], subject_ids: dict[str, int]) -> list[int]:
    """Insert the plan's new questions (:func:`~annotate.core.services.database.rows_insert`,
    ``QUESTION_BATCH_SIZE`` rows built at a time) and return their ids.

    The values are those the model fields would write (blank text for a
    missing one, ``[]``/``{}`` for missing options and metadata, JSON as
    ``json.dumps`` text); the ids are read back by (dataset, external id),
    which is unique.
    """
    import json

    if new.empty:
        return []
    # Whole columns as Python lists (the values row iteration gives, without iterating Arrow strings one by one).
    columns = {c: new[c].to_numpy(dtype=object).tolist()
               for c in ("dataset", "subject", "external_id", "text", "options", "reference_answer", "metadata")}
    dumps = json.JSONEncoder().encode  # what json.dumps does with its default arguments
    for start in range(0, len(new), QUESTION_BATCH_SIZE):
        batch = slice(start, start + QUESTION_BATCH_SIZE)
        rows = [
            (dataset_ids[dataset], subject_ids.get(subject) if isinstance(subject, str) else None,
             external_id, text if isinstance(text, str) else "",
             dumps(list(options) if isinstance(options, (list, tuple)) else []),
             answer if isinstance(answer, str) else "",
             dumps(metadata if isinstance(metadata, dict) else {}))
            for dataset, subject, external_id, text, options, answer, metadata in zip(
                *(columns[c][batch] for c in ("dataset", "subject", "external_id", "text", "options",
                                              "reference_answer", "metadata")))
        ]
        rows_insert(model=Question, fields=_QUESTION_FIELDS, rows=rows)
    wanted = {(dataset_ids[d], e) for d, e in zip(new["dataset"].tolist(), new["external_id"].tolist())}
    stored = Question.objects.filter(dataset_id__in={d for d, _ in wanted}).values_list("id", "dataset_id",
                                                                                       "external_id")
    return [pk for pk, dataset_id, external_id in stored.iterator(chunk_size=20_000)
            if (dataset_id, external_id) in wanted]


def _create_rows(plan: LoadPlan, parsed: ParsedResponseSet, name: str, user, created: dict,
                 text_format: str | None) -> ResponseSet:
    """The catalog rows and the response set (status ``loading``), in one short transaction.

    ``created`` receives the ids of the catalog rows made here (for
    :func:`_remove_partial`). New datasets take ``text_format``, or else
    their suggested format.
    """
    preview = plan.preview
    questions = parsed.questions
    suggested = {f.dataset: f.suggestion.text_format for f in preview.text_formats}
    new_datasets = [Dataset(name=d, text_format=text_format or suggested.get(d, TextFormat.PLAIN))
                    for d in plan.new_datasets]
    for model, rows in (
        (Dataset, Dataset.objects.bulk_create(new_datasets)),
        (Subject, Subject.objects.bulk_create([Subject(name=s) for s in plan.new_subjects])),
    ):
        created[model] = [row.pk for row in rows if row.pk is not None]
    dataset_ids = dataset_ids_by_name(names=questions["dataset"].unique().tolist())
    subject_ids = subject_ids_by_name(names=plan.subject_names)
    created[Question] = _insert_questions(plan.new_questions, dataset_ids, subject_ids)
    new_models = LanguageModel.objects.bulk_create(
        [
            LanguageModel(
                name=m.name,
                family=m.family if isinstance(m.family, str) else "",
                parameters_b=None if _unknown(m.parameters_b) else float(m.parameters_b),
                access=m.access,
                metadata=m.metadata if isinstance(m.metadata, dict) else {},
            )
            for m in plan.new_models.itertuples(index=False)
        ]
    )
    created[LanguageModel] = [m.pk for m in new_models if m.pk is not None]
    file_name = ", ".join(Path(p).name for p in parsed.source_files) or "upload"
    return ResponseSet.objects.create(
        name=name,
        version=preview.version,
        file_name=file_name[:_FILE_NAME_LIMIT],
        checksum=preview.checksum,
        file_format=parsed.file_format,
        uploaded_by=user,
        status=ResponseSetStatus.LOADING,
        loader=_loader_id(),
        heartbeat_at=timezone.now(),
        n_questions=preview.n_questions,
        n_models=preview.n_models,
        n_responses=preview.n_responses,
        options={**parsed.options, "file_format": parsed.file_format},
        summary={
            "notes": list(preview.notes),
            "supersedes": preview.supersedes,
            **{key: getattr(preview, key) for key in (
                "datasets_new", "datasets_existing", "subjects_new", "subjects_existing",
                "questions_new", "questions_existing", "models_new", "models_existing",
                "n_cells", "n_missing", "n_low_coverage", "n_components",
            )},
            CREATED_KEY: {model.__name__: _runs(created[model]) for model in _CATALOG},
        },
    )


def _loader_id() -> str:
    return f"{socket.gethostname()[:100]}:{os.getpid()}"


def _is_dead(loader: str) -> bool:
    """True when ``loader`` ("host:pid") names a process of this host that no longer runs."""
    host, _, pid = loader.rpartition(":")
    if host != socket.gethostname()[:100] or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def response_sets_abandoned_remove(*, stale_s: float = LOAD_STALE_S) -> int:
    """Remove the rows of loads that died (SIGKILL, a lost host) before their last commit.

    A ``loading`` response set is abandoned when the process named in its
    ``loader`` no longer runs on this host, or when no batch was written for
    ``stale_s`` seconds. Its responses and the set are deleted in batches;
    the catalog rows it created are kept when another set uses them and
    deleted otherwise.

    Returns
    -------
    int
        How many response sets were removed.
    """
    cutoff = timezone.now() - timedelta(seconds=stale_s)
    removed = 0
    for response_set in ResponseSet.objects.filter(status=ResponseSetStatus.LOADING):
        if _is_dead(response_set.loader) or (response_set.heartbeat_at or response_set.created_at) < cutoff:
            made = (response_set.summary or {}).get(CREATED_KEY) or {}
            created = {model: _unruns(made.get(model.__name__)) for model in _CATALOG}
            _remove_partial(response_set, created)
            removed += 1
    return removed


def _runs(ids: list[int]) -> list[list[int]]:
    """Sorted ids as [first, last] runs of consecutive ids (bulk-created ids mostly are)."""
    runs: list[list[int]] = []
    for pk in sorted(ids):
        if runs and pk == runs[-1][1] + 1:
            runs[-1][1] = pk
        else:
            runs.append([pk, pk])
    return runs


def _unruns(runs: object) -> list[int]:
    if not isinstance(runs, list):
        return []
    return [pk for run in runs if isinstance(run, list) and len(run) == 2 for pk in range(int(run[0]), int(run[1]) + 1)]


def _delete_ids(model: type, ids: list[int]) -> None:
    for start in range(0, len(ids), DELETE_BATCH_SIZE):
        chunk = ids[start:start + DELETE_BATCH_SIZE]
        try:
            with_lock_retries(lambda model=model, chunk=chunk: model.objects.filter(pk__in=chunk).delete())
        except ProtectedError:
            logger.warning("kept %s rows another load uses meanwhile", model.__name__)


def _publish(response_set: ResponseSet, superseded_name: str | None,
             published: Callable[[ResponseSet], None] | None = None) -> None:
    """The one short final transaction: earlier versions superseded, this set visible
    (and whatever ``published`` writes, in the same transaction)."""
    if superseded_name is not None:
        ResponseSet.objects.filter(name=superseded_name, status=ResponseSetStatus.LOADED).update(
            status=ResponseSetStatus.SUPERSEDED
        )
    summary = {k: v for k, v in (response_set.summary or {}).items() if k != CREATED_KEY}
    response_set.summary = summary
    ResponseSet.objects.filter(pk=response_set.pk).update(status=ResponseSetStatus.LOADED, summary=summary,
                                                          loader="", heartbeat_at=None)
    if published is not None:
        published(response_set)
    # Last step: the store goes into place (a rename). A commit that fails after it leaves the set
    # "loading", and its removal (the caller's, or the sweep of abandoned loads) removes the store.
    temp = _temp_stores.get(response_set.pk)
    if temp is not None and matrix_store.store_exists(temp):
        matrix_store.store_publish(temp, response_set.pk)


def _remove_partial(response_set: ResponseSet | None, created: dict[type, list[int]]) -> None:
    """Remove what a failed load wrote: its membership rows (in batches), its matrix
    store, the set, and the catalog rows it created that nothing else uses meanwhile."""
    try:
        if response_set is not None and response_set.pk is not None:
            _temp_stores.pop(response_set.pk, None)
            matrix_store.store_remove(response_set.pk)
            rows = ResponseSetQuestion.objects.filter(response_set_id=response_set.pk)
            while True:  # one short transaction per batch, as they were written
                last = rows.order_by("id").values_list("id", flat=True)[RESPONSE_BATCH_SIZE - 1:RESPONSE_BATCH_SIZE]
                top = list(last)
                if not top:
                    with_lock_retries(lambda: rows.delete())
                    break
                with_lock_retries(lambda top=top: rows.filter(id__lte=top[0]).delete())
            with_lock_retries(lambda: ResponseSet.objects.filter(pk=response_set.pk).delete())
        for model in _CATALOG:
            _delete_ids(model, created.get(model, []))
    except Exception:  # the load's own error matters more; log this one
        logger.exception("could not remove the rows of a failed load")


#: The temporary store of each load in progress in this process, by response set id.
_temp_stores: dict[int, matrix_store.Location] = {}


def _write_matrix(
    response_set_id: int, question_ids: np.ndarray, model_ids: np.ndarray, credits: np.ndarray,
    progress: Progress | None,
) -> None:
    """The membership rows and the matrix store of a loading set, a batch of rows at a time.

    Rows are questions in the order the file first names them, columns models
    likewise; the model columns go in one transaction, then each batch of
    ``RESPONSE_BATCH_SIZE`` questions writes its membership rows, its block of
    the (temporary) store and the heartbeat in one transaction.
    """
    import pandas as pd
    row_of, row_questions = pd.factorize(question_ids)
    column_of, column_models = pd.factorize(model_ids)
    n_questions, n_models = len(row_questions), len(column_models)
    temp = matrix_store.temp_store_path(response_set_id)
    _temp_stores[response_set_id] = temp
    with_lock_retries(lambda: ResponseSetModel.objects.bulk_create(
        [ResponseSetModel(response_set_id=response_set_id, model_id=int(m), column=j)
         for j, m in enumerate(column_models.tolist())], batch_size=2000))
    form = matrix_store.credit_form(credits)
    writer = matrix_store.MatrixWriter(temp, n_questions=n_questions, n_models=n_models, dtype=form.dtype,
                                       denominator=form.denominator, response_set=response_set_id)
    total, done = len(credits), 0
    for start, credit, observed, n_cells in matrix_store.row_blocks(
            row_of, column_of, credits, n_questions=n_questions, n_models=n_models,
            dtype=np.float64 if form.denominator > 1 else writer.dtype, block_rows=RESPONSE_BATCH_SIZE):
        questions = np.asarray(row_questions[start:start + credit.shape[0]], dtype=np.int64)
        with_lock_retries(lambda start=start, questions=questions, credit=credit, observed=observed: (
            _write_batch_and_beat(response_set_id, start, questions, credit, observed, writer)))
        done += n_cells
        if progress is not None:
            progress(done, total)
    writer.close()


def _write_dense(
    response_set_id: int, cells: DenseCells, stored_questions: pd.DataFrame, stored_models: pd.DataFrame,
    progress: Progress | None,
) -> None:
    """:func:`_write_matrix` from the compact form (of a wide or long file), a block of rows at a time.

    The same matrix as from the long form: rows are the questions with a
    response in file order, columns the models with a response in the order
    the long form first names them; memory beyond the stored blocks is one
    batch of rows.
    """
    import pandas as pd
    used = np.flatnonzero(cells.row_counts > 0)
    keys = pd.DataFrame({"dataset": cells.datasets[used], "external_id": cells.ids[used]})
    question_ids = _ids(keys, stored_questions, ["dataset", "external_id"])
    columns = cells.model_order()
    model_ids = _ids(pd.DataFrame({"model": cells.models[columns]}), stored_models, ["model"])
    temp = matrix_store.temp_store_path(response_set_id)
    _temp_stores[response_set_id] = temp
    with_lock_retries(lambda: ResponseSetModel.objects.bulk_create(
        [ResponseSetModel(response_set_id=response_set_id, model_id=int(m), column=j)
         for j, m in enumerate(model_ids.tolist())], batch_size=2000))
    denominator = cells.denominator
    writer = matrix_store.MatrixWriter(temp, n_questions=len(used), n_models=len(columns),
                                       dtype=matrix_store.BINARY_DTYPE if denominator > 1 else cells.dtype,
                                       denominator=denominator, response_set=response_set_id)
    total, done = cells.n_observed, 0
    for start, credit, observed in _dense_batches(cells, columns, RESPONSE_BATCH_SIZE):
        questions = question_ids[start:start + credit.shape[0]]
        n_cells = int(observed.sum())
        mask = None if n_cells == observed.size else observed
        with_lock_retries(lambda start=start, questions=questions, credit=credit, mask=mask: (
            _write_batch_and_beat(response_set_id, start, questions, credit, mask, writer)))
        done += n_cells
        if progress is not None:
            progress(done, total)
    writer.close()


def _dense_batches(cells: DenseCells, columns: np.ndarray, batch_rows: int):
    """(start, credit, observed) of each batch of ``batch_rows`` matrix rows: the blocks of
    ``cells`` without their unobserved questions, columns in ``columns`` order."""
    identity = columns.size == len(cells.models) and bool(np.all(columns == np.arange(columns.size)))
    credits: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    pending, start = 0, 0
    for block_start, credit, observed in cells.blocks():
        keep = cells.row_counts[block_start:block_start + credit.shape[0]] > 0
        if not keep.all():
            credit, observed = credit[keep], observed[keep]
        if not identity:
            credit, observed = credit[:, columns], observed[:, columns]
        credits.append(credit)
        masks.append(observed)
        pending += credit.shape[0]
        while pending >= batch_rows:
            credit_all = credits[0] if len(credits) == 1 else np.concatenate(credits)
            mask_all = masks[0] if len(masks) == 1 else np.concatenate(masks)
            yield start, credit_all[:batch_rows], mask_all[:batch_rows]
            credits, masks = [credit_all[batch_rows:]], [mask_all[batch_rows:]]
            pending -= batch_rows
            start += batch_rows
    if pending:
        yield start, np.concatenate(credits), np.concatenate(masks)


def _write_batch_and_beat(
    response_set_id: int, start: int, questions: np.ndarray, credit: np.ndarray, observed: np.ndarray | None,
    writer: matrix_store.MatrixWriter,
) -> None:
    _write_response_batch(response_set_id, start, questions, credit, observed, writer)
    ResponseSet.objects.filter(pk=response_set_id).update(heartbeat_at=timezone.now())


def _write_response_batch(
    response_set_id: int, start: int, questions: np.ndarray, credit: np.ndarray, observed: np.ndarray | None,
    writer: matrix_store.MatrixWriter,
) -> None:
    """One batch of rows (inside :func:`with_lock_retries`' transaction): the questions'
    membership rows and their block of the store (rewriting a block is harmless, so a
    retried batch is written again whole)."""
    rows_insert(model=ResponseSetQuestion, fields=("response_set", "question", "row"),
                rows=[(response_set_id, q, start + i) for i, q in enumerate(questions.tolist())])
    writer.write_rows(start, credit, observed)
