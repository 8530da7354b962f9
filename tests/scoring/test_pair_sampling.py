"""Pair sampling for human judging: known answers, invariants, frequencies."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from scoring.pair_sampling import ERR_TOO_FEW_PAIRS, _unrank, count_possible_pairs, sample_pairs

# Seven questions: subject "a" has 4 (ids 101-104), "b" has 2, "c" has 1.
IDS = [101, 102, 103, 104, 201, 202, 301]
SUBJECTS = ["a", "a", "a", "a", "b", "b", "c"]
# C(4,2) + C(2,2) + C(1,2) = 6 + 1 + 0 = 7 pairs, written out by hand:
ALL_PAIRS = {
    (101, 102), (101, 103), (101, 104), (102, 103), (102, 104), (103, 104),
    (201, 202),
}


def as_set(sample) -> set[tuple[int, int]]:
    return {tuple(row) for row in sample.pairs.tolist()}


def slow_pairs(ids, subjects, kept=None):
    """Every same-subject unordered pair by brute force."""
    kept = [True] * len(ids) if kept is None else kept
    out = set()
    for (i, a), (j, b) in itertools.combinations(enumerate(ids), 2):
        if kept[i] and kept[j] and subjects[i] == subjects[j]:
            out.add((min(a, b), max(a, b)))
    return out


def test_it_counts_possible_pairs_by_subject():
    assert count_possible_pairs(SUBJECTS) == 7
    assert count_possible_pairs([]) == 0


def test_it_returns_every_pair_when_all_are_requested():
    sample = sample_pairs(IDS, SUBJECTS, n_pairs=7, rng=0)
    assert as_set(sample) == ALL_PAIRS
    assert sample.pairs.shape == (7, 2)
    assert sample.n_possible == 7
    assert sample.n_eligible == 7


def test_it_refuses_more_pairs_than_possible_and_says_how_many():
    with pytest.raises(ValueError) as err:
        sample_pairs(IDS, SUBJECTS, n_pairs=8, rng=0)
    assert str(err.value) == ERR_TOO_FEW_PAIRS.format(n_pairs=8, n_possible=7, n_eligible=7)
    assert "only 7 distinct same-subject pairs" in str(err.value)


def test_it_leaves_out_questions_that_are_not_kept():
    kept = np.array([True, True, True, False, True, True, True])
    # subject a keeps 3 questions: C(3,2) = 3, plus (201, 202) = 4 pairs.
    sample = sample_pairs(IDS, SUBJECTS, n_pairs=4, kept=kept, rng=1)
    assert as_set(sample) == {(101, 102), (101, 103), (102, 103), (201, 202)}
    with pytest.raises(ValueError, match=r"only 4 distinct same-subject pairs .* from 6 eligible"):
        sample_pairs(IDS, SUBJECTS, n_pairs=5, kept=kept, rng=1)


@pytest.mark.parametrize("seed", range(20))
def test_it_never_mixes_subjects_or_repeats_a_pair(seed):
    rng = np.random.default_rng(1000 + seed)
    n = 60
    ids = rng.choice(10_000, size=n, replace=False)
    subjects = rng.choice(["math", "law", "bio", "cs"], size=n)
    kept = rng.random(n) < 0.8
    possible = slow_pairs(ids.tolist(), subjects.tolist(), kept.tolist())
    n_pairs = int(rng.integers(1, len(possible) + 1))
    sample = sample_pairs(ids, subjects, n_pairs=n_pairs, kept=kept, rng=seed)
    got = [tuple(row) for row in sample.pairs.tolist()]
    assert len(got) == n_pairs
    assert len(set(got)) == n_pairs  # no repeats
    assert set(got) <= possible  # same subject, kept, smaller id first
    assert sample.n_possible == len(possible)


def test_it_is_repeatable_for_a_seed_and_independent_of_input_order():
    ids = np.arange(1, 41)
    subjects = np.repeat(["x", "y"], 20)
    first = sample_pairs(ids, subjects, n_pairs=15, rng=7)
    again = sample_pairs(ids, subjects, n_pairs=15, rng=7)
    np.testing.assert_array_equal(first.pairs, again.pairs)
    perm = np.random.default_rng(3).permutation(40)
    shuffled = sample_pairs(ids[perm], subjects[perm], n_pairs=15, rng=7)
    np.testing.assert_array_equal(first.pairs, shuffled.pairs)
    other = sample_pairs(ids, subjects, n_pairs=15, rng=8)
    assert as_set(other) != as_set(first)


def test_uniform_gives_every_pair_the_same_inclusion_probability():
    # Drawing 2 of the 7 pairs: each pair is included with probability 2/7.
    # Over 3,500 seeds the count is Binomial(3500, 2/7): mean 1000,
    # sd sqrt(3500 * 2/7 * 5/7) = 26.7; allow 5 sd = 134.
    counts = dict.fromkeys(ALL_PAIRS, 0)
    for seed in range(3500):
        for pair in as_set(sample_pairs(IDS, SUBJECTS, n_pairs=2, rng=seed)):
            counts[pair] += 1
    for pair, count in counts.items():
        assert abs(count - 1000) < 134, (pair, count)


@pytest.mark.parametrize("n", range(2, 9))
def test_unranking_matches_the_row_major_order_of_triu_indices(n):
    i, j = np.triu_indices(n, k=1)
    ranks = np.arange(n * (n - 1) // 2)
    got_i, got_j = _unrank(ranks, n)
    np.testing.assert_array_equal(got_i, i)
    np.testing.assert_array_equal(got_j, j)


# stratified_gap: one subject, difficulties 0, 1, 3, 7 for ids 1-4.
# Gaps: (1,2)=1 (2,3)=2 (1,3)=3 (3,4)=4 (2,4)=6 (1,4)=7, so the tertiles are
# {(1,2),(2,3)}, {(1,3),(3,4)}, {(2,4),(1,4)}.
GAP_IDS = [1, 2, 3, 4]
GAP_SUBJ = ["s"] * 4
GAP_D = {"eip": [0.0, 1.0, 3.0, 7.0]}
TERTILES = [{(1, 2), (2, 3)}, {(1, 3), (3, 4)}, {(2, 4), (1, 4)}]


def test_stratified_gap_takes_one_pair_from_each_gap_tertile():
    for seed in range(30):
        sample = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=3, strategy="stratified_gap", difficulty=GAP_D, rng=seed)
        by_stratum = {int(s): tuple(p) for s, p in zip(sample.stratum, sample.pairs.tolist())}
        assert sorted(by_stratum) == [0, 1, 2]
        for s in range(3):
            assert by_stratum[s] in TERTILES[s]


def test_stratified_gap_gives_the_remainder_to_the_smallest_gaps_first():
    sample = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=4, strategy="stratified_gap", difficulty=GAP_D, rng=2)
    # quotas for 4 pairs in 3 strata: 2, 1, 1 -> stratum 0 is taken whole.
    assert sorted(sample.stratum.tolist()) == [0, 0, 1, 2]
    chosen = as_set(sample)
    assert TERTILES[0] <= chosen
    assert len(chosen & TERTILES[1]) == 1 and len(chosen & TERTILES[2]) == 1


def test_stratified_gap_breaks_ties_at_random_into_equal_count_strata():
    # All gaps equal: 6 pairs, 3 strata of 2 each; every pair can land anywhere.
    flat = {"eip": [5.0, 5.0, 5.0, 5.0]}
    seen = set()
    for seed in range(40):
        sample = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=6, strategy="stratified_gap", difficulty=flat, rng=seed)
        assert sorted(sample.stratum.tolist()) == [0, 0, 1, 1, 2, 2]
        seen |= {(int(s), tuple(p)) for s, p in zip(sample.stratum, sample.pairs.tolist())}
    assert len(seen) == 18  # each of 6 pairs seen in each of 3 strata


# methods_disagree: eip 1,2,3,4 for ids 1-4.
# b1 = 1,2,4,3 reverses (3,4) only; b2 = 2,1,5,3 reverses (1,2) and (3,4).
# So (3,4) has 2 disagreeing baselines, (1,2) has 1, the other 4 pairs 0.
DIS_D = {"eip": [1, 2, 3, 4], "b1": [1, 2, 4, 3], "b2": [2, 1, 5, 3]}


def test_methods_disagree_puts_the_most_disputed_pairs_first():
    one = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=1, strategy="methods_disagree", difficulty=DIS_D, rng=0)
    assert as_set(one) == {(3, 4)}
    assert one.n_disagree.tolist() == [2]
    two = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=2, strategy="methods_disagree", difficulty=DIS_D, rng=0)
    assert as_set(two) == {(1, 2), (3, 4)}


def test_methods_disagree_fills_the_rest_uniformly():
    fills = set()
    for seed in range(60):
        s = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=3, strategy="methods_disagree", difficulty=DIS_D, rng=seed)
        chosen = as_set(s)
        assert {(1, 2), (3, 4)} <= chosen
        assert sorted(s.n_disagree.tolist()) == [0, 1, 2]
        fills |= chosen - {(1, 2), (3, 4)}
    assert fills == {(1, 3), (1, 4), (2, 3), (2, 4)}


def test_methods_disagree_ignores_ties_and_missing_values():
    # b1 ties on (3,4), b2 is NaN for id 4: neither counts as disagreeing.
    table = {"eip": [1, 2, 3, 4], "b1": [1, 2, 3, 3], "b2": [1, 2, 3, math.nan]}
    s = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=6, strategy="methods_disagree", difficulty=table, rng=0)
    assert s.n_disagree.tolist() == [0] * 6


def test_it_handles_a_benchmark_sized_subject_list_quickly():
    rng = np.random.default_rng(0)
    n = 12_000
    ids = np.arange(n)
    subjects = rng.integers(0, 14, size=n)
    sample = sample_pairs(ids, subjects, n_pairs=70, rng=1)
    assert len(as_set(sample)) == 70
    assert (subjects[sample.pairs[:, 0]] == subjects[sample.pairs[:, 1]]).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_pairs": 0}, "n_pairs must be an integer >= 1; got 0"),
        ({"n_pairs": 2, "strategy": "best"}, "strategy must be one of"),
        ({"n_pairs": 2, "n_strata": 0}, "n_strata must be an integer >= 1; got 0"),
        ({"n_pairs": 2, "kept": [1, 1, 1, 1]}, "kept must be a bool array of shape (4,)"),
        ({"n_pairs": 2, "strategy": "stratified_gap"}, "strategy 'stratified_gap' needs difficulty['eip']"),
        ({"n_pairs": 2, "strategy": "methods_disagree", "difficulty": {"eip": [1, 2, 3, 4]}},
         "at least one baseline besides 'eip'"),
        ({"n_pairs": 2, "strategy": "stratified_gap", "difficulty": {"eip": [1, 2, 3]}},
         "difficulty['eip'] must have shape (4,)"),
        ({"n_pairs": 2, "strategy": "stratified_gap", "difficulty": {"eip": [1, math.nan, 3, 4]}},
         "difficulty['eip'] is NaN for eligible question id 2"),
        ({"n_pairs": 2, "rng": "seed"}, "rng must be a numpy Generator"),
    ],
)
def test_it_names_the_bad_argument(kwargs, message):
    with pytest.raises(ValueError) as err:
        sample_pairs(GAP_IDS, GAP_SUBJ, **kwargs)
    assert message in str(err.value)


def test_it_rejects_repeated_ids_and_mismatched_subjects():
    with pytest.raises(ValueError, match="question_ids must be distinct; 1 repeats"):
        sample_pairs([1, 1, 2], ["a", "a", "a"], n_pairs=1)
    with pytest.raises(ValueError, match=r"subjects must have the shape of question_ids \(3,\)"):
        sample_pairs([1, 2, 3], ["a", "a"], n_pairs=1)
    with pytest.raises(ValueError, match="question_ids must be integers"):
        sample_pairs([1.5, 2.5], ["a", "a"], n_pairs=1)


def test_a_nan_reference_is_fine_for_a_question_that_is_not_kept():
    table = {"eip": [0.0, 1.0, 3.0, math.nan]}
    kept = np.array([True, True, True, False])
    s = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=3, strategy="stratified_gap", difficulty=table, kept=kept, rng=0)
    assert as_set(s) == {(1, 2), (1, 3), (2, 3)}


# tie tolerance: a difference of 1e-15 on a spread of 3 is noise for tol 1e-9 (threshold 3e-9)
NOISE = 1e-15


@pytest.mark.parametrize(
    "difficulty",
    [
        {"eip": [1, 2, 3, 4], "b": [1 + NOISE, 1, 3, 4]},  # the baseline reverses (1,2) by noise only
        {"eip": [1, 1 + NOISE, 3, 4], "b": [2, 1, 3, 4]},  # the reference orders (1,2) by noise only
    ],
)
def test_methods_disagree_does_not_count_a_disagreement_decided_by_noise(difficulty):
    exact = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=6, strategy="methods_disagree", difficulty=difficulty, rng=0)
    assert dict(zip(map(tuple, exact.pairs.tolist()), exact.n_disagree.tolist()))[(1, 2)] == 1
    tolerant = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=6, strategy="methods_disagree", difficulty=difficulty,
                            tie_tolerance={"eip": 1e-9, "b": 1e-9}, rng=0)
    assert tolerant.n_disagree.tolist() == [0] * 6


def test_stratified_gap_ranks_gaps_that_differ_by_noise_as_equal():
    # gaps: (1,2) 1, (2,3) 1, (3,4) 1 + noise, (1,3) 2, (2,4) 2, (1,4) 3; two pairs per tertile
    d = {"eip": [0.0, 1.0, 2.0, 3.0 + NOISE]}
    assert d["eip"][3] - d["eip"][2] > 1.0

    def lowest_tertile(tol: float) -> set[tuple[int, int]]:
        seen: set[tuple[int, int]] = set()
        for seed in range(30):
            s = sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=6, strategy="stratified_gap", difficulty=d,
                             tie_tolerance={"eip": tol}, rng=seed)
            seen |= {tuple(p) for p, k in zip(s.pairs.tolist(), s.stratum.tolist()) if k == 0}
        return seen

    assert lowest_tertile(0.0) == {(1, 2), (2, 3)}  # exact: noise always ranks (3,4) above the others
    assert lowest_tertile(1e-9) == {(1, 2), (2, 3), (3, 4)}  # tolerant: the three gaps of 1 tie


def test_it_rejects_a_bad_tie_tolerance():
    with pytest.raises(ValueError, match=r"tie_tolerance\['eip'\] must be a finite number >= 0; got -1"):
        sample_pairs(GAP_IDS, GAP_SUBJ, n_pairs=1, strategy="stratified_gap", difficulty={"eip": [1, 2, 3, 4]},
                     tie_tolerance={"eip": -1}, rng=0)
