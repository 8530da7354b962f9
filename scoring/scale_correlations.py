"""Correlations between a human difficulty scale and a method's difficulties.

Spearman's rho and Kendall's tau-b, per connected component of the comparison
graph (a scale's origin is arbitrary in each), with bootstrap intervals that
resample evaluators (seeded per component, so one subject's interval never
depends on another's), and the undefined cases explained, not NaN.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray as _FloatArray, IntArray as _IntArray
from scoring._validation import check_int, check_number

__all__ = ["ScaleCorrelation", "scale_correlation", "scale_correlations", "scale_correlations_by_scope"]


@dataclass(frozen=True)
class ScaleCorrelation:
    """A method's difficulty against the human scale (:func:`scale_correlation`).

    Attributes
    ----------
    value : float
        Coefficient in [-1, 1]; NaN when undefined.
    ci_low, ci_high : float
        Percentile bootstrap interval; NaN when undefined.
    n : int
        Questions in the coefficient.
    n_components : int
        Components it was computed in (each with >= 3 usable questions).
    n_boot_defined : int
        Bootstrap replicates with a defined coefficient.
    undefined_reason : str or None
    """

    value: float
    ci_low: float
    ci_high: float
    n: int
    n_components: int
    n_boot_defined: int
    undefined_reason: str | None


REASON_FEW_QUESTIONS = "no connected component has 3 or more questions with both a human and a method value"


REASON_CONSTANT = "the human scale or the method is constant within every usable component"


_KINDS = ("spearman", "kendall")


def _centred_ranks(x: _FloatArray) -> _FloatArray:
    """Average ranks per row of an (n_rows, n) array, minus the row mean (NaN propagates)."""
    from scipy import stats

    r = stats.rankdata(x, axis=1)
    out: _FloatArray = r - r.mean(axis=1, keepdims=True)
    return out


def _spearman_of_ranks(rx: _FloatArray, ry: _FloatArray) -> _FloatArray:
    """Spearman per row from centred ranks (:func:`_centred_ranks`); NaN for a constant row."""
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        out: _FloatArray = np.where(den > 0, (rx * ry).sum(axis=1) / den, np.nan)
    return out


def _row_spearman(x: _FloatArray, y: _FloatArray) -> _FloatArray:
    """Spearman per row of two (n_rows, n) arrays (average ranks for ties); NaN for a constant row."""
    return _spearman_of_ranks(_centred_ranks(x), _centred_ranks(y))


def _row_kendall(x: _FloatArray, y: _FloatArray, chunk: int = 64) -> _FloatArray:
    """Kendall's tau-b per row of two (n_rows, n) arrays; NaN for a constant row."""
    out = np.full(x.shape[0], np.nan)
    iu = np.triu_indices(x.shape[1], k=1)
    for start in range(0, x.shape[0], chunk):
        xs, ys = x[start:start + chunk], y[start:start + chunk]
        sx = np.sign(xs[:, iu[0]] - xs[:, iu[1]])
        sy = np.sign(ys[:, iu[0]] - ys[:, iu[1]])
        den = np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + chunk] = np.where(den > 0, (sx * sy).sum(axis=1) / den, np.nan)
    return out


#: Cells (rows x items**2) of the sign matrices :func:`_kendall_of_counts` holds at once (4 MiB of float32).
_KENDALL_CELLS = 1 << 20


def _dense_ranks(x: _FloatArray) -> NDArray[np.int64]:
    """Per row, 1 + the number of distinct smaller values (equal values, equal rank)."""
    order = np.argsort(x, axis=1, kind="stable")
    ordered = np.take_along_axis(x, order, axis=1)
    new = np.ones(x.shape, dtype=bool)
    new[:, 1:] = np.diff(ordered, axis=1) > 0
    out = np.empty(x.shape, dtype=np.int64)
    np.put_along_axis(out, order, np.cumsum(new, axis=1), axis=1)
    return out


