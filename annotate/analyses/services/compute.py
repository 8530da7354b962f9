"""Each analysis as a function of stored data: call :mod:`scoring.analyses`
and turn its frozen dataclasses into a JSON-able dict.

No statistic is computed here; every number comes from the pure functions
(``scoring.analyses``, ``scoring.eip``, ``scoring.baselines``). What is added
is bookkeeping: names instead of column indices, and ``None`` (with a reason
where the pure function gives one) instead of NaN.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict

import numpy as np

from annotate.analyses.selectors import AnalysisData, group_labels
from annotate.analyses.services.human_labels import human_labels
from annotate.analyses.services.params import SCALING_GRIDS
from annotate.models import AnalysisKind
from scoring.analyses import (
    Correlation,
    Summary,
    access_pools,
    accuracy_by_difficulty_tertile,
    case_study_rankings,
    case_study_recovery,
    difficulty_profiles,
    eip_scaling,
    eip_vs_accuracy,
    leave_one_dataset_out,
    leave_one_out_models,
    model_removal_robustness,
    pool_analysis,
    simulate_case_study,
    size_pools,
    time_methods,
)
from scoring.analyses.case_study import GROUND_TRUTH, GROUP_SIZES, PAIRS, SOLVE_COUNTS
from scoring.baselines import accuracy
from scoring.eip import eip

Progress = Callable[[float, str], None]

IRT_METHODS = ("irt_1pl", "irt_2pl", "irt_mirt")
WINDOWS = (1, 3, 5, 10)
SIZE_THRESHOLDS_B = (10, 70)
SKIPPED_IRT = "not run (the IRT fits were switched off for this analysis)"


# --- JSON helpers ----------------------------------------------------------------


def plain(value):
    """``value`` with numpy scalars/arrays as Python numbers/lists and every
    non-finite float as None (the result is stored as strict JSON)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return value


def corr(c: Correlation) -> dict:
    return {"method": c.method, "value": c.value, "p_value": c.p_value, "n": c.n,
            "undefined_reason": c.undefined_reason}


def summary(s: Summary) -> dict:
    return asdict(s)


def pair_key(pair: tuple[str, str]) -> str:
    return f"{pair[0]}>{pair[1]}"


def _shape(data: AnalysisData) -> dict:
    return {"response_set": data.response_set, "n_questions": int(data.shape[0]), "n_models": int(data.shape[1])}


# --- the analyses ----------------------------------------------------------------


def efficiency(data: AnalysisData, params: dict, progress: Progress) -> dict:
    """Table 3: EIP (``repeats`` runs) and, unless ``skip_irt``, 1PL, 2PL and
    MIRT (one run each) on the response set."""
    methods = ("eip",) if params["skip_irt"] else ("eip", *IRT_METHODS)
    kwargs = {"eip": {"alpha": params["alpha"]}, "irt_mirt": {"epochs": params["mirt_epochs"], "rng": params["seed"]}}
    rows = []
    for i, method in enumerate(methods):
        progress(i / len(methods), f"timing {method}")
        repeats = params["repeats"] if method == "eip" else 1
        kw = {method: kwargs[method]} if method in kwargs else None
        t = time_methods(data.R, methods=(method,), repeats=repeats, method_kwargs=kw).timings[method]
        rows.append({"method": method, "median_seconds": t.median_seconds, "seconds": list(t.seconds),
                     "n_iter": t.n_iter, "converged": t.converged, "error": t.error, "skipped": None})
    if params["skip_irt"]:
        rows += [{"method": m, "median_seconds": None, "seconds": [], "n_iter": None, "converged": None,
                  "error": None, "skipped": SKIPPED_IRT} for m in IRT_METHODS]
    return {**_shape(data), "methods": rows}


