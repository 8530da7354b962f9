"""How each registered difficulty method runs: its input, its output, its runner.

A runner takes a :class:`MethodInput` (the response matrix, parameters, a
seed) and returns a :class:`MethodOutput` (question and model columns,
iterations, convergence, residual, notes). :mod:`scoring.methods` registers
each runner with its key, label, stored columns and direction.
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring._typing import ResponseArray
from scoring.baselines import accuracy, question_accuracy_difficulty, simple_rank, weighted_accuracy
from scoring.eip import eip
from scoring.fraction import FractionMatrix
from scoring.irt import irt_1pl, irt_2pl
from scoring.irt_mml import irt_1pl_mml, irt_2pl_mml
from scoring.mirt import irt_mirt

__all__ = ["MIRT_SEEDS", "MIRT_SEED_COLUMNS", "MethodInput", "MethodOutput", "Runner", "pool_identical_questions"]


ERR_MIRT_SEEDS = "mirt_seeds must be an integer from 1 to {most}; got {value!r}"


@dataclass(frozen=True)
class MethodInput:
    """What a runner receives.

    Attributes
    ----------
    R : ndarray of shape (n_questions, n_models), or FractionMatrix
        A validated response matrix: credit in [0, 1] with NaN = not
        observed (float), or a fully observed bool/integer 0/1 matrix; a
        :class:`~scoring.fraction.FractionMatrix` (exact partial credit k/n)
        only for runs whose every method is ``compact``.
    question_groups : ndarray, shape (n_questions,)
        Each question's dataset label (for dataset-weighted accuracy).
    params : mapping
        Run parameters: ``alpha`` (EIP damping factor), ``tol`` (EIP L1
        tolerance), ``mirt_epochs``, ``mirt_seed``, ``mirt_seeds`` (MIRT
        fits, default 5, seeds ``mirt_seed + k``), ``mirt_rng``,
        ``eip_dask_scheduler`` (run EIP with
        :func:`scoring.eip_cluster.eip_on_cluster` on this cluster: "local" or
        a scheduler address; its notes then say ``engine: "dask"``),
        ``eip_dask_timeout`` (seconds) and ``eip_dask_store`` (with the
        scheduler: the workers read the matrix from this Zarr group instead,
        :func:`scoring.eip_cluster.eip_on_cluster_from_zarr`, rows and columns
        ``eip_dask_rows`` / ``eip_dask_columns``, which must select exactly
        ``R``); a runner reads only what it needs.
    """

    R: ResponseArray | FractionMatrix
    question_groups: NDArray[Any]
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodOutput:
    """What a runner returns: every declared column, plus how the fit went.

    Attributes
    ----------
    question_columns : dict of str to ndarray of shape (n_questions,)
        One entry per declared question column; NaN where undefined.
    model_columns : dict of str to ndarray of shape (n_models,)
        One entry per declared model column; NaN where undefined.
    params : dict
        The parameters actually used (JSON-ready).
    n_iter : int or None
    converged : bool or None
    residual : float or None
        The method's own final residual (see ``residual_label``).
    notes : dict
        Method-specific figures worth keeping (JSON-ready).
    seconds : float
        Wall time of the fit (set by :func:`run_method`).
    kept : ndarray of bool, shape (n_questions,), or None
        Questions the method could rank (EIP: neither all solved nor all
        failed); None when the method does not decide this.
    """

    question_columns: dict[str, NDArray[np.float64]]
    model_columns: dict[str, NDArray[np.float64]]
    params: dict[str, Any] = field(default_factory=dict)
    n_iter: int | None = None
    converged: bool | None = None
    residual: float | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    kept: NDArray[np.bool_] | None = None


Runner = Callable[[MethodInput], MethodOutput]


def _keyword_defaults(func: Callable[..., Any]) -> dict[str, Any]:
    """The keyword-only defaults of a :mod:`scoring` function, JSON-ready."""
    return {
        name: list(p.default) if isinstance(p.default, tuple) else p.default
        for name, p in inspect.signature(func).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }


def _finite_or_none(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _run_eip(data: MethodInput) -> MethodOutput:
    alpha, tol = data.params.get("alpha", 0.85), data.params.get("tol", 1e-10)
    scheduler = data.params.get("eip_dask_scheduler")
    engine: dict[str, Any] = {}
    store = data.params.get("eip_dask_store")
    if scheduler and store:
        from scoring.eip_cluster import eip_on_cluster_from_zarr

        run = eip_on_cluster_from_zarr(store, scheduler=scheduler, rows=data.params.get("eip_dask_rows"),
                                       columns=data.params.get("eip_dask_columns"), alpha=alpha, tol=tol,
                                       timeout=data.params.get("eip_dask_timeout", 10.0))
        res = run.result
        engine = {"engine": "dask", "dask_scheduler": run.scheduler, "dask_address": run.address,
                  "dask_workers": run.n_workers, "dask_store": str(store)}
    elif scheduler:
        from scoring.eip_cluster import eip_on_cluster

        matrix = data.R.to_dense() if isinstance(data.R, FractionMatrix) else data.R
        run = eip_on_cluster(matrix, scheduler=scheduler, alpha=alpha, tol=tol,
                             timeout=data.params.get("eip_dask_timeout", 10.0))
        res = run.result
        engine = {"engine": "dask", "dask_scheduler": run.scheduler, "dask_address": run.address,
                  "dask_workers": run.n_workers, "dask_blocks": run.n_blocks}
    else:
        res = eip(data.R, alpha=alpha, tol=tol)
    return MethodOutput(
        question_columns={"eip": res.difficulty, "eip_scaled": res.difficulty_scaled},
        model_columns={"eip": res.competency, "eip_scaled": res.competency_scaled},
        params={"alpha": res.alpha, "tol": res.tol},
        n_iter=res.n_iter,
        converged=res.converged,
        residual=res.residual,
        notes={
            "kept": int(res.kept.sum()),
            "all_solved": int(res.all_solved.sum()),
            "all_failed": int(res.all_failed.sum()),
            "dangling_models": int(res.dangling.sum()),
            **engine,
        },
        kept=res.kept,
    )


def _run_simple_rank(data: MethodInput) -> MethodOutput:
    return MethodOutput(question_columns={"simple_rank": simple_rank(data.R)}, model_columns={})


def _run_accuracy(data: MethodInput) -> MethodOutput:
    return MethodOutput(
        question_columns={"accuracy_difficulty": question_accuracy_difficulty(data.R)},
        model_columns={"accuracy": accuracy(data.R)},
    )


def _run_weighted_accuracy(data: MethodInput) -> MethodOutput:
    return MethodOutput(
        question_columns={},
        model_columns={"weighted_accuracy": weighted_accuracy(data.R, data.question_groups)},
        notes={"datasets": int(np.unique(data.question_groups).size)},
    )


def _dense(R: ResponseArray | FractionMatrix) -> ResponseArray:
    """``R`` as an ndarray: a fraction matrix as float64 with NaN (methods that are not ``compact``)."""
    return R.to_dense() if isinstance(R, FractionMatrix) else R


def _run_jml(key: str) -> Runner:
    fit = irt_1pl if key == "irt_1pl" else irt_2pl

    def run(data: MethodInput) -> MethodOutput:
        res = fit(_dense(data.R))  # the defaults of scoring.irt are the paper's settings (appendix H.4)
        questions = {key: res.difficulty}
        notes: dict[str, Any] = {
            "objective": float(res.objective),
            "message": res.message,
            "abilities_at_bound": int(res.ability_at_bound.sum()),
            "difficulties_at_bound": int(res.difficulty_at_bound.sum()),
        }
        if key == "irt_2pl":
            questions["irt_2pl_discrimination"] = res.discrimination
            notes["discriminations_at_bound"] = int(res.discrimination_at_bound.sum())
        return MethodOutput(
            question_columns=questions, model_columns={key: res.ability}, params=_keyword_defaults(fit),
            n_iter=res.n_iter, converged=res.converged, residual=_finite_or_none(res.projected_gradient), notes=notes,
        )

    return run


def _run_mml(key: str) -> Runner:
    fit = irt_1pl_mml if key == "irt_1pl_mml" else irt_2pl_mml

    def run(data: MethodInput) -> MethodOutput:
        res = fit(_dense(data.R))  # mirt's defaults: 61 nodes on [-6, 6], N(0, 1) ability prior
        questions = {key: res.difficulty, f"{key}_se": res.difficulty_se}
        notes: dict[str, Any] = {
            "marginal_log_likelihood": float(res.log_likelihood),
            "log_likelihood_change": float(res.log_likelihood_change),
            "difficulties_at_bound": int(res.difficulty_at_bound.sum()),
            "discriminations_at_bound": int(res.discrimination_at_bound.sum()),
        }
        if key == "irt_1pl_mml":
            notes["common_discrimination"] = float(res.discrimination[0])
            notes["common_discrimination_se"] = _finite_or_none(res.discrimination_se[0])
        else:
            questions["irt_2pl_mml_discrimination"] = res.discrimination
        return MethodOutput(
            question_columns=questions, model_columns={key: res.ability}, params=_keyword_defaults(fit),
            n_iter=res.n_iter, converged=res.converged, residual=float(res.parameter_change), notes=notes,
        )

    return run


#: Seeds MIRT is fitted with by default (``mirt_seeds``); also the most a run may use.
MIRT_SEEDS = 5


#: The per-seed MIRT difficulty columns (``irt_mirt_s0`` = seed ``mirt_seed``, ...).
MIRT_SEED_COLUMNS = tuple(f"irt_mirt_s{k}" for k in range(MIRT_SEEDS))


def pool_identical_questions(R: ResponseArray, values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Give questions with identical response vectors the mean of their ``values``.

    Identical means the same credit in every column and the same unobserved
    cells; ``values`` has shape (n_questions,).
    The MIRT likelihood cannot tell such questions apart; only its Monte
    Carlo noise does. Pooling makes them exactly equal, so every seed calls
    them a tie.
    """
    return _pool(_identical_question_groups(R), values)


