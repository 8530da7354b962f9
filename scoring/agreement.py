"""Chance-corrected agreement between raters: Cohen, Fleiss, Krippendorff.

Labels are any hashable values (ints, strings, bools, ...). ``None`` or a
float ``NaN`` means "not labelled". Numpy scalars are turned into Python
scalars first, so ``np.int64(1)``, ``1`` and ``1.0`` are the same label.

An undefined statistic is never a bare ``NaN``: every result carries
``undefined_reason`` (``None`` when the value is defined) and the value
itself is ``None`` when undefined.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "AlphaResult",
    "FleissResult",
    "KappaResult",
    "agreement_rate",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
]

REASON_NO_COMMON_ITEM = "no item labelled by both"
REASON_SINGLE_LABEL = "expected agreement p_e = 1: both raters used only the label {label!r}"
REASON_NO_PAIRABLE_UNIT = "no unit has values from two or more raters"
REASON_ALPHA_SINGLE_VALUE = "expected disagreement D_e = 0: every pairable value is {label!r}"
REASON_FLEISS_MISSING = (
    "ratings has {n_missing} missing values; Fleiss' kappa needs every item rated by "
    "every rater (use krippendorff_alpha for incomplete data)"
)
REASON_FLEISS_FEW_ITEMS = "Fleiss' kappa needs at least 2 items; got {n_items}"
REASON_FLEISS_FEW_RATERS = "Fleiss' kappa needs at least 2 raters per item; got {n_raters}"
REASON_FLEISS_SINGLE_LABEL = "expected agreement p_e = 1: every rating is the label {label!r}"

_LEVELS = ("nominal", "interval")

#: a vector of labels, one per item: any hashable values; None or NaN = not labelled.
LabelsLike: TypeAlias = ArrayLike | Sequence[object]
#: a matrix of labels (raters by units, or items by rater slots).
LabelMatrixLike: TypeAlias = ArrayLike | Sequence[Sequence[object]]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class KappaResult:
    """Cohen's kappa for two raters.

    Attributes
    ----------
    kappa : float or None
        ``(p_o - p_e) / (1 - p_e)``; ``None`` when undefined.
    p_o : float or None
        Observed agreement: share of the ``n`` items given the same label.
        ``None`` when ``n == 0``.
    p_e : float or None
        Agreement expected by chance from the two raters' label marginals.
        ``None`` when ``n == 0``.
    n : int
        Items labelled by both raters.
    undefined_reason : str or None
        Why ``kappa`` is ``None``; ``None`` when it is defined.
    """

    kappa: float | None
    p_o: float | None
    p_e: float | None
    n: int
    undefined_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha.

    Attributes
    ----------
    alpha : float or None
        ``1 - d_o / d_e``; ``None`` when undefined.
    d_o : float or None
        Observed disagreement; ``None`` when no value is pairable.
    d_e : float or None
        Disagreement expected by chance; ``None`` when no value is pairable.
    n_pairable : int
        Pairable values ``n``: values in units that hold two or more values.
    n_units_pairable : int
        Units that hold two or more values.
    level : str
        Level of measurement used (``"nominal"`` or ``"interval"``).
    undefined_reason : str or None
        Why ``alpha`` is ``None``; ``None`` when it is defined.
    """

    alpha: float | None
    d_o: float | None
    d_e: float | None
    n_pairable: int
    n_units_pairable: int
    level: str
    undefined_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class FleissResult:
    """Fleiss' kappa for a fixed number of raters per item.

    Attributes
    ----------
    kappa : float or None
        ``(p_o - p_e) / (1 - p_e)``; ``None`` when undefined.
    p_o : float or None
        Mean over items of the share of agreeing rater pairs (Fleiss'
        ``P-bar``); ``None`` when undefined.
    p_e : float or None
        ``sum_j p_j ** 2`` with ``p_j`` the share of all ratings in label ``j``
        (Fleiss' ``P-bar_e``); ``None`` when undefined.
    n_items : int
    n_raters : int
    undefined_reason : str or None
        Why ``kappa`` is ``None``; ``None`` when it is defined.
    """

    kappa: float | None
    p_o: float | None
    p_e: float | None
    n_items: int
    n_raters: int
    undefined_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- label helpers


