"""Speed of EIP and the IRT baselines (section 3.4, tables 3 and 4).

* :func:`time_methods` -- median wall time, iterations and convergence of
  each method on one matrix (table 3).
* :func:`eip_scaling` -- EIP on synthetic matrices of growing size:
  median seconds, iterations and seconds per iteration per million cells
  (table 4).
* :func:`simulate_responses` -- the synthetic 0/1 matrices, generated in
  row chunks straight into ``uint8`` so that 1,000,000 x 2,000 needs about
  2 GB and no float copy.

Timings are wall-clock (``time.perf_counter``) medians over repeats: on a
shared machine the median is robust to other processes, the minimum is not.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray
from scoring._validation import as_rng, check_in_open_interval, check_positive_int, check_response_matrix
from scoring.eip import EIPResult, eip
from scoring.exceptions import ConvergenceError
from scoring.irt import IRTResult, irt_1pl, irt_2pl
from scoring.mirt import MIRTResult, irt_mirt

__all__ = [
    "DENSITY_MODELS",
    "SimulatedResponses",
    "MethodTiming",
    "TimingResult",
    "ScalingRow",
    "ScalingResult",
    "simulate_responses",
    "time_methods",
    "eip_scaling",
]

DENSITY_MODELS = ("1pl", "uniform")
_FITTERS: dict[str, Callable[..., EIPResult | IRTResult | MIRTResult]] = {
    "eip": eip,
    "irt_1pl": irt_1pl,
    "irt_2pl": irt_2pl,
    "irt_mirt": irt_mirt,
}


@dataclass(frozen=True)
class SimulatedResponses:
    """A synthetic binary response matrix and the parameters that drew it.

    Attributes
    ----------
    R : ndarray of uint8, shape (n_questions, n_models)
        1 = solved, 0 = failed; fully observed.
    ability : ndarray of shape (n_models,) or None
        theta_m (1PL model only).
    difficulty : ndarray of shape (n_questions,) or None
        beta_q (1PL model only).
    model : str
        "1pl" or "uniform".
    """

    R: NDArray[np.uint8]
    ability: FloatArray | None
    difficulty: FloatArray | None
    model: str


def simulate_responses(
    n_questions: int,
    n_models: int,
    *,
    model: str = "1pl",
    rng: np.random.Generator | int | None = None,
    chunk_bytes: int = 16 * 2**20,
) -> SimulatedResponses:
    """Draw a synthetic 0/1 response matrix in row chunks, stored as uint8.

    Parameters
    ----------
    n_questions, n_models : int
        Shape, each >= 1.
    model : {"1pl", "uniform"}, default "1pl"
        "1pl": ``P(solve) = sigmoid(theta_m - beta_q)`` with theta_m and
        beta_q i.i.d. N(0, 1), so models and questions differ as in real
        benchmarks (overall density about 0.5). "uniform": every cell is 1
        with probability 0.5 independently.
    rng : numpy.random.Generator, int or None
    chunk_bytes : int, default 16 MiB
        Size of the float64 uniform draws per chunk (rows per chunk =
        ``chunk_bytes // (8 * n_models)``, at least 1). The result does not
        depend on it.

    Returns
    -------
    SimulatedResponses
        ``R`` (uint8) plus ``ability`` and ``difficulty`` for "1pl".

    Raises
    ------
    ValueError
        If a size or ``chunk_bytes`` is not an integer >= 1 or ``model`` is
        unknown.

    Notes
    -----
    Draw order: theta (n_models), beta (n_questions), then one uniform
    ``u`` per cell in row-major order. A cell is 1 when ``u < p``; for 1PL
    this is evaluated without a transcendental per cell as
    ``u * (1 + x) < x`` with ``x = exp(theta_m) * exp(-beta_q)``. Peak
    memory is the uint8 matrix plus about ``3 * chunk_bytes``.

    References
    ----------
    EIP paper, section 3.4 and table 4 (synthetic matrices up to
    1,000,000 x 2,000).

    Examples
    --------
    >>> sim = simulate_responses(1000, 20, rng=0)
    >>> sim.R.dtype, sim.R.shape
    (dtype('uint8'), (1000, 20))
    """
    n_questions = check_positive_int(n_questions, name="n_questions")
    n_models = check_positive_int(n_models, name="n_models")
    chunk_bytes = check_positive_int(chunk_bytes, name="chunk_bytes")
    if model not in DENSITY_MODELS:
        raise ValueError(f"model must be one of {DENSITY_MODELS}; got {model!r}")
    gen = as_rng(rng)
    R = np.empty((n_questions, n_models), dtype=np.uint8)
    rows = max(1, chunk_bytes // (8 * n_models))
    theta: FloatArray | None = None
    beta: FloatArray | None = None
    if model == "1pl":
        theta = gen.standard_normal(n_models)
        beta = gen.standard_normal(n_questions)
        e_theta, e_minus_beta = np.exp(theta), np.exp(-beta)
    u = np.empty((rows, n_models))
    for start in range(0, n_questions, rows):
        stop = min(start + rows, n_questions)
        uc = u[: stop - start]
        gen.random(out=uc)
        if model == "1pl":
            x = np.multiply.outer(e_minus_beta[start:stop], e_theta)
            np.less(uc * (1.0 + x), x, out=R[start:stop], casting="unsafe")
        else:
            np.less(uc, 0.5, out=R[start:stop], casting="unsafe")
    return SimulatedResponses(R=R, ability=theta, difficulty=beta, model=model)


@dataclass(frozen=True)
class MethodTiming:
    """Timing of one method (a row of table 3).

    Attributes
    ----------
    method : str
    median_seconds : float or None
        Median over the successful repeats; None if every repeat failed.
    seconds : tuple of float
        Every repeat's wall time.
    n_iter : int or None
        Iterations (EIP), optimiser iterations (1PL/2PL) or epochs (MIRT) of
        the last repeat.
    converged : bool or None
        The method's convergence flag (MIRT: its heuristic); False for an
        EIP ConvergenceError.
    error : str or None
        The error message if the method raised.
    """

    method: str
    median_seconds: float | None
    seconds: tuple[float, ...]
    n_iter: int | None
    converged: bool | None
    error: str | None = None


@dataclass(frozen=True)
class TimingResult:
    """Result of :func:`time_methods`.

    Attributes
    ----------
    timings : dict of str to MethodTiming
    n_questions, n_models : int
    """

    timings: dict[str, MethodTiming]
    n_questions: int
    n_models: int


def _check_repeats(repeats: int | Mapping[str, int], methods: tuple[str, ...]) -> dict[str, int]:
    if isinstance(repeats, Mapping):
        unknown = sorted(set(repeats) - set(methods))
        if unknown:
            raise ValueError(f"repeats names methods not being timed: {unknown}")
        return {m: check_positive_int(repeats.get(m, 1), name=f"repeats[{m!r}]") for m in methods}
    r = check_positive_int(repeats, name="repeats")
    return dict.fromkeys(methods, r)


def time_methods(
    R: ArrayLike,
    *,
    methods: Iterable[str] = ("eip", "irt_1pl", "irt_2pl", "irt_mirt"),
    repeats: int | Mapping[str, int] = 3,
    method_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> TimingResult:
    """Time EIP and the IRT baselines on one response matrix (table 3).

    Parameters
    ----------
    R : array-like of shape (n_questions, n_models)
        Credit in [0, 1]; NaN = not observed; bool/integer 0/1 accepted.
    methods : sequence of str, default ("eip", "irt_1pl", "irt_2pl", "irt_mirt")
        Any of those four names.
    repeats : int or mapping of str to int, default 3
        Timed runs per method (a mapping may give the slow ones fewer;
        methods it omits run once).
    method_kwargs : mapping of str to mapping, optional
        Extra keyword arguments per method, e.g. ``{"irt_mirt": {"epochs":
        1000, "rng": 0}}``.

    Returns
    -------
    TimingResult
        Per method: median seconds, all repeat times, iterations and the
        convergence flag.

    Raises
    ------
    ValueError
        If ``R`` is invalid, a method name is unknown or repeated, or a
        repeat count is not an integer >= 1.

    Notes
    -----
    The input is validated once here; each method validates it again, which
    is part of its timed cost (as it is for a caller). A method that raises
    ``ValueError``, ``ConvergenceError`` or ``FloatingPointError`` is
    recorded with its error, not re-raised.

    References
    ----------
    EIP paper, section 3.4, table 3 (EIP 0.00597 s on 35,550 x 30).

    Examples
    --------
    >>> import numpy as np
    >>> R = (np.random.default_rng(0).random((300, 8)) < 0.5)
    >>> res = time_methods(R, methods=("eip",), repeats=2)
    >>> len(res.timings["eip"].seconds)
    2
    """
    R = check_response_matrix(R)
    methods = tuple(methods)
    unknown = [m for m in methods if m not in _FITTERS]
    if unknown or not methods:
        raise ValueError(f"methods must be a non-empty subset of {tuple(_FITTERS)}; got {methods!r}")
    if len(set(methods)) != len(methods):
        raise ValueError(f"methods must not repeat a name; got {methods!r}")
    counts = _check_repeats(repeats, methods)
    kwargs = dict(method_kwargs or {})
    stray = sorted(set(kwargs) - set(methods))
    if stray:
        raise ValueError(f"method_kwargs names methods not being timed: {stray}")

    timings = {}
    for method in methods:
        fitter, kw = _FITTERS[method], dict(kwargs.get(method, {}))
        seconds: list[float] = []
        n_iter: int | None = None
        converged: bool | None = None
        error: str | None = None
        for _ in range(counts[method]):
            t0 = time.perf_counter()
            try:
                fit = fitter(R, **kw)
            except ConvergenceError as exc:
                seconds.append(time.perf_counter() - t0)
                n_iter, converged, error = exc.n_iter, False, str(exc)
                continue
            except (ValueError, FloatingPointError) as exc:
                error = str(exc)
                break
            seconds.append(time.perf_counter() - t0)
            n_iter, converged = int(fit.n_iter), bool(fit.converged)
        timings[method] = MethodTiming(
            method=method,
            median_seconds=statistics.median(seconds) if seconds else None,
            seconds=tuple(seconds),
            n_iter=n_iter,
            converged=converged,
            error=error,
        )
    return TimingResult(timings=timings, n_questions=R.shape[0], n_models=R.shape[1])


@dataclass(frozen=True)
class ScalingRow:
    """EIP on one synthetic size (a row of table 4).

    Attributes
    ----------
    n_questions, n_models : int
    n_cells : int
        ``n_questions * n_models``.
    density : float
        Share of 1s in the generated matrix.
    median_seconds : float
        Median EIP wall time over the repeats (generation not included).
    seconds : tuple of float
    n_iter : int
    seconds_per_iter_per_mcell : float
        ``median_seconds / n_iter / (n_cells / 1e6)``.
    generation_seconds : float
        Time to draw the matrix (not part of the EIP timing).
    """

    n_questions: int
    n_models: int
    n_cells: int
    density: float
    median_seconds: float
    seconds: tuple[float, ...]
    n_iter: int
    seconds_per_iter_per_mcell: float
    generation_seconds: float


@dataclass(frozen=True)
class ScalingResult:
    """Result of :func:`eip_scaling`.

    Attributes
    ----------
    rows : tuple of ScalingRow
        In the order of ``sizes``.
    density_model : str
    alpha : float
    repeats : int
    """

    rows: tuple[ScalingRow, ...]
    density_model: str
    alpha: float
    repeats: int


def eip_scaling(
    sizes: Iterable[tuple[int, int]],
    *,
    density_model: str = "1pl",
    rng: np.random.Generator | int | None = 0,
    repeats: int = 3,
    alpha: float = 0.85,
    eip_kwargs: Mapping[str, Any] | None = None,
    progress: Callable[[ScalingRow], object] | None = None,
) -> ScalingResult:
    """Time EIP on synthetic matrices of growing size (table 4).

    Parameters
    ----------
    sizes : iterable of (int, int)
        ``(n_questions, n_models)`` pairs. 1,000,000 x 2,000 is feasible
        (the uint8 matrix takes 2 GB; EIP streams it in chunks).
    density_model : {"1pl", "uniform"}, default "1pl"
        How the matrices are drawn (see :func:`simulate_responses`).
    rng : numpy.random.Generator, int or None, default 0
        One generator for all sizes, used in order.
    repeats : int, default 3
        Timed EIP runs per size.
    alpha : float, default 0.85
        EIP damping factor.
    eip_kwargs : mapping, optional
        Further keyword arguments for :func:`scoring.eip.eip` (``tol``,
        ``max_iter``, ``chunk_bytes``).
    progress : callable, optional
        Called as ``progress(row)`` with each finished :class:`ScalingRow`.

    Returns
    -------
    ScalingResult
        Per size: median seconds, iterations and seconds per iteration per
        million cells (constant if the cost is linear in Q x M).

    Raises
    ------
    ValueError
        If a size is not a pair of integers >= 1, ``density_model`` is
        unknown, ``repeats`` < 1 or ``alpha`` outside (0, 1).
    ConvergenceError
        If EIP does not converge on a generated matrix.

    References
    ----------
    EIP paper, section 3.4, table 4 (constant 9 iterations, per-iteration
    time linear in Q x M).

    Examples
    --------
    >>> res = eip_scaling([(500, 5), (1000, 10)], repeats=1)
    >>> [(r.n_questions, r.n_models) for r in res.rows]
    [(500, 5), (1000, 10)]
    """
    pairs = []
    for size in sizes:
        try:
            q, m = size
        except (TypeError, ValueError):
            raise ValueError(f"sizes must hold (n_questions, n_models) pairs; got {size!r}") from None
        pairs.append((check_positive_int(q, name="sizes"), check_positive_int(m, name="sizes")))
    if not pairs:
        raise ValueError("sizes must hold at least one (n_questions, n_models) pair")
    if density_model not in DENSITY_MODELS:
        raise ValueError(f"density_model must be one of {DENSITY_MODELS}; got {density_model!r}")
    repeats = check_positive_int(repeats, name="repeats")
    alpha = check_in_open_interval(alpha, name="alpha", low=0.0, high=1.0)
    kw = dict(eip_kwargs or {})
    if "alpha" in kw:
        raise ValueError("eip_kwargs must not set alpha; use the alpha parameter")
    gen = as_rng(rng)

    rows = []
    for q, m in pairs:
        t0 = time.perf_counter()
        R = simulate_responses(q, m, model=density_model, rng=gen).R
        generation = time.perf_counter() - t0
        density = float(R.mean(dtype=np.float64))
        seconds = []
        n_iter = 0
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = eip(R, alpha=alpha, **kw)
            seconds.append(time.perf_counter() - t0)
            n_iter = int(res.n_iter)
        del R, res
        median = statistics.median(seconds)
        row = ScalingRow(
            n_questions=q,
            n_models=m,
            n_cells=q * m,
            density=density,
            median_seconds=median,
            seconds=tuple(seconds),
            n_iter=n_iter,
            seconds_per_iter_per_mcell=median / n_iter / (q * m / 1e6),
            generation_seconds=generation,
        )
        rows.append(row)
        if progress is not None:
            progress(row)
    return ScalingResult(rows=tuple(rows), density_model=density_model, alpha=alpha, repeats=repeats)
