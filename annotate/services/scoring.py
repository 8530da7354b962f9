"""Scoring runs: every difficulty method of :mod:`scoring` on one response set.

A run is created queued (:func:`scoring_run_create`), then executed either
inline (:func:`scoring_run_execute`: ``manage.py score_responses``,
``setup_demo``) or by the task worker (:func:`scoring_run_enqueue`: the
results page and the admin, so a web request never waits for it).

Rules
-----
- The matrix comes from :func:`annotate.selectors.matrix.response_matrix`;
  the methods are called on it exactly as :mod:`scoring` documents them.
- Results land in one transaction: the run is "done" with every
  MethodResult, QuestionResult and ModelResult row, or it has none.
- A failure leaves the run "failed" with the error text and no result rows;
  the exception is re-raised to the caller (the task worker records it too).
- Only a queued run can be executed; claiming it is one conditional UPDATE,
  so two workers never execute the same run.
- NaN is never stored: a value a method leaves undefined is NULL.
"""
from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.utils import timezone
from threadpoolctl import threadpool_limits

from annotate.models import (
    MethodResult,
    ModelResult,
    QuestionResult,
    Response,
    ResponseSet,
    RunStatus,
    ScoringRun,
)
from annotate.selectors.matrix import ResponseMatrix, response_matrix
from scoring.baselines import accuracy, question_accuracy_difficulty, simple_rank, weighted_accuracy
from scoring.eip import eip
from scoring.irt import irt_1pl, irt_2pl, irt_mirt

#: Every method a run can execute, in execution order.
METHODS = ("eip", "simple_rank", "accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_mirt")
#: Methods every run executes: their columns are NOT NULL in ModelResult.
REQUIRED_METHODS = ("eip", "accuracy")
#: Relative cost used to advance ``progress`` (measured on MMLU-Pro, 12,032 x 32).
METHOD_WEIGHTS = {
    "eip": 1.0, "simple_rank": 0.1, "accuracy": 0.1, "weighted_accuracy": 0.1,
    "irt_1pl": 3.0, "irt_2pl": 8.0, "irt_mirt": 20.0,
}
#: BLAS threads while the methods run. Response matrices are thin (tens of
#: model columns), so extra BLAS threads mostly synchronise: on MMLU-Pro
#: (12,032 x 32) on the shared 2-core machine, one thread took 2PL from 33-45 s
#: to 5 s and MIRT (1000 epochs) from 50 s to 13 s.
BLAS_THREADS = 1
#: Share of ``progress`` spent reading the matrix and writing the results.
READ_SHARE, WRITE_SHARE = 0.05, 0.05

DEFAULT_PARAMS = {
    "alpha": 0.85,
    "tol": 1e-10,
    "mirt_epochs": 1000,
    "mirt_seed": 0,
    "methods": list(METHODS),
}

ERR_RESPONSE_SET = "response_set must be a saved ResponseSet; got {value!r}"
ERR_PARAMS = "params must be a mapping or None; got {value!r}"
ERR_UNKNOWN_PARAMS = "params has unknown key(s) {keys}; known: {known}"
ERR_ALPHA = "alpha must be a number in (0, 1); got {value!r}"
ERR_TOL = "tol must be a finite number > 0; got {value!r}"
ERR_EPOCHS = "mirt_epochs must be an integer >= 1; got {value!r}"
ERR_SEED = "mirt_seed must be an integer >= 0; got {value!r}"
ERR_METHODS = "methods must be a list drawn from {known} that includes {required}; got {value!r}"
ERR_IDS = "{name} must be a non-empty sequence of integer ids or None; got {value!r}"
ERR_NOT_IN_SET = "{name} {ids} have no response in response set {response_set!r}"
ERR_NOT_QUEUED = "scoring run {run_id} is {status!r}; only a queued run can be executed"

Progress = Callable[[float, str], None]


