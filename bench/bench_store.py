"""Loading into the compact matrix store: ``python -m bench store [--quick]``.

Each case runs in its own child process (SQLite test database and matrix
store in a temporary folder), so ``peak MiB`` is that process's peak resident
memory (``VmHWM``, :mod:`bench._peak`), imports included. Product and reference runs are
interleaved; figures are medians.

* ``mmlu-pro``: ``../shared/data/mmlu-pro`` through the site path
  (``parse_folder`` + ``response_set_load``: every check, catalog rows,
  membership rows, Zarr store). Target < 2 s. 3 repeats, each in a fresh
  process (the first load of a process pays the lazy imports of pandas,
  pyarrow and Zarr) and again with those imports done first ("warm": what
  a worker that loaded a set before pays).
* ``wide 100k x 200``: a wide CSV of 100,000 questions x 200 models (20M
  cells, 0/1, generated here) through ``parse_files`` + ``response_set_load``.
  Targets < 60 s and < 1 GiB. 2 repeats (``--quick``: 1 of 10,000 x 200).
* ``long 20k x 200``: a long CSV (``question_id,model,credit``, one row per
  cell: 4M rows, credits 0, 1 or 0.5, 5% blank) of 20,000 questions x 200
  models through ``parse_files(file_format="long")`` + ``response_set_load``
  (read a chunk of rows at a time, two passes). Product only. 1 repeat
  (``--quick``: 2,000 x 200).

* ``huge`` (``--huge`` only): a 1,000,000 x 2,000 uint8 wide Parquet file
  (question id column, then one uint8 column per model) generated here,
  through the site path: ``parse_files(file_format="wide")`` (streamed in
  8,192-row batches into dense blocks on disk) + ``response_set_load``
  (catalog rows, 1M membership rows, the Zarr store), then a scoring run of
  EIP only (``scoring_run_create(params={"methods": list(required_methods())})`` +
  ``scoring_run_execute``). Target < 4 GiB peak. The child caps its address
  space (``HUGE_ADDRESS_SPACE``) so that a scoring path that still builds a
  float64 copy (16 GB) fails with MemoryError instead of exhausting the
  machine; that is then printed.

``floor`` (wide only): pandas reading the same CSV plus a Zarr write of the
same matrix, timed in the same run (interleaved with the product); the table
prints product / floor.

``--cases mmlu-pro,wide`` runs only the cases named (default all three);
``--wide-floor-only`` runs the wide case against its floor without the
row-per-cell reference (minutes at 20M cells).

Reference for each (same run, same cells): the old layout, one row per cell
``(response_set, model, question, credit)`` inserted with ``executemany`` in
batches of 20,000 into a plain SQLite table with the old unique index
(without parsing or any check): what storing the cells alone cost before.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench._peak import own_peak_mib

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261201
BATCH = 20_000


def _wide_csv(path: Path, n_questions: int, n_models: int) -> None:
    rng = np.random.default_rng(SEED)
    models = [f"model-{j:03d}" for j in range(n_models)]
    with path.open("w", encoding="utf-8") as handle:
        handle.write("question_id," + ",".join(models) + "\n")
        for start in range(0, n_questions, 10_000):
            block = (rng.random((min(10_000, n_questions - start), n_models)) < 0.5).astype(np.uint8)
            handle.writelines(f"q{start + i}," + ",".join("1" if c else "0" for c in row) + "\n"
                              for i, row in enumerate(block.tolist()))


def _long_csv(path: Path, n_questions: int, n_models: int) -> None:
    rng = np.random.default_rng(SEED)
    texts = np.array(["0", "1", "0.5", ""], dtype=object)
    with path.open("w", encoding="utf-8") as handle:
        handle.write("question_id,model,credit\n")
        for start in range(0, n_questions, 1_000):
            rows = min(1_000, n_questions - start)
            codes = rng.choice(4, size=(rows, n_models), p=[0.45, 0.45, 0.05, 0.05])
            handle.writelines(f"q{start + i},model-{j:03d},{texts[c]}\n"
                              for i, row in enumerate(codes.tolist()) for j, c in enumerate(row))


def _setup(work: Path):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "eipsite.settings")
    os.environ["EIP_STORE_DIR"] = str(work / "store")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    settings.EIP_STORE_DIR = work / "store"
    settings.DEBUG = False  # no SQL log (DEBUG keeps every query's text: a million rows' worth)
    test_name = str(work / "bench.sqlite3")
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = test_name
    connection.settings_dict.setdefault("TEST", {})["NAME"] = test_name
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    return connection


def _cells(case: str, work: Path, n_questions: int):
    """(parse callable, file) of a case."""
    from annotate.catalog.loaders.tabular_files import parse_files, parse_folder
    if case == "mmlu-pro":
        shared = Path(os.environ.get("EIP_SHARED_DATA", ROOT.parent / "shared" / "data")) / "mmlu-pro"
        return lambda: parse_folder(shared, dataset="MMLU-Pro", subject_column="category",
                                    keep_columns=["src", "source_dataset", "mmlu_subject", "mmlu_level"])
    if case == "long":
        return lambda: parse_files(responses=work / "long.csv", file_format="long", dataset="bench-long")
    path = work / "wide.csv"
    return lambda: parse_files(responses=path, file_format="wide", dataset="bench-wide")


def _reference(connection, parsed) -> float:
    """The old layout: executemany of every cell into a plain table with the old unique index."""
    responses = parsed.responses
    q_codes = responses.groupby(["dataset", "external_id"], sort=False).ngroup().to_numpy(dtype=np.int64) + 1
    m_codes = responses["model"].astype("category").cat.codes.to_numpy(dtype=np.int64) + 1
    credits = responses["credit"].to_numpy(dtype=np.float64)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE old_response (id INTEGER PRIMARY KEY, response_set_id INTEGER NOT NULL, "
                       "model_id INTEGER NOT NULL, question_id INTEGER NOT NULL, credit REAL NOT NULL)")
        cursor.execute("CREATE UNIQUE INDEX old_response_unique ON old_response (response_set_id, model_id, "
                       "question_id)")
    from django.db import transaction

    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        for start in range(0, len(credits), BATCH):
            stop = start + BATCH
            # one transaction per batch, as the old loads wrote them (in autocommit mode SQLite would
            # commit every row of an executemany on its own: 50x slower, not what the old layout cost)
            with transaction.atomic():
                cursor.executemany(
                    "INSERT INTO old_response (response_set_id, model_id, question_id, credit) "
                    "VALUES (%s, %s, %s, %s)",
                    zip([1] * (stop - start), m_codes[start:stop].tolist(), q_codes[start:stop].tolist(),
                        credits[start:stop].tolist()))
    return time.perf_counter() - t0


HUGE_ADDRESS_SPACE = 12 * 1024**3  # bytes of virtual memory the huge child may map


def _huge_parquet(path: Path, n_questions: int, n_models: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(SEED)
    skill = rng.random(n_models)
    names = [f"model-{j:04d}" for j in range(n_models)]
    schema = pa.schema([pa.field("question_id", pa.string())] + [pa.field(name, pa.uint8()) for name in names])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, n_questions, 20_000):
            rows = min(20_000, n_questions - start)
            block = (rng.random((rows, n_models), dtype=np.float32) < skill).astype(np.uint8)
            ids = pa.array([f"q{start + i}" for i in range(rows)])
            writer.write_table(pa.Table.from_arrays([ids] + [pa.array(block[:, j]) for j in range(n_models)],
                                                    schema=schema))


def _rss_mib() -> float:
    return own_peak_mib()


def _huge(n_questions: int, n_models: int = 2_000) -> dict:
    """The 1M x 2,000 uint8 Parquet case through the site path (see the module docstring)."""
    resource.setrlimit(resource.RLIMIT_AS, (HUGE_ADDRESS_SPACE, HUGE_ADDRESS_SPACE))
    work = Path(tempfile.mkdtemp(prefix="eip-bench-huge-"))
    out: dict = {"case": "huge", "cells": n_questions * n_models}
    connection = None
    try:
        path = work / "huge.parquet"
        t0 = time.perf_counter()
        _huge_parquet(path, n_questions, n_models)
        out["generate_s"] = time.perf_counter() - t0
        connection = _setup(work)
        from annotate.catalog import matrix_store as ms
        from annotate.catalog.loaders.tabular_files import parse_files
        from annotate.catalog.services.loading import response_set_load
        from annotate.runs.services.scoring import required_methods, scoring_run_create, scoring_run_execute
        t0 = time.perf_counter()
        parsed = parse_files(responses=path, file_format="wide", dataset="bench-huge")
        out["parse_s"] = time.perf_counter() - t0
        out["parse_peak_mib"] = _rss_mib()
        response_set = response_set_load(parsed=parsed, name="bench-huge")
        out["load_s"] = time.perf_counter() - t0
        out["load_peak_mib"] = _rss_mib()
        out["dtype"] = ms.store_info(ms.store_path(response_set))["credit_dtype"]
        del parsed
        t0 = time.perf_counter()
        try:
            run = scoring_run_create(response_set=response_set, params={"methods": list(required_methods())})
            run = scoring_run_execute(run=run)
            out["score_s"] = time.perf_counter() - t0
            out["score_status"] = str(run.status)
        except MemoryError:
            out["score_s"] = time.perf_counter() - t0
            out["score_status"] = f"MemoryError (address space capped at {HUGE_ADDRESS_SPACE / 1024**3:.0f} GiB)"
    finally:
        if connection is not None:
            connection.creation.destroy_test_db(str(work / "bench.sqlite3"), verbosity=0)
        subprocess.run(["rm", "-rf", str(work)], check=False)
    out["peak_mib"] = _rss_mib()
    return out


def _floor(work: Path, n_questions: int) -> dict:
    """The floor of a wide load: pandas reading the same CSV, then a Zarr write of the same
    matrix (:func:`annotate.catalog.matrix_store.write_matrix`), imports of pandas and Zarr included
    as in the product's cold load; no checks, no database."""
    try:
        t0 = time.perf_counter()
        import pandas as pd

        from annotate.catalog import matrix_store as ms
        frame = pd.read_csv(work / "wide.csv")
        ms.write_matrix(work / "floor.zarr", frame.iloc[:, 1:].to_numpy(dtype=np.uint8))
        seconds = time.perf_counter() - t0
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return {"case": "wide", "variant": "floor", "cells": n_questions * 200, "n_rows": n_questions * 200,
            "seconds": seconds, "parse_s": 0.0, "peak_mib": own_peak_mib()}


