"""The pure selection of attention-check pairs (scoring.attention_checks), on
hand-worked examples."""
from __future__ import annotations

import pytest

from scoring.attention_checks import (
    TooFewAttentionChecks,
    attention_check_count,
    max_attention_check_share,
    select_attention_checks,
)

IDS = [1, 2, 3, 4, 5, 6, 7, 8]
SUBJECTS = ["m", "m", "m", "m", "p", "p", "p", "p"]
# Percentile ranks among all 8 ((rank - 1) / 7): id1 0, id3 1/7, id6 2/7, id2 3/7, id5 4/7, id8 5/7, id7 6/7, id4 1.
DIFFICULTY = [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7]


def test_it_pairs_the_easiest_with_the_hardest_of_each_subject_largest_gap_first():
    # m sorted: 1 (0), 3 (1/7), 2 (3/7), 4 (1) -> (1, 4) gap 1; next (3, 2) gap 2/7 < 0.5 stops.
    # p sorted: 6 (2/7), 5 (4/7), 8 (5/7), 7 (6/7) -> (6, 7) gap 4/7; next (5, 8) gap 1/7 stops.
    checks = select_attention_checks(IDS, SUBJECTS, DIFFICULTY, n_checks=2, rng=0)
    assert checks.pairs.tolist() == [[1, 4], [6, 7]]
    assert checks.expected_harder.tolist() == [4, 7]
    assert checks.gap.tolist() == pytest.approx([1.0, 4 / 7], abs=1e-12)
    assert (checks.by, checks.n_possible) == ("difficulty_rank", 2)


def test_it_says_how_many_qualify_when_too_many_are_wanted():
    with pytest.raises(TooFewAttentionChecks, match=(
            r"^3 attention checks wanted, but only 2 same-subject pairs of questions are at least 0.5 apart on the "
            r"percentile scale of EIP difficulty \(0 = easiest, 1 = hardest\); lower the attention-check share$"
    )) as caught:
        select_attention_checks(IDS, SUBJECTS, DIFFICULTY, n_checks=3, rng=0)
    assert caught.value.n_possible == 2 and isinstance(caught.value, ValueError)


@pytest.mark.parametrize(("n_pairs", "n_possible", "share"), [
    # round(s * n / (1 - s)): 70 pairs, 5 possible: 0.07 -> round(5.27) = 5 fits, 0.08 -> round(6.09) = 6 not
    (70, 5, 0.07),
    (70, 0, 0.0),  # 0.01 -> round(0.71) = 1 > 0
    (10, 100, 0.5),  # every share up to 0.5 fits
    (40, 10, 0.2),  # 0.2 -> 10 exactly; 0.21 -> round(10.63) = 11
])
def test_the_largest_feasible_share(n_pairs, n_possible, share):
    assert max_attention_check_share(n_pairs, n_possible) == share


def test_it_passes_over_the_regular_pairs_in_either_order():
    checks = select_attention_checks(IDS, SUBJECTS, DIFFICULTY, n_checks=1, exclude=[[4, 1]], rng=0)
    assert checks.pairs.tolist() == [[6, 7]] and checks.n_possible == 1


def test_a_label_replaces_the_difficulty_with_a_gap_of_two_steps_by_default():
    # m labels: 1:1, 2:2, 3:1, 4:5 -> (1 or 3, 4) gap 4; next gap 2 - 1 = 1 stops.
    # p labels: 5:3, 6:3, 7:1, 8:4 -> (7, 8) gap 3; next gap 0 stops.
    labels = [1, 2, 1, 5, 3, 3, 1, 4]
    checks = select_attention_checks(IDS, SUBJECTS, DIFFICULTY, n_checks=2, label=labels, rng=0)
    assert checks.expected_harder.tolist() == [4, 8]
    assert checks.pairs[0, 0] in (1, 3) and checks.pairs[1].tolist() == [7, 8]
    assert checks.gap.tolist() == [4.0, 3.0] and checks.by == "label"


def test_ineligible_and_unknown_questions_are_never_used():
    difficulty = [0.1, 0.4, 0.2, float("nan"), 0.5, 0.3, 0.8, 0.7]
    eligible = [True] * 5 + [False, True, True]
    # Ranks over the 6 usable (1, 3, 2, 5, 8, 7 by value): 1 -> 0, 3 -> 1/5, 2 -> 2/5, 5 -> 3/5, 8 -> 4/5, 7 -> 1.
    # m without 4: (1, 2) gap 2/5; p without 6: (5, 7) gap 2/5: both below the default 0.5, both at 0.4.
    with pytest.raises(ValueError, match="only 0 same-subject pairs"):
        select_attention_checks(IDS, SUBJECTS, difficulty, n_checks=1, eligible=eligible, rng=0)
    checks = select_attention_checks(IDS, SUBJECTS, difficulty, n_checks=2, eligible=eligible, min_gap=0.4, rng=0)
    assert sorted(map(tuple, checks.pairs.tolist())) == [(1, 2), (5, 7)]
    assert checks.gap.tolist() == pytest.approx([0.4, 0.4], abs=1e-12)


def test_the_same_seed_gives_the_same_checks():
    a = select_attention_checks(IDS, SUBJECTS, [0.5] * 4 + [0.1, 0.9, 0.1, 0.9], n_checks=1, rng=7)
    b = select_attention_checks(IDS, SUBJECTS, [0.5] * 4 + [0.1, 0.9, 0.1, 0.9], n_checks=1, rng=7)
    assert a.pairs.tolist() == b.pairs.tolist()


@pytest.mark.parametrize(("n_pairs", "share", "expected"), [(40, 0.2, 10), (70, 0.0, 0), (3, 0.1, 0), (10, 0.5, 10),
                                                             (8, 0.2, 2)])
def test_the_share_counts_among_all_served_pairs(n_pairs, share, expected):
    # 40 regular + 10 checks: 10 / 50 = 0.2; 10 + 10: a half; 3 * 0.1 / 0.9 = 0.33 rounds to 0.
    assert attention_check_count(n_pairs, share) == expected


@pytest.mark.parametrize("share", [-0.1, 0.51, True, "0.2"])
def test_a_share_outside_zero_to_a_half_is_refused(share):
    with pytest.raises(ValueError, match=r"^share must be a number in \[0, 0.5\]"):
        attention_check_count(10, share)


def test_bad_shapes_and_counts_are_refused():
    with pytest.raises(ValueError, match="subjects must be 1-dimensional"):
        select_attention_checks(IDS, SUBJECTS[:3], DIFFICULTY, n_checks=1)
    with pytest.raises(ValueError, match="n_checks must be a non-negative integer"):
        select_attention_checks(IDS, SUBJECTS, DIFFICULTY, n_checks=-1)
    with pytest.raises(ValueError, match="question_ids must be distinct"):
        select_attention_checks([1, 1, 3, 4, 5, 6, 7, 8], SUBJECTS, DIFFICULTY, n_checks=1)
