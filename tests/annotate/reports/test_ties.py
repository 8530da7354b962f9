"""The report's verdicts use each method's registry tie tolerance (issue 12, point 1).

The hand-built study of ``test_report``; 1PL stores EIP's values (q0 10, q1 20,
..., spread 70 - 10 = 60 over the study's questions). Moving q1's 1PL value to
10 + 1e-13 leaves a gap far below 1e-9 * 60: the pair P1 (q0, q1) is a 1PL tie,
counted as a tie and a miss, while EIP still calls q1 harder.
"""
from __future__ import annotations

import pytest

from annotate.models import Question, QuestionResult
from annotate.reports.selectors.alignment import report_methods
from annotate.reports.services import alignment_report_compute, study_alignment_report
from annotate.reports.services.tables import consensus_table
from annotate.runs.selectors.results import question_score_columns, run_question_codebook
from annotate.studies.services.scope import _column_tolerances
from scoring.methods import difficulty_methods
from tests.annotate.reports.test_report import SIMPLE_RANK, build_study

pytestmark = pytest.mark.django_db


def test_every_report_method_carries_its_registry_tie_tolerance():
    assert {m.key: m.tie_tolerance for m in report_methods()} == {
        m.key: m.tie_tolerance for m in difficulty_methods()
    }
    tolerance = {m.key: m.tie_tolerance for m in report_methods()}
    assert (tolerance["eip"], tolerance["irt_1pl"], tolerance["irt_2pl"]) == (1e-9, 1e-9, 1e-9)
    assert (tolerance["simple_rank"], tolerance["accuracy"]) == (1e-12, 1e-12)


def test_a_gap_within_the_tolerance_is_a_tie_in_the_report():
    study, pairs = build_study()
    row = QuestionResult.objects.get(run=study.scoring_run, question=pairs[0].question_b)
    row.scores = {**row.scores, "irt_1pl": 10 + 1e-13}
    row.save()
    report = study_alignment_report(study=study, n_boot=50)
    assert [p["methods"]["irt_1pl"] for p in report["pairs"]] == ["tie", "a", "b", "a"]
    assert report["pairs"][0]["methods"]["eip"] == "b"
    one_pl, eip = report["consensus_agreement"]["irt_1pl"], report["consensus_agreement"]["eip"]
    # consensus b a b a: EIP agrees 4/4; 1PL ties P1 (a miss) and agrees on the other 3
    assert (eip["n_agree"], eip["n_ties"]) == (4, 0)
    assert (one_pl["n_pairs"], one_pl["n_agree"], one_pl["n_ties"]) == (4, 3, 1)
    assert one_pl["agreement"] == 0.75 and one_pl["agreement_excluding_ties"] == 1.0


def test_the_pair_sampler_gets_each_columns_registry_tolerance():
    assert _column_tolerances() == {
        "eip": 1e-9, "simple_rank": 1e-12, "accuracy_difficulty": 1e-12, "irt_1pl": 1e-9, "irt_2pl": 1e-9,
        "irt_1pl_mml": 1e-6, "irt_2pl_mml": 1e-6, "irt_mirt": 1e-9,
    }


def _set_mirt(study, pairs, seeds_of_question):
    """Store MIRT seed values per question (and their mean as irt_mirt)."""
    questions = [q for p in pairs for q in (p.question_a, p.question_b)]
    for question, seeds in zip(questions, seeds_of_question):
        row = QuestionResult.objects.get(run=study.scoring_run, question=question)
        row.scores = {**row.scores, "irt_mirt": sum(seeds) / len(seeds),
                      **{f"irt_mirt_s{k}": v for k, v in enumerate(seeds)}}
        row.save()


