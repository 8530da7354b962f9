"""IRT baselines: 1PL and 2PL by penalised joint ML, multidimensional IRT by VI.

Checked several ways: a cell-by-cell objective written with ``math`` (slow,
obvious) against the vectorised kernels; analytic gradients against finite
differences; tiny problems solved by hand; an end-to-end fit against a
minimiser of the slow objective; invariances (permuting models, transposing
the matrix); parameter recovery on seeded 2PL simulations; and the `mirt`
package (marginal ML) as an independent implementation.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from scipy.optimize import OptimizeResult, approx_fprime, brentq, check_grad, minimize
from scipy.stats import pearsonr, spearmanr

from scoring import _irt_common, _irt_newton, irt, mirt as mirt_module
from scoring.irt import (
    BOUNDS_MESSAGE,
    DISCRIMINATION_BOUNDS_MESSAGE,
    L2_MESSAGE,
    NON_FINITE_MESSAGE,
    IRTResult,
    irt_1pl,
    irt_2pl,
)
from scoring.mirt import MIRTResult, irt_mirt


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def _slow_objective(theta, beta, a, R, l2, two_pl):
    """Penalised Bernoulli negative log-likelihood, one observed cell at a time."""
    total = 0.0
    for q in range(R.shape[0]):
        for m in range(R.shape[1]):
            y = R[q, m]
            if math.isnan(y):
                continue
            p = _sigmoid(a[q] * (theta[m] - beta[q]))
            total -= y * math.log(p) + (1.0 - y) * math.log(1.0 - p)
    total += l2 * (sum(t * t for t in theta) + sum(b * b for b in beta))
    if two_pl:
        total += l2 * sum((s - 1.0) ** 2 for s in a)
    return total


def _simulate_2pl(n_models, n_questions, seed):
    """Binary (n_questions, n_models) responses from a 2PL model, with the truth."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n_models)
    beta = rng.normal(size=n_questions)
    a = rng.lognormal(0.0, 0.3, size=n_questions)
    p = 1.0 / (1.0 + np.exp(-a[:, None] * (theta[None, :] - beta[:, None])))
    return rng.random(p.shape) < p, theta, beta, a


@pytest.fixture(scope="module")
def partial():
    """7 questions x 5 models: partial credit, two NaN cells, one fully observed model."""
    rng = np.random.default_rng(11)
    R = rng.random((7, 5)).round(2)
    R[2, 1] = np.nan
    R[5, 3] = np.nan
    R[0, 0], R[1, 0] = 1.0, 0.0
    return R


def _mirt_or_skip():
    try:
        from mirt import fit_mirt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        if os.environ.get("CI") == "true":
            pytest.fail(f"the mirt package is required in CI for the cross-check: {exc}")
        pytest.skip(f"mirt not installed ({exc}); pip install mirt to run the cross-check")
    return fit_mirt


# ---------------------------------------------------------------------------
# objective and gradient


@pytest.mark.parametrize("two_pl", [False, True], ids=["1pl", "2pl"])
def test_it_matches_the_cell_by_cell_objective_leaving_out_nan_cells(partial, two_pl):
    rng = np.random.default_rng(0)
    n_questions, n_models = partial.shape
    theta, beta = rng.normal(size=n_models), rng.normal(size=n_questions)
    a = rng.uniform(0.3, 2.0, size=n_questions) if two_pl else np.ones(n_questions)
    y, w = _irt_common._targets_and_weights(partial)
    if two_pl:
        f, _ = irt._objective_2pl(np.concatenate([theta, beta, a]), y, w, 0.01)
    else:
        f, _ = irt._objective_1pl(np.concatenate([theta, beta]), y, w, 0.01)
    # The slow version skips the two NaN cells explicitly.
    assert f == pytest.approx(_slow_objective(theta, beta, a, partial, 0.01, two_pl), rel=1e-12)


def test_it_drops_exactly_the_nan_term_from_the_objective():
    # 1 question x 2 models, theta = (1, -1), beta = 0.5, l2 = 0:
    # full:  -log s(0.5) - [0.3 log s(-1.5) + 0.7 log(1 - s(-1.5))]
    # NaN in the second cell leaves only -log s(0.5) = log(1 + e^-0.5).
    x = np.array([1.0, -1.0, 0.5])
    y_full, w_full = _irt_common._targets_and_weights(np.array([[1.0, 0.3]]))
    y_nan, w_nan = _irt_common._targets_and_weights(np.array([[1.0, np.nan]]))
    f_full, _ = irt._objective_1pl(x, y_full, w_full, 0.0)
    f_nan, _ = irt._objective_1pl(x, y_nan, w_nan, 0.0)
    by_hand = math.log(1.0 + math.exp(-0.5))
    second = -(0.3 * math.log(_sigmoid(-1.5)) + 0.7 * math.log(1.0 - _sigmoid(-1.5)))
    assert f_nan == pytest.approx(by_hand, rel=1e-13)
    assert f_full == pytest.approx(by_hand + second, rel=1e-13)


