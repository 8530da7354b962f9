"""The uncertainty of agreement on pairs: bootstrap intervals and McNemar's exact test.

Percentile bootstrap intervals of a method's agreement with human verdicts
(resampling pairs; one generator per call, chunked so memory stays bounded)
and of the difference between two methods on the same resamples, and the
exact McNemar test of two methods' discordant pairs (paper section 3.3).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray
from scoring._validation import as_rng, check_in_open_interval, check_positive_int
from scoring.pairs import FIRST, REASON_NO_DECIDED_HUMAN_PAIR, SECOND, _scored

__all__ = ["AgreementCI", "McNemarResult", "bootstrap_agreement_ci", "mcnemar_exact", "paired_bootstrap_agreement_cis"]


@dataclass(frozen=True)
class AgreementCI:
    """Percentile bootstrap intervals for :func:`method_agreement`.

    Attributes
    ----------
    agreement : tuple of float
        ``(low, high)`` for ``agreement`` (ties count as misses).
    kappa : tuple of float, or None
        ``(low, high)`` for Cohen's kappa over the replicates where it is
        defined; ``None`` if it is undefined in every replicate.
    level : float
        Coverage, e.g. 0.95.
    n_boot : int
        Replicates drawn.
    n_kappa_undefined : int
        Replicates left out of the kappa interval because kappa was undefined
        there (``p_e = 1``: all resampled pairs on one side).
    """

    agreement: tuple[float, float]
    kappa: tuple[float, float] | None
    level: float
    n_boot: int
    n_kappa_undefined: int


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test of two paired binary outcomes.

    Attributes
    ----------
    b : int
        Pairs where only ``a`` is correct.
    c : int
        Pairs where only ``b`` is correct.
    n_discordant : int
        ``b + c``.
    n : int
        Paired outcomes used (after dropping missing ones).
    statistic : int
        ``min(b, c)``, as in ``statsmodels`` (exact test).
    p_value : float
        Two-sided exact binomial p-value of ``b`` out of ``b + c`` under
        success probability 1/2; 1.0 when there is no discordant pair.
    """

    b: int
    c: int
    n_discordant: int
    n: int
    statistic: int
    p_value: float


#: Resample indices held at once by :func:`bootstrap_agreement_ci` (32 MiB of int64).
BOOT_CHUNK_CELLS = 1 << 22


#: :func:`paired_bootstrap_agreement_cis` counts draws per pair (one pass for every method) from this many
#: methods on; fewer gather each method's codes (figures: docs/measurements.md).
_COUNT_FROM = 3


ERR_SEED = "seed must be an integer >= 0; got {value!r}"


def bootstrap_agreement_ci(
    verdicts_method: ArrayLike,
    verdicts_human: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator | int | None = 0,
) -> AgreementCI:
    """Percentile bootstrap intervals for agreement and Cohen's kappa.

    Parameters
    ----------
    verdicts_method, verdicts_human : array-like of int, shape (n_pairs,)
        As for :func:`method_agreement`.
    n_boot : int, default 2000
        Bootstrap replicates.
    level : float, default 0.95
        Coverage in (0, 1).
    rng : numpy.random.Generator, int or None, default 0
        Source of randomness; the default seed makes reports reproducible.

    Returns
    -------
    AgreementCI
        ``(low, high)`` = the ``(1 - level) / 2`` and ``(1 + level) / 2``
        quantiles (numpy's default linear interpolation) of the replicates.

    Raises
    ------
    ValueError
        As :func:`method_agreement`; also if no pair has a human verdict
        ``FIRST``/``SECOND``, or ``n_boot``, ``level`` or ``rng`` is invalid.

    Notes
    -----
    The ``n`` scored pairs (human ``FIRST``/``SECOND``) are resampled with
    replacement: replicate ``r`` uses the pairs
    ``rng.integers(0, n, size=(n_boot, n))[r]``, drawn in blocks of rows of
    about :data:`BOOT_CHUNK_CELLS` indices (the same numbers, a bounded
    memory). Agreement counts method ties
    as misses, as in :func:`method_agreement`. Kappa is the orientation-free
    :func:`pair_kappa` over the replicate's pairs the method decided
    (``2 p_o - 1``); it is undefined in a replicate where the method decided
    none of the resampled pairs, and such replicates are left out of the
    kappa interval and counted in ``n_kappa_undefined``.

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap,
    chapter 13 (percentile intervals). EIP paper, section 3.3.

    Examples
    --------
    >>> ci = bootstrap_agreement_ci([0, 1, 0, 1, 2], [0, 1, 1, 1, 0], n_boot=200)
    >>> ci.agreement[0] <= 0.6 <= ci.agreement[1]
    True
    """
    n_boot = check_positive_int(n_boot, name="n_boot")
    level = check_in_open_interval(level, name="level", low=0.0, high=1.0)
    gen = as_rng(rng)
    m, h, _ = _scored(verdicts_method, verdicts_human)
    if m.size == 0:
        raise ValueError(f"cannot bootstrap: {REASON_NO_DECIDED_HUMAN_PAIR}")
    return _bootstrap_cis([_bootstrap_codes(m, h)], n_boot=n_boot, level=level, gen=gen)[0]


