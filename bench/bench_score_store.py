"""Scoring a huge response set through the site path: ``python -m bench score_store [--quick]``.

A response set of N questions x M models (default 1,000,000 x 2,000 binary
uint8, the paper's table 4 size; ``--quick`` 100,000 x 200) is built once,
without the upload parser, in a temporary folder: its own SQLite test
database and matrix store (``EIP_STORE_DIR``). Catalog and membership rows
go in with ``executemany`` (``bulk_create`` for the few models), the cells through
:class:`~annotate.catalog.matrix_store.MatrixWriter` (random 0/1 with a per-model
skill, ``ROW_CHUNK`` rows at a time).

Each variant then runs in a child process of its own, so ``peak MiB`` is
that process's own peak resident memory (``VmHWM``, Django imports
included; see :mod:`bench._peak`): ``scoring_run_create`` + ``scoring_run_execute`` with methods
``eip`` and ``accuracy`` (the required ones):

* ``product``: today's path, the compact matrix (uint8: 1 byte a cell),
  block-wise diagnostics, results stored ``STORE_BATCH`` rows at a time.
* ``reference``: the same run forced through the float64 matrix
  (``response_matrix``, 8 bytes a cell), as every run was before. Skipped
  when its float64 copy alone would exceed ``REFERENCE_LIMIT_GIB`` (at
  1,000,000 x 2,000 it is 14.9 GiB).

Variants are interleaved (product, reference, product, reference);
figures are medians. Target: product peak < 4,096 MiB at 1,000,000 x 2,000.
Each child also saves the stored EIP difficulty of its run; the table says
whether product and reference stored the same values (bit for bit).

Results measured so far: docs/measurements.md.
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

from bench._peak import own_peak_mib

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261203
#: Rows per ``bulk_create`` while building the set.
BUILD_BATCH = 50_000
#: The reference variant is skipped when its float64 matrix would be larger than this.
REFERENCE_LIMIT_GIB = 6.0
TARGET_MIB = 4096


def _setup(work: Path, *, keep: bool):
    """Django on the bench's own SQLite test database and matrix store (created unless ``keep``)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "eipsite.settings")
    os.environ["EIP_STORE_DIR"] = str(work / "store")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    settings.EIP_STORE_DIR = work / "store"
    test_name = str(work / "bench.sqlite3")
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = test_name
    connection.settings_dict.setdefault("TEST", {})["NAME"] = test_name
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=keep, serialize=False)
    return connection


def _build(work: Path, n_questions: int, n_models: int, credit: str = "binary") -> dict:
    """Create the response set (rows and store); returns timings.

    ``credit`` "binary": random 0/1 stored as uint8; "partial": credit k/10
    with 5% of the cells not observed, written as credit (float64 blocks)
    through the writer that stores uint8 numerators of k/10 and the mask,
    exactly as a load writes a set of fractions.
    """
    _setup(work, keep=False)
    from django.db import connection, transaction

    from annotate.catalog import matrix_store
    from annotate.models import Dataset, LanguageModel, ResponseSet, ResponseSetModel

    t0 = time.perf_counter()
    dataset = Dataset.objects.create(name="bench-score-store")
    rs = ResponseSet.objects.create(name="bench", file_name="bench.parquet", checksum="b" * 64,
                                    file_format="wide", n_questions=n_questions, n_models=n_models,
                                    n_responses=n_questions * n_models)
    # executemany in one transaction: bulk_create would take minutes for a million rows
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, n_questions, BUILD_BATCH):
            cursor.executemany(
                "INSERT INTO annotate_question (dataset_id, subject_id, external_id, text, options, "
                "reference_answer, metadata) VALUES (%s, NULL, %s, '', '[]', '', '{}')",
                [(dataset.pk, f"q{i}") for i in range(start, min(start + BUILD_BATCH, n_questions))])
        cursor.execute("SELECT id FROM annotate_question WHERE dataset_id = %s ORDER BY id", [dataset.pk])
        question_ids = [row[0] for row in cursor.fetchall()]
        for start in range(0, n_questions, BUILD_BATCH):
            cursor.executemany(
                "INSERT INTO annotate_responsesetquestion (response_set_id, question_id, row) VALUES (%s, %s, %s)",
                [(rs.pk, q, start + i) for i, q in enumerate(question_ids[start:start + BUILD_BATCH])])
    LanguageModel.objects.bulk_create(LanguageModel(name=f"model-{j:04d}") for j in range(n_models))
    model_ids = list(LanguageModel.objects.order_by("pk").values_list("pk", flat=True))
    ResponseSetModel.objects.bulk_create(
        ResponseSetModel(response_set_id=rs.pk, model_id=m, column=j) for j, m in enumerate(model_ids))
    rows_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    rng = np.random.default_rng(SEED)
    skill = rng.random(n_models).astype(np.float32)
    temp = matrix_store.temp_store_path(rs.pk)
    partial = credit == "partial"
    writer = matrix_store.MatrixWriter(temp, n_questions=n_questions, n_models=n_models, dtype=np.uint8,
                                       denominator=10 if partial else 1, response_set=rs.pk)
    for start in range(0, n_questions, matrix_store.ROW_CHUNK):
        rows = min(matrix_store.ROW_CHUNK, n_questions - start)
        if partial:  # ten samples per cell, each solved with the model's skill: credit k/10
            k = rng.binomial(10, skill, size=(rows, n_models))
            observed = rng.random((rows, n_models), dtype=np.float32) >= 0.05
            observed[:, 0] = True  # every question observed somewhere
            writer.write_rows(start, k / 10.0, observed)
        else:
            writer.write_rows(start, (rng.random((rows, n_models), dtype=np.float32) < skill).astype(np.uint8))
    writer.close()
    matrix_store.store_publish(temp, rs.pk)
    store_s = time.perf_counter() - t0
    connection.close()
    return {"rows_s": rows_s, "store_s": store_s, "response_set": rs.pk,
            "peak_mib": own_peak_mib()}


