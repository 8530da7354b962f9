"""Baselines the paper compares EIP with: Simple Rank and accuracy variants.

All functions take the response matrix ``R`` of shape
``(n_questions, n_models)`` (credit in [0, 1], ``NaN`` = not observed;
bool/integer 0/1 = fully observed). A missing cell is neither a success nor a
failure: every count and mean runs over observed cells only.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray, ResponseArray
from scoring._validation import check_response_source
from scoring.fraction import FractionMatrix

__all__ = [
    "DatasetWeights",
    "accuracy",
    "dataset_difficulty_weights",
    "question_accuracy_difficulty",
    "simple_rank",
    "weighted_accuracy",
]

ERR_ALL_WEIGHTS_ZERO = (
    "every dataset has mean accuracy 1 (all models got every observed question right), "
    "so every weight w_d = 1 - abar_d is 0 and the weighted accuracy is undefined"
)


@dataclass(frozen=True)
class DatasetWeights:
    """Per-dataset difficulty weights of section 4's weighted accuracy.

    Attributes
    ----------
    labels : tuple
        Dataset labels, sorted (numbers, then strings, then others by repr).
    mean_accuracy : ndarray of shape (n_datasets,)
        ``abar_d`` in [0, 1]: mean over models of each model's accuracy on
        ``d``; ``NaN`` when no model has an observed cell in ``d``.
    weights : ndarray of shape (n_datasets,)
        ``w_d = 1 - abar_d`` in [0, 1]; ``NaN`` where ``abar_d`` is.
    per_model_accuracy : ndarray of shape (n_datasets, n_models)
        ``acc_m,d``: model ``m``'s mean credit over its observed cells in
        ``d``; ``NaN`` when it has none.
    """

    labels: tuple[Hashable, ...]
    mean_accuracy: FloatArray
    weights: FloatArray
    per_model_accuracy: FloatArray


#: Cells per block of rows when a float matrix is summed: only the block is
#: copied (to float64, NaN -> 0), never the whole matrix.
_BLOCK_CELLS = 2**20


def _observed_sums(R: ResponseArray | FractionMatrix, axis: int) -> tuple[FloatArray, FloatArray]:
    """Sum of credit and count of observed cells along ``axis`` (float64).

    Integer input is summed as int64 (exact); float input block by block of
    rows, each block cast to float64 with NaN -> 0, so a compact float32
    matrix gives the same sums as its float64 copy and no temporary is as
    large as the matrix.
    """
    if not isinstance(R, FractionMatrix) and R.dtype.kind in "buil":
        total = R.sum(axis=axis, dtype=np.int64).astype(np.float64)
        count = np.full(total.shape, R.shape[axis], dtype=np.float64)
        return total, count
    n_rows, n_columns = R.shape
    if axis == 1:
        total, count = np.empty(n_rows), np.empty(n_rows)
    else:
        total, count = np.zeros(n_columns), np.zeros(n_columns)
    step = max(1, _BLOCK_CELLS // max(1, n_columns))
    for start in range(0, n_rows, step):
        block = R[start:start + step].astype(np.float64)
        missing = np.isnan(block)
        block[missing] = 0.0
        if axis == 1:
            total[start:start + step] = block.sum(axis=1)
            count[start:start + step] = n_columns - missing.sum(axis=1)
        else:
            total += block.sum(axis=0)
            count += block.shape[0] - missing.sum(axis=0)
    return total, count


def simple_rank(R: ArrayLike | FractionMatrix) -> FloatArray:
    """Simple Rank difficulty: failures per question over observed cells.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only).

    Returns
    -------
    ndarray of float64, shape (n_questions,)
        ``sum over observed models of (1 - credit)``, in [0, n_models]. Higher
        = harder. With binary credit this is the number of models that
        answered wrongly; with partial credit it is the total missing credit.
        A question with no observed cell gets 0.

    Raises
    ------
    ValueError
        If ``R`` fails :func:`scoring._validation.check_response_matrix`.

    Notes
    -----
    A missing response is not a failure. With missing cells the count is
    biased towards "easy" for questions that fewer models saw (a question
    nobody saw scores 0, the easiest possible); use
    :func:`question_accuracy_difficulty` when coverage differs. Integer
    counts make ties common; :func:`scoring.pairs.harder_of_pairs` reports
    them as ``TIE``.

    References
    ----------
    EIP paper, section 3.3 ("Simple Rank determines question difficulty
    based solely on the number of models that answered incorrectly").

    Examples
    --------
    >>> simple_rank([[1, 0, 0], [1, 1, 0]]).tolist()
    [2.0, 1.0]
    """
    R = check_response_source(R)
    total, count = _observed_sums(R, axis=1)
    failures: FloatArray = count - total
    return failures


def accuracy(R: ArrayLike | FractionMatrix) -> FloatArray:
    """Standard accuracy: mean credit per model over its observed cells.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only).

    Returns
    -------
    ndarray of float64, shape (n_models,)
        Mean credit in [0, 1].

    Raises
    ------
    ValueError
        If ``R`` fails :func:`scoring._validation.check_response_matrix`
        (including a model with no observed cell).

    References
    ----------
    EIP paper, section 4 ("Standard accuracy: raw percentage of correct
    answers").

    Examples
    --------
    >>> accuracy([[1.0, 0.0], [0.5, float("nan")]]).tolist()
    [0.75, 0.0]
    """
    R = check_response_source(R)
    total, count = _observed_sums(R, axis=0)
    mean_credit: FloatArray = total / count
    return mean_credit


def question_accuracy_difficulty(R: ArrayLike | FractionMatrix) -> FloatArray:
    """Accuracy-based difficulty: 1 - mean credit per question.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only).

    Returns
    -------
    ndarray of float64, shape (n_questions,)
        ``1 - mean credit over the observed models`` in [0, 1], higher =
        harder; ``NaN`` for a question with no observed cell.

    Raises
    ------
    ValueError
        If ``R`` fails :func:`scoring._validation.check_response_matrix`.

    References
    ----------
    EIP paper, sections 3.3 and 4 (accuracy-based baselines).

    Examples
    --------
    >>> question_accuracy_difficulty([[1, 0, 0, 0], [1, 1, 1, 0]]).tolist()
    [0.75, 0.25]
    """
    R = check_response_source(R)
    total, count = _observed_sums(R, axis=1)
    out = np.full(total.shape, np.nan)
    seen = count > 0
    out[seen] = 1.0 - total[seen] / count[seen]
    return out


def _label_sort_key(x: Hashable) -> tuple[int, float, str]:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return (0, float(x), "")
    if isinstance(x, str):
        return (1, 0.0, x)
    return (2, 0.0, repr(x))


def _check_groups(
    groups: ArrayLike | Sequence[Hashable], n_questions: int
) -> tuple[tuple[Hashable, ...], NDArray[np.int64]]:
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1 or arr.shape[0] != n_questions:
        raise ValueError(
            f"groups must have shape ({n_questions},), one label per question; "
            f"got shape {arr.shape}"
        )
    values = [x.item() if isinstance(x, np.generic) else x for x in arr.tolist()]
    for i, x in enumerate(values):
        if x is None or (isinstance(x, float) and x != x):
            raise ValueError(f"groups has a missing label at question {i}")
        try:
            hash(x)
        except TypeError:
            raise ValueError(f"groups has an unhashable label {x!r} at question {i}") from None
    labels = tuple(sorted(set(values), key=_label_sort_key))
    index = {g: k for k, g in enumerate(labels)}
    return labels, np.fromiter((index[x] for x in values), dtype=np.int64, count=n_questions)


def dataset_difficulty_weights(R: ArrayLike | FractionMatrix, groups: ArrayLike | Sequence[Hashable]) -> DatasetWeights:
    """Dataset weights ``w_d = 1 - abar_d`` of the weighted-accuracy baseline.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only).
    groups : array-like of shape (n_questions,)
        Dataset label of each question (any hashable values, no missing).

    Returns
    -------
    DatasetWeights

    Raises
    ------
    ValueError
        If ``R`` is invalid, or ``groups`` has the wrong shape, a missing or an
        unhashable label.

    Notes
    -----
    ``abar_d`` is the unweighted mean over models of ``acc_m,d`` (each model's
    mean credit over its observed cells in ``d``), so every model counts
    once whatever its coverage; models with no observed cell in ``d`` are
    left out of that mean.

    References
    ----------
    EIP paper, section 4, baseline 2: "weight w_d = 1 - abar_d for dataset
    d, where abar_d is average accuracy of all models on that dataset".
    """
    R = check_response_source(R)
    labels, idx = _check_groups(groups, R.shape[0])
    return _dataset_weights_kernel(R, labels, idx)


def _dataset_weights_kernel(
    R: ResponseArray | FractionMatrix, labels: tuple[Hashable, ...], idx: NDArray[np.int64]
) -> DatasetWeights:
    n_models = R.shape[1]
    acc = np.full((len(labels), n_models), np.nan)
    order = np.argsort(idx, kind="stable")
    bounds = np.searchsorted(idx[order], np.arange(len(labels) + 1))
    for d in range(len(labels)):
        rows = order[bounds[d]:bounds[d + 1]]
        if rows.size == R.shape[0]:
            total, count = _observed_sums(R, axis=0)  # one dataset: no copy of R
        else:
            total, count = _group_sums(R, rows)
        seen = count > 0
        acc[d, seen] = total[seen] / count[seen]
    defined = ~np.isnan(acc)
    n_defined = defined.sum(axis=1)
    abar = np.full(len(labels), np.nan)
    has = n_defined > 0
    abar[has] = np.where(defined, acc, 0.0).sum(axis=1)[has] / n_defined[has]
    return DatasetWeights(
        labels=labels, mean_accuracy=abar, weights=1.0 - abar, per_model_accuracy=acc
    )


def _group_sums(R: ResponseArray | FractionMatrix, rows: NDArray[np.intp]) -> tuple[FloatArray, FloatArray]:
    """:func:`_observed_sums` (axis 0) of the rows ``rows`` (ascending), gathered a block at a time."""
    n_columns = R.shape[1]
    total, count = np.zeros(n_columns), np.zeros(n_columns)
    step = max(1, _BLOCK_CELLS // max(1, n_columns))
    for start in range(0, rows.size, step):
        block_total, block_count = _observed_sums(R[rows[start:start + step]], axis=0)
        total += block_total
        count += block_count
    return total, count


def weighted_accuracy(R: ArrayLike | FractionMatrix, groups: ArrayLike | Sequence[Hashable]) -> FloatArray:
    """Dataset-difficulty-weighted accuracy (the paper's section 4 baseline).

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only).
    groups : array-like of shape (n_questions,)
        Dataset label of each question (any hashable values, no missing).

    Returns
    -------
    ndarray of float64, shape (n_models,)
        ``score_m = sum_d w_d acc_m,d / sum_d w_d`` in [0, 1]: the average of
        model ``m``'s per-dataset accuracies weighted by dataset difficulty
        ``w_d = 1 - abar_d`` (see :func:`dataset_difficulty_weights`). The sums
        run over the datasets where ``m`` has an observed cell. ``NaN`` for a
        model whose datasets all have ``w_d = 0``.

    Raises
    ------
    ValueError
        If ``R`` or ``groups`` is invalid, or if every dataset has weight 0
        (every model got every observed question right), which leaves the
        weighted average undefined for all models.

    Notes
    -----
    A dataset where model ``m`` has no observed cell is left out of ``m``'s
    average (numerator and denominator), rather than counted as 0.

    References
    ----------
    EIP paper, section 4, baseline 2 ("Dataset-difficulty-weighted accuracy:
    weighted average of accuracies on 'Easy' and 'Hard' subsets").

    Examples
    --------
    >>> R = [[1, 1], [1, 0], [0, 0], [1, 0]]
    >>> weighted_accuracy(R, ["easy", "easy", "hard", "hard"]).tolist()
    [0.625, 0.125]
    """
    R = check_response_source(R)
    labels, idx = _check_groups(groups, R.shape[0])
    dw = _dataset_weights_kernel(R, labels, idx)
    w = dw.weights
    if np.all(np.isnan(w) | (w == 0)):
        raise ValueError(ERR_ALL_WEIGHTS_ZERO)
    acc = dw.per_model_accuracy
    use = ~np.isnan(acc) & ~np.isnan(w)[:, None]
    w_used = np.where(use, w[:, None], 0.0)
    numer = (w_used * np.where(use, acc, 0.0)).sum(axis=0)
    denom = w_used.sum(axis=0)
    out = np.full(R.shape[1], np.nan)
    ok = denom > 0
    out[ok] = numer[ok] / denom[ok]
    return out
