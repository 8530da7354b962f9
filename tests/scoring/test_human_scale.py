"""The Bradley-Terry human difficulty scale (issue 15, point 1)."""
import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from scoring import FIRST, SECOND, SKIP
from scoring.exceptions import ConvergenceError
from scoring.human_scale import (
    HumanScaleWarning,
    bradley_terry,
    human_scale,
    oriented_judgments,
    spearman_brown,
)


def _simulate(seed=1, n_items=60, n_evaluators=20, per_evaluator=50, random_evaluator=None):
    """Judgments from a true Bradley-Terry scale (normal, sd 1.5); the random evaluator votes by coin flip."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 1.5, n_items)
    harder, other, who = [], [], []
    for ev in range(n_evaluators):
        for _ in range(per_evaluator):
            i, j = rng.choice(n_items, 2, replace=False)
            p = 0.5 if ev == random_evaluator else 1 / (1 + math.exp(-(true[i] - true[j])))
            win = rng.random() < p
            harder.append(i if win else j)
            other.append(j if win else i)
            who.append(ev)
    return true, np.array(harder), np.array(other), np.array(who)


def test_it_recovers_a_simulated_scale():
    true, h, o, e = _simulate()
    s = human_scale(h, o, e, n_boot=20, n_splits=10, rng=0)
    assert s.converged
    assert stats.spearmanr(s.difficulty, true).statistic > 0.9  # 1,000 judgments, ~33 per question
    assert abs(s.difficulty.sum()) < 1e-9
    inside = np.mean((s.ci_low <= true - true.mean()) & (true - true.mean() <= s.ci_high))
    assert inside > 0.7


def test_two_questions_match_the_closed_form():
    # 0 judged harder 3 times, 1 once: b0 - b1 = log 3, b = +-log(3)/2; information w = 4 p (1 - p) = 3/4,
    # pinv of [[w, -w], [-w, w]] has diagonal 1 / (4 w) = 1/3, so SE = 1/sqrt(3) each.
    s = human_scale([0, 0, 0, 1], [1, 1, 1, 0], [0, 1, 2, 3], penalty=0.0, n_boot=0, n_splits=0)
    assert s.difficulty == pytest.approx([math.log(3) / 2, -math.log(3) / 2], abs=1e-9)
    assert s.se == pytest.approx([1 / math.sqrt(3)] * 2, abs=1e-9)
    v = 2 * (math.log(3) / 2) ** 2  # sample variance (ddof 1) of +-log(3)/2
    assert s.ssr == pytest.approx((v - 1 / 3) / v, abs=1e-9)


def test_split_half_matches_a_hand_worked_chain():
    # Chain 0-1-2 (a tree: the unpenalised fit reproduces each edge's log odds).
    # Evaluator 0: 0>1 twice, 1>0 once (d01 = log 2); 1>2 three times, 2>1 once (d12 = log 3).
    # Evaluator 1: 0>1 once, 1>0 once (d01 = 0); 1>2 once, 2>1 twice (d12 = -log 2).
    h = [0, 0, 1, 1, 1, 1, 2, 0, 1, 1, 2, 2]
    o = [1, 1, 0, 2, 2, 2, 1, 1, 0, 2, 1, 1]
    e = [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    s = human_scale(h, o, e, penalty=0.0, n_boot=0, n_splits=5, rng=3)

    def chain(d01, d12):
        b = np.array([d01, 0.0, -d12])
        return b - b.mean()

    x, y = chain(math.log(2), math.log(3)), chain(0.0, -math.log(2))
    r = np.corrcoef(x, y)[0, 1]
    assert s.split_half == pytest.approx(2 * r / (1 + r), abs=1e-9)  # the only split, up to swapping halves
    rho = stats.spearmanr(x, y).statistic
    assert s.split_half_spearman == pytest.approx(2 * rho / (1 + rho), abs=1e-9)
    assert s.n_splits_defined == 5


def test_spearman_brown_doubles_a_half():
    assert spearman_brown(0.6) == pytest.approx(1.2 / 1.6, abs=1e-12)
    assert math.isnan(spearman_brown(-1.0))


def test_misfit_flags_the_random_evaluator():
    _, h, o, e = _simulate(random_evaluator=19)
    s = human_scale(h, o, e, n_boot=0, n_splits=0)
    assert np.flatnonzero(s.evaluator_flagged).tolist() == [19]
    assert s.evaluator_infit[19] > 1.5


def test_reversing_orientations_or_order_changes_no_figure():
    _, h, o, e = _simulate(seed=4, n_items=20, n_evaluators=8, per_evaluator=30,
                           random_evaluator=2)
    # The same judgments as stored pairs (a, b) with verdicts FIRST, then every pair stored the other way round
    # with its verdicts flipped (SECOND), and the judgments shuffled; skips dropped either way.
    pair_index = np.column_stack([h, o])
    verdict = np.full(h.size, int(FIRST))
    verdict[::7] = int(SKIP)
    h1, o1, kept1 = oriented_judgments(pair_index, np.arange(h.size), verdict)
    base = human_scale(h1, o1, e[kept1], n_items=20, n_evaluators=8, n_boot=15, n_splits=8, rng=7)
    perm = np.random.default_rng(0).permutation(h.size)
    flipped = np.where(verdict[perm] == int(FIRST), int(SECOND), verdict[perm])
    h2, o2, kept2 = oriented_judgments(pair_index[:, ::-1], np.arange(h.size)[perm], flipped)
    other = human_scale(h2, o2, e[perm][kept2], n_items=20, n_evaluators=8, n_boot=15, n_splits=8, rng=7)
    for name in ("difficulty", "se", "ci_low", "ci_high", "evaluator_infit", "evaluator_outfit", "item_infit",
                 "item_outfit"):
        np.testing.assert_allclose(getattr(other, name), getattr(base, name), rtol=1e-9, atol=1e-12)
    for name in ("ssr", "split_half", "split_half_spearman", "n_components"):
        assert getattr(other, name) == pytest.approx(getattr(base, name), abs=1e-12)


def test_a_disconnected_graph_is_fitted_per_component_with_a_warning():
    # {0, 1, 2} and {3, 4}; question 5 is never judged.
    h = [0, 0, 1, 1, 2, 3, 3, 4]
    o = [1, 2, 2, 0, 0, 4, 4, 3]
    with pytest.warns(HumanScaleWarning, match="2 connected components"):
        s = human_scale(h, o, [0, 0, 0, 1, 1, 1, 1, 1], n_items=6, n_boot=0, n_splits=0)
    assert s.n_components == 2
    assert s.component.tolist() == [0, 0, 0, 1, 1, -1]
    assert s.difficulty[:3].sum() == pytest.approx(0.0, abs=1e-12)
    assert s.difficulty[3:5].sum() == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(s.difficulty[5])
    assert len(s.warnings) == 1
    # each component alone gives the same values
    alone, _ = bradley_terry([0, 0, 1, 1, 2], [1, 2, 2, 0, 0])
    np.testing.assert_allclose(s.difficulty[:3], alone, atol=1e-10)


def test_a_connected_graph_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        human_scale([0, 1, 2], [1, 2, 0], [0, 0, 0], n_boot=0, n_splits=0)


def test_unpenalised_fit_of_a_perfect_winner_does_not_converge():
    with pytest.raises(ConvergenceError):
        bradley_terry([0, 0], [1, 1], penalty=0.0, max_iter=5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"harder": [0], "other": [0], "evaluator": [0]}, "harder == other at position 0"),
        ({"harder": [0, 1], "other": [1], "evaluator": [0, 0]}, "equal lengths"),
        ({"harder": [-1], "other": [1], "evaluator": [0]}, "harder must hold indices >= 0"),
        ({"harder": [0], "other": [1], "evaluator": [0], "n_items": 1}, "n_items must be an integer >= 2"),
        ({"harder": [0], "other": [1], "evaluator": [0], "ci_level": 1.0}, "ci_level must be a number"),
        ({"harder": [0.5], "other": [1], "evaluator": [0]}, "harder must hold integer indices"),
    ],
)
def test_it_rejects_bad_input_naming_the_parameter(kwargs, message):
    with pytest.raises(ValueError, match=message):
        human_scale(**kwargs)


def test_scale_correlation_matches_scipy_in_one_component_and_weights_components():
    from scoring.scale_correlations import scale_correlation

    rng = np.random.default_rng(5)
    human, method = rng.normal(size=12), rng.normal(size=12)
    one = np.zeros(12, dtype=int)
    assert scale_correlation(human, method, one, n_boot=0).value == pytest.approx(
        stats.spearmanr(human, method).statistic, abs=1e-12)
    assert scale_correlation(human, method, one, kind="kendall", n_boot=0).value == pytest.approx(
        stats.kendalltau(human, method).statistic, abs=1e-12)
    # two components of 8 and 4 questions: the mean of their coefficients weighted 8:4
    comp = np.array([0] * 8 + [1] * 4)
    expected = (8 * stats.spearmanr(human[:8], method[:8]).statistic
                + 4 * stats.spearmanr(human[8:], method[8:]).statistic) / 12
    c = scale_correlation(human, method, comp, n_boot=300, rng=1)
    assert c.value == pytest.approx(expected, abs=1e-12)
    assert c.n == 12 and c.n_components == 2
    assert c.ci_low <= c.value <= c.ci_high


def test_scale_correlation_is_undefined_without_three_questions_in_a_component():
    from scoring.scale_correlations import REASON_FEW_QUESTIONS, scale_correlation

    c = scale_correlation([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, np.nan], [0, 0, 1, 1], n_boot=10)
    assert math.isnan(c.value) and c.undefined_reason == REASON_FEW_QUESTIONS


def test_the_sparse_conjugate_gradient_steps_give_the_dense_fit(monkeypatch):
    import scoring._scale_fit as module

    _, h, o, _ = _simulate(seed=2, n_items=40, n_evaluators=5, per_evaluator=60)
    dense, dense_se = bradley_terry(h, o)
    monkeypatch.setattr(module, "DENSE_MAX", 0)  # every component takes the sparse path
    sparse, sparse_se = bradley_terry(h, o)
    np.testing.assert_allclose(sparse, dense, atol=1e-8)
    np.testing.assert_allclose(sparse_se, dense_se, atol=1e-10)


def test_warm_started_refits_agree_with_cold_ones_within_the_tolerance_bound():
    from scoring.human_scale import _human_scale

    _, h, o, e = _simulate(seed=5, n_items=30, n_evaluators=6, per_evaluator=40)
    kw = {"n_items": 30, "n_evaluators": 6, "penalty": 0.1, "n_boot": 25, "n_splits": 10, "ci_level": 0.9,
          "misfit_threshold": 1.3, "tol": 1e-9, "max_iter": 100, "rng": 3}
    cold = _human_scale(h, o, e, **kw, warm_start=False, reuse=False)
    warm = human_scale(h, o, e, **{k: v for k, v in kw.items() if k not in ("ci_level", "misfit_threshold")},
                       ci_level=0.9)
    # the full fit does not change; each refit meets max|gradient| <= tol from either start, and the objective's
    # curvature is >= penalty on the sum-to-zero subspace: |warm - cold| <= 2 sqrt(n) tol / penalty (n = 30)
    bound = 2 * math.sqrt(30) * 1e-9 / 0.1
    assert np.array_equal(warm.difficulty, cold.difficulty) and np.array_equal(warm.se, cold.se)
    assert np.array_equal(np.isfinite(warm.draws), np.isfinite(cold.draws))
    assert np.nanmax(np.abs(warm.draws - cold.draws)) <= bound
    assert np.nanmax(np.abs(warm.draws - cold.draws)) > 0  # really another start (not the cold path again)
    np.testing.assert_allclose(warm.ci_low, cold.ci_low, rtol=0, atol=bound)
    np.testing.assert_allclose(warm.ci_high, cold.ci_high, rtol=0, atol=bound)
    assert warm.split_half == pytest.approx(cold.split_half, abs=1e-6)
    assert warm.n_splits_defined == cold.n_splits_defined == 10


def test_a_repeated_draw_of_evaluators_reuses_its_fit_with_the_same_figures():
    from scoring.human_scale import _human_scale

    # 3 evaluators: 10 distinct bootstrap draws and 3 distinct splits, so most of the 40 + 2 x 20 refits repeat
    _, h, o, e = _simulate(seed=6, n_items=15, n_evaluators=3, per_evaluator=40)
    kw = {"n_items": 15, "n_evaluators": 3, "penalty": 0.1, "n_boot": 40, "n_splits": 20, "ci_level": 0.95,
          "misfit_threshold": 1.3, "tol": 1e-9, "max_iter": 100, "rng": 1}
    again = _human_scale(h, o, e, **kw, reuse=False)
    reused = _human_scale(h, o, e, **kw)
    for name in ("draws", "ci_low", "ci_high"):
        assert np.array_equal(getattr(reused, name), getattr(again, name), equal_nan=True)
    assert reused.split_half == again.split_half and reused.split_half_spearman == again.split_half_spearman
    assert len({row.tobytes() for row in reused.draws}) <= 10


def test_tied_items_stay_tied_in_the_split_half_spearman_whatever_the_start():
    """Items with the same judgments against the same items have equal scale values; a warm and a cold
    start give them values that differ by round-off only, and the split-half Spearman must not rank them
    by it: both starts give the same Spearman figure."""
    from scoring.human_scale import _human_scale

    # a chain 0 > 1 > ... > 9 judged by 4 evaluators, and 6 "leaf" items 10..15, each judged easier than item 0
    # and harder than item 9 once by every evaluator: the leaves are exact ties in every (half) fit
    h, o, e = [], [], []
    for ev in range(4):
        for i in range(9):
            h.append(i), o.append(i + 1), e.append(ev)
        h.append(ev % 9), o.append((ev % 9) + 1), e.append(ev)  # evaluators differ a little
        for leaf in range(10, 16):
            h += [0, leaf]
            o += [leaf, 9]
            e += [ev, ev]
    kw = {"n_items": 16, "n_evaluators": 4, "penalty": 0.1, "n_boot": 0, "n_splits": 6, "ci_level": 0.9,
          "misfit_threshold": 1.3, "tol": 1e-9, "max_iter": 100, "rng": 2}
    cold = _human_scale(np.array(h), np.array(o), np.array(e), **kw, warm_start=False, reuse=False)
    warm = _human_scale(np.array(h), np.array(o), np.array(e), **kw)
    assert warm.n_splits_defined == cold.n_splits_defined == 6
    assert warm.split_half_spearman == cold.split_half_spearman


def test_values_within_the_fit_resolution_are_ties():
    from scoring._scale_fit import _ties_within

    values = np.array([0.5, 0.1, 0.1 + 1e-10, 0.3, -0.2, 0.1 - 1e-10, 0.3 + 1e-3])
    out = _ties_within(values, 1e-8)
    assert out[1] == out[2] == out[5]  # the three within 1e-8 of each other
    assert len(set(out.tolist())) == 5  # 0.5, the 0.1 run, 0.3, -0.2, 0.301 stay distinct
    assert out[3] != out[6] and out[0] == 0.5 and out[4] == -0.2


def test_scale_correlations_equal_one_scale_correlation_per_method_and_kind():
    """The batched correlations (shared draws, ranks and Kendall by counts) give every figure of the single calls
    bit for bit: ties in the scale and the methods, NaN in the draws, a method with missing values (its own
    resampling) and a constant one (undefined)."""
    from scoring.scale_correlations import scale_correlation, scale_correlations

    rng = np.random.default_rng(8)
    n = 40
    comp = np.repeat([0, 1, 2, -1], 10)
    human = np.round(rng.normal(size=n), 1)
    human[comp < 0] = np.nan
    draws = np.round(rng.normal(size=(7, n)), 1)
    draws[rng.random(draws.shape) < 0.03] = np.nan
    methods = [rng.normal(size=n), np.round(rng.normal(size=n)), rng.normal(size=n), np.ones(n)]
    methods[2][[3, 17]] = np.nan
    batched = scale_correlations(human, methods, comp, draws=draws, n_boot=150, seed=4)
    for method, got in zip(methods, batched, strict=True):
        for kind in ("spearman", "kendall"):
            one = scale_correlation(human, method, comp, kind=kind, draws=draws, n_boot=150, rng=4)
            assert np.array_equal(np.array(dataclasses.astuple(got[kind])[:3]),
                                  np.array(dataclasses.astuple(one)[:3]), equal_nan=True)
            assert dataclasses.astuple(got[kind])[3:] == dataclasses.astuple(one)[3:]
    assert batched[0]["kendall"].n_boot_defined > 100 and math.isfinite(batched[0]["kendall"].ci_low)
    assert batched[3]["spearman"].undefined_reason is not None


def test_kendall_of_counts_equals_kendall_of_the_written_out_sample():
    from scoring.scale_correlations import _kendall_of_counts, _row_kendall

    rng = np.random.default_rng(2)
    n, rows = 9, 30
    x = np.round(rng.normal(size=(rows, n)), 1)
    ys = [np.round(rng.normal(size=n), 1), rng.normal(size=n)]
    local = rng.integers(0, n, size=(rows, n))
    counts = np.stack([np.bincount(r, minlength=n) for r in local]).astype(float)
    got = _kendall_of_counts(x, counts, ys)
    for m, y in enumerate(ys):
        want = _row_kendall(np.take_along_axis(x, local, axis=1), y[local])
        assert np.array_equal(got[:, m], want, equal_nan=True)
    assert np.isfinite(got).sum() > rows  # real values, not all undefined


def test_refits_fitted_together_equal_refits_fitted_one_by_one():
    """The stacked refits (bootstrap and split halves) give the sequential fits' figures: three subjects (three
    components; a refit whose graph differs is fitted one by one either way)."""
    from scoring.human_scale import _human_scale

    rng = np.random.default_rng(21)
    n_pairs, n_items = 240, 45
    subject = rng.integers(0, 3, n_pairs)
    pairs = np.array([rng.choice(15, 2, replace=False) + 15 * s for s in subject])
    evaluator = rng.integers(0, 6, n_pairs)
    first = rng.random(n_pairs) < 0.5 + 0.04 * (pairs[:, 0] % 15 - pairs[:, 1] % 15)
    harder = np.where(first, pairs[:, 0], pairs[:, 1])
    other = np.where(first, pairs[:, 1], pairs[:, 0])
    kw = {"n_items": n_items, "n_evaluators": 6, "penalty": 0.1, "n_boot": 60, "n_splits": 20, "ci_level": 0.9,
              "misfit_threshold": 1.3, "tol": 1e-9, "max_iter": 100, "rng": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = _human_scale(harder, other, evaluator, batch=False, **kw)
        together = _human_scale(harder, other, evaluator, **kw)
    assert np.array_equal(one.draws, together.draws, equal_nan=True)
    assert np.array_equal(one.ci_low, together.ci_low, equal_nan=True)
    assert one.split_half == together.split_half and one.split_half_spearman == together.split_half_spearman
    assert np.isfinite(together.draws).any() and 0.0 < together.split_half < 1.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dense", [True, False])
def test_the_fit_is_the_optimum_of_the_per_judgment_objective(seed, dense, monkeypatch):
    """The fit (which folds both directions of a pair into one term) is where the objective
    written per judgment, ``sum log sigma(b_h - b_o) - penalty/2 |b|^2``, has a zero gradient:
    checked with that gradient computed here, and against scipy's optimiser on it."""
    from scipy.optimize import minimize

    import scoring._scale_fit as scale_fit

    if not dense:
        monkeypatch.setattr(scale_fit, "DENSE_MAX", 1)
    _, h, o, _ = _simulate(seed=seed, n_items=25, n_evaluators=6, per_evaluator=40)
    penalty = 0.1
    b, _ = bradley_terry(h, o, n_items=25, penalty=penalty, tol=1e-10)

    def negative(x):
        d = x[h] - x[o]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = np.bincount(h, weights=1.0 - p, minlength=25) - np.bincount(o, weights=1.0 - p, minlength=25)
        return np.logaddexp(0.0, -d).sum() + 0.5 * penalty * x @ x, -(grad - penalty * x)

    assert np.abs(negative(b)[1]).max() < 1e-9
    ref = minimize(negative, np.zeros(25), jac=True, method="L-BFGS-B", options={"gtol": 1e-11, "ftol": 1e-15})
    np.testing.assert_allclose(b, ref.x, atol=1e-6)
    assert negative(b)[0] <= ref.fun + 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_small_components_fitted_together_equal_one_fit_per_component(seed, monkeypatch):
    """A sparse study (many 2-6 item components): the values, standard errors and every
    bootstrap/split-half figure equal those of one Newton fit per component."""
    import scoring._scale_fit as scale_fit

    rng = np.random.default_rng(seed)
    n_items = 90
    pairs = [rng.choice(n_items, 2, replace=False) for _ in range(45)]
    harder, other, who = [], [], []
    for i, j in pairs:
        for ev in rng.choice(4, size=int(rng.integers(1, 4)), replace=False):
            win = rng.random() < 0.6
            harder.append(i if win else j)
            other.append(j if win else i)
            who.append(ev)
    args = (np.array(harder), np.array(other), np.array(who))
    kwargs = {"n_items": n_items, "n_boot": 30, "n_splits": 10, "rng": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HumanScaleWarning)
        together = human_scale(*args, **kwargs)
        monkeypatch.setattr(scale_fit, "SMALL_MAX", 0)
        apart = human_scale(*args, **kwargs)
    assert together.n_components >= 10
    sizes = np.bincount(together.component[together.component >= 0])
    assert (np.bincount(sizes)[2:] >= 2).any()  # some sizes are shared: the batched path ran
    for field in ("difficulty", "se", "ci_low", "ci_high"):
        np.testing.assert_allclose(getattr(together, field), getattr(apart, field), atol=1e-8, equal_nan=True)
    assert together.split_half == pytest.approx(apart.split_half, abs=1e-8, nan_ok=True)
    b_pair, se_pair = bradley_terry([0, 0, 1, 2, 3, 2], [1, 1, 0, 3, 2, 3], n_items=4)
    # two components of two items: each is the closed form of its own pair (see the test above)
    np.testing.assert_allclose(b_pair[:2], bradley_terry([0, 0, 1], [1, 1, 0], n_items=2)[0], atol=1e-10)
    np.testing.assert_allclose(se_pair[2:], bradley_terry([0, 1, 1], [1, 0, 0], n_items=2)[1], atol=1e-10)


