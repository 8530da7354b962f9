"""Human labels end to end (issue 15, points 4 and 5): a human response set loaded
beside a model set, compared with every method of the model set's run; the
analysis page, downloads, command and API; MMLU-Pro's ``mmlu_level``."""
from __future__ import annotations

import csv as csv_module
import itertools
import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.analyses.services import analysis_csv, analysis_run_create, analysis_run_execute
from annotate.analyses.services.params import ERR_LABEL
from annotate.catalog.services.human import ERR_HAS_RUNS, response_set_mark_human
from annotate.models import AnalysisKind, Question, ResponseSet, RunStatus, ScoringRun
from annotate.runs.services.scoring import ERR_HUMAN, scoring_run_create, scoring_run_execute
from scoring.methods import get_method

pytestmark = pytest.mark.django_db

METHODS = ["eip", "simple_rank", "accuracy", "weighted_accuracy"]
# 6 questions in 2 subjects; 4 models; 5 persons.
QUESTIONS = "question_id,category,level\nq1,bio,1\nq2,bio,2\nq3,bio,3\nq4,chem,1\nq5,chem,2\nq6,chem,2\n"
MODELS = ("question_id,m1,m2,m3,m4\n"
          "q1,1,1,1,1\nq2,1,1,0,1\nq3,0,1,0,0\nq4,1,1,1,0\nq5,0,0,1,0\nq6,1,0,0,0\n")
# person solve rates: q1 1.0, q2 0.6, q3 0.2, q4 0.8, q5 0.4, q6 0.4
PEOPLE = ("question_id,p1,p2,p3,p4,p5\n"
          "q1,1,1,1,1,1\nq2,1,1,1,0,0\nq3,1,0,0,0,0\nq4,1,1,1,1,0\nq5,1,1,0,0,0\nq6,0,0,1,1,0\n")


def _load(tmp_path, name: str, text: str, *extra: str) -> ResponseSet:
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / f"{name}.csv"), "--format", "wide", "--dataset",
                 "D", "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category",
                 "--keep-columns", "level", *extra, verbosity=0, stdout=StringIO())
    return ResponseSet.objects.get(name=name)


@pytest.fixture
def sets(tmp_path):
    models = _load(tmp_path, "models", MODELS)
    people = _load(tmp_path, "people", PEOPLE, "--human")
    run = scoring_run_create(response_set=models, params={"methods": METHODS})
    scoring_run_execute(run=run)
    return models, people, run


def _agreement_by_hand(hard: dict[str, float], label: dict[str, float], margin: float) -> tuple[int, int, int]:
    """(agree, disagree, method ties) over same-subject pairs with |label diff| > margin."""
    subject = {q: ("bio" if q in ("q1", "q2", "q3") else "chem") for q in label}
    out = [0, 0, 0]
    for a, b in itertools.combinations(sorted(label), 2):
        if subject[a] != subject[b] or abs(label[a] - label[b]) <= margin:
            continue
        harder, easier = (a, b) if label[a] > label[b] else (b, a)
        d = hard[harder] - hard[easier]
        out[0 if d > 1e-12 else 1 if d < -1e-12 else 2] += 1
    return tuple(out)


def test_a_human_set_is_marked_and_never_scored_as_models(sets):
    models, people, _ = sets
    assert people.is_human and not models.is_human
    with pytest.raises(ValueError) as err:
        scoring_run_create(response_set=people)
    assert str(err.value) == ERR_HUMAN.format(value=people)
    with pytest.raises(ValueError) as err:
        response_set_mark_human(response_set=models)
    assert str(err.value) == ERR_HAS_RUNS.format(value=models, n=1)


def test_the_human_set_is_compared_with_every_method_of_the_model_run(sets):
    models, people, run = sets
    analysis = analysis_run_create(kind=AnalysisKind.HUMAN_LABELS, response_set=models,
                                   params={"label": f"human:{people.pk}", "margin": 0.3, "n_boot": 50})
    r = analysis_run_execute(run=analysis).result
    assert r["run"] == run.pk and r["n_questions_labelled"] == 6 and r["margins"] == [0.0, 0.3]
    human = {q["question_id"]: q for q in r["human"]["questions"]}
    ext = dict(Question.objects.values_list("pk", "external_id"))
    solve = {"q1": 1.0, "q2": 0.6, "q3": 0.2, "q4": 0.8, "q5": 0.4, "q6": 0.4}
    label = {ext[pk]: q["difficulty"] for pk, q in human.items()}
    assert label == pytest.approx({q: 1 - s for q, s in solve.items()}, abs=1e-12)
    # accuracy difficulty of the models = 1 - mean credit over m1..m4
    acc = {"q1": 0.0, "q2": 0.25, "q3": 0.75, "q4": 0.25, "q5": 0.75, "q6": 0.75}
    by_method = {m["method"]: m for m in r["methods"]}
    assert set(by_method) == {"eip", "simple_rank", "accuracy"}
    for p in by_method["accuracy"]["pairs"]:
        agree, disagree, ties = _agreement_by_hand(acc, label, p["margin"])
        assert (p["n_agree"], p["n_disagree"], p["n_method_ties"]) == (agree, disagree, ties)
    # margin 0: bio (q1<q2<q3 in human difficulty) 3 pairs; chem q4 < q5 = q6: 2 pairs, 1 label tie
    zero = by_method["accuracy"]["pairs"][0]
    assert (zero["n_pairs"], zero["n_label_ties"]) == (5, 1)
    csv = analysis_csv(kind=AnalysisKind.HUMAN_LABELS, result=r, table="pairs").decode()
    lines = csv.splitlines()
    assert lines[0].startswith("method,method_label,margin,pairs,label_ties,agree,disagree")
    # every row carries the registry label beside the key, as the page shows it
    rows = list(csv_module.reader(lines[1:]))
    assert rows and all(row[1] == get_method(row[0]).label for row in rows)


