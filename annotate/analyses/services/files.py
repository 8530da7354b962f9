"""An analysis result as files: tables (one tidy CSV each, a codebook, a zip
of them), the result (JSON), a plot (PNG and SVG) and headline sentences that
set the numbers beside the paper's.

Tables are tidy (:mod:`annotate.core.downloads`): one table per CSV, one header
row of ``snake_case`` names, blank = missing, no title or note lines inside;
titles, notes, units and the run's parameters go to ``codebook.md``. Plots use
the matplotlib ``Figure`` API only, safe in a web request.
"""
from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from annotate.analyses.services import human_labels
from annotate.core import (
    Column,
    TidyTable,
    codebook_markdown,
    counted,
    csv_bytes,
    difficulty_profile_figure,
    kind_of,
    tidy_frame,
    zip_bytes,
)
from annotate.models import AnalysisKind
from scoring.methods import get_method, methods

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_FORMATS = ("png", "svg")
ERR_FORMAT = "fmt must be one of {formats}; got {value!r}"
ERR_TABLE = "analysis {kind!r} has no table {table!r}; its tables: {tables}"
#: The paper's figures quoted beside ours (sections 3.2-3.5, 4, appendices E, G).
PAPER = {
    "eip_seconds": 0.00597, "eip_shape": "35,550 x 30", "eip_iterations": 9,
    "loo_difficulty_rho": "0.9978 ± 0.0024", "k5_difficulty_rho": "0.9863 ± 0.0076",
    "k15_difficulty_rho": 0.9382, "k1_competency_rho": "0.9997 (SD 0.0002)", "k15_competency_rho": "0.9934 (SD 0.0069)",
    "k5_filter_changes": "mean 217.9, max 307 of 35,550", "dataset_rho": "0.9839 ± 0.0162",
    "kendall_tau": 0.8492, "unchanged_share": "20% (6 of 30 models)",
    "window10": "1-10: mean 1.0, max 2.0; 11-20: mean 1.4, max 3.0; 21-30: mean 2.4, max 4.0",
    "open_weight": "Spearman 0.96, Pearson 0.94, Kendall 0.85",
    "proprietary": "Spearman 0.78, Pearson 0.84, Kendall 0.64",
}


@dataclass(frozen=True)
class Table:
    """A titled table: ``rows`` hold raw values (numbers, str, bool, None).

    The page shows ``header`` and ``rows``; the download is :meth:`tidy`
    (``snake_case`` names of ``header``, ``notes`` and ``units`` in the
    codebook).
    """

    key: str
    title: str
    header: tuple[str, ...]
    rows: list[list] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    units: Mapping[str, str] = field(default_factory=dict)  # header -> units or scale
    #: header -> {stored value -> page text}: e.g. method keys shown as their registry labels;
    #: the download keeps the stored value and adds a ``<header> label`` column.
    display: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def text_rows(self) -> list[list[str]]:
        """Rows formatted for a page: floats to 4 decimals, None as "–", coded values as their labels."""
        shown = [self.display.get(h, {}) for h in self.header]
        return [[labels.get(v, fmt(v)) if isinstance(v, str) else fmt(v) for v, labels in zip(row, shown)]
                for row in self.rows]

    def tidy(self) -> TidyTable:
        """The table as a tidy frame with one codebook entry per column.

        A coded column (one in ``display``, e.g. method keys) keeps its stored
        values and is followed by ``<column> label``, the text the page shows.
        """
        import pandas as pd
        header: list[str] = []
        units = dict(self.units)
        for h in self.header:
            header.append(h)
            if h in self.display:
                header.append(f"{h} label")
                units[f"{h} label"] = f"display label of {h}"
        rows = []
        for row in self.rows:
            out = []
            for h, value in zip(self.header, row):
                out.append(value)
                if h in self.display:
                    out.append(self.display[h].get(value, value) if isinstance(value, str) else value)
            rows.append(out)
        frame = tidy_frame(pd.DataFrame.from_records(rows, columns=header))
        columns = tuple(Column(name, kind_of(frame[name]), h, units.get(h, ""))
                        for name, h in zip(frame.columns, header))
        return TidyTable(self.key, self.title, frame, columns, self.notes)


