"""Response-matrix diagnostics of scoring runs, uploads and studies (issue 12, point 7).

Cast: ``rita`` (researcher) reads the run page.
"""
from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotate.catalog.services.loading import response_set_preview
from annotate.models import Dataset, LanguageModel, Question, QuestionResult, ResponseSet, Study, Subject
from annotate.runs.selectors.scoring import scoring_run_diagnostics
from annotate.runs.services import scoring as service
from annotate.studies.services.studies import study_create
from scoring.pair_sampling import ERR_TOO_FEW_PAIRS
from tests.annotate.catalog.test_loading import parse_wide
from tests.annotate.factories import make_user, write_responses
from tests.annotate.reports.test_report import build_study

pytestmark = pytest.mark.django_db

FAST = {"mirt_epochs": 30, "mirt_seeds": 1}
# partial credits so every question is kept (neither solved nor failed by all)
BLOCK = ((1.0, 0.5), (0.0, 1.0), (0.5, 0.0), (1.0, 0.0))


def _scored(cells: dict[tuple[int, int], float], *, n_questions: int, n_models: int, params: dict | None = None):
    """A run on ``cells`` ((question index, model index) -> credit), one subject."""
    dataset, subject = Dataset.objects.create(name="Bench"), Subject.objects.create(name="algebra")
    questions = [Question.objects.create(dataset=dataset, subject=subject, external_id=f"q{i + 1}",
                                         text=f"Question {i + 1}")  # a question without text is never paired
                 for i in range(n_questions)]
    models = [LanguageModel.objects.create(name=f"m{j + 1}") for j in range(n_models)]
    rs = ResponseSet.objects.create(name="bench", file_name="b.csv", checksum="b" * 64, file_format="wide")
    write_responses(rs, [(questions[i], models[j], c) for (i, j), c in cells.items()])
    run = service.scoring_run_execute(
        run=service.scoring_run_create(response_set=rs, params={**FAST, **(params or {})})
    )
    return run, dataset, questions


@pytest.fixture
def two_blocks():
    """Models m1, m2 answer q1..q4; m3, m4 answer q5..q8; nothing across."""
    cells = {}
    for i, credits in enumerate(BLOCK):
        cells.update({(i, 0): credits[0], (i, 1): credits[1], (4 + i, 2): credits[0], (4 + i, 3): credits[1]})
    return _scored(cells, n_questions=8, n_models=4, params={"min_models": 2})


def test_a_two_block_matrix_is_two_components_and_the_run_records_it(two_blocks):
    run, _, questions = two_blocks
    # 8 questions x 4 models = 32 cells, 2 x 8 = 16 observed; each question by 2 models (not < min_models=2)
    assert {k: v for k, v in run.diagnostics.items() if k != "warnings"} == {
        "n_cells": 32, "n_missing": 16, "min_models": 2, "n_low_coverage": 0, "n_components": 2}
    assert run.diagnostics["warnings"] == [
        "The model-question graph splits into 2 components that share no model: difficulties of different "
        "components are not comparable, and no study pairs questions across them."]
    stored = dict(QuestionResult.objects.filter(run=run).values_list("question_id", "component"))
    assert [stored[q.pk] for q in questions] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert scoring_run_diagnostics(pk=run.pk) == run.diagnostics


def test_the_run_page_warns_about_the_blocks(two_blocks):
    run, _, _ = two_blocks
    rita = make_user("rita")
    rita.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(rita)
    html = client.get(reverse("annotate:run_detail", args=[run.pk])).content.decode()
    assert ('<p id="run-diagnostics" class="warning">16 of 32 model-question cells not observed; 0 questions '
            "observed by fewer than 2 models; the model-question graph has 2 components.") in html
    assert "splits into 2 components that share no model" in html


def test_a_study_never_pairs_questions_of_different_blocks(two_blocks):
    run, dataset, questions = two_blocks
    block = {q.pk: 0 if k < 4 else 1 for k, q in enumerate(questions)}
    for seed in range(10):
        study = study_create(name=f"s{seed}", run=run, datasets=[dataset], n_pairs=12, seed=seed)
        pairs = list(study.pairs.values_list("question_a_id", "question_b_id"))
        assert len(pairs) == 12 and all(block[a] == block[b] for a, b in pairs)
    # 6 + 6 within-block pairs; the 16 cross-block ones are never possible
    with pytest.raises(ValueError) as caught:
        study_create(name="too many", run=run, datasets=[dataset], n_pairs=13, seed=0)
    assert str(caught.value) == ERR_TOO_FEW_PAIRS.format(n_pairs=13, n_possible=12, n_eligible=8)


