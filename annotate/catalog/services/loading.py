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
  ``RESPONSE_BATCH_SIZE`` with :func:`~annotate.core.services.database.rows_insert`.
"""
from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.db import OperationalError, connection, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from annotate.catalog import matrix_store
from annotate.catalog.loaders.base import (
    OPTIONS_TEXT,
    ParsedResponseSet,
)
from annotate.catalog.selectors.catalog import (
    catalog_stamp,
    dataset_ids_by_name,
    model_table,
    question_keys_table,
    subject_ids_by_name,
)
from annotate.catalog.services.json_text import metadata_json_texts, options_json_texts
from annotate.catalog.services.load_plan import _FILE_NAME_LIMIT, LoadPlan, LoadPreview, _check_name, _plan, _unknown
from annotate.core import (
    UNKNOWN_TEXT_FORMAT,
    ascii_int,
    load_lock,
    responses_analyze,
    rows_insert,
)
from annotate.models import (
    Dataset,
    LanguageModel,
    Question,
    ResponseSet,
    ResponseSetModel,
    ResponseSetQuestion,
    ResponseSetStatus,
    Subject,
    TextFormat,
)

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
QUESTION_BATCH_SIZE = 20_000  # new questions whose values are built (and inserted) at a time

PLAN_MISMATCH = "plan must be the LoadPlan that response_set_plan made for this parsed upload"
ERR_KEY_MISSING = "no stored row has the key {key!r}"
ERR_KEY_REPEATED = "more than one stored row has the key {key!r}"

_CATALOG = (Question, LanguageModel, Subject, Dataset)  # in deletion order

Progress = Callable[[int, int], None]


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
    """The ``id`` of ``table``'s row with each row's key (the columns ``on``) of ``frame_keys``.

    The keys of both are factorized together (one code per distinct value of
    each column, then per distinct combination) and looked up as integers:
    the lookup of a left merge, without building the merged frame. Values
    compare exactly (no stripping or case folding); a missing value (NaN)
    matches a missing value, as in a merge.

    Raises
    ------
    ValueError
        ``ERR_KEY_REPEATED`` if a key occurs twice in ``table``;
        ``ERR_KEY_MISSING`` if a key of ``frame_keys`` is not in ``table``.
    """
    import pandas as pd
    n_table = len(table)
    combined = np.zeros(n_table + len(frame_keys), dtype=np.int64)
    for column in on:
        codes, uniques = pd.factorize(pd.concat([table[column], frame_keys[column]], ignore_index=True),
                                      use_na_sentinel=False)
        combined, _ = pd.factorize(combined * len(uniques) + codes)  # codes of the combinations so far
    stored = pd.Index(combined[:n_table])
    if not stored.is_unique:
        key = table.loc[stored.duplicated(), on].iloc[0].tolist()
        raise ValueError(ERR_KEY_REPEATED.format(key=key))
    position = stored.get_indexer(combined[n_table:])
    if (position < 0).any():
        key = frame_keys[on].iloc[int(np.flatnonzero(position < 0)[0])].tolist()
        raise ValueError(ERR_KEY_MISSING.format(key=key))
    return table["id"].to_numpy(dtype=np.int64)[position]


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
    models = parsed.models

    response_sets_abandoned_remove()
    created: dict[type, list[int]] = {model: [] for model in _CATALOG}
    response_set = None
    planned = {"plan": plan}

    def lock_and_create() -> tuple[ResponseSet, pd.DataFrame]:
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
        response_set, stored_questions = with_lock_retries(lock_and_create)
        plan = planned["plan"]
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


def _insert_questions(new: pd.DataFrame, dataset_ids: dict[str, int], subject_ids: dict[str, int]) -> None:
    """Insert the plan's new questions (:func:`~annotate.core.services.database.rows_insert`,
    ``QUESTION_BATCH_SIZE`` rows built at a time).

    The values are those the model fields would write (blank text for a
    missing one, ``[]``/``{}`` for missing options and metadata, JSON as
    ``json.dumps`` text); their ids are read back with every other question
    of the upload's datasets (:func:`_created_question_ids`). The values are
    built a column at a time and handed over as columns, so that no
    tuple per row is built.
    """
    if new.empty:
        return
    # Whole columns as Python lists (the values row iteration gives, without iterating Arrow strings one by one).
    columns = [new[c].to_numpy(dtype=object).tolist() for c in _QUESTION_FIELDS]
    options_texts = new[OPTIONS_TEXT].tolist() if OPTIONS_TEXT in new.columns else None
    for start in range(0, len(new), QUESTION_BATCH_SIZE):
        dataset, subject, external_id, text, options, answer, metadata = (
            column[start:start + QUESTION_BATCH_SIZE] for column in columns)
        values = (
            [dataset_ids[d] for d in dataset],
            [subject_ids.get(s) if isinstance(s, str) else None for s in subject],
            external_id,
            [t if isinstance(t, str) else "" for t in text],
            options_json_texts(options, None if options_texts is None
                               else options_texts[start:start + QUESTION_BATCH_SIZE]),
            [a if isinstance(a, str) else "" for a in answer],
            metadata_json_texts(metadata),
        )
        rows_insert(model=Question, fields=_QUESTION_FIELDS, columns=values)


def _created_question_ids(new: pd.DataFrame, stored: pd.DataFrame) -> list[int]:
    """The ids of the plan's new questions, found by (dataset, external id), which is unique,
    among ``stored`` (:func:`~annotate.catalog.selectors.catalog.question_keys_table` read
    after they were inserted)."""
    if new.empty:
        return []
    return [int(pk) for pk in _ids(new[["dataset", "external_id"]], stored, ["dataset", "external_id"])]


def _create_rows(plan: LoadPlan, parsed: ParsedResponseSet, name: str, user, created: dict,
                 text_format: str | None) -> tuple[ResponseSet, pd.DataFrame]:
    """The catalog rows and the response set (status ``loading``), in one short transaction;
    returns the set and the id and key (``id``, ``dataset``, ``external_id``) of every question
    of the upload's datasets, read once, after the new ones were inserted.

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
    _insert_questions(plan.new_questions, dataset_ids, subject_ids)
    stored_questions = question_keys_table(dataset_ids=dataset_ids.values())[["dataset", "external_id", "id"]]
    created[Question] = _created_question_ids(plan.new_questions, stored_questions)
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
    response_set = ResponseSet.objects.create(
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
    return response_set, stored_questions


def _loader_id() -> str:
    return f"{socket.gethostname()[:100]}:{os.getpid()}"


def _is_dead(loader: str) -> bool:
    """True when ``loader`` ("host:pid") names a process of this host that no longer runs."""
    host, _, pid = loader.rpartition(":")
    if host != socket.gethostname()[:100] or ascii_int(pid) is None:
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
                columns=([response_set_id] * len(questions), questions.tolist(), range(start, start + len(questions))))
    writer.write_rows(start, credit, observed)
