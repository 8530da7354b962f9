"""Several task workers on one queue: ``python -m bench workers [--quick]``.

Times the 40 jobs of ``tests/annotate/faults/test_many_workers.py`` (16
scoring runs, 12 upload loads, 12 analysis runs; the set-up is shared through
``tests/annotate/faults/many_workers.py``) run by 1, 2 and 4 ``run_worker``
processes on a scratch PostgreSQL database (created and dropped; server from
``BENCH_JUDGING_POSTGRES``, default ``postgres://postgres@127.0.0.1:5432``).

A round queues the 40 jobs and holds them, starts the workers, waits until
every one has logged that it is warm (its task modules and libraries
imported), releases the jobs in one ``UPDATE`` and waits for the last to
finish. Two times are kept apart: the **start-up** (until the slowest worker
was ready) and the **drain** (from the release until the last job's result
was recorded), which is what more workers should shorten. The worker counts
are interleaved, their order rotated every repeat, and each round is checked
(40 task results, all successful, one worker each, every worker exiting with
code 0 on SIGTERM). Prints each round, then per worker count the medians of
drain, of the workers' CPU time during the drain (summed over the workers:
what each job costs the workers themselves, apart from waiting for the
database) and of start-up, and the drain's ratio to one worker's (``--quick``: one
repeat; otherwise ``REPEATS``, or ``BENCH_WORKERS_REPEATS``), with the load
average before and after (other processes' load lengthens every figure).
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.bench_judging import _postgres_scratch

ROOT = Path(__file__).resolve().parent.parent
WORKER_COUNTS = (1, 2, 4)
#: Repeats of every worker count without ``--quick``; ``BENCH_WORKERS_REPEATS`` changes it. A
#: repeat (three rounds and their queueing) takes about two minutes on a loaded 2-core machine.
REPEATS = 2

CHILD = r"""
import json, sys, tempfile
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from tests.annotate.faults.many_workers import N_JOBS, run_round
counts, repeats = [int(n) for n in sys.argv[1].split(",")], int(sys.argv[2])
folder = Path(tempfile.mkdtemp(prefix="bench-workers-"))
seed = 0
for repeat in range(repeats):
    k = repeat % len(counts)
    for n in counts[k:] + counts[:k]:
        seed += 1
        done = run_round(folder, n, f"r{repeat}n{n}", seed)
        results = done.results
        ok = (len(results) == N_JOBS and all(r["status"] == "SUCCESSFUL" for r in results)
              and all(len(r["worker_ids"]) == 1 for r in results) and done.codes == [0] * n)
        if not ok:
            print(json.dumps({"error": f"round {repeat} with {n} workers: jobs did not all run once",
                              "logs": [log[-2000:] for log in done.logs]}), flush=True)
            sys.exit(1)
        used = len({w for r in results for w in r["worker_ids"]})
        print(json.dumps({"repeat": repeat, "workers": n, "drain": done.drain_s, "startup": max(done.startup_s),
                          "cpu": done.drain_cpu_s,
                          "workers_used": used}), flush=True)
"""


def run(args) -> None:
    quick = bool(getattr(args, "quick", False))
    repeats = 1 if quick else int(os.environ.get("BENCH_WORKERS_REPEATS", REPEATS))
    scratch = _postgres_scratch(getattr(args, "database", None) or f"bench_workers_{os.getpid()}")
    if scratch is None:
        print("PostgreSQL unreachable: skipped (several workers need a database server)")
        return
    url, drop = scratch
    store = Path(tempfile.mkdtemp(prefix="bench-workers-store-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DJANGO_SETTINGS_MODULE="eipsite.settings", PYTHONPATH=str(ROOT), DATABASE_URL=url,
               TASKS_BACKEND="database", DEBUG="1", EIP_STORE_DIR=str(store))
    print(f"load average {os.getloadavg()[0]:.1f}; {len(WORKER_COUNTS)} worker counts x {repeats} repeat(s), "
          f"interleaved; 40 jobs a round", flush=True)
    drains: dict[int, list[float]] = {n: [] for n in WORKER_COUNTS}
    startups: dict[int, list[float]] = {n: [] for n in WORKER_COUNTS}
    cpus: dict[int, list[float]] = {n: [] for n in WORKER_COUNTS}
    try:
        child = subprocess.Popen([sys.executable, "-c", CHILD, ",".join(map(str, WORKER_COUNTS)), str(repeats)],
                                 cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in child.stdout:
            row = json.loads(line)
            if "error" in row:
                print(row["error"], *row["logs"], sep="\n")
                continue
            drains[row["workers"]].append(row["drain"])
            startups[row["workers"]].append(row["startup"])
            cpus[row["workers"]].append(row["cpu"])
            print(f"  repeat {row['repeat']}: {row['workers']} worker(s) drain {row['drain']:6.1f} s "
                  f"(workers' CPU {row['cpu']:5.1f} s), start-up {row['startup']:5.1f} s "
                  f"({row['workers_used']} took jobs; load {os.getloadavg()[0]:.1f})", flush=True)
        if child.wait() != 0:
            raise RuntimeError(f"bench child failed:\n{child.stderr.read()[-3000:]}")
    finally:
        drop()
        shutil.rmtree(store, ignore_errors=True)
    one = statistics.median(drains[1])
    print(f"{'workers':>7} {'drain s':>8} {'ratio to 1':>10} {'CPU s':>6} {'start-up s':>10}  (medians)")
    for n in WORKER_COUNTS:
        median = statistics.median(drains[n])
        print(f"{n:>7} {median:>8.1f} {median / one:>10.2f} {statistics.median(cpus[n]):>6.1f} "
              f"{statistics.median(startups[n]):>10.1f}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
