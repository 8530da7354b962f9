"""Model-pool analysis: dead nodes, agreement with the whole pool, pool builders."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.analyses.pools import access_pools, pool_analysis, size_pools
from scoring.eip import eip

nan = np.nan

# 4 questions x 3 models, worked by hand below.
R_4X3 = np.array(
    [
        [1, 1, 1],  # q0: every observed credit 1   -> all solved
        [0, 0, nan],  # q1: every observed credit 0 -> all failed
        [1, 0, 1],  # q2: mixed                     -> kept
        [nan, nan, nan],  # q3: observed by nobody -> not in any denominator
    ]
)


def test_it_computes_dead_node_shares_by_hand():
    res = pool_analysis(R_4X3, {"m0+m2": np.array([True, False, True]), "m1": np.array([False, True, False])})
    whole = res.pools["whole"]
    # whole: observed q0,q1,q2 -> 3; solved {q0}, failed {q1}: 1/3, 1/3, dead 2/3
    assert (whole.n_observed, whole.n_all_solved, whole.n_all_failed) == (3, 1, 1)
    assert whole.share_dead == pytest.approx(2 / 3, abs=1e-12)
    assert whole.undefined_reason is None
    pair = res.pools["m0+m2"]
    # m0+m2: q0 [1,1] solved, q1 [0,nan] failed, q2 [1,1] solved -> dead 3/3
    assert (pair.n_observed, pair.n_all_solved, pair.n_all_failed) == (3, 2, 1)
    assert pair.share_dead == pytest.approx(1.0, abs=1e-12)
    assert pair.eip is None and pair.undefined_reason.startswith("EIP failed on this pool")
    single = res.pools["m1"]
    # m1: q0 [1] solved, q1 [0] failed, q2 [0] failed -> solved 1/3, failed 2/3
    assert single.share_all_solved == pytest.approx(1 / 3, abs=1e-12)
    assert single.share_all_failed == pytest.approx(2 / 3, abs=1e-12)
    assert single.undefined_reason == "pool has 1 model(s); EIP needs at least 2"
    assert single.correlations["kendall"].value is None


def test_it_agrees_perfectly_when_a_pool_equals_the_whole():
    rng = np.random.default_rng(0)
    R = (rng.random((80, 6)) < rng.random(6)[None, :]).astype(float)
    res = pool_analysis(R, {"everyone": np.ones(6, dtype=bool)})
    everyone, whole = res.pools["everyone"], res.pools["whole"]
    for method in ("spearman", "pearson", "kendall"):
        assert everyone.correlations[method].value == pytest.approx(1.0, abs=1e-12)
        assert whole.correlations[method].value == pytest.approx(1.0, abs=1e-12)
    assert everyone.share_dead == whole.share_dead
    np.testing.assert_allclose(everyone.eip.difficulty, eip(R).difficulty, rtol=0, atol=1e-15)


def test_it_correlates_with_the_reference_over_questions_kept_in_both_like_scipy():
    rng = np.random.default_rng(1)
    R = (rng.random((200, 8)) < rng.random(8)[None, :]).astype(float)
    mask = np.array([True, True, False, True, False, True, False, False])
    res = pool_analysis(R, {"half": mask})
    sub, full = eip(R[:, mask]), eip(R)
    both = sub.kept & full.kept
    corr = res.pools["half"].correlations
    assert corr["spearman"].n == int(both.sum())
    x, y = sub.difficulty[both], full.difficulty[both]
    assert corr["spearman"].value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert corr["pearson"].value == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert corr["kendall"].value == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


def test_it_can_include_excluded_questions_at_0_and_100():
    rng = np.random.default_rng(2)
    R = (rng.random((60, 5)) < 0.5).astype(float)
    mask = np.array([True, True, True, False, False])
    default = pool_analysis(R, {"p": mask}).pools["p"].correlations["spearman"]
    wide = pool_analysis(R, {"p": mask}, include_excluded=True).pools["p"].correlations["spearman"]
    sub, full = eip(R[:, mask]), eip(R)
    assert default.n == int((sub.kept & full.kept).sum())
    assert wide.n == 60  # fully observed: every question enters
    expected = stats.spearmanr(sub.difficulty_scaled, full.difficulty_scaled).statistic
    assert wide.value == pytest.approx(expected, abs=1e-12)


def test_it_uses_a_named_reference_pool():
    R = (np.random.default_rng(3).random((50, 4)) < 0.5).astype(float)
    pools = {"a": np.array([True, True, True, False]), "b": np.array([True, True, True, False])}
    res = pool_analysis(R, pools, reference="a")
    assert "whole" not in res.pools
    assert res.pools["b"].correlations["pearson"].value == pytest.approx(1.0, abs=1e-12)


def test_it_rejects_an_unknown_reference_and_bad_masks():
    with pytest.raises(ValueError) as exc:
        pool_analysis(R_4X3, {"a": np.array([True, True, False])}, reference="b")
    assert str(exc.value) == "reference must name one of the pools ['a'] or be 'whole'; got 'b'"
    with pytest.raises(ValueError) as exc:
        pool_analysis(R_4X3, {"a": [1, 0, 1]})
    assert str(exc.value) == "pools['a'] must be a boolean mask of shape (3,); got dtype int64 and shape (3,)"


def test_it_builds_size_pools_with_documented_boundaries():
    pools = size_pools([0.5, 8, 10, 34, 70, 405, None, float("nan")])
    # small < 10 <= medium < 70 <= large; None and NaN are unknown
    assert pools.masks["small"].tolist() == [True, True, False, False, False, False, False, False]
    assert pools.masks["medium"].tolist() == [False, False, True, True, False, False, False, False]
    assert pools.masks["large"].tolist() == [False, False, False, False, True, True, False, False]
    assert pools.unknown.tolist() == [False] * 6 + [True, True]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ([[1, -2]], {}, "parameters_b must be positive finite or NaN/None; got -2.0 at model 1"),
        ([[1, 2]], {"thresholds": (70, 10)}, "thresholds must be strictly increasing positive numbers; got (70, 10)"),
        (
            [[1, 2]],
            {"labels": ("s", "l")},
            "labels must be 3 distinct names (one more than thresholds); got ('s', 'l')",
        ),
    ],
)
def test_it_rejects_bad_size_pool_input(args, kwargs, message):
    with pytest.raises(ValueError) as exc:
        size_pools(*args, **kwargs)
    assert str(exc.value) == message


def test_it_builds_access_pools_and_rejects_unknown_labels():
    pools = access_pools(["open-weight", "Proprietary", None, "open_weight", "", "API", "unknown"])
    assert pools.masks["open-weight"].tolist() == [True, False, False, True, False, False, False]
    assert pools.masks["proprietary"].tolist() == [False, True, False, False, False, True, False]
    assert pools.unknown.tolist() == [False, False, True, False, True, False, True]
    with pytest.raises(ValueError) as exc:
        access_pools(["open", "gated"])
    assert str(exc.value) == "access[1] must be 'open-weight', 'proprietary' or None; got 'gated'"


def test_a_mixed_pool_has_fewer_dead_nodes_than_homogeneous_ones():
    # Figure 8's mechanism on a 1PL simulation: weak models alone fail many
    # questions together, strong models alone solve many together; mixing
    # them leaves fewer questions solved or failed by all.
    rng = np.random.default_rng(7)
    theta = np.concatenate([np.full(4, -2.5), np.full(4, 2.5)])
    beta = rng.normal(0, 1.5, 3000)
    R = (rng.random((3000, 8)) < 1 / (1 + np.exp(-(theta[None, :] - beta[:, None])))).astype(float)
    res = pool_analysis(R, {"weak": theta < 0, "strong": theta > 0})
    whole = res.pools["whole"].share_dead
    assert whole < res.pools["weak"].share_dead
    assert whole < res.pools["strong"].share_dead
    assert res.pools["weak"].share_all_failed > res.pools["weak"].share_all_solved
    assert res.pools["strong"].share_all_solved > res.pools["strong"].share_all_failed
