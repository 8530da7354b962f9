"""Issue 12, points 5 and 9: every export names a question by its dataset and
external id (two datasets here share "q1" and "q2"), every report download
carries the parameters it was computed with and names them in its file name,
and the evaluator-vs-others rows count the pairs one side skipped.

The shared-id study (questions in creation order, so by database key)::

    alpha/q1 (level 1)  alpha/q2 (level 2)  beta/q1 (level 3)  beta/q2 (level 2)
    EIP:   10                 30                 20                 40

    P1 = (alpha/q1, beta/q1): ada sees beta/q1 on the left and presses left -> b (beta/q1 harder)
    P2 = (alpha/q2, beta/q1): ada sees alpha/q2 on the left and skips
    P3 = (alpha/q1, beta/q2): ada sees alpha/q1 on the left and presses left -> a (alpha/q1 harder)

A code that wrote question a's dataset next to question b's id would write
"alpha" before "q1" for P1's question b; every check below would catch it.
"""
from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import pandas as pd
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.api.services import api_token_create
from annotate.models import (
    Dataset,
    Judgment,
    Pair,
    Question,
    QuestionResult,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Study,
    Subject,
)
from annotate.reports.selectors.alignment import JUDGMENT_COLUMNS, study_judgment_rows
from annotate.reports.services import alignment_report_compute, study_alignment_report
from annotate.reports.services.report_files import report_files
from annotate.reports.services.tables import page_tables
from annotate.studies.services.participation import ensure_role_groups
from tests.annotate.factories import make_evaluator, make_user
from tests.annotate.reports.test_report import build_study
from tests.annotate.reports.test_schema import SCHEMA, errors

pytestmark = pytest.mark.django_db

QUESTIONS = (("alpha", "q1", 1, 10.0), ("alpha", "q2", 2, 30.0), ("beta", "q1", 3, 20.0), ("beta", "q2", 2, 40.0))
PAIRS = ((0, 2), (1, 2), (0, 3))
PARAMETER_KEYS = ["study", "scoring_run", "min_votes", "tie_rule", "label_key", "label_direction", "n_boot",
                  "bootstrap_seed", "scale_n_boot", "label_n_boot"]


@pytest.fixture
def shared():
    """The study above, a staff client, and an API client of a researcher."""
    cache.clear()
    datasets = {name: Dataset.objects.create(name=name) for name in ("alpha", "beta")}
    subject = Subject.objects.get_or_create(name="Mathematics")[0]
    questions = [Question.objects.create(dataset=datasets[d], subject=subject, external_id=e, text=f"{d} {e}",
                                         metadata={"level": level}) for d, e, level, _ in QUESTIONS]
    response_set = ResponseSet.objects.create(name="shared-ids", file_name="r.csv", checksum="5" * 64,
                                              file_format="csv", n_questions=4, n_models=3)
    run = ScoringRun.objects.create(response_set=response_set, status=RunStatus.DONE, progress=1.0,
                                    finished_at=timezone.now())
    for q, (_, _, _, eip) in zip(questions, QUESTIONS):
        QuestionResult.objects.create(run=run, question=q, kept=True, n_observed=3,
                                      scores={"eip_scaled": eip, "simple_rank": eip / 100})
    study = Study.objects.create(name="Shared ids", scoring_run=run, seed=0, n_pairs=len(PAIRS))
    study.datasets.set(datasets.values())
    study.subjects.set([subject])
    pairs = [Pair.objects.create(study=study, position=k, question_a=questions[i], question_b=questions[j])
             for k, (i, j) in enumerate(PAIRS)]
    ada = make_evaluator(study, "ada")
    now = timezone.now()
    for pair, left, choice in ((pairs[0], pairs[0].question_b, "left"), (pairs[1], pairs[1].question_a, "skip"),
                               (pairs[2], pairs[2].question_a, "left")):
        harder = None if choice == "skip" else left
        Judgment.objects.create(participation=ada, pair=pair, choice=choice, left_question=left,
                                harder_question=harder, shown_at=now, submitted_at=now, seconds=2.0)
    staff = Client()
    staff.force_login(make_user("sam", staff=True))
    researchers, _ = ensure_role_groups()
    rita = make_user("rita")
    rita.groups.add(researchers)
    study.members.add(rita)  # researchers reach only studies they own or were added to
    api = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=rita)[1]}")
    return study, run, questions, staff, api