@pytest.mark.parametrize("two_pl", [False, True], ids=["1pl", "2pl"])
def test_its_analytic_gradient_matches_finite_differences(partial, two_pl):
    rng = np.random.default_rng(1)
    y, w = _irt_common._targets_and_weights(partial)
    n_questions, n_models = partial.shape
    if two_pl:
        objective = irt._objective_2pl
        x0 = np.concatenate([rng.normal(size=n_models + n_questions), rng.uniform(0.3, 2, n_questions)])
    else:
        objective = irt._objective_1pl
        x0 = rng.normal(size=n_models + n_questions)
    f = lambda x: objective(x, y, w, 0.01)[0]  # noqa: E731
    g = lambda x: objective(x, y, w, 0.01)[1]  # noqa: E731
    # Forward differences with step ~1.5e-8: error ~1e-7 per component
    # (curvature <= ~5 here), ~1e-6 on the 2-norm; a dropped penalty term
    # shows up as ~2e-2.
    assert check_grad(f, g, x0) < 5e-6
    # Central differences (step 1e-6, error ~1e-10) for a tighter comparison.
    h = 1e-6
    numeric = np.array([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(len(x0))])
    np.testing.assert_allclose(g(x0), numeric, rtol=0, atol=1e-7)


def test_its_mirt_gradient_matches_finite_differences_for_a_fixed_sample(partial):
    rng = np.random.default_rng(2)
    n_questions, n_models = partial.shape
    d = 2
    eps = (rng.normal(size=(n_models, d)), rng.normal(size=(n_questions, d)), rng.normal(size=n_questions))
    y, w = _irt_common._targets_and_weights(partial)
    sizes = [n_models * d, n_questions * d, n_questions]

    def unpack(x):
        t, a, b = np.split(x, np.cumsum(sizes)[:-1])
        return t.reshape(n_models, d), a.reshape(n_questions, d), b

    def elbo(x):
        return mirt_module._mirt_elbo_and_grad(*unpack(x), *eps, y, w)[0]

    x0 = rng.normal(scale=0.5, size=sum(sizes))
    _, g_t, g_a, g_b = mirt_module._mirt_elbo_and_grad(*unpack(x0), *eps, y, w)
    numeric = approx_fprime(x0, elbo, 1e-7)
    # Forward differences: error ~1e-6 with curvature ~10 and step 1e-7.
    np.testing.assert_allclose(np.concatenate([g_t.ravel(), g_a.ravel(), g_b]), numeric, atol=2e-5)


def test_its_mirt_elbo_and_gradient_in_float32_cells_are_the_float64_ones_to_float32_rounding(partial):
    """irt_mirt keeps its per-cell arrays in float32 (_MIRT_CELL_DTYPE); the ELBO and gradient of a
    fixed sample then equal the plain float64 formula's to float32 resolution."""
    rng = np.random.default_rng(8)
    n_questions, n_models = partial.shape
    mu = (rng.normal(size=(n_models, 3)), rng.normal(size=(n_questions, 3)), rng.normal(size=n_questions))
    eps = (rng.normal(size=(n_models, 3)), rng.normal(size=(n_questions, 3)), rng.normal(size=n_questions))
    y, w = _irt_common._targets_and_weights(partial)
    exact = mirt_module._mirt_elbo_and_grad(*mu, *eps, y, w)
    single = mirt_module._mirt_elbo_and_grad(*mu, *eps, y.astype(np.float32), w.astype(np.float32))
    assert mirt_module._MIRT_CELL_DTYPE is np.float32
    assert single[0] == pytest.approx(exact[0], rel=1e-6)
    for got, want in zip(single[1:], exact[1:], strict=True):
        assert got.dtype == np.float64  # the parameters' gradients stay float64 for Adam
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_a_mirt_fit_with_float32_cells_is_the_float64_fit_to_float32_resolution(monkeypatch):
    rng = np.random.default_rng(9)
    theta, a, b = rng.normal(size=(25, 3)), 0.7 * rng.normal(size=(300, 3)), rng.normal(size=300)
    R = (rng.random((300, 25)) < 1 / (1 + np.exp(-(a @ theta.T - b[:, None])))).astype(float)
    R[rng.random(R.shape) < 0.05] = np.nan
    single = mirt_module.irt_mirt(R, epochs=150, rng=4)
    monkeypatch.setattr(mirt_module, "_MIRT_CELL_DTYPE", np.float64)
    double = mirt_module.irt_mirt(R, epochs=150, rng=4)
    np.testing.assert_allclose(single.difficulty, double.difficulty, rtol=0, atol=1e-4)
    np.testing.assert_allclose(single.elbo_trace, double.elbo_trace, rtol=1e-5)
    assert np.corrcoef(single.difficulty, b)[0, 1] > 0.5  # and it is a fit of the simulated difficulty