def scaling(data: None, params: dict, progress: Progress) -> dict:
    """Table 4: EIP on synthetic matrices of the chosen grid, and the log-log
    slope of the time per iteration against the number of cells (1 = linear)."""
    sizes = SCALING_GRIDS[params["grid"]]
    done = []

    def step(row) -> None:
        done.append(row)
        nxt = f"; next {sizes[len(done)][0]:,} x {sizes[len(done)][1]:,}" if len(done) < len(sizes) else ""
        progress(len(done) / len(sizes), f"{row.n_questions:,} x {row.n_models:,} done{nxt}")

    progress(0.0, f"generating {sizes[0][0]:,} x {sizes[0][1]:,}")
    res = eip_scaling(sizes, density_model=params["density_model"], rng=params["seed"], repeats=params["repeats"],
                      alpha=params["alpha"], progress=step)
    rows = [{**asdict(r), "seconds_per_iter": r.median_seconds / r.n_iter} for r in res.rows]
    cells = np.array([r["n_cells"] for r in rows], dtype=float)
    per_iter = np.array([r["seconds_per_iter"] for r in rows], dtype=float)
    slope = None
    if np.unique(cells).size >= 2 and np.all(per_iter > 0):
        slope = float(np.polyfit(np.log(cells), np.log(per_iter), 1)[0])
    return {"grid": params["grid"], "density_model": res.density_model, "repeats": res.repeats, "rows": rows,
            "loglog_slope": slope}


def _removal_rows(summaries) -> list[dict]:
    return [{
        "k": s.k, "n_trials": len(s.trials), "n_failed": sum(t.error is not None for t in s.trials),
        "difficulty_rho": summary(s.difficulty_rho), "competency_rho": summary(s.competency_rho),
        "filter_changes": summary(s.filter_changes), "seconds": summary(s.seconds),
        "difficulty_rho_values": [t.difficulty_rho.value for t in s.trials],
        "competency_rho_values": [t.competency_rho.value for t in s.trials],
    } for s in summaries]


def model_robustness(data: AnalysisData, params: dict, progress: Progress) -> dict:
    """Table 5 / figure 10 (remove k = 1..k_max random models, ``trials`` each)
    and table 9's leave-one-out."""
    gen = np.random.default_rng(params["seed"])  # one generator across k: the same draws as a single call
    ks = range(1, params["k_max"] + 1)
    summaries, skipped, last = [], [], None
    for i, k in enumerate(ks):
        progress(i / (len(ks) + 1), f"removing {k} model(s), {params['trials']} trials")
        last = model_removal_robustness(data.R, ks=[k], n_trials=params["trials"], rng=gen, alpha=params["alpha"])
        summaries += last.summaries
        skipped += [{"k": kk, "reason": reason} for kk, reason in last.skipped]
    progress(len(ks) / (len(ks) + 1), "leave one model out")
    if data.shape[1] >= 3:
        loo = leave_one_out_models(data.R, alpha=params["alpha"])
        s = loo.summaries[0]
        leave_one_out = {
            "difficulty_rho": summary(s.difficulty_rho), "competency_rho": summary(s.competency_rho),
            "filter_changes": summary(s.filter_changes), "seconds": summary(s.seconds), "undefined_reason": None,
            "trials": [{"model": data.model_names[t.removed[0]], "difficulty_rho": t.difficulty_rho.value,
                        "competency_rho": t.competency_rho.value, "n_filter_changes": t.n_filter_changes,
                        "error": t.error} for t in s.trials],
        }
    else:
        leave_one_out = {"undefined_reason": f"leave-one-out needs at least 3 models; the set has {data.shape[1]}",
                         "trials": []}
    return {**_shape(data), "n_kept_full": last.n_kept_full, "full_seconds": last.full_seconds,
            "trials": params["trials"], "removal": _removal_rows(summaries), "skipped": skipped,
            "leave_one_out": leave_one_out}


def dataset_robustness(data: AnalysisData, params: dict, progress: Progress) -> dict:
    """Table 10: leave each group (dataset, subject or metadata value) out."""
    labels = group_labels(data=data, group_by=params["group_by"])
    progress(0.0, f"leaving out each {params['group_by']}")
    res = leave_one_dataset_out(data.R, labels, alpha=params["alpha"])
    removals = [{"label": str(r.dataset), "n_questions_removed": r.n_questions_removed,
                 "competency_rho": corr(r.competency_rho), "difficulty_rho": corr(r.difficulty_rho), "error": r.error}
                for r in res.removals]
    return {**_shape(data), "group_by": params["group_by"], "n_groups": len(removals), "removals": removals,
            "competency_rho": summary(res.competency_rho)}