def _untied_pairs(ranks: NDArray[np.int64], counts: _FloatArray) -> _FloatArray:
    """Per row, pairs of the sample (item ``k`` held ``counts[r, k]`` times) whose values differ.

    ``(N**2 - sum over groups of equal values of (group size)**2) / 2`` with ``N`` the row's sample
    size: whole numbers, exact in float64.
    """
    n_rows, n = counts.shape
    offsets = (np.arange(n_rows, dtype=np.int64) * (n + 1))[:, None]
    sizes = np.bincount((ranks + offsets).ravel(), weights=counts.ravel(), minlength=n_rows * (n + 1))
    total = counts.sum(axis=1)
    out: _FloatArray = (total * total - (sizes * sizes).reshape(n_rows, n + 1).sum(axis=1)) / 2.0
    return out


def _kendall_of_counts(x: _FloatArray, counts: _FloatArray, ys: list[_FloatArray]) -> _FloatArray:
    """Kendall's tau-b of bootstrap samples given as counts, for several ``y`` at once.

    Row ``r``'s sample holds item ``k`` ``counts[r, k]`` times, with values
    ``x[r, k]`` and ``ys[m][k]`` (``x`` finite on every item with a count; an
    item without a count never enters). Returns shape ``(n_rows, len(ys))``,
    equal to :func:`_row_kendall` of the samples written out: tau-b is
    ``S / sqrt(n_x n_y)`` with ``S`` (concordant minus discordant pairs) and
    ``n_x``, ``n_y`` (pairs untied in ``x``, in ``y``) whole numbers, counted
    here exactly as ``sum_{k<l} c_k c_l sign(x_k - x_l) sign(y_k - y_l)`` and
    the tie-group formula (float32 products summed by a matrix product:
    exact while ``(sum c)**2 < 2**24``, float64 above), in
    ``O(n_rows n**2)`` for every ``y`` together, not per ``y`` and per pair of
    sample positions.
    """
    n_rows, n = counts.shape
    exact32 = float(counts.sum(axis=1).max(initial=0.0)) ** 2 < 2.0**24
    dtype = np.float32 if exact32 else np.float64
    rank_type: type[np.signedinteger[Any]] = np.int16 if n < 2**15 else np.int64
    signs_y: NDArray[Any] = np.stack([np.sign(y[:, None] - y[None, :]).ravel() for y in ys], axis=1).astype(dtype)
    y_ranks = [_dense_ranks(y[None, :])[0] for y in ys]
    ranks = _dense_ranks(x)
    n_x = _untied_pairs(ranks, counts)
    s_full = np.empty((n_rows, len(ys)))
    block = max(1, _KENDALL_CELLS // max(n * n, 1))
    for start in range(0, n_rows, block):
        r: NDArray[Any] = ranks[start:start + block].astype(rank_type)
        c: NDArray[Any] = counts[start:start + block].astype(dtype)
        cells: NDArray[Any] = np.sign(r[:, :, None] - r[:, None, :]).astype(dtype)
        cells *= c[:, :, None]
        cells *= c[:, None, :]
        s_full[start:start + block] = cells.reshape(r.shape[0], n * n) @ signs_y
    out = np.empty((n_rows, len(ys)))
    for m, yr in enumerate(y_ranks):
        n_y = _untied_pairs(np.broadcast_to(yr, counts.shape), counts)
        den = np.sqrt(n_x * n_y)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, m] = np.where(den > 0, (s_full[:, m] / 2.0) / den, np.nan)
    return out


def _component_groups(hv: _FloatArray, mv: _FloatArray, comp: _IntArray) -> list[_IntArray]:
    usable = np.isfinite(hv) & np.isfinite(mv) & (comp >= 0)
    groups = [np.flatnonzero(usable & (comp == c)) for c in np.unique(comp[usable])]
    return [g for g in groups if g.size >= 3]


