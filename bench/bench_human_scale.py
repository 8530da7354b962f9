"""The human-scale section of a report: ``python -m bench human_scale [--quick]``.

Times :func:`scoring.human_scale.human_scale` with the report's settings
(penalty 0.1, 200 bootstrap refits resampling evaluators, 100 split-half
splits = 200 more refits, tol 1e-9, seed 0) on synthetic judgments shaped
like the three report benches (``bench/report_child.py``): 3,600 pairs of
three 100-question subjects x 27 evaluators judging each pair with
probability 0.5; 50,000 pairs of one 317-question subject x 5 evaluators
judging every pair (one component above ``DENSE_MAX``: the sparse path);
every same-subject pair of nine 285-question subjects (364,230 pairs), 3
evaluators judging 2,000 each. Verdicts from a hidden normal truth at 75%
accuracy, 5% skips dropped. ``--quick``: 360 x 27, 5,000 x 5 (101
questions), nine 90-question subjects.

Product: warm-started refits, a repeated draw of evaluators fitted once.
Reference, in the same run: every refit from 0 and every draw refitted
(``_human_scale(..., warm_start=False, reuse=False)``, the code before).
Runs interleaved; median wall seconds, their ratio, and the largest
difference of a bootstrap draw and of split-half (Pearson, Spearman)
between the two.
"""
from __future__ import annotations

import os
import statistics
import time
import warnings

import numpy as np

#: name -> (subject sizes, pairs drawn (None = all same-subject pairs), evaluators, p(judge) or pairs each)
CASES = {
    "3600x27": ((100, 100, 100), 3_600, 27, 0.5),
    "50000x5": ((317,), 50_000, 5, 1.0),
    "364k": ((285,) * 9, None, 3, 2_000),
    "360x27": ((30, 30, 30), 360, 27, 0.5),
    "5000x5": ((101,), 5_000, 5, 1.0),
    "36k": ((90,) * 9, None, 3, 2_000),
}
SEED = 16


def judgments(case: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """``(harder, other, evaluator, n_items, n_evaluators)`` of ``case`` (skips dropped)."""
    sizes, n_pairs, m, p = CASES[case]
    rng = np.random.default_rng(SEED)
    truth = rng.normal(size=sum(sizes))
    blocks, start = [], 0
    for size in sizes:
        i, j = np.triu_indices(size, k=1)
        blocks.append(np.column_stack([start + i, start + j]))
        start += size
    every = np.concatenate(blocks)
    if n_pairs is not None:
        every = every[rng.choice(every.shape[0], size=n_pairs, replace=False)]
    hs, os_, es = [], [], []
    for ev in range(m):
        chosen = (np.flatnonzero(rng.random(every.shape[0]) < p) if p <= 1
                  else rng.choice(every.shape[0], size=int(p), replace=False))
        right = rng.random(chosen.size) < 0.75
        vote = rng.random(chosen.size) >= 0.05
        a, b = every[chosen, 0], every[chosen, 1]
        a_harder = (truth[a] > truth[b]) == right
        hs.append(np.where(a_harder, a, b)[vote])
        os_.append(np.where(a_harder, b, a)[vote])
        es.append(np.full(int(vote.sum()), ev))
    return np.concatenate(hs), np.concatenate(os_), np.concatenate(es), sum(sizes), m


def run(args) -> None:
    from scoring.human_scale import HumanScaleWarning, _human_scale, _one_blas_thread

    cases = ("360x27", "5000x5", "36k") if args.quick else ("3600x27", "50000x5", "364k")
    repeats = 1 if args.quick else int(os.environ.get("BENCH_HUMAN_SCALE_REPEATS", "3"))
    print(f"load average {os.getloadavg()[0]:.1f}; {repeats} interleaved repeat(s); reference = cold start, "
          "every draw refitted")
    print(f"{'case':>9} {'votes':>8} {'items':>6} {'ref s':>8} {'product s':>10} {'ratio':>6} "
          f"{'max|draw diff|':>15} {'split diff':>10} {'spearman diff':>14}")
    kw = {"penalty": 0.1, "n_boot": 200, "n_splits": 100, "ci_level": 0.95, "misfit_threshold": 1.3,
          "tol": 1e-9, "max_iter": 100, "rng": 0}
    for case in cases:
        h, o, e, n, m = judgments(case)
        times: dict[str, list[float]] = {"ref": [], "new": []}
        out = {}
        with warnings.catch_warnings(), _one_blas_thread():
            warnings.simplefilter("ignore", HumanScaleWarning)
            for _ in range(repeats):
                for name, opts in (("ref", {"warm_start": False, "reuse": False}), ("new", {})):
                    t0 = time.perf_counter()
                    out[name] = _human_scale(h, o, e, n_items=n, n_evaluators=m, **kw, **opts)
                    times[name].append(time.perf_counter() - t0)
        ref, new = statistics.median(times["ref"]), statistics.median(times["new"])
        a, b = out["ref"], out["new"]
        draw = float(np.nanmax(np.abs(a.draws - b.draws))) if np.isfinite(a.draws).any() else float("nan")
        print(f"{case:>9} {h.size:>8,} {n:>6} {ref:>8.2f} {new:>10.2f} {ref / new:>5.1f}x {draw:>15.1e} "
              f"{abs(a.split_half - b.split_half):>10.1e} {abs(a.split_half_spearman - b.split_half_spearman):>14.1e}",
              flush=True)
