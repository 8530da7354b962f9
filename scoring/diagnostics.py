"""Response-matrix diagnostics: missing cells, thin questions, disconnected blocks.

Pure numpy/scipy; never imports Django. A response matrix with missing cells
is a bipartite graph: questions on one side, models on the other, one edge per
observed cell. When that graph splits into components that share no model,
the difficulties of different components are not on a common scale (no model
answered questions of both), so comparing two of their questions says nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import BoolArray
from scoring._validation import check_positive_int

__all__ = ["DEFAULT_MIN_MODELS", "MatrixDiagnostics", "cell_diagnostics", "matrix_diagnostics"]

#: Fewest models that must answer a question for it to count as covered.
DEFAULT_MIN_MODELS = 3


@dataclass(frozen=True)
class MatrixDiagnostics:
    """What :func:`matrix_diagnostics` found.

    Attributes
    ----------
    n_cells : int
        ``n_questions * n_models``.
    n_missing : int
        Cells not observed (NaN).
    min_models : int
        The coverage threshold used.
    n_observed : ndarray of shape (n_questions,), int64
        Models that answered each question.
    low_coverage : ndarray of shape (n_questions,), bool
        ``n_observed < min_models``.
    question_component : ndarray of shape (n_questions,), int64
        Component label of each question, 0 .. n_components - 1, numbered in
        order of first appearance over the questions (then the models).
    model_component : ndarray of shape (n_models,), int64
        Component label of each model, same numbering.
    n_components : int
        Connected components of the model-question graph, counting a
        question or model with no observed cell as a component of its own.
    """

    n_cells: int
    n_missing: int
    min_models: int
    n_observed: NDArray[np.int64]
    low_coverage: BoolArray
    question_component: NDArray[np.int64]
    model_component: NDArray[np.int64]
    n_components: int

    @property
    def n_low_coverage(self) -> int:
        """How many questions are observed by fewer than ``min_models`` models."""
        return int(self.low_coverage.sum())

    @property
    def summary(self) -> dict[str, int]:
        """The run-level counts as plain ints (JSON-ready)."""
        return {
            "n_cells": self.n_cells,
            "n_missing": self.n_missing,
            "min_models": self.min_models,
            "n_low_coverage": self.n_low_coverage,
            "n_components": self.n_components,
        }


def matrix_diagnostics(R: ArrayLike, *, min_models: int = DEFAULT_MIN_MODELS) -> MatrixDiagnostics:
    """Missing cells, low-coverage questions and connected components of ``R``.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit, NaN = not observed (bool/integer input: fully observed).
        Only which cells are observed matters; a question or model with no
        observed cell is accepted.
    min_models : int, default 3
        A question answered by fewer models is flagged ``low_coverage``.

    Returns
    -------
    MatrixDiagnostics

    Raises
    ------
    ValueError
        If ``R`` is empty, not 2-dimensional or not numeric, or ``min_models`` is not an
        integer >= 1.

    Notes
    -----
    The graph has ``n_questions + n_models`` nodes and one undirected edge
    per observed cell; components come from
    :func:`scipy.sparse.csgraph.connected_components`. Labels are renumbered
    by first appearance so that they do not depend on scipy's internals.

    Examples
    --------
    >>> import numpy as np
    >>> nan = np.nan
    >>> d = matrix_diagnostics([[1, 0, nan], [0, 1, nan], [nan, nan, 1]], min_models=2)
    >>> d.n_missing, d.n_components, d.question_component.tolist(), d.low_coverage.tolist()
    (4, 2, [0, 0, 1], [False, False, True])
    """
    observed = _check_observed(R)
    min_models = check_positive_int(min_models, name="min_models")
    rows, cols = np.nonzero(observed)
    return _diagnostics(rows, cols, observed.shape, min_models)


def cell_diagnostics(
    question_index: ArrayLike,
    model_index: ArrayLike,
    *,
    n_questions: int,
    n_models: int,
    min_models: int = DEFAULT_MIN_MODELS,
) -> MatrixDiagnostics:
    """:func:`matrix_diagnostics` from the list of observed cells (long form).

    For responses stored one row per cell (an upload, a database table),
    without building the dense matrix.

    Parameters
    ----------
    question_index, model_index : array-like of int, shape (n_cells_observed,)
        Row and column of each observed cell, in ``[0, n_questions)`` and
        ``[0, n_models)``; each cell at most once.
    n_questions, n_models : int
        Shape of the matrix, >= 1 each.
    min_models : int, default 3
        As in :func:`matrix_diagnostics`.

    Returns
    -------
    MatrixDiagnostics
        Equal to ``matrix_diagnostics(R)`` for the matrix ``R`` observed at
        exactly these cells.

    Raises
    ------
    ValueError
        If the indices are not integer arrays of one shape, fall outside the
        matrix, or repeat a cell; or a count is not an integer >= 1.

    Examples
    --------
    >>> d = cell_diagnostics([0, 1, 2], [0, 0, 1], n_questions=3, n_models=2, min_models=1)
    >>> d.n_missing, d.n_components, d.question_component.tolist()
    (3, 2, [0, 0, 1])
    """
    n_q = check_positive_int(n_questions, name="n_questions")
    n_m = check_positive_int(n_models, name="n_models")
    min_models = check_positive_int(min_models, name="min_models")
    rows, cols = np.asarray(question_index), np.asarray(model_index)
    integers = rows.dtype.kind in "iu" and cols.dtype.kind in "iu"
    if rows.ndim != 1 or rows.shape != cols.shape or (rows.size and not integers):
        raise ValueError(
            "question_index and model_index must be 1-dimensional integer arrays of one shape; "
            f"got {rows.dtype} {rows.shape} and {cols.dtype} {cols.shape}"
        )
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= n_q or cols.min() < 0 or cols.max() >= n_m):
        raise ValueError(f"a cell lies outside the ({n_q}, {n_m}) matrix")
    if np.unique(rows * n_m + cols).size != rows.size:
        raise ValueError("a cell is listed more than once")
    return _diagnostics(rows, cols, (n_q, n_m), min_models)


def _check_observed(R: ArrayLike) -> BoolArray:
    """The observed-cell mask of ``R``.

    Unlike the scoring methods, rows or columns with no observed cell are
    accepted (they are what is diagnosed).
    """
    arr = np.asarray(R)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("R must hold numbers; got non-numeric values") from None
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"R must be a non-empty 2-dimensional array (n_questions, n_models); got shape {arr.shape}")
    if arr.dtype.kind == "f":
        mask: BoolArray = ~np.isnan(arr)
        return mask
    if arr.dtype.kind in "buil":
        return np.ones(arr.shape, dtype=bool)
    raise ValueError(f"R must have a numeric dtype; got {arr.dtype}")


def _diagnostics(
    rows: NDArray[np.integer], cols: NDArray[np.integer], shape: tuple[int, ...], min_models: int
) -> MatrixDiagnostics:
    from scipy.sparse import coo_matrix  # here, not at app load (scipy.sparse ~0.2 s)
    from scipy.sparse.csgraph import connected_components

    n_q, n_m = shape
    graph = coo_matrix(
        (np.ones(rows.size, dtype=np.int8), (rows, n_q + cols)), shape=(n_q + n_m, n_q + n_m)
    )
    _, raw = connected_components(graph, directed=False)
    _, first = np.unique(raw, return_index=True)
    order = np.argsort(first, kind="stable")  # components by first node
    relabel = np.empty(order.size, dtype=np.int64)
    relabel[order] = np.arange(order.size, dtype=np.int64)
    labels = relabel[np.unique(raw, return_inverse=True)[1]]
    n_observed = np.bincount(rows, minlength=n_q).astype(np.int64)
    return MatrixDiagnostics(
        n_cells=int(n_q * n_m),
        n_missing=int(n_q * n_m - rows.size),
        min_models=min_models,
        n_observed=n_observed,
        low_coverage=n_observed < min_models,
        question_component=labels[:n_q],
        model_component=labels[n_q:],
        n_components=int(order.size),
    )
