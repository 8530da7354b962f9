"""Partial credit stored exactly as fractions k/n: uint8 numerators, one denominator, a bit-packed mask.

Real partial credit is almost always a fraction with a small denominator
(pass@1 over n samples, the share of n epochs of a harness solved). Such a
matrix needs one byte a cell for the numerators plus one bit a cell for the
observed mask, where float32 with NaN needs four bytes (and cannot even hold
k/10 exactly) and float64 eight.

:class:`FractionMatrix` is that form in memory. It is read-only and reads as
the float64 matrix it stands for a block of rows at a time (``M[rows]``:
credit ``k / n`` with NaN where not observed), which is all EIP, the
accuracy baselines and the diagnostics need, so they score it without a
float64 copy of the whole matrix.

Exactness: a float64 credit ``v`` is stored as ``k`` over ``n`` only when
``float(k) / float(n) == v`` exactly (IEEE division is correctly rounded, so
``k / n`` is the nearest double to the rational k/n, the same double a
parser gives for its decimal text); :func:`fraction_denominator` checks
every distinct value, so reading back gives every cell bit for bit.

References
----------
EIP paper, section 2.4 (partial credit ``A_c``); a missing cell is neither
a success nor a failure (section 2.2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray

__all__ = [
    "MAX_DENOMINATOR",
    "FractionMatrix",
    "combine_denominators",
    "fraction_denominator",
    "pack_observed",
    "to_numerators",
]

#: Largest denominator a uint8 numerator can carry (numerators 0..n).
MAX_DENOMINATOR = 255

ERR_DENOMINATOR = "denominator must be an integer in [1, {max}]; got {value!r}"
ERR_NUMERATORS = "numerators must be a 2-D uint8 array; got dtype {dtype} and shape {shape}"
ERR_NUMERATOR_RANGE = (
    "numerators has {value} at (question {row}, model {column}), above the denominator {denominator}"
)
ERR_BITS = "observed_bits must be uint8 of shape {expected} (np.packbits of the mask along axis 1); got {dtype} {shape}"
ERR_NOT_FRACTION = (
    "credit {value!r} at (question {row}, model {column}) is not a multiple of 1/{denominator} "
    "exactly (nearest: {k}/{denominator} = {nearest!r})"
)
ERR_NO_OBSERVED_MODEL = (
    "the fraction matrix has models with no observed cell (columns {columns}); drop them before scoring"
)

#: Cells per block of rows when a fraction matrix is checked.
_BLOCK_CELLS = 2**22
_BITORDER: Literal["little"] = "little"


def fraction_denominator(values: ArrayLike) -> int | None:
    """The smallest denominator n <= 255 such that every credit is exactly k/n, or None.

    Parameters
    ----------
    values : array-like of float
        Observed credits in [0, 1] (no NaN), any shape.

    Returns
    -------
    int or None
        1 when every value is 0 or 1 (or there is none); else the least
        common multiple of each distinct value's smallest denominator when
        it is at most ``MAX_DENOMINATOR`` (255), every value being
        ``float(k) / n`` exactly for an integer k; None otherwise (more than
        256 distinct values, a value no small fraction gives exactly, a
        value outside [0, 1] or NaN).

    Notes
    -----
    Only the distinct values are examined: at most n + 1 <= 256 of them can
    be multiples of 1/n. Denominators of separate blocks combine with
    :func:`combine_denominators`: if ``v == float(k) / a`` then ``v ==
    float(k * m / a) / m`` for any multiple ``m`` of ``a`` (both are the
    double nearest the same rational).

    Examples
    --------
    >>> fraction_denominator([0.0, 0.3, 0.7, 1.0])
    10
    >>> fraction_denominator([0.5, 1 / 3])
    6
    >>> fraction_denominator([0.333]) is None
    True
    """
    distinct = np.unique(np.asarray(values, dtype=np.float64))
    if distinct.size > MAX_DENOMINATOR + 1:
        return None
    if distinct.size and not bool(np.all((distinct >= 0) & (distinct <= 1))):
        return None  # NaN or out of range: not a credit this form stores
    candidates = np.arange(1, MAX_DENOMINATOR + 1, dtype=np.float64)
    exact = np.rint(distinct[:, None] * candidates) / candidates == distinct[:, None]
    if not bool(exact.any(axis=1).all()):
        return None
    n = 1
    for smallest in (exact.argmax(axis=1) + 1).tolist():
        n = math.lcm(n, int(smallest))
        if n > MAX_DENOMINATOR:
            return None
    return n


def combine_denominators(*denominators: int | None) -> int | None:
    """The denominator of blocks whose own denominators are given.

    Their lcm, or None when one is None or the lcm exceeds ``MAX_DENOMINATOR``
    (see :func:`fraction_denominator`).
    """
    n = 1
    for d in denominators:
        if d is None:
            return None
        n = math.lcm(n, int(d))
        if n > MAX_DENOMINATOR:
            return None
    return n


def to_numerators(credit: ArrayLike, denominator: int, observed: ArrayLike | None = None) -> NDArray[np.uint8]:
    """Numerators k (uint8) of ``credit = k / denominator``, checked exact cell by cell.

    Parameters
    ----------
    credit : array-like of float, shape (n_rows, n_models)
        Credit in [0, 1]; cells where ``observed`` is False (or NaN) are
        ignored and get numerator 0.
    denominator : int
        n in [1, 255].
    observed : array-like of bool, same shape, optional
        Default: every non-NaN cell.

    Returns
    -------
    ndarray of uint8, same shape

    Raises
    ------
    ValueError
        If a cell is not exactly k/n (``ERR_NOT_FRACTION``, first such cell
        by row) or ``denominator`` is out of range.
    """
    n = _check_denominator(denominator)
    values = np.asarray(credit, dtype=np.float64)
    mask = ~np.isnan(values) if observed is None else np.asarray(observed, dtype=bool) & ~np.isnan(values)
    k = np.rint(np.where(mask, values, 0.0) * n)
    bad = mask & ~(k / n == values)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        kk = int(k[row, column])
        raise ValueError(ERR_NOT_FRACTION.format(value=float(values[row, column]), row=row, column=column,
                                                 denominator=n, k=kk, nearest=kk / n))
    numerators: NDArray[np.uint8] = np.asarray(k, dtype=np.uint8)
    return numerators


def _check_denominator(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= int(value) <= MAX_DENOMINATOR:
        raise ValueError(ERR_DENOMINATOR.format(max=MAX_DENOMINATOR, value=value))
    return int(value)


def pack_observed(observed: ArrayLike) -> NDArray[np.uint8]:
    """A bool mask (n_rows, n_models) bit-packed along the models: shape (n_rows, ceil(n_models / 8))."""
    return np.packbits(np.asarray(observed, dtype=bool), axis=1, bitorder=_BITORDER)


@dataclass(frozen=True, eq=False)
class FractionMatrix:
    """A response matrix of fractions k/n, stored compactly (see the module notes).

    Parameters
    ----------
    numerators : ndarray of uint8, shape (n_questions, n_models)
        k of each cell, 0..``denominator``; ignored where not observed.
    denominator : int
        n in [1, 255]; credit = k / n.
    observed_bits : ndarray of uint8, shape (n_questions, ceil(n_models / 8)), or None
        The observed mask bit-packed along the models (``np.packbits(mask,
        axis=1, bitorder="little")``); None = every cell observed.

    Attributes
    ----------
    shape : tuple of int
        (n_questions, n_models).
    dtype : numpy.dtype
        float64: the dtype of the blocks ``M[rows]`` gives.

    Raises
    ------
    ValueError
        If an array has the wrong dtype or shape, the denominator is out of
        range or a numerator exceeds it (the message names the cell).

    Examples
    --------
    >>> import numpy as np
    >>> m = FractionMatrix(np.array([[3, 10], [0, 7]], dtype=np.uint8), 10,
    ...                    pack_observed([[True, True], [False, True]]))
    >>> m[0:2].tolist()
    [[0.3, 1.0], [nan, 0.7]]
    """

    numerators: NDArray[np.uint8]
    denominator: int
    observed_bits: NDArray[np.uint8] | None = None

    def __post_init__(self) -> None:
        k = self.numerators
        if not isinstance(k, np.ndarray) or k.dtype != np.uint8 or k.ndim != 2:
            raise ValueError(ERR_NUMERATORS.format(dtype=getattr(k, "dtype", type(k).__name__),
                                                   shape=getattr(k, "shape", None)))
        n = _check_denominator(self.denominator)
        object.__setattr__(self, "denominator", n)
        bits = self.observed_bits
        expected = (k.shape[0], (k.shape[1] + 7) // 8)
        if bits is not None and (not isinstance(bits, np.ndarray) or bits.dtype != np.uint8
                                 or bits.shape != expected):
            raise ValueError(ERR_BITS.format(expected=expected, dtype=getattr(bits, "dtype", type(bits).__name__),
                                             shape=getattr(bits, "shape", None)))
        if n < MAX_DENOMINATOR:
            step = max(1, _BLOCK_CELLS // max(1, k.shape[1]))
            for start in range(0, k.shape[0], step):
                block = k[start:start + step]
                if int(block.max(initial=0)) > n:
                    row, column = (int(i) for i in np.argwhere(block > n)[0])
                    raise ValueError(ERR_NUMERATOR_RANGE.format(value=int(block[row, column]), row=start + row,
                                                                column=column, denominator=n))

    @classmethod
    def from_dense(cls, R: ArrayLike, denominator: int | None = None) -> FractionMatrix:
        """The fraction form of a float matrix (NaN = not observed).

        ``denominator`` defaults to :func:`fraction_denominator` of the
        observed values; raises ``ValueError`` when there is none or a cell
        is not exactly k/n.
        """
        values = np.asarray(R, dtype=np.float64)
        observed = ~np.isnan(values)
        n = fraction_denominator(values[observed]) if denominator is None else denominator
        if n is None:
            raise ValueError("R is not a matrix of fractions k/n with n <= 255 (see fraction_denominator)")
        bits = None if bool(observed.all()) else pack_observed(observed)
        return cls(to_numerators(values, n, observed), n, bits)

    @property
    def shape(self) -> tuple[int, int]:
        """(n_questions, n_models)."""
        return (int(self.numerators.shape[0]), int(self.numerators.shape[1]))

    @property
    def ndim(self) -> int:
        """Always 2."""
        return 2

    @property
    def size(self) -> int:
        """Cells: n_questions * n_models."""
        return int(self.numerators.size)

    @property
    def dtype(self) -> np.dtype[np.float64]:
        """float64: the dtype of the blocks ``M[rows]`` gives."""
        return np.dtype(np.float64)

    @property
    def nbytes(self) -> int:
        """Bytes held: numerators plus the packed mask."""
        return int(self.numerators.nbytes + (0 if self.observed_bits is None else self.observed_bits.nbytes))

    @property
    def fully_observed(self) -> bool:
        """True when every cell is observed (no mask is kept)."""
        return self.observed_bits is None

    def observed(self, rows: Any = slice(None)) -> NDArray[np.bool_]:
        """The observed mask of ``rows`` (a slice, an integer array or an int) as bool."""
        n_models = self.shape[1]
        if self.observed_bits is None:
            picked = self.numerators[rows]
            return np.ones(picked.shape, dtype=bool)
        bits: NDArray[np.uint8] = self.observed_bits[rows]
        axis = 0 if bits.ndim == 1 else 1
        mask: NDArray[np.bool_] = np.unpackbits(bits, axis=axis, count=n_models, bitorder=_BITORDER).astype(bool)
        return mask

    def __getitem__(self, rows: Any) -> FloatArray:
        """Rows ``rows`` (a slice, an integer array or an int) as float64 credit with NaN where not observed."""
        if isinstance(rows, tuple):
            raise TypeError("a FractionMatrix is indexed by rows only (M[rows]); use to_dense() for more")
        block: FloatArray = self.numerators[rows] / np.float64(self.denominator)
        if self.observed_bits is not None:
            block[~self.observed(rows)] = np.nan
        return block

    def to_dense(self) -> FloatArray:
        """The whole matrix as float64 with NaN where not observed (8 bytes a cell)."""
        return self[:]

    def column_counts(self) -> NDArray[np.int64]:
        """Observed cells per model, read a block of rows at a time."""
        n_questions, n_models = self.shape
        if self.observed_bits is None:
            return np.full(n_models, n_questions, dtype=np.int64)
        counts = np.zeros(n_models, dtype=np.int64)
        step = max(1, _BLOCK_CELLS // max(1, n_models))
        for start in range(0, n_questions, step):
            counts += self.observed(slice(start, start + step)).sum(axis=0)
        return counts

    def row_has_observed(self) -> NDArray[np.bool_]:
        """Questions with at least one observed cell."""
        if self.observed_bits is None:
            return np.ones(self.shape[0], dtype=bool)
        return np.asarray(self.observed_bits.any(axis=1), dtype=bool)

    def take(self, rows: NDArray[np.intp] | None = None, columns: NDArray[np.intp] | None = None) -> FractionMatrix:
        """A new FractionMatrix of the given rows and columns (a copy of those cells)."""
        k = self.numerators if rows is None else self.numerators[rows]
        bits = self.observed_bits
        if bits is not None and rows is not None:
            bits = bits[rows]
        if columns is not None:
            k = k[:, columns]
            if bits is not None:
                step = max(1, _BLOCK_CELLS // max(1, self.shape[1]))
                whole = FractionMatrix(self.numerators if rows is None else self.numerators[rows], self.denominator,
                                       bits)
                packed = [pack_observed(whole.observed(slice(s, s + step))[:, columns])
                          for s in range(0, bits.shape[0], step)]
                bits = np.concatenate(packed) if packed else np.empty((0, (len(columns) + 7) // 8), np.uint8)
        return FractionMatrix(np.ascontiguousarray(k), self.denominator, bits)


def check_fraction_models(m: FractionMatrix, *, name: str = "R") -> FractionMatrix:
    """Refuse a fraction matrix with an empty shape or a model with no observed cell.

    As :func:`scoring._validation.check_response_matrix` does for arrays.
    """
    if m.shape[0] == 0 or m.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {m.shape}")
    if m.observed_bits is not None:
        counts = m.column_counts()
        if (counts == 0).any():
            raise ValueError(ERR_NO_OBSERVED_MODEL.format(columns=np.flatnonzero(counts == 0).tolist()[:10]))
    return m