# --- creating and enqueuing -------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _check_params(params: Mapping | None) -> dict:
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ValueError(ERR_PARAMS.format(value=params))
    unknown = sorted(set(params) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(ERR_UNKNOWN_PARAMS.format(keys=unknown, known=sorted(DEFAULT_PARAMS)))
    merged = {**DEFAULT_PARAMS, **params}
    alpha, tol = merged["alpha"], merged["tol"]
    if not _is_number(alpha) or not 0.0 < alpha < 1.0:
        raise ValueError(ERR_ALPHA.format(value=alpha))
    if not _is_number(tol) or not math.isfinite(tol) or tol <= 0:
        raise ValueError(ERR_TOL.format(value=tol))
    if not _is_int(merged["mirt_epochs"]) or merged["mirt_epochs"] < 1:
        raise ValueError(ERR_EPOCHS.format(value=merged["mirt_epochs"]))
    if not _is_int(merged["mirt_seed"]) or merged["mirt_seed"] < 0:
        raise ValueError(ERR_SEED.format(value=merged["mirt_seed"]))
    methods = merged["methods"]
    if (
        isinstance(methods, str)
        or not isinstance(methods, Sequence)
        or any(m not in METHODS for m in methods)
        or any(m not in methods for m in REQUIRED_METHODS)
    ):
        raise ValueError(ERR_METHODS.format(known=list(METHODS), required=list(REQUIRED_METHODS), value=methods))
    return {
        "alpha": float(alpha),
        "tol": float(tol),
        "mirt_epochs": int(merged["mirt_epochs"]),
        "mirt_seed": int(merged["mirt_seed"]),
        "methods": [m for m in METHODS if m in methods],
    }


def _check_ids(value, name: str) -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray) or len(value) == 0 \
            or not all(_is_int(v) for v in value):
        raise ValueError(ERR_IDS.format(name=name, value=value))
    return sorted({int(v) for v in value})


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
        ``mirt_seed`` (default 0) and ``methods`` (default every entry of
        ``METHODS``; must include ``REQUIRED_METHODS``).
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
    checked = _check_params(params)
    models = _check_ids(model_ids, "model_ids")
    datasets = _check_ids(dataset_ids, "dataset_ids")
    in_set = Response.objects.filter(response_set=response_set)
    for name, ids, column in (("model_ids", models, "model_id"), ("dataset_ids", datasets, "question__dataset_id")):
        if ids is None:
            continue
        present = set(in_set.filter(**{f"{column}__in": ids}).values_list(column, flat=True).distinct())
        missing = [i for i in ids if i not in present]
        if missing:
            raise ValueError(ERR_NOT_IN_SET.format(name=name, ids=missing, response_set=str(response_set)))
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


def scoring_run_repeat(*, run: ScoringRun, user=None) -> ScoringRun:
    """A new queued run of the same response set, subset and parameters."""
    params = {key: run.params[key] for key in DEFAULT_PARAMS if key in run.params}
    return scoring_run_create(
        response_set=run.response_set, model_ids=run.params.get("model_ids"),
        dataset_ids=run.params.get("dataset_ids"), params=params, user=user,
    )


def scoring_run_enqueue(*, run: ScoringRun):
    """Hand a queued run to the task worker (``annotate.tasks.run_scoring``).

    Returns the django-tasks ``TaskResult``. With the database backend the
    run waits for ``manage.py db_worker``; with ``TASKS_BACKEND=immediate`` it
    runs before this returns (then reload ``run`` to see the outcome).
    """
    from annotate.tasks import run_scoring  # the task module imports this one

    if run.status != RunStatus.QUEUED:
        raise ValueError(ERR_NOT_QUEUED.format(run_id=run.pk, status=str(run.status)))
    return run_scoring.enqueue(run.pk)


# --- executing --------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    """One method's stored figures and the columns it fills."""

    method: str
    params: dict
    n_iter: int | None
    converged: bool | None
    residual: float | None
    duration_s: float
    notes: dict
    question_columns: dict  # QuestionResult field -> ndarray (n_questions,)
    model_columns: dict  # ModelResult field -> ndarray (n_models,)