# ---------------------------------------------------------------------------
# fits worked out independently


def test_it_solves_a_one_cell_rasch_problem_by_hand():
    # One correct answer, l2 = 0.01. The objective softplus(beta - theta)
    # + l2 (theta^2 + beta^2) is symmetric under (theta, beta) -> (-beta, -theta)
    # and strictly convex, so theta = -beta = t with
    # d/dt [softplus(-2t) + 2 l2 t^2] = -2 s(-2t) + 4 l2 t = 0, i.e. s(-2t) = 2 l2 t.
    t = brentq(lambda t: _sigmoid(-2 * t) - 0.02 * t, 0.0, 50.0)
    fit = irt_1pl(np.array([[1.0]]), tol=1e-14)
    assert fit.converged
    assert fit.ability[0] == pytest.approx(t, abs=1e-5)
    assert fit.difficulty[0] == pytest.approx(-t, abs=1e-5)


@pytest.mark.parametrize("fit", [irt_1pl, irt_2pl])
def test_it_puts_half_credit_at_zero_logit(fit):
    # y = 0.5: the quasi-likelihood gradient is s(0) - 0.5 = 0 at theta = beta = 0
    # (and a = 1 for 2PL), where the penalty's gradient is also 0.
    res = fit(np.array([[0.5]]))
    got = [res.ability[0], res.difficulty[0], res.discrimination[0]]
    np.testing.assert_allclose(got, [0.0, 0.0, 1.0], atol=1e-8)


@pytest.mark.parametrize("two_pl", [False, True], ids=["1pl", "2pl"])
def test_it_agrees_with_minimising_the_slow_objective(partial, two_pl):
    n_questions, n_models = partial.shape

    def slow(x):
        theta, beta = x[:n_models], x[n_models:n_models + n_questions]
        a = x[n_models + n_questions:] if two_pl else np.ones(n_questions)
        return _slow_objective(theta, beta, a, partial, 0.01, two_pl)

    n = n_models + 2 * n_questions if two_pl else n_models + n_questions
    x0 = np.r_[np.zeros(n_models + n_questions), np.ones(n - n_models - n_questions)]
    bounds = [(-5, 5)] * (n_models + n_questions) + [(0.1, 5)] * (n - n_models - n_questions)
    ref = minimize(slow, x0, method="L-BFGS-B", bounds=bounds, options={"ftol": 1e-15, "gtol": 1e-10})
    fit = (irt_2pl if two_pl else irt_1pl)(partial, tol=1e-14)
    got = np.r_[fit.ability, fit.difficulty, fit.discrimination if two_pl else []]
    assert fit.converged
    # Both optimisers stop on relative-reduction tests near 1e-14: the
    # objective is strongly convex here (l2 > 0), so estimates agree to ~1e-5.
    np.testing.assert_allclose(got, ref.x, atol=1e-4)
    assert fit.objective == pytest.approx(ref.fun, rel=1e-8)