def _score(work: Path, variant: str, response_set: int, label: str) -> dict:
    """One scoring run of ``variant`` ("product" or "reference"); returns its figures."""
    _setup(work, keep=True)
    from annotate.models import MethodResult, QuestionResult, ResponseSet
    from annotate.runs.services import scoring as service

    if variant == "reference":
        service.reads_compact = lambda keys: False  # this child only: the float64 path of before
    phases: dict[str, float] = {}
    t0 = time.perf_counter()

    def progress(fraction: float, step: str) -> None:
        phases.setdefault(step, time.perf_counter() - t0)

    run = service.scoring_run_create(response_set=ResponseSet.objects.get(pk=response_set),
                                     params={"methods": ["eip", "accuracy"]})
    service.scoring_run_execute(run=run, progress=progress)
    seconds = time.perf_counter() - t0
    peak = own_peak_mib()
    eip = MethodResult.objects.get(run=run, method="eip")
    difficulty = np.array([s.get("eip", np.nan) for s in QuestionResult.objects.filter(run=run)
                           .order_by("question_id").values_list("scores", flat=True).iterator(chunk_size=20_000)])
    np.save(work / f"{label}.npy", difficulty)
    page_s = _page_view(run) if variant == "product" else float("nan")
    return {"run": run.pk, "page_s": page_s, "variant": variant, "seconds": seconds, "n_iter": eip.n_iter,
            "eip_s": eip.duration_s,
            "read_s": phases.get("eip", float("nan")), "store_s": seconds - phases.get("storing", seconds),
            "n_results": int(difficulty.size), "peak_mib": peak}


def _page_view(run) -> float:
    """Seconds for what the run's question list page reads: the filter choices and its first
    page (sorted by EIP difficulty, the default), through the selectors the view calls."""
    from django.core.paginator import Paginator

    from annotate.runs.selectors.results import question_rows, run_datasets_and_subjects, run_min_models, run_questions
    from annotate.runs.views import QUESTIONS_PER_PAGE

    t0 = time.perf_counter()
    datasets, subjects = run_datasets_and_subjects(run=run)
    list(datasets), list(subjects)
    page = Paginator(run_questions(run=run), QUESTIONS_PER_PAGE).get_page(1)
    rows = question_rows(results=page.object_list, min_models=run_min_models(run=run))
    assert len(rows) == QUESTIONS_PER_PAGE
    return time.perf_counter() - t0


def _export(work: Path, variant: str, run_id: int) -> dict:
    """The run's questions.csv in a fresh process: "stream" (the download's chunks, as served) or
    "whole" (the table built in memory, as before); seconds, bytes, a digest and the own peak."""
    import hashlib

    _setup(work, keep=True)
    from annotate.core.downloads import render_table
    from annotate.models import ScoringRun
    from annotate.runs.selectors.results import run_questions_csv_chunks, run_questions_table

    run = ScoringRun.objects.get(pk=run_id)
    before = own_peak_mib()
    t0 = time.perf_counter()
    digest, size = hashlib.sha256(), 0
    chunks = (run_questions_csv_chunks(run=run) if variant == "stream"
              else [render_table(run_questions_table(run=run), fmt="csv")])
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return {"variant": variant, "seconds": time.perf_counter() - t0, "bytes": size, "sha256": digest.hexdigest(),
            "peak_mib": own_peak_mib(), "before_mib": before}