def fmt(value, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "–"
        if value != 0 and (abs(value) < 10 ** -digits or abs(value) >= 1e7):
            return f"{value:.{digits - 1}e}"
        return f"{value:.{digits}f}"
    return str(value)


RHO = "Spearman rank correlation, in [-1, 1]"


def method_label(key: str) -> str:
    """A method's display label from the registry (the key itself for a method no longer registered)."""
    try:
        return get_method(key).label
    except KeyError:
        return key


def _method_labels() -> dict[str, dict[str, str]]:
    """``Table.display`` for a "method" column holding registry keys."""
    return {"method": {m.key: m.label for m in methods()}}
SHARE = "fraction, in [0, 1]"
SECONDS = "seconds (wall time)"


def _v(c: dict | None):
    """A stored correlation's value (None when undefined)."""
    return None if c is None else c["value"]


def _pm(s: dict, digits: int = 4) -> str:
    if s["mean"] is None:
        return "undefined"
    return f"{s['mean']:.{digits}f}" + ("" if s["std"] is None else f" ± {s['std']:.{digits}f}")


def _undefined_notes(items: Sequence[tuple[str, dict]]) -> tuple[str, ...]:
    return tuple(f"{label}: undefined ({c['undefined_reason']})" for label, c in items
                 if c is not None and c["value"] is None)


# --- efficiency ----------------------------------------------------------------------


def _efficiency_tables(r: dict) -> list[Table]:
    rows = [[m["method"], m["median_seconds"], len(m["seconds"]), m["n_iter"], m["converged"],
             m["skipped"] or m["error"]] for m in r["methods"]]
    return [Table("timing", f"Time to converge on {r['n_questions']:,} x {r['n_models']} (table 3)",
                  ("method", "median seconds", "runs", "iterations", "converged", "note"), rows,
                  units={"median seconds": SECONDS}, display=_method_labels())]


def _efficiency_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(5.5, 3.2), layout="constrained")
    ax = fig.add_subplot()
    methods = [m for m in r["methods"] if m["median_seconds"] is not None]
    ax.barh([method_label(m["method"]) for m in methods], [m["median_seconds"] for m in methods], color="#2b6cb0")
    ax.set_xscale("log")
    ax.set_xlabel("median wall time (s, log scale)")
    ax.set_title(f"Time to converge, {counted(r['n_questions'], 'question')} x {counted(r['n_models'], 'model')}",
                 fontsize=10)
    return fig


def _efficiency_headlines(r: dict) -> list[str]:
    out = []
    for m in r["methods"]:
        if m["skipped"]:
            out.append(f"{method_label(m['method'])}: {m['skipped']}.")
        elif m["median_seconds"] is None:
            out.append(f"{method_label(m['method'])}: failed ({m['error']}).")
        else:
            converged = "converged" if m["converged"] else "did not converge"
            out.append(f"{method_label(m['method'])}: {m['median_seconds']:.4g} s, {m['n_iter']} iterations, "
                       f"{converged}.")
    out.append(f"Paper (table 3): EIP {PAPER['eip_seconds']} s on {PAPER['eip_shape']} (Intel i7), "
               "faster than every IRT baseline.")
    return out


# --- scaling -------------------------------------------------------------------------


def _scaling_tables(r: dict) -> list[Table]:
    rows = [[x["n_questions"], x["n_models"], x["n_cells"], x["density"], x["median_seconds"], x["n_iter"],
             x["seconds_per_iter"], x["seconds_per_iter_per_mcell"], x["generation_seconds"]] for x in r["rows"]]
    return [Table("scaling", f"EIP on synthetic matrices ({r['density_model']}, grid {r['grid']}; table 4)",
                  ("questions", "models", "cells", "density", "median seconds", "iterations", "seconds per iteration",
                   "seconds per iteration per million cells", "generation seconds"), rows,
                  (f"log-log slope of seconds per iteration against cells: {fmt(r['loglog_slope'], 3)} "
                   "(1 = linear)",),
                  units={"density": SHARE, "median seconds": SECONDS, "seconds per iteration": SECONDS,
                         "seconds per iteration per million cells": SECONDS, "generation seconds": SECONDS})]