def _correlations(
    hv: _FloatArray, methods: list[_FloatArray], comp: _IntArray, kinds: tuple[str, ...], dr: _FloatArray | None,
    n_boot: int, ci_level: float, group_gen: Callable[[_IntArray], np.random.Generator],
    cache: dict[tuple[bytes, int, str], _FloatArray] | None = None,
) -> list[dict[str, ScaleCorrelation]]:
    """:func:`scale_correlations` on checked arrays.

    ``group_gen(g)`` gives the generator that resamples the questions ``g`` (one usable component);
    it must depend only on ``g``, so that a component's replicates are the same in every call.
    ``cache`` (optional, shared by calls with the same ``methods``, ``draws`` and ``n_boot``) keeps
    each component's replicate correlations per (component, method index, kind), NaN where undefined.
    """
    if cache is None:
        cache = {}
    nan = float("nan")
    results: list[dict[str, ScaleCorrelation]] = [{} for _ in methods]
    buckets: dict[tuple[bytes, ...], list[int]] = {}
    group_sets: dict[tuple[bytes, ...], list[_IntArray]] = {}
    for i, mv in enumerate(methods):
        groups = _component_groups(hv, mv, comp)
        key = tuple(g.tobytes() for g in groups)
        buckets.setdefault(key, []).append(i)
        group_sets[key] = groups
    for key, members in buckets.items():
        groups = group_sets[key]
        points: dict[tuple[int, str], tuple[float, int, int]] = {}
        for i in members:
            for kind in kinds:
                if not groups:
                    results[i][kind] = ScaleCorrelation(nan, nan, nan, 0, 0, 0, REASON_FEW_QUESTIONS)
                    continue
                row = _row_spearman if kind == "spearman" else _row_kendall
                values, weights = [], []
                for g in groups:
                    r = float(row(hv[g][None, :], methods[i][g][None, :])[0])
                    if np.isfinite(r):
                        values.append(r)
                        weights.append(g.size)
                if not values:
                    results[i][kind] = ScaleCorrelation(nan, nan, nan, int(sum(g.size for g in groups)), 0, 0,
                                                        REASON_CONSTANT)
                    continue
                points[(i, kind)] = (float(np.average(values, weights=weights)), int(sum(weights)), len(values))
        intervals: dict[tuple[int, str], tuple[float, float, int]] = {}
        if n_boot and points:
            total = {ik: np.zeros(n_boot) for ik in points}
            mass = {ik: np.zeros(n_boot) for ik in points}
            for g in groups:
                gk = g.tobytes()
                spearman = [i for i in members if (i, "spearman") in points and (gk, i, "spearman") not in cache]
                kendall = [i for i in members if (i, "kendall") in points and (gk, i, "kendall") not in cache]
                if spearman or kendall:
                    cache.update(_group_replicates(g, hv, methods, spearman, kendall, dr, n_boot, group_gen(g), gk))
                for i, kind in points:
                    values_b = cache[(gk, i, kind)]
                    ok = np.isfinite(values_b)
                    total[(i, kind)][ok] += g.size * values_b[ok]
                    mass[(i, kind)][ok] += g.size
            alpha = (1.0 - ci_level) / 2.0
            for ik in points:
                defined = mass[ik] > 0
                n_defined = int(defined.sum())
                low = high = nan
                if n_defined:
                    reps = total[ik][defined] / mass[ik][defined]
                    low, high = (float(q) for q in np.quantile(reps, [alpha, 1.0 - alpha]))
                intervals[ik] = (low, high, n_defined)
        for (i, kind), (value, n_used, n_comp) in points.items():
            low, high, n_defined = intervals.get((i, kind), (nan, nan, 0))
            results[i][kind] = ScaleCorrelation(value, low, high, n_used, n_comp, n_defined, None)
    return results


def _group_replicates(
    g: _IntArray, hv: _FloatArray, methods: list[_FloatArray], spearman: list[int], kendall: list[int],
    dr: _FloatArray | None, n_boot: int, gen: np.random.Generator, gk: bytes,
) -> dict[tuple[bytes, int, str], _FloatArray]:
    """Bootstrap replicates of one component's correlations (NaN where a replicate is undefined).

    The component's questions ``g`` are resampled ``n_boot`` times from ``gen``; the human side of
    replicate ``r`` is the scale's bootstrap draw ``r mod n_draws`` when ``dr`` is given.
    """
    out: dict[tuple[bytes, int, str], _FloatArray] = {}
    local = gen.integers(0, g.size, size=(n_boot, g.size))
    pick = g[local]
    if dr is not None and dr.shape[0]:
        scale = dr[np.arange(n_boot) % dr.shape[0]]
        hb = np.take_along_axis(scale, pick, axis=1)
        x = scale[:, g]
    else:
        hb = hv[pick]
        x = np.broadcast_to(hv[g], (n_boot, g.size))
    finite = np.isfinite(hb).all(axis=1)
    if spearman:
        rx = _centred_ranks(hb)
        for i in spearman:
            out[(gk, i, "spearman")] = _spearman_of_ranks(rx, _centred_ranks(methods[i][pick]))
    if kendall:
        offsets = (np.arange(n_boot, dtype=np.int64) * g.size)[:, None]
        drawn = np.bincount((local + offsets).ravel(), minlength=n_boot * g.size)
        counts = drawn.reshape(n_boot, g.size).astype(np.float64)
        # rows with a drawn item the replicate's scale lacks are dropped (finite); an item not drawn has
        # count 0 and never enters
        taus = _kendall_of_counts(np.where(np.isfinite(x), x, 0.0), counts, [methods[i][g] for i in kendall])
        for m, i in enumerate(kendall):
            out[(gk, i, "kendall")] = taus[:, m]
    return {key: np.where(finite, values, np.nan) for key, values in out.items()}


