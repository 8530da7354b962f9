"""Difficulty profiles per dataset (figure 9)."""
from __future__ import annotations

import numpy as np
import pytest

from scoring.analyses.profiles import difficulty_profiles

nan = np.nan


def test_it_histograms_and_summarises_each_group_by_hand():
    # group a: 0, 10, 20, 30, 40 -> mean 20, median 20, q1 10, q3 30;
    #   thirds [0, 33.3), [33.3, 66.7), [66.7, 100]: 4, 1, 0 of 5; one 0.
    # group b: 50, 99, 100 and one NaN -> 3 values, 1 missing; thirds 0, 1, 2.
    d = [0, 10, 20, 30, 40, 50, 99, 100, nan]
    g = ["a"] * 5 + ["b"] * 4
    res = difficulty_profiles(d, g, bins=4)
    np.testing.assert_array_equal(res.bin_edges, [0, 25, 50, 75, 100])
    a, b = res.groups["a"], res.groups["b"]
    assert a.counts.tolist() == [3, 2, 0, 0]
    assert (a.mean, a.median, a.q1, a.q3) == pytest.approx((20, 20, 10, 30), abs=1e-12)
    assert a.tertile_shares == pytest.approx((4 / 5, 1 / 5, 0), abs=1e-12)
    assert (a.share_at_0, a.share_at_100) == pytest.approx((1 / 5, 0), abs=1e-12)
    assert b.counts.tolist() == [0, 0, 1, 2]  # 100 falls in the last, closed bin
    assert (b.n, b.n_missing) == (3, 1)
    assert b.tertile_shares == pytest.approx((0, 1 / 3, 2 / 3), abs=1e-12)
    assert b.share_at_100 == pytest.approx(1 / 3, abs=1e-12)
    assert res.overall.n == 8 and res.overall.n_missing == 1


def test_its_histogram_counts_sum_to_the_number_of_values():
    rng = np.random.default_rng(0)
    d = rng.uniform(0, 100, 1000)
    d[rng.random(1000) < 0.1] = 0.0
    d[rng.random(1000) < 0.1] = 100.0
    d[:7] = nan
    groups = rng.choice(["GSM8k", "MATH", "GPQA"], 1000)
    res = difficulty_profiles(d, groups, bins=20)
    for label, profile in res.groups.items():
        present = (~np.isnan(d)) & (groups == label)
        assert profile.counts.sum() == profile.n == present.sum()
        assert sum(profile.tertile_shares) == pytest.approx(1.0, abs=1e-12)
    assert res.overall.counts.sum() == 993
    assert list(res.groups) == list(dict.fromkeys(groups))


def test_an_all_missing_group_has_no_statistics():
    res = difficulty_profiles([nan, 50.0], ["x", "y"], bins=2)
    x = res.groups["x"]
    assert (x.n, x.n_missing, x.mean, x.tertile_shares) == (0, 1, None, None)
    assert x.counts.tolist() == [0, 0]


@pytest.mark.parametrize(
    ("d", "groups", "bins", "message"),
    [
        ([10, 101], ["a", "a"], 5, "difficulty_scaled must lie in [0, 100] (or be NaN); got 101.0 at question 1"),
        ([10, 20], ["a"], 5, "groups must be 1-D with 2 entries (one per question); got shape (1,)"),
        ([10, 20], ["a", "b"], 0, "bins must be an integer >= 1; got 0"),
    ],
)
def test_it_rejects_bad_input(d, groups, bins, message):
    with pytest.raises(ValueError) as exc:
        difficulty_profiles(d, groups, bins=bins)
    assert str(exc.value) == message
