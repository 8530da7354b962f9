"""EIP scaling (paper section 3.4, tables 3-4): ``python -m bench eip [--quick]``.

Each size runs in a fresh ``spawn`` subprocess that simulates a 2PL response
matrix (about 50% correct, with real item and model structure), then times
:func:`scoring.eip.eip` on it. Columns:

* ``median s``: median wall time of the whole ``eip`` call (validation, graph
  set-up and iterations) over the repeats;
* ``iters``: iterations to reach the default ``tol``;
* ``s/iter/Mcell``: ``(median s - one-iteration s) / (iters - 1)`` divided by
  millions of cells, where "one-iteration s" is the median of ``eip`` with
  ``tol=4`` (the largest possible residual, so it stops after one iteration):
  the cost of one pass without the set-up;
* ``peak RSS``: the child's own peak resident memory (``VmHWM``, :mod:`bench._peak`),
  so it includes the Python interpreter, the input matrix and generation;
* ``EIP extra``: the ``tracemalloc`` peak during one extra ``eip`` call, i.e. the
  memory EIP allocates beyond its input (numpy reports its buffers to tracemalloc).
"""
from __future__ import annotations

import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from bench._peak import own_peak_mib

GENERATION_CHUNK_CELLS = 8 * 2**20  # float32 temporaries of 32 MiB while simulating
SEED = 20240601


@dataclass(frozen=True)
class Size:
    n_questions: int
    n_models: int
    dtype: str
    repeats: int
    quick_repeats: int


SIZES = [
    Size(35_550, 30, "float64", repeats=50, quick_repeats=10),
    Size(100_000, 100, "uint8", repeats=10, quick_repeats=3),
    Size(1_000_000, 30, "uint8", repeats=5, quick_repeats=0),
    Size(1_000_000, 2_000, "uint8", repeats=2, quick_repeats=0),
]


def simulate_2pl(n_questions: int, n_models: int, *, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """A 0/1 response matrix from a 2PL model, generated in row chunks.

    Abilities ~ N(0, 1), difficulties ~ N(0, 1), discriminations ~
    LogNormal(0, 0.3); P(correct) = sigmoid(a_q (theta_m - b_q)). Only the
    output matrix and one chunk of float32 temporaries are alive at a time.
    """
    theta = rng.normal(size=n_models).astype(np.float32)
    b = rng.normal(size=n_questions).astype(np.float32)
    a = rng.lognormal(0.0, 0.3, size=n_questions).astype(np.float32)
    out = np.empty((n_questions, n_models), dtype=dtype)
    rows = max(1, GENERATION_CHUNK_CELLS // n_models)
    for start in range(0, n_questions, rows):
        stop = min(start + rows, n_questions)
        logit = a[start:stop, None] * (theta[None, :] - b[start:stop, None])
        p = 1.0 / (1.0 + np.exp(-logit))
        out[start:stop] = rng.random(p.shape, dtype=np.float32) < p
    return out


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(size: Size, repeats: int) -> dict:
    """Run in a fresh child process: simulate, time, measure memory."""
    import tracemalloc

    from scoring.eip import eip

    R = simulate_2pl(size.n_questions, size.n_models, dtype=size.dtype, rng=np.random.default_rng(SEED))
    result = eip(R)  # warm-up; also gives n_iter
    seconds = _median_seconds(lambda: eip(R), repeats)
    one_iteration = _median_seconds(lambda: eip(R, tol=4.0), max(1, repeats // 2))
    tracemalloc.start()
    eip(R)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    cells = size.n_questions * size.n_models
    per_iteration = (seconds - one_iteration) / max(1, result.n_iter - 1)
    return {
        "seconds": seconds,
        "n_iter": result.n_iter,
        "per_iter_per_mcell": per_iteration / (cells / 1e6),
        "input_mib": R.nbytes / 2**20,
        "density": float(np.mean(R, dtype=np.float64)),
        "peak_rss_mib": own_peak_mib(),
        "eip_extra_mib": traced_peak / 2**20,
        "kept": int(result.kept.sum()),
    }


def run(args) -> None:
    quick = getattr(args, "quick", False)
    sizes = [s for s in SIZES if not quick or s.quick_repeats > 0]
    header = (
        f"{'size':>17} {'dtype':>7} {'input MiB':>9} {'ones':>5} {'reps':>4} {'median s':>9} "
        f"{'iters':>5} {'s/iter/Mcell':>12} {'peak RSS MiB':>12} {'EIP extra MiB':>13}"
    )
    print(header)
    print("-" * len(header))
    context = multiprocessing.get_context("spawn")
    for size in sizes:
        repeats = size.quick_repeats if quick else size.repeats
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            row = pool.submit(measure, size, repeats).result()
        print(
            f"{size.n_questions:>8,} x {size.n_models:<6,} {size.dtype:>7} {row['input_mib']:>9.1f} "
            f"{row['density']:>5.2f} {repeats:>4} {row['seconds']:>9.4f} {row['n_iter']:>5} "
            f"{row['per_iter_per_mcell']:>12.2e} {row['peak_rss_mib']:>12.0f} {row['eip_extra_mib']:>13.1f}",
            flush=True,
        )
    print(
        "median s: whole eip() call (default alpha=0.85, tol=1e-10); s/iter/Mcell excludes set-up; "
        "peak RSS: child VmHWM (includes input and generation); EIP extra: tracemalloc peak of one call"
    )
