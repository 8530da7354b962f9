"""Render an alignment report (see :mod:`annotate.services.alignment`) as files:
JSON, CSV and plots (PNG or SVG).

CSV files open correctly in a spreadsheet: UTF-8 with a byte-order mark, CRLF
line ends, and a formula-injection guard: a text cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a leading single quote
(OWASP "CSV injection"). Numbers stay numbers, negative ones included: only
non-numeric text is guarded.

Plots use matplotlib's ``Figure`` API (the Agg canvas; no pyplot state), so
they are safe to draw inside a web request.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from annotate.services.alignment._data import JUDGMENT_COLUMNS
from annotate.services.alignment.tables import report_tables

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
BOM = "\ufeff"
CONTENT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}
ERR_PLOT = "name must be one of {names}; got {value!r}"
ERR_FORMAT = "fmt must be one of {formats}; got {value!r}"


# --------------------------------------------------------------------------- CSV


def csv_cell(value) -> str | int | float:
    """A value as a safe CSV cell.

    ``None`` -> empty; ints and finite floats unchanged; a string that starts
    with a formula character and is not a plain number gets a ``'`` prefix.

    Examples
    --------
    >>> csv_cell("=1+1"), csv_cell(-0.25), csv_cell("-0.25"), csv_cell("-x")
    ("'=1+1", -0.25, '-0.25', "'-x")
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else ""
    text = str(value)
    if text.startswith(FORMULA_PREFIXES) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_bytes(rows: Iterable[Sequence]) -> bytes:
    """Rows as CSV bytes: UTF-8 with a BOM, CRLF, every cell through :func:`csv_cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in rows:
        writer.writerow([csv_cell(v) for v in row])
    return (BOM + buffer.getvalue()).encode("utf-8")


def report_csv(report: dict) -> bytes:
    """Table 2 and the other report tables, one block each: a title row, a
    header, the rows (raw numbers; "undefined" where undefined), then the
    notes and the reason of every undefined cell."""
    rows: list[list] = []
    for table in report_tables(report):
        rows.append([table.title])
        rows.append(list(table.header))
        reasons = []
        for row in table.rows:
            rows.append([cell.value for cell in row])
            reasons += [f"{row[0].text} / {table.header[i]}: {cell.reason}"
                        for i, cell in enumerate(row) if cell.undefined]
        rows += [[f"note: {n}"] for n in table.notes]
        rows += [[f"undefined: {r}"] for r in reasons]
        rows.append([])
    return csv_bytes(rows)


def judgments_csv(rows: Sequence[dict]) -> bytes:
    """The raw judgments (from ``judgment_export_rows``), one row each."""
    return csv_bytes([list(JUDGMENT_COLUMNS), *([row[c] for c in JUDGMENT_COLUMNS] for row in rows)])


def report_json(report: dict) -> bytes:
    """``json.dumps`` of the report (UTF-8, indented; NaN is refused)."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")


# --------------------------------------------------------------------------- plots


def _available(report: dict) -> list[dict]:
    return [m for m in report["methods"] if m["available"]]