# --- point 5: question identity ------------------------------------------------------------------------------

#: Each pair's (dataset_a, question_a, dataset_b, question_b), by hand from PAIRS and QUESTIONS.
PAIR_SIDES = [("alpha", "q1", "beta", "q1"), ("alpha", "q2", "beta", "q1"), ("alpha", "q1", "beta", "q2")]


def test_the_report_json_names_each_side_of_a_pair_by_its_dataset(shared):
    study, _, questions, _, api = shared
    report = api.get(reverse("annotate:api_study_report", kwargs={"study_id": study.pk}), {"n_boot": 10}).json()
    assert report["schema_version"] == 5
    got = [(p["question_a"]["dataset"], p["question_a"]["external_id"], p["question_b"]["dataset"],
            p["question_b"]["external_id"]) for p in report["pairs"]]
    assert got == PAIR_SIDES
    assert report["pairs"][0]["question_b"] == {"id": questions[2].pk, "dataset": "beta", "external_id": "q1"}
    assert "dataset" not in report["pairs"][0]  # no single dataset for a pair
    assert errors(report, SCHEMA) == []  # the API's answer is the whole report of annotate/report_schema.json


def test_the_pairs_csv_and_page_table_name_each_side_by_its_dataset(shared):
    study, _, questions, _, _ = shared
    report = alignment_report_compute(study=study, n_boot=10)
    frame = pd.read_csv(io.BytesIO(report_files(report, [])["pairs.csv"]))
    assert list(zip(frame["dataset_a"], frame["question_a"], frame["dataset_b"], frame["question_b"])) == PAIR_SIDES
    assert frame["question_b_pk"].tolist() == [questions[2].pk, questions[2].pk, questions[3].pk]
    table = page_tables(report)["pairs"]
    assert table.header[:6] == ("#", "Subject", "Dataset a", "Question a", "Dataset b", "Question b")
    assert [tuple(c.text for c in row[2:6]) for row in table.page_rows()] == PAIR_SIDES


def test_judgments_name_every_question_by_dataset_in_csv_and_api(shared):
    study, _, _, staff, api = shared
    # P1: beta/q1 on the left, left pressed -> b, beta/q1 harder; P2: alpha/q2 on the left, skipped;
    # P3: alpha/q1 on the left, left pressed -> a, alpha/q1 harder
    expected = [
        {"dataset_a": "alpha", "question_a": "q1", "dataset_b": "beta", "question_b": "q1",
         "left_dataset": "beta", "left_question": "q1", "right_dataset": "alpha", "right_question": "q1",
         "choice": "left", "harder_dataset": "beta", "harder_question": "q1", "verdict": "b"},
        {"dataset_a": "alpha", "question_a": "q2", "dataset_b": "beta", "question_b": "q1",
         "left_dataset": "alpha", "left_question": "q2", "right_dataset": "beta", "right_question": "q1",
         "choice": "skip", "harder_dataset": "", "harder_question": "", "verdict": "skip"},
        {"dataset_a": "alpha", "question_a": "q1", "dataset_b": "beta", "question_b": "q2",
         "left_dataset": "alpha", "left_question": "q1", "right_dataset": "beta", "right_question": "q2",
         "choice": "left", "harder_dataset": "alpha", "harder_question": "q1", "verdict": "a"},
    ]
    keys = list(expected[0])
    assert [{k: r[k] for k in keys} for r in study_judgment_rows(study=study)] == expected
    url = reverse("annotate:api_study_judgments", kwargs={"study_id": study.pk})
    assert [{k: r[k] for k in keys} for r in api.get(url).json()["judgments"]] == expected
    for response in (api.get(url, {"format": "csv"}),
                     staff.get(reverse("annotate:study_judgments_csv", kwargs={"study_id": study.pk}))):
        body = b"".join(response.streaming_content) if response.streaming else response.content
        rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
        assert list(rows[0]) == list(JUDGMENT_COLUMNS)
        assert [{k: r[k] for k in keys} for r in rows] == expected
        assert response["Content-Disposition"] == f'attachment; filename="study-{study.pk}_judgments.csv"'


