"""Full-run exports at a million questions: ``python -m bench exports [--quick]``.

A scoring run of N questions (default 1,000,000; ``--quick`` 100,000) in
two datasets and 14 subjects, every question column of :mod:`scoring.methods`
stored per question (random values) and a metadata label ``level`` on every
question, is built once with ``executemany`` in the bench's own SQLite file
database (as in ``bench_score_store``), with a study of 70 pairs on it (two
evaluators, a judgment each pair).

Each export then runs in a child process of its own, so ``peak MiB`` is its
own peak resident memory (``VmHWM``, Django imports included; see
:mod:`bench._peak`):

* ``run questions``: the run's ``questions.csv`` as the download streams it
  (``run_questions_csv_chunks``);
* ``human labels``: the human-label analysis of the run against the metadata
  label (every difficulty method, margins 0 and 0.2, no bootstrap), its tables
  rendered as CSV;
* ``labels_read``: that analysis's read of the run's questions alone
  (``run_questions`` with the label and every difficulty column; bytes = its
  arrays), to tell the read's share of the analysis's peak from the
  comparisons';
* ``study export``: ``export_study``'s text (``study_export_chunks``) written
  to a file.

Printed per export: bytes produced, seconds, peak and the peak of the child
before the export (Django and the imports). Target: every peak < 500 MiB at
1,000,000 questions. Results measured so far: docs/measurements.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench._peak import own_peak_mib
from bench.bench_score_store import _setup

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261206
BUILD_BATCH = 50_000
N_SUBJECTS = 14
N_STUDY_PAIRS = 70
TARGET_MIB = 500
EXPORTS = ("run_questions", "human_labels", "labels_read", "study_export")
LEVELS = ("elementary", "high school", "college", 1, 2, 3)


def _build(work: Path, n_questions: int) -> dict:
    """The run, its results and a small study on it; returns the run's and the study's ids."""
    _setup(work, keep=False)
    from django.db import connection, transaction
    from django.utils import timezone

    from annotate.models import (
        Dataset,
        Judgment,
        Pair,
        Participation,
        ResponseSet,
        RunStatus,
        ScoringRun,
        Study,
        Subject,
    )
    from scoring.methods import iter_columns

    t0 = time.perf_counter()
    datasets = [Dataset.objects.create(name=name) for name in ("bench-exports-a", "bench-exports-b")]
    subjects = [Subject.objects.create(name=f"subject {k:02d}") for k in range(N_SUBJECTS)]
    rs = ResponseSet.objects.create(name="bench", file_name="bench.csv", checksum="e" * 64, file_format="wide",
                                    n_questions=n_questions, n_models=30, n_responses=n_questions * 30)
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, params={"methods": ["eip"]},
                                    finished_at=timezone.now())
    columns = [c for _, c in iter_columns("question")]
    rng = np.random.default_rng(SEED)
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, n_questions, BUILD_BATCH):
            ks = range(start, min(start + BUILD_BATCH, n_questions))
            cursor.executemany(
                "INSERT INTO annotate_question (dataset_id, subject_id, external_id, text, options, "
                "reference_answer, metadata) VALUES (%s, %s, %s, %s, '[\"A\", \"B\", \"C\", \"D\"]', 'A', %s)",
                [(datasets[k % 2].pk, subjects[k % N_SUBJECTS].pk, f"q{k}", f"Question {k}: which of these holds?",
                  json.dumps({"level": LEVELS[k % len(LEVELS)]})) for k in ks])
        cursor.execute("SELECT id FROM annotate_question ORDER BY id")
        question_ids = [row[0] for row in cursor.fetchall()]
        for start in range(0, n_questions, BUILD_BATCH):
            block = question_ids[start:start + BUILD_BATCH]
            values = rng.random((len(block), len(columns))) * 100
            cursor.executemany(
                "INSERT INTO annotate_questionresult (run_id, question_id, kept, n_observed, scores) "
                "VALUES (%s, %s, %s, %s, %s)",
                [(run.pk, q, True, 30, json.dumps(dict(zip(columns, row)))) for q, row in
                 zip(block, values.tolist())])
    rows_s = time.perf_counter() - t0
    study = Study.objects.create(name="bench-exports", scoring_run=run, seed=1, n_pairs=N_STUDY_PAIRS)
    study.datasets.set(datasets)
    study.subjects.set(subjects)
    picks = rng.choice(len(question_ids) // 2, size=(N_STUDY_PAIRS, 2), replace=False) * 2
    pairs = Pair.objects.bulk_create(
        Pair(study=study, position=k, question_a_id=question_ids[a], question_b_id=question_ids[b + N_SUBJECTS * 2])
        for k, (a, b) in enumerate(picks.tolist()))
    from django.contrib.auth import get_user_model

    now = timezone.now()
    for name in ("bench-ada", "bench-bob"):
        user = get_user_model().objects.create(username=name)
        part = Participation.objects.create(study=study, user=user, seed=7)
        Judgment.objects.bulk_create(
            Judgment(participation=part, pair=p, choice="left", left_question_id=p.question_a_id,
                     harder_question_id=p.question_a_id, shown_at=now, submitted_at=now, seconds=3.0)
            for p in pairs)
    connection.close()
    return {"run": run.pk, "study": study.pk, "response_set": rs.pk, "rows_s": rows_s, "peak_mib": own_peak_mib()}


def _chunks(what: str, ids: dict, work: Path):
    """The export's product as pieces of bytes."""
    from annotate.models import ResponseSet, ScoringRun, Study

    if what == "run_questions":
        from annotate.runs.selectors.results import run_questions_csv_chunks

        yield from run_questions_csv_chunks(run=ScoringRun.objects.get(pk=ids["run"]))
    elif what == "human_labels":
        from annotate.analyses.services import analysis_csv
        from annotate.analyses.services.human_labels import human_labels

        params = {"label": "metadata:level", "label_higher_is_harder": True, "margin": 0.2, "n_boot": 0,
                  "run": ids["run"], "human_method": "accuracy", "seed": 0}
        result = human_labels(ResponseSet.objects.get(pk=ids["response_set"]), params, lambda *a: None)
        result = json.loads(json.dumps(result))  # as stored
        for table in ("spearman", "pairs"):
            yield analysis_csv(kind="human_labels", result=result, table=table)
    elif what == "labels_read":
        from annotate.reports import run_questions
        from scoring.methods import difficulty_methods

        rq = run_questions(run=ScoringRun.objects.get(pk=ids["run"]), metadata_key="level",
                           columns=[m.difficulty_column for m in difficulty_methods()])
        yield rq.question_ids.tobytes()
        for values in rq.scores.values():
            yield values.tobytes()
    else:
        from annotate.studies.services.transfer_export import study_export_chunks

        out = work / "study.json"
        with out.open("w", encoding="utf-8") as file:
            file.writelines(study_export_chunks(study=Study.objects.get(pk=ids["study"])))
        with out.open("rb") as file:
            while block := file.read(1 << 20):
                yield block


