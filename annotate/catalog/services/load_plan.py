"""The checks and the plan of a load, before anything is written.

:func:`_plan` checks a parsed response set against the catalog (names,
conflicts, credit, text lengths, versions, an identical earlier load) and
returns the :class:`LoadPlan` that
:func:`annotate.catalog.services.loading.response_set_load` writes; its
:class:`LoadPreview` (counts, the first rows, guessed model metadata,
suggested text formats, diagnostics of the matrix) is what the upload page
shows. Nothing here writes.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings

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
from annotate.catalog.loaders.tabular import NO_SUBJECT_TAIL, shorten_quoted
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
from annotate.catalog.services.value_scan import text_lengths, value_suspects
from annotate.core import (
    TextFormatSuggestion,
    ascii_int,
    counted,
    text_format_suggest,
)
from annotate.models import (
    Dataset,
    LanguageModel,
    ModelAccess,
    Question,
    ResponseSet,
    Subject,
    TextFormat,
)
from scoring.diagnostics import DEFAULT_MIN_MODELS, cell_diagnostics

if TYPE_CHECKING:
    import pandas as pd

    from annotate.catalog.loaders.dense import DenseCells


PREVIEW_ROWS = 10
SOME_WITHOUT_SUBJECT_NOTE = (
    "{file}: no subject column: {n:,} of {total:,} questions will have no subject (neither in the file nor stored), "
    "so no study can be made from those; the others keep their stored subjects"
)


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


TEXT_TOO_LONG = ("question {question_id!r}: its {column} is {length:,} characters long; the limit is {limit:,} "
                 "(setting QUESTION_TEXT_MAX_CHARS)")


_LIMITS = {
    "dataset": Dataset._meta.get_field("name").max_length,
    "external_id": Question._meta.get_field("external_id").max_length,
    "subject": Subject._meta.get_field("name").max_length,
    "model": LanguageModel._meta.get_field("name").max_length,
    "family": LanguageModel._meta.get_field("family").max_length,
}


_FILE_NAME_LIMIT = ResponseSet._meta.get_field("file_name").max_length


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
    def questions_without_response(self) -> int:
        """Questions of the upload's files with no response in it: written to the
        catalog with their text (new ones) but not part of the set, whose
        ``n_questions`` counts only questions with a response."""
        return self.questions_new + self.questions_existing - self.n_questions

    @property
    def diagnostics_line(self) -> str:
        """"N of M model-question cells not observed; ..." (see :func:`diagnostics_line`)."""
        return self.diagnostics(human=False)

    def diagnostics(self, *, human: bool) -> str:
        """:func:`diagnostics_line` of this upload; ``human``: its columns are persons."""
        return diagnostics_line(
            n_cells=self.n_cells, n_missing=self.n_missing, n_low_coverage=self.n_low_coverage,
            n_components=self.n_components, human=human,
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
    if colon and file and ascii_int(row) is not None:
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
        suspects = value_suspects(values, limit=limit, required=required)
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
    import pandas as pd
    limit = settings.QUESTION_TEXT_MAX_CHARS
    for column in ("text", "options", "reference_answer"):
        series = questions[column]
        if isinstance(series.dtype, pd.StringDtype):  # characters (code points) counted column-wise; missing: 0
            lengths = series.str.len().fillna(0).to_numpy(dtype=np.int64)
        else:
            lengths = text_lengths(series.to_numpy(dtype=object).tolist())
        for position in np.flatnonzero(lengths > limit)[:200]:
            index = questions.index[position]
            add(sources[index], TEXT_TOO_LONG.format(question_id=questions.at[index, "external_id"], column=column,
                                                     length=int(lengths[position]), limit=limit), column)


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
    notes = _subject_notes(parsed.notes, keyed)

    cells = parsed.cells
    if cells is None:
        first = parsed.responses.head(PREVIEW_ROWS)
        first_cells = [(r.dataset, r.external_id, r.model, r.credit) for r in first.itertuples(index=False)]
        diagnostics = _cell_diagnostics(parsed.responses)
    else:
        first_cells = [(cells.datasets[q], cells.ids[q], cells.models[m], credit)
                       for q, m, credit in cells.first_cells(PREVIEW_ROWS)]
        diagnostics = _dense_diagnostics(cells)
    subjects_by_question = _subjects_of(questions, [(cell[0], cell[1]) for cell in first_cells])
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
        notes=notes,
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


def _subject_notes(notes: list[str], keyed: pd.DataFrame) -> tuple[str, ...]:
    """The parser's notes, its "no subject" note judged as the questions will be after the load.

    The parser sees only the files; a question already stored keeps its stored
    subject. The note stays when no question will have a subject, becomes
    ``SOME_WITHOUT_SUBJECT_NOTE`` when some will, and goes when all will.
    ``keyed``: the upload's questions with their stored ``subject_db`` (NaN for new ones).
    """
    def named(values) -> np.ndarray:
        return np.array([isinstance(v, str) and v != "" for v in values], dtype=bool)

    if not any(note.endswith(NO_SUBJECT_TAIL) for note in notes):
        return tuple(notes)  # no "no subject" note to judge
    with_subject = named(keyed["subject"]) | named(keyed["subject_db"])
    out = []
    for note in notes:
        if note.endswith(NO_SUBJECT_TAIL) and with_subject.any():
            if with_subject.all():
                continue
            note = SOME_WITHOUT_SUBJECT_NOTE.format(file=note[:-len(NO_SUBJECT_TAIL)].removesuffix(": "),
                                                    n=int((~with_subject).sum()), total=len(with_subject))
        out.append(note)
    return tuple(out)


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
    *, n_cells: int, n_missing: int, n_low_coverage: int, n_components: int, min_models: int = DEFAULT_MIN_MODELS,
    human: bool = False,
) -> str:
    """The one-line diagnostics summary of an upload (preview page, ``load_responses``).

    ``human``: the set's columns are people (a human response set), so the line
    speaks of person-question cells and persons instead of models.
    """
    one, many = ("person", "persons") if human else ("model", "models")
    line = (
        f"{n_missing:,} of {counted(n_cells, f'{one}-question cell')} not observed; "
        f"{counted(n_low_coverage, 'question')} observed by fewer than {counted(min_models, one, many)}; "
        f"the {one}-question graph has {n_components:,} component{'s' if n_components != 1 else ''}"
    )
    if n_components > 1:
        line += f" (blocks that share no {one}: their questions are never paired)"
    return line + "."


def _plain(value: object) -> object:
    return value.item() if isinstance(value, np.generic) else value


def _unknown(value: object) -> bool:
    if value is None or value == "" or value == ModelAccess.UNKNOWN:
        return True
    return isinstance(value, float) and np.isnan(value)


def _subjects_of(questions: pd.DataFrame, keys: list[tuple]) -> dict[tuple, object]:
    """The subject of the question of each (dataset, external_id) of ``keys`` that ``questions``
    holds (a key names one question: checked before), read from those rows only."""
    rows = np.flatnonzero(questions["external_id"].isin([external_id for _, external_id in keys]).to_numpy(dtype=bool))
    found: dict[tuple, object] = {}
    for dataset, external_id, subject in zip(*(questions[c].iloc[rows].tolist()
                                               for c in ("dataset", "external_id", "subject"))):
        found.setdefault((dataset, external_id), subject)
    return found


def _subject_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _check_name(name: object, *, required: bool) -> None:
    if name is None and not required:
        return
    limit = ResponseSet._meta.get_field("name").max_length
    if not isinstance(name, str) or not name.strip() or len(name) > limit:
        raise ValueError(f"name must be a non-blank string of at most {limit} characters, got {name!r}")
