"""Robustness analyses: model removal, leave-one-out, leave-one-dataset-out."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from scoring.analyses._common import correlation, summarise
from scoring.analyses.robustness import leave_one_dataset_out, leave_one_out_models, model_removal_robustness
from scoring.eip import eip


def guttman(n_models: int, thresholds) -> np.ndarray:
    """Perfectly nested matrix: model m solves question q iff m >= thresholds[q].

    In such a matrix EIP's order is forced: if the failing set of q2 strictly
    contains that of q1, every term of pi_Q(q2) = alpha * sum_{m fails q2}
    pi_M(m) / F(m) + c is positive and includes those of q1, so
    pi_Q(q2) > pi_Q(q1); likewise a model whose solved set strictly contains
    another's has the larger pi_M. Ranks are therefore known without
    running EIP: higher model index = more competent, higher threshold =
    harder.
    """
    m = np.arange(n_models)
    return (m[None, :] >= np.asarray(thresholds)[:, None]).astype(float)


def test_it_gives_rho_one_when_the_removed_model_duplicates_another_in_a_nested_matrix():
    # 5 nested models plus model 5 = a copy of model 2. Removing the copy
    # keeps every question's failing set nested in the same order and every
    # model's solved set nested in the same order, so both rank vectors are
    # unchanged (see guttman()). Thresholds 1..4 keep 4 distinct questions;
    # thresholds 0 and 5 give an all-solved and an all-failed question.
    base = guttman(5, [0, 1, 2, 3, 4, 1, 3, 5])
    R = np.column_stack([base, base[:, 2]])
    res = leave_one_out_models(R)
    trial = res.summaries[0].trials[5]
    assert trial.removed == (5,)
    assert trial.competency_rho.value == pytest.approx(1.0, abs=1e-12)
    assert trial.competency_rho.n == 5
    assert trial.difficulty_rho.value == pytest.approx(1.0, abs=1e-12)
    assert trial.difficulty_rho.n == 6  # the 6 questions with thresholds 1..4
    assert trial.n_filter_changes == 0


def test_it_does_not_promise_rho_one_for_a_duplicate_in_a_random_matrix():
    # Not a theorem outside nested matrices: duplicating a column changes
    # S(q) for the questions that model solves and so re-weights them. This
    # documents the fact (measured, not assumed) so nobody relies on it.
    rng = np.random.default_rng(0)
    X = (rng.random((200, 6)) < 0.5).astype(float)
    R = np.column_stack([X, X[:, 2]])
    trial = leave_one_out_models(R).summaries[0].trials[6]
    assert trial.competency_rho.value < 1.0 - 1e-6


def test_it_counts_questions_that_change_filtering_status_by_hand():
    # q0 [1,1,1,0] kept; without m3 all solved            -> changes for m3
    # q1 [0,1,1,1] kept; without m0 all solved            -> changes for m0
    # q2 [1,0,0,0] kept; without m0 all failed            -> changes for m0
    # q3 [1,1,0,0], q5 [0,1,0,1] stay kept; q4 all solved stays excluded
    # LOO changes per removed model: m0 2, m1 0, m2 0, m3 1 -> mean 0.75, max 2
    R = np.array(
        [[1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1]],
        dtype=float,
    )
    summary = leave_one_out_models(R).summaries[0]
    assert [t.n_filter_changes for t in summary.trials] == [2, 0, 0, 1]
    assert summary.filter_changes.mean == pytest.approx(0.75, abs=1e-12)
    assert summary.filter_changes.max == 2


def test_it_correlates_over_questions_kept_in_both_runs_like_scipy():
    rng = np.random.default_rng(3)
    R = (rng.random((150, 7)) < rng.random(7)[None, :]).astype(float)
    res = model_removal_robustness(R, ks=[3], n_trials=2, rng=5)
    full = eip(R)
    for trial in res.summary_for(3).trials:
        keep = np.ones(7, dtype=bool)
        keep[list(trial.removed)] = False
        sub = eip(R[:, keep])
        both = full.kept & sub.kept
        expected_d = stats.spearmanr(full.difficulty[both], sub.difficulty[both]).statistic
        expected_m = stats.spearmanr(full.competency[keep], sub.competency).statistic
        assert trial.difficulty_rho.value == pytest.approx(expected_d, abs=1e-12)
        assert trial.difficulty_rho.n == int(both.sum())
        assert trial.competency_rho.value == pytest.approx(expected_m, abs=1e-12)
        assert trial.n_filter_changes == int((full.kept != sub.kept).sum())


def test_it_summarises_trials_with_mean_and_sample_std():
    rng = np.random.default_rng(4)
    R = (rng.random((120, 8)) < 0.5).astype(float)
    s = model_removal_robustness(R, ks=[2], n_trials=4, rng=0).summary_for(2)
    values = np.array([t.difficulty_rho.value for t in s.trials])
    assert s.difficulty_rho.mean == pytest.approx(values.mean(), abs=1e-12)
    assert s.difficulty_rho.std == pytest.approx(values.std(ddof=1), abs=1e-12)
    assert s.difficulty_rho.n == 4


def test_it_draws_k_distinct_models_reproducibly():
    R = (np.random.default_rng(1).random((60, 6)) < 0.5).astype(float)
    a = model_removal_robustness(R, ks=[1, 3], n_trials=5, rng=42)
    b = model_removal_robustness(R, ks=[1, 3], n_trials=5, rng=42)
    removed_a = [t.removed for s in a.summaries for t in s.trials]
    assert removed_a == [t.removed for s in b.summaries for t in s.trials]
    assert all(len(set(r)) == len(r) for r in removed_a)
    assert [len(t.removed) for t in a.summary_for(3).trials] == [3] * 5


def test_it_skips_k_that_would_leave_fewer_than_two_models_and_says_so():
    R = (np.random.default_rng(2).random((40, 4)) < 0.5).astype(float)
    res = model_removal_robustness(R, ks=[1, 3, 4], n_trials=1, rng=0)
    assert [s.k for s in res.summaries] == [1]
    assert res.skipped == (
        (3, "removing 3 of 4 models leaves 1 (< 2)"),
        (4, "removing 4 of 4 models leaves 0 (< 2)"),
    )


def test_it_reports_an_undefined_rho_with_its_reason():
    # m0 and m1 are mirror images (swap them and swap q0<->q1, q2<->q3), in
    # the full pool and without m2, so their competencies are equal in both
    # runs: Spearman over the two remaining models compares constant vectors.
    R = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 0], [0, 1, 0]], dtype=float)
    trial = leave_one_out_models(R).summaries[0].trials[2]
    assert trial.competency_rho.value is None
    assert trial.competency_rho.undefined_reason.startswith("the first vector is constant")


def test_it_records_a_reduced_pool_on_which_eip_fails():
    # Columns 0 and 1 are identical: without column 2 every question is all
    # solved or all failed, so EIP keeps nothing and raises; the trial says so.
    R = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1], [0, 0, 0]], dtype=float)
    trial = leave_one_out_models(R).summaries[0].trials[2]
    assert trial.error is not None
    assert trial.competency_rho.value is None
    assert trial.competency_rho.undefined_reason.startswith("EIP failed on the reduced pool")
    assert trial.n_filter_changes is None


def test_it_gives_rho_one_when_dropping_a_dataset_of_a_nested_suite():
    # Both datasets are nested with the same model order, so each one alone
    # still orders the 5 models strictly by index (see guttman()).
    a = guttman(5, [1, 2, 3, 4, 0])
    b = guttman(5, [1, 1, 2, 3, 4, 4, 5])
    R = np.vstack([a, b])
    groups = ["a"] * 5 + ["b"] * 7
    res = leave_one_dataset_out(R, groups)
    assert [r.dataset for r in res.removals] == ["a", "b"]
    assert [r.n_questions_removed for r in res.removals] == [5, 7]
    for r in res.removals:
        assert r.competency_rho.value == pytest.approx(1.0, abs=1e-12)
    assert res.competency_rho.mean == pytest.approx(1.0, abs=1e-12)
    assert res.competency_rho.std == pytest.approx(0.0, abs=1e-12)


def test_it_records_a_dataset_whose_removal_leaves_a_model_unobserved():
    nan = np.nan
    R = np.array([[1, 0, 1], [0, 1, 0], [1, 1, nan], [0, 1, nan]])
    res = leave_one_dataset_out(R, ["x", "x", "y", "y"])
    without_x = res.removals[0]
    assert without_x.error is not None and "no observed cell" in without_x.error
    assert without_x.competency_rho.value is None
    assert res.competency_rho.n_undefined == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ks": [0]}, "ks must be an integer >= 1; got 0"),
        ({"n_trials": 0}, "n_trials must be an integer >= 1; got 0"),
        ({"alpha": 1.0}, "alpha must lie in (0.0, 1.0); got 1.0"),
    ],
)
def test_it_rejects_bad_arguments(kwargs, message):
    R = (np.random.default_rng(0).random((20, 4)) < 0.5).astype(float)
    with pytest.raises(ValueError) as exc:
        model_removal_robustness(R, **kwargs)
    assert str(exc.value) == message


def test_it_rejects_a_single_dataset():
    R = (np.random.default_rng(0).random((20, 4)) < 0.5).astype(float)
    with pytest.raises(ValueError, match=r"groups must hold at least 2 distinct datasets; got \['a'\]"):
        leave_one_dataset_out(R, ["a"] * 20)


def test_correlation_and_summary_helpers_explain_undefined_values():
    assert correlation([1, 2], [3, 3]).undefined_reason == "the second vector is constant (3) over the 2 pairs"
    assert correlation([1, np.nan], [2, 3]).undefined_reason == "fewer than 2 paired values (n = 1)"
    # Spearman of (1,2,3) vs (1,3,2): d = (0,1,1), rho = 1 - 6*2/(3*8) = 0.5
    assert correlation([1, 2, 3], [1, 3, 2]).value == pytest.approx(0.5, abs=1e-12)
    s = summarise([1.0, None, 3.0])
    assert (s.mean, s.std, s.n, s.n_undefined) == (2.0, pytest.approx(2**0.5, abs=1e-12), 2, 1)


def test_it_is_stable_on_mmlu_pro_when_one_model_is_left_out(shared_data):
    df = pd.read_csv(shared_data / "mmlu-pro" / "responses_binary.csv")
    R = df.drop(columns="question_id").to_numpy(dtype=float)
    summary = leave_one_out_models(R).summaries[0]
    # Paper (E.1, 30 models, 6 datasets): difficulty 0.9978 +/- 0.0024,
    # competency 0.9997. On MMLU-Pro's 32 models we require >= 0.99 for both.
    assert summary.difficulty_rho.mean > 0.99
    assert summary.competency_rho.mean > 0.99
    assert summary.difficulty_rho.n == 32
