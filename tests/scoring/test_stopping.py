"""Stopping rules and projections (scoring.stopping)."""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from scoring.stopping import (
    budget_spent,
    project_reliability,
    project_sign_test,
    reliability_reached,
    sequential_sign_test,
    sign_test_first_decision,
)

# --- the sequential sign test -------------------------------------------------------------


def test_e_value_matches_the_beta_mixture_by_hand():
    # n = 8 discordant votes, all for A: E = 2**8 * B(9, 1) = 256 / 9 = 28.44 >= 1 / 0.05 = 20: decided.
    st = sequential_sign_test(8, 8, alpha="0.05")
    assert st.e_value == pytest.approx(256 / 9, rel=1e-12)
    assert st.decided and st.favoured == "a"
    # n = 7, all for A: E = 128 / 8 = 16 < 20: not yet.
    assert not sequential_sign_test(7, 7, alpha="0.05").decided
    # 3 of 10: E = 2**10 * B(4, 8) = 1024 * 3! 7! / 11! = 1024 / 1320.
    assert sequential_sign_test(3, 10).e_value == pytest.approx(1024 / 1320, rel=1e-12)


@pytest.mark.parametrize("n", [1, 5, 30, 200])
def test_e_value_agrees_with_scipy_beta(n):
    for s in range(n + 1):
        want = 2.0**n * special.beta(s + 1, n - s + 1)
        assert sequential_sign_test(s, n).e_value == pytest.approx(want, rel=1e-9)


def test_decision_at_the_threshold_is_exact():
    # 7 of 7: E = 16 exactly. alpha = 1/16 -> E >= 1/alpha holds with equality: decided.
    assert sequential_sign_test(7, 7, alpha=Fraction(1, 16)).decided
    assert sequential_sign_test(7, 7, alpha="0.0625").decided
    # A hair below 1/16: 1/alpha > 16, not decided (float rounding of E could not be trusted here).
    assert not sequential_sign_test(7, 7, alpha="0.0624999999999").decided


def test_b_is_favoured_when_the_votes_side_with_b():
    st = sequential_sign_test(1, 20, alpha="0.05")
    assert st.decided and st.favoured == "b"


def test_confidence_sequence_excludes_one_half_exactly_when_decided():
    for n in range(1, 60):
        for s in range(n + 1):
            st = sequential_sign_test(s, n, alpha="0.05")
            outside = not (st.cs_low < 0.5 < st.cs_high)
            assert outside == st.decided, (s, n)
            assert st.cs_low <= s / n <= st.cs_high


def test_first_decision_is_at_the_scripted_vote():
    # Votes where only A agrees are discordant wins for A; concordant votes (both agree / both miss) do not count.
    agree_a = [True, True, True, False, True, True, True, True, True, True]
    agree_b = [True, False, False, False, False, False, False, False, False, False]
    # discordant from vote 2 on: wins after votes 2..10 = 1..8 of 1..8 -> E(8 of 8) = 28.4 >= 20 at vote 10;
    # E(7 of 7) = 16 < 20 at vote 9.
    assert sign_test_first_decision(agree_a, agree_b, alpha="0.05") == 10
    assert sign_test_first_decision(agree_a[:9], agree_b[:9], alpha="0.05") is None


@pytest.mark.slow
def test_error_rate_over_null_studies_is_at_most_alpha_when_looked_at_after_every_vote():
    """3,000 simulated null studies (each discordant vote a fair coin), 400 discordant votes each, the test
    looked at after every vote: the share that ever decides stays below alpha. A naive fixed-sample
    binomial test looked at as often rejects far more often (the failure this test guards against)."""
    rng = np.random.default_rng(2026)
    n_studies, n_votes, alpha = 3000, 400, 0.05
    coins = rng.random((n_studies, n_votes)) < 0.5
    rejected = 0
    for row in coins:
        rejected += sign_test_first_decision(row, ~row, alpha="0.05") is not None
    rate = rejected / n_studies
    assert rate <= alpha
    # Sanity of the simulation: peeking with a fixed-n two-sided binomial test (normal approximation).
    wins = np.cumsum(coins, axis=1)
    n = np.arange(1, n_votes + 1)
    z = np.abs(2 * wins - n) / np.sqrt(n)
    naive = float(np.mean((z[:, 9:] >= stats.norm.ppf(0.975)).any(axis=1)))
    assert naive > 2 * alpha
    assert rate > 0.0  # the test can reject under the null at all (it is not trivially conservative)


def test_it_decides_for_the_better_method_with_high_power():
    rng = np.random.default_rng(7)
    decided_for_a = 0
    for _ in range(200):
        sides = rng.random(400) < 0.7
        at = sign_test_first_decision(sides, ~sides, alpha="0.05")
        if at is not None and sequential_sign_test(int(sides[:at].sum()), at).favoured == "a":
            decided_for_a += 1
    assert decided_for_a >= 190


def test_sign_test_rejects_bad_input_naming_it():
    with pytest.raises(ValueError, match="wins_a must be an integer in"):
        sequential_sign_test(5, 4)
    with pytest.raises(ValueError, match="alpha must be a number in"):
        sequential_sign_test(1, 4, alpha=1.5)
    with pytest.raises(ValueError, match="agree_a and agree_b must be 1-D bool"):
        sign_test_first_decision([1, 0], [0, 1])