def plot_agreement(report: dict) -> Figure:
    """Agreement of each method with the consensus, with its bootstrap interval,
    and the mean over evaluators."""
    methods = _available(report)
    fig = Figure(figsize=(max(4.5, 1.1 * len(methods) + 1.5), 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(methods))
    for i, m in enumerate(methods):
        c = report["consensus_agreement"][m["key"]]
        if c["agreement"] is None:
            ax.text(i, 2, "undefined", ha="center", rotation=90, fontsize=8)
            continue
        value = 100 * c["agreement"]
        ci = c["ci"]["agreement"]
        err = None if ci is None else [[value - 100 * ci[0]], [100 * ci[1] - value]]
        ax.bar(i, value, color="#2b6cb0" if m["key"] == "eip" else "#a0aec0", yerr=err, capsize=4)
        mean = report["method_summary"][m["key"]]["agreement"]["mean"]
        if mean is not None:
            ax.plot(i, 100 * mean, "o", color="#c05621", label="evaluator mean" if i == 0 else None)
    ax.set_xticks(x, [m["label"] for m in methods], rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("agreement with consensus (%)")
    level = report["params"]["ci_level"]
    ax.set_title(f"Agreement with the human consensus ({level:.0%} bootstrap CI)", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_heatmap(report: dict) -> Figure:
    """Evaluators (rows) x methods (columns): agreement in percent; undefined cells grey."""
    methods = _available(report)
    evaluators = report["evaluators"]
    values = np.array([[np.nan if e["methods"][m["key"]]["agreement"] is None else 100 * e["methods"][m["key"]]["agreement"]
                        for m in methods] for e in evaluators], dtype=float).reshape(len(evaluators), len(methods))
    fig = Figure(figsize=(1.0 * len(methods) + 2.5, 0.28 * len(evaluators) + 1.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_facecolor("#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(np.arange(len(methods)), [m["label"] for m in methods], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(np.arange(len(evaluators)), [e["short"] for e in evaluators], fontsize=7)
    if len(evaluators) <= 40:
        for (r, c), v in np.ndenumerate(values):
            ax.text(c, r, "–" if np.isnan(v) else f"{v:.0f}", ha="center", va="center", fontsize=6,
                    color="black" if np.isnan(v) or v > 60 else "white")
    fig.colorbar(image, ax=ax, label="agreement (%)")
    ax.set_title("Each evaluator against each method", fontsize=10)
    return fig


def plot_profiles(report: dict) -> Figure:
    """Distribution of EIP difficulty (0-100) per dataset, as in the paper's figure 9."""
    profiles = report["profiles"]
    datasets = profiles["datasets"]
    n = max(len(datasets), 1)
    fig = Figure(figsize=(min(3.0 * n, 12.0), 2.8 * math.ceil(n / 4)), layout="constrained")
    edges = np.asarray(profiles["bin_edges"], dtype=float)
    for i, d in enumerate(datasets):
        ax = fig.add_subplot(math.ceil(n / 4), min(n, 4), i + 1)
        counts = np.asarray(d["counts"], dtype=float)
        share = counts / counts.sum() if counts.sum() else counts
        ax.bar(edges[:-1], 100 * share, width=np.diff(edges), align="edge", color="#2b6cb0", edgecolor="white")
        ax.set_title(f"{d['name']} (n = {d['n']})", fontsize=9)
        ax.set_xlim(0, 100)
        ax.set_xlabel("EIP difficulty (0-100)", fontsize=8)
        ax.set_ylabel("questions (%)", fontsize=8)
    if not datasets:
        fig.add_subplot().text(0.5, 0.5, f"no profile: {profiles['undefined_reason']}", ha="center")
    return fig


def plot_pools(report: dict) -> Figure:
    """Per model pool: consensus agreement and dead-node share (paper figure 8)."""
    pools = report["pools"]["pools"]
    fig = Figure(figsize=(max(5.0, 0.9 * len(pools) + 2), 3.4), layout="constrained")
    ax = fig.add_subplot()
    names = [f"{p['name']}\n({p['n_models']})" for p in pools]
    x = np.arange(len(pools))
    agree = [np.nan if not p["consensus"] or p["consensus"]["agreement"] is None else 100 * p["consensus"]["agreement"]
             for p in pools]
    dead = [np.nan if p["share_dead"] is None else 100 * p["share_dead"] for p in pools]
    ax.bar(x - 0.2, agree, width=0.4, label="consensus agreement", color="#2b6cb0")
    ax.bar(x + 0.2, dead, width=0.4, label="dead nodes", color="#c05621")
    for i, (a, d) in enumerate(zip(agree, dead)):
        if np.isnan(a):
            ax.text(i - 0.2, 2, "undefined", rotation=90, ha="center", fontsize=7)
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("%")
    ax.set_title("Model pools: agreement with the consensus and dead nodes", fontsize=10)
    ax.legend(fontsize=8)
    if not pools:
        ax.text(0.5, 0.5, f"no pool analysis: {report['pools']['undefined_reason']}", ha="center",
                transform=ax.transAxes)
    return fig


PLOTS: dict[str, Callable[[dict], Figure]] = {
    "agreement": plot_agreement,
    "heatmap": plot_heatmap,
    "profiles": plot_profiles,
    "pools": plot_pools,
}


def render_plot(report: dict, *, name: str, fmt: str) -> bytes:
    """Draw plot ``name`` (a key of :data:`PLOTS`) as ``fmt`` ("png" or "svg") bytes.

    Raises
    ------
    ValueError
        If ``name`` or ``fmt`` is unknown.
    """
    if name not in PLOTS:
        raise ValueError(ERR_PLOT.format(names=sorted(PLOTS), value=name))
    if fmt not in CONTENT_TYPES:
        raise ValueError(ERR_FORMAT.format(formats=sorted(CONTENT_TYPES), value=fmt))
    fig = PLOTS[name](report)
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buffer, format=fmt, dpi=110, metadata=metadata)
    return buffer.getvalue()


# --------------------------------------------------------------------------- bundle


def write_bundle(report: dict, judgments: Sequence[dict], out_dir: Path | str) -> list[Path]:
    """Write report.json, report.csv, judgments.csv and every plot as PNG and SVG.

    Returns
    -------
    list of Path
        The files written, in that order. ``out_dir`` is created if needed.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"report.json": report_json(report), "report.csv": report_csv(report),
             "judgments.csv": judgments_csv(judgments)}
    for name in PLOTS:
        for fmt in CONTENT_TYPES:
            files[f"{name}.{fmt}"] = render_plot(report, name=name, fmt=fmt)
    written = []
    for file_name, content in files.items():
        path = out_dir / file_name
        path.write_bytes(content)
        written.append(path)
    return written