def test_it_leaves_an_unobserved_question_at_the_prior_values():
    # A question with no observed cell meets only the penalty
    # l2 (beta^2 + (a - 1)^2), whose minimum is beta = 0, a = 1.
    R = np.array([[1.0, 0.0, 1.0], [np.nan, np.nan, np.nan], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    for fit in (irt_1pl(R), irt_2pl(R)):
        assert fit.converged
        assert fit.difficulty[1] == pytest.approx(0.0, abs=1e-6)
        assert fit.discrimination[1] == pytest.approx(1.0, abs=1e-6)


def test_it_swaps_abilities_and_difficulties_when_the_matrix_is_transposed_and_flipped():
    # s(theta_m - beta_q) = 1 - s(beta_q - theta_m): fitting 1 - R.T makes the
    # questions the "models" with ability beta_q; the penalty and bounds are
    # symmetric, so the estimates swap roles exactly (up to optimiser stops).
    R, *_ = _simulate_2pl(8, 12, seed=4)
    R = R.astype(float)
    fit = irt_1pl(R, tol=1e-14)
    swapped = irt_1pl(1.0 - R.T, tol=1e-14)
    np.testing.assert_allclose(swapped.ability, fit.difficulty, atol=1e-5)
    np.testing.assert_allclose(swapped.difficulty, fit.ability, atol=1e-5)


@pytest.mark.parametrize("fit", [irt_1pl, irt_2pl])
def test_permuting_models_permutes_abilities(fit):
    R, *_ = _simulate_2pl(10, 60, seed=5)
    order = np.random.default_rng(0).permutation(10)
    base, permuted = fit(R, tol=1e-14), fit(R[:, order], tol=1e-14)
    # Same problem, different optimiser path: the objectives agree to ~1e-14
    # relative. The 2PL has flat directions (a question with a ~ 0.13 has a
    # nearly free difficulty), where estimates agreed only to ~2.5e-5.
    assert permuted.objective == pytest.approx(base.objective, rel=1e-12)
    np.testing.assert_allclose(permuted.ability, base.ability[order], atol=1e-4)
    np.testing.assert_allclose(permuted.difficulty, base.difficulty, atol=1e-4)


def test_it_gives_the_same_answer_for_bool_int_and_float_input():
    R, *_ = _simulate_2pl(6, 40, seed=6)
    as_bool, as_int, as_float = irt_2pl(R), irt_2pl(R.astype(np.uint8)), irt_2pl(R.astype(float))
    for other in (as_int, as_float):
        np.testing.assert_allclose(other.difficulty, as_bool.difficulty, rtol=0, atol=1e-12)
        np.testing.assert_allclose(other.ability, as_bool.ability, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# degenerate models, bounds and convergence reporting


@pytest.mark.parametrize("fit", [irt_1pl, irt_2pl])
def test_it_keeps_all_correct_and_all_wrong_models_finite_on_the_bounds(fit):
    rng = np.random.default_rng(3)
    R = (rng.random((30, 6)) < 0.5).astype(float)
    R[:, 0], R[:, 1] = 1.0, 0.0  # model 0 answers everything, model 1 nothing
    res = fit(R)
    assert res.converged
    assert np.all(np.isfinite(res.ability)) and np.all(np.abs(res.ability) <= 5.0)
    assert res.ability.argmax() == 0 and res.ability.argmin() == 1
    assert res.ability_scaled[0] == 100.0 and res.ability_scaled[1] == 0.0
    # Flags agree with a direct distance-to-bound test ...
    expected_flags = np.minimum(np.abs(res.ability - 5), np.abs(res.ability + 5)) <= 1e-6
    np.testing.assert_array_equal(res.ability_at_bound, expected_flags)
    # ... and the two extreme models sit on them: by the slow objective, the
    # slope at theta_0 = 5 still points outward (KKT at an upper bound), and
    # likewise at theta_1 = -5.
    assert res.ability[0] == pytest.approx(5.0, abs=1e-6)
    assert res.ability[1] == pytest.approx(-5.0, abs=1e-6)
    assert res.ability_at_bound[:2].all() and not res.ability_at_bound[2:].any()
    h = 1e-6

    def objective(theta):
        return _slow_objective(theta, res.difficulty, res.discrimination, R, 0.01, fit is irt_2pl)

    def slope(m):
        up, down = res.ability.copy(), res.ability.copy()
        up[m] += h
        down[m] -= h
        return (objective(up) - objective(down)) / (2 * h)

    assert slope(0) < 0 < slope(1)


def test_a_stronger_penalty_pulls_the_extreme_models_off_the_bounds():
    rng = np.random.default_rng(3)
    R = (rng.random((30, 6)) < 0.5).astype(float)
    R[:, 0], R[:, 1] = 1.0, 0.0
    res = irt_1pl(R, l2=0.5)
    assert not res.ability_at_bound.any()
    assert res.ability.argmax() == 0 and res.ability.argmin() == 1


@pytest.mark.parametrize("fit", [irt_1pl, irt_2pl])
def test_it_reports_a_fit_stopped_at_max_iter_as_not_converged(fit):
    R, *_ = _simulate_2pl(10, 50, seed=7)
    res = fit(R, max_iter=1)
    assert res.n_iter == 1
    assert res.converged is False
    assert "ITERATIONS REACHED LIMIT" in res.message
    assert res.projected_gradient > 1e-3


def test_it_raises_rather_than_returning_non_finite_estimates(monkeypatch):
    def broken(fun, x0, **kwargs):
        return OptimizeResult(
            x=np.full_like(x0, np.nan), fun=np.nan, jac=np.zeros_like(x0), nit=3, success=True,
            message="CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL",
        )

    monkeypatch.setattr("scipy.optimize.minimize", broken)
    message = NON_FINITE_MESSAGE.format(
        method="irt_1pl", n_iter=3, message="CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"
    )
    with pytest.raises(FloatingPointError, match=f"^{re.escape(message)}$"):
        irt_1pl(np.array([[1.0, 0.0], [0.0, 1.0]]))


def test_the_2pl_newton_fit_raises_rather_than_iterating_on_a_non_finite_objective(monkeypatch):
    monkeypatch.setattr(_irt_newton._TwoPLCells, "value", lambda self, theta, beta, a: float("nan"))
    message = _irt_newton.NEWTON_NON_FINITE_MESSAGE.format(n_iter=0)
    with pytest.raises(FloatingPointError, match=f"^{re.escape(message)}$"):
        irt_2pl(np.array([[1.0, 0.0], [0.0, 1.0]]))


def test_ability_scaled_is_min_max_on_0_100_and_50_when_constant():
    R = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]], dtype=bool)
    res = irt_1pl(R)
    # Accuracies 3/3, 2/3, 1/3, 0/3: distinct totals, so distinct abilities.
    np.testing.assert_allclose(
        res.ability_scaled, 100 * (res.ability - res.ability.min()) / np.ptp(res.ability), atol=1e-12
    )
    assert res.ability_scaled.tolist()[0] == 100.0 and res.ability_scaled.tolist()[3] == 0.0
    assert irt_1pl(np.array([[1.0], [0.0]])).ability_scaled.tolist() == [50.0]


