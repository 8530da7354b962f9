"""Simple Rank, accuracy, accuracy-based difficulty, dataset-weighted accuracy."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring.baselines import (
    ERR_ALL_WEIGHTS_ZERO,
    accuracy,
    dataset_difficulty_weights,
    question_accuracy_difficulty,
    simple_rank,
    weighted_accuracy,
)

NAN = np.nan

# 3 questions x 3 models, partial credit, q2 never observed.
R_PARTIAL = np.array(
    [
        [1.0, 0.0, NAN],
        [0.5, 0.25, 0.0],
        [NAN, NAN, NAN],
    ]
)


def test_it_counts_failures_over_observed_cells_only():
    # q0: (1 - 1) + (1 - 0) = 1; q1: 0.5 + 0.75 + 1 = 2.25; q2: nothing observed -> 0
    assert simple_rank(R_PARTIAL).tolist() == [1.0, 2.25, 0.0]


def test_it_counts_wrong_models_for_binary_input_of_any_dtype():
    R = [[1, 0, 0], [1, 1, 0], [0, 0, 0]]
    # wrong answers per question: 2, 1, 3
    for dtype in (np.uint8, np.int64, bool, np.float32, np.float64):
        out = simple_rank(np.asarray(R, dtype=dtype))
        assert out.dtype == np.float64
        assert out.tolist() == [2.0, 1.0, 3.0]


def test_it_averages_credit_per_model_over_observed_cells():
    # m0: (1 + 0.5) / 2 = 0.75; m1: (0 + 0.25) / 2 = 0.125; m2: 0 / 1 = 0
    np.testing.assert_allclose(accuracy(R_PARTIAL), [0.75, 0.125, 0.0], rtol=0, atol=1e-15)


def test_it_gives_accuracy_based_difficulty_and_nan_for_unseen_questions():
    # q0: 1 - 1/2 = 0.5; q1: 1 - 0.75/3 = 0.75; q2: NaN
    out = question_accuracy_difficulty(R_PARTIAL)
    np.testing.assert_allclose(out[:2], [0.5, 0.75], rtol=0, atol=1e-15)
    assert np.isnan(out[2])


def test_it_permutes_accuracy_when_models_are_permuted():
    rng = np.random.default_rng(0)
    R = rng.random((40, 6))
    R[rng.random(R.shape) < 0.2] = NAN
    perm = rng.permutation(6)
    np.testing.assert_allclose(accuracy(R[:, perm]), accuracy(R)[perm], rtol=0, atol=1e-15)


def test_it_keeps_simple_rank_equal_to_observed_count_times_difficulty():
    # failures = n_observed * (1 - mean credit) on every observed question
    rng = np.random.default_rng(1)
    R = rng.random((50, 7))
    R[rng.random(R.shape) < 0.3] = NAN
    R[:, 0] = 0.5  # keep every model observed somewhere
    n_obs = (~np.isnan(R)).sum(axis=1)
    expected = n_obs * question_accuracy_difficulty(R)
    np.testing.assert_allclose(simple_rank(R), expected, rtol=0, atol=1e-12)


def test_it_rejects_credit_outside_zero_one():
    with pytest.raises(ValueError, match=r"R has credit .*1\.5.* at \(question 0, model 1\)"):
        simple_rank([[0.0, 1.5]])


# --------------------------------------------------------------------------- weighted accuracy


def test_it_weights_datasets_by_their_difficulty():
    # easy: q0 [1, 1], q1 [1, 0]  -> acc m0 = 1, m1 = 1/2; abar = 3/4; w = 1/4
    # hard: q2 [0, 0], q3 [1, 0]  -> acc m0 = 1/2, m1 = 0; abar = 1/4; w = 3/4
    # m0 = (1/4 * 1 + 3/4 * 1/2) / 1 = 5/8; m1 = (1/4 * 1/2 + 0) / 1 = 1/8
    R = [[1, 1], [1, 0], [0, 0], [1, 0]]
    out = weighted_accuracy(R, ["easy", "easy", "hard", "hard"])
    np.testing.assert_allclose(out, [5 / 8, 1 / 8], rtol=0, atol=1e-15)


def test_it_leaves_a_dataset_out_of_the_average_of_a_model_that_never_saw_it():
    # easy: q0 [1, 1, -], q1 [1, 0, -] -> acc m0 = 1, m1 = 1/2, m2 undefined; abar = 3/4; w = 1/4
    # hard: q2 [0, 0, 1], q3 [1, 0, 0] -> acc 1/2, 0, 1/2; abar = 1/3; w = 2/3
    # m0 = (1/4 + 2/3 * 1/2) / (1/4 + 2/3) = (7/12) / (11/12) = 7/11
    # m1 = (1/4 * 1/2) / (11/12) = 3/22
    # m2 = (2/3 * 1/2) / (2/3) = 1/2   (easy left out, not counted as 0)
    R = [[1, 1, NAN], [1, 0, NAN], [0, 0, 1], [1, 0, 0]]
    groups = np.array([2, 2, 7, 7])
    expected = [7 / 11, 3 / 22, 1 / 2]
    np.testing.assert_allclose(weighted_accuracy(R, groups), expected, rtol=0, atol=1e-15)
    dw = dataset_difficulty_weights(R, groups)
    assert dw.labels == (2, 7)
    np.testing.assert_allclose(dw.mean_accuracy, [3 / 4, 1 / 3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(dw.weights, [1 / 4, 2 / 3], rtol=0, atol=1e-15)
    assert np.isnan(dw.per_model_accuracy[0, 2])


def test_it_gives_nan_to_a_model_seen_only_on_zero_weight_datasets():
    # easy: everyone right -> w = 0. hard: q1 [0, 1, -] -> abar = 1/2, w = 1/2.
    # m0 = (0 * 1 + 1/2 * 0) / 1/2 = 0; m1 = (0 + 1/2 * 1) / 1/2 = 1; m2 only on easy -> 0/0 -> NaN
    R = [[1, 1, 1], [0, 1, NAN]]
    out = weighted_accuracy(R, ["easy", "hard"])
    assert out[:2].tolist() == [0.0, 1.0]
    assert np.isnan(out[2])


def test_it_refuses_weighted_accuracy_when_every_weight_is_zero():
    with pytest.raises(ValueError, match="every weight w_d = 1 - abar_d is 0") as e:
        weighted_accuracy(np.ones((4, 3), dtype=np.uint8), ["a", "a", "b", "b"])
    assert str(e.value) == ERR_ALL_WEIGHTS_ZERO


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        (["a", "b"], r"groups must have shape \(3,\), one label per question; got shape \(2,\)"),
        (["a", None, "b"], "groups has a missing label at question 1"),
        ([1.0, NAN, 2.0], "groups has a missing label at question 1"),
    ],
)
def test_it_rejects_malformed_groups(groups, message):
    with pytest.raises(ValueError, match=message):
        weighted_accuracy([[1, 0], [0, 0], [1, 1]], groups)


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def mmlu_pro(shared_data):
    folder = shared_data / "mmlu-pro"
    responses = pd.read_csv(folder / "responses_binary.csv", index_col="question_id")
    questions = pd.read_csv(folder / "questions.csv", usecols=["question_id", "category"],
                            index_col="question_id")
    return responses, questions.loc[responses.index, "category"]


def test_it_matches_pandas_on_mmlu_pro(mmlu_pro):
    # pandas skips blanks (NaN) in mean/sum, the same "observed cells only" convention,
    # computed by a different library on the DataFrame.
    responses, category = mmlu_pro
    R = responses.to_numpy(dtype=np.float64)
    assert np.isnan(R).any()  # DeepSeek-Coder-V2 and others miss questions
    np.testing.assert_allclose(accuracy(R), responses.mean().to_numpy(), rtol=0, atol=1e-12)
    wrong = (responses == 0).sum(axis=1).to_numpy(dtype=float)
    np.testing.assert_array_equal(simple_rank(R), wrong)
    np.testing.assert_allclose(question_accuracy_difficulty(R),
                               1.0 - responses.mean(axis=1).to_numpy(), rtol=0, atol=1e-12)
    # per-category accuracy (skipna), abar_d = mean over models, w_d = 1 - abar_d
    acc_md = responses.groupby(category.to_numpy()).mean()
    w = 1.0 - acc_md.mean(axis=1)
    expected = acc_md.mul(w, axis=0).sum() / acc_md.notna().mul(w, axis=0).sum()
    np.testing.assert_allclose(weighted_accuracy(R, category.to_numpy()), expected.to_numpy(),
                               rtol=0, atol=1e-12)


def test_blockwise_sums_of_a_float32_matrix_equal_those_of_its_float64_copy(monkeypatch):
    """Blocks of a few rows: float32 with NaN gives bit-for-bit the float64 sums."""
    import scoring.baselines as baselines
    from scoring.baselines import accuracy, question_accuracy_difficulty, simple_rank, weighted_accuracy

    monkeypatch.setattr(baselines, "_BLOCK_CELLS", 20)
    rng = np.random.default_rng(4)
    R = (rng.integers(0, 5, (50, 6)) / 4).astype(np.float32)
    R[rng.random(R.shape) < 0.3] = np.nan
    groups = rng.integers(0, 3, 50)
    wide = R.astype(np.float64)
    for f in (accuracy, question_accuracy_difficulty, simple_rank):
        np.testing.assert_array_equal(f(R), f(wide))
    np.testing.assert_array_equal(weighted_accuracy(R, groups), weighted_accuracy(wide, groups))
    observed = ~np.isnan(wide)
    np.testing.assert_allclose(accuracy(R), np.nansum(wide, axis=0) / observed.sum(axis=0), rtol=1e-15)
    expected_rank = observed.sum(axis=1) - np.nansum(wide, axis=1)
    np.testing.assert_allclose(simple_rank(R), expected_rank, rtol=1e-15, atol=1e-15)
