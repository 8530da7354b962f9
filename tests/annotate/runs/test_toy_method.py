"""Adding a difficulty method is one registry entry plus its runner (issue 11).

A toy method is registered for the length of a test; it then shows up in a
scoring run, the leaderboard, the question list, the report page, and the
report's CSV and JSON, with values recomputed here from the response matrix.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

import annotate.demo
from annotate.catalog.loaders.tabular_files import parse_folder
from annotate.catalog.selectors.matrix import response_matrix
from annotate.catalog.services.loading import response_set_load
from annotate.models import Judgment, MethodResult, ModelResult, Pair, QuestionResult, RunStatus
from annotate.runs.selectors.results import run_questions
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.runs.views import QUESTIONS_PER_PAGE
from annotate.studies.services.studies import study_create
from scoring.method_runners import MethodInput, MethodOutput
from scoring.methods import DifficultyMethod, register_method, unregister_method
from tests.annotate.factories import make_evaluator, make_user

pytestmark = pytest.mark.django_db

DEMO = Path(annotate.demo.__file__).parent


def _toy_runner(data: MethodInput) -> MethodOutput:
    """Difficulty: squared share of observed failures (credit < 1/2) plus 1000;
    competency: 7 x the model's mean credit. Easy to recompute independently."""
    observed = ~np.isnan(data.R)
    failed = np.where(observed, data.R < 0.5, False).sum(axis=1) / observed.sum(axis=1)
    credit = np.where(observed, data.R, 0.0).sum(axis=0) / observed.sum(axis=0)
    return MethodOutput(question_columns={"toy_difficulty": 1000 + failed**2},
                        model_columns={"toy_competency": 7 * credit}, n_iter=1, converged=True,
                        notes={"toy": True})


TOY = DifficultyMethod(
    key="toy", label="Toy squared failures", runner=_toy_runner,
    question_columns=("toy_difficulty",), model_columns=("toy_competency",),
    difficulty_column="toy_difficulty", competency_column="toy_competency", cost=0.1,
    column_labels={"toy_difficulty": "Toy squared failures (difficulty)",
                   "toy_competency": "Toy squared failures (competency)"},
    column_decimals={"toy_difficulty": 4, "toy_competency": 4},
)


@pytest.fixture
def toy():
    register_method(TOY)
    yield TOY
    unregister_method("toy")


@pytest.fixture
def scored(toy):
    parsed = parse_folder(DEMO, dataset="EIP-demo", subject_column="category", keep_columns=["level"])
    response_set = response_set_load(parsed=parsed, name="EIP-demo")
    run = scoring_run_create(response_set=response_set, params={"methods": ["eip", "accuracy", "toy"]})
    return scoring_run_execute(run=run)


def _expected(run):
    m = response_matrix(response_set=run.response_set)
    R = m.R
    observed = ~np.isnan(R)
    difficulty = {
        int(q): 1000 + (sum(1 for v in row if not np.isnan(v) and v < 0.5) / observed[i].sum()) ** 2
        for i, (q, row) in enumerate(zip(m.question_ids, R))
    }
    competency = {int(mid): 7 * np.nansum(R[:, j]) / observed[:, j].sum() for j, mid in enumerate(m.model_ids)}
    return difficulty, competency


def test_a_registered_toy_method_is_run_and_stored(scored):
    assert scored.status == RunStatus.DONE
    assert sorted(MethodResult.objects.filter(run=scored).values_list("method", flat=True)) == [
        "accuracy", "eip", "toy"]
    toy_result = MethodResult.objects.get(run=scored, method="toy")
    assert (toy_result.n_iter, toy_result.converged, toy_result.notes) == (1, True, {"toy": True})
    difficulty, competency = _expected(scored)
    stored_q = {r.question_id: r.score("toy_difficulty") for r in QuestionResult.objects.filter(run=scored)}
    stored_m = {r.model_id: r.score("toy_competency") for r in ModelResult.objects.filter(run=scored)}
    assert stored_q.keys() == difficulty.keys() and stored_m.keys() == competency.keys()
    assert max(abs(stored_q[q] - v) for q, v in difficulty.items()) <= 1e-12
    assert max(abs(stored_m[k] - v) for k, v in competency.items()) <= 1e-12


def test_the_toy_method_shows_on_the_leaderboard_and_question_list(scored):
    client = Client()
    client.force_login(make_user("rita", staff=True))
    _, competency = _expected(scored)
    html = client.get(reverse("annotate:run_models", kwargs={"run_id": scored.pk})).content.decode()
    assert "Toy squared failures (competency)" in html
    for value in competency.values():
        assert f'<td class="num">{value:.4f}</td>' in html
    html = client.get(reverse("annotate:run_questions", kwargs={"run_id": scored.pk})).content.decode()
    assert "Toy squared failures (difficulty)" in html
    difficulty, _ = _expected(scored)
    first_page = run_questions(run=scored)[:QUESTIONS_PER_PAGE]
    for r in first_page:
        assert f'<td class="num">{difficulty[r.question_id]:.4f}</td>' in html
    detail = client.get(reverse("annotate:run_detail", kwargs={"run_id": scored.pk})).content.decode()
    assert "Toy squared failures" in detail


def test_the_toy_method_is_compared_with_people_in_the_report(scored):
    study = study_create(name="Toy study", run=scored, datasets=list(scored.datasets_used.all()), n_pairs=12, seed=3)
    pairs = list(Pair.objects.filter(study=study).order_by("position"))
    difficulty, _ = _expected(scored)
    # One evaluator who always calls question a harder: the toy method agrees
    # exactly on the pairs where a's toy difficulty is strictly larger.
    people = make_evaluator(study, "ann")
    now = timezone.now()
    for pair in pairs:
        Judgment.objects.create(participation=people, pair=pair, choice="left", left_question=pair.question_a,
                                harder_question=pair.question_a, shown_at=now, submitted_at=now, seconds=2.0)
    agree = sum(difficulty[p.question_a_id] > difficulty[p.question_b_id] for p in pairs)

    client = Client()
    client.force_login(make_user("rita", staff=True))
    url_args = {"study_id": study.pk}
    report = json.loads(client.get(reverse("annotate:study_report_json", kwargs=url_args) + "?n_boot=50").content)
    methods = {m["key"]: m for m in report["methods"]}
    assert methods["toy"]["label"] == "Toy squared failures" and methods["toy"]["available"] is True
    assert [m["key"] for m in report["methods"]][-1] == "toy"
    [ann] = report["evaluators"]
    assert ann["methods"]["toy"]["agreement"] == pytest.approx(agree / len(pairs), abs=1e-12)

    page = client.get(reverse("annotate:study_report", kwargs=url_args) + "?n_boot=50").content.decode()
    assert "Toy squared failures" in page

    text = client.get(reverse("annotate:study_report_csv", kwargs=url_args) + "?n_boot=50").content.decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert any("Toy squared failures" in row for row in rows)