def test_results_are_frozen():
    res = irt_1pl(np.array([[1.0, 0.0]]))
    assert isinstance(res, IRTResult)
    with pytest.raises(AttributeError):
        res.converged = False


# ---------------------------------------------------------------------------
# parameter recovery and an independent implementation


@pytest.fixture(scope="module")
def simulated():
    return _simulate_2pl(100, 400, seed=2024)


def test_it_recovers_simulated_2pl_parameters(simulated):
    R, theta, beta, a = simulated
    fit = irt_2pl(R)
    assert fit.converged
    # 400 questions per model: ability SE ~0.15 against sd 1, so r ~0.99;
    # 100 models per question: difficulty SE ~0.25-0.4, r ~0.9-0.93 (seeds
    # 0-5 gave Pearson 0.885-0.928 and Spearman 0.947-0.958). Discrimination
    # is hard with 100 models (Spearman 0.65-0.74 over the same seeds).
    assert pearsonr(fit.ability, theta)[0] > 0.97
    assert pearsonr(fit.difficulty, beta)[0] > 0.85
    assert spearmanr(fit.difficulty, beta)[0] > 0.92
    assert spearmanr(fit.discrimination, a)[0] > 0.5


def test_1pl_recovers_abilities_and_difficulty_order_of_2pl_data(simulated):
    R, theta, beta, _ = simulated
    fit = irt_1pl(R)
    assert fit.converged
    # Mild misspecification (a ~ LogNormal(0, 0.3)); the 1PL still orders
    # models and questions by their totals, which track theta and beta.
    assert pearsonr(fit.ability, theta)[0] > 0.97
    assert spearmanr(fit.difficulty, beta)[0] > 0.92


def test_it_ranks_difficulties_like_the_mirt_package():
    fit_mirt = _mirt_or_skip()
    R, *_ = _simulate_2pl(500, 30, seed=8)
    ours_1pl, ours_2pl = irt_1pl(R), irt_2pl(R)
    persons_by_items = R.T.astype(int)  # mirt wants (persons, items) = (models, questions)
    ref_1pl = fit_mirt(persons_by_items, model="1PL", compute_standard_errors=False)
    ref_2pl = fit_mirt(persons_by_items, model="2PL", compute_standard_errors=False)
    # mirt integrates abilities out (marginal ML, N(0,1) ability
    # distribution); we estimate them jointly with an L2 penalty. The scales
    # differ (joint ML spreads difficulties outward, the penalty shrinks),
    # so values are not equal, but both order questions almost identically:
    # seeds 0-2 gave Spearman >= 0.999 (1PL, 2PL difficulty) and >= 0.98
    # (2PL discrimination).
    assert spearmanr(ours_1pl.difficulty, np.asarray(ref_1pl.model.parameters["difficulty"]))[0] > 0.99
    assert spearmanr(ours_2pl.difficulty, np.asarray(ref_2pl.model.parameters["difficulty"]))[0] > 0.99
    ref_a = np.asarray(ref_2pl.model.parameters["discrimination"])
    assert spearmanr(ours_2pl.discrimination, ref_a)[0] > 0.9


# ---------------------------------------------------------------------------
# multidimensional IRT


@pytest.fixture(scope="module")
def small():
    R, *_ = _simulate_2pl(20, 200, seed=9)
    return R


