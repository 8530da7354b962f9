"""Alignment-report steps that grew with pairs x evaluators squared:
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
  :func:`scoring.pair_inference.paired_bootstrap_agreement_cis` (as the report: the
  resampled pairs drawn once for all six methods, in blocks of rows, each
  pair's draws counted once and every method's two counts taken by one
  matrix product); reference: one ``(n_boot, n)`` index matrix and its
  bincount per method. The intervals are checked equal.

Figures: median wall seconds over repeats, and the peak of memory allocated
during one call (``tracemalloc``, which sees numpy's buffers).

Then the **whole report** (with its targets), built in-process by
:func:`annotate.reports.services.alignment_report_compute` (2,000
bootstrap replicates, seed 0) on synthetic studies written to a fresh SQLite
file by ``bench/report_child.py``: 3,600 pairs x 27 evaluators (target < 3 s),
50,000 pairs x 5 (< 10 s, < 1 GiB), and every same-subject pair of nine
topics of 285 questions (364,230 pairs) with a solve-rate label on 236 of
them (< 10 s, < 1 GiB; report.json must stay small: it holds one page of
pairs, pairs.csv all of them). ``--quick``: 360 x 27, 5,000 x 5, 36k pairs.
Each measurement is its own process, and its memory figure is that process's
own peak resident memory (``VmHWM``, :mod:`bench._peak`; ``ru_maxrss`` would
carry over the parent's high-water mark, e.g. the bootstrap step's, across
fork and exec). The reference is the same report of this project at
commit ``BENCH_REPORT_REFERENCE`` (default: the commit before the whole-report
speed-ups; ``none`` skips it), checked out with ``git archive`` and run on
the same database, interleaved with the product; a reference run is cut at
``BENCH_REPORT_TIMEOUT`` seconds (default 900). ``BENCH_REPORT_STEPS=0``
skips the step table and runs the whole reports only.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from scoring import consensus, leave_one_out_consensus
from scoring.consensus import leave_one_out_verdicts
from scoring.pair_inference import _bootstrap_kernel, paired_bootstrap_agreement_cis
from scoring.pairs import SKIP, UNDEFINED, _scored

SEED = 16
FULL = ((3_600, 27, 0.5), (50_000, 5, 1.0))
QUICK = ((360, 27, 0.5), (5_000, 5, 1.0))
N_METHODS = 6
N_BOOT = 2000
ROOT = Path(__file__).resolve().parent.parent
CHILD = ROOT / "bench" / "report_child.py"
#: The project before the whole-report speed-ups (the reference of the whole-report table).
REFERENCE = "08a16eb5f98cf62dcc8337adb99d16245ac38bad"
WHOLE = (("3600x27", 3, 3.0, None), ("50000x5", 1, 10.0, 1024), ("364k-labelled", 1, 10.0, 1024))
WHOLE_QUICK = (("360x27", 1, 3.0, None), ("5000x5", 1, 10.0, 1024), ("36k-labelled", 1, 10.0, 1024))


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
    if os.environ.get("BENCH_REPORT_STEPS", "1") != "0":
        steps(quick)
    whole_report(quick)


def steps(quick: bool) -> None:
    """Leave-one-out consensus and bootstrap, product vs the former path (module docstring)."""
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
            return paired_bootstrap_agreement_cis(ms, c, n_boot=N_BOOT, seed=0)  # one draw for every method

        def reference(ms=methods, c=cons):
            return [bootstrap_reference(v, c, n_boot=N_BOOT, seed=0) for v in ms]

        fast_s, fast_mb, fast = _timed(product, reps_fast)
        slow_s, slow_mb, slow = _timed(reference, reps_slow)
        equal = all(f.agreement == s[0] and f.kappa == s[1] for f, s in zip(fast, slow, strict=True))
        print(f"{label:<14}{'bootstrap x' + str(N_METHODS):<16}{fast_s:>11.3f}{slow_s:>10.3f}"
              f"{slow_s / fast_s:>10.1f}{fast_mb:>10.0f}{slow_mb:>10.0f}{equal!s:>7}")
    print(f"load average after {os.getloadavg()[0]:.1f}")


def _child(args: list[str], *, timeout: float | None = None) -> dict | None:
    try:
        out = subprocess.run([sys.executable, str(CHILD), *args], capture_output=True, text=True, check=True,
                             timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as exc:
        print(f"  child failed: {exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else exc}", flush=True)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _reference_source(tmp: str) -> str | None:
    commit = os.environ.get("BENCH_REPORT_REFERENCE", REFERENCE)
    if commit.lower() == "none":
        return None
    target = Path(tmp) / "reference"
    target.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=False)
    if archive.returncode != 0:
        print(f"no reference: git archive {commit} failed", flush=True)
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return str(target)


def whole_report(quick: bool) -> None:
    """The whole report per study size, product vs the reference commit (module docstring)."""
    timeout = float(os.environ.get("BENCH_REPORT_TIMEOUT", "900"))
    print("\nwhole report (in-process, n_boot 2000); memory = peak RSS of the measuring process "
          "(the interpreter with Django alone is the 'base'); BT s = the human-scale section's share "
          "(Bradley-Terry, 200 bootstrap refits + 200 split halves)")
    print(f"{'study':<15}{'impl':<10}{'report s':>10}{'BT s':>7}{'target':>8}{'peak MiB':>10}{'base MiB':>10}"
          f"{'json MB':>9}{'json s':>8}{'pairs.csv MB':>14}{'csv s':>7}")
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        reference = _reference_source(tmp)
        for case, repeats, target_s, target_mib in (WHOLE_QUICK if quick else WHOLE):
            db = str(Path(tmp) / f"{case}.sqlite3")
            built = _child(["build", case, db, "0"])
            if built is None:
                continue
            runs = [("product", None)] + ([("reference", reference)] if reference else [])
            results: dict[str, list[dict]] = {name: [] for name, _ in runs}
            for _ in range(repeats):  # interleaved: product, reference, product, ...
                for name, source in runs:
                    r = _child(["measure", case, db, "1", *([source] if source else [])],
                               timeout=timeout if name == "reference" else None)
                    results[name].append(r if r is not None else {"seconds": float("nan"), "timeout": True})
            for name, rs in results.items():
                ok = [r for r in rs if not r.get("timeout")]
                if not ok:
                    print(f"{case:<15}{name:<10}{'> ' + str(int(timeout)):>10}  (cut)", flush=True)
                    continue
                sec = statistics.median(r["seconds"] for r in ok)
                peak = max(r["rss_peak_mib"] for r in ok)
                base = min(r["rss_before_mib"] for r in ok)
                r = ok[-1]
                tgt = f"<{target_s:g}s" + (f",{target_mib}M" if target_mib else "")
                bt = statistics.median(r.get("scale_s", float("nan")) for r in ok)
                print(f"{case:<15}{name:<10}{sec:>10.2f}{bt:>7.2f}{tgt:>8}{peak:>10.0f}{base:>10.0f}{r['json_mb']:>9.1f}"
                      f"{r['json_s']:>8.2f}{r['pairs_csv_mb']:>14.1f}{r['pairs_csv_s']:>7.2f}", flush=True)
