"""Start-up cost: ``python -m bench imports [--quick]``.

Each row starts a fresh interpreter ``reps`` times (10; ``--quick``: 3) and
reports the median wall time, interleaving the rows so that load on this
shared machine hits them alike:

* ``setup+urls``: ``django.setup()`` (admin, models, forms, services) and
  importing the URLconf (views, API): what a web worker does at start;
* ``setup+urls, heavy eager``: the same after first importing pandas,
  matplotlib.figure, statsmodels' inter-rater module and scipy.stats /
  scipy.optimize / scipy.sparse, which the site imported at load before
  they were moved into the functions that use them: the old start-up,
  measured in the same run as a yardstick;
* ``manage.py check`` and ``manage.py run_worker --help`` (a command and a
  worker start).

Then ``python -X importtime`` of ``setup+urls``: the ten imports with the
largest cumulative time, and whether the heavy libraries are loaded.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = "import pandas, matplotlib.figure, statsmodels.stats.inter_rater, scipy.stats, scipy.optimize, scipy.sparse"
SETUP = "import django; django.setup(); import annotate.urls"
ROWS = {
    "setup+urls": [sys.executable, "-c", SETUP],
    "setup+urls, heavy eager": [sys.executable, "-c", f"{HEAVY}; {SETUP}"],
    "manage.py check": [sys.executable, "manage.py", "check"],
    "manage.py run_worker --help": [sys.executable, "manage.py", "run_worker", "--help"],
}


def _env() -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "eipsite.settings", "PYTHONPATH": str(ROOT)}


def run(args) -> None:
    reps = 3 if getattr(args, "quick", False) else 10
    times: dict[str, list[float]] = {name: [] for name in ROWS}
    for _ in range(reps):
        for name, cmd in ROWS.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, env=_env(), check=True, capture_output=True)
            times[name].append(time.perf_counter() - t0)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {reps} interleaved runs each")
    header = f"{'start-up':<30} {'median s':>9} {'min s':>7}"
    print(header)
    print("-" * len(header))
    for name, values in times.items():
        print(f"{name:<30} {statistics.median(values):>9.3f} {min(values):>7.3f}")
    saved = statistics.median(times["setup+urls, heavy eager"]) - statistics.median(times["setup+urls"])
    print(f"heavy imports kept out of start-up: {saved:.3f} s per process (median difference)")
    names = ("pandas", "matplotlib", "statsmodels", "scipy")
    probe = f"{SETUP}; import sys; print(sorted(m for m in {names!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", probe], cwd=ROOT, env=_env(), check=True,
                         capture_output=True, text=True)
    rows = []
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print(f"\n-X importtime of setup+urls: heavy libraries loaded: {out.stdout.strip()}")
    print(f"{'cumulative ms':>13}  module")
    for cumulative, module in sorted(rows, reverse=True)[:10]:
        print(f"{cumulative / 1e3:>13.1f}  {module}")