def _scaling_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(5.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    cells = np.array([x["n_cells"] for x in r["rows"]], dtype=float)
    per_iter = np.array([x["seconds_per_iter"] for x in r["rows"]], dtype=float)
    ax.loglog(cells, per_iter, "o", color="#2b6cb0", label="measured")
    if cells.size:
        ref = np.array([cells.min(), cells.max()])
        ax.loglog(ref, per_iter[np.argmin(cells)] * ref / cells.min(), "--", color="#a0aec0", label="linear")
    ax.set_xlabel("cells (questions x models)")
    ax.set_ylabel("seconds per iteration")
    ax.set_title("EIP time per iteration against matrix size", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def _scaling_headlines(r: dict) -> list[str]:
    if not r["rows"]:
        return ["No size was run."]
    iters = sorted({x["n_iter"] for x in r["rows"]})
    per = [x["seconds_per_iter_per_mcell"] for x in r["rows"]]
    big = max(r["rows"], key=lambda x: x["n_cells"])
    return [
        f"Iterations: {', '.join(map(str, iters))} over {len(r['rows'])} sizes up to "
        f"{big['n_questions']:,} x {big['n_models']:,} ({big['median_seconds']:.3g} s).",
        f"Seconds per iteration per million cells: {min(per):.3g} to {max(per):.3g}; log-log slope "
        f"{fmt(r['loglog_slope'], 3)} (1 = linear).",
        f"Paper (table 4): a constant {PAPER['eip_iterations']} iterations up to 1,000,000 x 2,000, time per "
        "iteration linear in Q x M.",
    ]


# --- model robustness ------------------------------------------------------------------


def _model_robustness_tables(r: dict) -> list[Table]:
    rows = [["random", x["k"], x["n_trials"], x["difficulty_rho"]["mean"], x["difficulty_rho"]["std"],
             x["competency_rho"]["mean"], x["competency_rho"]["std"], x["filter_changes"]["mean"],
             x["filter_changes"]["max"], x["seconds"]["mean"], x["n_failed"]] for x in r["removal"]]
    loo = r["leave_one_out"]
    if loo["undefined_reason"] is None:
        rows.append(["leave one out", 1, len(loo["trials"]), loo["difficulty_rho"]["mean"],
                     loo["difficulty_rho"]["std"], loo["competency_rho"]["mean"], loo["competency_rho"]["std"],
                     loo["filter_changes"]["mean"], loo["filter_changes"]["max"], loo["seconds"]["mean"],
                     sum(t["error"] is not None for t in loo["trials"])])
    notes = [f"k = {s['k']} skipped: {s['reason']}" for s in r["skipped"]]
    if loo["undefined_reason"]:
        notes.append(f"leave-one-out: {loo['undefined_reason']}")
    notes.append(f"full pool: {r['n_kept_full']:,} of {counted(r['n_questions'], 'question')} kept, EIP "
                 f"{r['full_seconds']:.4g} s; std is the sample std (ddof = 1)")
    main = Table("removal", f"Spearman rho against the full pool after removing k random models "
                 f"({r['trials']} trials each; table 5, table 9)",
                 ("removal", "k", "trials", "difficulty rho mean", "difficulty rho std", "competency rho mean",
                  "competency rho std", "filter changes mean", "filter changes max", "seconds mean", "failed"),
                 rows, (*notes, "removal: random = k models drawn at random per trial; leave one out = each "
                        "model removed once (k = 1, one trial per model)"),
                 {"difficulty rho mean": RHO, "difficulty rho std": RHO, "competency rho mean": RHO,
                  "competency rho std": RHO, "filter changes mean": "questions", "filter changes max": "questions",
                  "seconds mean": SECONDS})
    loo_rows = [[t["model"], t["difficulty_rho"], t["competency_rho"], t["n_filter_changes"], t["error"]]
                for t in loo["trials"]]
    return [main, Table("leave_one_out", "Leave one model out",
                        ("removed model", "difficulty rho", "competency rho", "filter changes", "error"), loo_rows,
                        units={"difficulty rho": RHO, "competency rho": RHO, "filter changes": "questions"})]


def _model_robustness_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(6, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ks = [x["k"] for x in r["removal"]]
    for key, label, color in (("difficulty_rho", "question difficulty", "#2b6cb0"),
                              ("competency_rho", "model competency", "#c05621")):
        mean = [np.nan if x[key]["mean"] is None else x[key]["mean"] for x in r["removal"]]
        std = [0.0 if x[key]["std"] is None else x[key]["std"] for x in r["removal"]]
        ax.errorbar(ks, mean, yerr=std, marker="o", capsize=3, label=label, color=color)
    ax.set_xlabel("models removed (k)")
    ax.set_ylabel("Spearman rho vs full pool")
    ax.set_title(f"Robustness to the model pool (mean ± std over {r['trials']} trials)", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def _model_robustness_headlines(r: dict) -> list[str]:
    by_k = {x["k"]: x for x in r["removal"]}
    out = []
    for k in (1, 5, 15):
        if k in by_k:
            x = by_k[k]
            out.append(f"k = {k}: difficulty rho {_pm(x['difficulty_rho'])}, competency rho "
                       f"{_pm(x['competency_rho'])}, filter changes mean {fmt(x['filter_changes']['mean'], 1)} "
                       f"(max {fmt(x['filter_changes']['max'], 0)}) of {r['n_questions']:,}.")
    loo = r["leave_one_out"]
    if loo["undefined_reason"] is None:
        out.append(f"Leave-one-out ({counted(len(loo['trials']), 'model')}): difficulty rho "
                   f"{_pm(loo['difficulty_rho'])}, "
                   f"competency rho {_pm(loo['competency_rho'])}.")
    out.append(f"Paper (30 models, 35,550 questions): LOO difficulty {PAPER['loo_difficulty_rho']}; k = 5 "
               f"difficulty {PAPER['k5_difficulty_rho']}, filter changes {PAPER['k5_filter_changes']}; k = 15 "
               f"difficulty {PAPER['k15_difficulty_rho']}; competency {PAPER['k1_competency_rho']} at k = 1 to "
               f"{PAPER['k15_competency_rho']} at k = 15.")
    return out


# --- dataset robustness ----------------------------------------------------------------


def _dataset_robustness_tables(r: dict) -> list[Table]:
    rows = [[x["label"], x["n_questions_removed"], _v(x["competency_rho"]), _v(x["difficulty_rho"]), x["error"]]
            for x in r["removals"]]
    notes = _undefined_notes([(f"{x['label']} competency", x["competency_rho"]) for x in r["removals"]])
    s = r["competency_rho"]
    notes += (f"competency rho over {s['n']} groups: mean {fmt(s['mean'])}, std {fmt(s['std'])}, "
              f"min {fmt(s['min'])}",)
    return [Table("removals", f"Leave one {r['group_by']} out: Spearman rho against all (table 10)",
                  (r["group_by"], "questions removed", "competency rho", "difficulty rho", "error"), rows, notes,
                  {"competency rho": RHO, "difficulty rho": RHO})]


def _dataset_robustness_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(max(5.0, 0.45 * len(r["removals"]) + 2), 3.6), layout="constrained")
    ax = fig.add_subplot()
    labels = [x["label"] for x in r["removals"]]
    values = [np.nan if _v(x["competency_rho"]) is None else _v(x["competency_rho"]) for x in r["removals"]]
    ax.bar(np.arange(len(labels)), values, color="#2b6cb0")
    ax.set_xticks(np.arange(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    finite = [v for v in values if not np.isnan(v)]
    ax.set_ylim(min([*finite, 1.0]) - 0.01 if finite else 0, 1.0)
    ax.set_ylabel("competency Spearman rho")
    ax.set_title(f"Model ranking without each {r['group_by']}", fontsize=10)
    return fig


def _dataset_robustness_headlines(r: dict) -> list[str]:
    defined = [x for x in r["removals"] if _v(x["competency_rho"]) is not None]
    out = [f"Leave one {r['group_by']} out ({r['n_groups']} groups): competency rho {_pm(r['competency_rho'])}."]
    if defined:
        low = min(defined, key=lambda x: _v(x["competency_rho"]))
        out.append(f"Lowest: without {low['label']} ({low['n_questions_removed']:,} questions), "
                   f"rho {_v(low['competency_rho']):.4f}.")
    out.append(f"Paper (table 10, real datasets): {PAPER['dataset_rho']}.")
    return out


# --- case study ----------------------------------------------------------------------------


def _ranking_text(ranking: list[list[str]]) -> str:
    return " > ".join(" = ".join(g) for g in ranking) if ranking else "failed"


def _case_study_tables(r: dict) -> list[Table]:
    pairs = r["pairs"]
    single = Table(
        "rankings", f"Rankings on one draw (seed {r['seed']}; table 6). Ground truth: {' > '.join(r['ground_truth'])}",
        ("method", "ranking", "matches ground truth", *pairs, "Kendall tau vs truth", "converged", "error"),
        [[m["method"], _ranking_text(m["ranking"]), bool(m["matches_ground_truth"]),
          *[m["pairs"].get(p) for p in pairs], _v(m["kendall"]), m["converged"], m["error"]]
         for m in r["single"]["methods"]],
        (*(f"{method_label(m)}: not run (the IRT fits were switched off for this analysis)" for m in r["skipped"]),
         "ranking: groups from easiest to hardest, '>' between groups, '=' within a tie; "
         f"a pair column ({', '.join(pairs)}): did the method order that pair as the ground truth does"),
        {"Kendall tau vs truth": "Kendall rank correlation, in [-1, 1]"}, display=_method_labels())
    groups = Table("difficulty", "EIP difficulty of each question group (table 7)",
                   ("group", "questions", "kept", "all solved", "all failed", "scaled mean", "scaled min",
                    "scaled max", "EIP π mean"),
                   [[g["group"], g["n"], g["n_kept"], g["n_all_solved"], g["n_all_failed"], g["scaled_mean"],
                     g["scaled_min"], g["scaled_max"], g["pi_q_mean"]] for g in r["single"]["difficulty_by_group"]],
                   units={"scaled mean": "EIP 0-100", "scaled min": "EIP 0-100", "scaled max": "EIP 0-100",
                          "EIP π mean": "EIP stationary mass π (sums to 1 over kept questions)"})
    rec = r["recovery"]
    recovery = Table(
        "recovery", f"Recovery over {rec['n_seeds']} simulated draws (beyond the paper)",
        ("method", "full order", *[f"{p} (strict)" for p in pairs], *[f"{p} tied" for p in pairs],
         "Kendall tau mean", "failed", "not converged"),
        [[m["method"], m["share_full_order"], *[m["share_pairs"][p] for p in pairs],
          *[m["share_tied_pairs"][p] for p in pairs], m["kendall"]["mean"], m["n_failed"], m["n_not_converged"]]
         for m in rec["methods"]],
        ("shares of seeds; a tie never counts as recovering an order",
         f"Multidimensional IRT: {r['mirt_epochs']} training epochs" if r["mirt_epochs"]
         else "Multidimensional IRT: not run"),
        {"full order": SHARE, **{f"{p} (strict)": SHARE for p in pairs}, **{f"{p} tied": SHARE for p in pairs},
         "Kendall tau mean": "Kendall rank correlation, in [-1, 1]"}, display=_method_labels())
    return [single, groups, recovery]


def _case_study_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    rec = r["recovery"]["methods"]
    fig = Figure(figsize=(max(5.5, 1.1 * len(rec) + 2), 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(rec))
    series = [("full order", [m["share_full_order"] for m in rec])] + [
        (p, [m["share_pairs"][p] for m in rec]) for p in r["pairs"]]
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, [100 * v for v in values], width=width, label=label)
    ax.set_xticks(x, [method_label(m["method"]) for m in rec], rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of seeds recovered")
    ax.set_title(f"Case study: recovery over {r['recovery']['n_seeds']} seeds", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def _case_study_headlines(r: dict) -> list[str]:
    single = r["single"]["methods"]
    matching = [method_label(m["method"]) for m in single if m["matches_ground_truth"]]
    out = [f"Single draw (seed {r['seed']}): " + "; ".join(f"{method_label(m['method'])} {_ranking_text(m['ranking'])}"
                                                          for m in single) + ".",
           f"Matching the ground truth on that draw: {', '.join(matching) if matching else 'none'}."]
    p1, p2 = r["pairs"]
    for m in r["recovery"]["methods"]:
        out.append(f"Over {m['n_seeds']} seeds, {method_label(m['method'])}: "
                   f"full order {100 * m['share_full_order']:.1f}%, {p1} {100 * m['share_pairs'][p1]:.1f}%, "
                   f"{p2} {100 * m['share_pairs'][p2]:.1f}%.")
    out.append("Paper (table 6, one draw): only EIP matched the ground truth.")
    return out


# --- rank changes -------------------------------------------------------------------------


def _rank_changes_tables(r: dict) -> list[Table]:
    labels = r["tertiles"]["labels"]
    models = Table(
        "models", "Models by accuracy rank: EIP rank and accuracy per EIP-difficulty tertile",
        ("model", "family", "accuracy", "EIP competency (0-100)", "accuracy rank", "EIP rank",
         "rank change (+ = EIP higher)", *[f"accuracy {lab}" for lab in labels]),
        [[m["name"], m["family"], m["accuracy"], m["competency_scaled"], m["accuracy_rank"], m["eip_rank"],
          m["rank_change"], *[m["tertile_accuracy"][lab] for lab in labels]] for m in r["models"]],
        (f"Kendall tau (EIP vs accuracy) {fmt(_v(r['kendall']))}, p = {fmt(r['kendall']['p_value'])}; "
         f"{r['n_concordant']} concordant and {r['n_discordant']} discordant pairs",
         f"tertile thresholds (EIP π) {fmt(r['tertiles']['thresholds'][0])} and "
         f"{fmt(r['tertiles']['thresholds'][1])}; questions per tertile "
         + ", ".join(f"{lab} {r['tertiles']['n_questions'][lab]:,}" for lab in labels)
         + f" (all solved {r['tertiles']['n_all_solved']:,} in easy, all failed {r['tertiles']['n_all_failed']:,} "
           "in hard)",
         "ranks: 1 = best; tied models share the best rank of their group (competition ranking, 1, 2, 2, 4)"),
        {"accuracy": SHARE, "EIP competency (0-100)": "0-100", **{f"accuracy {lab}": SHARE for lab in labels}})
    changes = Table("rank_changes", "Distribution of absolute rank changes (figure 12)",
                    ("absolute rank change", "models"),
                    [[c["abs_change"], c["n_models"]] for c in r["abs_change_counts"]])
    windows = Table("windows", "Displacement within accuracy windows (figure 13)",
                    ("window", "first accuracy rank", "last accuracy rank", "mean displacement", "max displacement",
                     "Kendall tau", "p"),
                    [[w["window"], b["first"], b["last"], b["mean_displacement"], b["max_displacement"],
                      _v(b["kendall"]), b["kendall"]["p_value"]] for w in r["windows"] for b in w["blocks"]],
                    ("window: the block size, in accuracy ranks; displacement: |accuracy rank - EIP rank| within "
                     "the block",),
                    {"mean displacement": "ranks", "max displacement": "ranks",
                     "Kendall tau": "Kendall rank correlation, in [-1, 1]", "p": "p-value"})
    families = Table("families", "Rank changes and tertile accuracy by model family (figure 5)",
                     ("family", "models", "mean |rank change|", *[f"mean accuracy {lab}" for lab in labels]),
                     [[f["family"], len(f["models"]), f["mean_abs_change"],
                       *[_mean(f["tertile_accuracy"][lab]) for lab in labels]] for f in r["families"]],
                     units={"mean |rank change|": "ranks", **{f"mean accuracy {lab}": SHARE for lab in labels}})
    return [models, changes, windows, families]


def _mean(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def _rank_changes_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1, 2.2])
    changes = r["abs_change_counts"]
    left.bar([c["abs_change"] for c in changes], [c["n_models"] for c in changes], width=0.4, color="#2b6cb0")
    left.set_xlabel("|accuracy rank - EIP rank|")
    left.set_ylabel("models")
    left.set_title(f"Rank changes (Kendall tau {fmt(_v(r['kendall']), 3)})", fontsize=10)
    models = sorted(r["models"], key=lambda m: (m["family"], -(m["accuracy"] or 0)))
    x = np.arange(len(models))
    for i, (lab, color) in enumerate(zip(r["tertiles"]["labels"], ("#68d391", "#f6ad55", "#e53e3e"))):
        values = [np.nan if m["tertile_accuracy"][lab] is None else 100 * m["tertile_accuracy"][lab] for m in models]
        right.bar(x + (i - 1) * 0.27, values, width=0.27, color=color, label=lab)
    right.set_xticks(x, [f"{m['name']} [{m['family']}]" for m in models], rotation=60, ha="right", fontsize=6)
    right.set_ylabel("accuracy (%)")
    right.set_title("Accuracy on EIP-difficulty tertiles, by family (figure 5)", fontsize=10)
    right.legend(fontsize=8)
    return fig


def _rank_changes_headlines(r: dict) -> list[str]:
    n = len(r["models"])
    unchanged = next((c["n_models"] for c in r["abs_change_counts"] if c["abs_change"] == 0), 0)
    biggest = max(r["models"], key=lambda m: abs(m["rank_change"]))
    out = [f"Kendall tau between EIP competency and accuracy: {fmt(_v(r['kendall']))} over {counted(n, 'model')} "
           f"(paper: {PAPER['kendall_tau']}).",
           f"Unchanged rank: {unchanged} of {counted(n, 'model')} ({100 * unchanged / n:.0f}%; "
           f"paper: {PAPER['unchanged_share']}); "
           f"largest change: {biggest['name']} ({biggest['rank_change']:+g}).",
           ]
    ten = next((w for w in r["windows"] if w["window"] == 10), None)
    if ten:
        out.append("Window 10: " + "; ".join(
            f"{b['first']}-{b['last']}: mean {b['mean_displacement']:.1f}, max {b['max_displacement']:.1f}, "
            f"tau {fmt(_v(b['kendall']), 3)}" for b in ten["blocks"]) + f" (paper: {PAPER['window10']}).")
    return out


# --- profiles -----------------------------------------------------------------------------


def _profiles_tables(r: dict) -> list[Table]:
    rows = [[g["label"], g["n"], g["n_missing"], g["mean"], g["median"], g["q1"], g["q3"],
             *(g["tertile_shares"] or [None] * 3), g["share_at_0"], g["share_at_100"]]
            for g in [*r["groups"], r["overall"]]]
    return [Table("profiles", f"EIP difficulty (0-100) per {r['group_by']} (figure 9)",
                  (r["group_by"], "questions", "unobserved", "mean", "median", "q1", "q3", "share [0, 33)",
                   "share [33, 67)", "share [67, 100]", "share at 0 (all solved)", "share at 100 (all failed)"),
                  rows, units={**dict.fromkeys(("mean", "median", "q1", "q3"), "EIP 0-100"),
                               **dict.fromkeys(("share [0, 33)", "share [33, 67)", "share [67, 100]",
                                                "share at 0 (all solved)", "share at 100 (all failed)"), SHARE)})]


def _profiles_plot(r: dict) -> Figure:
    return difficulty_profile_figure(bin_edges=r["bin_edges"],
                                     groups=[(g["label"], g["n"], g["counts"]) for g in r["groups"]])


def _profiles_headlines(r: dict) -> list[str]:
    groups = [g for g in r["groups"] if g["median"] is not None]
    out = [f"Overall: median difficulty {fmt(r['overall']['median'], 1)}, mean {fmt(r['overall']['mean'], 1)}, "
           f"{100 * (r['overall']['share_at_100'] or 0):.1f}% failed by every model, "
           f"{100 * (r['overall']['share_at_0'] or 0):.1f}% solved by every model."]
    if groups:
        hard = max(groups, key=lambda g: g["median"])
        easy = min(groups, key=lambda g: g["median"])
        out.append(f"Hardest {r['group_by']} by median: {hard['label']} ({hard['median']:.1f}); easiest: "
                   f"{easy['label']} ({easy['median']:.1f}).")
    out.append("Paper (figure 9): MATH and MMLU-Pro have broader hard tails; GSM8k and HellaSwag skew easy.")
    return out


# --- pools ---------------------------------------------------------------------------------


def _pools_tables(r: dict) -> list[Table]:
    rows = [[p["name"], p["n_models"], p["share_all_solved"], p["share_all_failed"], p["share_dead"],
             *[_v(p["correlations"][m]) for m in ("spearman", "pearson", "kendall")], p["undefined_reason"]]
            for p in r["pools"]]
    notes = [f"correlations of EIP difficulty (0-100) with the {r['reference']!r} pool over the questions "
             + ("observed by both" if r["include_excluded"] else "kept by both pools")]
    if r["unknown_access"]:
        notes.append(f"access unknown (in no access pool): {', '.join(r['unknown_access'])}")
    if r["unknown_size"]:
        notes.append(f"size unknown (in no size pool): {', '.join(r['unknown_size'])}")
    pools = Table("pools", "EIP difficulty per model pool against the whole pool (figures 6 and 8)",
                  ("pool", "models", "share all solved", "share all failed", "share dead", "Spearman", "Pearson",
                   "Kendall", "undefined because"), rows, tuple(notes),
                  {"share all solved": SHARE, "share all failed": SHARE, "share dead": SHARE,
                   "Spearman": "rank correlation, in [-1, 1]", "Pearson": "correlation, in [-1, 1]",
                   "Kendall": "rank correlation, in [-1, 1]"})
    members = Table("members", "Models in each pool, one row per pool and model", ("pool", "model"),
                    [[p["name"], model] for p in r["pools"] for model in p["models"]])
    return [pools, members]


def _pools_plot(r: dict) -> Figure:
    from matplotlib.figure import Figure
    pools = [p for p in r["pools"] if p["kind"] != "reference"]
    fig = Figure(figsize=(max(5.5, 1.1 * len(pools) + 2), 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(pools))
    for i, m in enumerate(("spearman", "pearson", "kendall")):
        values = [np.nan if _v(p["correlations"][m]) is None else _v(p["correlations"][m]) for p in pools]
        ax.bar(x + (i - 1) * 0.27, values, width=0.27, label=m)
    ax.set_xticks(x, [f"{p['name']}\n({p['n_models']})" for p in pools], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"correlation with {r['reference']!r}")
    ax.set_title("Question difficulty from sub-pools against the whole pool", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def _pools_headlines(r: dict) -> list[str]:
    out = []
    for p in r["pools"]:
        if p["kind"] != "access":
            continue
        if p["undefined_reason"]:
            out.append(f"{p['name']} pool ({counted(p['n_models'], 'model')}): undefined ({p['undefined_reason']}).")
            continue
        c = p["correlations"]
        out.append(f"{p['name']} pool ({counted(p['n_models'], 'model')}) vs whole: "
                   f"Spearman {fmt(_v(c['spearman']), 3)}, "
                   f"Pearson {fmt(_v(c['pearson']), 3)}, Kendall {fmt(_v(c['kendall']), 3)}.")
    out.append(f"Paper (figure 6): open-weight vs whole {PAPER['open_weight']}; proprietary vs whole "
               f"{PAPER['proprietary']}.")
    if r["unknown_access"]:
        out.append(f"{len(r['unknown_access'])} models of unknown access are only in the whole pool.")
    return out


@dataclass(frozen=True)
class Renderer:
    tables: Callable[[dict], list[Table]]
    plot: Callable[[dict], Figure]
    headlines: Callable[[dict], list[str]]


RENDERERS: dict[str, Renderer] = {
    AnalysisKind.EFFICIENCY: Renderer(_efficiency_tables, _efficiency_plot, _efficiency_headlines),
    AnalysisKind.SCALING: Renderer(_scaling_tables, _scaling_plot, _scaling_headlines),
    AnalysisKind.MODEL_ROBUSTNESS: Renderer(_model_robustness_tables, _model_robustness_plot,
                                            _model_robustness_headlines),
    AnalysisKind.DATASET_ROBUSTNESS: Renderer(_dataset_robustness_tables, _dataset_robustness_plot,
                                              _dataset_robustness_headlines),
    AnalysisKind.CASE_STUDY: Renderer(_case_study_tables, _case_study_plot, _case_study_headlines),
    AnalysisKind.RANK_CHANGES: Renderer(_rank_changes_tables, _rank_changes_plot, _rank_changes_headlines),
    AnalysisKind.PROFILES: Renderer(_profiles_tables, _profiles_plot, _profiles_headlines),
    AnalysisKind.POOLS: Renderer(_pools_tables, _pools_plot, _pools_headlines),
    AnalysisKind.HUMAN_LABELS: Renderer(lambda r: human_labels.tables(r, Table, _method_labels()),
                                        lambda r: human_labels.plot(r, method_label),
                                        lambda r: human_labels.headlines(r, method_label)),
}


# --- public --------------------------------------------------------------------------------


def analysis_tables(*, kind: str, result: dict) -> list[Table]:
    """The result's tables (the CSV and the page show the same)."""
    return RENDERERS[kind].tables(result)


def analysis_headlines(*, kind: str, result: dict) -> list[str]:
    """Sentences with the headline numbers and the paper's for comparison."""
    return RENDERERS[kind].headlines(result)


def analysis_tidy_tables(*, kind: str, result: dict) -> list[TidyTable]:
    """The result's tables as tidy tables (file stem = the table's key)."""
    return [table.tidy() for table in analysis_tables(kind=kind, result=result)]


def analysis_csv(*, kind: str, result: dict, table: str | None = None) -> bytes:
    """One table of the result as a tidy CSV: ``table`` (a key), by default
    the first (the analysis's main table).

    Raises
    ------
    KeyError
        If the analysis has no table ``table``.
    """
    tables = {t.key: t for t in analysis_tables(kind=kind, result=result)}
    key = next(iter(tables)) if table is None else table
    if key not in tables:
        raise KeyError(ERR_TABLE.format(kind=kind, table=key, tables=list(tables)))
    return csv_bytes(tables[key].tidy().frame)


def analysis_codebook(*, kind: str, params: dict, result: dict, response_set: str | None,
                      run_id: int | None = None) -> bytes:
    """``codebook.md`` of an analysis: each table's columns, units and notes,
    the parameters, the product version and the time."""
    provenance = {"source": f"analysis run {run_id} ({kind})" if run_id is not None else f"analysis {kind}",
                  "response set": response_set or "none (simulated data)"}
    label = AnalysisKind(kind).label
    return codebook_markdown(title=f"{label}" + (f", analysis run {run_id}" if run_id is not None else ""),
                             tables=analysis_tidy_tables(kind=kind, result=result), provenance=provenance,
                             parameters=params)


def analysis_zip(*, kind: str, params: dict, result: dict, response_set: str | None,
                 run_id: int | None = None) -> bytes:
    """Every table as ``<key>.csv``, ``codebook.md`` and ``result.json`` in one zip."""
    tables = analysis_tidy_tables(kind=kind, result=result)
    codebook = analysis_codebook(kind=kind, params=params, result=result, response_set=response_set, run_id=run_id)
    document = analysis_json(kind=kind, params=params, result=result, response_set=response_set)
    return zip_bytes([*((f"{t.name}.csv", csv_bytes(t.frame)) for t in tables), ("codebook.md", codebook),
                      ("result.json", document)])


def analysis_json(*, kind: str, params: dict, result: dict, response_set: str | None) -> bytes:
    """The stored result with what produced it (UTF-8, indented; NaN refused)."""
    document = {"kind": kind, "response_set": response_set, "params": params, "result": result}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")


def analysis_plot(*, kind: str, result: dict, fmt: str) -> bytes:
    """The result's plot as "png" or "svg" bytes (no timestamps in the metadata).

    Raises
    ------
    ValueError
        If ``fmt`` is unknown.
    """
    if fmt not in PLOT_FORMATS:
        raise ValueError(ERR_FORMAT.format(formats=sorted(PLOT_FORMATS), value=fmt))
    fig = RENDERERS[kind].plot(result)
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=110, metadata={"Date": None} if fmt == "svg" else {"Software": None},
                bbox_inches="tight", pad_inches=0.05)
    return buffer.getvalue()


def write_analysis_files(*, run, out_dir: Path | str) -> list[Path]:
    """Write result.json, one ``<table key>.csv`` per table, codebook.md,
    plot.png and plot.svg of a done run into ``out_dir`` (created if needed);
    the paths written, in that order."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    response_set = None if run.response_set_id is None else str(run.response_set)
    about = {"kind": run.kind, "params": run.params, "result": run.result, "response_set": response_set}
    files = {
        "result.json": analysis_json(**about),
        **{f"{t.name}.csv": csv_bytes(t.frame) for t in analysis_tidy_tables(kind=run.kind, result=run.result)},
        "codebook.md": analysis_codebook(**about, run_id=run.pk),
        "plot.png": analysis_plot(kind=run.kind, result=run.result, fmt="png"),
        "plot.svg": analysis_plot(kind=run.kind, result=run.result, fmt="svg"),
    }
    written = []
    for name, content in files.items():
        path = out_dir / name
        path.write_bytes(content)
        written.append(path)
    return written
