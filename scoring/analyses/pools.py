"""Which models make a good annotator pool: EIP run per sub-pool of models.

Section 3.2 of the paper compares EIP difficulties computed from different
"annotator" pools of models: by size (small / medium / large / whole,
figure 8) and by access (open-weight / proprietary / both, figure 6).

Definitions used here
---------------------
* A pool is a boolean mask over the models (columns of ``R``).
* A question is *observed* by a pool if at least one of its models has a
  non-NaN cell for it. Shares below are over the observed questions.
* *All solved*: every observed credit of the pool is 1. *All failed*: every
  observed credit is 0. These are the "dead nodes" EIP excludes (section
  2.2); ``share_dead = share_all_solved + share_all_failed``. Partial credit
  strictly between 0 and 1 makes a question neither.
* Correlations with the reference pool use ``EIPResult.difficulty_scaled``
  (0-100). By default (``include_excluded=False``) they are computed over the
  questions **kept by both pools** -- there the scaled difficulty is an
  increasing affine map of pi_Q, so Spearman, Pearson and Kendall equal those
  of pi_Q. With ``include_excluded=True`` every question observed by both
  pools enters, all-solved ones at 0 and all-failed ones at 100.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from scoring._typing import BoolArray, ResponseArray
from scoring._validation import check_in_open_interval, check_response_matrix
from scoring.analyses._common import Correlation, correlation
from scoring.eip import EIPResult, eip
from scoring.exceptions import ConvergenceError

__all__ = [
    "PoolResult",
    "PoolAnalysis",
    "NamedPools",
    "pool_analysis",
    "size_pools",
    "access_pools",
]

_CORR_METHODS = ("spearman", "pearson", "kendall")


@dataclass(frozen=True)
class PoolResult:
    """EIP on one pool of models, and how it compares with the reference pool.

    Attributes
    ----------
    name : str
    n_models : int
        Models in the pool.
    models : tuple of int
        Their column indices in ``R``.
    n_observed : int
        Questions with at least one observed cell in the pool.
    n_all_solved, n_all_failed : int
        Observed questions every model of the pool solved / failed.
    share_all_solved, share_all_failed, share_dead : float or None
        The counts divided by ``n_observed`` (None when it is 0);
        ``share_dead`` is the sum of the other two.
    correlations : dict of str to Correlation
        ``"spearman"``, ``"pearson"``, ``"kendall"`` of this pool's
        ``difficulty_scaled`` with the reference pool's (see the module
        docstring for which questions enter).
    eip : EIPResult or None
        The pool's EIP result over all ``n_questions`` (None when undefined),
        e.g. to score it against human consensus.
    undefined_reason : str or None
        Why EIP could not be run on this pool (fewer than 2 models, no kept
        question, no convergence); None otherwise.
    """

    name: str
    n_models: int
    models: tuple[int, ...]
    n_observed: int
    n_all_solved: int
    n_all_failed: int
    share_all_solved: float | None
    share_all_failed: float | None
    share_dead: float | None
    correlations: dict[str, Correlation]
    eip: EIPResult | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class PoolAnalysis:
    """Result of :func:`pool_analysis`.

    Attributes
    ----------
    pools : dict of str to PoolResult
        In the order given (the automatically added "whole" pool first).
    reference : str
        Name of the reference pool.
    include_excluded : bool
        Whether correlations include questions excluded by either pool.
    alpha : float
    """

    pools: dict[str, PoolResult]
    reference: str
    include_excluded: bool
    alpha: float


def _check_pools(pools: Mapping[str, object], n_models: int) -> dict[str, BoolArray]:
    if not isinstance(pools, Mapping):
        raise ValueError(f"pools must be a mapping of name to boolean mask; got {type(pools).__name__}")
    out: dict[str, BoolArray] = {}
    for name, mask in pools.items():
        arr = np.asarray(mask)
        if arr.dtype != bool or arr.shape != (n_models,):
            raise ValueError(
                f"pools[{name!r}] must be a boolean mask of shape ({n_models},); "
                f"got dtype {arr.dtype} and shape {arr.shape}"
            )
        out[str(name)] = arr
    return out


def _dead_counts(R: ResponseArray, mask: BoolArray) -> tuple[BoolArray, BoolArray, BoolArray]:
    """Observed, all-solved and all-failed masks over questions for one pool."""
    sub = R[:, mask]
    if sub.dtype.kind in "buil":
        observed: BoolArray = np.ones(sub.shape[0], dtype=bool) if sub.shape[1] else np.zeros(sub.shape[0], dtype=bool)
        solved = sub.astype(bool)
        failed = ~solved
    else:
        obs_cells = ~np.isnan(sub)
        observed = np.asarray(obs_cells.any(axis=1))  # typed as an array; no copy
        solved = (sub == 1) | ~obs_cells
        failed = (sub == 0) | ~obs_cells
    return observed, observed & solved.all(axis=1), observed & failed.all(axis=1)


def pool_analysis(
    R: ArrayLike,
    pools: Mapping[str, object],
    *,
    reference: str = "whole",
    alpha: float = 0.85,
    include_excluded: bool = False,
) -> PoolAnalysis:
    """Run EIP per pool of models; dead-node shares and agreement with a reference pool.

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed.
    pools : mapping of str to bool array of shape (n_models,)
        The pools (for example from :func:`size_pools` or
        :func:`access_pools`). Empty pools are allowed and reported as
        undefined.
    reference : str, default "whole"
        Pool every other pool is correlated with. ``"whole"`` (all models) is
        added automatically when not in ``pools``; any other name must be a
        key of ``pools``.
    alpha : float, default 0.85
        EIP damping factor in (0, 1).
    include_excluded : bool, default False
        Correlate over questions observed by both pools (all-solved at 0,
        all-failed at 100) instead of only those kept by both.

    Returns
    -------
    PoolAnalysis
        A :class:`PoolResult` per pool. A pool with fewer than 2 models, no
        kept question or no convergence is reported with
        ``undefined_reason`` (its dead-node shares are still computed), and
        so are all correlations with an undefined reference pool.

    Raises
    ------
    ValueError
        If ``R`` is invalid, a mask is not boolean of shape (n_models,),
        ``reference`` names no pool, or ``alpha`` is outside (0, 1).

    References
    ----------
    EIP paper, section 3.2 (figures 6 and 8) and section 2.2 (exclusion of
    questions solved or failed by all models).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=float)
    >>> res = pool_analysis(R, {"first two": np.array([True, True, False])})
    >>> res.pools["whole"].share_dead, res.pools["first two"].share_dead
    (0.5, 0.75)
    """
    R = check_response_matrix(R)
    n_models = R.shape[1]
    masks = _check_pools(pools, n_models)
    if reference not in masks:
        if reference != "whole":
            raise ValueError(f"reference must name one of the pools {sorted(masks)} or be 'whole'; got {reference!r}")
        masks = {"whole": np.ones(n_models, dtype=bool), **masks}
    if not isinstance(include_excluded, bool):
        raise ValueError(f"include_excluded must be True or False; got {include_excluded!r}")
    alpha = check_in_open_interval(alpha, name="alpha", low=0.0, high=1.0)

    runs: dict[str, tuple[EIPResult | None, str | None]] = {}
    for name, mask in masks.items():
        n = int(mask.sum())
        if n < 2:
            runs[name] = (None, f"pool has {n} model(s); EIP needs at least 2")
            continue
        try:
            runs[name] = (eip(R[:, mask], alpha=alpha), None)
        except (ValueError, ConvergenceError) as exc:
            runs[name] = (None, f"EIP failed on this pool: {exc}")

    ref_res, ref_reason = runs[reference]
    results = {}
    for name, mask in masks.items():
        res, reason = runs[name]
        observed, all_solved, all_failed = _dead_counts(R, mask)
        n_obs = int(observed.sum())
        n_solved, n_failed = int(all_solved.sum()), int(all_failed.sum())
        results[name] = PoolResult(
            name=name,
            n_models=int(mask.sum()),
            models=tuple(int(i) for i in np.flatnonzero(mask)),
            n_observed=n_obs,
            n_all_solved=n_solved,
            n_all_failed=n_failed,
            share_all_solved=_share(n_solved, n_obs),
            share_all_failed=_share(n_failed, n_obs),
            share_dead=_share(n_solved + n_failed, n_obs),
            correlations=_correlations(res, reason, ref_res, ref_reason, reference, include_excluded),
            eip=res,
            undefined_reason=reason,
        )
    return PoolAnalysis(pools=results, reference=reference, include_excluded=include_excluded, alpha=alpha)


def _share(count: int, n_observed: int) -> float | None:
    """``count / n_observed``, or None for a pool that observed no question."""
    return count / n_observed if n_observed else None


def _correlations(
    res: EIPResult | None,
    reason: str | None,
    ref_res: EIPResult | None,
    ref_reason: str | None,
    reference: str,
    include_excluded: bool,
) -> dict[str, Correlation]:
    if res is None or ref_res is None:
        why = reason if res is None else f"reference pool {reference!r} is undefined: {ref_reason}"
        return {m: Correlation(m, None, None, 0, why) for m in _CORR_METHODS}
    if include_excluded:
        both = ~(np.isnan(res.difficulty_scaled) | np.isnan(ref_res.difficulty_scaled))
    else:
        both = res.kept & ref_res.kept
    x, y = res.difficulty_scaled[both], ref_res.difficulty_scaled[both]
    return {m: correlation(x, y, method=m) for m in _CORR_METHODS}


@dataclass(frozen=True)
class NamedPools:
    """Pools built from model metadata, plus the models that fit none.

    Attributes
    ----------
    masks : dict of str to bool ndarray of shape (n_models,)
        One mask per label, in label order; pass it to :func:`pool_analysis`.
    unknown : bool ndarray of shape (n_models,)
        Models whose size/access is unknown; they are in no pool (but they
        are in the automatic "whole" reference pool).
    """

    masks: dict[str, BoolArray]
    unknown: BoolArray


def size_pools(
    parameters_b: Iterable[float | None],
    *,
    thresholds: Sequence[float] = (10, 70),
    labels: Sequence[str] = ("small", "medium", "large"),
) -> NamedPools:
    """Pools of models by parameter count.

    Parameters
    ----------
    parameters_b : array-like of shape (n_models,)
        Parameter count in billions; NaN or None = unknown.
    thresholds : sequence of float, default (10, 70)
        Strictly increasing positive cut points. Pool ``i`` holds the models
        with ``thresholds[i-1] <= p < thresholds[i]`` (the first pool has no
        lower bound, the last no upper bound): by default small < 10B,
        10B <= medium < 70B, large >= 70B.
    labels : sequence of str, default ("small", "medium", "large")
        One more label than thresholds.

    Returns
    -------
    NamedPools
        A mask per label; models with unknown size are in ``unknown`` only.

    Raises
    ------
    ValueError
        If a count is negative, zero or infinite, thresholds are not strictly
        increasing and positive, or ``labels`` has the wrong length or
        duplicates.

    References
    ----------
    EIP paper, section 3.2 and 3.3, figure 8 (small / medium / large / whole
    annotator pools).

    Examples
    --------
    >>> pools = size_pools([0.5, 8, 34, 70, None])
    >>> {k: v.tolist() for k, v in pools.masks.items()}["large"]
    [False, False, False, True, False]
    """
    values = list(parameters_b)
    p = np.empty(len(values), dtype=np.float64)
    for i, x in enumerate(values):
        try:
            p[i] = np.nan if x is None else float(x)
        except (TypeError, ValueError):
            raise ValueError(f"parameters_b must hold numbers or None; got {x!r} at model {i}") from None
    bad = ~np.isnan(p) & ~((p > 0) & np.isfinite(p))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"parameters_b must be positive finite or NaN/None; got {float(p[i])!r} at model {i}")
    t = [float(x) for x in thresholds]
    if not t or any(x <= 0 or not math.isfinite(x) for x in t) or any(b <= a for a, b in itertools.pairwise(t)):
        raise ValueError(f"thresholds must be strictly increasing positive numbers; got {tuple(thresholds)!r}")
    labels = tuple(str(x) for x in labels)
    if len(labels) != len(t) + 1 or len(set(labels)) != len(labels):
        raise ValueError(f"labels must be {len(t) + 1} distinct names (one more than thresholds); got {labels!r}")
    known = ~np.isnan(p)
    edges = [-np.inf, *t, np.inf]
    masks = {lab: known & (p >= lo) & (p < hi) for lab, lo, hi in zip(labels, edges[:-1], edges[1:])}
    return NamedPools(masks=masks, unknown=~known)


_OPEN = {"open-weight", "open weight", "open-weights", "open_weight", "open"}
_PROPRIETARY = {"proprietary", "closed", "api"}


def access_pools(access: Iterable[str | float | None]) -> NamedPools:
    """Open-weight and proprietary pools of models.

    Parameters
    ----------
    access : sequence of str or None, length n_models
        ``"open-weight"`` (also ``"open"``, ``"open weight"``) or
        ``"proprietary"`` (also ``"closed"``, ``"api"``), case-insensitive;
        None, NaN, "" or ``"unknown"`` = unknown.

    Returns
    -------
    NamedPools
        Masks ``"open-weight"`` and ``"proprietary"``; unknown models in
        ``unknown`` only.

    Raises
    ------
    ValueError
        On any other label.

    References
    ----------
    EIP paper, section 3.2, figure 6 (OW / Pro / Both pools).

    Examples
    --------
    >>> access_pools(["open", "proprietary", None]).masks["open-weight"].tolist()
    [True, False, False]
    """
    values = list(access)
    open_mask = np.zeros(len(values), dtype=bool)
    prop_mask = np.zeros(len(values), dtype=bool)
    unknown = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        missing = v is None or (isinstance(v, float) and math.isnan(v))
        if missing or (isinstance(v, str) and v.strip().lower() in ("", "unknown")):
            unknown[i] = True
            continue
        key = str(v).strip().lower()
        if key in _OPEN:
            open_mask[i] = True
        elif key in _PROPRIETARY:
            prop_mask[i] = True
        else:
            raise ValueError(f"access[{i}] must be 'open-weight', 'proprietary' or None; got {v!r}")
    return NamedPools(masks={"open-weight": open_mask, "proprietary": prop_mask}, unknown=unknown)
