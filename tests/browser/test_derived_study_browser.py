"""A researcher brings people's answers and gets a study from them, in the browser.

Fifty simulated persons (abilities N(0, 1)) answer 24 questions in two subjects
(difficulties N(0, 1.5)) with the Rasch probability. The researcher uploads the
answers on the admin upload page, marks the set as human, previews and creates
a derived study, and opens its report. The report's Bradley-Terry scale is
recomputed here with scipy from the same answers (the pairing rule written out
again) and must equal the report's to 1e-6, and rank the questions as the
simulated difficulties do (Spearman > 0.9).

Screenshots of the derive page, the report and the human-label page go to ``$EIP_SCREENSHOTS``.
"""
from __future__ import annotations

import itertools
import os
from io import StringIO

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import Page, expect
from scipy.optimize import minimize
from scipy.stats import spearmanr

from annotate.models import ResponseSet, Study, StudyOrigin
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("EIP_SCREENSHOTS", "")
N_QUESTIONS, N_PERSONS, N_MODELS = 24, 50, 6
PENALTY = 0.1  # the report's ridge penalty (annotate.reports.services.scale.PENALTY)


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"h24_{name}.png"), full_page=True)


def _simulate():
    rng = np.random.default_rng(0)
    b = rng.normal(0.0, 1.5, N_QUESTIONS)
    theta = rng.normal(0.0, 1.0, N_PERSONS)
    people = (rng.random((N_QUESTIONS, N_PERSONS)) < 1 / (1 + np.exp(-(theta[None] - b[:, None])))).astype(int)
    models = (rng.random((N_QUESTIONS, N_MODELS)) < 1 / (1 + np.exp(-(1.0 - b[:, None])))).astype(int)
    subjects = ["algebra" if i < N_QUESTIONS // 2 else "biology" for i in range(N_QUESTIONS)]
    return b, people, models, subjects


def _wide(matrix, prefix: str) -> str:
    header = "question_id," + ",".join(f"{prefix}{j + 1:02d}" for j in range(matrix.shape[1]))
    return "\n".join([header] + [f"q{i + 1:02d}," + ",".join(map(str, row)) for i, row in enumerate(matrix)]) + "\n"


def _bt_by_scipy(harder, other, n):
    """Penalised Bradley-Terry: minimise sum log(1 + exp(-(b_h - b_o))) + penalty/2 |b|^2 with L-BFGS."""
    h, o = np.asarray(harder), np.asarray(other)

    def objective(x):
        d = x[h] - x[o]
        p = 1.0 / (1.0 + np.exp(d))  # 1 - sigma(d)
        g = np.zeros(n)
        np.add.at(g, h, -p)
        np.add.at(g, o, p)
        return np.logaddexp(0.0, -d).sum() + 0.5 * PENALTY * x @ x, g + PENALTY * x

    res = minimize(objective, np.zeros(n), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    assert res.success, res.message
    return res.x


def test_a_researcher_derives_a_study_from_peoples_answers(live_server, page: Page, tmp_path, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    b, people, models, subjects = _simulate()
    questions = "question_id,category\n" + "".join(f"q{i + 1:02d},{s}\n" for i, s in enumerate(subjects))
    (tmp_path / "questions.csv").write_text(questions, encoding="utf-8")
    (tmp_path / "models.csv").write_text(_wide(models, "m"), encoding="utf-8")
    (tmp_path / "people.csv").write_text(_wide(people, "p"), encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "models.csv"), "--format", "wide", "--dataset", "Sim",
                 "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category", stdout=StringIO())
    run = scoring_run_create(response_set=ResponseSet.objects.get(name="models"),
                             params={"methods": ["eip", "simple_rank", "accuracy"]})
    scoring_run_execute(run=run)
    get_user_model().objects.create_superuser("rita", password="rita-pass-7")
    page.set_default_timeout(20_000)

    # the researcher uploads the people's answers and marks the set as human
    page.goto(f"{live_server.url}/accounts/login/?next=/admin/annotate/responseset/upload/")
    page.fill("#id_username", "rita")
    page.fill("#id_password", "rita-pass-7")
    page.click("#login-submit")
    page.set_input_files("#id_responses", str(tmp_path / "people.csv"))
    page.set_input_files("#id_questions", str(tmp_path / "questions.csv"))
    page.select_option("#id_file_format", "wide")
    page.fill("#id_dataset", "Sim")
    page.fill("#id_subject_column", "category")
    page.fill("#id_name", "people")
    page.click("input[type=submit][value=Preview]")
    page.click("input[type=submit][value='Confirm and load']")
    human = ResponseSet.objects.get(name="people")
    page.goto(f"{live_server.url}/admin/annotate/responseset/")
    page.check(f"input[name=_selected_action][value='{human.pk}']")
    page.select_option("select[name=action]", "mark_human")
    page.click("button[name=index]")
    human.refresh_from_db()
    assert human.is_human

    # the derive page: preview first (nothing written), then create
    page.goto(f"{live_server.url}/studies/")
    page.click("#derive-study")
    expect(page.locator("h1")).to_have_text("Study from people's answers")
    expect(page.locator("#pairing-rule")).to_contain_text("right on one and wrong on the other")
    page.select_option("#id_human_set", str(human.pk))
    page.select_option("#id_run", str(run.pk))
    page.click("button[value=preview]")
    # every same-subject pair: 2 x C(12, 2) = 132; votes counted below from the answers
    pairs = [(i, j) for i, j in itertools.combinations(range(N_QUESTIONS), 2) if subjects[i] == subjects[j]]
    harder, other = [], []
    for i, j in pairs:
        for p in range(N_PERSONS):
            if people[i, p] != people[j, p]:  # one right, one wrong: the wrong one is harder
                harder.append(i if people[i, p] < people[j, p] else j)
                other.append(j if people[i, p] < people[j, p] else i)
    expect(page.locator("#preview-pairs")).to_have_text(f"{len(pairs):,}")
    expect(page.locator("#preview-votes")).to_have_text(f"{len(harder):,}")
    assert Study.objects.count() == 0
    page.fill("#id_name", "From people")
    page.locator("#id_name").blur()
    shot(page, "derive_preview")
    page.click("button[value=create]")
    study = Study.objects.get(name="From people")
    assert study.origin == StudyOrigin.DERIVED
    expect(page.locator("h1")).to_contain_text("From people")
    shot(page, "derived_report")

    # the report's figures against an independent computation
    document = page.request.get(f"{live_server.url}/studies/{study.pk}/report/report.json").json()
    scale = document["human_scale"]
    assert scale["available"] and scale["n_votes"] == len(harder)
    reported = {q["question"]["external_id"]: q["difficulty"] for q in scale["questions"]}
    expected = _bt_by_scipy(harder, other, N_QUESTIONS)
    for i in range(N_QUESTIONS):
        assert reported[f"q{i + 1:02d}"] == pytest.approx(expected[i], abs=1e-6)
    ours = np.array([reported[f"q{i + 1:02d}"] for i in range(N_QUESTIONS)])
    assert spearmanr(ours, b).statistic > 0.9
    assert sum(e["n_votes"] for e in document["evaluators"]) == len(harder)

    # the human-label page, reached from the report: the people's answers as a label, in a dropdown
    page.goto(f"{live_server.url}/studies/{study.pk}/report/")
    page.click("#human-labels-link")
    expect(page.locator("h1")).not_to_contain_text("issue")
    page.select_option("#id_label", f"human:{human.pk}")
    page.locator("#id_label").blur()
    shot(page, "human_labels_page")
