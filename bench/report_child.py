"""Child process of ``bench report``: build one synthetic study in a fresh
SQLite file, then time the whole alignment report in-process.

``python bench/report_child.py build CASE DB_PATH 0`` creates the database;
``python bench/report_child.py measure CASE DB_PATH REPEATS [SOURCE_ROOT]``
times the report (then report.json and pairs.csv) in a fresh process and
prints one JSON line. ``SOURCE_ROOT`` (optional) runs the report of another
checkout of the project (the implementation before this branch) on the same
database.
Not a benchmark module itself (no ``bench_`` prefix).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

from _peak import own_peak_mib  # bench/ is this script's folder, first on sys.path

#: name -> (subject sizes, labelled questions, evaluators, pairs judged per evaluator or share, all pairs?)
CASES = {
    "3600x27": {"subjects": (100, 100, 100), "n_pairs": 3_600, "n_evaluators": 27, "p_judge": 0.5, "labelled": 0},
    "50000x5": {"subjects": (317,), "n_pairs": 50_000, "n_evaluators": 5, "p_judge": 1.0, "labelled": 0},
    # all same-subject pairs of nine topics of 285 questions (364,230 pairs); 236 questions carry a
    # solve rate (higher = easier); three evaluators judged 2,000 pairs each
    "364k-labelled": {"subjects": (285,) * 9, "n_pairs": None, "n_evaluators": 3, "p_judge": 2_000, "labelled": 236},
    # quick versions
    "360x27": {"subjects": (30, 30, 30), "n_pairs": 360, "n_evaluators": 27, "p_judge": 0.5, "labelled": 0},
    "5000x5": {"subjects": (101,), "n_pairs": 5_000, "n_evaluators": 5, "p_judge": 1.0, "labelled": 0},
    "36k-labelled": {"subjects": (90,) * 9, "n_pairs": None, "n_evaluators": 3, "p_judge": 2_000, "labelled": 236},
}
LABEL_KEY = "solve_rate"
SEED = 16


def build(case: str) -> int:
    """Create the study of ``case``; return its id."""
    import numpy as np
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotate.models import (
        Dataset,
        Judgment,
        LanguageModel,
        Pair,
        Participation,
        Question,
        QuestionResult,
        ResponseSet,
        RunStatus,
        ScoringRun,
        Study,
        Subject,
    )
    from scoring.methods import difficulty_methods

    spec = CASES[case]
    rng = np.random.default_rng(SEED)
    dataset = Dataset.objects.create(name="bench-report")
    subjects = [Subject.objects.create(name=f"Topic {k}") for k in range(len(spec["subjects"]))]
    sizes = spec["subjects"]
    n_q = sum(sizes)
    labelled = set(rng.choice(n_q, size=spec["labelled"], replace=False).tolist()) if spec["labelled"] else set()
    truth = rng.normal(size=n_q)  # hidden difficulty
    Question.objects.bulk_create(
        [Question(dataset=dataset, subject=subjects[s], external_id=f"q{i}", text=f"Question {i}?",
                  options=["a", "b", "c", "d"], reference_answer="A",
                  metadata={LABEL_KEY: round(float(1 / (1 + np.exp(truth[i] + rng.normal(0, 0.7)))), 2)}
                  if i in labelled else {})
         for i, s in enumerate(np.repeat(np.arange(len(sizes)), sizes).tolist())], batch_size=2000)
    questions = list(Question.objects.filter(dataset=dataset).order_by("pk").values_list("pk", "subject_id"))
    qid = np.array([q for q, _ in questions], dtype=np.int64)
    model = LanguageModel.objects.create(name="bench-model")
    rs = ResponseSet.objects.create(name="bench", file_name="r.csv", checksum="0" * 64, file_format="csv",
                                    n_questions=n_q, n_models=1)
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, progress=1.0, finished_at=timezone.now())
    run.models_used.add(model)
    methods = difficulty_methods()
    rows = []
    for i in range(n_q):
        scores = {}
        for m in methods:
            for c in (m.difficulty_column, *m.replicate_columns):
                x = float(truth[i] + rng.normal(0, 0.8))
                scores[c] = round(min(100.0, max(0.0, 50 + 15 * x)) if c.startswith("eip") else x, 6)
        scores["eip"] = round(scores["eip_scaled"] / 1000, 9)
        rows.append(QuestionResult(run=run, question_id=int(qid[i]), kept=True, n_observed=1, scores=scores))
    QuestionResult.objects.bulk_create(rows, batch_size=2000)
    study = Study.objects.create(name="bench-report", scoring_run=run, seed=SEED, n_pairs=1,
                                 target_judgments_per_pair=spec["n_evaluators"])
    study.datasets.add(dataset)
    study.subjects.add(*subjects)
    blocks, start = [], 0
    for size in sizes:
        i, j = np.triu_indices(size, k=1)
        blocks.append(np.column_stack([start + i, start + j]))
        start += size
    every = np.concatenate(blocks)
    if spec["n_pairs"] is not None:
        every = every[rng.choice(every.shape[0], size=spec["n_pairs"], replace=False)]
    flip = rng.random(every.shape[0]) < 0.5
    every[flip] = every[flip][:, ::-1]
    n_pairs = every.shape[0]
    Study.objects.filter(pk=study.pk).update(n_pairs=n_pairs)
    Pair.objects.bulk_create(
        (Pair(study=study, position=k, question_a_id=int(qid[a]), question_b_id=int(qid[b]))
         for k, (a, b) in enumerate(every.tolist())), batch_size=5000)
    pair_ids = np.array(Pair.objects.filter(study=study).order_by("position").values_list("pk", flat=True))
    user_model = get_user_model()
    now = timezone.now()
    for e in range(spec["n_evaluators"]):
        user = user_model.objects.create_user(username=f"bench-{e}")
        part = Participation.objects.create(study=study, user=user, field_of_study="chemistry",
                                            education_level="master_student", onboarded_at=now,
                                            guidelines_accepted_at=now)
        p = spec["p_judge"]
        chosen = (np.flatnonzero(rng.random(n_pairs) < p) if p <= 1
                  else rng.choice(n_pairs, size=int(p), replace=False))
        right = rng.random(chosen.size) < 0.75
        skip = rng.random(chosen.size) < 0.05
        left_first = rng.random(chosen.size) < 0.5
        objs = []
        for k, j, r, s, lf in zip(chosen.tolist(), chosen.tolist(), right.tolist(), skip.tolist(),
                                  left_first.tolist(), strict=True):
            a, b = int(qid[every[j, 0]]), int(qid[every[j, 1]])
            harder = a if (truth[every[j, 0]] > truth[every[j, 1]]) == r else b
            left = a if lf else b
            choice = "skip" if s else ("left" if harder == left else "right")
            objs.append(Judgment(participation=part, pair_id=int(pair_ids[k]), choice=choice, left_question_id=left,
                                 harder_question_id=None if s else harder, shown_at=now, submitted_at=now,
                                 seconds=12.0))
        Judgment.objects.bulk_create(objs, batch_size=5000)
    return study.pk


def main() -> None:
    mode, case, db_path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    source = sys.argv[5] if len(sys.argv) > 5 else ""
    if source:
        sys.path.insert(0, source)
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "eipsite.settings")
    import django

    django.setup()
    out: dict = {"case": case, "mode": mode}
    if mode == "build":
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        t0 = time.perf_counter()
        build(case)
        out["build_s"] = time.perf_counter() - t0
        print(json.dumps(out))
        return
    from annotate.models import Study
    from annotate.reports.services import alignment_report_compute
    from annotate.reports.services.report_files import report_json

    study = Study.objects.get(name="bench-report")
    label = {"label_key": LABEL_KEY} if CASES[case]["labelled"] else {}
    if label and not source:
        label["label_higher_is_harder"] = False  # a solve rate (the reference has no direction)

    import annotate.reports.services.report as report_module

    scale_s: list[float] = []
    real_scale = report_module.human_scale_section

    def timed_scale(*args, **kwargs):  # the Bradley-Terry section's share of the time
        t0 = time.perf_counter()
        try:
            return real_scale(*args, **kwargs)
        finally:
            scale_s.append(time.perf_counter() - t0)

    report_module.human_scale_section = timed_scale

    def report():
        return alignment_report_compute(study=study, n_boot=2000, rng=0, **label)

    rss0 = own_peak_mib()
    times = []
    result = None
    for _ in range(repeats):
        del result
        t0 = time.perf_counter()
        result = report()
        times.append(time.perf_counter() - t0)
    out["seconds"] = statistics.median(times)
    out["times"] = times
    out["scale_s"] = statistics.median(scale_s) if scale_s else float("nan")
    t0 = time.perf_counter()
    doc = report_json(result)
    out["json_s"] = time.perf_counter() - t0
    out["json_mb"] = len(doc) / 1e6
    del doc
    t0 = time.perf_counter()
    try:
        from annotate.reports.services.report_files import pairs_csv_stream
        out["pairs_csv_mb"] = sum(len(chunk) for chunk in pairs_csv_stream(result)) / 1e6
    except ImportError:  # the reference: the zip's pairs.csv, built in memory
        from annotate.reports.services.report_files import table_csv
        from annotate.reports.services.tables import csv_tables
        out["pairs_csv_mb"] = len(table_csv(next(t for t in csv_tables(result) if t.key == "pairs"))) / 1e6
    out["pairs_csv_s"] = time.perf_counter() - t0
    out["rss_before_mib"] = rss0
    out["rss_peak_mib"] = own_peak_mib()
    out["n_pairs"] = len(result.pairs)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
