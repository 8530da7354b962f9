"""IRT baseline timing (paper section 3.4, table 3): ``python -m bench irt [--quick]``.

Simulates one seeded binary 2PL response matrix of 35,550 questions x 30
models (about 50% correct; ``--quick``: 3,555 x 30), then times
:func:`scoring.irt.irt_1pl`, :func:`scoring.irt.irt_2pl` and
:func:`scoring.irt.irt_mirt` (paper settings: L2 0.01, bounds [-5, 5] and
[0.1, 5], at most 1000 L-BFGS-B iterations; D = 3, 1000 Adam epochs at
learning rate 0.01). When the ``mirt`` package is installed, its 2PL fit
(marginal ML by EM, no standard errors) is timed as an outside reference.

Columns:

* ``reps``: timed calls (1PL 5, 2PL 3, MIRT and the reference 1; quick: 3,
  1, 1, 1); the slow fits run once, so their figure is a single sample;
* ``median s`` / ``min s``: wall time of the whole call (validation
  included) over the repeats;
* ``iters``: L-BFGS-B iterations, Adam epochs, or EM cycles;
* ``ms/iter``: ``median s / iters``;
* ``converged``: the result's own flag (for MIRT the documented heuristic);
* ``at bound``: abilities + difficulties (+ discriminations) on a bound.

These machines are shared: the 1-minute load average is printed with the
table, and wall times can be several times the quiet-machine figures.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

SEED = 20240601
FULL = (35_550, 30)
QUICK = (3_555, 30)


def simulate_2pl(n_questions: int, n_models: int, *, rng: np.random.Generator) -> np.ndarray:
    """A bool (n_questions, n_models) matrix from a 2PL model.

    Abilities ~ N(0, 1), difficulties ~ N(0, 1), discriminations ~
    LogNormal(0, 0.3); P(correct) = sigmoid(a_q (theta_m - b_q)), so about
    half the cells are 1.
    """
    theta = rng.normal(size=n_models)
    b = rng.normal(size=n_questions)
    a = rng.lognormal(0.0, 0.3, size=n_questions)
    p = 1.0 / (1.0 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))
    return rng.random(p.shape) < p


def _timed(fn, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, statistics.median(times), min(times)


def _rows(R: np.ndarray, quick: bool):
    from scoring.irt import irt_1pl, irt_2pl, irt_mirt

    res, med, low = _timed(lambda: irt_1pl(R), 3 if quick else 5)
    yield "irt_1pl", 3 if quick else 5, med, low, res.n_iter, res.converged, int(
        res.ability_at_bound.sum() + res.difficulty_at_bound.sum()
    )
    res, med, low = _timed(lambda: irt_2pl(R), 1 if quick else 3)
    yield "irt_2pl", 1 if quick else 3, med, low, res.n_iter, res.converged, int(
        res.ability_at_bound.sum() + res.difficulty_at_bound.sum() + res.discrimination_at_bound.sum()
    )
    res, med, low = _timed(lambda: irt_mirt(R, rng=0), 1)
    yield "irt_mirt (D=3)", 1, med, low, res.n_iter, res.converged, None
    try:
        from mirt import fit_mirt
    except ImportError:
        print("(mirt package not installed: reference row skipped)")
        return
    data = R.T.astype(np.int64)  # mirt wants (persons, items) = (models, questions)
    ref, med, low = _timed(lambda: fit_mirt(data, model="2PL", compute_standard_errors=False), 1)
    yield "mirt pkg 2PL (MML-EM)", 1, med, low, int(ref.n_iterations), bool(ref.converged), None


def run(args) -> None:
    quick = getattr(args, "quick", False)
    n_questions, n_models = QUICK if quick else FULL
    R = simulate_2pl(n_questions, n_models, rng=np.random.default_rng(SEED))
    print(
        f"{n_questions:,} questions x {n_models} models, bool, {R.mean():.1%} ones; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    header = (
        f"{'method':<22} {'reps':>4} {'median s':>9} {'min s':>8} {'iters':>6} "
        f"{'ms/iter':>8} {'converged':>9} {'at bound':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, reps, med, low, iters, converged, at_bound in _rows(R, quick):
        bound = "-" if at_bound is None else str(at_bound)
        print(
            f"{name:<22} {reps:>4} {med:>9.3f} {low:>8.3f} {iters:>6} "
            f"{1e3 * med / max(iters, 1):>8.2f} {converged!s:>9} {bound:>8}",
            flush=True,
        )