def _normalise_label(x: object, *, name: str) -> Hashable | None:
    """Return ``x`` as a Python scalar, or ``None`` when it means "not labelled"."""
    if x is None:
        return None
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and x != x:  # NaN
        return None
    try:
        hash(x)
    except TypeError:
        raise ValueError(f"{name} must hold hashable labels; got {x!r}") from None
    return x


#: Label types :func:`_normalise_label` returns unchanged (exact types: a subclass goes through it).
_PLAIN_LABEL_TYPES = frozenset({int, str, bool})


def _label_sort_key(x: Hashable) -> tuple[int, float, str]:
    """Order labels deterministically: numbers, then strings, then anything else."""
    if isinstance(x, (bool, int, float)):
        return (0, float(x), "")
    if isinstance(x, str):
        return (1, 0.0, x)
    return (2, 0.0, repr(x))


def _as_label_vector(a: LabelsLike, *, name: str) -> list[Hashable | None]:
    arr = np.asarray(a, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (n_items,); got shape {arr.shape}")
    return [_normalise_label(x, name=name) for x in arr.tolist()]


def _as_label_matrix(a: LabelMatrixLike, *, name: str, shape_doc: str) -> list[list[Hashable | None]]:
    arr = np.asarray(a, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional {shape_doc}; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: shape {arr.shape}")
    if arr.dtype == object and isinstance(a, np.ndarray) and a.dtype.kind in "iub":
        plain: list[list[Hashable | None]] = arr.tolist()
        return plain  # Python ints/bools: _normalise_label returns them unchanged
    # None and exact int/str/bool are returned unchanged by _normalise_label: skip the call for them
    return [[x if x is None or type(x) in _PLAIN_LABEL_TYPES else _normalise_label(x, name=name) for x in row]
            for row in arr.tolist()]


def _paired_labels(a: LabelsLike, b: LabelsLike) -> tuple[list[Hashable], list[Hashable]]:
    """Validate two label vectors and keep the items both labelled."""
    la = _as_label_vector(a, name="a")
    lb = _as_label_vector(b, name="b")
    if len(la) != len(lb):
        raise ValueError(f"a and b must have the same length; got {len(la)} and {len(lb)}")
    keep = [(x, y) for x, y in zip(la, lb) if x is not None and y is not None]
    return [x for x, _ in keep], [y for _, y in keep]


# --------------------------------------------------------------------------- two raters


def agreement_rate(a: LabelsLike, b: LabelsLike) -> tuple[float | None, int]:
    """Share of items on which two raters gave the same label.

    Parameters
    ----------
    a, b : array-like of shape (n_items,)
        Labels (any hashable values); ``None`` or ``NaN`` = not labelled.

    Returns
    -------
    p_o : float or None
        Observed agreement in [0, 1] over the items both labelled; ``None``
        when no item was labelled by both.
    n : int
        Items labelled by both.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not one-dimensional, holds an unhashable label,
        or the two lengths differ.

    Examples
    --------
    >>> agreement_rate([0, 1, 1, None], [0, 0, 1, 1])
    (0.6666666666666666, 3)
    """
    xa, xb = _paired_labels(a, b)
    n = len(xa)
    if n == 0:
        return None, 0
    return sum(x == y for x, y in zip(xa, xb)) / n, n


def cohen_kappa(
    a: LabelsLike, b: LabelsLike, *, labels: Sequence[Hashable] | NDArray[Any] | None = None
) -> KappaResult:
    """Cohen's kappa between two raters, over the items both labelled.

    Parameters
    ----------
    a, b : array-like of shape (n_items,)
        Labels (any hashable values); ``None`` or ``NaN`` = not labelled. An
        item unlabelled by either rater is dropped.
    labels : sequence, optional
        The allowed label set. A label outside it raises ``ValueError``
        (scikit-learn instead silently drops such items). Unused labels do not
        change kappa. Default: the labels that occur.

    Returns
    -------
    KappaResult
        ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement
        and ``p_e = sum_k (n_a,k / n) (n_b,k / n)`` the chance agreement from
        the marginals; kappa lies in [-1, 1].

    Raises
    ------
    ValueError
        If the inputs are not one-dimensional, differ in length, hold an
        unhashable label, a label outside ``labels``, or if ``labels`` has a
        duplicate or a missing value.

    Notes
    -----
    Undefined cases are explicit (``kappa=None`` with ``undefined_reason``):

    * ``n == 0``: no item labelled by both;
    * ``p_e == 1``: both raters used one and the same single label, so chance
      alone explains all agreement and kappa is ``0 / 0``. scikit-learn returns
      ``NaN`` here.

    ``p_e == 1`` is tested on integer counts, so it is exact.

    For "which question of a pair is harder" verdicts use
    :func:`scoring.pairs.pair_kappa` instead: this function depends on which
    question of each pair is stored first (the marginals change when pairs
    are reversed), ``pair_kappa`` does not (``kappa = 2 p_o - 1``).

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales.
    Educational and Psychological Measurement 20(1), 37-46.
    EIP paper, section 3.3 (kappa of the consensus with each method).

    Examples
    --------
    >>> r = cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1])
    >>> round(r.kappa, 4), r.p_o, r.p_e
    (0.5, 0.75, 0.5)
    """
    xa, xb = _paired_labels(a, b)
    if labels is not None:
        allowed = _as_label_vector(labels, name="labels")
        if any(x is None for x in allowed):
            raise ValueError("labels must not contain a missing value (None or NaN)")
        if len(set(allowed)) != len(allowed):
            raise ValueError(f"labels has a duplicate label: {list(labels)!r}")
        allowed_set = set(allowed)
        for name, xs in (("a", xa), ("b", xb)):
            for x in xs:
                if x not in allowed_set:
                    raise ValueError(
                        f"{name} has the label {x!r}, which is not in labels {allowed!r}"
                    )
    n = len(xa)
    if n == 0:
        return KappaResult(
            kappa=None, p_o=None, p_e=None, n=0, undefined_reason=REASON_NO_COMMON_ITEM
        )
    return _cohen_kappa_kernel(xa, xb)


def _cohen_kappa_kernel(xa: list[Hashable], xb: list[Hashable]) -> KappaResult:
    """Kappa from two equal-length lists of present labels (n >= 1)."""
    n = len(xa)
    cats = sorted(set(xa) | set(xb), key=_label_sort_key)
    index = {c: i for i, c in enumerate(cats)}
    ia = np.fromiter((index[x] for x in xa), dtype=np.int64, count=n)
    ib = np.fromiter((index[y] for y in xb), dtype=np.int64, count=n)
    k = len(cats)
    row = np.bincount(ia, minlength=k)
    col = np.bincount(ib, minlength=k)
    n_agree = int(np.count_nonzero(ia == ib))
    chance_numer = int(row @ col)  # sum_k n_a,k * n_b,k, exact integer
    p_o = n_agree / n
    p_e = chance_numer / (n * n)
    if chance_numer == n * n:
        return KappaResult(
            kappa=None, p_o=p_o, p_e=1.0, n=n,
            undefined_reason=REASON_SINGLE_LABEL.format(label=cats[0]),
        )
    # (p_o - p_e) / (1 - p_e) with the common n^2 cancelled: fewer roundings.
    kappa = (n_agree * n - chance_numer) / (n * n - chance_numer)
    return KappaResult(kappa=float(kappa), p_o=p_o, p_e=p_e, n=n)


# --------------------------------------------------------------------------- many raters


def krippendorff_alpha(reliability_data: LabelMatrixLike, *, level: str = "nominal") -> AlphaResult:
    """Krippendorff's alpha for any number of raters and missing values.

    Parameters
    ----------
    reliability_data : array-like of shape (n_raters, n_units)
        Value each rater gave each unit; ``None`` or ``NaN`` = missing.
        Values are any hashable labels for ``level="nominal"`` and must be
        real numbers for ``level="interval"``.
    level : {"nominal", "interval"}, default "nominal"
        Difference function: nominal ``delta(c, k) = [c != k]``; interval
        ``delta(c, k) = (c - k) ** 2``.

    Returns
    -------
    AlphaResult
        ``alpha = 1 - d_o / d_e`` (1 = perfect agreement, 0 = chance level,
        negative = systematic disagreement) with the coincidence-matrix
        disagreements ``d_o = sum_ck o_ck delta_ck / n`` and
        ``d_e = sum_ck n_c n_k delta_ck / (n (n - 1))``.

    Raises
    ------
    ValueError
        If ``reliability_data`` is not two-dimensional or is empty, holds an
        unhashable value, a non-numeric value with ``level="interval"``, or if
        ``level`` is unknown.

    Notes
    -----
    A unit with ``m_u >= 2`` values adds ``n_uc n_uk / (m_u - 1)`` to every
    off-diagonal coincidence ``o_ck`` and ``n_uc (n_uc - 1) / (m_u - 1)`` to
    ``o_cc``; units with fewer than two values are not pairable and are
    ignored. ``alpha`` is undefined (``None``) when no unit is pairable or
    when every pairable value is the same (``d_e = 0``).

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability.
    Annenberg School for Communication, University of Pennsylvania,
    https://repository.upenn.edu/asc_papers/43 (sections A and C).

    Examples
    --------
    >>> r = krippendorff_alpha([[1, 1, 2], [1, 1, 2]])
    >>> r.alpha, r.n_pairable
    (1.0, 6)
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}; got {level!r}")
    rows = _as_label_matrix(
        reliability_data, name="reliability_data", shape_doc="(n_raters, n_units)"
    )
    if level == "interval":
        for row in rows:
            for x in row:
                if x is not None and (isinstance(x, bool) or not isinstance(x, (int, float))):
                    raise ValueError(
                        f"reliability_data must hold real numbers for level='interval'; got {x!r}"
                    )
                if isinstance(x, float) and not np.isfinite(x):
                    raise ValueError(f"reliability_data has an infinite value {x!r}")
    return _alpha_kernel(rows, level=level)


def _alpha_kernel(rows: list[list[Hashable | None]], *, level: str) -> AlphaResult:
    n_units = len(rows[0])
    values = sorted({x for row in rows for x in row if x is not None}, key=_label_sort_key)
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    width = max(k, 1)
    flat = [u * width + index[x] for row in rows for u, x in enumerate(row) if x is not None]
    counts = np.bincount(np.asarray(flat, dtype=np.int64), minlength=n_units * width).reshape(
        n_units, width)  # n_uc
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    n_units_pairable = int(pairable.sum())
    if n_units_pairable == 0:
        return AlphaResult(
            alpha=None, d_o=None, d_e=None, n_pairable=0, n_units_pairable=0,
            level=level, undefined_reason=REASON_NO_PAIRABLE_UNIT,
        )
    c = counts[pairable].astype(np.float64)
    m = m_u[pairable].astype(np.float64)
    # o_ck = sum_u (n_uc n_uk - [c == k] n_uc) / (m_u - 1)
    coincidence = np.einsum("uc,uk,u->ck", c, c, 1.0 / (m - 1.0)) - np.diag(
        (c / (m - 1.0)[:, None]).sum(axis=0)
    )
    n_c = coincidence.sum(axis=1)
    n = int(m_u[pairable].sum())
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    else:
        v = np.asarray(values, dtype=np.float64)
        delta = (v[:, None] - v[None, :]) ** 2
    d_o = float((coincidence * delta).sum() / n)
    d_e = float(n_c @ delta @ n_c / (n * (n - 1.0)))
    used = np.flatnonzero(counts[pairable].sum(axis=0) > 0)
    if used.size == 1:
        return AlphaResult(
            alpha=None, d_o=d_o, d_e=0.0, n_pairable=n, n_units_pairable=n_units_pairable,
            level=level, undefined_reason=REASON_ALPHA_SINGLE_VALUE.format(label=values[used[0]]),
        )
    return AlphaResult(
        alpha=1.0 - d_o / d_e, d_o=d_o, d_e=d_e, n_pairable=n,
        n_units_pairable=n_units_pairable, level=level,
    )


def fleiss_kappa(ratings: LabelMatrixLike) -> FleissResult:
    """Fleiss' kappa for items each rated by the same number of raters.

    Wraps ``statsmodels.stats.inter_rater.fleiss_kappa`` so that degenerate
    input gives an explained undefined value instead of ``NaN`` or a bare
    ``AssertionError``. Its table of counts (what statsmodels'
    ``aggregate_raters`` makes, one item at a time) is counted here with one
    ``np.bincount``.

    Parameters
    ----------
    ratings : array-like of shape (n_items, n_raters)
        Label each rater slot gave each item (any hashable values). Columns
        need not be the same people across items (Fleiss' design). Must be
        complete: a ``None``/``NaN`` makes the result undefined.

    Returns
    -------
    FleissResult
        ``kappa = (p_o - p_e) / (1 - p_e)``, at most 1.

    Raises
    ------
    ValueError
        If ``ratings`` is not two-dimensional, is empty, or holds an
        unhashable label.

    Notes
    -----
    Undefined cases (``kappa=None`` with ``undefined_reason``): a missing
    rating; fewer than 2 items; fewer than 2 raters; a single label used for
    every rating (``p_e = 1``).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    Psychological Bulletin 76(5), 378-382.

    Examples
    --------
    >>> r = fleiss_kappa([["a", "a"], ["b", "b"]])
    >>> r.kappa, r.p_o, r.p_e
    (1.0, 1.0, 0.5)
    """
    rows = _as_label_matrix(ratings, name="ratings", shape_doc="(n_items, n_raters)")
    n_items, n_raters = len(rows), len(rows[0])

    def undefined(reason: str) -> FleissResult:
        return FleissResult(
            kappa=None, p_o=None, p_e=None, n_items=n_items, n_raters=n_raters,
            undefined_reason=reason,
        )

    n_missing = sum(x is None for row in rows for x in row)
    if n_missing:
        return undefined(REASON_FLEISS_MISSING.format(n_missing=n_missing))
    if n_items < 2:
        return undefined(REASON_FLEISS_FEW_ITEMS.format(n_items=n_items))
    if n_raters < 2:
        return undefined(REASON_FLEISS_FEW_RATERS.format(n_raters=n_raters))
    cats = sorted({x for row in rows for x in row}, key=_label_sort_key)
    if len(cats) == 1:
        return undefined(REASON_FLEISS_SINGLE_LABEL.format(label=cats[0]))
    index = {c: i for i, c in enumerate(cats)}
    n_cat = len(cats)
    flat = [i * n_cat + index[x] for i, row in enumerate(rows) for x in row]
    # (n_items, n_cats) counts, as statsmodels' aggregate_raters
    table = np.bincount(np.asarray(flat, dtype=np.int64), minlength=n_items * n_cat).reshape(
        n_items, n_cat).astype(np.float64)
    p_items = ((table * table).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1.0))
    p_o = float(p_items.mean())
    p_cat = table.sum(axis=0) / (n_items * n_raters)
    p_e = float(p_cat @ p_cat)
    # Imported here, not at module level: statsmodels costs ~0.8 s, and scoring is imported at app load.
    from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss_kappa

    kappa = float(_sm_fleiss_kappa(table, method="fleiss"))
    return FleissResult(kappa=kappa, p_o=p_o, p_e=p_e, n_items=n_items, n_raters=n_raters)

