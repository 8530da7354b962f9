"""Model-pool analysis of the report (paper figures 6 and 8).

EIP is rerun on sub-pools of the run's models (by size, by access, and the
whole pool) with :func:`scoring.analyses.pool_analysis`; each pool's difficulty
is then scored against the human consensus on the study's pairs.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from annotate.models import LanguageModel, ModelAccess, ScoringRun
from annotate.selectors.matrix import response_matrix
from annotate.services.alignment._data import StudyData
from annotate.services.alignment._json import agreement_dict, correlation_dict
from scoring import harder_of_pairs, method_agreement
from scoring.analyses import access_pools, pool_analysis, size_pools

DEFAULT_ALPHA = 0.85
SIZE_LABELS = ("small", "medium", "large")
CORRELATION_SCOPE = "questions kept (not solved or failed by every model) by both this pool and the whole pool"


def size_labels(thresholds: Sequence[float]) -> tuple[str, ...]:
    """``small/medium/large`` for two cut points, else names by range ("<10B", "10-70B", ">=70B")."""
    if len(thresholds) == 2:
        return SIZE_LABELS
    t = [f"{x:g}" for x in thresholds]
    return (f"<{t[0]}B", *(f"{a}-{b}B" for a, b in zip(t, t[1:])), f">={t[-1]}B")


def run_alpha(run: ScoringRun) -> float:
    """The EIP damping factor the run used (``params["eip"]["alpha"]`` or
    ``params["alpha"]``), else the default 0.85."""
    params = run.params if isinstance(run.params, dict) else {}
    eip_params = params.get("eip") if isinstance(params.get("eip"), dict) else {}
    for value in (eip_params.get("alpha"), params.get("alpha")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1:
            return float(value)
    return DEFAULT_ALPHA


def _undefined(reason: str, thresholds: Sequence[float]) -> dict:
    return {"available": False, "undefined_reason": reason, "size_thresholds": list(thresholds), "alpha": None,
            "reference": "whole", "correlation_scope": CORRELATION_SCOPE, "unknown_size_models": [],
            "unknown_access_models": [], "pools": []}


def pool_section(data: StudyData, cons: np.ndarray, *, size_thresholds: Sequence[float]) -> dict:
    """EIP per model pool: dead-node shares, correlation with the whole pool,
    and agreement and kappa with the consensus on the study's pairs.

    Parameters
    ----------
    data : StudyData
    cons : ndarray of int8, shape (n_pairs,)
        Consensus verdict per study pair (``UNDEFINED`` = none).
    size_thresholds : sequence of float
        Cut points in billions of parameters (see :func:`scoring.analyses.size_pools`).

    Returns
    -------
    dict
        The report's ``pools`` section (see ``annotate/report_schema.json``).
    """
    run = data.run
    model_ids = list(run.models_used.values_list("pk", flat=True)) or None
    dataset_ids = list(run.datasets_used.values_list("pk", flat=True)) or None
    try:
        matrix = response_matrix(response_set=run.response_set, model_ids=model_ids, dataset_ids=dataset_ids)
    except ValueError as exc:
        return _undefined(f"no response matrix for run {run.pk}: {exc}", size_thresholds)
    info = {pk: (name, size, access) for pk, name, size, access in LanguageModel.objects.filter(
        pk__in=matrix.model_ids.tolist()).values_list("pk", "name", "parameters_b", "access")}
    names = [info[int(pk)][0] for pk in matrix.model_ids]
    sizes = size_pools([info[int(pk)][1] for pk in matrix.model_ids], thresholds=size_thresholds,
                       labels=size_labels(size_thresholds))
    access = access_pools([None if info[int(pk)][2] == ModelAccess.UNKNOWN else info[int(pk)][2]
                           for pk in matrix.model_ids])
    alpha = run_alpha(run)
    analysis = pool_analysis(matrix.R, {**sizes.masks, **access.masks}, alpha=alpha)
    kinds = {**{k: "size" for k in sizes.masks}, **{k: "access" for k in access.masks}, "whole": "whole"}
    pools = []
    for name, res in analysis.pools.items():
        if res.eip is None:
            agreement = None
        else:
            d = data.align(matrix.question_ids, res.eip.difficulty_scaled)
            agreement = agreement_dict(method_agreement(harder_of_pairs(d, data.pair_index), cons))
        pools.append({
            "name": name, "kind": kinds[name], "n_models": res.n_models, "models": [names[i] for i in res.models],
            "n_observed": res.n_observed, "n_all_solved": res.n_all_solved, "n_all_failed": res.n_all_failed,
            "share_all_solved": res.share_all_solved, "share_all_failed": res.share_all_failed,
            "share_dead": res.share_dead,
            "correlations": {k: correlation_dict(c) for k, c in res.correlations.items()},
            "consensus": agreement, "undefined_reason": res.undefined_reason,
        })
    return {
        "available": True, "undefined_reason": None, "size_thresholds": [float(x) for x in size_thresholds],
        "alpha": alpha, "reference": analysis.reference, "correlation_scope": CORRELATION_SCOPE,
        "n_questions": int(matrix.R.shape[0]),
        "unknown_size_models": [n for n, u in zip(names, sizes.unknown) if u],
        "unknown_access_models": [n for n, u in zip(names, access.unknown) if u],
        "pools": pools,
    }


def check_thresholds(value) -> tuple[float, ...]:
    """``size_thresholds`` as a tuple of strictly increasing positive floats, or ValueError."""
    try:
        t = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(f"size_thresholds must be a sequence of numbers; got {value!r}") from None
    if not t or any(not math.isfinite(x) or x <= 0 for x in t) or any(b <= a for a, b in zip(t, t[1:])):
        raise ValueError(f"size_thresholds must be strictly increasing positive numbers; got {value!r}")
    return t
