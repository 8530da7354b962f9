"""Helpers shared by the analyses: explained correlations, summaries, checks.

An undefined statistic is never a silent NaN: :class:`Correlation` carries
``value=None`` and an ``undefined_reason`` instead.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray

#: The ``scipy.stats`` function per method: ``test(x, y)`` returning a result whose first two
#: items are the statistic and the p-value. Looked up when called (scipy.stats costs ~0.5 s to
#: import, and this module is imported when the site starts).
_CORRELATIONS: dict[str, str] = {"spearman": "spearmanr", "pearson": "pearsonr", "kendall": "kendalltau"}


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient that may be undefined, with the reason.

    Attributes
    ----------
    method : {"spearman", "pearson", "kendall"}
        Spearman's rho, Pearson's r or Kendall's tau-b (scipy.stats).
    value : float or None
        The coefficient in [-1, 1]; None when undefined.
    p_value : float or None
        Two-sided p-value from scipy.stats; None when undefined.
    n : int
        Number of paired values used.
    undefined_reason : str or None
        Why the coefficient is undefined (fewer than 2 pairs, or a constant
        vector); None when it is defined.
    """

    method: str
    value: float | None
    p_value: float | None
    n: int
    undefined_reason: str | None = None

    @property
    def defined(self) -> bool:
        """True when ``value`` is a number."""
        return self.value is not None


def correlation(x: ArrayLike, y: ArrayLike, *, method: str = "spearman") -> Correlation:
    """Correlate two equal-length vectors, explaining when it is undefined.

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Paired values; a pair where either is NaN is dropped first.
    method : {"spearman", "pearson", "kendall"}, default "spearman"
        ``scipy.stats.spearmanr``, ``pearsonr`` or ``kendalltau`` (tau-b).

    Returns
    -------
    Correlation
        ``value=None`` with an ``undefined_reason`` when fewer than 2 pairs
        remain or either vector is constant over them (for Pearson, also
        constant within rounding: a spread of at most 8 units in the last
        place of its largest value, where the standard deviation in the
        denominator is rounding noise).

    Raises
    ------
    ValueError
        If ``method`` is unknown or ``x`` and ``y`` are not 1-D of equal
        length.

    Examples
    --------
    >>> correlation([1, 2, 3], [1, 3, 2]).value
    0.5
    >>> correlation([1, 2, 3], [5, 5, 5]).undefined_reason
    'the second vector is constant (5) over the 3 pairs'
    """
    if method not in _CORRELATIONS:
        raise ValueError(f"method must be one of {sorted(_CORRELATIONS)}; got {method!r}")
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length; got shapes {xa.shape} and {ya.shape}")
    both = ~(np.isnan(xa) | np.isnan(ya))
    xa, ya = xa[both], ya[both]
    n = int(xa.size)
    if n < 2:
        return Correlation(method, None, None, n, f"fewer than 2 paired values (n = {n})")
    for name, v in (("first", xa), ("second", ya)):
        if np.all(v == v[0]):
            return Correlation(method, None, None, n, f"the {name} vector is constant ({v[0]:.6g}) over the {n} pairs")
        spread = float(np.max(v) - np.min(v))
        if method == "pearson" and spread <= 8 * np.finfo(np.float64).eps * float(np.max(np.abs(v))):
            # its standard deviation, the denominator, is rounding noise: the coefficient would be noise too
            return Correlation(method, None, None, n, f"the {name} vector is constant within rounding "
                                                      f"(spread {spread:.3g} around {v[0]:.6g}) over the {n} pairs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from scipy import stats

        test: Callable[[FloatArray, FloatArray], Sequence[Any]] = getattr(stats, _CORRELATIONS[method])
        res = test(xa, ya)
    value, p = float(res[0]), float(res[1])
    if not math.isfinite(value):  # pragma: no cover - guarded by the checks above
        return Correlation(method, None, None, n, "scipy returned a non-finite coefficient")
    return Correlation(method, value, p if math.isfinite(p) else None, n, None)


@dataclass(frozen=True)
class Summary:
    """Mean, sample standard deviation, min and max of the defined values.

    Attributes
    ----------
    mean, std, min, max : float or None
        Over the defined values; ``std`` uses ddof=1 (sample standard
        deviation) and is None with fewer than 2 values; all None when no
        value is defined.
    n : int
        Number of defined values summarised.
    n_undefined : int
        Number of values left out because they were undefined.
    """

    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    n: int
    n_undefined: int


def summarise(values: Sequence[float | None]) -> Summary:
    """Summarise the non-None values of a sequence (see :class:`Summary`).

    Examples
    --------
    >>> s = summarise([1.0, None, 3.0])
    >>> s.mean, s.n, s.n_undefined
    (2.0, 2, 1)
    """
    defined = np.array([v for v in values if v is not None], dtype=np.float64)
    n_undef = len(values) - defined.size
    if defined.size == 0:
        return Summary(None, None, None, None, 0, n_undef)
    std = float(defined.std(ddof=1)) if defined.size >= 2 else None
    return Summary(float(defined.mean()), std, float(defined.min()), float(defined.max()), int(defined.size), n_undef)


def check_labels(
    labels: ArrayLike | Sequence[Hashable], *, name: str, length: int, per: str = "question"
) -> NDArray[np.object_]:
    """Return ``labels`` as a 1-D object array of the given length or raise ValueError."""
    arr = np.asarray(labels, dtype=object)
    if arr.ndim != 1 or arr.size != length:
        raise ValueError(f"{name} must be 1-D with {length} entries (one per {per}); got shape {arr.shape}")
    return arr


def check_names(names: Iterable[object] | None, *, n: int, default_prefix: str = "model") -> tuple[str, ...]:
    """Return model names as a tuple of str (default ``model_0`` ...)."""
    if names is None:
        return tuple(f"{default_prefix}_{i}" for i in range(n))
    out = tuple(str(x) for x in names)
    if len(out) != n:
        raise ValueError(f"model_names must have {n} entries (one per model); got {len(out)}")
    if len(set(out)) != n:
        raise ValueError("model_names must be unique")
    return out


def unique_in_order(labels: Iterable[Hashable]) -> list[Hashable]:
    """Distinct labels in order of first appearance."""
    seen: dict[Hashable, None] = {}
    for lab in labels:
        seen.setdefault(lab, None)
    return list(seen)
