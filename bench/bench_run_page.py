"""The first page of a huge run's question list: ``python -m bench run_page [--quick]``.

A run of N questions (default 1,000,000; ``--quick`` 100,000) is built
directly with bulk SQL (:func:`annotate.core.services.database.rows_insert`: COPY
on PostgreSQL, ``executemany`` on SQLite): questions in two datasets, one
QuestionResult each with ``eip_scaled`` (5% at 0 and 5% at 100, the
excluded questions, the rest on a grid of 10,001 values: ties), ``eip`` and
``accuracy_difficulty`` (one question in ten undefined), then the sort keys
(:func:`annotate.runs.services.sort_keys.sort_keys_write`, timed: the cost the
keys add to storing a run).

Timed, interleaved (product, reference, product, ...), medians: what the
page reads for its list, i.e. its first page (the count and the first 50
rows) turned into rows by ``question_rows``, for

* ``product``: :func:`annotate.runs.selectors.results.run_questions_page` (sort
  keys; the count without their join), as the view calls it;
* ``reference``: ``Paginator(...).get_page(1)`` of the same filtered results
  ordered by the JSON value in the database
  (:func:`annotate.runs.selectors.results.order_by_stored_value`, the order
  every run had before).

Sorts: ``eip_scaled`` desc (the default), ``accuracy_difficulty`` asc,
``n_observed`` asc, and ``eip_scaled`` desc with the ``kept`` filter. Each
check compares the product's first page with the reference's.

Runs on SQLite (a temporary file) and, when ``DATABASE_URL`` points at
PostgreSQL, on a scratch database ``<name>_bench_run_page`` there
(created and dropped); each backend in a child process of its own.

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

ROOT = Path(__file__).resolve().parent.parent
SEED = 16
BUILD_BATCH = 100_000
SORTS = (("eip_scaled", "desc", ""), ("accuracy_difficulty", "asc", ""), ("n_observed", "asc", ""),
         ("eip_scaled", "desc", "kept"))


def _setup(database_url: str):
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "eipsite.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    if connection.vendor == "sqlite":  # a file, as the site uses (the test default is in memory)
        name = str(Path(tempfile.gettempdir()) / "eip-bench-run-page-test.sqlite3")
        settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name
        connection.settings_dict.setdefault("TEST", {})["NAME"] = name
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False, serialize=False)
    return connection


def _build(n: int) -> tuple[object, dict]:
    from django.db import connection, transaction

    from annotate.core.services.database import rows_insert
    from annotate.models import Dataset, Question, QuestionResult, ResponseSet, RunStatus, ScoringRun
    from annotate.runs.services.sort_keys import N_OBSERVED, sort_keys_write

    rng = np.random.default_rng(SEED)
    figures = {}
    t0 = time.perf_counter()
    datasets = [Dataset.objects.create(name=name).pk for name in ("A", "B")]
    rs = ResponseSet.objects.create(name="bench", file_name="b.csv", checksum="b" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, params={"min_models": 10},
                                    diagnostics={"min_models": 10})
    fields = ("dataset", "subject", "external_id", "text", "options", "reference_answer", "metadata")
    with transaction.atomic():
        for start in range(0, n, BUILD_BATCH):
            rows = ((datasets[i % 2], None, f"q{i}", f"question {i}", "[]", "", "{}")
                    for i in range(start, min(n, start + BUILD_BATCH)))
            rows_insert(model=Question, fields=fields, rows=rows)
    question_ids = np.array(Question.objects.order_by("pk").values_list("pk", flat=True), dtype=np.int64)
    rng.shuffle(question_ids)  # results stored in an order unrelated to the ids
    scaled = np.round(rng.random(n) * 100, 2)
    u = rng.random(n)
    scaled[u < 0.05], scaled[u > 0.95] = 0.0, 100.0
    eip = np.where(rng.random(n) < 0.1, np.nan, rng.random(n) / n)
    accuracy = np.where(rng.random(n) < 0.1, np.nan, np.round(rng.random(n), 3))
    observed = rng.integers(1, 40, n)
    kept = (scaled > 0) & (scaled < 100)
    columns = {"eip_scaled": scaled, "eip": eip, "accuracy_difficulty": accuracy}
    figures["questions_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()

    lists = {c: [None if np.isnan(x) else x for x in v.tolist()] for c, v in columns.items()}

    def scores(i: int) -> str:
        return "{" + ", ".join(f'"{c}": {v[i]!r}' for c, v in lists.items() if v[i] is not None) + "}"

    with transaction.atomic():
        for start in range(0, n, BUILD_BATCH):
            rows = ((run.pk, int(question_ids[i]), bool(kept[i]), int(observed[i]), 0, scores(i))
                    for i in range(start, min(n, start + BUILD_BATCH)))
            rows_insert(model=QuestionResult, fields=("run", "question", "kept", "n_observed", "component",
                                                      "scores"), rows=rows)
    figures["results_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with transaction.atomic():
        sort_keys_write(run_id=run.pk, question_ids=question_ids,
                        columns={**columns, N_OBSERVED: observed.astype(np.float64)})
    figures["keys_s"] = time.perf_counter() - t0
    if connection.vendor == "postgresql":  # what autovacuum does soon after a load (sort keys: on commit)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return run, figures


def _page(run, sort: str, direction: str, status: str, variant: str) -> tuple[float, list[int]]:
    from django.core.paginator import Paginator

    from annotate.runs.selectors.results import (
        order_by_stored_value,
        question_rows,
        run_min_models,
        run_questions,
        run_questions_page,
    )
    from annotate.runs.views import QUESTIONS_PER_PAGE

    t0 = time.perf_counter()
    if variant == "product":
        page = run_questions_page(run=run, page=1, per_page=QUESTIONS_PER_PAGE, sort=sort, direction=direction,
                                  status=status)
    else:
        results = order_by_stored_value(run_questions(run=run, sort="question", status=status), sort=sort,
                                        descending=direction == "desc")
        page = Paginator(results, QUESTIONS_PER_PAGE).get_page(1)
    rows = question_rows(results=page.object_list, min_models=run_min_models(run=run))
    return time.perf_counter() - t0, [r.result.question_id for r in rows]


def _child(database_url: str, n: int, repeats: int) -> dict:
    connection = _setup(database_url)
    try:
        run, figures = _build(n)
        timings: dict[str, list[float]] = {}
        same = True
        for _ in range(repeats):
            for sort, direction, status in SORTS:
                pages = {}
                for variant in ("product", "reference"):
                    seconds, pages[variant] = _page(run, sort, direction, status, variant)
                    timings.setdefault(f"{sort} {direction} {status or 'all'}|{variant}", []).append(seconds)
                same = same and pages["product"] == pages["reference"]
        return {"vendor": connection.vendor, "figures": figures, "same": same,
                "medians": {k: statistics.median(v) for k, v in timings.items()}, "repeats": repeats}
    finally:
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)


def _call(database_url: str, n: int, repeats: int) -> dict | None:
    done = subprocess.run([sys.executable, "-m", "bench.bench_run_page", "--child", database_url, str(n), str(repeats)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{database_url}: failed ({(done.stderr.strip().splitlines() or ['?'])[-1]})", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> None:
    n, repeats = (100_000, 5) if getattr(args, "quick", False) else (1_000_000, 3)
    urls = ["sqlite:///" + str(Path(tempfile.gettempdir()) / "eip-bench-run-page.sqlite3")]
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        urls.insert(0, os.environ["DATABASE_URL"].rstrip("/") + "_bench_run_page")
    for url in urls:
        got = _call(url, n, repeats)
        if got is None:
            continue
        f = got["figures"]
        print(f"{got['vendor']}: run of {n:,} questions; built questions {f['questions_s']:.1f} s, results "
              f"{f['results_s']:.1f} s, sort keys {f['keys_s']:.1f} s; medians of {got['repeats']}; "
              f"first pages identical: {got['same']}", flush=True)
        print(f"  {'sort':<36} {'product s':>10} {'reference s':>12} {'speed-up':>9}")
        for sort, direction, status in SORTS:
            key = f"{sort} {direction} {status or 'all'}"
            p, r = got["medians"][f"{key}|product"], got["medians"][f"{key}|reference"]
            print(f"  {key:<36} {p:>10.4f} {r:>12.3f} {r / p:>8.0f}x", flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        run(argparse.Namespace(quick="--quick" in sys.argv))
