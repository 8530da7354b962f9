"""Figures drawn the same way wherever they appear (matplotlib, no pyplot state)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def difficulty_profile_figure(
    *, bin_edges: Sequence[float], groups: Sequence[tuple[str, int, Sequence[float]]], empty_reason: str = ""
) -> Figure:
    """Histograms of EIP difficulty (0-100), one panel per group (paper figure 9).

    Parameters
    ----------
    bin_edges : sequence of float
        Shared bin edges on the 0-100 scale.
    groups : sequence of (label, n, counts)
        A panel title, its number of questions and the count per bin; each
        panel shows counts as a percentage of its questions, four panels a row.
    empty_reason : str, default ""
        Written on an empty figure when there is no group.
    """
    from matplotlib.figure import Figure
    n = max(len(groups), 1)
    cols, rows = min(n, 4), math.ceil(n / 4)
    fig = Figure(figsize=(max(min(3.0 * cols, 12.0), 4.5), 2.7 * rows), layout="constrained")  # one panel: 4.5 in wide
    edges = np.asarray(bin_edges, dtype=float)
    for i, (label, size, counts) in enumerate(groups):
        ax = fig.add_subplot(rows, cols, i + 1)
        values = np.asarray(counts, dtype=float)
        share = values / values.sum() if values.sum() else values
        ax.bar(edges[:-1], 100 * share, width=np.diff(edges), align="edge", color="#2b6cb0", edgecolor="white")
        ax.set_title(f"{label} (n = {size:,})", fontsize=9)
        ax.set_xlim(0, 100)
        ax.set_xlabel("EIP difficulty (0-100)", fontsize=8)
        ax.set_ylabel("questions (%)", fontsize=8)
    if not groups:
        fig.add_subplot().text(0.5, 0.5, f"no profile: {empty_reason}", ha="center")
    return fig


def human_scale_figure(
    *,
    panels: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[float], Sequence[float], str]],
    empty_reason: str = "",
) -> Figure:
    """One scatter panel per method: its difficulty (x) against the human scale (y) with intervals.

    Parameters
    ----------
    panels : sequence of (label, x, y, y_low, y_high, caption)
        A panel title (the method), the method's difficulty per question,
        the human scale (logits) with its interval ends (NaN = no interval,
        drawn without a bar) and a caption (e.g. the Spearman correlation
        and what it was computed on; a newline breaks it), written under
        the label in the panel's title; three panels a row.
    empty_reason : str, default ""
        Written on an empty figure when there is no panel.
    """
    from matplotlib.figure import Figure  # heavy: imported where a figure is drawn

    n = max(len(panels), 1)
    cols, rows = min(n, 3), math.ceil(n / 3)
    fig = Figure(figsize=(min(3.6 * cols, 11.0), 3.2 * rows), layout="constrained")
    for i, (label, x, y, low, high, caption) in enumerate(panels):
        ax = fig.add_subplot(rows, cols, i + 1)
        xv, yv = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        err = np.vstack([np.where(np.isfinite(lo), yv - lo, 0.0), np.where(np.isfinite(hi), hi - yv, 0.0)])
        ax.errorbar(xv, yv, yerr=np.clip(err, 0.0, None), fmt="o", markersize=3, color="#2b6cb0",
                    ecolor="#a0aec0", elinewidth=0.8, capsize=0)
        ax.set_title(f"{label}\n{caption}", fontsize=8)
        ax.set_xlabel(f"{label} difficulty", fontsize=8)
        ax.set_ylabel("human scale (logits)", fontsize=8)
    if not panels:
        fig.add_subplot().text(0.5, 0.5, f"no human scale: {empty_reason}", ha="center")
    return fig


def forest_figure(
    *,
    panels: Sequence[tuple[str, str, bool, Sequence[tuple[str, float | None, float | None, float | None]]]],
    highlight: str | None = None,
) -> Figure:
    """A forest plot: one panel per comparison with people, one row per method,
    each estimate a dot with its interval as a horizontal bar.

    Parameters
    ----------
    panels : sequence of (title, axis, percent, rows)
        A panel's title, its x-axis label, whether its values are fractions
        in [0, 1] drawn in percent (x from 0 to 100, a dotted line at 50 =
        chance) or correlations in [-1, 1] (a dotted line at 0), and its rows
        ``(method label, value, low, high)`` top to bottom; a value of None is
        written "undefined", an interval end of None draws no bar.
    highlight : str, optional
        The method label drawn in a strong colour and bold (the best method).

    Returns
    -------
    matplotlib.figure.Figure
        Panels side by side, every panel's rows in the same order; each
        drawn estimate is a ``Line2D`` with ``gid`` ``"<panel index>:<method label>"``
        whose one point is (value in plot units, row).
    """
    from matplotlib.figure import Figure

    n_rows = max((len(rows) for *_, rows in panels), default=1) or 1
    fig = Figure(figsize=(3.0 * max(len(panels), 1) + 1.3, 0.36 * n_rows + 1.4), layout="constrained")
    if not panels:
        fig.add_subplot().text(0.5, 0.5, "nothing to compare yet", ha="center")
        return fig
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for p, (ax, (title, axis, percent, rows)) in enumerate(zip(axes, panels, strict=True)):
        scale = 100.0 if percent else 1.0
        ax.axvline(50.0 if percent else 0.0, color="#718096", linestyle=":", linewidth=1)
        for i, (label, value, low, high) in enumerate(rows):
            strong = label == highlight
            color = "#1a4f8b" if strong else "#4a5568"
            if value is None:
                ax.text(50.0 if percent else 0.0, i, "undefined", ha="center", va="center", fontsize=10,
                        color="#4a5568")
                continue
            if low is not None and high is not None:
                ax.hlines(i, scale * low, scale * high, color=color, linewidth=2.4 if strong else 1.6)
            (dot,) = ax.plot([scale * value], [i], "o", color=color, markersize=8 if strong else 6)
            dot.set_gid(f"{p}:{label}")
        ax.set_xlim((-3.0, 103.0) if percent else (-1.06, 1.06))
        ax.set_xticks([0, 25, 50, 75, 100] if percent else [-1.0, -0.5, 0.0, 0.5, 1.0])
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(axis, fontsize=10)
        ax.tick_params(labelsize=10)
        ax.grid(axis="x", color="#e2e8f0", linewidth=0.8)
        ax.set_axisbelow(True)
    labels = [label for label, *_ in panels[0][3]]
    first = axes[0]
    first.set_yticks(range(len(labels)), labels, fontsize=11)
    for tick in first.get_yticklabels():
        if tick.get_text() == highlight:
            tick.set_fontweight("bold")
    first.set_ylim(len(labels) - 0.5, -0.5)
    return fig
