"""Pair verdicts, method-vs-human agreement, bootstrap CI, exact McNemar."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar

from scoring.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha
from scoring.baselines import simple_rank
from scoring.irt import irt_1pl
from scoring.methods import get_method
from scoring.pair_inference import bootstrap_agreement_ci, mcnemar_exact
from scoring.pairs import (
    FIRST,
    SECOND,
    SKIP,
    TIE,
    UNDEFINED,
    Verdict,
    flip_verdicts,
    harder_of_pairs,
    merge_ties,
    method_agreement,
    pair_kappa,
    tie_threshold,
    verdict_counts,
    with_reversed_pairs,
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


def test_it_computes_an_orientation_free_kappa_over_the_pairs_the_method_decided():
    # scored: method [0, 1, 2, 0, -1, 1], human [0, 1, 0, 1, 0, 1]; the tie and the
    # undefined verdict leave kappa (they are counted in n_ties, n_undefined).
    # decided: method [0, 1, 0, 1], human [0, 1, 1, 1] -> p_o = 3/4, p_e = 1/2,
    # kappa = (3/4 - 1/2) / (1/2) = 1/2
    r = method_agreement(METHOD, HUMAN)
    k = r.kappa
    assert (k.kappa, k.p_o, k.p_e, k.n) == (0.5, 0.75, 0.5, 4)
    assert k.p_o == r.agreement_excluding_ties
    # the generic Cohen's kappa on the decided pairs counted in both orientations agrees
    m, h = [0, 1, 0, 1], [0, 1, 1, 1]
    doubled = cohen_kappa(m + [1 - x for x in m], h + [1 - x for x in h])
    assert doubled.p_e == 0.5 and doubled.kappa == pytest.approx(0.5, abs=1e-15)
    assert cohen_kappa_score(m + [1 - x for x in m], h + [1 - x for x in h]) == pytest.approx(0.5, abs=1e-12)


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
    # Slow: the documented draws over the 30 scored pairs, each replicate's kappa through
    # the generic cohen_kappa on its decided pairs counted in both orientations.
    idx = np.random.default_rng(5).integers(0, 30, size=(n_boot, 30))
    agree = [float(np.mean(m[i] == h[i])) for i in idx]
    kappas = []
    for i in idx:
        dec = m[i] != TIE
        mi, hi = m[i][dec].tolist(), h[i][dec].tolist()
        if mi:
            kappas.append(cohen_kappa(mi + [1 - x for x in mi], hi + [1 - x for x in hi]).kappa)
    q = (0.05, 0.95)
    assert ci.agreement == pytest.approx(tuple(np.quantile(agree, q)), abs=1e-12)
    assert ci.kappa == pytest.approx(tuple(np.quantile(kappas, q)), abs=1e-12)
    assert ci.n_kappa_undefined == n_boot - len(kappas)


def test_it_leaves_undefined_kappa_replicates_out_and_counts_them():
    # one scored pair the method ties: no replicate has a decided pair -> kappa undefined
    ci = bootstrap_agreement_ci([TIE], [0], n_boot=50)
    assert ci.agreement == (0.0, 0.0)
    assert ci.kappa is None and ci.n_kappa_undefined == 50
    # one scored pair decided alike: orientation-free kappa is 2 * 1 - 1 = 1 in every replicate
    ci = bootstrap_agreement_ci([0], [0], n_boot=50)
    assert ci.kappa == (1.0, 1.0) and ci.n_kappa_undefined == 0


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


# --------------------------------------------------------------------------- tie tolerance


def test_it_calls_scores_within_a_relative_tolerance_of_the_spread_a_tie():
    # spread = 10 - 0 = 10, so tol 0.01 ties gaps up to 0.1: 5 vs 5.1 ties, 5 vs 5.2 does not
    d = [0.0, 5.0, 5.1, 5.2, 10.0]
    pairs = [[1, 2], [1, 3], [3, 1], [0, 4]]
    assert harder_of_pairs(d, pairs, tol=0.01).tolist() == [TIE, SECOND, FIRST, SECOND]
    assert harder_of_pairs(d, pairs).tolist() == [SECOND, SECOND, FIRST, SECOND]


def test_it_takes_the_spread_over_the_finite_values_only():
    # spread = 3 - 1 = 2 (NaN ignored), tol 0.25 -> threshold 0.5
    d = [1.0, 1.5, 3.0, NAN]
    assert tie_threshold(d, tol=0.25) == 0.5
    assert harder_of_pairs(d, [[0, 1], [1, 2], [0, 3]], tol=0.25).tolist() == [TIE, SECOND, UNDEFINED]


def test_it_ties_every_defined_pair_when_the_spread_is_zero():
    d = [2.0, 2.0, 2.0, NAN]
    assert tie_threshold(d, tol=1e-9) == 0.0
    assert harder_of_pairs(d, [[0, 1], [1, 2], [2, 3]], tol=1e-9).tolist() == [TIE, TIE, UNDEFINED]
    assert tie_threshold([NAN, 1.0], tol=1.0) == 0.0


def test_it_uses_the_larger_of_atol_and_the_relative_threshold():
    d = [0.0, 0.3, 10.0]  # relative threshold 0.01 * 10 = 0.1 < atol 0.5
    assert harder_of_pairs(d, [[0, 1]], tol=0.01, atol=0.5).tolist() == [TIE]
    assert harder_of_pairs(d, [[0, 1]], tol=0.01).tolist() == [SECOND]


@pytest.mark.parametrize("tol", [-1e-9, float("nan"), float("inf"), "x"])
def test_it_rejects_a_bad_relative_tolerance(tol):
    with pytest.raises(ValueError, match=r"tol must be a (finite number >= 0|number)"):
        harder_of_pairs([1.0, 2.0], [[0, 1]], tol=tol)


def test_merge_ties_gives_noise_level_neighbours_one_value_and_keeps_the_order():
    d = [2.0, 1.0 + 4e-16, 1.0, NAN, 1.0 + 2e-16, 3.0]
    merged = merge_ties(d, tol=1e-9)
    assert merged[[1, 2, 4]].tolist() == [1.0, 1.0, 1.0]
    assert merged[[0, 5]].tolist() == [2.0, 3.0]
    assert np.isnan(merged[3])
    # exact: nothing merges, the input is not modified
    assert merge_ties(d, tol=0.0)[1] == 1.0 + 4e-16 and d[1] == 1.0 + 4e-16
    # chains merge transitively: 0 ~ 0.1 ~ 0.2 with threshold 0.1 * 1 = 0.1 (spread 1)
    assert merge_ties([0.0, 0.1, 0.2, 1.0], tol=0.1).tolist() == [0.0, 0.0, 0.0, 1.0]


def _same_group_pairs(groups: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(groups.size, k=1)
    keep = groups[i] == groups[j]
    return np.column_stack([i[keep], j[keep]])


def test_1pl_gives_exactly_the_verdicts_of_simple_rank_on_complete_binary_data():
    # On complete 0/1 data the Rasch difficulty is a strictly increasing function of the
    # number of failures, so the two methods must give the same verdicts, ties included.
    rng = np.random.default_rng(0)
    R = (rng.random((400, 20)) < rng.uniform(0.2, 0.9, size=(1, 20))).astype(int)
    pairs = _same_group_pairs(np.arange(400) % 4)  # 4 groups of 100 -> 19,800 pairs
    assert len(pairs) == 19_800
    rasch = irt_1pl(R).difficulty
    exact = harder_of_pairs(simple_rank(R), pairs, tol=get_method("simple_rank").tie_tolerance)
    with_tol = harder_of_pairs(rasch, pairs, tol=get_method("irt_1pl").tie_tolerance)
    np.testing.assert_array_equal(with_tol, exact)
    assert int((exact == TIE).sum()) == 2775
    # The class of bug: compared exactly, noise of ~1e-16 between equal raw scores decides
    # most of those ties. How many depends on the floating-point path (BLAS build, thread
    # count), so only the direction is asserted: every changed verdict is a broken tie.
    without_tol = harder_of_pairs(rasch, pairs)
    changed = without_tol != exact
    assert np.all(exact[changed] == TIE)
    assert int((without_tol == TIE).sum()) + int(changed.sum()) == 2775
    # the noise is tiny next to the gaps between distinct raw scores
    failures = simple_rank(R)
    same = failures[pairs[:, 0]] == failures[pairs[:, 1]]
    gap = np.abs(rasch[pairs[:, 0]] - rasch[pairs[:, 1]])
    assert gap[same].max() < 1e-12 < 1e-3 < gap[~same].min()


@pytest.mark.slow
def test_1pl_gives_the_verdicts_of_simple_rank_on_complete_mmlu_pro_rows(shared_data):
    frame = pd.read_csv(shared_data / "mmlu-pro" / "responses_binary.csv", index_col="question_id")
    questions = pd.read_csv(shared_data / "mmlu-pro" / "questions.csv", index_col="question_id",
                            usecols=["question_id", "category"])
    complete = frame.dropna()
    R = complete.to_numpy(dtype=np.float64)
    assert R.shape == (10_298, 32)  # the rows every model answered
    categories = questions.loc[complete.index, "category"].to_numpy()
    pairs = _same_group_pairs(np.unique(categories, return_inverse=True)[1])
    exact = harder_of_pairs(simple_rank(R), pairs, tol=get_method("simple_rank").tie_tolerance)
    rasch = irt_1pl(R).difficulty
    np.testing.assert_array_equal(harder_of_pairs(rasch, pairs, tol=get_method("irt_1pl").tie_tolerance), exact)
    assert (len(pairs), int((exact == TIE).sum())) == (4_588_348, 168_154)
    # compared exactly, noise decides about half of those ties (80,215 ties left on our machine)
    assert int((harder_of_pairs(rasch, pairs) == TIE).sum()) < 0.9 * 168_154


# --------------------------------------------------------------------------- orientation-free agreement


def _reverse(v: np.ndarray, subset: np.ndarray) -> np.ndarray:
    """The verdicts with the pairs in ``subset`` stored the other way round (a and b swapped)."""
    out = np.asarray(v).copy()
    out[..., subset] = flip_verdicts(np.asarray(v)[..., subset])
    return out


def test_flip_verdicts_swaps_first_and_second_only():
    assert flip_verdicts([FIRST, SECOND, TIE, UNDEFINED, SKIP]).tolist() == [1, 0, 2, -1, 3]
    with pytest.raises(ValueError, match=r"verdicts must hold verdict codes .*; got \[7\]"):
        flip_verdicts([0, 7])


def test_pair_kappa_is_two_p_o_minus_one_over_the_pairs_both_decided():
    x = [0, 0, 1, 1, 0, 2, -1, 3, 1, 0]
    y = [0, 1, 1, 0, 0, 0, 1, 0, 3, 0]
    # both decided: positions 0-4 and 9 -> agree on 0, 2, 4, 9: p_o = 4/6
    p_o = Fraction(4, 6)
    r = pair_kappa(x, y)
    assert (r.n, r.p_e) == (6, 0.5)
    assert r.p_o == float(p_o)
    assert r.kappa == float(2 * p_o - 1) == pytest.approx(1 / 3, abs=0)


def test_pair_kappa_is_undefined_without_a_pair_both_decided():
    r = pair_kappa([TIE, FIRST], [FIRST, SKIP])
    assert r.kappa is None and r.n == 0
    assert r.undefined_reason == "no pair has a verdict FIRST or SECOND from both"


def test_a_label_always_favouring_b_next_to_94_percent_agreement_no_longer_gives_kappa_zero():
    # issue 12: pairs oriented so the label always says SECOND; the method agrees on 47 of 50
    label = np.full(50, SECOND)
    method = label.copy()
    method[:3] = FIRST
    assert cohen_kappa(method.tolist(), label.tolist()).kappa == 0.0  # one orientation: p_e = p_o
    k = method_agreement(method, label).kappa
    assert k.p_o == float(Fraction(47, 50))
    assert k.kappa == float(2 * Fraction(47, 50) - 1) == pytest.approx(0.88, abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_reversing_any_subset_of_pairs_changes_no_pair_statistic(seed):
    rng = np.random.default_rng(seed)
    n = 40
    human = rng.choice([FIRST, SECOND, SKIP, UNDEFINED], size=n, p=[0.45, 0.35, 0.1, 0.1])
    method = np.where(rng.random(n) < 0.75, human, rng.choice([FIRST, SECOND, TIE], size=n))
    method[method == SKIP] = TIE
    raters = rng.choice([FIRST, SECOND, SKIP], size=(4, n), p=[0.5, 0.4, 0.1])
    complete = raters[:, (raters != SKIP).all(axis=0)]

    def stats(m, h, r, c):
        a = method_agreement(m, h)
        alpha = krippendorff_alpha(
            [[int(x) if x in (FIRST, SECOND) else None for x in row] for row in with_reversed_pairs(r)]
        )
        fleiss = fleiss_kappa(with_reversed_pairs(c.T, axis=0).tolist())
        return (a.agreement, a.agreement_excluding_ties, a.n_ties, a.kappa, pair_kappa(r[0], r[1]),
                alpha.alpha, alpha.d_o, alpha.d_e, fleiss.kappa, fleiss.p_o, fleiss.p_e)

    base = stats(method, human, raters, complete)
    assert base[3].p_e == 0.5 and base[-1] == 0.5  # chance agreement exactly 1/2
    for _ in range(4):
        subset = rng.random(n) < 0.5
        sub_c = rng.random(complete.shape[1]) < 0.5
        again = stats(_reverse(method, subset), _reverse(human, subset), _reverse(raters, subset),
                      _reverse(complete, sub_c))
        assert again[:5] == base[:5]
        # alpha and Fleiss sum the same terms in another order: equal up to rounding
        assert again[5:] == pytest.approx(base[5:], abs=1e-12)


def test_paired_bootstrap_equals_one_bootstrap_per_method():
    """Indices drawn once for every method (counted per pair from 3 methods on, gathered below) give each
    method's intervals exactly as its own bootstrap with the same seed."""
    from scoring.pair_inference import paired_bootstrap_agreement_cis

    rng = np.random.default_rng(4)
    human = rng.integers(-1, 2, size=300)  # UNDEFINED, FIRST, SECOND
    for n_methods in (1, 2, 5):
        methods = [rng.integers(-1, 3, size=300) for _ in range(n_methods)]
        got = paired_bootstrap_agreement_cis(methods, human, n_boot=700, seed=9)
        want = [bootstrap_agreement_ci(m, human, n_boot=700, rng=9) for m in methods]
        assert got == want
        assert all(0.0 < c.agreement[0] < c.agreement[1] < 1.0 for c in got)
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        paired_bootstrap_agreement_cis([[0]], [0], seed=-1)
    assert paired_bootstrap_agreement_cis([], [0, 1]) == []
