"""Model-pool section of the report (paper figures 6 and 8), read from a stored
pools analysis.

EIP per model pool (by size, by access, and the whole pool) is the stored
analysis ``AnalysisKind.POOLS`` (:func:`annotate.analyses.services.compute.pools`),
computed by the task worker or ``manage.py paper_report``. The report reads
the newest finished one of its scoring run's response set with the run's EIP
damping, and scores each pool's stored per-question difficulty against the
study's consensus; it never reruns EIP. Without a stored analysis the section
says so (``status`` "not_computed", "queued" or "running") and how to compute it.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from annotate.core import counted
from annotate.models import AnalysisKind, AnalysisRun, RunStatus, ScoringRun
from annotate.reports.selectors.alignment import REFERENCE_METHOD, StudyData, pools_analysis_latest, run_model_names
from annotate.reports.services._stats import agreement_of, correlation_of
from annotate.reports.services.model import Pool, PoolSection
from scoring import harder_of_pairs, method_agreement
from scoring.methods import get_method

DEFAULT_ALPHA = 0.85
SIZE_LABELS = ("small", "medium", "large")
SIZE_PREFIX = "size "
CORRELATION_SCOPE = "questions kept (not solved or failed by every model) by both this pool and the whole pool"
#: ``manage.py`` line that computes the stored analysis (formatted with the response set name).
COMMAND = "manage.py paper_report --response-set {name} --analyses pools --out <folder>"

STATUS_DONE = "done"
STATUS_NOT_COMPUTED = "not_computed"
REASON_NOT_COMPUTED = (
    "not computed yet: no finished model-pool analysis of response set {response_set} with EIP alpha {alpha:g}. "
    "Queue it from the report page (the task worker computes it){command}."
)
#: The command takes the default alpha and the newest loaded version of a response set name.
COMMAND_HINT = ", or run: {command} (it analyses the newest loaded version of that name)"
REASON_WAITING = "the model-pool analysis {run_id} of response set {response_set} is {status}; reload the page later"
NOTE_SUBSET = (
    "The stored analysis covers the whole response set ({models}, {questions}); "
    "scoring run {run_id} scored {n_run_models} of its models."
)
NOTE_OLD_ANALYSIS = (
    "Stored analysis {run_id} predates per-question difficulties, so no pool is scored against the consensus; "
    "compute it again."
)
NOTE_THRESHOLDS = "Size pools use the stored analysis's thresholds {stored} (the report asked for {asked})."


def run_alpha(run: ScoringRun) -> float:
    """The EIP damping factor the run used (``params["eip"]["alpha"]`` or
    ``params["alpha"]``), else the default 0.85."""
    params = run.params if isinstance(run.params, dict) else {}
    eip_params = params.get("eip") if isinstance(params.get("eip"), dict) else {}
    for value in (eip_params.get("alpha"), params.get("alpha")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1:
            return float(value)
    return DEFAULT_ALPHA


def _missing(run: ScoringRun, thresholds: Sequence[float]) -> PoolSection:
    alpha = run_alpha(run)
    waiting = pools_analysis_latest(response_set=run.response_set, alpha=alpha,
                                    statuses=(RunStatus.QUEUED, RunStatus.RUNNING))
    if waiting is not None:
        status = str(waiting.status)
        reason = REASON_WAITING.format(run_id=waiting.pk, response_set=run.response_set, status=status)
    else:
        status = STATUS_NOT_COMPUTED
        hint = COMMAND_HINT.format(command=COMMAND.format(name=run.response_set.name)) if alpha == DEFAULT_ALPHA else ""
        reason = REASON_NOT_COMPUTED.format(response_set=run.response_set, alpha=alpha, command=hint)
    return PoolSection(
        available=False, undefined_reason=reason, size_thresholds=tuple(float(x) for x in thresholds), alpha=alpha,
        reference="whole", correlation_scope=CORRELATION_SCOPE, unknown_size_models=(), unknown_access_models=(),
        pools=(), status=status, analysis_run=None if waiting is None else waiting.pk,
    )


def _pool(stored: dict, data: StudyData, cons: np.ndarray, question_ids: np.ndarray | None) -> Pool:
    name, kind = stored["name"], stored["kind"]
    if kind == "reference":
        kind = "whole"
    elif name.startswith(SIZE_PREFIX):
        name, kind = name[len(SIZE_PREFIX):], "size"
    values = stored.get("difficulty_scaled")
    consensus = None
    if values is not None and question_ids is not None:
        d = data.align(question_ids, np.array([np.nan if v is None else v for v in values], dtype=np.float64))
        tol = get_method(REFERENCE_METHOD).tie_tolerance  # each pool's difficulty is EIP's
        consensus = agreement_of(method_agreement(harder_of_pairs(d, data.pair_index, tol=tol), cons))
    return Pool(
        name=name, kind=kind, n_models=stored["n_models"], models=tuple(stored["models"]),
        n_observed=stored["n_observed"], n_all_solved=stored["n_all_solved"], n_all_failed=stored["n_all_failed"],
        share_all_solved=stored["share_all_solved"], share_all_failed=stored["share_all_failed"],
        share_dead=stored["share_dead"],
        correlations={m: correlation_of(c) for m, c in stored["correlations"].items()},
        consensus=consensus, undefined_reason=stored["undefined_reason"],
    )


def pool_section(data: StudyData, cons: np.ndarray, *, size_thresholds: Sequence[float]) -> PoolSection:
    """EIP per model pool from the stored pools analysis: dead-node shares,
    correlation with the whole pool, and agreement and kappa of each pool's
    difficulty with the consensus on the study's pairs.

    Parameters
    ----------
    data : StudyData
    cons : ndarray of int8, shape (n_pairs,)
        Consensus verdict per study pair (``UNDEFINED`` = none).
    size_thresholds : sequence of float
        The cut points the report asks for (billions of parameters); the size
        pools are those of the stored analysis, and a note says when they differ.

    Returns
    -------
    PoolSection
        ``status`` "done" with the pools (whole, size pools, access pools),
        or ``available`` false with the reason and no pools.
    """
    run = data.run
    analysis = pools_analysis_latest(response_set=run.response_set, alpha=run_alpha(run))
    if analysis is None:
        return _missing(run, size_thresholds)
    result = analysis.result
    question_ids = np.asarray(result["question_ids"], dtype=np.int64) if "question_ids" in result else None
    stored = [_pool(p, data, cons, question_ids) for p in result["pools"]]
    order = {"whole": 0, "size": 1, "access": 2}
    pools = tuple(sorted(stored, key=lambda p: order.get(p.kind, 3)))  # stable: keeps the stored order within a kind
    notes = []
    whole = next((p for p in pools if p.kind == "whole"), None)
    run_models = run_model_names(run=run)
    if whole is not None and run_models and set(run_models) != set(whole.models):
        notes.append(NOTE_SUBSET.format(models=counted(whole.n_models, "model"),
                                        questions=counted(result["n_questions"], "question"), run_id=run.pk,
                                        n_run_models=len(set(run_models) & set(whole.models))))
    if question_ids is None:
        notes.append(NOTE_OLD_ANALYSIS.format(run_id=analysis.pk))
    stored_thresholds = tuple(float(x) for x in result.get("size_thresholds_b", ()))
    if stored_thresholds != tuple(float(x) for x in size_thresholds):
        notes.append(NOTE_THRESHOLDS.format(stored=list(stored_thresholds), asked=[float(x) for x in size_thresholds]))
    return PoolSection(
        available=True, undefined_reason=None, size_thresholds=stored_thresholds,
        alpha=float(analysis.params["alpha"]), reference="whole", correlation_scope=CORRELATION_SCOPE,
        unknown_size_models=tuple(result.get("unknown_size", ())),
        unknown_access_models=tuple(result.get("unknown_access", ())),
        pools=pools, status=STATUS_DONE, analysis_run=analysis.pk,
        computed_at=None if analysis.finished_at is None else analysis.finished_at.isoformat(),
        note=" ".join(notes) or None, n_questions=int(result["n_questions"]),
    )


def report_pools_start(*, run: ScoringRun, user=None) -> tuple[AnalysisRun, bool]:
    """Queue the stored pools analysis the report of ``run`` reads (response set
    of ``run``, its EIP alpha), unless one is already queued or running.

    Returns
    -------
    (AnalysisRun, bool)
        The run and whether this call created it (see
        :func:`annotate.analyses.services.runs.analysis_run_start`).
    """
    # imported here: the analyses package renders files with report_files, which imports this package
    from annotate.analyses import analysis_run_start

    return analysis_run_start(kind=AnalysisKind.POOLS, response_set=run.response_set,
                              params={"alpha": run_alpha(run)}, user=user)


def check_thresholds(value) -> tuple[float, ...]:
    """``size_thresholds`` as a tuple of strictly increasing positive floats, or ValueError."""
    try:
        t = tuple(float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(f"size_thresholds must be a sequence of numbers; got {value!r}") from None
    if not t or any(not math.isfinite(x) or x <= 0 for x in t) or any(b <= a for a, b in itertools.pairwise(t)):
        raise ValueError(f"size_thresholds must be strictly increasing positive numbers; got {value!r}")
    return t
