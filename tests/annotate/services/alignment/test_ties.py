"""The report's verdicts use each method's registry tie tolerance (issue 12, point 1).

The hand-built study of ``test_report``; 1PL stores EIP's values (q0 10, q1 20,
..., spread 70 - 10 = 60 over the study's questions). Moving q1's 1PL value to
10 + 1e-13 leaves a gap far below 1e-9 * 60: the pair P1 (q0, q1) is a 1PL tie,
counted as a tie and a miss, while EIP still calls q1 harder.
"""
from __future__ import annotations

import pytest

from annotate.models import QuestionResult
from annotate.selectors.alignment import report_methods
from annotate.services.alignment import study_alignment_report
from scoring.methods import difficulty_methods
from tests.annotate.services.alignment.test_report import build_study

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
    from annotate.services.studies import _column_tolerances

    assert _column_tolerances() == {
        "eip": 1e-9, "simple_rank": 1e-12, "accuracy_difficulty": 1e-12, "irt_1pl": 1e-9, "irt_2pl": 1e-9,
        "irt_mirt": 1e-9,
    }