def test_sign_test_projection_brackets_the_plug_in():
    # 12 of 16 discordant (share 0.75) among 40 votes (rate 0.4).
    p = project_sign_test(12, 16, 40, alpha="0.05")
    assert 0 < p.low <= p.more_votes <= p.high
    # The plug-in: the first k (on the grid) at which 16 + 0.4 k discordant votes with 3/4 for A decide.
    k = int(p.more_votes)
    n, s = 16 + round(0.4 * k), 12 + round(0.4 * k * 0.75)
    assert sequential_sign_test(s, n).decided
    assert project_sign_test(8, 8, 20).more_votes == 0.0
    assert math.isinf(project_sign_test(8, 16, 30).more_votes)


# --- reliability ---------------------------------------------------------------------------


def test_reliability_threshold_is_exact():
    # float 0.8 is 0.8000000000000000444..., above 4/5; the float just below 0.8 is under it.
    assert reliability_reached(ssr=0.8, split_half=float("nan"), target="0.8")
    assert not reliability_reached(ssr=np.nextafter(0.8, 0), split_half=float("nan"), target="0.8")
    assert reliability_reached(ssr=0.9, split_half=0.8, target=Decimal("0.8"))
    assert not reliability_reached(ssr=0.9, split_half=0.79, target="0.8")
    assert not reliability_reached(ssr=float("nan"), split_half=0.95, target="0.8")
    with pytest.raises(ValueError, match="target must be a number in"):
        reliability_reached(ssr=0.5, split_half=0.5, target="1.2")


def test_projection_is_exact_when_the_odds_grow_in_proportion():
    # odds = n / 100: R = n / (n + 100). Target 0.8 = odds 4 = 400 votes.
    n = np.array([50, 100, 150, 200])
    r = n / (n + 100)
    p = project_reliability(n, r, target="0.8", slope=None)
    assert p.slope == pytest.approx(1.0, abs=1e-9)
    assert p.more_votes == pytest.approx(200.0, rel=1e-9)
    assert p.low == pytest.approx(200.0, rel=1e-6) and p.high == pytest.approx(200.0, rel=1e-6)


def test_projection_follows_a_steeper_growth_and_brackets_it():
    # odds = (n / 100)**1.5 with noise: the fitted slope is near 1.5 and the interval holds the truth.
    rng = np.random.default_rng(3)
    n = np.array([100, 200, 300, 400, 500, 600])
    odds = (n / 100) ** 1.5 * np.exp(rng.normal(0, 0.02, n.size))
    p = project_reliability(n, odds / (1 + odds), target="0.95", slope=None)
    truth = 100 * 19 ** (1 / 1.5) - 600  # odds 19
    assert p.slope == pytest.approx(1.5, abs=0.1)
    assert p.low <= truth <= p.high
    assert p.more_votes == pytest.approx(truth, rel=0.1)


def test_the_default_projection_grows_the_odds_like_votes_to_the_1_2_through_the_last_point():
    # 0.5 at 100 votes (odds 1) -> odds 4: 100 * 4**(1/1.2) = 317.5, so 217.5 more; the interval uses
    # exponents 1.5 (100 * 4**(2/3) - 100 = 151.98) and 1.0 (300).
    p = project_reliability([50, 100], [0.1, 0.5], target="0.8")
    assert p.more_votes == pytest.approx(100 * 4 ** (1 / 1.2) - 100, rel=1e-12)
    assert p.low == pytest.approx(100 * 4 ** (2 / 3) - 100, rel=1e-12)
    assert p.high == pytest.approx(300.0, rel=1e-12)


def test_projection_needs_history_and_says_when_reached():
    # One usable point: proportional odds through it. 0.5 at 100 votes (odds 1) -> odds 4 at 400: 300 more;
    # the interval takes the slope in [0.75, 1.33]: 100 * 4**(1/0.75) - 100 = 534.96 and 100 * 4**0.75 - 100.
    single = project_reliability([100], [0.5], target="0.8", slope=None)
    assert single.more_votes == pytest.approx(300.0, rel=1e-12)
    assert single.low == pytest.approx(100 * 4**0.75 - 100, rel=1e-9)
    assert single.high == pytest.approx(100 * 4 ** (4 / 3) - 100, rel=1e-9)
    assert project_reliability([50, 100], [-0.2, 0.5], target="0.8",
                               slope=None).more_votes == pytest.approx(300.0, rel=1e-12)
    assert math.isnan(project_reliability([100, 200], [0.5, float("nan")], target="0.8").more_votes)
    assert math.isnan(project_reliability([], [], target="0.8").more_votes)
    assert project_reliability([100, 200], [0.5, 0.85], target="0.8").more_votes == 0.0
    with pytest.raises(ValueError, match="reliability must be a 1-D array"):
        project_reliability([1, 2], [0.5], target="0.8")


# --- budget ---------------------------------------------------------------------------------


def test_budget_in_judgments_and_money_is_exact():
    assert budget_spent(n_judgments=100, max_judgments=100)
    assert not budget_spent(n_judgments=99, max_judgments=100)
    # 3 x 0.1 = 0.3 exactly in Decimal (in binary floats 0.1 * 3 > 0.3 and 0.1 + 0.2 > 0.3).
    assert budget_spent(n_judgments=3, budget="0.3", pay_per_judgment="0.1")
    assert not budget_spent(n_judgments=2, budget="0.3", pay_per_judgment="0.1")
    assert not budget_spent(n_judgments=10**6)
    with pytest.raises(ValueError, match="budget must be a finite number >= 0"):
        budget_spent(n_judgments=1, budget="-1", pay_per_judgment="0.1")