def test_the_coverage_page_names_each_side_by_its_dataset(shared):
    study, _, _, staff, _ = shared
    page = staff.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    sides = re.findall(r'<td class="pair-question"><span class="question-id">([^<]*)</span>', page)
    pairs = list(zip(sides[::2], sides[1::2], strict=True))  # question A, question B columns of each row
    for da, qa, db, qb in PAIR_SIDES:
        assert (f"{da}:{qa}", f"{db}:{qb}") in pairs


def test_the_run_download_names_questions_by_dataset_and_question_id(shared):
    _, run, questions, staff, api = shared
    for response in (staff.get(reverse("annotate:run_questions_csv", kwargs={"run_id": run.pk})),
                     api.get(reverse("annotate:api_scoring_run_questions", kwargs={"run_id": run.pk}))):
        frame = pd.read_csv(io.BytesIO(b"".join(response.streaming_content)), dtype={"question_id": str})
        assert list(frame.columns[:4]) == ["scoring_run", "dataset", "question_id", "question_pk"]
        got = {(d, q): (pk, eip) for d, q, pk, eip in
               zip(frame["dataset"], frame["question_id"], frame["question_pk"], frame["eip_scaled"])}
        assert got == {(d, e): (q.pk, eip) for (d, e, _, eip), q in zip(QUESTIONS, questions)}
        assert frame["scoring_run"].tolist() == [run.pk] * 4
    page = staff.get(reverse("annotate:run_questions", kwargs={"run_id": run.pk})).content.decode()
    for dataset, external_id, _, _ in QUESTIONS:
        assert f"<td>{external_id}</td><td>{dataset}</td>" in page
    codebook = staff.get(reverse("annotate:run_codebook", kwargs={"run_id": run.pk})).content.decode()
    assert "| `question_id` | text | the question's id in its dataset" in codebook
    assert "| `question_pk` | integer | the question's database key on this site" in codebook


# --- point 9: parameters in every download and its file name -------------------------------------------------


def test_two_report_downloads_with_different_parameters_get_different_names_and_carry_them(shared):
    study, run, _, staff, api = shared
    kw = {"study_id": study.pk}
    first = {"n_boot": 30}
    second = {"n_boot": 50, "min_votes": 2, "tie_rule": "none"}
    # the label "level" is autodetected (every question carries one), read higher = harder
    stems = {
        "first": f"study-{study.pk}_run-{run.pk}_minvotes-1_ties-evaluator-weight_boot-30-seed-0_label-level",
        "second": f"study-{study.pk}_run-{run.pk}_minvotes-2_ties-none_boot-50-seed-0_label-level",
    }
    values = {
        "first": {"study": study.pk, "scoring_run": run.pk, "min_votes": 1, "tie_rule": "evaluator_weight",
                  "label_key": "level", "label_direction": "higher_is_harder", "n_boot": 30, "bootstrap_seed": 0,
                  "scale_n_boot": 30, "label_n_boot": 200},
        "second": {"study": study.pk, "scoring_run": run.pk, "min_votes": 2, "tie_rule": "none",
                   "label_key": "level", "label_direction": "higher_is_harder", "n_boot": 50, "bootstrap_seed": 0,
                   "scale_n_boot": 50, "label_n_boot": 200},
    }
    for which, query in (("first", first), ("second", second)):
        stem, expected = stems[which], values[which]
        as_json = staff.get(reverse("annotate:study_report_json", kwargs=kw), query)
        assert as_json["Content-Disposition"] == f'attachment; filename="{stem}_report.json"'
        assert json.loads(as_json.content)["parameters"] == expected
        as_csv = staff.get(reverse("annotate:study_report_csv", kwargs=kw), query)
        assert as_csv["Content-Disposition"] == f'attachment; filename="{stem}_report.csv"'
        frame = pd.read_csv(io.BytesIO(as_csv.content), keep_default_na=False)
        assert frame[PARAMETER_KEYS].drop_duplicates().to_dict("records") == [expected]
        as_zip = staff.get(reverse("annotate:study_report_zip", kwargs=kw), query)
        assert as_zip["Content-Disposition"] == f'attachment; filename="{stem}_report.zip"'
        archive = zipfile.ZipFile(io.BytesIO(b"".join(as_zip.streaming_content)))
        assert json.loads(archive.read("parameters.json")) == expected
        for name in ("consensus.csv", "pairs.csv", "labels.csv", "evaluators.csv"):
            table = pd.read_csv(io.BytesIO(archive.read(name)), keep_default_na=False)
            assert table[PARAMETER_KEYS].drop_duplicates().to_dict("records") == [expected], name
        plot = staff.get(reverse("annotate:study_report_plot", kwargs={**kw, "name": "agreement", "fmt": "svg"}),
                         query)
        assert plot["Content-Disposition"] == f'inline; filename="{stem}_agreement.svg"'
        page = staff.get(reverse("annotate:study_report", kwargs=kw), query).content.decode()
        tie_words = {"evaluator_weight": "resolve by evaluator weight", "none": "leave unresolved (no consensus)"}
        assert (f'id="report-parameters">Parameters: study: {study.pk}; scoring run: {run.pk}; '
                f'min. votes per pair: {expected["min_votes"]}; vote ties: {tie_words[expected["tie_rule"]]}; '
                f'label: level; label direction: higher is harder; bootstrap resamples: {expected["n_boot"]:,}; '
                f'bootstrap seed: 0') in page
        api_csv = api.get(reverse("annotate:api_study_report", kwargs=kw), {**query, "format": "csv"})
        assert api_csv["Content-Disposition"] == f'attachment; filename="{stem}_report.csv"'
        assert api.get(reverse("annotate:api_study_report", kwargs=kw), query).json()["parameters"] == expected
    assert stems["first"] != stems["second"]