def test_mirt_is_reproducible_with_a_seed_and_differs_across_seeds(small):
    first = irt_mirt(small, epochs=50, rng=3)
    again = irt_mirt(small, epochs=50, rng=3)
    other = irt_mirt(small, epochs=50, rng=4)
    for name in ("ability", "ability_vectors", "difficulty", "discrimination", "elbo_trace"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert not np.allclose(first.difficulty, other.difficulty)
    assert (first.seed, other.seed) == (3, 4)
    assert irt_mirt(small, epochs=2, rng=np.random.default_rng(3)).seed is None


def test_mirt_ability_is_the_scaled_norm_of_the_ability_vectors(small):
    res = irt_mirt(small, n_dims=2, epochs=100, rng=0)
    assert isinstance(res, MIRTResult)
    assert res.ability_vectors.shape == (20, 2) and res.discrimination.shape == (200, 2)
    assert res.difficulty.shape == (200,) and res.elbo_trace.shape == (100,) and res.n_iter == 100
    norms = np.sqrt((res.ability_vectors**2).sum(axis=1))
    expected = 100 * (norms - norms.min()) / (norms.max() - norms.min())
    np.testing.assert_allclose(res.ability, expected, atol=1e-10)
    assert res.ability.min() == 0.0 and res.ability.max() == 100.0


def test_mirt_elbo_rises_on_average(small):
    res = irt_mirt(small, epochs=300, rng=0)
    assert np.all(np.isfinite(res.elbo_trace))
    assert res.elbo_trace[-100:].mean() > res.elbo_trace[:100].mean()


def test_mirt_first_adam_step_moves_every_mean_by_the_learning_rate(small):
    # Adam's first bias-corrected step is lr * g / (|g| + 1e-8): a move of lr
    # (to 1e-8 relative) for every parameter whose gradient is not tiny. The
    # initial means are the first three draws of the seeded Generator.
    gen = np.random.default_rng(5)
    n_questions, n_models = small.shape
    init = np.concatenate([
        gen.normal(0.0, 0.1, size=(n_models, 3)).ravel(),
        gen.normal(0.0, 0.1, size=(n_questions, 3)).ravel(),
        gen.normal(0.0, 0.1, size=n_questions),
    ])
    res = irt_mirt(small, epochs=1, learning_rate=0.01, rng=5)
    after = np.concatenate([res.ability_vectors.ravel(), res.discrimination.ravel(), res.difficulty])
    np.testing.assert_allclose(np.abs(after - init), 0.01, rtol=1e-5)


def test_mirt_difficulty_is_higher_for_harder_questions(small):
    res = irt_mirt(small, epochs=300, rng=0)
    # b enters as -b in the logit, so it should fall as the share correct rises.
    share_correct = small.mean(axis=1)
    assert spearmanr(res.difficulty, share_correct)[0] < -0.8


def test_mirt_convergence_heuristic_compares_the_last_two_tenths():
    # 20 epochs -> windows of 2: means of [-100, -100] vs [-100.5, -100.5]
    # differ by 0.5% (within 1%); vs [-50, -50] they differ by 100%.
    steady = np.r_[np.full(16, -300.0), [-100.5, -100.5, -100.0, -100.0]]
    jumping = np.r_[np.full(16, -300.0), [-100.0, -100.0, -50.0, -50.0]]
    assert mirt_module._mirt_converged(steady) is True
    assert mirt_module._mirt_converged(jumping) is False
    assert mirt_module._mirt_converged(np.full(9, -1.0)) is False  # fewer than 10 epochs
    assert mirt_module._mirt_converged(np.r_[np.full(19, -1.0), np.nan]) is False


# ---------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: irt_1pl([[1.0]], bounds=(5, -5)), BOUNDS_MESSAGE.format(name="bounds", value=(5, -5))),
        (lambda: irt_2pl([[1.0]], bounds=(0, np.inf)), BOUNDS_MESSAGE.format(name="bounds", value=(0, np.inf))),
        (lambda: irt_1pl([[1.0]], bounds=3), BOUNDS_MESSAGE.format(name="bounds", value=3)),
        (lambda: irt_2pl([[1.0]], discrimination_bounds=(0, 5)), DISCRIMINATION_BOUNDS_MESSAGE.format(value=(0, 5))),
        (lambda: irt_2pl([[1.0]], discrimination_bounds=(2, 1)), DISCRIMINATION_BOUNDS_MESSAGE.format(value=(2, 1))),
        (lambda: irt_1pl([[1.0]], l2=-0.1), L2_MESSAGE.format(value=-0.1)),
        (lambda: irt_2pl([[1.0]], l2=float("nan")), L2_MESSAGE.format(value=float("nan"))),
        (lambda: irt_1pl([[1.0]], max_iter=0), "max_iter must be an integer >= 1; got 0"),
        (lambda: irt_1pl([[1.0]], tol=0), "tol must be a positive finite number; got 0"),
        (lambda: irt_mirt([[1.0]], n_dims=0), "n_dims must be an integer >= 1; got 0"),
        (lambda: irt_mirt([[1.0]], n_dims=2.0), "n_dims must be an integer >= 1; got 2.0"),
        (lambda: irt_mirt([[1.0]], epochs=0), "epochs must be an integer >= 1; got 0"),
        (lambda: irt_mirt([[1.0]], learning_rate=0), "learning_rate must be a positive finite number; got 0"),
        (lambda: irt_mirt([[1.0]], learning_rate=np.inf), "learning_rate must be a positive finite number; got inf"),
        (lambda: irt_mirt([[1.0]], rng="x"), "rng must be a numpy Generator, an int seed or None; got 'x'"),
        (lambda: irt_1pl([[1.5]]), "R has credit 1.5 at (question 0, model 0); credit must lie in [0, 1]"),
        (lambda: irt_mirt([[np.nan]]), "R has models with no observed cell (columns [0]); drop them before scoring"),
    ],
)
def test_it_rejects_bad_arguments_with_exact_messages(call, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


# ---------------------------------------------------------------------------
# 2PL projected Newton (structured Hessian) against dense and L-BFGS-B references


def _dense_hessian(x, y, w, l2, h=1e-5):
    """Hessian of the 2PL objective by central differences of the analytic gradient."""
    n = len(x)
    H = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        H[:, i] = (irt._objective_2pl(x + e, y, w, l2)[1] - irt._objective_2pl(x - e, y, w, l2)[1]) / (2 * h)
    return (H + H.T) / 2


def _pieces_at(x, y, w, l2):
    n_questions, n_models = y.shape
    cells = _irt_newton._TwoPLCells(y, w, l2)
    parts = x[:n_models], x[n_models:n_models + n_questions], x[n_models + n_questions:]
    f = cells.value(*parts)
    g, pieces = cells.derivatives(*parts)
    return f, g, pieces


def test_the_structured_newton_step_equals_a_dense_solve_with_fixed_variables(partial):
    # Near the optimum the exact Hessian is positive definite; the Schur
    # complement route must give the same step as solving H_ff d_f = -g_f
    # with the dense Hessian (by finite differences of the gradient), the
    # fixed variables' step being 0.
    fit = irt_2pl(partial, tol=1e-12)
    y, w = _irt_common._targets_and_weights(partial)
    n_questions, n_models = partial.shape
    x = np.r_[fit.ability, fit.difficulty, fit.discrimination] + np.random.default_rng(3).normal(
        scale=0.05, size=n_models + 2 * n_questions)
    f, g, pieces = _pieces_at(x, y, w, 0.01)
    assert f == pytest.approx(irt._objective_2pl(x, y, w, 0.01)[0], rel=1e-13)
    np.testing.assert_allclose(g, irt._objective_2pl(x, y, w, 0.01)[1], rtol=1e-12, atol=1e-13)
    H = _dense_hessian(x, y, w, 0.01)
    free = np.ones(len(x), dtype=bool)
    free[[1, n_models + 2, n_models + n_questions + 4, n_models + 5, n_models + n_questions + 5]] = False
    stacked = np.empty((2 * n_questions, n_models))
    step = _irt_newton._newton_direction_2pl(g, pieces, free, 0.0, stacked)
    expected = np.zeros(len(x))
    expected[free] = np.linalg.solve(H[np.ix_(free, free)], -g[free])
    np.testing.assert_allclose(step, expected, rtol=1e-6, atol=1e-8)


def test_the_gauss_newton_matrix_is_the_fisher_information(partial):
    # J^T diag(w p (1 - p)) J + 2 l2 I with J = dz/dx written out cell by cell:
    # dz/dtheta_m = a_q, dz/dbeta_q = -a_q, dz/da_q = theta_m - beta_q.
    y, w = _irt_common._targets_and_weights(partial)
    n_questions, n_models = partial.shape
    rng = np.random.default_rng(4)
    theta, beta, a = rng.normal(size=n_models), rng.normal(size=n_questions), rng.uniform(0.3, 2, n_questions)
    x = np.r_[theta, beta, a]
    _, g, pieces = _pieces_at(x, y, w, 0.01)
    pieces.to_gauss_newton()
    n = len(x)
    F = 2 * 0.01 * np.eye(n)
    for q in range(n_questions):
        for m in range(n_models):
            if np.isnan(partial[q, m]):
                continue
            p = _sigmoid(a[q] * (theta[m] - beta[q]))
            J = np.zeros(n)
            J[m], J[n_models + q], J[n_models + n_questions + q] = a[q], -a[q], theta[m] - beta[q]
            F += p * (1 - p) * np.outer(J, J)
    stacked = np.empty((2 * n_questions, n_models))
    step = _irt_newton._newton_direction_2pl(g, pieces, np.ones(n, dtype=bool), 0.0, stacked)
    np.testing.assert_allclose(step, np.linalg.solve(F, -g), rtol=1e-9, atol=1e-11)


def test_the_2pl_fit_agrees_with_a_tight_lbfgsb_minimisation_of_the_same_objective():
    # A well-posed matrix: 60 models x 40 questions, no estimate on a bound.
    R, *_ = _simulate_2pl(60, 40, seed=11)
    y, w = _irt_common._targets_and_weights(R)
    n_questions, n_models = R.shape
    fit = irt_2pl(R)
    assert fit.converged and fit.projected_gradient <= 1e-9
    assert not (fit.ability_at_bound.any() or fit.difficulty_at_bound.any() or fit.discrimination_at_bound.any())
    bounds = [(-5, 5)] * (n_models + n_questions) + [(0.1, 5)] * n_questions
    x0 = np.r_[np.zeros(n_models + n_questions), np.ones(n_questions)]
    ref = minimize(lambda x: irt._objective_2pl(x, y, w, 0.01), x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"ftol": 1e-16, "gtol": 1e-11, "maxiter": 20000, "maxfun": 40000})
    got = np.r_[fit.ability, fit.difficulty, fit.discrimination]
    np.testing.assert_allclose(got, ref.x, rtol=0, atol=1e-5)
    assert fit.objective <= ref.fun + 1e-9 * abs(ref.fun)
    # The reported objective and residual are those of the independent kernel.
    f, g = irt._objective_2pl(got, y, w, 0.01)
    assert fit.objective == pytest.approx(f, rel=1e-13)
    assert np.abs(g).max() <= 1e-9


