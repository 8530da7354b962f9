"""Alignment-report steps that grew with pairs x evaluators squared (issue 16):
``python -m bench report [--quick]``.

Builds two synthetic studies as the report sees them (the ``human`` matrix of
evaluator x pair codes: ``FIRST``/``SECOND`` from a hidden truth at 75%
accuracy, 5% skips, and pairs an evaluator did not judge), 3,600 pairs x 27
evaluators (each judges a pair with probability 0.5) and 50,000 pairs x 5
evaluators (everyone judges every pair); ``--quick``: 360 x 27 and 5,000 x 5.
Then times, product against the code path it replaced (kept here as the
reference):

* ``loo consensus``: every evaluator's consensus of the others.
  Product: :func:`scoring.consensus.leave_one_out_verdicts` (one array pass);
  reference: one :func:`scoring.leave_one_out_consensus` call per evaluator
  over the judgment list, as the report did. The verdicts are checked equal.
* ``bootstrap``: the percentile intervals of six methods against the
  consensus, 2,000 replicates, seed 0. Product:
  :func:`scoring.bootstrap_agreement_ci` (rows drawn in blocks, both counts
  from one gather and one row sum); reference: the one ``(n_boot, n)`` index
  matrix and its bincount. The intervals are checked equal.

Figures: median wall seconds over repeats, and the peak of memory allocated
during one call (``tracemalloc``, which sees numpy's buffers).
"""
from __future__ import annotations

import os
import statistics
import time
import tracemalloc

import numpy as np

from scoring import bootstrap_agreement_ci, consensus, leave_one_out_consensus
from scoring.consensus import leave_one_out_verdicts
from scoring.pairs import SKIP, UNDEFINED, _bootstrap_kernel, _scored

SEED = 16
FULL = ((3_600, 27, 0.5), (50_000, 5, 1.0))
QUICK = ((360, 27, 0.5), (5_000, 5, 1.0))
N_METHODS = 6
N_BOOT = 2000


def simulate(n_pairs: int, n_evaluators: int, p_judge: float, rng: np.random.Generator) -> np.ndarray:
    truth = rng.integers(0, 2, size=n_pairs)
    right = rng.random((n_evaluators, n_pairs)) < 0.75
    human = np.where(right, truth, 1 - truth).astype(np.int8)
    human[rng.random((n_evaluators, n_pairs)) < 0.05] = SKIP
    human[rng.random((n_evaluators, n_pairs)) >= p_judge] = UNDEFINED
    return human


def judgments_of(human: np.ndarray) -> list[tuple[int, int, int]]:
    e, p = np.nonzero(human != UNDEFINED)
    return list(zip(p.tolist(), e.tolist(), human[e, p].tolist(), strict=True))


def loo_reference(human: np.ndarray) -> np.ndarray:
    """The report's former path: one leave-one-out consensus per evaluator."""
    judgments = judgments_of(human)
    out = np.full(human.shape, int(UNDEFINED), dtype=np.int8)
    for e in range(human.shape[0]):
        others = leave_one_out_consensus(judgments, e)
        for rec in others.pairs:
            out[e, rec.pair_id] = int(rec.verdict)
    return out


def bootstrap_reference(method: np.ndarray, cons: np.ndarray, *, n_boot: int, seed: int) -> tuple:
    """The former bootstrap: one (n_boot, n) index matrix."""
    m, h, _ = _scored(method, cons)
    idx = np.random.default_rng(seed).integers(0, m.size, size=(n_boot, m.size))
    agreement, kappa = _bootstrap_kernel(m, h, idx)
    q = ((1.0 - 0.95) / 2.0, (1.0 + 0.95) / 2.0)  # as the product computes them
    return tuple(float(x) for x in np.quantile(agreement, q)), tuple(
        float(x) for x in np.quantile(kappa[~np.isnan(kappa)], q))


def _timed(fn, reps: int) -> tuple[float, float, object]:
    """(median seconds, peak MiB of one call, last result)."""
    times = []
    result = None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return statistics.median(times), peak, result


def run(args) -> None:
    quick = bool(getattr(args, "quick", False))
    sizes = QUICK if quick else FULL
    reps_fast, reps_slow = (3, 1) if quick else (5, 1)
    print(f"load average before {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"product {reps_fast} repeats, reference {reps_slow} (+1 traced call each)")
    print(f"{'study':<14}{'step':<16}{'product s':>11}{'ref s':>10}{'speed-up':>10}"
          f"{'prod MiB':>10}{'ref MiB':>10}{'equal':>7}")
    for n_pairs, n_evaluators, p_judge in sizes:
        rng = np.random.default_rng(SEED)
        human = simulate(n_pairs, n_evaluators, p_judge, rng)
        label = f"{n_pairs:,} x {n_evaluators}"
        fast_s, fast_mb, fast = _timed(lambda h=human: leave_one_out_verdicts(h), reps_fast)
        slow_s, slow_mb, slow = _timed(lambda h=human: loo_reference(h), reps_slow)
        equal = bool(np.array_equal(fast, slow))
        print(f"{label:<14}{'loo consensus':<16}{fast_s:>11.3f}{slow_s:>10.3f}{slow_s / fast_s:>10.0f}"
              f"{fast_mb:>10.0f}{slow_mb:>10.0f}{equal!s:>7}")
        cons = consensus(judgments_of(human)).verdicts(range(n_pairs))
        methods = [np.where(rng.random(n_pairs) < 0.7, cons.clip(0, 1), 1 - cons.clip(0, 1)).astype(np.int8)
                   for _ in range(N_METHODS)]

        def product(ms=methods, c=cons):
            return [bootstrap_agreement_ci(v, c, n_boot=N_BOOT, rng=0) for v in ms]

        def reference(ms=methods, c=cons):
            return [bootstrap_reference(v, c, n_boot=N_BOOT, seed=0) for v in ms]

        fast_s, fast_mb, fast = _timed(product, reps_fast)
        slow_s, slow_mb, slow = _timed(reference, reps_slow)
        equal = all(f.agreement == s[0] and f.kappa == s[1] for f, s in zip(fast, slow, strict=True))
        print(f"{label:<14}{'bootstrap x' + str(N_METHODS):<16}{fast_s:>11.3f}{slow_s:>10.3f}"
              f"{slow_s / fast_s:>10.1f}{fast_mb:>10.0f}{slow_mb:>10.0f}{equal!s:>7}")
    print(f"load average after {os.getloadavg()[0]:.1f}")
