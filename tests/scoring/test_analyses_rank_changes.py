"""EIP vs accuracy rank changes (appendix G) and accuracy per difficulty tertile."""
from __future__ import annotations

import numpy as np
import pytest

from scoring.analyses.rank_changes import accuracy_by_difficulty_tertile, eip_vs_accuracy

nan = np.nan


def test_it_gives_tau_two_thirds_for_one_adjacent_swap_among_four():
    # accuracy order 0,2,1,3; EIP order 0,1,2,3: of the 6 pairs only (1,2)
    # is discordant -> tau = (5 - 1) / 6 = 0.6667. Exact two-sided p-value:
    # permutations of 4 with <= 1 inversion are 1 + 3 = 4 of 24, so
    # p = 2 * 4 / 24 = 1/3.
    res = eip_vs_accuracy([0.4, 0.3, 0.2, 0.1], [0.9, 0.7, 0.8, 0.6])
    assert res.kendall.value == pytest.approx(4 / 6, abs=1e-12)
    assert res.kendall.p_value == pytest.approx(1 / 3, abs=1e-12)
    assert (res.n_concordant, res.n_discordant) == (5, 1)
    assert res.accuracy_rank.tolist() == [1.0, 3.0, 2.0, 4.0]
    assert res.eip_rank.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert res.rank_change.tolist() == [0.0, 1.0, -1.0, 0.0]  # model 1 moves up under EIP
    assert res.abs_change_counts == {0.0: 2, 1.0: 2}


def test_it_measures_window_displacement_by_hand():
    # 7 models, accuracy rank = index + 1; EIP ranks [2,1,3,6,4,5,7]
    # |change| = [1,1,0,2,1,1,0]; w = 3 -> blocks 1-3, 4-6, 7-7:
    #   1-3: mean 2/3, max 1; local tau: EIP order (2,1,3) -> one swap -> 1/3
    #   4-6: mean 4/3, max 2; EIP (6,4,5): pairs (4,5) disc, (4,6) disc,
    #        (5,6) conc -> tau = (1 - 2) / 3 = -1/3
    #   7-7: mean 0, max 0; tau undefined (one model)
    accuracy = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    eip_rank = np.array([2, 1, 3, 6, 4, 5, 7])
    competency = 10.0 - eip_rank
    res = eip_vs_accuracy(competency, accuracy, windows=(3, 7))
    blocks = res.windows[0].blocks
    assert [(b.first, b.last) for b in blocks] == [(1, 3), (4, 6), (7, 7)]
    assert [b.mean_displacement for b in blocks] == pytest.approx([2 / 3, 4 / 3, 0.0], abs=1e-12)
    assert [b.max_displacement for b in blocks] == [1.0, 2.0, 0.0]
    assert blocks[0].kendall.value == pytest.approx(1 / 3, abs=1e-12)
    assert blocks[1].kendall.value == pytest.approx(-1 / 3, abs=1e-12)
    assert blocks[2].kendall.value is None
    whole = res.windows[1].blocks[0]
    assert whole.mean_displacement == pytest.approx(6 / 7, abs=1e-12)
    assert res.abs_change_counts == {0.0: 2, 1.0: 4, 2.0: 1}


def test_it_gives_tied_models_the_best_rank_of_their_group():
    res = eip_vs_accuracy([3.0, 2.0, 1.0], [0.5, 0.5, 0.3])
    # accuracy 0.5, 0.5, 0.3 -> competition ranks 1, 1, 3; EIP 3 > 2 > 1 -> 1, 2, 3
    assert res.accuracy_rank.tolist() == [1.0, 1.0, 3.0]
    assert res.rank_change.tolist() == [0.0, -1.0, 0.0]
    # tau-b with one tie in accuracy: C = 2, D = 0, n0 = 3, n1 = 1, n2 = 0
    # tau_b = 2 / sqrt((3 - 1) * 3) = 0.8165
    assert res.kendall.value == pytest.approx(2 / 6**0.5, abs=1e-12)