def test_the_2pl_fit_ends_lower_than_the_previous_lbfgsb_fit_with_a_small_projected_gradient():
    # 30 models x 2,000 questions (the shape of the paper's matrices, smaller):
    # the previous implementation (preconditioned L-BFGS-B, ftol = gtol = 1e-9)
    # stopped on its relative-reduction test with a projected gradient ~1e-2.
    R, *_ = _simulate_2pl(30, 2000, seed=13)
    y, w = _irt_common._targets_and_weights(R)
    n_questions, n_models = R.shape
    theta0, beta0 = irt._start_values(y, w, -5.0, 5.0)
    a0 = np.ones(n_questions)
    n = n_models + n_questions
    lo = np.r_[np.full(n, -5.0), np.full(n_questions, 0.1)]
    hi = np.r_[np.full(n, 5.0), np.full(n_questions, 5.0)]
    before, *_, before_pg = irt._fit_jml("irt_2pl", irt._objective_2pl, np.r_[theta0, beta0, a0],
                                         irt._curvature_scale(theta0, beta0, a0, w, 0.01), lo, hi, y, w, 0.01, 4,
                                         1000, 1e-9)
    fit = irt_2pl(R)
    assert fit.converged and fit.projected_gradient <= 1e-9 < before_pg
    assert fit.objective <= before.fun
    assert fit.n_iter < 50


