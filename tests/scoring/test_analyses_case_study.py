"""Section 4's controlled simulation (tables 6 and 7)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from scoring.analyses.case_study import (
    GROUND_TRUTH,
    MODEL_NAMES,
    SOLVE_COUNTS,
    _tie_groups,
    case_study_rankings,
    case_study_recovery,
    simulate_case_study,
)

GROUP_ROWS = {"easy": slice(0, 70), "medium": slice(70, 91), "hard": slice(91, 100)}


def col(name: str) -> int:
    return MODEL_NAMES.index(name)


@pytest.mark.parametrize("seed", [0, 1, 2, 123, 99999])
def test_every_seed_reproduces_the_count_table_and_its_equal_accuracies(seed):
    data = simulate_case_study(seed)
    R = data.R
    assert R.shape == (100, 5)
    assert set(np.unique(R)) <= {0.0, 1.0}
    assert [int((data.groups == g).sum()) for g in ("easy", "medium", "hard")] == [70, 21, 9]
    for name in MODEL_NAMES:
        solved = tuple(int(R[rows, col(name)].sum()) for rows in GROUP_ROWS.values())
        assert solved == SOLVE_COUNTS[name]
    acc = R.mean(axis=0)
    # M1 = M2 = 80/100 but M1 solves more hard; M4 = M5 = 70/100, M4 more medium
    assert acc[col("M1")] == acc[col("M2")] == 0.80
    assert acc[col("M4")] == acc[col("M5")] == 0.70
    hard, medium = GROUP_ROWS["hard"], GROUP_ROWS["medium"]
    assert R[hard, col("M1")].sum() > R[hard, col("M2")].sum()
    assert R[medium, col("M4")].sum() > R[medium, col("M5")].sum()
    assert R[hard, col("M4")].sum() == R[hard, col("M5")].sum()
    assert (data.datasets == np.where(data.groups == "easy", "Easy", "Hard")).all()


def test_the_count_table_dominates_down_the_ground_truth():
    # Cumulative counts from the hardest group, (hard, hard + medium, total):
    # each model >= the next in every component and > in at least one, so
    # every credit increasing with difficulty orders them as the ground truth.
    def cumulative(name):
        e, m, h = SOLVE_COUNTS[name]
        return np.array([h, h + m, h + m + e])

    for better, worse in itertools.pairwise(GROUND_TRUTH):
        assert (cumulative(better) >= cumulative(worse)).all()
        assert (cumulative(better) > cumulative(worse)).any()


def test_different_seeds_place_the_solves_differently():
    assert not np.array_equal(simulate_case_study(0).R, simulate_case_study(1).R)
    np.testing.assert_array_equal(simulate_case_study(5).R, simulate_case_study(5).R)


def test_accuracy_ties_the_equal_pairs_and_never_counts_a_tie_as_recovery():
    data = simulate_case_study(0)
    res = case_study_rankings(data.R, data.groups, data.datasets, methods=("accuracy", "eip"))
    acc = res.methods["accuracy"]
    assert acc.ranking == (("M1", "M2"), ("M4", "M5"), ("M3",))
    assert acc.matches_ground_truth is False
    assert acc.pairs == {("M1", "M2"): False, ("M4", "M5"): False}
    # tau-b of tie groups (0,0,2,1,1) vs ground truth (0,1,4,2,3): C = 8,
    # D = 0, ties in x: 2 pairs -> tau_b = 8 / sqrt((10 - 2) * 10) = 0.8944
    assert acc.kendall.value == pytest.approx(8 / 80**0.5, abs=1e-12)


def test_dataset_weighted_accuracy_cannot_separate_m1_from_m2():
    # M1 and M2 both solve 62 "Easy" and 12 + 6 = 15 + 3 = 18 "Hard"-set
    # questions, so any per-dataset weighting gives them the same score.
    data = simulate_case_study(3)
    res = case_study_rankings(data.R, data.groups, data.datasets, methods=("weighted_accuracy", "eip"))
    ranking = res.methods["weighted_accuracy"].ranking
    assert ("M1", "M2") in ranking
    assert res.methods["weighted_accuracy"].pairs[("M4", "M5")] is True  # 14 vs 10 "Hard"-set solves


def test_1pl_ties_models_with_equal_totals():
    # In the Rasch model the total is sufficient for ability: equal totals
    # solve the same score equation, so abilities are equal up to the
    # optimiser's tolerance and must come out tied.
    data = simulate_case_study(4)
    res = case_study_rankings(data.R, data.groups, data.datasets, methods=("irt_1pl", "eip"))
    assert res.methods["irt_1pl"].ranking == (("M1", "M2"), ("M4", "M5"), ("M3",))


def test_it_reports_eip_difficulty_per_question_group():
    data = simulate_case_study(0)
    res = case_study_rankings(data.R, data.groups, data.datasets, methods=("eip",))
    for group, rows in GROUP_ROWS.items():
        table = res.difficulty_by_group[group]
        block = data.R[rows]
        n_solved = int((block.sum(axis=1) == 5).sum())
        n_failed = int((block.sum(axis=1) == 0).sum())
        assert (table.n, table.n_all_solved, table.n_all_failed) == (block.shape[0], n_solved, n_failed)
        assert table.n_kept == block.shape[0] - n_solved - n_failed
        kept_pi = res.eip.difficulty[rows][res.eip.kept[rows]]
        assert table.pi_q_mean == pytest.approx(kept_pi.mean(), abs=1e-15)
        assert 0.0 <= table.scaled_min <= table.scaled_mean <= table.scaled_max <= 100.0
    # the five models fail 8 + 8 + 15 + 14 + 10 = 55 easy cells, so at least
    # 70 - 55 = 15 easy questions are solved by all and sit at 0
    assert res.difficulty_by_group["easy"].n_all_solved >= 15
    assert res.difficulty_by_group["easy"].scaled_min == 0.0


def test_it_runs_mirt_when_asked_and_records_the_epochs():
    data = simulate_case_study(0)
    res = case_study_rankings(data.R, data.groups, data.datasets, mirt_epochs=20, rng=1, methods=("eip", "irt_mirt"))
    assert res.mirt_epochs == 20
    assert list(res.methods) == ["irt_mirt", "eip"]  # in METHODS order
    mirt = res.methods["irt_mirt"]
    # the MIRT ability is a min-max scaled norm: exactly one model at 0 and one at 100
    assert sorted(mirt.scores)[0] == 0.0 and sorted(mirt.scores)[-1] == 100.0


def test_tie_groups_use_a_tolerance_relative_to_the_score_range():
    names = ("a", "b", "c", "d")
    # range 1.0: a and b differ by 5e-5 <= 1e-4 -> tied; c, d clearly apart
    assert _tie_groups(np.array([1.0, 0.99995, 0.5, 0.0]), names, 1e-4) == (("a", "b"), ("c",), ("d",))
    assert _tie_groups(np.array([2.0, 2.0, 2.0, 2.0]), names, 1e-4) == (names,)


def test_recovery_is_reproducible_with_the_same_rng():
    fast = ("accuracy", "weighted_accuracy", "eip")
    a = case_study_recovery(3, rng=11, methods=fast)
    b = case_study_recovery(3, rng=11, methods=fast)
    assert a.seeds == b.seeds
    for method in a.methods:
        x, y = a.methods[method], b.methods[method]
        assert (x.share_full_order, x.share_pairs) == (y.share_full_order, y.share_pairs)
        assert x.kendall.mean == y.kendall.mean
    assert case_study_recovery(1, rng=12, methods=fast).seeds[0] != a.seeds[0]
    acc = a.methods["accuracy"]
    assert acc.share_full_order == 0.0
    assert acc.share_tied_pairs == {("M1", "M2"): 1.0, ("M4", "M5"): 1.0}
    assert a.mirt_epochs is None


def test_recovery_counts_shares_over_seeds_like_a_loop_over_rankings():
    res = case_study_recovery(2, rng=2, include_mirt=False)
    assert list(res.methods) == ["accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_1pl_mml", "irt_2pl_mml",
                                 "eip"]
    expected_full, expected_pair = 0, 0
    for seed in res.seeds:
        data = simulate_case_study(seed)
        one = case_study_rankings(data.R, data.groups, data.datasets, methods=("eip",)).methods["eip"]
        expected_full += one.matches_ground_truth
        expected_pair += one.pairs[("M1", "M2")]
    assert res.methods["eip"].share_full_order == expected_full / 2
    assert res.methods["eip"].share_pairs[("M1", "M2")] == expected_pair / 2


def test_it_rejects_a_ground_truth_that_is_not_a_permutation():
    data = simulate_case_study(0)
    with pytest.raises(ValueError) as exc:
        case_study_rankings(data.R, data.groups, data.datasets, ground_truth=("M1", "M2", "M3", "M4", "M6"))
    assert str(exc.value) == (
        "ground_truth must be a permutation of model_names ('M1', 'M2', 'M3', 'M4', 'M5'); "
        "got ('M1', 'M2', 'M3', 'M4', 'M6')"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"methods": ("accuracy",)}, "methods must include 'eip' (its difficulties are table 7); got ('accuracy',)"),
        (
            {"methods": ("eip", "glm")},
            "methods must be distinct names from "
            "('accuracy', 'weighted_accuracy', 'irt_1pl', 'irt_2pl', 'irt_1pl_mml', 'irt_2pl_mml', 'irt_mirt', 'eip'); "
            "got ('eip', 'glm')",
        ),
        (
            {"methods": ("irt_mirt", "eip"), "include_mirt": False},
            "methods lists 'irt_mirt' but include_mirt is False; drop one of them",
        ),
    ],
)
def test_it_rejects_an_inconsistent_method_choice(kwargs, message):
    with pytest.raises(ValueError) as exc:
        case_study_recovery(1, **kwargs)
    assert str(exc.value) == message
