"""Model pools and human difficulty labels in the report, on the hand-built
study of ``test_alignment_service`` (consensus b a b a on pairs (q0,q1),
(q2,q3), (q4,q5), (q6,q7))."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from annotate.analyses.services import analysis_run_create, analysis_run_execute
from annotate.models import LanguageModel, Question
from annotate.reports.services import study_alignment_report
from scoring import eip
from tests.annotate.factories import MODEL_NAMES, write_responses
from tests.annotate.reports.test_report import EIP, SIMPLE_RANK, build_study

pytestmark = pytest.mark.django_db
TOL = 1e-12

# rows q0..q7; columns zebrafinch (70B, proprietary), marmoset (8B, open), quokka (3B, open)
R = np.array([
    [1, 1, 1],
    [1, 1, 0],
    [1, 0, 0],
    [0, 0, 0],
    [1, 1, 0],
    [1, 0, 1],
    [1, 0, 0],
    [0, 1, 0],
], dtype=float)
LEVELS = (1, 2, 3, 1, 2, 2, 3, 1)


@pytest.fixture
def study():
    study, _ = build_study()
    run = study.scoring_run
    models = [LanguageModel.objects.get(name=n) for n in MODEL_NAMES]
    for model, size, access in zip(models, (70, 8, 3), ("proprietary", "open_weight", "open_weight")):
        model.parameters_b, model.access = size, access
        model.save()
    questions = list(Question.objects.filter(dataset__in=study.datasets.all()).order_by("pk"))  # q0..q7
    write_responses(run.response_set, [(q, m, R[i, j]) for i, q in enumerate(questions) for j, m in enumerate(models)])
    for q, level in zip(questions, LEVELS):
        q.metadata = {"level": level}
        q.save()
    # the report reads the model pools from a stored pools analysis (issue 11)
    analysis_run_execute(run=analysis_run_create(kind="pools", response_set=run.response_set))
    return study


@pytest.fixture
def report(study):
    return study_alignment_report(study=study, n_boot=50)


def pool(report, name):
    return next(p for p in report["pools"]["pools"] if p["name"] == name)


def test_it_counts_dead_nodes_per_pool(report):
    # whole: q0 solved by all, q3 failed by all -> 2/8
    whole = pool(report, "whole")
    assert (whole["n_models"], whole["n_all_solved"], whole["n_all_failed"], whole["share_dead"]) == (3, 1, 1, 0.25)
    # small = marmoset + quokka: q0 solved; q2, q3, q6 failed -> 4/8
    small = pool(report, "small")
    assert small["models"] == ["marmoset-8b-hidden", "quokka-3b-private"]
    assert (small["n_all_solved"], small["n_all_failed"], small["share_dead"]) == (1, 3, 0.5)
    assert pool(report, "open-weight")["share_dead"] == 0.5
    # one model: every question is solved or failed by all of it; EIP needs two models
    large = pool(report, "large")
    assert (large["n_all_solved"], large["n_all_failed"], large["share_dead"]) == (6, 2, 1.0)
    assert large["undefined_reason"] == "pool has 1 model(s); EIP needs at least 2"
    assert large["consensus"] is None
    assert large["correlations"]["spearman"]["value"] is None
    medium = pool(report, "medium")
    assert (medium["n_models"], medium["share_dead"]) == (0, None)
    assert [p["name"] for p in report["pools"]["pools"]] == ["whole", "small", "medium", "large", "open-weight",
                                                             "proprietary"]
    assert report["pools"]["unknown_size_models"] == []


def test_each_pool_is_scored_against_the_consensus(report):
    for name, columns in (("whole", [0, 1, 2]), ("small", [1, 2])):
        d = eip(R[:, columns]).difficulty_scaled  # library oracle, alpha 0.85 as the run's default
        verdicts = ["a" if d[i] > d[j] else "b" if d[j] > d[i] else "tie" for i, j in ((0, 1), (2, 3), (4, 5), (6, 7))]
        expected = sum(v == c for v, c in zip(verdicts, "baba")) / 4
        assert pool(report, name)["consensus"]["agreement"] == pytest.approx(expected, abs=TOL), name
        assert pool(report, name)["consensus"]["n_ties"] == verdicts.count("tie")


def test_it_scores_methods_against_the_label_on_the_study_pairs(report):
    labels = report["labels"]
    assert (labels["key"], labels["autodetected"], labels["n_questions_labelled"]) == ("level", True, 8)
    scope = labels["scopes"]["study_pairs"]
    # levels P1 1<2 -> b, P2 3>1 -> a, P3 2=2 -> no label verdict, P4 3>1 -> a: 3 pairs
    assert scope["n_pairs"] == 3
    # EIP b a . a: 3/3; Simple Rank tie a . b: only P2 -> 1/3
    assert scope["methods"]["eip"]["agreement"] == 1.0
    assert scope["methods"]["simple_rank"]["agreement"] == pytest.approx(1 / 3, abs=TOL)
    # consensus b a . a agrees with the label on all three
    assert (scope["consensus"]["agreement"], scope["consensus"]["n"]) == (1.0, 3)


def test_it_scores_methods_against_the_label_on_all_same_subject_pairs(report):
    scope = report["labels"]["scopes"]["same_subject_pairs_of_study_questions"]
    # 28 pairs of 8 questions, minus 7 with equal levels (3 + 3 + 1) = 21.
    # EIP right on L1-L2 4/9, L1-L3 5/6, L2-L3 5/6 -> 14/21
    assert scope["n_pairs"] == 21
    assert scope["methods"]["eip"]["agreement"] == pytest.approx(14 / 21, abs=TOL)
    assert "consensus" not in scope


def test_it_correlates_each_method_with_the_label(report):
    rho = spearmanr(EIP, LEVELS).statistic
    assert report["labels"]["spearman"]["eip"]["value"] == pytest.approx(rho, abs=1e-12)
    assert report["labels"]["spearman"]["eip"]["n"] == 8
    rho_sr = spearmanr(SIMPLE_RANK, LEVELS).statistic
    assert report["labels"]["spearman"]["simple_rank"]["value"] == pytest.approx(rho_sr, abs=1e-12)


def test_mmlu_level_names_map_to_an_order_and_other_values_are_no_label(study):
    names = ("elementary", "high_school", "college", "professional", "other_mmlu", "", "college", "elementary")
    for q, name in zip(Question.objects.filter(dataset__in=study.datasets.all()).order_by("pk"), names):
        q.metadata = {"mmlu_level": name}
        q.save()
    labels = study_alignment_report(study=study, n_boot=10)["labels"]
    assert (labels["key"], labels["n_questions_labelled"]) == ("mmlu_level", 6)
    assert labels["order"] == {"elementary": 1, "high_school": 2, "college": 3, "professional": 4}
    # P1 elementary < high_school -> b; P2 college vs professional -> b; P3 no labels; P4 college > elementary -> a
    assert labels["scopes"]["study_pairs"]["n_pairs"] == 3


def test_a_missing_label_key_is_reported(study):
    labels = study_alignment_report(study=study, n_boot=10, label_key="grade")["labels"]
    assert labels["key"] == "grade" and labels["scopes"] == {}
    assert labels["undefined_reason"] == "no question of the study has a usable 'grade' label in its metadata"