def _child(args: list[str]) -> dict:
    work = Path(args[1])
    if args[0] in ("stream", "whole"):
        return _export(work, args[0], int(args[2]))
    if args[0] == "build":
        return _build(work, int(args[2]), int(args[3]), *args[4:5])
    return _score(work, args[0], int(args[2]), args[3])


def _call(args: list[str]) -> dict | None:
    env = {**os.environ, "DATABASE_URL": "sqlite:///" + str(Path(tempfile.gettempdir()) / "eip-unused.sqlite3")}
    done = subprocess.run([sys.executable, "-m", "bench.bench_score_store", "--child", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{args[0]}: failed ({(done.stderr.strip().splitlines() or ['?'])[-1]})", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace, credit: str = "binary") -> None:
    quick = getattr(args, "quick", False)
    n_questions, n_models = (100_000, 200) if quick else (1_000_000, 2_000)
    repeats = 2 if quick else 1
    with_reference = n_questions * n_models * 8 <= REFERENCE_LIMIT_GIB * 2**30
    work = Path(tempfile.mkdtemp(prefix="eip-bench-score-"))
    try:
        built = _call(["build", str(work), str(n_questions), str(n_models), credit])
        if built is None:
            return
        form = "uint8" if credit == "binary" else "k/10 with 5% gaps (uint8 numerators + mask)"
        print(f"set of {n_questions:,} x {n_models:,} {form} built: rows {built['rows_s']:.1f} s, "
              f"store {built['store_s']:.1f} s (peak {built['peak_mib']:,.0f} MiB)", flush=True)
        plan = [v for _ in range(repeats) for v in (("product", "reference") if with_reference else ("product",))]
        results = []
        for k, variant in enumerate(plan):
            got = _call([variant, str(work), str(built["response_set"]), f"{variant}-{k}"])
            if got is not None:
                got["label"] = f"{variant}-{k}"
                results.append(got)
        _table(results, work, n_questions * n_models, with_reference)
        product = next((r for r in results if r["variant"] == "product"), None)
        if product is not None:
            exports = [_call([v, str(work), str(product["run"])]) for v in ("stream", "whole")]
            if all(e is not None for e in exports):
                stream, whole = exports
                print(f"questions.csv of {product['n_results']:,} questions: streamed {stream['seconds']:.1f} s, "
                      f"peak {stream['peak_mib']:,.0f} MiB (after Django {stream['before_mib']:,.0f}); whole "
                      f"{whole['seconds']:.1f} s, peak {whole['peak_mib']:,.0f} MiB; same bytes "
                      f"({stream['bytes']:,}): {stream['sha256'] == whole['sha256']}", flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)


def _table(results: list[dict], work: Path, cells: int, with_reference: bool) -> None:
    print(f"{'variant':<10} {'runs':>4} {'total s':>8} {'read s':>7} {'EIP s':>7} {'iters':>5} {'diag+store s':>12} "
          f"{'rows':>10} {'peak MiB':>9}")
    medians = {}
    for variant in ("product", "reference"):
        rs = [r for r in results if r["variant"] == variant]
        if not rs:
            continue
        m = {key: statistics.median(r[key] for r in rs)
             for key in ("seconds", "read_s", "eip_s", "n_iter", "store_s", "peak_mib")}
        medians[variant] = m
        print(f"{variant:<10} {len(rs):>4} {m['seconds']:>8.1f} {m['read_s']:>7.1f} {m['eip_s']:>7.1f} "
              f"{m['n_iter']:>5.0f} {m['store_s']:>12.1f} {rs[0]['n_results']:>10,} {m['peak_mib']:>9,.0f}")
    if "product" in medians and "reference" in medians:
        p, r = medians["product"], medians["reference"]
        arrays = [np.load(work / f"{x['label']}.npy") for x in results]
        same = all(np.array_equal(arrays[0], a, equal_nan=True) for a in arrays[1:])
        print(f"product / reference: time {p['seconds'] / r['seconds']:.2f}, peak {p['peak_mib'] / r['peak_mib']:.2f}; "
              f"stored EIP difficulty identical in every run: {same}")
    elif not with_reference:
        print(f"reference skipped: its float64 matrix alone is {cells * 8 / 2**30:.1f} GiB "
              f"(> {REFERENCE_LIMIT_GIB} GiB)")
    if "product" in medians:
        page = statistics.median(r["page_s"] for r in results if r["variant"] == "product")
        print(f"question list page (filter choices + first page, default sort): {page:.2f} s", flush=True)
        peak = medians["product"]["peak_mib"]
        print(f"product peak {peak:,.0f} MiB: target < {TARGET_MIB:,} MiB at 1,000,000 x 2,000 "
              f"({'met' if peak < TARGET_MIB else 'NOT met'} at {cells:,} cells)", flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2:])))
    else:
        run(argparse.Namespace(quick="--quick" in sys.argv))