def test_a_mirt_verdict_the_seeds_disagree_on_is_an_unstable_tie():
    study, pairs = build_study()
    # P1..P4 = (q0,q1), (q2,q3), (q4,q5), (q6,q7); consensus b a b a.
    # Every seed orders P1 b, P2 a, P3 b; on P4 four seeds say a, seed 4 says b: unstable.
    _set_mirt(study, pairs, [
        (1, 1, 1, 1, 1), (2, 2, 2, 2, 2),
        (5, 5, 5, 5, 5), (4, 4, 4, 4, 4),
        (3, 3, 3, 3, 3), (6, 6, 6, 6, 6),
        (7, 7, 7, 7, 6), (6.5, 6.5, 6.5, 6.5, 6.5),
    ])
    report = study_alignment_report(study=study, n_boot=50)
    # the mean orders P4 a (6.8 > 6.5), but the seeds disagree
    assert [p["methods"]["irt_mirt"] for p in report["pairs"]] == ["b", "a", "b", "tie"]
    mirt = next(m for m in report["methods"] if m["key"] == "irt_mirt")
    assert (mirt["n_replicates"], mirt["unstable_verdicts"], mirt["tie_tolerance"]) == (5, 1, 1e-9)
    assert "unstable_verdicts" not in next(m for m in report["methods"] if m["key"] == "eip")
    cons = report["consensus_agreement"]["irt_mirt"]
    assert (cons["n_agree"], cons["n_ties"]) == (3, 1)
    notes = consensus_table(alignment_report_compute(study=study, n_boot=50)).notes
    assert ("Multidimensional IRT: the mean of 5 fits with different seeds; 1 of 4 pair verdicts is a tie because "
            "the seeds disagree on the order (unstable).") in notes
    assert any("EIP 1e-09, Simple rank 1e-12" in n for n in notes)


def test_a_run_with_fewer_seeds_judges_on_the_seeds_it_stored():
    study, pairs = build_study()
    # two seeds stored (the others blank): they agree everywhere, so nothing is unstable
    _set_mirt(study, pairs, [(1, 1.5), (2, 2), (5, 5), (4, 4), (3, 3), (6, 6), (7, 7), (6.5, 6)])
    report = study_alignment_report(study=study, n_boot=50)
    assert [p["methods"]["irt_mirt"] for p in report["pairs"]] == ["b", "a", "b", "a"]
    mirt = next(m for m in report["methods"] if m["key"] == "irt_mirt")
    assert (mirt["n_replicates"], mirt["unstable_verdicts"]) == (2, 0)


def test_the_results_pages_do_not_show_the_seed_columns():
    shown = [c.column for c in question_score_columns()]
    assert "irt_mirt" in shown and not any(c.startswith("irt_mirt_s") for c in shown)
    # the downloads keep them, described in the codebook
    described = {c.name: c for c in run_question_codebook()}
    assert "Multidimensional IRT seed 0" in described["irt_mirt_s0"].description


def test_values_within_the_tolerance_rank_as_ties_in_the_label_correlation():
    study, pairs = build_study()
    questions = [q for p in pairs for q in (p.question_a, p.question_b)]  # q0..q7
    for k, (question, level) in enumerate(zip(questions, (1, 2, 3, 1, 2, 2, 3, 1))):
        Question.objects.filter(pk=question.pk).update(metadata={"level": level})
        row = QuestionResult.objects.get(run=study.scoring_run, question=question)
        # 1PL = simple rank, except that q1's 0.5 is off by noise (1e-15; spread 0.7)
        row.scores = {**row.scores, "irt_1pl": SIMPLE_RANK[k] + (1e-15 if k == 1 else 0.0)}
        row.save()
    report = study_alignment_report(study=study, n_boot=50)
    rho = report["labels"]["spearman"]
    assert rho["irt_1pl"]["value"] == rho["simple_rank"]["value"] is not None
    assert report["pairs"][0]["methods"]["irt_1pl"] == report["pairs"][0]["methods"]["simple_rank"] == "tie"
    same_subject = report["labels"]["scopes"]["same_subject_pairs_of_study_questions"]["methods"]
    assert same_subject["irt_1pl"] == same_subject["simple_rank"]
