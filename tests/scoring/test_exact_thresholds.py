"""Every threshold of scoring/ decided as exact arithmetic decides it.

Each test puts values on the boundary (a gap equal to the margin, a median
equal to the speeder threshold, ...) and checks the product against the same
comparison made with :class:`fractions.Fraction` on the numbers as written,
in both label directions where a label has one.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from scoring.attention_checks import attention_check_count, select_attention_checks
from scoring.exact import gap_sign, intended_value, median_is_below, near_zero_or_one, suffix_start_exact
from scoring.human_labels import compare_with_label, pair_agreement_counts_slow
from scoring.pairs import FIRST, SECOND, TIE, harder_of_pairs, merge_ties


def _fraction_counts(difficulty, labels, subjects, margin, *, higher_is_harder):
    """Scored pairs, agreements and disagreements counted on Fractions (labels given as Fractions)."""
    n_pairs = agree = disagree = 0
    for a, b in itertools.combinations(range(len(labels)), 2):
        if subjects[a] != subjects[b] or abs(labels[a] - labels[b]) <= margin:
            continue
        n_pairs += 1
        hard, easy = (a, b) if (labels[a] > labels[b]) == higher_is_harder else (b, a)
        if difficulty[hard] > difficulty[easy]:
            agree += 1
        elif difficulty[hard] < difficulty[easy]:
            disagree += 1
    return n_pairs, agree, disagree


# --------------------------------------------------------------------------- intended values


def test_a_float_stands_for_its_decimal_or_its_small_fraction():
    assert intended_value(0.35) == Fraction(7, 20)
    assert intended_value(0.2) == Fraction(1, 5)
    assert intended_value(1 / 3) == Fraction(1, 3)
    assert intended_value(1 - 13 / 17) == Fraction(4, 17)  # 1 - k/n after two roundings
    assert intended_value(0.1 + 0.2) == Fraction(3, 10)
    assert intended_value(3.7) == Fraction(37, 10)  # above 2: the shortest decimal
    assert intended_value(-0.35) == -Fraction(7, 20)
    with pytest.raises(ValueError, match="finite"):
        intended_value(float("nan"))


def test_intended_values_keep_the_order_of_floats():
    rng = np.random.default_rng(0)
    x = np.sort(np.concatenate([rng.integers(0, 40, 300) / 40, rng.random(300), np.nextafter(0.35, [0, 1])]))
    values = [intended_value(float(v)) for v in x]
    assert all(a <= b for a, b in itertools.pairwise(values))


def test_gap_sign_decides_the_margin_example_in_every_direction():
    # 0.55 - 0.35 = 0.2 exactly: the float subtraction says 0.20000000000000007 > 0.2.
    assert 0.55 - 0.35 > 0.2
    assert gap_sign([0.55, -0.35], [0.35, -0.55], 0.2).tolist() == [0, 0]
    assert gap_sign(0.56, 0.35, 0.2).tolist() == 1 and gap_sign(0.54, 0.35, 0.2).tolist() == -1
    assert suffix_start_exact([0.35, 0.55], 0.2).tolist() == [2, 2]
    assert suffix_start_exact([-0.55, -0.35], 0.2).tolist() == [2, 2]


# --------------------------------------------------------------------------- margins


@pytest.mark.parametrize("higher_is_harder", [True, False])
def test_the_two_question_example_counts_no_pair_in_either_direction(higher_is_harder):
    r = compare_with_label([2.0, 1.0], [0.35, 0.55], ["s", "s"], margins=[0.2], n_boot=0,
                           label_higher_is_harder=higher_is_harder)
    slow = pair_agreement_counts_slow([2.0, 1.0], [0.35, 0.55], ["s", "s"], margin=0.2,
                                      label_higher_is_harder=higher_is_harder)
    # |7/20 - 11/20| = 1/5 is not more than 1/5: a label tie
    assert (r.margins[0].n_pairs, r.margins[0].n_label_ties) == (0, 1)
    assert slow["n_pairs"] == 0 and slow["n_label_ties"] == 1


@pytest.mark.parametrize("higher_is_harder", [True, False])
@pytest.mark.parametrize("as_difficulty", [False, True])
def test_solve_rates_k_over_n_count_as_fractions_do(higher_is_harder, as_difficulty):
    # 236 questions, solve rates k/17 (and 1 - k/17 as a difficulty), 4 subjects; margins that land on
    # many label gaps exactly (0.2 is no multiple of 1/17, but 3/17 and 6/17 are).
    rng = np.random.default_rng(7)
    n, persons = 236, 17
    k = rng.integers(0, persons + 1, n)
    exact = [Fraction(int(x), persons) for x in k]
    if as_difficulty:
        exact = [1 - x for x in exact]
    labels = np.array([(1 - x / persons) if as_difficulty else x / persons for x in k.tolist()])
    subjects = rng.integers(0, 4, n).tolist()
    difficulty = rng.integers(0, 30, n).astype(float)
    for margin, margin_exact in [(0.2, Fraction(1, 5)), (3 / 17, Fraction(3, 17)), (6 / 17, Fraction(6, 17)),
                                 (0.0, Fraction(0))]:
        want = _fraction_counts(difficulty.tolist(), exact, subjects, margin_exact, higher_is_harder=higher_is_harder)
        r = compare_with_label(difficulty, labels, subjects, margins=[margin], n_boot=0,
                               label_higher_is_harder=higher_is_harder, tie_tolerance=0.0).margins[0]
        slow = pair_agreement_counts_slow(difficulty, labels, subjects, margin=margin,
                                          label_higher_is_harder=higher_is_harder, tie_tolerance=0.0)
        assert (r.n_pairs, r.n_agree, r.n_disagree) == want, margin
        assert (slow["n_pairs"], slow["n_agree"], slow["n_disagree"]) == want, margin


@pytest.mark.parametrize("higher_is_harder", [True, False])
def test_labels_stored_as_decimals_count_as_the_decimals_do(higher_is_harder):
    rng = np.random.default_rng(3)
    texts = [f"{x / 100:.2f}" for x in rng.integers(0, 101, 150)]
    exact = [Fraction(t) for t in texts]
    labels = np.array([float(t) for t in texts])
    subjects = ["a"] * 150
    difficulty = rng.random(150)
    for margin_text in ("0.2", "0.35", "0.05", "0.07"):
        want = _fraction_counts(difficulty.tolist(), exact, subjects, Fraction(margin_text),
                                higher_is_harder=higher_is_harder)
        r = compare_with_label(difficulty, labels, subjects, margins=[float(margin_text)], n_boot=0,
                               label_higher_is_harder=higher_is_harder).margins[0]
        assert (r.n_pairs, r.n_agree, r.n_disagree) == want, margin_text


# --------------------------------------------------------------------------- tie tolerances


def test_a_difficulty_gap_equal_to_the_tie_threshold_is_a_tie_both_ways_round():
    d = [0.35, 0.55, 1.35]  # spread 1, tol 0.2: threshold exactly 1/5; 0.55 - 0.35 = 1/5
    threshold = Fraction(1, 5) * (Fraction("1.35") - Fraction("0.35"))
    assert Fraction("0.55") - Fraction("0.35") <= threshold  # the reference: a tie
    assert harder_of_pairs(d, [[1, 0], [0, 1], [2, 1]], tol=0.2).tolist() == [TIE, TIE, FIRST]
    assert harder_of_pairs(d, [[0, 2]], tol=0.2).tolist() == [SECOND]
    assert merge_ties(d, tol=0.2).tolist() == [0.35, 0.35, 1.35]
    # just beyond the threshold is decided
    assert harder_of_pairs([0.35, 0.5500000001, 1.35], [[1, 0]], tol=0.2).tolist() == [FIRST]


def test_tie_verdicts_match_fractions_on_a_grid_of_boundary_values():
    rng = np.random.default_rng(11)
    values = rng.integers(0, 21, 60) / 20  # multiples of 1/20; spread 1 when 0 and 1 are drawn
    values[:2] = [0.0, 1.0]
    pairs = np.array([(i, j) for i in range(60) for j in range(60) if i != j])
    got = harder_of_pairs(values, pairs, tol=0.15)
    exact = [intended_value(float(v)) for v in values]
    thr = Fraction(3, 20)
    want = [FIRST if exact[i] - exact[j] > thr else SECOND if exact[j] - exact[i] > thr else TIE for i, j in pairs]
    assert got.tolist() == want


# --------------------------------------------------------------------------- speeders


def test_a_median_equal_to_the_speeder_threshold_is_not_a_speeder():
    # (0.1 + 0.7) / 2 is 0.39999999999999997 in floats; the median of 1/10 and 7/10 is 2/5 exactly.
    assert (0.1 + 0.7) / 2 < 0.4
    assert Fraction("0.1") + Fraction("0.7") == 2 * Fraction("0.4")
    assert median_is_below([0.7, 0.1], 0.4) is False
    assert median_is_below([0.1, 0.69], 0.4) is True
    assert median_is_below([3.0, 5.0, 9.0], 5.0) is False and median_is_below([3.0, 4.9, 9.0], 5.0) is True
    assert median_is_below([], 5.0) is None


def test_speeder_medians_match_fractions_on_one_decimal_times():
    texts = [f"{i / 10:.1f}" for i in range(1, 60)]
    for a, b in itertools.combinations(texts, 2):
        for t in ("0.4", "2.1", "2.6", "5"):
            want = (Fraction(a) + Fraction(b)) / 2 < Fraction(t)
            assert median_is_below([float(a), float(b)], float(t)) is want, (a, b, t)


# --------------------------------------------------------------------------- credit snapping


def test_credit_snapping_bounds_are_exact():
    texts = ["5e-13", "1e-12", "9.99e-13", "0.999999999999", "0.9999999999990001", "0.9999999999999999",
             "1.0000000000000002", "0", "1", "0.5", "-1e-13"]
    low, high = near_zero_or_one(np.array([float(t) for t in texts]), 1e-12)
    d = Fraction("1e-12")
    want_low = [0 < abs(Fraction(t)) < d for t in texts]
    want_high = [0 < abs(Fraction(t) - 1) < d for t in texts]
    assert low.tolist() == want_low
    assert high.tolist() == want_high


# --------------------------------------------------------------------------- attention checks


def test_a_percentile_gap_equal_to_min_gap_qualifies():
    # Six questions: percentile ranks k/5. Subject a holds ranks 1/5 and 3/5, exactly 2/5 apart, which
    # the float subtraction 0.6 - 0.2 makes 0.39999999999999997; subject b holds 0, 2/5, 4/5, 1 and pairs
    # inwards (0, 1) gap 1 and (2/5, 4/5) gap 2/5.
    assert 3 / 5 - 1 / 5 < 0.4
    ids, subjects, difficulty = np.arange(6), ["b", "a", "b", "a", "b", "b"], [1.0, 2, 3, 4, 5, 6]
    checks = select_attention_checks(ids, subjects, difficulty, n_checks=3, min_gap=0.4, rng=0)
    assert checks.n_possible == 3
    assert {tuple(p) for p in checks.pairs.tolist()} == {(0, 5), (1, 3), (2, 4)}
    # one step more and only the gap of 1 qualifies
    assert select_attention_checks(ids, subjects, difficulty, n_checks=1, min_gap=0.41, rng=0).n_possible == 1


def test_a_label_gap_equal_to_min_gap_qualifies():
    checks = select_attention_checks([1, 2], ["s", "s"], [0.0, 0.0], n_checks=1, label=[0.35, 0.55], min_gap=0.2,
                                     rng=0)
    assert checks.pairs.tolist() == [[1, 2]]
    with pytest.raises(ValueError):
        select_attention_checks([1, 2], ["s", "s"], [0.0, 0.0], n_checks=1, label=[0.35, 0.549], min_gap=0.2,
                                rng=0)


def test_the_attention_check_count_rounds_exact_halves_to_even():
    # 0.2 * 58 / 0.8 = 14.5 exactly (float: 14.500000000000002 -> 15); 0.12 * 11 / 0.88 = 1.5 (float: 1.4999...)
    assert Fraction("0.2") * 58 / (1 - Fraction("0.2")) == Fraction(29, 2)
    assert attention_check_count(58, 0.2) == 14
    assert attention_check_count(11, 0.12) == 2
    for share in ("0.05", "0.1", "0.12", "0.2", "0.25", "0.3", "0.5"):
        s = Fraction(share)
        assert [attention_check_count(n, float(share)) for n in range(200)] == \
            [round(s * n / (1 - s)) for n in range(200)], share
