"""Loading response sets: ``python -m bench load [--quick]``.

For each backend (SQLite, then PostgreSQL) a child process creates a throwaway
test database with Django's test-database utilities (SQLite: a file in a
temporary folder; PostgreSQL: ``test_eip_bench_load`` on the server of
``DATABASE_URL`` when that is a postgres URL, else
``postgres://postgres@127.0.0.1:5432/test``), runs the migrations, times the
loads and drops the database. Inputs, each a fresh dataset so that every load
creates its questions:

* ``long``: a long CSV of 1,000,000 observed rows (20,000 questions x 50
  models, credits 0/1 with 10% partial credit), ``parse_files(format="long")``;
* ``wide``: the same cells as a wide CSV (20,000 x 50);
* ``mmlu-pro``: ``../shared/data/mmlu-pro`` via ``parse_folder`` (383,274
  observed cells), when the shared data folder is there.

Columns: ``parse s`` (read and check the files), ``load s``
(:func:`annotate.catalog.services.loading.response_set_load`: every check, catalog
rows, response set, membership rows and its matrix store), ``rows/s`` = observed
rows / (parse + load) and ``write rows/s`` = rows / load. Medians over the
repeats (2 of each; ``--quick``: 100,000 rows, one repeat).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SEED = 20240603
N_MODELS = 50
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/test"
PG_TEST_NAME = "test_eip_bench_load"


def _write_inputs(folder: Path, n_rows: int, seed: int) -> tuple[Path, Path]:
    """A long and a wide CSV holding the same n_rows cells (n_rows / N_MODELS questions)."""
    rng = np.random.default_rng(seed)
    n_questions = n_rows // N_MODELS
    credit = (rng.random((n_questions, N_MODELS)) < 0.5).astype(float)
    partial = rng.random((n_questions, N_MODELS)) < 0.1
    credit[partial] = np.round(rng.random(partial.sum()), 3)
    ids = [f"q{i}" for i in range(n_questions)]
    models = [f"model-{j:02d}" for j in range(N_MODELS)]
    wide = folder / f"wide_{seed}.csv"
    with wide.open("w", encoding="utf-8") as handle:
        handle.write("question_id," + ",".join(models) + "\n")
        for qid, row in zip(ids, credit.tolist()):
            handle.write(qid + "," + ",".join(repr(c) for c in row) + "\n")
    long = folder / f"long_{seed}.csv"
    with long.open("w", encoding="utf-8") as handle:
        handle.write("model,question_id,credit\n")
        for qid, row in zip(ids, credit.tolist()):
            handle.writelines(f"{m},{qid},{c!r}\n" for m, c in zip(models, row))
    return long, wide


def _child(backend: str, n_rows: int, repeats: int) -> list[dict]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "eipsite.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from annotate.catalog.loaders.tabular_files import parse_files, parse_folder
    from annotate.catalog.services.loading import response_set_load

    work = Path(tempfile.mkdtemp(prefix="eip-bench-load-"))
    test_name = str(work / "bench.sqlite3") if backend == "sqlite" else PG_TEST_NAME
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = test_name
    connection.settings_dict.setdefault("TEST", {})["NAME"] = test_name
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    results = []
    try:
        inputs = []
        for repeat in range(repeats):
            long, wide = _write_inputs(work, n_rows, SEED + repeat)
            inputs.append(("long", repeat, lambda p=long, r=repeat: parse_files(
                responses=p, file_format="long", dataset=f"bench-long-{r}")))
            inputs.append(("wide", repeat, lambda p=wide, r=repeat: parse_files(
                responses=p, file_format="wide", dataset=f"bench-wide-{r}")))
        shared = Path(os.environ.get("EIP_SHARED_DATA", ROOT.parent / "shared" / "data")) / "mmlu-pro"
        if shared.is_dir():
            inputs.append(("mmlu-pro", 0, lambda: parse_folder(
                shared, dataset="MMLU-Pro", subject_column="category",
                keep_columns=["src", "source_dataset", "mmlu_subject", "mmlu_level"])))
        for label, repeat, parse in inputs:
            t0 = time.perf_counter()
            parsed = parse()
            t1 = time.perf_counter()
            response_set_load(parsed=parsed, name=f"bench {label} {repeat}")
            t2 = time.perf_counter()
            results.append({"backend": backend, "input": label, "rows": len(parsed.responses),
                            "parse_s": t1 - t0, "load_s": t2 - t1})
            del parsed
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)
        for path in work.iterdir():
            path.unlink()
        work.rmdir()
    return results


def _postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else DEFAULT_PG_URL


def run(args: argparse.Namespace) -> None:
    quick = getattr(args, "quick", False)
    n_rows, repeats = (100_000, 1) if quick else (1_000_000, 2)
    backends = [("sqlite", "sqlite:///" + str(Path(tempfile.gettempdir()) / "eip-bench-unused.sqlite3")),
                ("postgresql", _postgres_url())]
    rows: list[dict] = []
    for backend, url in backends:
        env = {**os.environ, "DATABASE_URL": url}
        command = [sys.executable, "-m", "bench.bench_load", "--child", backend, str(n_rows), str(repeats)]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"{backend}: skipped ({last})", flush=True)
            continue
        rows.extend(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{'backend':<11} {'input':<9} {'rows':>9} {'parse s':>8} {'load s':>8} {'rows/s':>9} {'write rows/s':>13}")
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["backend"], row["input"]), []).append(row)
    for (backend, label), group in groups.items():
        parse_s = statistics.median(r["parse_s"] for r in group)
        load_s = statistics.median(r["load_s"] for r in group)
        n = group[0]["rows"]
        print(f"{backend:<11} {label:<9} {n:>9,} {parse_s:>8.2f} {load_s:>8.2f} {n / (parse_s + load_s):>9,.0f} "
              f"{n / load_s:>13,.0f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        run(argparse.Namespace(quick="--quick" in sys.argv))