def case_study(data: None, params: dict, progress: Progress) -> dict:
    """Tables 6 and 7 on one draw (``seed``), then recovery over ``n_seeds`` draws."""
    skip = params["skip_irt"]
    methods = ("accuracy", "weighted_accuracy", "eip") if skip else None
    common = {"include_mirt": not skip, "mirt_epochs": params["mirt_epochs"], "alpha": params["alpha"],
              "methods": methods}
    progress(0.0, "single draw")
    draw = simulate_case_study(params["seed"])
    single = case_study_rankings(draw.R, draw.groups, draw.datasets, rng=params["seed"], **common)
    progress(0.01, f"recovery over {params['n_seeds']} seeds")
    recovery = case_study_recovery(
        params["n_seeds"], rng=params["seed"], **common,
        progress=lambda i, n: progress(0.01 + 0.99 * i / n, f"seed {i} of {n}"),
    )
    return {
        "seed": params["seed"], "ground_truth": list(GROUND_TRUTH), "group_sizes": dict(GROUP_SIZES),
        "solve_counts": {m: list(c) for m, c in SOLVE_COUNTS.items()},
        "mirt_epochs": single.mirt_epochs, "skipped": [*IRT_METHODS] if skip else [],
        "single": {
            "methods": [{
                "method": r.method, "scores": r.scores,
                "ranking": [list(g) for g in r.ranking], "matches_ground_truth": r.matches_ground_truth,
                "pairs": {pair_key(p): ok for p, ok in r.pairs.items()}, "kendall": corr(r.kendall),
                "converged": r.converged, "seconds": r.seconds, "error": r.error,
            } for r in single.methods.values()],
            "difficulty_by_group": [asdict(g) for g in single.difficulty_by_group.values()],
        },
        "recovery": {
            "n_seeds": len(recovery.seeds), "seconds": recovery.seconds, "seeds": list(recovery.seeds),
            "methods": [{
                "method": r.method, "n_seeds": r.n_seeds, "n_failed": r.n_failed, "n_not_converged": r.n_not_converged,
                "share_full_order": r.share_full_order,
                "share_pairs": {pair_key(p): v for p, v in r.share_pairs.items()},
                "share_tied_pairs": {pair_key(p): v for p, v in r.share_tied_pairs.items()},
                "kendall": summary(r.kendall), "seconds": r.seconds,
            } for r in recovery.methods.values()],
        },
        "pairs": [pair_key(p) for p in PAIRS],
    }


def rank_changes(data: AnalysisData, params: dict, progress: Progress) -> dict:
    """Section 3.2 and appendix G: EIP competency against accuracy, rank
    changes, window displacement, and accuracy per EIP-difficulty tertile by
    model family (figure 5)."""
    progress(0.0, "EIP and accuracy")
    res = eip(data.R, alpha=params["alpha"])
    acc = accuracy(data.R)
    names, families = data.model_names, data.families
    cmp = eip_vs_accuracy(res.competency, acc, windows=WINDOWS, families=families, model_names=names)
    progress(0.5, "accuracy per difficulty tertile")
    tert = accuracy_by_difficulty_tertile(data.R, res.difficulty, families=families, model_names=names)
    order = np.lexsort((np.arange(len(names)), cmp.accuracy_rank))
    models = [{
        "name": names[j], "family": families[j], "accuracy": acc[j], "competency": res.competency[j],
        "competency_scaled": res.competency_scaled[j], "accuracy_rank": cmp.accuracy_rank[j],
        "eip_rank": cmp.eip_rank[j], "rank_change": cmp.rank_change[j],
        "tertile_accuracy": dict(zip(tert.labels, tert.accuracy[j])),
        "tertile_observed": dict(zip(tert.labels, tert.n_observed[j])),
    } for j in order]
    windows = [{"window": w.window, "blocks": [{
        "first": b.first, "last": b.last, "models": [names[i] for i in b.models],
        "mean_displacement": b.mean_displacement, "max_displacement": b.max_displacement, "kendall": corr(b.kendall),
    } for b in w.blocks]} for w in cmp.windows]
    fams = [{
        "family": str(f.family), "models": [names[i] for i in f.models], "rank_change": list(f.rank_change),
        "mean_abs_change": f.mean_abs_change,
        "tertile_accuracy": {lab: [tert.accuracy[i, t] for i in f.models] for t, lab in enumerate(tert.labels)},
    } for f in (cmp.families or {}).values()]
    return plain({
        **_shape(data), "kendall": corr(cmp.kendall), "n_concordant": cmp.n_concordant,
        "n_discordant": cmp.n_discordant, "models": models,
        "abs_change_counts": [{"abs_change": k, "n_models": v} for k, v in cmp.abs_change_counts.items()],
        "windows": windows, "families": fams,
        "tertiles": {"labels": list(tert.labels), "thresholds": list(tert.thresholds),
                     "n_questions": dict(zip(tert.labels, tert.n_questions)), "n_all_solved": tert.n_all_solved,
                     "n_all_failed": tert.n_all_failed},
    })