def _child(case: str, variant: str, n_questions: int) -> dict:
    if case == "huge":
        return _huge(n_questions)
    work = Path(tempfile.mkdtemp(prefix="eip-bench-store-"))
    if case == "wide":
        _wide_csv(work / "wide.csv", n_questions, 200)
    if case == "long":
        _long_csv(work / "long.csv", n_questions, 200)
    if variant == "floor":
        return _floor(work, n_questions)
    connection = _setup(work)
    try:
        parse = _cells(case, work, n_questions)
        if variant == "warm":  # a worker that has loaded a set before: the lazy imports are done
            import pandas  # noqa: F401
            import pyarrow  # noqa: F401
            import zarr  # noqa: F401

            import annotate.catalog.services.loading  # noqa: F401
        t0 = time.perf_counter()
        parsed = parse()
        t1 = time.perf_counter()
        n = parsed.observed_counts()[0]  # never builds the long form of a compact set
        if variant in ("product", "warm"):
            from annotate.catalog.services.loading import response_set_load
            response_set_load(parsed=parsed, name="bench")
            t2 = time.perf_counter()
            seconds, parse_s = t2 - t0, t1 - t0
        else:
            seconds, parse_s = _reference(connection, parsed), 0.0
    finally:
        connection.creation.destroy_test_db(str(work / "bench.sqlite3"), verbosity=0)
        subprocess.run(["rm", "-rf", str(work)], check=False)
    peak = own_peak_mib()
    return {"case": case, "variant": variant, "cells": n, "n_rows": n_questions * 200, "seconds": seconds,
            "parse_s": parse_s, "peak_mib": peak}


