"""The alignment report on a hand-built study, every figure worked by hand.

The study: one subject, eight questions q0..q7, four pairs and four
evaluators (ada, bo, cy, dee). Judgments are stored as the judging page
stores them (what was on the left, which button was pressed), so the report
must translate them back to the canonical (question_a, question_b) order.

Canonical votes ("a" = question_a harder, "-" = skip, " " = not judged)::

            P1(q0,q1)  P2(q2,q3)  P3(q4,q5)  P4(q6,q7)
    ada        b          a          b          a
    bo         b          a          a          -
    cy         a          -          b          b
    dee        b

Method difficulties (higher = harder)::

    EIP (eip_scaled):  q0 10, q1 20 | q2 50, q3 40 | q4 30, q5 60 | q6 70, q7 65  -> b a b a
    Simple Rank:       q0 .5, q1 .5 | q2 .6, q3 .4 | q4 .7, q5 .3 | q6 .2, q7 .9  -> tie a a b
    MIRT: NULL everywhere (not computed in this run)
"""
from __future__ import annotations

import json

import pytest
from django.utils import timezone

from annotate.models import Judgment, Pair, QuestionResult, Study
from annotate.reports.services import study_alignment_report, verdict_from_display
from scoring import FIRST, SECOND, SKIP
from tests.annotate.factories import make_catalog, make_evaluator

pytestmark = pytest.mark.django_db

EIP = (10, 20, 50, 40, 30, 60, 70, 65)
SIMPLE_RANK = (0.5, 0.5, 0.6, 0.4, 0.7, 0.3, 0.2, 0.9)
PAIRS = ((0, 1), (2, 3), (4, 5), (6, 7))
# evaluator, pair number, side of the pair shown on the left, button pressed   -> canonical verdict
JUDGMENTS = (
    ("ada", 1, "b", "left"),    # b
    ("bo", 1, "a", "right"),    # b
    ("cy", 1, "b", "right"),    # a
    ("dee", 1, "a", "right"),   # b
    ("ada", 2, "a", "left"),    # a
    ("bo", 2, "b", "right"),    # a
    ("cy", 2, "a", "skip"),     # skip
    ("ada", 3, "a", "right"),   # b
    ("bo", 3, "b", "right"),    # a
    ("cy", 3, "b", "left"),     # b
    ("ada", 4, "b", "right"),   # a
    ("bo", 4, "b", "skip"),     # skip
    ("cy", 4, "a", "right"),    # b
)
TOL = 1e-12


def build_study(judgments=JUDGMENTS, evaluators=("ada", "bo", "cy", "dee")):
    catalog = make_catalog(subjects=("Mathematics",), per_subject=8)
    q = catalog.questions
    for k, question in enumerate(q):
        QuestionResult.objects.filter(run=catalog.run, question=question).update(scores={
            "eip_scaled": EIP[k], "simple_rank": SIMPLE_RANK[k], "accuracy_difficulty": SIMPLE_RANK[k],
            "irt_1pl": EIP[k], "irt_2pl": EIP[k],
        })
    study = Study.objects.create(name="Hand", scoring_run=catalog.run, seed=0, n_pairs=len(PAIRS))
    study.datasets.set([catalog.dataset])
    study.subjects.set(catalog.subjects)
    pairs = [Pair.objects.create(study=study, position=k, question_a=q[i], question_b=q[j])
             for k, (i, j) in enumerate(PAIRS)]
    people = {name: make_evaluator(study, name) for name in evaluators}
    now = timezone.now()
    for name, number, left_side, pressed in judgments:
        pair = pairs[number - 1]
        left = pair.question_a if left_side == "a" else pair.question_b
        right = pair.question_b if left_side == "a" else pair.question_a
        harder = {"left": left, "right": right, "skip": None}[pressed]
        Judgment.objects.create(participation=people[name], pair=pair, choice=pressed, left_question=left,
                                harder_question=harder, shown_at=now, submitted_at=now, seconds=3.0)
    return study, pairs


@pytest.fixture
def report():
    study, _ = build_study()
    return study_alignment_report(study=study, n_boot=200)


def evaluator(report, name):
    return next(e for e in report["evaluators"] if e["pseudonym"] == name)


def test_it_translates_the_displayed_order_back_to_the_pair():
    # a on the left: left -> a, right -> b; b on the left: left -> b, right -> a
    assert verdict_from_display(choice="left", left_question_id=4, question_a_id=4, question_b_id=9) == FIRST
    assert verdict_from_display(choice="right", left_question_id=4, question_a_id=4, question_b_id=9) == SECOND
    assert verdict_from_display(choice="left", left_question_id=9, question_a_id=4, question_b_id=9) == SECOND
    assert verdict_from_display(choice="right", left_question_id=9, question_a_id=4, question_b_id=9) == FIRST
    assert verdict_from_display(choice="skip", left_question_id=9, question_a_id=4, question_b_id=9) == SKIP
    with pytest.raises(ValueError, match="left_question_id 5 is neither question of the pair"):
        verdict_from_display(choice="left", left_question_id=5, question_a_id=4, question_b_id=9)
    with pytest.raises(ValueError, match="choice must be one of"):
        verdict_from_display(choice="up", left_question_id=4, question_a_id=4, question_b_id=9)


