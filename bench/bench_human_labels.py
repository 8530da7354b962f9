"""Human-label comparison: ``python -m bench human_labels [--quick]``.

Times :func:`scoring.human_labels.compare_with_label` (margins 0 and 0.2,
200 bootstrap replicates) on seeded labels for 236 and 100,000 labelled
questions in 14 subjects (``--quick``: 236 and 10,000), each in a fresh
process so its peak resident memory (``ru_maxrss``) is its own; the
interpreter with numpy/scipy alone is printed as a yardstick.
"""
from __future__ import annotations

import os
import subprocess
import sys

CHILD = """
import resource, sys, time
import numpy as np
from scoring.human_labels import compare_with_label
n, n_boot = int(sys.argv[1]), int(sys.argv[2])
data_seed, boot_seed = np.random.SeedSequence(0).spawn(2)  # independent streams: the data's draws
g = np.random.default_rng(data_seed)  # must not be the bootstrap's weights
d = g.random(n)
lab = np.round(d + g.normal(0, 0.3, n), 1)
s = g.integers(0, 14, n)
t = time.perf_counter()
r = compare_with_label(d, lab, s, margins=(0.0, 0.2), n_boot=n_boot, rng=np.random.default_rng(boot_seed))
seconds = time.perf_counter() - t
mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{n:>9,} {n_boot:>6} {r.margins[0].n_pairs:>14,} {seconds:>9.2f} {mib:>10.0f}")
"""
YARDSTICK = "import resource, numpy, scipy.stats, scoring.human_labels; " \
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"


def run(args) -> None:
    sizes = (236, 10_000) if args.quick else (236, 100_000)
    base = subprocess.run([sys.executable, "-c", YARDSTICK], capture_output=True, text=True, check=True)
    print(f"load average {os.getloadavg()[0]:.1f}; interpreter with numpy/scipy: {base.stdout.strip()} MiB")
    print(f"{'questions':>9} {'boot':>6} {'pairs (m=0)':>14} {'seconds':>9} {'peak MiB':>10}")
    for n in sizes:
        for n_boot in (0, 200):
            out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(n_boot)], capture_output=True, text=True,
                                 check=True)
            print(out.stdout.rstrip(), flush=True)