def test_it_summarises_rank_changes_per_family():
    res = eip_vs_accuracy([0.4, 0.3, 0.2, 0.1], [0.9, 0.7, 0.8, 0.6], families=["A", "B", "B", "A"])
    assert res.families["A"].models == (0, 3)
    assert res.families["B"].rank_change == (1.0, -1.0)
    assert res.families["B"].mean_abs_change == 1.0
    assert res.families["A"].mean_abs_change == 0.0


def test_it_rejects_mismatched_scores():
    with pytest.raises(ValueError) as exc:
        eip_vs_accuracy([1, 2, 3], [1, 2])
    assert str(exc.value) == "accuracy must have 3 entries (one per model); got 2"
    with pytest.raises(ValueError) as exc:
        eip_vs_accuracy([1, nan], [1, 2])
    assert str(exc.value) == "competency must be finite; got nan at model 1"
    with pytest.raises(ValueError) as exc:
        eip_vs_accuracy([1, 2], [1, 2], windows=(0,))
    assert str(exc.value) == "windows must be an integer >= 1; got 0"


def test_it_splits_kept_questions_into_tertiles_and_adds_dead_nodes_by_hand():
    # 2 models. Dead nodes are read from R, not from the difficulty values:
    # q5 has one observed cell with credit 0, so it is all failed (hard) even
    # though its difficulty entry says 6. Kept are q0-q4 with d = 1..5.
    R = np.array(
        [
            [1, 0],  # q0 kept
            [1, 0],  # q1 kept
            [1, 0],  # q2 kept
            [0, 1],  # q3 kept
            [0, 1],  # q4 kept
            [0, nan],  # q5 all failed -> hard
            [1, 1],  # q6 all solved -> easy
            [0, 0],  # q7 all failed -> hard
            [nan, nan],  # q8 unobserved -> -1
        ]
    )
    difficulty = np.array([1, 2, 3, 4, 5, 6, 0, 100, nan], dtype=float)
    res = accuracy_by_difficulty_tertile(R, difficulty, model_names=["a", "b"])
    # kept are q0-q4 with d = 1..5: quantiles 2.333 and 3.667
    # -> easy {q0,q1}, medium {q2}, hard {q3,q4}
    assert res.thresholds == pytest.approx((7 / 3, 11 / 3), abs=1e-12)
    assert res.tertile.tolist() == [0, 0, 1, 2, 2, 2, 0, 2, -1]
    assert res.n_questions.tolist() == [3, 1, 4]
    assert (res.n_all_solved, res.n_all_failed) == (1, 2)
    # model a: easy q0,q1,q6 -> 3/3; medium q2 -> 1/1; hard q3,q4,q5,q7 -> 0/4
    # model b: easy q0,q1,q6 -> 1/3; medium q2 -> 0/1; hard q3,q4,q7 observed -> 2/3
    np.testing.assert_allclose(res.accuracy, [[1, 1, 0], [1 / 3, 0, 2 / 3]], rtol=0, atol=1e-12)
    assert res.n_observed.tolist() == [[3, 1, 4], [3, 1, 3]]
    # shares of credit: a earned 3 + 1 + 0 = 4; b earned 1 + 0 + 2 = 3
    np.testing.assert_allclose(res.correct_share, [[3 / 4, 1 / 4, 0], [1 / 3, 0, 2 / 3]], rtol=0, atol=1e-12)


def test_it_groups_tertile_accuracy_by_family():
    R = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]], dtype=float)
    res = accuracy_by_difficulty_tertile(R, [1, 2, 3, 4], families=["x", "y", "x"])
    assert res.families == {"x": (0, 2), "y": (1,)}


def test_it_refuses_a_difficulty_vector_from_another_matrix():
    R = np.array([[1, 0], [0, 1], [1, 1]], dtype=float)
    with pytest.raises(ValueError) as exc:
        accuracy_by_difficulty_tertile(R, [0.5, nan, 0.0])
    assert str(exc.value) == (
        "difficulty is NaN for question 1, which R says EIP keeps; pass the EIP result of this same R"
    )
