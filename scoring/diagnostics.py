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
from scoring.fraction import FractionMatrix

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
    n_observed_models : ndarray of shape (n_models,), int64
        Questions each model answered.
    """

    n_cells: int
    n_missing: int
    min_models: int
    n_observed: NDArray[np.int64]
    low_coverage: BoolArray
    question_component: NDArray[np.int64]
    model_component: NDArray[np.int64]
    n_components: int
    n_observed_models: NDArray[np.int64]

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


def matrix_diagnostics(R: ArrayLike | FractionMatrix, *, min_models: int = DEFAULT_MIN_MODELS) -> MatrixDiagnostics:
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

    The matrix is read in blocks of rows of about ``BLOCK_CELLS`` cells and
    no temporary is as large as ``R`` (a compact uint8 or float32 matrix of
    a million questions stays as it is). Within a block, every observed model
    of a question is joined to the question's first observed model, and the
    model components found so far carry over to the next block; a question
    then belongs to the component of its first observed model. Integer input
    is fully observed: one component, without reading the cells.

    Examples
    --------
    >>> import numpy as np
    >>> nan = np.nan
    >>> d = matrix_diagnostics([[1, 0, nan], [0, 1, nan], [nan, nan, 1]], min_models=2)
    >>> d.n_missing, d.n_components, d.question_component.tolist(), d.low_coverage.tolist()
    (4, 2, [0, 0, 1], [False, False, True])
    """
    arr = _check_matrix(R)
    min_models = check_positive_int(min_models, name="min_models")
    if arr.dtype.kind != "f" or (isinstance(arr, FractionMatrix) and arr.fully_observed):
        return _fully_observed(arr.shape, min_models)
    return _blockwise(arr, min_models)


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


def _check_matrix(R: ArrayLike | FractionMatrix) -> NDArray[np.generic] | FractionMatrix:
    """``R`` as a non-empty 2-D numeric ndarray (not copied when it already is one).

    A non-empty :class:`~scoring.fraction.FractionMatrix` is returned as it is.

    Unlike the scoring methods, rows or columns with no observed cell are
    accepted (they are what is diagnosed).
    """
    if isinstance(R, FractionMatrix):
        if R.size == 0:
            raise ValueError(f"R must be a non-empty 2-dimensional array (n_questions, n_models); got shape {R.shape}")
        return R
    arr = np.asarray(R)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("R must hold numbers; got non-numeric values") from None
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"R must be a non-empty 2-dimensional array (n_questions, n_models); got shape {arr.shape}")
    if arr.dtype.kind not in "fbuil":
        raise ValueError(f"R must have a numeric dtype; got {arr.dtype}")
    return arr


#: Cells per block of rows read by :func:`matrix_diagnostics`.
BLOCK_CELLS = 2**22


def _fully_observed(shape: tuple[int, ...], min_models: int) -> MatrixDiagnostics:
    """The diagnostics of a matrix with every cell observed: one component."""
    n_q, n_m = shape
    n_observed = np.full(n_q, n_m, dtype=np.int64)
    return MatrixDiagnostics(
        n_cells=int(n_q * n_m), n_missing=0, min_models=min_models, n_observed=n_observed,
        low_coverage=n_observed < min_models, question_component=np.zeros(n_q, dtype=np.int64),
        model_component=np.zeros(n_m, dtype=np.int64), n_components=1,
        n_observed_models=np.full(n_m, n_q, dtype=np.int64),
    )


def _blockwise(R: NDArray[np.generic] | FractionMatrix, min_models: int) -> MatrixDiagnostics:
    """:func:`matrix_diagnostics` of a float matrix, a block of rows at a time."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n_q, n_m = R.shape
    n_observed = np.empty(n_q, dtype=np.int64)
    n_observed_models = np.zeros(n_m, dtype=np.int64)
    first = np.full(n_q, -1, dtype=np.int64)  # each question's first observed model
    models = np.arange(n_m, dtype=np.int64)
    root = models.copy()  # a representative model of each model's component so far
    step = max(1, BLOCK_CELLS // n_m)
    for start in range(0, n_q, step):
        observed = ~np.isnan(R[start:start + step])
        n_observed[start:start + step] = observed.sum(axis=1)
        n_observed_models += observed.sum(axis=0)
        has = observed.any(axis=1)
        lead = np.where(has, observed.argmax(axis=1), -1)
        first[start:start + step] = lead
        if observed.all():  # every model meets every other: a star around model 0 says as much
            a, b = np.concatenate([np.zeros(n_m, dtype=np.int64), models]), np.concatenate([models, root])
        else:
            r, c = np.nonzero(observed)
            join = lead[r] != c
            if not join.any():
                continue
            a = np.concatenate([lead[r[join]], models])
            b = np.concatenate([c[join], root])
        graph = coo_matrix((np.ones(a.size, dtype=np.float32), (a, b)), shape=(n_m, n_m))  # duplicates add up
        _, label = connected_components(graph, directed=False)
        lowest = np.full(int(label.max()) + 1, n_m, dtype=np.int64)
        np.minimum.at(lowest, label, models)
        root = lowest[label]
    raw = np.concatenate([np.where(first >= 0, root[np.maximum(first, 0)], n_m + np.arange(n_q)), root])
    labels, n_components = _by_first_appearance(raw)
    return MatrixDiagnostics(
        n_cells=int(n_q * n_m),
        n_missing=int(n_q * n_m - n_observed.sum()),
        min_models=min_models,
        n_observed=n_observed,
        low_coverage=n_observed < min_models,
        question_component=labels[:n_q],
        model_component=labels[n_q:],
        n_components=n_components,
        n_observed_models=n_observed_models,
    )


def _by_first_appearance(raw: NDArray[np.integer]) -> tuple[NDArray[np.int64], int]:
    """Component labels ``raw`` renumbered 0, 1, ... by first appearance, and their count."""
    _, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # components by first node
    relabel = np.empty(order.size, dtype=np.int64)
    relabel[order] = np.arange(order.size, dtype=np.int64)
    return relabel[inverse.reshape(-1)], int(order.size)


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
    labels, n_components = _by_first_appearance(raw)
    n_observed = np.bincount(rows, minlength=n_q).astype(np.int64)
    return MatrixDiagnostics(
        n_cells=int(n_q * n_m),
        n_missing=int(n_q * n_m - rows.size),
        min_models=min_models,
        n_observed=n_observed,
        low_coverage=n_observed < min_models,
        question_component=labels[:n_q],
        model_component=labels[n_q:],
        n_components=n_components,
        n_observed_models=np.bincount(cols, minlength=n_m).astype(np.int64),
    )
