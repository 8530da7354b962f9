"""Pair verdicts, method-vs-human agreement, bootstrap CI, exact McNemar."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar

from scoring.agreement import cohen_kappa
from scoring.pairs import (
    FIRST,
    SECOND,
    SKIP,
    TIE,
    UNDEFINED,
    Verdict,
    bootstrap_agreement_ci,
    harder_of_pairs,
    mcnemar_exact,
    method_agreement,
    verdict_counts,
)

NAN = float("nan")


def test_it_exposes_the_documented_verdict_codes():
    assert (int(FIRST), int(SECOND), int(TIE), int(UNDEFINED), int(SKIP)) == (0, 1, 2, -1, 3)
    assert Verdict(0) is FIRST


# --------------------------------------------------------------------------- harder_of_pairs


def test_it_says_which_question_of_each_pair_is_harder():
    d = [3.0, 1.0, 3.0, NAN, 2.5]
    pairs = [[0, 1], [1, 0], [0, 2], [0, 3], [3, 4], [4, 2]]
    # 3 > 1 -> FIRST; 1 < 3 -> SECOND; 3 == 3 -> TIE; NaN -> UNDEFINED twice; 2.5 < 3 -> SECOND
    out = harder_of_pairs(d, pairs)
    assert out.dtype == np.int8
    assert out.tolist() == [0, 1, 2, -1, -1, 1]


def test_it_calls_scores_within_atol_a_tie():
    d = [1.0, 1.05, 2.0]
    assert harder_of_pairs(d, [[0, 1], [1, 2]], atol=0.1).tolist() == [TIE, SECOND]
    assert harder_of_pairs(d, [[0, 1]]).tolist() == [SECOND]


def test_it_returns_an_empty_verdict_array_for_no_pairs():
    assert harder_of_pairs([1.0, 2.0], np.empty((0, 2), dtype=int)).shape == (0,)


@pytest.mark.parametrize(
    ("difficulty", "pairs", "message"),
    [
        ([1.0, 2.0], [[0, 2]], r"pairs has the index 2 at row 0; questions are 0..1"),
        ([1.0, 2.0], [[1, 1]], r"pairs row 0 pairs question 1 with itself"),
        ([1.0, 2.0], [[0, 1, 1]], r"pairs must have shape \(n_pairs, 2\)"),
        ([1.0, 2.0], [[0.0, 1.0]], r"pairs must hold integer question indices"),
        ([1.0, np.inf], [[0, 1]], r"difficulty has an infinite value at question 1"),
        ([[1.0, 2.0]], [[0, 1]], r"difficulty must be 1-dimensional"),
    ],
)
def test_it_rejects_malformed_difficulty_or_pairs(difficulty, pairs, message):
    with pytest.raises(ValueError, match=message):
        harder_of_pairs(difficulty, pairs)


def test_it_rejects_a_negative_tolerance():
    with pytest.raises(ValueError, match=r"atol must be a finite number >= 0; got -1"):
        harder_of_pairs([1.0, 2.0], [[0, 1]], atol=-1)


def test_it_counts_every_verdict_kind_including_ties():
    c = verdict_counts([0, 0, 1, 2, 2, 2, -1, 3])
    counts = (c.n_first, c.n_second, c.n_tie, c.n_undefined, c.n_skip, c.n_total)
    assert counts == (2, 1, 3, 1, 1, 8)


def test_it_rejects_an_unknown_verdict_code():
    with pytest.raises(ValueError, match=r"verdicts has the code 7 at position 1"):
        verdict_counts([0, 7])


# --------------------------------------------------------------------------- method_agreement

# pair:        1  2  3  4   5  6  7   8
METHOD = [0, 1, 2, 0, -1, 1, 0, 1]
HUMAN = [0, 1, 0, 1, 0, 3, -1, 1]
# pairs 6 (skip) and 7 (no consensus) are excluded -> 6 scored pairs:
#   agree on 1, 2, 8 = 3; method tie on 3; method undefined on 5; miss on 4.


def test_it_scores_agreement_with_ties_as_misses_and_without_them():
    r = method_agreement(METHOD, HUMAN)
    assert (r.n_pairs, r.n_agree, r.n_ties, r.n_undefined, r.n_human_excluded) == (6, 3, 1, 1, 2)
    assert r.agreement == pytest.approx(3 / 6, abs=1e-15)
    assert r.agreement_excluding_ties == pytest.approx(3 / 4, abs=1e-15)


def test_it_computes_kappa_with_method_ties_as_a_label_of_their_own():
    # scored: method [0, 1, 2, 0, -1, 1], human [0, 1, 0, 1, 0, 1]
    # p_o = 3/6; human marginals 0:3, 1:3; method 0:2, 1:2, 2:1, -1:1
    # p_e = (3*2 + 3*2) / 36 = 1/3; kappa = (1/2 - 1/3) / (2/3) = 1/4
    k = method_agreement(METHOD, HUMAN).kappa
    assert k.kappa == pytest.approx(0.25, abs=1e-14)
    assert k.p_e == pytest.approx(1 / 3, abs=1e-15)
    assert k.kappa == pytest.approx(
        cohen_kappa_score([0, 1, 2, 0, -1, 1], [0, 1, 0, 1, 0, 1]), abs=1e-12
    )


def test_it_reports_no_agreement_when_no_pair_has_a_human_verdict():
    r = method_agreement([0, 1], [3, -1])
    assert r.n_pairs == 0 and r.agreement is None and r.agreement_excluding_ties is None
    assert r.kappa.kappa is None


def test_it_rejects_a_skip_from_a_method_and_length_mismatch():
    with pytest.raises(ValueError, match=r"verdicts_method has the code 3 at position 0"):
        method_agreement([3], [0])
    with pytest.raises(ValueError, match="must have the same length; got 2 and 1"):
        method_agreement([0, 1], [0])


# --------------------------------------------------------------------------- bootstrap


def _random_verdicts(seed: int, n: int = 70):
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 2, n)
    method = np.where(rng.random(n) < 0.8, human, 1 - human)
    method[rng.random(n) < 0.1] = TIE
    return method, human


def test_it_gives_a_bootstrap_interval_around_the_point_estimate():
    m, h = _random_verdicts(1)
    point = method_agreement(m, h)
    ci = bootstrap_agreement_ci(m, h, n_boot=500, rng=3)
    assert ci.agreement[0] <= point.agreement <= ci.agreement[1]
    assert ci.kappa[0] <= point.kappa.kappa <= ci.kappa[1]
    assert ci.agreement[0] < ci.agreement[1]
    assert (ci.n_boot, ci.level) == (500, 0.95)


def test_it_reproduces_the_same_interval_with_the_same_seed():
    m, h = _random_verdicts(2)
    a = bootstrap_agreement_ci(m, h, n_boot=300, rng=11)
    b = bootstrap_agreement_ci(m, h, n_boot=300, rng=np.random.default_rng(11))
    c = bootstrap_agreement_ci(m, h, n_boot=300, rng=12)
    assert a == b
    assert a != c


def test_it_matches_a_slow_bootstrap_loop_over_the_documented_draws():
    m, h = _random_verdicts(4, n=30)
    h_with_excluded = np.concatenate([h, [SKIP, UNDEFINED]])
    m_with_excluded = np.concatenate([m, [FIRST, SECOND]])
    n_boot, level = 200, 0.9
    ci = bootstrap_agreement_ci(m_with_excluded, h_with_excluded, n_boot=n_boot, level=level, rng=5)
    # Slow: the documented draws over the 30 scored pairs, each replicate through cohen_kappa.
    idx = np.random.default_rng(5).integers(0, 30, size=(n_boot, 30))
    agree = [float(np.mean(m[i] == h[i])) for i in idx]
    kappas = [cohen_kappa(m[i].tolist(), h[i].tolist()).kappa for i in idx]
    kappas = [k for k in kappas if k is not None]
    q = (0.05, 0.95)
    assert ci.agreement == pytest.approx(tuple(np.quantile(agree, q)), abs=1e-12)
    assert ci.kappa == pytest.approx(tuple(np.quantile(kappas, q)), abs=1e-12)
    assert ci.n_kappa_undefined == n_boot - len(kappas)


def test_it_leaves_undefined_kappa_replicates_out_and_counts_them():
    # one scored pair: every replicate has a single human and method label -> p_e = 1
    ci = bootstrap_agreement_ci([0], [0], n_boot=50)
    assert ci.agreement == (1.0, 1.0)
    assert ci.kappa is None and ci.n_kappa_undefined == 50


def test_it_refuses_to_bootstrap_without_scored_pairs_or_with_bad_knobs():
    with pytest.raises(ValueError, match="no pair has a human verdict FIRST or SECOND"):
        bootstrap_agreement_ci([0], [3])
    with pytest.raises(ValueError, match=r"n_boot must be an integer >= 1; got 0"):
        bootstrap_agreement_ci([0], [0], n_boot=0)
    with pytest.raises(ValueError, match=r"level must lie in \(0.0, 1.0\); got 1.5"):
        bootstrap_agreement_ci([0], [0], level=1.5)
    with pytest.raises(ValueError, match="rng must be a numpy Generator"):
        bootstrap_agreement_ci([0], [0], rng="seed")


# --------------------------------------------------------------------------- McNemar


def test_it_computes_an_exact_mcnemar_p_value_by_hand():
    # b = 8 (only a right), c = 2 (only b right), plus 5 concordant pairs.
    # two-sided exact: 2 * P(X <= 2 | n = 10, p = 1/2) = 2 * (1 + 10 + 45) / 1024 = 0.109375
    a = [1] * 8 + [0] * 2 + [1] * 3 + [0] * 2
    b = [0] * 8 + [1] * 2 + [1] * 3 + [0] * 2
    r = mcnemar_exact(a, b)
    assert (r.b, r.c, r.n_discordant, r.n, r.statistic) == (8, 2, 10, 15, 2)
    assert r.p_value == pytest.approx(0.109375, abs=1e-15)


def test_it_gives_p_one_without_discordant_pairs_and_drops_missing():
    r = mcnemar_exact([1, 0, None, 1], [1, 0, 1, np.nan])
    assert (r.b, r.c, r.n, r.p_value) == (0, 0, 2, 1.0)


def test_it_matches_statsmodels_exact_mcnemar():
    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(5, 60))
        a = rng.random(n) < rng.uniform(0.3, 0.9)
        b = rng.random(n) < rng.uniform(0.3, 0.9)
        r = mcnemar_exact(a, b)
        table = [
            [int((a & b).sum()), int((a & ~b).sum())],
            [int((~a & b).sum()), int((~a & ~b).sum())],
        ]
        ref = mcnemar(table, exact=True)
        assert r.statistic == ref.statistic
        assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_it_rejects_non_binary_outcomes():
    with pytest.raises(ValueError, match=r"correct_b has the value 2.0 at position 1"):
        mcnemar_exact([1, 0], [1, 2])