def run(args: argparse.Namespace) -> None:
    quick = getattr(args, "quick", False)
    shared = Path(os.environ.get("EIP_SHARED_DATA", ROOT.parent / "shared" / "data")) / "mmlu-pro"
    cases = set((getattr(args, "cases", None) or "mmlu-pro,wide,long").split(","))
    unknown = sorted(cases - {"mmlu-pro", "wide", "long"})
    if unknown:
        raise SystemExit(f"unknown store case(s) {unknown}; choose among mmlu-pro, wide, long")
    plan = []
    if shared.is_dir() and "mmlu-pro" in cases:
        plan += [("mmlu-pro", v, 0) for _ in range(1 if quick else 3) for v in ("product", "warm", "reference")]
    if "wide" in cases:
        variants = ("product", "floor") + (() if getattr(args, "wide_floor_only", False) else ("reference",))
        plan += [("wide", v, 10_000 if quick else 100_000) for _ in range(1 if quick else 2) for v in variants]
    if "long" in cases:
        plan.append(("long", "product", 2_000 if quick else 20_000))
    if getattr(args, "huge", False):
        plan.append(("huge", "product", 1_000_000))
    results: list[dict] = []
    for case, variant, n_questions in plan:
        env = {**os.environ, "DATABASE_URL": "sqlite:///" + str(Path(tempfile.gettempdir()) / "eip-unused.sqlite3")}
        command = [sys.executable, "-m", "bench.bench_store", "--child", case, variant, str(n_questions)]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{case} {variant}: failed ({(done.stderr.strip().splitlines() or ['?'])[-1]})", flush=True)
            continue
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    for r in results:
        if r["case"] == "huge":
            print(f"huge {r['cells']:,} cells ({r.get('dtype')}), site path: parse {r.get('parse_s', 0):.1f} s "
                  f"(peak {r.get('parse_peak_mib', 0):,.0f} MiB), parse + load {r.get('load_s', 0):.1f} s "
                  f"(peak {r.get('load_peak_mib', 0):,.0f} MiB), EIP scoring run {r.get('score_s', 0):.1f} s "
                  f"({r.get('score_status')}), peak {r['peak_mib']:,.0f} MiB (target < 4,096 MiB); "
                  f"generating the file took {r.get('generate_s', 0):.1f} s", flush=True)
        if r["case"] == "long":
            print(f"long {r['cells']:,} observed cells ({r['n_rows']:,} rows), site path: "
                  f"parse {r['parse_s']:.1f} s, parse + load {r['seconds']:.1f} s, peak {r['peak_mib']:,.0f} MiB",
                  flush=True)
    results = [r for r in results if r["case"] not in ("huge", "long")]
    print(f"{'case':<10} {'cells':>11} {'product s':>10} {'(parse s)':>10} {'peak MiB':>9} "
          f"{'reference s':>12} {'ref peak MiB':>13} {'ratio':>6}  target")
    for case in dict.fromkeys(r["case"] for r in results):
        product = [r for r in results if r["case"] == case and r["variant"] == "product"]
        reference = [r for r in results if r["case"] == case and r["variant"] == "reference"]
        if not product:
            continue
        p_s = statistics.median(r["seconds"] for r in product)
        r_s = statistics.median(r["seconds"] for r in reference) if reference else float("nan")
        warm = [r["seconds"] for r in results if r["case"] == case and r["variant"] == "warm"]
        target = "< 2 s" if case == "mmlu-pro" else "< 60 s, < 1,024 MiB"
        print(f"{case:<10} {product[0]['cells']:>11,} {p_s:>10.2f} "
              f"{statistics.median(r['parse_s'] for r in product):>10.2f} "
              f"{statistics.median(r['peak_mib'] for r in product):>9,.0f} {r_s:>12.2f} "
              f"{statistics.median([r['peak_mib'] for r in reference] or [float('nan')]):>13,.0f} "
              f"{p_s / r_s:>6.2f}  {target}",
              flush=True)
        floor = [r["seconds"] for r in results if r["case"] == case and r["variant"] == "floor"]
        if floor:
            print(f"{'':<10} {'':>11} floor {statistics.median(floor):.2f} s (pandas read_csv + Zarr write of the "
                  f"same matrix, same run): product / floor {p_s / statistics.median(floor):.2f} "
                  "(target <= 3)", flush=True)
        if warm:
            print(f"{'':<10} {'':>11} {statistics.median(warm):>10.2f}  the same with the lazy imports done "
                  f"(pandas, pyarrow, zarr, the loading service): a worker's second load; ratio "
                  f"{statistics.median(warm) / r_s:.2f}", flush=True)
            # The reference starts from parsed cells; the product's ratio above includes its parse. Both shown.
            warm_load = [r["seconds"] - r["parse_s"] for r in results if r["case"] == case and r["variant"] == "warm"]
            print(f"{'':<10} {'':>11} {statistics.median(warm_load):>10.2f}  of which the load after the parse "
                  f"(the same starting point as the reference): ratio {statistics.median(warm_load) / r_s:.2f}",
                  flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
    else:
        cases = next((arg.split("=", 1)[1] for arg in sys.argv if arg.startswith("--cases=")), None)
        run(argparse.Namespace(quick="--quick" in sys.argv, huge="--huge" in sys.argv, cases=cases,
                               wide_floor_only="--wide-floor-only" in sys.argv))