def paired_bootstrap_agreement_cis(
    verdicts_methods: Sequence[ArrayLike],
    verdicts_human: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> list[AgreementCI]:
    """:func:`bootstrap_agreement_ci` of several methods against the same human verdicts, drawn once.

    Parameters
    ----------
    verdicts_methods : sequence of array-like of int, each shape (n_pairs,)
        Each method's verdicts (as for :func:`method_agreement`).
    verdicts_human : array-like of int, shape (n_pairs,)
    n_boot : int, default 2000
    level : float, default 0.95
    seed : int, default 0
        Seed (>= 0) of the resampling.

    Returns
    -------
    list of AgreementCI
        One per method, equal to ``bootstrap_agreement_ci(v, verdicts_human,
        n_boot=n_boot, level=level, rng=seed)``: every method's replicate
        ``r`` resamples the same pairs (a paired bootstrap), so the indices
        are drawn once and scored for every method (one draw instead of one
        per method).

    Raises
    ------
    ValueError
        As :func:`bootstrap_agreement_ci`; also if ``seed`` is not an integer >= 0.

    Examples
    --------
    >>> a, b = paired_bootstrap_agreement_cis([[0, 1, 0], [1, 1, 0]], [0, 1, 1], n_boot=100, seed=3)
    >>> a == bootstrap_agreement_ci([0, 1, 0], [0, 1, 1], n_boot=100, rng=3)
    True
    """
    n_boot = check_positive_int(n_boot, name="n_boot")
    level = check_in_open_interval(level, name="level", low=0.0, high=1.0)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(ERR_SEED.format(value=seed))
    codes = []
    for v in verdicts_methods:
        m, h, _ = _scored(v, verdicts_human)
        if m.size == 0:
            raise ValueError(f"cannot bootstrap: {REASON_NO_DECIDED_HUMAN_PAIR}")
        codes.append(_bootstrap_codes(m, h))
    if not codes:
        return []
    return _bootstrap_cis(codes, n_boot=n_boot, level=level, gen=np.random.default_rng(int(seed)))


def _bootstrap_cis(codes: list[NDArray[np.int64]], *, n_boot: int, level: float,
                   gen: np.random.Generator) -> list[AgreementCI]:
    """Intervals of every ``codes`` (equal lengths n) from one set of resampled indices.

    Replicates are drawn and scored a block of rows at a time (memory ~ BOOT_CHUNK_CELLS, not n_boot x n);
    row-wise blocks consume the generator exactly as the whole (n_boot, n) matrix would.
    """
    n = int(codes[0].size)
    rows = max(1, BOOT_CHUNK_CELLS // n)
    agreement = np.empty((len(codes), n_boot))
    kappa = np.empty((len(codes), n_boot))
    # With several methods, a pair's 0/1 fields (decided, agree per method) take few distinct patterns:
    # count how often each pattern is drawn in a row (one gather and one small bincount), then every
    # method's two counts are one product of those counts with the patterns (exact: whole numbers <= n);
    # with one or two methods, gather the codes.
    fields = None
    if len(codes) >= _COUNT_FROM:
        fields = np.column_stack([np.column_stack([c & (_AGREE_UNIT - 1), c >> np.int64(32)]) for c in codes])
        fields, pattern = np.unique(fields, axis=0, return_inverse=True)
        fields = fields.astype(np.float64)
        pattern = pattern.reshape(-1).astype(np.int64)
        n_patterns = fields.shape[0]
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = gen.integers(0, n, size=(stop - start, n))
        if fields is None:
            for k, code in enumerate(codes):
                agreement[k, start:stop], kappa[k, start:stop] = _bootstrap_rows(code, idx)
            continue
        offsets = (np.arange(stop - start, dtype=np.int64) * n_patterns)[:, None]
        drawn = np.bincount((pattern[idx] + offsets).ravel(), minlength=(stop - start) * n_patterns)
        sums = drawn.reshape(stop - start, n_patterns).astype(np.float64) @ fields
        for k in range(len(codes)):
            n_decided, n_agree = sums[:, 2 * k], sums[:, 2 * k + 1]
            agreement[k, start:stop] = n_agree / n
            with np.errstate(divide="ignore", invalid="ignore"):
                kappa[k, start:stop] = np.where(n_decided == 0, np.nan, (2 * n_agree - n_decided) / n_decided)
    q = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    out = []
    for k in range(len(codes)):
        a_lo, a_hi = np.quantile(agreement[k], q)
        defined = ~np.isnan(kappa[k])
        kappa_ci = None
        if defined.any():
            k_lo, k_hi = np.quantile(kappa[k][defined], q)
            kappa_ci = (float(k_lo), float(k_hi))
        out.append(AgreementCI(
            agreement=(float(a_lo), float(a_hi)),
            kappa=kappa_ci,
            level=level,
            n_boot=n_boot,
            n_kappa_undefined=int((~defined).sum()),
        ))
    return out


_AGREE_UNIT = np.int64(1) << np.int64(32)


def _bootstrap_codes(m: NDArray[np.int64], h: NDArray[np.int64]) -> NDArray[np.int64]:
    """Per scored pair, ``decided + agree * 2**32``.

    decided: the method said FIRST/SECOND; agree: it said what the human said;
    so one sum over a replicate's pairs gives both counts (n < 2**32).
    """
    decided = (m == FIRST) | (m == SECOND)
    agree = decided & (m == h)
    codes: NDArray[np.int64] = decided.astype(np.int64) + agree.astype(np.int64) * _AGREE_UNIT
    return codes


def _bootstrap_rows(code: NDArray[np.int64], idx: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    """Agreement and kappa of each row of ``idx``.

    The counts of :func:`_bootstrap_kernel`, from one gather and one row sum.
    """
    total = code[idx].sum(axis=1)
    n_agree = total >> np.int64(32)
    n_decided = total & (_AGREE_UNIT - 1)
    agreement = n_agree / idx.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(n_decided == 0, np.nan, (2 * n_agree - n_decided) / n_decided)
    return agreement, kappa


def _bootstrap_kernel(
    m: NDArray[np.int64], h: NDArray[np.int64], idx: NDArray[np.int64]
) -> tuple[FloatArray, FloatArray]:
    """Agreement and kappa for each row of resample indices ``idx`` (n_boot, n).

    ``h`` holds only FIRST/SECOND; ``m`` holds UNDEFINED/FIRST/SECOND/TIE.
    Kappa is the orientation-free ``2 p_o - 1`` over the pairs the method
    decided; NaN in a replicate where the method decided none.
    """
    n_boot, n = idx.shape
    # 2 human labels x 4 method labels -> cell code in 0..7; method code + 1 maps -1..2 to 0..3.
    cell = h[idx] * 4 + (m[idx] + 1)
    offsets = (np.arange(n_boot) * 8)[:, None]
    table = np.bincount((cell + offsets).ravel(), minlength=8 * n_boot).reshape(n_boot, 2, 4)
    # agree: human FIRST & method FIRST (cell 0*4 + 1), human SECOND & method SECOND (1*4 + 2)
    n_agree = table[:, 0, 1] + table[:, 1, 2]
    method = table.sum(axis=1)  # (n_boot, 4): UNDEFINED, FIRST, SECOND, TIE
    n_decided = method[:, 1] + method[:, 2]
    agreement = n_agree / n
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(n_decided == 0, np.nan, (2 * n_agree - n_decided) / n_decided)
    return agreement, kappa


def _check_binary(x: ArrayLike, *, name: str) -> FloatArray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (n_pairs,); got shape {arr.shape}")
    if arr.dtype == object:
        try:
            arr = np.array([np.nan if v is None else v for v in arr], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must hold 0/1 outcomes; got non-numeric values") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold 0/1 outcomes; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    bad = ~(np.isnan(arr) | (arr == 0) | (arr == 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} has the value {float(arr[i])!r} at position {i}; outcomes must be 0 or 1"
        )
    return arr


def mcnemar_exact(correct_a: ArrayLike, correct_b: ArrayLike) -> McNemarResult:
    """Exact McNemar test: do two methods succeed on different pairs?

    Parameters
    ----------
    correct_a, correct_b : array-like of shape (n_pairs,)
        Paired outcomes, 1/True = correct; ``NaN``/``None`` = missing (the
        pair is dropped).

    Returns
    -------
    McNemarResult
        ``b`` = only ``a`` correct, ``c`` = only ``b`` correct, and the
        two-sided exact binomial p-value of ``b`` in ``b + c`` trials with
        probability 1/2 (``scipy.stats.binomtest``).

    Raises
    ------
    ValueError
        If the inputs are not one-dimensional, differ in length or hold a
        value other than 0, 1 or missing.

    Notes
    -----
    Concordant pairs carry no information. With no discordant pair the
    p-value is 1.0 (no evidence of a difference), as in ``statsmodels``.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between
    correlated proportions or percentages. Psychometrika 12(2), 153-157.

    Examples
    --------
    >>> r = mcnemar_exact([1, 1, 1, 0], [0, 0, 1, 0])
    >>> r.b, r.c, r.p_value
    (2, 0, 0.5)
    """
    from scipy.stats import binomtest
    a = _check_binary(correct_a, name="correct_a")
    b = _check_binary(correct_b, name="correct_b")
    if a.shape != b.shape:
        raise ValueError(
            f"correct_a and correct_b must have the same length; got {a.shape[0]} and {b.shape[0]}"
        )
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    n_b = int(((a == 1) & (b == 0)).sum())
    n_c = int(((a == 0) & (b == 1)).sum())
    n_disc = n_b + n_c
    p = 1.0 if n_disc == 0 else float(binomtest(n_b, n_disc, 0.5, alternative="two-sided").pvalue)
    return McNemarResult(
        b=n_b, c=n_c, n_discordant=n_disc, n=int(a.size), statistic=min(n_b, n_c), p_value=p
    )