def _export(work: Path, what: str, ids: dict) -> dict:
    _setup(work, keep=True)
    before = own_peak_mib()
    t0 = time.perf_counter()
    digest, size = hashlib.sha256(), 0
    for chunk in _chunks(what, ids, work):
        digest.update(chunk)
        size += len(chunk)
    return {"export": what, "seconds": time.perf_counter() - t0, "bytes": size, "sha256": digest.hexdigest(),
            "peak_mib": own_peak_mib(), "before_mib": before}


def _call(args: list[str]) -> dict | None:
    env = {**os.environ, "DATABASE_URL": "sqlite:///" + str(Path(tempfile.gettempdir()) / "eip-unused.sqlite3")}
    done = subprocess.run([sys.executable, "-m", "bench.bench_exports", "--child", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{args[0]}: failed ({(done.stderr.strip().splitlines() or ['?'])[-1]})", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> None:
    n_questions = 100_000 if getattr(args, "quick", False) else 1_000_000
    work = Path(tempfile.mkdtemp(prefix="eip-bench-exports-"))
    try:
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
        built = _call(["build", str(work), str(n_questions)])
        if built is None:
            return
        print(f"run of {n_questions:,} questions and a {N_STUDY_PAIRS}-pair study built in {built['rows_s']:.1f} s "
              f"(peak {built['peak_mib']:,.0f} MiB)", flush=True)
        print(f"{'export':<14} {'bytes':>14} {'seconds':>8} {'peak MiB':>9} {'before':>7}  target < {TARGET_MIB} MiB")
        for what in EXPORTS:
            got = _call([what, str(work), json.dumps(built)])
            if got is None:
                continue
            met = "met" if got["peak_mib"] < TARGET_MIB else "NOT met"
            print(f"{what:<14} {got['bytes']:>14,} {got['seconds']:>8.1f} {got['peak_mib']:>9,.0f} "
                  f"{got['before_mib']:>7,.0f}  {met}", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        argv = sys.argv[2:]
        work = Path(argv[1])
        print(json.dumps(_build(work, int(argv[2])) if argv[0] == "build" else _export(work, argv[0],
                                                                                      json.loads(argv[2]))))
    else:
        run(argparse.Namespace(quick="--quick" in sys.argv))