def test_it_builds_the_consensus_from_stored_judgments_with_skips_and_a_tie(report):
    cons = [p["consensus"] for p in report["pairs"]]
    # P1: b b a b -> 3-1 majority b
    assert (cons[0]["verdict"], cons[0]["method"], cons[0]["votes_a"], cons[0]["votes_b"]) == ("b", "majority", 1, 3)
    # P2: a a, cy skipped -> 2-0, one skip (a skip is not a vote)
    assert (cons[1]["verdict"], cons[1]["votes_a"], cons[1]["votes_b"], cons[1]["n_skips"]) == ("a", 2, 0, 1)
    # P3: b a b -> 2-1 majority b
    assert (cons[2]["verdict"], cons[2]["method"]) == ("b", "majority")
    # P4: ada a, cy b, bo skipped -> 1-1 tie. Weights from the other pairs where the
    # others have a strict majority: ada agrees on P1 (b vs others b,a,b) and P2 (a vs a): 2/2 = 1;
    # P3 is uninformative for ada (others a,b). cy disagrees on P1 (a vs b,b,b): 0/1 = 0. -> a wins.
    assert (cons[3]["verdict"], cons[3]["method"]) == ("a", "tie_resolved")
    assert (cons[3]["votes_a"], cons[3]["votes_b"], cons[3]["n_skips"]) == (1, 1, 1)
    assert (cons[3]["weight_a"], cons[3]["weight_b"]) == (1.0, 0.0)
    assert cons[3]["tie_weights"] == [{"evaluator": "ada", "vote": "a", "weight": 1.0},
                                      {"evaluator": "cy", "vote": "b", "weight": 0.0}]
    assert report["consensus"] == {"majority": 3, "tie_resolved": 1, "no_consensus": 0, "n_pairs": 4, "n_decided": 4}


def test_it_gives_each_evaluator_agreement_and_kappa_with_each_method(report):
    ada, bo, cy = evaluator(report, "ada"), evaluator(report, "bo"), evaluator(report, "cy")
    # kappa is orientation-free: each pair counts in both orders, so p_e = 1/2 and kappa = 2 p_o - 1.
    # ada b a b a vs EIP b a b a: 4/4; kappa = 2 * 1 - 1 = 1
    e = ada["methods"]["eip"]
    assert (e["agreement"], e["n_pairs"], e["kappa"]["value"], e["kappa"]["p_e"]) == (1.0, 4, 1.0, 0.5)
    # bo b a a vs EIP b a b: 2/3; kappa = 2 * 2/3 - 1 = 1/3 (one orientation would give 0.4)
    e = bo["methods"]["eip"]
    assert e["agreement"] == pytest.approx(2 / 3, abs=TOL) and e["n_pairs"] == 3
    assert e["kappa"]["p_o"] == pytest.approx(2 / 3, abs=TOL)
    assert e["kappa"]["p_e"] == 0.5
    assert e["kappa"]["value"] == pytest.approx(1 / 3, abs=TOL)
    # cy a b b vs EIP b b a: 1/3; kappa = 2 * 1/3 - 1 = -1/3
    e = cy["methods"]["eip"]
    assert e["agreement"] == pytest.approx(1 / 3, abs=TOL)
    assert e["kappa"]["value"] == pytest.approx(-1 / 3, abs=TOL)
    assert (ada["n_votes"], ada["n_skips"], bo["n_votes"], bo["n_skips"]) == (4, 0, 3, 1)
    assert [e["short"] for e in report["evaluators"]] == ["V1", "V2", "V3", "V4"]


