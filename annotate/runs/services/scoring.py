"""Scoring runs: every difficulty method of :mod:`scoring` on one response set.

A run is created queued (:func:`scoring_run_create`), then executed either
inline (:func:`scoring_run_execute`: ``manage.py score_responses``,
``setup_demo``) or by the task worker (:func:`scoring_run_enqueue`: the
results page and the admin, so a web request never waits for it).

Rules
-----
- The matrix comes from :func:`annotate.catalog.selectors.matrix.response_matrix`;
  the methods are called on it exactly as :mod:`scoring` documents them.
  When every method of the run is ``compact`` in the registry (EIP, simple
  rank, accuracy, dataset-weighted accuracy) it comes from
  :func:`~annotate.catalog.selectors.matrix.response_matrix_compact` instead: uint8
  for a binary fully observed set (1 byte a cell, no float64 copy), float32
  with NaN otherwise; the results are the same to the last digit. The
  diagnostics and the stored counts are computed from it block by block.
- Results land in one transaction: the run is "done" with every
  MethodResult, QuestionResult and ModelResult row, or it has none.
- A failure leaves the run "failed" with the error text and no result rows;
  the exception is re-raised to the caller (the task worker records it too).
- Only a queued run can be executed; claiming it is one conditional UPDATE,
  so two workers never execute the same run.
- NaN is never stored: a value a method leaves undefined is NULL.
- With the results go the question list's sort keys
  (:mod:`annotate.runs.services.sort_keys`): each question's position when the
  list is sorted by each column, so a page of a huge run needs no sort.
- Every run records its response-matrix diagnostics
  (:func:`scoring.diagnostics.matrix_diagnostics`): ``run.diagnostics``
  holds the counts (missing cells, low-coverage questions, components) and
  each QuestionResult its ``component``.
- EIP runs on a Dask cluster when ``EIP_DASK_SCHEDULER`` is set and the
  matrix has at least ``EIP_DASK_MIN_CELLS`` cells (:func:`eip_engine_params`);
  the EIP MethodResult's notes then say ``engine: "dask"``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from threadpoolctl import threadpool_limits

from annotate.catalog import (
    CompactMatrix,
    ResponseMatrix,
    check_ids,
    ids_shown,
    response_matrix,
    response_matrix_compact,
)
from annotate.core import (
    ALPHA_HIGH,
    ALPHA_LOW,
    MIN_MODELS_MAX,
    MIRT_EPOCHS_MAX,
    RUN_SCORING,
    SEED_MAX,
    TOL_MAX,
    backend_pid,
    rows_insert,
    run_failure_text,
    task_enqueue,
)
from annotate.models import (
    MethodResult,
    ModelResult,
    QuestionResult,
    ResponseSet,
    ResponseSetModel,
    ResponseSetQuestion,
    ResponseSetStatus,
    RunStatus,
    ScoringRun,
)
from annotate.runs.selectors.results import run_estimation_bounds
from annotate.runs.services.sort_keys import N_OBSERVED, sort_keys_write
from scoring._validation import check_int, check_number
from scoring.diagnostics import DEFAULT_MIN_MODELS, MatrixDiagnostics, matrix_diagnostics
from scoring.method_runners import MIRT_SEEDS, MethodInput, MethodOutput
from scoring.methods import get_method, method_keys, methods, run_method

#: BLAS threads while the methods run. Response matrices are thin (tens of
#: model columns), so extra BLAS threads mostly synchronise and one thread is
#: several times faster for 2PL and MIRT (figures: docs/measurements.md).
BLAS_THREADS = 1
#: Share of ``progress`` spent reading the matrix and writing the results.
READ_SHARE, WRITE_SHARE = 0.05, 0.05
#: QuestionResult rows built and inserted at a time (a million-question run
#: never holds more than this many rows in Python).
STORE_BATCH = 5000

#: Run parameters other than ``methods`` (whose default is every registered method).
DEFAULT_PARAMS = {
    "alpha": 0.85,
    "tol": 1e-10,
    "mirt_epochs": 1000,
    "mirt_seed": 0,
    "mirt_seeds": MIRT_SEEDS,
    "min_models": DEFAULT_MIN_MODELS,
}
PARAM_KEYS = (*DEFAULT_PARAMS, "methods")


def required_methods() -> tuple[str, ...]:
    """Keys of the methods every run executes (registry entries with ``required``)."""
    return tuple(m.key for m in methods() if m.required)


def parse_methods(text: str) -> list[str]:
    """Comma-separated method keys (a command's ``--methods``), with the
    required ones first and added when missing; ``scoring_run_create`` checks
    the keys."""
    given = [part.strip() for part in text.split(",") if part.strip()]
    required = required_methods()
    return [*required, *[m for m in given if m not in required]]

ERR_RESPONSE_SET = "response_set must be a saved ResponseSet; got {value!r}"
ERR_HUMAN = ("response set {value} holds people's answers (marked as human): its persons are not scored as models; "
             "compare it with a model set in the human-label analysis instead")
ERR_STILL_LOADING = "response set {value} is still loading; score it once its load is done"
ERR_PARAMS = "params must be a mapping or None; got {value!r}"
ERR_UNKNOWN_PARAMS = "params has unknown key(s) {keys}; known: {known}"
ERR_ALPHA = "alpha must be a number in (0, 1); got {value!r}"
ERR_TOL = f"tol must be a finite number in (0, {TOL_MAX:g}]; got {{value!r}}"
ERR_EPOCHS = f"mirt_epochs must be an integer from 1 to {MIRT_EPOCHS_MAX:,}; got {{value!r}}"
ERR_SEED = f"mirt_seed must be an integer from 0 to {SEED_MAX:,}; got {{value!r}}"
ERR_SEEDS = "mirt_seeds must be an integer from 1 to {most}; got {value!r}"
ERR_MIN_MODELS = f"min_models must be an integer from 1 to {MIN_MODELS_MAX:,}; got {{value!r}}"
ERR_METHODS = "methods must be a list drawn from {known} that includes {required}; got {value!r}"
ERR_NOT_IN_SET = "{name} {ids} have no response in response set {response_set!r}"
ERR_NOT_QUEUED = "scoring run {run_id} is {status!r}; only a queued run can be executed"

Progress = Callable[[float, str], None]


# --- creating and enqueuing -------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _check_params(params: Mapping | None) -> dict:
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ValueError(ERR_PARAMS.format(value=params))
    unknown = sorted(set(params) - set(PARAM_KEYS))
    if unknown:
        raise ValueError(ERR_UNKNOWN_PARAMS.format(keys=unknown, known=sorted(PARAM_KEYS)))
    known, required = method_keys(), required_methods()
    merged = {**DEFAULT_PARAMS, "methods": list(known), **params}
    alpha = check_number(merged["alpha"], name="alpha", low=ALPHA_LOW, high=ALPHA_HIGH, low_open=True,
                         high_open=True, message=ERR_ALPHA)
    tol = check_number(merged["tol"], name="tol", low=0.0, high=TOL_MAX, low_open=True, message=ERR_TOL)
    check_int(merged["mirt_epochs"], name="mirt_epochs", low=1, high=MIRT_EPOCHS_MAX, message=ERR_EPOCHS)
    check_int(merged["mirt_seed"], name="mirt_seed", low=0, high=SEED_MAX, message=ERR_SEED)
    check_int(merged["mirt_seeds"], name="mirt_seeds", low=1, high=MIRT_SEEDS,
              message=ERR_SEEDS.replace("{most}", str(MIRT_SEEDS)))
    check_int(merged["min_models"], name="min_models", low=1, high=MIN_MODELS_MAX, message=ERR_MIN_MODELS)
    methods = merged["methods"]
    if (
        isinstance(methods, str)
        or not isinstance(methods, Sequence)
        or any(m not in known for m in methods)
        or any(m not in methods for m in required)
    ):
        raise ValueError(ERR_METHODS.format(known=list(known), required=list(required), value=methods))
    return {
        "alpha": float(alpha),
        "tol": float(tol),
        "mirt_epochs": int(merged["mirt_epochs"]),
        "mirt_seed": int(merged["mirt_seed"]),
        "mirt_seeds": int(merged["mirt_seeds"]),
        "min_models": int(merged["min_models"]),
        "methods": [m for m in known if m in methods],
    }



@transaction.atomic
def scoring_run_create(
    *,
    response_set: ResponseSet,
    model_ids: Sequence[int] | None = None,
    dataset_ids: Sequence[int] | None = None,
    params: Mapping | None = None,
    user=None,
) -> ScoringRun:
    """Create a queued scoring run (nothing is computed yet).

    Parameters
    ----------
    response_set : ResponseSet
        A saved response set.
    model_ids : sequence of int, optional
        Score only these ``LanguageModel`` ids (default: every model of the
        set). Each must have a response in the set.
    dataset_ids : sequence of int, optional
        Score only questions of these ``Dataset`` ids (default: all). Each
        must have a response in the set.
    params : mapping, optional
        Any of ``alpha`` (EIP damping, default 0.85, in (0, 1)), ``tol``
        (EIP L1 tolerance, default 1e-10), ``mirt_epochs`` (default 1000),
        ``mirt_seed`` (default 0), ``mirt_seeds`` (MIRT fits with seeds
        ``mirt_seed``, ``mirt_seed + 1``, ...; their mean is stored; default
        and most 5), ``min_models`` (a question observed by fewer models is
        flagged low-coverage; default 3) and ``methods`` (default every method of
        :mod:`scoring.methods`; must include the required ones).
    user : User, optional
        Stored as ``created_by``.

    Returns
    -------
    ScoringRun
        Status "queued", progress 0; ``params`` holds every parameter with
        its default filled in plus ``model_ids``/``dataset_ids`` (None =
        all); ``models_used``/``datasets_used`` hold the requested subsets
        (and, once executed, exactly what was scored).

    Raises
    ------
    ValueError
        On a bad argument (messages are this module's ``ERR_*`` constants).
    """
    if not isinstance(response_set, ResponseSet) or response_set.pk is None:
        raise ValueError(ERR_RESPONSE_SET.format(value=response_set))
    if response_set.status == ResponseSetStatus.LOADING:
        raise ValueError(ERR_STILL_LOADING.format(value=response_set))
    if response_set.is_human:
        raise ValueError(ERR_HUMAN.format(value=response_set))
    checked = _check_params(params)
    models = check_ids(model_ids, name="model_ids")
    datasets = check_ids(dataset_ids, name="dataset_ids")
    for name, ids, in_set, column in (
        ("model_ids", models, ResponseSetModel.objects.filter(response_set=response_set), "model_id"),
        ("dataset_ids", datasets, ResponseSetQuestion.objects.filter(response_set=response_set),
         "question__dataset_id"),
    ):
        if ids is None:
            continue
        present = set(in_set.filter(**{f"{column}__in": ids}).values_list(column, flat=True).distinct())
        missing = [i for i in ids if i not in present]
        if missing:
            raise ValueError(ERR_NOT_IN_SET.format(name=name, ids=ids_shown(missing), response_set=str(response_set)))
    run = ScoringRun.objects.create(
        response_set=response_set,
        params={**checked, "model_ids": models, "dataset_ids": datasets},
        status=RunStatus.QUEUED,
        progress=0.0,
        created_by=user,
    )
    if models is not None:
        run.models_used.set(models)
    if datasets is not None:
        run.datasets_used.set(datasets)
    return run


@dataclass(frozen=True)
class RunRequest:
    """The outcome of :func:`scoring_run_request`.

    Attributes
    ----------
    run : ScoringRun
        The new queued run, or the identical queued or running one.
    created : bool
        False when an identical run was already queued or running (then
        nothing was created or enqueued).
    """

    run: ScoringRun
    created: bool


def scoring_run_request(
    *,
    response_set: ResponseSet,
    model_ids: Sequence[int] | None = None,
    dataset_ids: Sequence[int] | None = None,
    params: Mapping | None = None,
    user=None,
    enqueue: bool = True,
) -> RunRequest:
    """A queued run of these settings, unless an identical one is queued or running.

    Two requests are identical when they name the same response set, the
    same methods and parameters (defaults filled in) and the same model and
    dataset subsets (order and repeats ignored). Identical requests that
    arrive together are serialised by a row lock on the response set, so
    they never queue twice. A finished (done or failed) run never counts:
    asking again after it starts a fresh run.

    Parameters
    ----------
    response_set, model_ids, dataset_ids, params, user
        As in :func:`scoring_run_create`.
    enqueue : bool, default True
        Hand a newly created run to the task worker (after the lock is
        released). False: leave it queued (a command executes it inline).

    Returns
    -------
    RunRequest
        ``created`` False and the existing run when an identical one is
        queued or running; otherwise the new run and ``created`` True.

    Raises
    ------
    ValueError
        As :func:`scoring_run_create`.
    """
    outcome = _find_or_create(response_set=response_set, model_ids=model_ids, dataset_ids=dataset_ids,
                              params=params, user=user)
    if outcome.created and enqueue:
        scoring_run_enqueue(run=outcome.run)
    return outcome


@transaction.atomic
def _find_or_create(
    *, response_set: ResponseSet, model_ids: Sequence[int] | None, dataset_ids: Sequence[int] | None,
    params: Mapping | None, user,
) -> RunRequest:
    if not isinstance(response_set, ResponseSet) or response_set.pk is None:
        raise ValueError(ERR_RESPONSE_SET.format(value=response_set))
    if response_set.is_human:
        raise ValueError(ERR_HUMAN.format(value=response_set))
    wanted = {**_check_params(params), "model_ids": check_ids(model_ids, name="model_ids"),
              "dataset_ids": check_ids(dataset_ids, name="dataset_ids")}
    list(ResponseSet.objects.select_for_update().filter(pk=response_set.pk).values_list("pk", flat=True))
    active = ScoringRun.objects.filter(
        response_set=response_set, status__in=(RunStatus.QUEUED, RunStatus.RUNNING)
    ).order_by("pk")
    for run in active:
        if _same_request(run.params, wanted):
            return RunRequest(run=run, created=False)
    run = scoring_run_create(response_set=response_set, model_ids=model_ids, dataset_ids=dataset_ids,
                             params=params, user=user)
    return RunRequest(run=run, created=True)


def scoring_run_request_again(*, run: ScoringRun, user=None) -> RunRequest:
    """:func:`scoring_run_request` with ``run``'s response set, subset and parameters (enqueued if new)."""
    params = {key: run.params[key] for key in PARAM_KEYS if key in run.params}
    return scoring_run_request(response_set=run.response_set, model_ids=run.params.get("model_ids"),
                               dataset_ids=run.params.get("dataset_ids"), params=params, user=user)


def scoring_run_done_before(*, run: ScoringRun) -> ScoringRun | None:
    """The newest finished (done) run of ``run``'s response set with the same settings, if any.

    Settings compare as in :func:`scoring_run_request` (methods, parameters
    and subsets, defaults filled in). A new run of the same settings
    recomputes what that run holds.
    """
    done = ScoringRun.objects.filter(response_set_id=run.response_set_id, status=RunStatus.DONE).exclude(pk=run.pk)
    for other in done.order_by("-pk"):
        if _same_request(other.params, run.params):
            return other
    return None


def _same_request(stored: Mapping, wanted: Mapping) -> bool:
    """Do a stored run's ``params`` describe the request ``wanted`` (every key compared)?"""
    keys = set(stored) | set(wanted)
    return all(_canonical(stored.get(key)) == _canonical(wanted.get(key)) for key in keys)


def _canonical(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_canonical(v) for v in value)
    if _is_number(value):
        return float(value)
    return value


def scoring_run_enqueue(*, run: ScoringRun):
    """Hand a queued run to the task worker (``annotate.runs.tasks.run_scoring``).

    Returns the django-tasks ``TaskResult``. With the database backend the
    run waits for ``manage.py run_worker``; with ``TASKS_BACKEND=immediate`` it
    runs before this returns (then reload ``run`` to see the outcome).
    """
    if run.status != RunStatus.QUEUED:
        raise ValueError(ERR_NOT_QUEUED.format(run_id=run.pk, status=str(run.status)))
    return task_enqueue(RUN_SCORING, run.pk)


# --- executing --------------------------------------------------------------------


def _optional(value) -> float | None:
    """A float, or None for NaN/inf (never stored)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _set_progress(run: ScoringRun, value: float, label: str, progress: Progress | None) -> None:
    run.progress = value
    ScoringRun.objects.filter(pk=run.pk).update(progress=value, heartbeat_at=timezone.now())
    if progress is not None:
        progress(value, label)


def scoring_run_execute(*, run: ScoringRun, progress: Progress | None = None) -> ScoringRun:
    """Run every requested method on the run's matrix and store the results.

    Parameters
    ----------
    run : ScoringRun
        A queued run (see :func:`scoring_run_create`).
    progress : callable (fraction, label) -> None, optional
        Called before each method (label: its name), before storing
        ("storing") and at the end (1.0, "done"), with the fraction done in
        [0, 1] (weighted by each method's registry ``cost``). ``run.progress`` is updated in
        the database at the same points, outside the final transaction, so a
        page can show it.

    Returns
    -------
    ScoringRun
        Status "done", progress 1, ``finished_at`` set; one MethodResult per
        method, one QuestionResult per matrix row and one ModelResult per
        column; ``models_used``/``datasets_used`` are what was scored;
        ``diagnostics`` holds :func:`diagnostics_summary` of the matrix and
        each QuestionResult its graph ``component``.

    Raises
    ------
    ValueError
        If the run is not queued (``ERR_NOT_QUEUED``; the run is unchanged).
    Exception
        Whatever the selector or a method raised (e.g. ``ValueError`` when
        EIP keeps no question, ``scoring.ConvergenceError``): the run is then
        "failed", ``error`` holds a sentence (:func:`annotate.core.run_failure_text`), no result
        row exists, and the exception is re-raised.

    Notes
    -----
    Stored scales: EIP ``pi_Q``/``pi_M`` and their 0-100 displays; Simple
    Rank (failures over observed cells); accuracy difficulty ``1 - mean
    credit``; model accuracy and dataset-weighted accuracy (groups = each
    question's dataset) in [0, 1]; 1PL/2PL difficulty and ability in logits
    (2PL discrimination too); MIRT difficulty (intercept ``b``) and ability
    on 0-100. Higher difficulty = harder for every method. BLAS runs on
    ``BLAS_THREADS`` threads meanwhile (see its comment). The ``residual``
    of a MethodResult is EIP's final L1 residual, or the projected-gradient
    max-norm for 1PL/2PL; MIRT has none.

    References
    ----------
    EIP paper, sections 2.2-2.4 (EIP), 3.3 (Simple Rank, accuracy), 4
    (dataset-weighted accuracy) and appendix H.4 (IRT baselines).
    """
    claimed = ScoringRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, progress=0.0, error="", heartbeat_at=timezone.now(), db_backend_pid=backend_pid()
    )
    if not claimed:
        run.refresh_from_db()
        raise ValueError(ERR_NOT_QUEUED.format(run_id=run.pk, status=str(run.status)))
    run.status, run.progress, run.error = RunStatus.RUNNING, 0.0, ""
    step = "reading the responses"
    try:
        params = run.params
        keys = params.get("methods", list(method_keys()))
        read = response_matrix_compact if reads_compact(keys) else response_matrix
        matrix = read(
            response_set=run.response_set, model_ids=params.get("model_ids"), dataset_ids=params.get("dataset_ids")
        )
        total = sum(get_method(k).cost for k in keys)
        data = MethodInput(R=matrix.R, question_groups=matrix.question_datasets,
                           params={**params, **eip_engine_params(matrix.R.size, matrix=matrix)})
        done = 0.0
        outcomes: dict[str, MethodOutput] = {}
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            for key in keys:
                step = f"computing {get_method(key).label}"
                _set_progress(run, READ_SHARE + (1 - READ_SHARE - WRITE_SHARE) * done / total, key, progress)
                outcomes[key] = run_method(key, data)
                done += get_method(key).cost
        step = "storing the results"
        _set_progress(run, 1.0 - WRITE_SHARE, "storing", progress)
        _store(run, matrix, outcomes, diagnose(matrix.R, min_models=params.get("min_models", DEFAULT_MIN_MODELS)))
    except BaseException as exc:  # also Ctrl-C in a command: never leave it "running"
        ScoringRun.objects.filter(pk=run.pk).update(
            status=RunStatus.FAILED, error=run_failure_text(exc, step=step), finished_at=timezone.now()
        )
        run.refresh_from_db()
        raise
    if progress is not None:
        progress(1.0, "done")
    return run


def reads_compact(keys: Sequence[str]) -> bool:
    """Does a run of these methods read the compact matrix (every method ``compact`` in the registry)?

    Raises
    ------
    KeyError
        For an unknown method key.
    """
    return all(get_method(key).compact for key in keys)


def eip_engine_params(n_cells: int, *, matrix: ResponseMatrix | CompactMatrix | None = None) -> dict:
    """Method parameters that send EIP to a Dask cluster, or ``{}`` for the in-memory kernel.

    Dask is used when the setting ``EIP_DASK_SCHEDULER`` is on ("local" or a
    scheduler address) and the matrix has at least ``EIP_DASK_MIN_CELLS``
    cells; the run's EIP MethodResult notes then hold ``engine: "dask"``,
    the scheduler, its address and the worker count. Given the run's
    ``matrix`` (read from a response set's store), the workers read the
    store themselves (``eip_dask_store`` with the matrix's store rows and
    columns; notes ``dask_store``) instead of receiving the matrix from this
    process (notes ``dask_blocks``).

    Raises
    ------
    ValueError
        If ``EIP_DASK_SCHEDULER`` is not "", "local" or a scheduler address
        (the message names the setting).
    """
    from scoring.eip_dask import check_scheduler

    scheduler = check_scheduler(getattr(settings, "EIP_DASK_SCHEDULER", ""))
    if not scheduler or n_cells < getattr(settings, "EIP_DASK_MIN_CELLS", 0):
        return {}
    params = {"eip_dask_scheduler": scheduler, "eip_dask_timeout": float(getattr(settings, "EIP_DASK_TIMEOUT_S", 10))}
    if matrix is not None and matrix.store is not None and matrix.store_rows is not None:
        params.update(eip_dask_store=str(matrix.store), eip_dask_rows=matrix.store_rows,
                      eip_dask_columns=matrix.store_columns)
    return params


def diagnose(R: np.ndarray, *, min_models: int = DEFAULT_MIN_MODELS) -> MatrixDiagnostics:
    """:func:`scoring.diagnostics.matrix_diagnostics` of a run's matrix (float64 or compact; read
    block by block)."""
    return matrix_diagnostics(R, min_models=min_models)


def diagnostics_summary(d: MatrixDiagnostics) -> dict:
    """What ``ScoringRun.diagnostics`` stores: the counts plus ``warnings``
    (sentences for the run and report pages; empty when all is well)."""
    warnings = []
    if d.n_components > 1:
        warnings.append(
            f"The model-question graph splits into {d.n_components} components that share no model: "
            "difficulties of different components are not comparable, and no study pairs questions across them."
        )
    return {**d.summary, "warnings": warnings}


def _finite_lists(columns: dict[str, np.ndarray], rows: slice) -> dict[str, list[float | None]]:
    """Rows ``rows`` of every column as Python floats, None for NaN/inf (never stored)."""
    out = {}
    for column, values in columns.items():
        part = np.asarray(values[rows], dtype=np.float64)
        listed = part.tolist()
        if not np.isfinite(part).all():
            listed = [v if math.isfinite(v) else None for v in listed]
        out[column] = listed
    return out


def _scores(lists: dict[str, list[float | None]], i: int) -> dict[str, float]:
    """Entry ``i`` of every column as ``{column: value}``, undefined values left out."""
    return {column: values[i] for column, values in lists.items() if values[i] is not None}


def _scores_json(lists: dict[str, list[float | None]], keys: dict[str, str], i: int) -> str:
    """``json.dumps(_scores(lists, i))``, built directly (json.dumps per row was most of the Python time of a store).

    ``keys`` maps each column to its JSON key and separator (``'"eip": '``);
    a float prints as ``float.__repr__``, exactly as :mod:`json` prints it.
    """
    return "{" + ", ".join(keys[column] + repr(values[i]) for column, values in lists.items()
                           if values[i] is not None) + "}"


#: The QuestionResult fields :func:`_insert_question_results` fills, in its row order.
_QUESTION_RESULT_FIELDS = ("run", "question", "kept", "n_observed", "component", "scores")


def _insert_question_results(rows: list[tuple]) -> None:
    """Insert QuestionResult rows ``(run_id, question_id, kept, n_observed, component, scores JSON text)``
    (:func:`~annotate.core.services.database.rows_insert`: ``scores`` is the text ``JSONField`` would write)."""
    rows_insert(model=QuestionResult, fields=_QUESTION_RESULT_FIELDS, rows=rows)


@transaction.atomic
def _store(run: ScoringRun, m: ResponseMatrix | CompactMatrix, outcomes: dict[str, MethodOutput],
           diag: MatrixDiagnostics) -> None:
    """Write the run's results; QuestionResult rows ``STORE_BATCH`` at a time (counts come from ``diag``),
    then the question list's sort keys (:mod:`annotate.runs.services.sort_keys`)."""
    MethodResult.objects.bulk_create(
        MethodResult(
            run=run, method=key, params=o.params, n_iter=o.n_iter, converged=o.converged,
            residual=None if o.residual is None else _optional(o.residual), duration_s=o.seconds, notes=o.notes,
        )
        for key, o in outcomes.items()
    )
    n_questions = m.shape[0]
    kept_masks = [o.kept for o in outcomes.values() if o.kept is not None]
    kept = np.logical_and.reduce(kept_masks) if kept_masks else np.ones(n_questions, dtype=bool)
    question_columns = {k: v for o in outcomes.values() for k, v in o.question_columns.items()}
    keys = {column: json.dumps(column) + ": " for column in question_columns}
    for start in range(0, n_questions, STORE_BATCH):
        rows = slice(start, start + STORE_BATCH)
        scores = _finite_lists(question_columns, rows)
        _insert_question_results([
            (run.pk, qid, k, n, c, _scores_json(scores, keys, i))
            for i, (qid, k, n, c) in enumerate(zip(
                m.question_ids[rows].tolist(), kept[rows].tolist(), diag.n_observed[rows].tolist(),
                diag.question_component[rows].tolist()))
        ])
    sort_keys_write(run_id=run.pk, question_ids=m.question_ids,
                    columns={**question_columns, N_OBSERVED: diag.n_observed}, bounds=run_estimation_bounds(run=run))
    model_columns = {k: v for o in outcomes.values() for k, v in o.model_columns.items()}
    model_scores = _finite_lists(model_columns, slice(None))
    ModelResult.objects.bulk_create(
        ModelResult(run=run, model_id=int(mid), n_observed=int(diag.n_observed_models[j]),
                    scores=_scores(model_scores, j))
        for j, mid in enumerate(m.model_ids.tolist())
    )
    run.models_used.set(m.model_ids.tolist())
    run.datasets_used.set(np.unique(m.question_datasets).tolist())
    run.diagnostics = diagnostics_summary(diag)
    run.status, run.progress, run.finished_at = RunStatus.DONE, 1.0, timezone.now()
    run.save(update_fields=["status", "progress", "finished_at", "diagnostics"])


@transaction.atomic
def scoring_run_delete(*, entry: ScoringRun) -> None:
    """Delete a scoring run with every result row of it (from the admin).

    Raises
    ------
    django.db.models.ProtectedError
        While a study is built on the run (nothing deleted; the admin's
        confirmation page names the studies first).
    """
    entry.delete()