def _group_generator(seed: int) -> Callable[[_IntArray], np.random.Generator]:
    """The generator of a component's resampling: seeded by ``seed``, its first question and its size."""
    return lambda g: np.random.default_rng([seed, int(g[0]), int(g.size)])


def _check_correlation_inputs(
    human: ArrayLike, methods: list[ArrayLike], component: ArrayLike, draws: ArrayLike | None, n_boot: int,
    ci_level: float,
) -> tuple[_FloatArray, list[_FloatArray], _IntArray, _FloatArray | None, int, float]:
    hv = np.asarray(human, dtype=np.float64)
    mvs = [np.asarray(m, dtype=np.float64) for m in methods]
    comp = np.asarray(component, dtype=np.int64)
    for mv in mvs:
        if hv.ndim != 1 or hv.shape != mv.shape or hv.shape != comp.shape:
            raise ValueError(
                f"human, method and component must be 1-D of equal length; got shapes {hv.shape}, {mv.shape}, "
                f"{comp.shape}"
            )
    n_boot = check_int(n_boot, name="n_boot", low=0)
    ci_level = check_number(ci_level, name="ci_level", low=0.0, high=1.0, low_open=True, high_open=True)
    dr = None if draws is None else np.asarray(draws, dtype=np.float64).reshape(-1, hv.size)
    return hv, mvs, comp, dr, n_boot, ci_level


