"""scoring.human_labels: a method against an external human label (issue 15, points 4 and 5)."""
from __future__ import annotations

import numpy as np
import pytest

from scoring.human_labels import (
    ERR_MARGIN,
    ERR_METHOD,
    ERR_R,
    compare_with_label,
    human_difficulty,
    judgments_from_responses,
    pair_agreement_counts_slow,
)
from scoring.pairs import FIRST, SECOND, TIE, UNDEFINED

KEYS = ("n_pairs", "n_label_ties", "n_agree", "n_disagree", "n_method_ties", "n_undefined")


def _counts(result, k=0):
    m = result.margins[k]
    return {key: getattr(m, key) for key in KEYS}


def test_a_hand_worked_subject_gives_the_counted_pairs():
    # subject s: labels 1, 2, 2, 3; method 0.1, 0.5, 0.5, 0.2 (q1 and q2 tie in the method)
    # pairs (label order):  (q0,q1) agree  (q0,q2) agree  (q0,q3) agree  (q1,q2) label tie
    #                       (q1,q3) disagree (0.5 > 0.2)  (q2,q3) disagree
    # subject t: one question, no pair.  margin 0.5 drops nothing but the label tie: the same.
    # margin 1.5: only (q0,q3): agree.
    r = compare_with_label([0.1, 0.5, 0.5, 0.2, 9.0], [1, 2, 2, 3, 1], ["s", "s", "s", "s", "t"],
                           margins=(0.0, 1.5), n_boot=0)
    assert _counts(r, 0) == {"n_pairs": 5, "n_label_ties": 1, "n_agree": 3, "n_disagree": 2, "n_method_ties": 0,
                             "n_undefined": 0}
    assert _counts(r, 1) == {"n_pairs": 1, "n_label_ties": 5, "n_agree": 1, "n_disagree": 0, "n_method_ties": 0,
                             "n_undefined": 0}
    m = r.margins[0]
    assert m.agreement == pytest.approx(3 / 5, abs=1e-12)
    assert m.kappa == pytest.approx(2 * 3 / 5 - 1, abs=1e-12)
    assert r.n_questions == 5 and r.n_subjects == 2


def test_method_ties_and_undefined_values_are_counted_apart():
    # labels 1 < 2 < 3 in one subject; method 0.4, 0.4, NaN
    # (q0,q1): method tie; (q0,q2), (q1,q2): undefined.  agreement 0/3; excluding ties undefined.
    r = compare_with_label([0.4, 0.4, np.nan], [1, 2, 3], ["s"] * 3, n_boot=0)
    assert _counts(r) == {"n_pairs": 3, "n_label_ties": 0, "n_agree": 0, "n_disagree": 0, "n_method_ties": 1,
                          "n_undefined": 2}
    assert r.margins[0].agreement == 0.0
    assert r.margins[0].agreement_excluding_ties is None and r.margins[0].kappa is None
    assert r.n_questions_undefined == 1


def test_values_within_the_tie_tolerance_tie():
    # 1.0 and 1.0 + 1e-13 differ by 1e-13 <= 1e-9 * spread (spread 1): a tie, not an agreement
    r = compare_with_label([1.0, 1.0 + 1e-13, 2.0], [1, 2, 3], ["s"] * 3, tie_tolerance=1e-9, n_boot=0)
    assert r.margins[0].n_method_ties == 1 and r.margins[0].n_agree == 2


@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_matches_the_slow_enumeration_on_random_data(seed):
    g = np.random.default_rng(seed)
    n = int(g.integers(2, 80))
    d = g.integers(0, 7, n).astype(float)
    d[g.random(n) < 0.1] = np.nan
    lab = g.integers(0, 9, n) / 8  # exact binary fractions: no rounding at the margins
    lab[g.random(n) < 0.15] = np.nan
    subjects = g.choice(["a", "b", "c"], n)
    for direction in (True, False):
        r = compare_with_label(d, lab, subjects, margins=(0.0, 0.25, 0.5), label_higher_is_harder=direction,
                               n_boot=0)
        for k, margin in enumerate((0.0, 0.25, 0.5)):
            slow = pair_agreement_counts_slow(d, lab, subjects, margin=margin, label_higher_is_harder=direction)
            assert _counts(r, k) == slow