def test_its_mirt_elbo_is_the_plain_formula(partial):
    # ELBO = sum_obs [y z - log(1 + e^z)] - 0.5 (|mu_theta|^2 + |mu_a|^2 + |mu_b|^2)
    # with z = (mu_a + eps_a) (mu_theta + eps_theta)^T - (mu_b + eps_b), by np.logaddexp.
    rng = np.random.default_rng(6)
    n_questions, n_models = partial.shape
    mu = (rng.normal(size=(n_models, 2)), rng.normal(size=(n_questions, 2)), rng.normal(size=n_questions))
    eps = (rng.normal(size=(n_models, 2)), rng.normal(size=(n_questions, 2)), rng.normal(size=n_questions))
    z = (mu[1] + eps[1]) @ (mu[0] + eps[0]).T - (mu[2] + eps[2])[:, None]
    obs = ~np.isnan(partial)
    yv = np.where(obs, partial, 0.0)
    expected = np.sum(np.where(obs, yv * z - np.logaddexp(0.0, z), 0.0)) - 0.5 * sum(np.sum(m * m) for m in mu)
    y, w = _irt_common._targets_and_weights(partial)
    assert mirt_module._mirt_elbo_and_grad(*mu, *eps, y, w)[0] == pytest.approx(expected, rel=1e-13)


def test_the_2pl_fit_on_row_blocks_in_threads_is_bit_identical_to_one_pass(monkeypatch):
    """Above _THREADED_CELLS the element-wise cell passes run on row blocks in threads; every value
    is the same as one whole-array pass (the sums stay whole-array), so the fit is bit for bit."""
    rng = np.random.default_rng(12)
    theta, b, a = rng.normal(size=30), rng.normal(size=9_000), rng.lognormal(0, 0.3, size=9_000)
    R = (rng.random((9_000, 30)) < 1 / (1 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))).astype(float)
    R[rng.random(R.shape) < 0.02] = np.nan
    assert R.size >= _irt_newton._THREADED_CELLS
    threaded = irt.irt_2pl(R)
    monkeypatch.setattr(_irt_newton, "_CELL_THREADS", 1)
    single = irt.irt_2pl(R)
    for field in ("difficulty", "ability", "discrimination"):
        assert np.array_equal(getattr(threaded, field), getattr(single, field))
    assert (threaded.objective, threaded.n_iter) == (single.objective, single.n_iter) and threaded.converged