def test_an_undefined_kappa_is_shown_with_its_reason_and_left_out_of_the_mean(report):
    # dee voted only b on P1 and EIP says b: orientation-free, one agreeing pair is kappa 2 * 1 - 1 = 1
    dee = evaluator(report, "dee")["methods"]["eip"]
    assert dee["agreement"] == 1.0
    assert (dee["kappa"]["value"], dee["kappa"]["p_e"], dee["kappa"]["n"]) == (1.0, 0.5, 1)
    # Simple Rank ties on P1, dee's only vote: no pair both decided, kappa undefined
    dee = evaluator(report, "dee")["methods"]["simple_rank"]
    assert dee["kappa"]["value"] is None and dee["kappa"]["n"] == 0
    assert dee["kappa"]["undefined_reason"] == "no pair has a verdict FIRST or SECOND from both"
    summary = report["method_summary"]["simple_rank"]
    # SR tie a a b, over the pairs both decided: ada (b a b a) 1/3 -> -1/3; bo (b a a -) 2/2 -> 1;
    # cy (a - b b) 1/2 -> 0; mean (-1/3 + 1 + 0) / 3 = 2/9
    assert summary["kappa"]["mean"] == pytest.approx(2 / 9, abs=TOL)
    assert summary["kappa"]["note"] == "mean over 3 of 4 evaluators; 1 undefined"
    summary = report["method_summary"]["eip"]
    # kappa mean over ada 1, bo 1/3, cy -1/3, dee 1 = 1/2; agreement mean (1 + 2/3 + 1/3 + 1)/4 = .75
    assert summary["kappa"]["mean"] == pytest.approx(0.5, abs=TOL)
    assert summary["kappa"]["note"] == "mean over all 4 evaluators"
    assert summary["agreement"]["mean"] == pytest.approx(0.75, abs=TOL)
    assert summary["agreement"]["note"] == "mean over all 4 evaluators"


def test_a_method_tie_is_counted_as_a_miss_and_reported(report):
    sr = report["consensus_agreement"]["simple_rank"]
    # Simple Rank tie a a b vs consensus b a b a: only P2 agrees -> 1/4; one tie; 1/3 of decided pairs
    assert (sr["n_pairs"], sr["n_agree"], sr["n_ties"]) == (4, 1, 1)
    assert sr["agreement"] == 0.25 and sr["agreement_excluding_ties"] == pytest.approx(1 / 3, abs=TOL)
    # kappa leaves the tie out: SR a a b vs consensus a b a on P2-P4, 1/3 -> 2 * 1/3 - 1 = -1/3
    assert sr["kappa"]["n"] == 3 and sr["kappa"]["p_o"] == pytest.approx(1 / 3, abs=TOL)
    assert sr["kappa"]["value"] == pytest.approx(-1 / 3, abs=TOL)
    assert [p["methods"]["simple_rank"] for p in report["pairs"]] == ["tie", "a", "a", "b"]
    assert report["pairs"][0]["methods"]["eip"] == "b"
    # dee: SR tie on P1 is a miss: 0/1
    assert evaluator(report, "dee")["methods"]["simple_rank"]["agreement"] == 0.0


def test_it_scores_each_method_against_the_consensus_with_mcnemar(report):
    eip = report["consensus_agreement"]["eip"]
    assert (eip["agreement"], eip["kappa"]["value"]) == (1.0, 1.0)
    assert eip["ci"]["agreement"] == [1.0, 1.0] and eip["ci"]["n_boot"] == 200
    low, high = report["consensus_agreement"]["simple_rank"]["ci"]["agreement"]
    assert 0.0 <= low <= 0.25 <= high <= 1.0
    test = next(t for t in report["mcnemar"] if t["method_b"] == "simple_rank")
    # EIP right on all 4, Simple Rank only on P2: b = 3, c = 0, p = 2 * 0.5**3 = 0.25
    assert (test["b"], test["c"], test["n"], test["p_value"]) == (3, 0, 4, 0.25)


def test_a_method_the_run_did_not_compute_is_reported_not_scored(report):
    mirt = next(m for m in report["methods"] if m["key"] == "irt_mirt")
    assert mirt["available"] is False
    assert mirt["undefined_reason"].endswith("has no irt_mirt value for any question of this study")
    assert "irt_mirt" not in report["consensus_agreement"]
    assert all(t["method_b"] != "irt_mirt" for t in report["mcnemar"])


def test_it_compares_each_evaluator_with_the_others(report):
    # ada vs (bo, cy, dee): P1 b (b b... bo b, cy a, dee b), P2 a, P3 bo a / cy b tie ->
    # weights bo 1/2 (no informative pair), cy 0/1 (P1) -> a; P4 cy b. ada b a b a vs b a a b: 2/4,
    # marginals a2 b2 each -> p_e .5, kappa 0
    ada = evaluator(report, "ada")["vs_others"]
    assert (ada["agreement"], ada["n"], ada["kappa"]["value"]) == (0.5, 4, 0.0)
    # cy vs (ada, bo, dee): P1 b, P3 ada b / bo a tie with weights 1 and 1 -> no consensus, P4 a.
    # cy a . b vs b . - a: scored P1, P4: 0/2, kappa (0 - .5)/.5 = -1
    cy = evaluator(report, "cy")["vs_others"]
    assert (cy["agreement"], cy["n"], cy["kappa"]["value"]) == (0.0, 2, -1.0)