def test_reversing_the_direction_swaps_agreements_and_disagreements():
    g = np.random.default_rng(3)
    d, lab, s = g.random(300), g.integers(1, 5, 300).astype(float), g.integers(0, 4, 300)
    up = compare_with_label(d, lab, s, margins=(0.0, 1.5), n_boot=0)
    down = compare_with_label(d, lab, s, margins=(0.0, 1.5), label_higher_is_harder=False, n_boot=0)
    for a, b in zip(up.margins, down.margins):
        assert (a.n_agree, a.n_disagree, a.n_method_ties, a.n_pairs) == (b.n_disagree, b.n_agree, b.n_method_ties,
                                                                         b.n_pairs)
        assert a.agreement_excluding_ties == pytest.approx(1 - b.agreement_excluding_ties, abs=1e-12)
    assert up.spearman.value == pytest.approx(-down.spearman.value, abs=1e-12)


def test_the_bootstrap_intervals_hold_the_estimate_and_repeat_with_the_seed():
    g = np.random.default_rng(0)
    d = g.random(236)
    lab = d + g.normal(0, 0.3, 236)
    s = g.integers(0, 8, 236)
    a = compare_with_label(d, lab, s, margins=(0.0, 0.2), n_boot=100, rng=7)
    b = compare_with_label(d, lab, s, margins=(0.0, 0.2), n_boot=100, rng=7)
    assert a == b
    lo, hi = a.spearman_ci
    assert lo < a.spearman.value < hi
    for m in a.margins:
        assert m.agreement_ci[0] < m.agreement < m.agreement_ci[1]
        assert m.kappa_ci[0] == pytest.approx(2 * m.agreement_excluding_ties_ci[0] - 1, abs=1e-12)


def test_spearman_is_the_scipy_value_over_the_labelled_questions():
    from scipy.stats import spearmanr

    d = np.array([0.3, 0.1, 0.9, 0.5, 0.7])
    lab = np.array([2.0, 1.0, np.nan, 4.0, 3.0])
    r = compare_with_label(d, lab, ["s"] * 5, n_boot=0)
    assert r.spearman.value == pytest.approx(spearmanr([0.3, 0.1, 0.5, 0.7], [2, 1, 4, 3])[0], abs=1e-12)
    assert r.n_questions == 4


def test_a_negative_margin_is_refused():
    with pytest.raises(ValueError) as err:
        compare_with_label([1.0], [1.0], ["s"], margins=(-0.1,))
    assert str(err.value) == ERR_MARGIN.format(value=-0.1)


def test_human_difficulty_is_one_minus_the_solve_rate_with_person_intervals():
    # 3 questions x 4 persons: solve rates 1, 0.5, 0.25 -> difficulty 0, 0.5, 0.75
    R = np.array([[1, 1, 1, 1], [1, 0, 1, 0], [0, 0, 1, 0]], dtype=float)
    h = human_difficulty(R, n_boot=200, rng=1)
    np.testing.assert_allclose(h.difficulty, [0.0, 0.5, 0.75], atol=1e-12)
    assert h.low[0] == h.high[0] == 0.0  # everyone solved it in every resample
    assert 0.0 <= h.low[1] <= 0.5 <= h.high[1] <= 1.0
    assert h.n_persons == 4


def test_human_difficulty_by_1pl_orders_the_questions_as_the_solve_rate():
    R = np.array([[1, 1, 1, 0], [1, 0, 1, 0], [0, 0, 1, 0]], dtype=float)
    h = human_difficulty(R, method="irt_1pl", n_boot=0)
    assert h.difficulty[0] < h.difficulty[1] < h.difficulty[2]
    assert np.isnan(h.low).all()


def test_human_difficulty_refuses_credit_out_of_range_and_unknown_methods():
    with pytest.raises(ValueError) as err:
        human_difficulty([[1.0, 2.0]])
    assert str(err.value) == ERR_R.format(detail="got 2.0 at row 0, column 1")
    with pytest.raises(ValueError) as err:
        human_difficulty([[1.0]], method="eip")
    assert str(err.value) == ERR_METHOD.format(methods=["accuracy", "irt_1pl"], value="eip")


def test_judgments_from_responses_name_the_question_a_person_failed():
    # persons: p0 solved q0 only, p1 solved q1 only, p2 both, p3 did not answer q1
    R = np.array([[1, 0, 1, 1], [0, 1, 1, np.nan]])
    v = judgments_from_responses(R, np.array([[0, 1]]))
    assert v.tolist() == [[int(SECOND), int(FIRST), int(TIE), int(UNDEFINED)]]
    # the reversed pair gives the mirrored verdicts
    assert judgments_from_responses(R, np.array([[1, 0]])).tolist() == [[int(FIRST), int(SECOND), int(TIE),
                                                                         int(UNDEFINED)]]
