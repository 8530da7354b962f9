"""Input checks shared by every method in :mod:`scoring`.

The response matrix convention
------------------------------
``R : array-like of shape (n_questions, n_models)``

* float dtype: credit in [0, 1]; ``NaN`` means "this model was never asked
  this question" (neither a success nor a failure).
* bool or unsigned/signed integer dtype: binary 0/1 credit with every cell
  observed. This is the compact form for very large matrices (``uint8`` is
  1 byte a cell); it is never copied to float.
* :class:`scoring.fraction.FractionMatrix`: exact fractions k/n (uint8
  numerators, a bit-packed observed mask) for very large partial-credit
  matrices; the methods that take it read it a block of rows at a time.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from scoring._typing import ResponseArray
from scoring.fraction import FractionMatrix, check_fraction_models

_INTEGER_KINDS = "buil"
#: Cells per block of rows when a matrix with missing cells is checked.
_BLOCK_CELLS = 2**20


def check_response_matrix(R: ArrayLike, *, name: str = "R", min_models: int = 1) -> ResponseArray:
    """Validate a response matrix and return it as an ndarray.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed (float dtypes only).
    name : str, default "R"
        Parameter name used in error messages.
    min_models : int, default 1
        Fewest models (columns) accepted.

    Returns
    -------
    ndarray of shape (n_questions, n_models)
        Float input as float64 (float32 and float16 are kept as they are;
        a copy is made only when the input is not already an ndarray);
        bool/integer input unchanged (binary, fully observed).

    Raises
    ------
    ValueError
        If R is not two-dimensional, is empty, has a non-numeric dtype, holds
        credit outside [0, 1] or infinite values, or if a model has no
        observed cell.
    """
    arr = np.asarray(R)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold numbers; got non-numeric values") from None
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-dimensional (n_questions, n_models); got shape {arr.shape}"
        )
    n_questions, n_models = arr.shape
    if n_questions == 0 or n_models == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    if n_models < min_models:
        raise ValueError(f"{name} needs at least {min_models} models (columns); got {n_models}")
    kind = arr.dtype.kind
    if kind in _INTEGER_KINDS:
        if kind == "b":
            return arr
        lo, hi = arr.min(), arr.max()
        if lo < 0 or hi > 1:
            bad = np.argwhere((arr < 0) | (arr > 1))[0]
            raise ValueError(
                f"{name} has integer credit {int(arr[tuple(bad)])} at (question {bad[0]}, model {bad[1]});"
                " integer matrices must be 0/1"
            )
        return arr
    if kind != "f":
        raise ValueError(f"{name} must have a numeric dtype; got {arr.dtype}")
    if arr.dtype not in (np.float64, np.float32, np.float16):
        arr = arr.astype(np.float64)
    # Fast path: min and max propagate NaN, so finite extremes inside [0, 1]
    # mean every cell is observed, finite and in range (two cheap passes).
    lo, hi = arr.min(), arr.max()
    if lo >= 0 and hi <= 1:
        return arr
    # Slow path (missing cells or a bad value), block by block of rows so that
    # no mask is as large as the matrix: first any infinity, then the range.
    step = max(1, _BLOCK_CELLS // n_models)
    for start in range(0, n_questions, step):
        block = arr[start:start + step]
        infinite = np.isinf(block)
        if infinite.any():
            bad = np.argwhere(infinite)[0]
            raise ValueError(
                f"{name} has an infinite value at (question {start + bad[0]}, model {bad[1]})"
            )
    observed_per_model = np.zeros(n_models, dtype=np.int64)
    for start in range(0, n_questions, step):
        block = arr[start:start + step]
        with np.errstate(invalid="ignore"):
            out_of_range = (block < 0) | (block > 1)
        if out_of_range.any():
            bad = np.argwhere(out_of_range)[0]
            raise ValueError(
                f"{name} has credit {float(block[tuple(bad)])!r} at (question {start + bad[0]}, model {bad[1]});"
                " credit must lie in [0, 1]"
            )
        observed_per_model += block.shape[0] - np.isnan(block).sum(axis=0)
    if (observed_per_model == 0).any():
        empty = np.flatnonzero(observed_per_model == 0)
        raise ValueError(
            f"{name} has models with no observed cell (columns {empty.tolist()[:10]}); "
            "drop them before scoring"
        )
    return arr


def check_response_source(
    R: ArrayLike | FractionMatrix, *, name: str = "R", min_models: int = 1
) -> ResponseArray | FractionMatrix:
    """:func:`check_response_matrix`, passing a :class:`~scoring.fraction.FractionMatrix` through.

    A fraction matrix was checked cell by cell when it was built; here only
    its shape, ``min_models`` and that every model has an observed cell are
    checked. Its float64 form is read a block of rows at a time by the
    methods that accept it (EIP, the accuracy baselines, the diagnostics).
    """
    if isinstance(R, FractionMatrix):
        if R.shape[1] < min_models:
            raise ValueError(f"{name} needs at least {min_models} models (columns); got {R.shape[1]}")
        return check_fraction_models(R, name=name)
    return check_response_matrix(R, name=name, min_models=min_models)


def check_in_open_interval(value: float, *, name: str, low: float, high: float) -> float:
    """Return ``float(value)`` if ``low < value < high`` else raise ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {value!r}") from None
    if not (low < v < high):
        raise ValueError(f"{name} must lie in ({low}, {high}); got {value!r}")
    return v