@pytest.fixture
def one_thin_question():
    """q1..q3 answered by m1, m2, m3; q4 by m1 and m2 only (2 < 3 models)."""
    credits = ((1.0, 0.0, 0.5), (0.0, 1.0, 1.0), (0.5, 0.5, 0.0), (1.0, 0.0, None))
    cells = {(i, j): c for i, row in enumerate(credits) for j, c in enumerate(row) if c is not None}
    return _scored(cells, n_questions=4, n_models=3)


def test_missing_cells_and_a_low_coverage_question_are_counted(one_thin_question):
    run, _, _ = one_thin_question
    # 4 x 3 = 12 cells, 11 observed; q4 is the one question below 3 models; one component
    assert run.diagnostics == {"n_cells": 12, "n_missing": 1, "min_models": 3, "n_low_coverage": 1,
                               "n_components": 1, "warnings": []}
    assert run.params["min_models"] == 3


def test_a_low_coverage_question_is_left_out_of_pairs_unless_asked(one_thin_question):
    run, dataset, questions = one_thin_question
    thin = questions[3].pk
    study = study_create(name="default", run=run, datasets=[dataset], n_pairs=3, seed=1)
    pairs = list(study.pairs.values_list("question_a_id", "question_b_id"))
    assert thin not in {q for pair in pairs for q in pair}
    assert not study.include_low_coverage
    with pytest.raises(ValueError) as caught:
        study_create(name="four", run=run, datasets=[dataset], n_pairs=4, seed=1)
    assert str(caught.value) == ERR_TOO_FEW_PAIRS.format(n_pairs=4, n_possible=3, n_eligible=3)
    included = study_create(name="all", run=run, datasets=[dataset], n_pairs=6, seed=1, include_low_coverage=True)
    pairs = list(included.pairs.values_list("question_a_id", "question_b_id"))
    assert sum(thin in pair for pair in pairs) == 3  # paired with each of the 3 others
    assert included.include_low_coverage


def test_the_upload_preview_counts_missing_cells_exactly(tmp_path):
    # WIDE: q1 = (1, 0, _), q2 = (0, 1, 1), q3 = (_, 0.5, 1): 9 cells, 7 observed, q1 and q3 below 3 models
    preview = response_set_preview(parsed=parse_wide(tmp_path), name="set")
    assert (preview.n_cells, preview.n_missing, preview.n_low_coverage, preview.n_components) == (9, 2, 2, 1)
    assert preview.diagnostics_line == ("2 of 9 model-question cells not observed; 2 questions observed by fewer "
                                        "than 3 models; the model-question graph has 1 component.")


def test_an_upload_in_two_blocks_is_flagged_in_its_preview(tmp_path):
    preview = response_set_preview(parsed=parse_wide(tmp_path, "question_id,m1,m2,m3\nq1,1,,\nq2,,0,1\nq3,,1,\n"))
    # m1 answers only q1; m2, m3 answer q2, q3: 9 cells, 4 observed, 2 components
    assert (preview.n_cells, preview.n_missing, preview.n_components) == (9, 5, 2)
    assert preview.diagnostics_line.endswith("has 2 components (blocks that share no model: their questions are "
                                             "never paired).")


def test_the_report_page_warns_when_its_run_splits_into_blocks():
    study, _ = build_study()
    rita = make_user("rita")
    rita.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(rita)
    client = Client()
    client.force_login(rita)
    url = reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=20"
    assert 'id="report-diagnostics-warning"' not in client.get(url).content.decode()
    warning = "The model-question graph splits into 2 components that share no model: ..."
    type(study.scoring_run).objects.filter(pk=study.scoring_run_id).update(
        diagnostics={"n_cells": 32, "n_missing": 16, "min_models": 3, "n_low_coverage": 0, "n_components": 2,
                     "warnings": [warning]})
    html = client.get(url).content.decode()
    assert f'<p class="warning" id="report-diagnostics-warning">{warning}</p>' in html


def test_create_study_includes_low_coverage_questions_only_when_asked(one_thin_question):
    run, _, _ = one_thin_question
    args = ("--datasets", "Bench", "--run", str(run.pk), "--no-invitation")
    with pytest.raises(CommandError) as caught:
        call_command("create_study", "--name", "default", "--pairs", "4", *args, stdout=io.StringIO())
    assert str(caught.value) == ERR_TOO_FEW_PAIRS.format(n_pairs=4, n_possible=3, n_eligible=3)
    call_command("create_study", "--name", "all", "--pairs", "6", "--include-low-coverage", *args,
                 stdout=io.StringIO())
    study = Study.objects.get(name="all")
    assert study.include_low_coverage and study.pairs.count() == 6