def _identical_question_groups(R: ResponseArray) -> NDArray[np.intp]:
    """Group index per question: equal for identical response vectors (NaN = -1)."""
    R = np.asarray(R, dtype=np.float64)
    keys = np.where(np.isnan(R), -1.0, R)
    _, group = np.unique(keys, axis=0, return_inverse=True)
    groups: NDArray[np.intp] = group.reshape(-1)
    return groups


def _pool(group: NDArray[np.intp], values: NDArray[np.float64]) -> NDArray[np.float64]:
    sums = np.bincount(group, weights=values)
    counts = np.bincount(group)
    pooled: NDArray[np.float64] = (sums / counts)[group]
    return pooled


def _mirt_fits(R: ResponseArray, *, epochs: int, seeds: list[int]) -> list[Any]:
    """``irt_mirt(R, epochs=epochs, rng=seed)`` for every seed, in that order, on up to one thread per core.

    Each fit draws from its own generator, so the results are those of the
    fits run one after the other, bit for bit; numpy's array loops release
    the GIL, so several seeds run at once, one per core.
    BLAS stays at one thread for the whole pool (threadpoolctl's limit is
    process-wide: set once here, before the threads start, so that no fit
    restores another's setting).
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    from scoring._threads import one_blas_thread

    n_threads = min(len(seeds), os.cpu_count() or 1)
    if n_threads <= 1:
        return [irt_mirt(R, epochs=epochs, rng=seed) for seed in seeds]
    with one_blas_thread(), ThreadPoolExecutor(max_workers=n_threads) as pool:
        return list(pool.map(lambda seed: irt_mirt(R, epochs=epochs, rng=seed), seeds))


def _run_mirt(data: MethodInput) -> MethodOutput:
    epochs = int(data.params.get("mirt_epochs", 1000))
    seed = int(data.params.get("mirt_seed", 0))
    n_seeds = int(data.params.get("mirt_seeds", MIRT_SEEDS))
    if not 1 <= n_seeds <= MIRT_SEEDS:
        raise ValueError(ERR_MIRT_SEEDS.format(most=MIRT_SEEDS, value=n_seeds))
    # ``mirt_rng`` (a Generator) lets an analysis continue its own random stream: the
    # seeds' fits then draw from it one after the other.
    stream = data.params.get("mirt_rng")
    difficulties, abilities, elbos, converged = [], [], [], []
    R = _dense(data.R)
    groups = _identical_question_groups(R)  # the same for every seed: found once
    if isinstance(stream, np.random.Generator):  # one stream: the seeds' fits draw from it in turn
        fits = [irt_mirt(R, epochs=epochs, rng=stream) for _ in range(n_seeds)]
    else:
        first = seed if stream is None else int(stream)
        fits = _mirt_fits(R, epochs=epochs, seeds=[first + k for k in range(n_seeds)])
    for res in fits:
        difficulties.append(_pool(groups, res.difficulty))
        abilities.append(res.ability)
        window = max(1, len(res.elbo_trace) // 10)
        elbos.append(_finite_or_none(float(np.mean(res.elbo_trace[-window:]))))
        converged.append(bool(res.converged))
    n_questions = data.R.shape[0]
    per_seed = {c: difficulties[k] if k < n_seeds else np.full(n_questions, np.nan)
                for k, c in enumerate(MIRT_SEED_COLUMNS)}
    used = {key: value for key, value in _keyword_defaults(irt_mirt).items() if key != "rng"}
    used.update(epochs=epochs, seed=seed)
    if n_seeds > 1:
        used.update(seeds=n_seeds)
    defined = [e for e in elbos if e is not None]
    notes: dict[str, Any] = {"elbo_last_10pct_mean": float(np.mean(defined)) if defined else None}
    if n_seeds > 1:
        notes.update(elbo_last_10pct_mean_per_seed=[None if e is None else round(e, 1) for e in elbos],
                     seeds_converged=sum(converged))
    return MethodOutput(
        question_columns={"irt_mirt": np.mean(difficulties, axis=0), **per_seed},
        model_columns={"irt_mirt": np.mean(abilities, axis=0)}, params=used,
        n_iter=epochs, converged=all(converged), notes=notes,
    )


_JML_RESIDUAL = "projected gradient (max-norm)"


_MML_RESIDUAL = "largest change of a or b in the last EM iteration, logits"