def check_positive(value: float, *, name: str) -> float:
    """Return ``float(value)`` if it is finite and > 0 else raise ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number; got {value!r}")
    return v


def check_positive_int(value: object, *, name: str) -> int:
    """Return ``int(value)`` if it is an integer >= 1 else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def as_rng(rng: object) -> np.random.Generator:
    """Turn ``rng: Generator | int | None`` into a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator, an int seed or None; got {rng!r}")


def _bounds_text(low: float | None, high: float | None, *, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    return " and ".join(parts)


def check_int(
    value: object, *, name: str, low: int | None = None, high: int | None = None, message: str | None = None
) -> int:
    """Return ``int(value)`` for an integer (not a bool) in ``[low, high]``.

    Parameters
    ----------
    value : object
        The parameter's value.
    name : str
        The parameter's name, for the message.
    low, high : int or None, default None
        Inclusive bounds; ``None`` leaves that side open.
    message : str or None, default None
        The caller's own message (a module constant that tests match), formatted
        with ``value=value``; ``None`` writes the standard one.

    Raises
    ------
    ValueError
        ``"<name> must be an integer >= <low>[ and <= <high>]; got <value>"``
        (or ``message``).
    """
    number = int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else None
    if number is None or (low is not None and number < low) or (high is not None and number > high):
        if message is not None:
            raise ValueError(message.format(value=value))
        bounds = _bounds_text(low, high, low_open=False, high_open=False)
        raise ValueError(f"{name} must be an integer{' ' + bounds if bounds else ''}; got {value!r}")
    return number


def check_number(
    value: object,
    *,
    name: str,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    message: str | None = None,
) -> float:
    """Return ``float(value)`` for a finite real number (not a bool) within the bounds.

    The comparison is exact (``value == low`` is refused when ``low_open``):
    no rounding decides a bound.

    Parameters
    ----------
    value : object
        The parameter's value.
    name : str
        The parameter's name, for the message.
    low, high : float or None, default None
        Bounds; ``None`` leaves that side unbounded.
    low_open, high_open : bool, default False
        Whether the bound itself is refused.
    message : str or None, default None
        The caller's own message, formatted with ``value=value``; ``None``
        writes the standard one.

    Raises
    ------
    ValueError
        ``"<name> must be a number > <low> and < <high>; got <value>"`` (the
        signs follow the bounds).
    """
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    v = float(value) if ok else float("nan")  # type: ignore[arg-type]
    if (not ok or not np.isfinite(v)
            or (low is not None and (v < low or (low_open and v == low)))
            or (high is not None and (v > high or (high_open and v == high)))):
        if message is not None:
            raise ValueError(message.format(value=value))
        bounds = _bounds_text(low, high, low_open=low_open, high_open=high_open)
        raise ValueError(f"{name} must be a number{' ' + bounds if bounds else ''}; got {value!r}")
    return v