def _profile(p) -> dict:
    return {"label": str(p.label), "n": p.n, "n_missing": p.n_missing, "counts": p.counts, "mean": p.mean,
            "median": p.median, "q1": p.q1, "q3": p.q3,
            "tertile_shares": None if p.tertile_shares is None else list(p.tertile_shares),
            "share_at_0": p.share_at_0, "share_at_100": p.share_at_100}


def profiles(data: AnalysisData, params: dict, progress: Progress) -> dict:
    """Figure 9: EIP difficulty (0-100) per group."""
    progress(0.0, "EIP")
    res = eip(data.R, alpha=params["alpha"])
    labels = group_labels(data=data, group_by=params["group_by"])
    prof = difficulty_profiles(res.difficulty_scaled, labels, bins=params["bins"])
    return plain({**_shape(data), "group_by": params["group_by"], "bin_edges": prof.bin_edges,
                  "groups": [_profile(p) for p in prof.groups.values()], "overall": _profile(prof.overall)})


def pools(data: AnalysisData, params: dict, progress: Progress) -> dict:
    """Figure 6 (open-weight and proprietary pools against the whole pool) and,
    from the same call, the size pools of figure 8 (< 10B, 10-70B, >= 70B).

    Each pool keeps its EIP ``difficulty_scaled`` (0-100, None where NaN; None
    for an undefined pool) in the order of the top-level ``question_ids``
    (ascending ``Question.id``), so the alignment report can score every pool
    against a study's consensus without rerunning EIP."""
    access = access_pools(data.access)
    sizes = size_pools(data.parameters_b, thresholds=SIZE_THRESHOLDS_B)
    masks = {**access.masks, **{f"size {k}": v for k, v in sizes.masks.items()}}
    progress(0.0, f"EIP on {len(masks) + 1} pools")
    res = pool_analysis(data.R, masks, reference="whole", alpha=params["alpha"],
                        include_excluded=params["include_excluded"])
    names = data.model_names
    out = [{
        "name": p.name, "kind": "reference" if p.name == res.reference else ("size" if p.name.startswith("size ")
                                                                             else "access"),
        "n_models": p.n_models, "models": [names[i] for i in p.models], "n_observed": p.n_observed,
        "n_all_solved": p.n_all_solved, "n_all_failed": p.n_all_failed, "share_all_solved": p.share_all_solved,
        "share_all_failed": p.share_all_failed, "share_dead": p.share_dead,
        "correlations": {m: corr(c) for m, c in p.correlations.items()}, "undefined_reason": p.undefined_reason,
        "difficulty_scaled": None if p.eip is None else p.eip.difficulty_scaled,
    } for p in res.pools.values()]
    return plain({**_shape(data), "reference": res.reference, "include_excluded": res.include_excluded,
                  "question_ids": data.question_ids,
                  "size_thresholds_b": list(SIZE_THRESHOLDS_B), "pools": out,
                  "unknown_access": [names[i] for i in np.flatnonzero(access.unknown)],
                  "unknown_size": [names[i] for i in np.flatnonzero(sizes.unknown)]})


COMPUTE: dict[str, Callable[[AnalysisData | None, dict, Progress], dict]] = {
    AnalysisKind.EFFICIENCY: efficiency,
    AnalysisKind.SCALING: scaling,
    AnalysisKind.MODEL_ROBUSTNESS: model_robustness,
    AnalysisKind.DATASET_ROBUSTNESS: dataset_robustness,
    AnalysisKind.CASE_STUDY: case_study,
    AnalysisKind.RANK_CHANGES: rank_changes,
    AnalysisKind.PROFILES: profiles,
    AnalysisKind.POOLS: pools,
    AnalysisKind.HUMAN_LABELS: human_labels,
}