# --- point 9: evaluator-vs-others rows count the pairs one side skipped ---------------------------------------

#: evaluator, pair number, side shown on the left, button pressed (build_study's pairs P1-P4)
SKIPPY = (
    ("ada", 1, "a", "left"),   # a
    ("bo", 1, "a", "skip"),
    ("cy", 1, "a", "right"),   # b
    ("ada", 2, "a", "left"),   # a
    ("bo", 2, "a", "skip"),
    ("cy", 2, "b", "skip"),
    ("bo", 3, "a", "skip"),
    ("cy", 3, "a", "skip"),
    ("ada", 4, "a", "right"),  # b
)


def test_each_evaluator_row_counts_the_shared_pairs_left_out_by_skips():
    study, _ = build_study(judgments=SKIPPY, evaluators=("ada", "bo", "cy"))
    report = alignment_report_compute(study=study, n_boot=10)
    # ada: P1 others (bo skip, cy b) voted -> kept; P2 others (bo, cy) only skipped -> skipped by the others;
    #      P4 nobody else -> not shared. 1 = 0 + 1 + 0. Pairs vs others: P1 only (cy's b is the others' consensus).
    # bo:  P1 skipped, others voted (ada, cy); P2 skipped, ada voted; P3 skipped, cy skipped too (both sides
    #      skipped). 3 = 2 + 0 + 1; no pair compared: 0 compared + 3 left out = bo's 3 shared pairs.
    # cy:  P2 skipped, ada voted; P3 both skipped; P1 compared with ada's a. 1 compared + 2 = 1 + 0 + 1 left out
    #      = cy's 3 shared pairs.
    expected = {"ada": (1, 0, 1, 0, 1), "bo": (3, 2, 0, 1, 0), "cy": (2, 1, 0, 1, 1)}
    got = {e.pseudonym: (e.vs_others.pairs_skipped_by_one, e.vs_others.n_skipped_by_evaluator,
                         e.vs_others.n_skipped_by_others, e.vs_others.n_skipped_by_both, e.vs_others.n)
           for e in report.evaluators}
    assert got == expected
    document = study_alignment_report(study=study, n_boot=10)
    assert {e["pseudonym"]: e["vs_others"]["pairs_skipped_by_one"] for e in document["evaluators"]} == {
        "ada": 1, "bo": 3, "cy": 2}
    frame = pd.read_csv(io.BytesIO(report_files(report, [])["evaluators.csv"]))
    assert dict(zip(frame["pseudonym"], frame["pairs_skipped_by_one"])) == {"ada": 1, "bo": 3, "cy": 2}
    table = page_tables(report)["evaluators"]
    column = table.header.index("Left out by skips")
    assert [row[column].text for row in table.page_rows()] == ["1", "3", "2"]