def _optional(value) -> float | None:
    """A float, or None for NaN/inf (never stored)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _run_eip(m: ResponseMatrix, params: dict) -> _Outcome:
    started = time.perf_counter()
    res = eip(m.R, alpha=params["alpha"], tol=params["tol"])
    duration = time.perf_counter() - started
    return _Outcome(
        "eip", {"alpha": res.alpha, "tol": res.tol}, res.n_iter, res.converged, res.residual, duration,
        {
            "kept": int(res.kept.sum()),
            "all_solved": int(res.all_solved.sum()),
            "all_failed": int(res.all_failed.sum()),
            "dangling_models": int(res.dangling.sum()),
        },
        {"kept": res.kept, "eip": res.difficulty, "eip_scaled": res.difficulty_scaled},
        {"eip": res.competency, "eip_scaled": res.competency_scaled},
    )


def _run_simple(name: str, m: ResponseMatrix) -> _Outcome:
    started = time.perf_counter()
    if name == "simple_rank":
        questions, models = {"simple_rank": simple_rank(m.R)}, {}
    elif name == "accuracy":
        questions = {"accuracy_difficulty": question_accuracy_difficulty(m.R)}
        models = {"accuracy": accuracy(m.R)}
    else:  # weighted_accuracy: each question's dataset is its group
        questions, models = {}, {"weighted_accuracy": weighted_accuracy(m.R, m.question_datasets)}
    duration = time.perf_counter() - started
    notes = {"datasets": int(np.unique(m.question_datasets).size)} if name == "weighted_accuracy" else {}
    return _Outcome(name, {}, None, None, None, duration, notes, questions, models)


def _keyword_defaults(func: Callable) -> dict:
    """The keyword-only defaults of a :mod:`scoring` function (what a call
    without options uses), JSON-ready: tuples become lists."""
    return {
        name: list(p.default) if isinstance(p.default, tuple) else p.default
        for name, p in inspect.signature(func).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def _run_jml(name: str, m: ResponseMatrix) -> _Outcome:
    fit = irt_1pl if name == "irt_1pl" else irt_2pl
    started = time.perf_counter()
    res = fit(m.R)  # the defaults of scoring.irt are the paper's settings (appendix H.4)
    duration = time.perf_counter() - started
    questions = {name: res.difficulty}
    if name == "irt_2pl":
        questions["irt_2pl_discrimination"] = res.discrimination
    notes = {
        "objective": float(res.objective),
        "message": res.message,
        "abilities_at_bound": int(res.ability_at_bound.sum()),
        "difficulties_at_bound": int(res.difficulty_at_bound.sum()),
    }
    if name == "irt_2pl":
        notes["discriminations_at_bound"] = int(res.discrimination_at_bound.sum())
    return _Outcome(
        name, _keyword_defaults(fit), res.n_iter, res.converged, _optional(res.projected_gradient), duration, notes,
        questions, {name: res.ability},
    )


def _run_mirt(m: ResponseMatrix, params: dict) -> _Outcome:
    started = time.perf_counter()
    res = irt_mirt(m.R, epochs=params["mirt_epochs"], rng=params["mirt_seed"])
    duration = time.perf_counter() - started
    window = max(1, len(res.elbo_trace) // 10)
    used = {key: value for key, value in _keyword_defaults(irt_mirt).items() if key != "rng"}
    used.update(epochs=params["mirt_epochs"], seed=params["mirt_seed"])
    return _Outcome(
        "irt_mirt", used, res.n_iter, res.converged,
        None, duration, {"elbo_last_10pct_mean": _optional(np.mean(res.elbo_trace[-window:]))},
        {"irt_mirt": res.difficulty}, {"irt_mirt": res.ability},
    )


def _run_method(name: str, m: ResponseMatrix, params: dict) -> _Outcome:
    if name == "eip":
        return _run_eip(m, params)
    if name in ("irt_1pl", "irt_2pl"):
        return _run_jml(name, m)
    if name == "irt_mirt":
        return _run_mirt(m, params)
    return _run_simple(name, m)


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
        [0, 1] (weighted by ``METHOD_WEIGHTS``). ``run.progress`` is updated in
        the database at the same points, outside the final transaction, so a
        page can show it.

    Returns
    -------
    ScoringRun
        Status "done", progress 1, ``finished_at`` set; one MethodResult per
        method, one QuestionResult per matrix row and one ModelResult per
        column; ``models_used``/``datasets_used`` are what was scored.

    Raises
    ------
    ValueError
        If the run is not queued (``ERR_NOT_QUEUED``; the run is unchanged).
    Exception
        Whatever the selector or a method raised (e.g. ``ValueError`` when
        EIP keeps no question, ``scoring.ConvergenceError``): the run is then
        "failed", ``error`` holds ``"<ExceptionType>: <message>"``, no result
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
        status=RunStatus.RUNNING, progress=0.0, error="", heartbeat_at=timezone.now()
    )
    if not claimed:
        run.refresh_from_db()
        raise ValueError(ERR_NOT_QUEUED.format(run_id=run.pk, status=str(run.status)))
    run.status, run.progress, run.error = RunStatus.RUNNING, 0.0, ""
    try:
        params = run.params
        matrix = response_matrix(
            response_set=run.response_set, model_ids=params.get("model_ids"), dataset_ids=params.get("dataset_ids")
        )
        methods = params.get("methods", list(METHODS))
        total = sum(METHOD_WEIGHTS[m] for m in methods)
        done = 0.0
        outcomes = []
        with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
            for name in methods:
                _set_progress(run, READ_SHARE + (1 - READ_SHARE - WRITE_SHARE) * done / total, name, progress)
                outcomes.append(_run_method(name, matrix, params))
                done += METHOD_WEIGHTS[name]
        _set_progress(run, 1.0 - WRITE_SHARE, "storing", progress)
        _store(run, matrix, outcomes)
    except BaseException as exc:  # also Ctrl-C in a command: never leave it "running"
        ScoringRun.objects.filter(pk=run.pk).update(
            status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        run.refresh_from_db()
        raise
    if progress is not None:
        progress(1.0, "done")
    return run


@transaction.atomic
def _store(run: ScoringRun, m: ResponseMatrix, outcomes: list[_Outcome]) -> None:
    MethodResult.objects.bulk_create(
        MethodResult(
            run=run, method=o.method, params=o.params, n_iter=o.n_iter, converged=o.converged,
            residual=None if o.residual is None else _optional(o.residual), duration_s=o.duration_s, notes=o.notes,
        )
        for o in outcomes
    )
    observed = ~np.isnan(m.R)
    question_columns = {k: v for o in outcomes for k, v in o.question_columns.items()}
    kept = question_columns.pop("kept")
    n_per_question = observed.sum(axis=1)
    QuestionResult.objects.bulk_create(
        (
            QuestionResult(
                run=run, question_id=int(qid), kept=bool(kept[i]), n_observed=int(n_per_question[i]),
                **{field: _optional(values[i]) for field, values in question_columns.items()},
            )
            for i, qid in enumerate(m.question_ids.tolist())
        ),
        batch_size=2000,
    )
    model_columns = {k: v for o in outcomes for k, v in o.model_columns.items()}
    n_per_model = observed.sum(axis=0)
    ModelResult.objects.bulk_create(
        ModelResult(
            run=run, model_id=int(mid), n_observed=int(n_per_model[j]),
            **{field: _optional(values[j]) for field, values in model_columns.items()},
        )
        for j, mid in enumerate(m.model_ids.tolist())
    )
    run.models_used.set(m.model_ids.tolist())
    run.datasets_used.set(np.unique(m.question_datasets).tolist())
    run.status, run.progress, run.finished_at = RunStatus.DONE, 1.0, timezone.now()
    run.save(update_fields=["status", "progress", "finished_at"])