def scale_correlation(
    human: ArrayLike,
    method: ArrayLike,
    component: ArrayLike,
    *,
    kind: str = "spearman",
    draws: ArrayLike | None = None,
    n_boot: int = 200,
    ci_level: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> ScaleCorrelation:
    """Correlation of a method's difficulty with the human scale, within components.

    Values of different connected components of the comparison graph are not
    on a common scale, so the coefficient is computed in each component with
    3 or more usable questions (finite human and method values) and averaged,
    weighted by the number of questions; with one component it is the plain
    coefficient.

    Parameters
    ----------
    human : array-like of float, shape (n_items,)
        The human scale (:attr:`HumanScale.difficulty`); NaN = leave out.
    method : array-like of float, shape (n_items,)
        The method's difficulty (higher = harder); NaN = no value.
    component : array-like of int, shape (n_items,)
        Component of each item (:attr:`HumanScale.component`; -1 = unjudged).
    kind : {"spearman", "kendall"}, default "spearman"
        Spearman's rho or Kendall's tau-b.
    draws : array-like of float, shape (n_draws, n_items), optional
        Bootstrap replicates of the human scale (:attr:`HumanScale.draws`).
        Replicate ``r`` uses ``draws[r % n_draws]`` as the human scale, so
        the interval carries the scale's uncertainty as well as the
        questions'; without draws only questions are resampled.
    n_boot : int, default 200
        Bootstrap replicates; each resamples questions with replacement within
        each component (0: no interval).
    ci_level : float, default 0.95
    rng : numpy.random.Generator, int or None

    Returns
    -------
    ScaleCorrelation

    Examples
    --------
    >>> c = scale_correlation([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 2.0, 4.0], [0, 0, 0, 0], n_boot=0)
    >>> round(c.value, 4), c.n
    (0.8, 4)
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}; got {kind!r}")
    hv, mvs, comp, dr, n_boot, ci_level = _check_correlation_inputs(human, [method], component, draws, n_boot,
                                                                    ci_level)
    if isinstance(rng, np.random.Generator):
        base = int(rng.integers(0, 2**63))
    elif rng is None:
        base = int(np.random.default_rng().integers(0, 2**63))
    else:
        base = int(rng)
    return _correlations(hv, mvs, comp, (kind,), dr, n_boot, ci_level, _group_generator(base))[0][kind]


def scale_correlations(
    human: ArrayLike,
    methods: Sequence[ArrayLike],
    component: ArrayLike,
    *,
    draws: ArrayLike | None = None,
    n_boot: int = 200,
    ci_level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, ScaleCorrelation]]:
    """:func:`scale_correlation` of several methods, Spearman and Kendall, with shared work.

    Parameters
    ----------
    human : array-like of float, shape (n_items,)
    methods : sequence of array-like of float, each shape (n_items,)
    component : array-like of int, shape (n_items,)
    draws : array-like of float, shape (n_draws, n_items), optional
    n_boot : int, default 200
    ci_level : float, default 0.95
    seed : int, default 0
        Seed (>= 0) of the question resampling.

    Returns
    -------
    list of dict
        Per method, ``{"spearman": ScaleCorrelation, "kendall": ScaleCorrelation}``,
        each equal to ``scale_correlation(human, method, component, kind=kind,
        draws=draws, n_boot=n_boot, ci_level=ci_level, rng=seed)``.

    Raises
    ------
    ValueError
        As :func:`scale_correlation`; also if ``seed`` is not an integer >= 0.

    Notes
    -----
    Each usable component's questions are resampled by a generator seeded
    with ``seed``, the component's first question and its size, so a
    component's replicates do not depend on the other components (a
    subject's interval is the same alone or within all subjects). Calls with
    the same seed and the same usable questions resample the same
    questions, so they are drawn once for every such method and both kinds;
    the human scale's ranks are taken once per replicate; and Kendall's tau
    of a replicate is counted from how often each question was drawn (one
    sign matrix per replicate for every method; :func:`_kendall_of_counts`)
    rather than over every pair of drawn positions, per method.

    Examples
    --------
    >>> [c] = scale_correlations([0.0, 1.0, 2.0, 3.0], [[1.0, 3.0, 2.0, 4.0]], [0, 0, 0, 0], n_boot=0)
    >>> round(c["spearman"].value, 4), round(c["kendall"].value, 4)
    (0.8, 0.6667)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0; got {seed!r}")
    hv, mvs, comp, dr, n_boot, ci_level = _check_correlation_inputs(human, list(methods), component, draws, n_boot,
                                                                    ci_level)
    return _correlations(hv, mvs, comp, _KINDS, dr, n_boot, ci_level, _group_generator(int(seed)))


def scale_correlations_by_scope(
    human: ArrayLike,
    methods: Sequence[ArrayLike],
    component: ArrayLike,
    scopes: Sequence[ArrayLike],
    *,
    draws: ArrayLike | None = None,
    n_boot: int = 200,
    ci_level: float = 0.95,
    seed: int = 0,
) -> list[list[dict[str, ScaleCorrelation]]]:
    """:func:`scale_correlations` of several scopes (subsets of the questions) at once.

    Parameters
    ----------
    human, methods, component, draws, n_boot, ci_level, seed
        As for :func:`scale_correlations`.
    scopes : sequence of array-like of bool, each shape (n_items,)
        The questions of each scope (e.g. all, then one subject each).

    Returns
    -------
    list of list of dict
        Per scope, ``scale_correlations(np.where(scope, human, nan), methods, component, ...)``.
        A component lying in several scopes (a subject's components are also
        the overall scope's) is resampled and correlated once.

    Raises
    ------
    ValueError
        As :func:`scale_correlations`; also if a scope's shape is not ``human``'s.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0; got {seed!r}")
    hv, mvs, comp, dr, n_boot, ci_level = _check_correlation_inputs(human, list(methods), component, draws, n_boot,
                                                                    ci_level)
    cache: dict[tuple[bytes, int, str], _FloatArray] = {}
    out = []
    for k, scope in enumerate(scopes):
        mask = np.asarray(scope, dtype=bool)
        if mask.shape != hv.shape:
            raise ValueError(f"scopes[{k}] must have shape {hv.shape}; got {mask.shape}")
        out.append(_correlations(np.where(mask, hv, np.nan), mvs, comp, _KINDS, dr, n_boot, ci_level,
                                 _group_generator(int(seed)), cache))
    return out