def test_the_analysis_page_the_command_and_the_api(sets, client, django_user_model, tmp_path, settings):
    models, people, _ = sets
    staff = django_user_model.objects.create_user("staff", password="pw", is_staff=True, is_superuser=True)
    client.force_login(staff)
    page = client.get(reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}))
    assert page.status_code == 200 and "Human label" in page.content.decode()
    # the scoring run is chosen from the finished runs by name, not typed as an id
    run = ScoringRun.objects.get(response_set=models, status=RunStatus.DONE)
    shown = page.content.decode()
    assert '<option value="0" selected>the newest finished run of the response set</option>' in shown
    assert f'<option value="{run.pk}">run {run.pk} of {models} (finished ' in shown
    out = tmp_path / "out"
    call_command("paper_report", "--response-set", str(models.pk), "--out", str(out), "--analyses", "human_labels",
                 "--label", "metadata:level", "--margin", "1.5", "--n-boot", "0", verbosity=0, stdout=StringIO())
    result = json.loads((out / "human_labels" / "result.json").read_text())
    result = result.get("result", result)
    assert result["label_key"] == "level" and result["margins"] == [0.0, 1.5]
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    answer = client.post(reverse("annotate:api_response_set_human", kwargs={"response_set_id": people.pk}),
                         data=json.dumps({"is_human": True}), content_type="application/json")
    assert answer.status_code == 200 and answer.json()["is_human"] is True
    answer = client.post(reverse("annotate:api_human_labels", kwargs={"response_set_id": models.pk}),
                         data=json.dumps({"label": "metadata:level", "n_boot": 0}), content_type="application/json")
    assert answer.status_code == 202
    status = client.get(answer["Location"]).json()
    assert status["status"] == "done" and status["result"]["label_key"] == "level"
    # labels 1 < 2 < 3 (bio) and 1 < 2 = 2 (chem): 3 + 2 pairs, 1 label tie
    pairs = status["result"]["methods"][0]["pairs"][0]
    assert (pairs["n_pairs"], pairs["n_label_ties"]) == (5, 1)
    page = client.get(reverse("annotate:analysis_run", kwargs={"analysis_id": status["id"]}))
    assert page.status_code == 200 and "Same-subject pair agreement" in page.content.decode()
    bad = client.post(reverse("annotate:api_human_labels", kwargs={"response_set_id": models.pk}),
                      data=json.dumps({"label": "level"}), content_type="application/json")
    assert bad.status_code == 400 and bad.json()["error"] == ERR_LABEL.format(value="level")


MMLU_LEVELS = {"elementary": 1, "high_school": 2, "college": 3, "professional": 4}


@pytest.mark.slow
def test_mmlu_level_in_both_directions_with_margins(shared_data):
    call_command("load_responses", folder=shared_data / "mmlu-pro", dataset="MMLU-Pro", subject_column="category",
                 keep_columns="mmlu_level", verbosity=0, stdout=StringIO())
    models = ResponseSet.objects.get()
    scoring_run_execute(run=scoring_run_create(response_set=models, params={"methods": METHODS}))
    results = {}
    for up in (True, False):
        analysis = analysis_run_create(kind=AnalysisKind.HUMAN_LABELS, response_set=models, params={
            "label": "metadata:mmlu_level", "label_higher_is_harder": up, "margin": 1.0, "n_boot": 20})
        results[up] = {m["method"]: m for m in analysis_run_execute(run=analysis).result["methods"]}
    # the pairs, counted from the metadata alone: same subject, levels apart by > 0 and by > 1
    counts = Counter((s, MMLU_LEVELS[lv]) for s, lv in Question.objects.filter(
        metadata__mmlu_level__in=list(MMLU_LEVELS)).values_list("subject__name", "metadata__mmlu_level"))
    expected = {0.0: 0, 1.0: 0}
    for (s1, l1), (s2, l2) in itertools.combinations(counts, 2):
        if s1 == s2:
            for margin in expected:
                expected[margin] += counts[s1, l1] * counts[s2, l2] * (abs(l1 - l2) > margin)
    assert expected[0.0] > expected[1.0] > 0
    for method, up in results[True].items():
        down = results[False][method]
        for p, q in zip(up["pairs"], down["pairs"]):
            assert p["n_pairs"] == expected[p["margin"]]
            assert (p["n_agree"], p["n_disagree"], p["n_method_ties"]) == (q["n_disagree"], q["n_agree"],
                                                                           q["n_method_ties"])
            assert p["agreement_excluding_ties"] == pytest.approx(1 - q["agreement_excluding_ties"], abs=1e-12)
        assert up["spearman"]["value"] == pytest.approx(-down["spearman"]["value"], abs=1e-12)