def test_it_reports_inter_rater_reliability(report):
    irr = report["irr"]
    # values per pair (a, b counts): P1 a1 b3 (m=4), P2 a2 (m=2), P3 a1 b2 (m=3), P4 a1 b1 (m=2)
    # o_aa = 2 (P2), o_bb = 3*2/3 + 2*1/2 = 3, o_ab = 1*3/3 + 1*2/2 + 1*1/1 = 3; n = 11, n_a = 5, n_b = 6
    # Orientation-free: each pair also counts reversed (P1' a3 b1, P2' b2, P3' a2 b1, P4' a1 b1).
    # Reversed units add o_aa = 2 (P1') + 1 (P3'), o_bb = 2 (P2'), o_ab = 1 + 1 + 1 (P1', P3', P4'):
    # o_aa = 5, o_bb = 5, o_ab = 6; n = 22, n_a = n_b = 11
    # D_o = 12/22 = 6/11, D_e = 2*11*11 / (22*21) = 11/21 -> alpha = 1 - (6/11)(21/11) = -5/121
    assert irr["krippendorff_alpha"]["value"] == pytest.approx(-5 / 121, abs=TOL)
    assert irr["krippendorff_alpha"]["n_pairable"] == 11  # values counted once
    # only P1 was voted on by all four (a1 b3), and reversed (a3 b1): each has 3 of 6 rater pairs
    # agreeing, P-bar = 1/2, p_e = (1/2)^2 + (1/2)^2 = 1/2 -> kappa 0
    fleiss = irr["fleiss_kappa"]
    assert fleiss["value"] == pytest.approx(0.0, abs=TOL)
    assert (fleiss["p_o"], fleiss["p_e"], fleiss["n_items"]) == (0.5, 0.5, 1)
    assert fleiss["undefined_reason"] is None


def test_fleiss_is_undefined_with_a_reason_when_no_pair_is_complete():
    study, _ = build_study(judgments=(("ada", 1, "a", "left"), ("bo", 2, "a", "left")), evaluators=("ada", "bo"))
    fleiss = study_alignment_report(study=study, n_boot=10)["irr"]["fleiss_kappa"]
    assert fleiss["value"] is None
    assert fleiss["undefined_reason"] == "no pair was voted on (not skipped) by all 2 evaluators"


def test_it_compares_eip_with_each_baseline_per_evaluator(report):
    row = next(r for r in report["reference_vs_baselines"] if r["method_b"] == "simple_rank")
    # EIP vs SR per evaluator: ada 1 vs 1/4, bo 2/3 vs 2/3, cy 1/3 vs 1/3, dee 1 vs 0
    assert (row["n_a_higher"], row["n_equal"], row["n_b_higher"]) == (2, 2, 0)
    assert row["mean_margin"]["mean"] == pytest.approx((0.75 + 0 + 0 + 1) / 4, abs=TOL)


def test_the_report_is_plain_json_and_reproducible():
    study, _ = build_study()
    first = study_alignment_report(study=study, n_boot=300, rng=7)
    second = study_alignment_report(study=study, n_boot=300, rng=7)
    text = json.dumps(first, allow_nan=False)
    assert json.loads(text)["schema_version"] == 5  # 5: pairs_page, the label analysis; 4: questions by dataset and id
    for key in ("generated_at", "timing"):
        first.pop(key), second.pop(key)
    assert first == second


def test_a_higher_min_votes_leaves_thin_pairs_without_consensus():
    study, _ = build_study()
    report = study_alignment_report(study=study, min_votes=3, n_boot=10)
    # P1 has 4 votes, P3 3; P2 and P4 only 2
    assert [p["consensus"]["method"] for p in report["pairs"]] == ["majority", "no_consensus", "majority",
                                                                   "no_consensus"]
    assert report["pairs"][1]["consensus"]["reason"] == "fewer than min_votes votes"
    assert report["consensus_agreement"]["eip"]["n_human_excluded"] == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_votes": 0}, "min_votes must be an integer >= 1; got 0"),
        ({"tie_rule": "coin"}, "tie_rule must be one of ('evaluator_weight', 'none'); got 'coin'"),
        ({"n_boot": 1.5}, "n_boot must be an integer >= 1; got 1.5"),
        ({"size_thresholds": (70, 10)}, "size_thresholds must be strictly increasing positive numbers"),
        ({"label_key": " "}, "label_key must be a non-empty string or None; got ' '"),
        ({"rng": "seed"}, "rng must be a numpy Generator, a non-negative int seed or None; got 'seed'"),
    ],
)
def test_it_rejects_bad_parameters_naming_them(kwargs, message):
    study, _ = build_study(judgments=())
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        study_alignment_report(study=study, **kwargs)


def test_it_refuses_an_unfinished_run():
    study, _ = build_study(judgments=())
    run = study.scoring_run
    run.status = "running"
    run.save()
    with pytest.raises(ValueError, match=f"run {run.pk} is 'running'; a report needs a finished"):
        study_alignment_report(study=study)