def test_a_small_component_that_cannot_converge_raises_in_the_batched_path():
    # two 2-item components, each with a perfect winner: no finite optimum without a penalty
    with pytest.raises(ConvergenceError):
        bradley_terry([0, 0, 2], [1, 1, 3], n_items=4, penalty=0.0, max_iter=5)


def test_correlations_by_scope_equal_one_call_per_scope_and_a_subject_alone_equals_it_within_all():
    """Scopes computed together (components resampled once) give each scope's figures bit for bit;
    and a component's intervals do not depend on the other components in the scope."""
    from scoring.scale_correlations import scale_correlations, scale_correlations_by_scope

    rng = np.random.default_rng(11)
    n = 60
    comp = np.repeat([0, 1, 2, 3, -1, -1], 10)
    subject = np.repeat(["a", "a", "b", "c", "a", "b"], 10)
    human = np.round(rng.normal(size=n), 1)
    human[comp < 0] = np.nan
    draws = np.round(rng.normal(size=(9, n)), 1)
    methods = [rng.normal(size=n), np.round(rng.normal(size=n)), np.ones(n)]
    scopes = [np.ones(n, dtype=bool)] + [subject == s for s in ("a", "b", "c")]
    together = scale_correlations_by_scope(human, methods, comp, scopes, draws=draws, n_boot=120, seed=2)

    def figures(results):
        return [[dataclasses.astuple(r[kind]) for kind in ("spearman", "kendall")] for r in results]

    for scope, got in zip(scopes, together, strict=True):
        alone = scale_correlations(np.where(scope, human, np.nan), methods, comp, draws=draws, n_boot=120, seed=2)
        np.testing.assert_equal(figures(got), figures(alone))
    # subject "c" is component 3 alone; restricted to component 3, the whole study gives the same interval
    only_c = scale_correlations(np.where(comp == 3, human, np.nan), methods, comp, draws=draws, n_boot=120, seed=2)
    np.testing.assert_equal(figures(together[3]), figures(only_c))
    assert together[0][0]["kendall"].n_components == 4 and together[3][0]["kendall"].n_components == 1
    with pytest.raises(ValueError, match=r"scopes\[1\] must have shape \(60,\)"):
        scale_correlations_by_scope(human, methods, comp, [scopes[0], np.ones(3, dtype=bool)])
