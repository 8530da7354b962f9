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
    fig = Figure(figsize=(min(3.0 * cols, 12.0), 2.7 * rows), layout="constrained")
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
