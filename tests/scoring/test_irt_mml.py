"""1PL and 2PL IRT by marginal maximum likelihood: published estimates, slow kernels, invariants."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from scipy import integrate

import scoring._irt_mml_em as irt_mml_em
import scoring._irt_mml_information as irt_mml_information
import scoring.irt_mml as irt_mml
from scoring import ConvergenceError
from scoring.irt_mml import irt_1pl_mml, irt_2pl_mml, mml_log_likelihood

# mirt's published LSAT-7 estimates (slope-intercept form, logit = a theta + d, N(0, 1) prior).
# 2PL: ../shared/data/lsat7/SOURCE.md (mirt's tests/testthat/test-01-mirtOne.R, `mirt(data, 1)`).
MIRT_2PL_A = [0.988, 1.081, 1.706, 0.765, 0.736]
MIRT_2PL_D = [1.856, 0.808, 1.804, 0.486, 1.855]
MIRT_2PL_B = [-1.879, -0.747, -1.058, -0.635, -2.520]
# 1PL, one common slope with a N(0, 1) prior (= Rasch with estimated ability variance): the same mirt
# test file, `mirt(data, 'F = 1-5 \n CONSTRAIN = (1-5, a1)')` (modm4).
MIRT_1PL_A = 1.011
MIRT_1PL_D = [1.868, 0.791, 1.461, 0.521, 1.993]
# Standard errors of the 2PL slopes: half the width of mirt's published 95% intervals (Richardson
# extrapolation of the observed information, modm2 in the same file) over 1.959964.
MIRT_2PL_A_CI = [(0.6406, 1.3354), (0.7501, 1.4119), (1.0779, 2.334), (0.5022, 1.028), (0.4395, 1.032)]
# EAP abilities of the first six patterns (00000, 00001, 00010, 00011, 00100, 00101), modm1 there.
MIRT_2PL_EAP = [-1.8665957, -1.5266920, -1.5134024, -1.1852276, -1.0946830, -0.7666992]


@pytest.fixture(scope="module")
def lsat7(shared_data):
    """LSAT-7 as (items, persons) = (5, 1000) and the first column of each pattern."""
    with (shared_data / "lsat7" / "patterns.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    patterns = np.array([[int(r[f"item{i}"]) for i in range(1, 6)] for r in rows])
    counts = [int(r["count"]) for r in rows]
    assert sum(counts) == 1000
    R = np.repeat(patterns, counts, axis=0).T.astype(bool)
    first = np.cumsum([0, *counts[:-1]])
    return R, first


@pytest.fixture(scope="module")
def lsat7_2pl(lsat7):
    return irt_2pl_mml(lsat7[0])


def test_2pl_matches_mirts_published_lsat7_estimates(lsat7_2pl):
    fit = lsat7_2pl
    np.testing.assert_allclose(fit.discrimination, MIRT_2PL_A, atol=0.01)
    np.testing.assert_allclose(fit.intercept, MIRT_2PL_D, atol=0.01)
    np.testing.assert_allclose(fit.difficulty, MIRT_2PL_B, atol=0.01)
    assert fit.converged and not fit.discrimination_at_bound.any() and not fit.difficulty_at_bound.any()


def test_1pl_matches_mirts_published_lsat7_estimates(lsat7):
    fit = irt_1pl_mml(lsat7[0])
    np.testing.assert_allclose(fit.discrimination, MIRT_1PL_A, atol=0.01)
    np.testing.assert_allclose(fit.intercept, MIRT_1PL_D, atol=0.01)
    np.testing.assert_allclose(fit.difficulty, -np.array(MIRT_1PL_D) / MIRT_1PL_A, atol=0.01)


def test_eap_abilities_match_mirts_published_lsat7_scores(lsat7, lsat7_2pl):
    _, first = lsat7
    np.testing.assert_allclose(lsat7_2pl.ability[first[:6]], MIRT_2PL_EAP, atol=0.01)
    assert np.all((lsat7_2pl.ability_sd > 0.5) & (lsat7_2pl.ability_sd < 1.0))  # 5 items: a wide posterior


def test_slope_standard_errors_match_mirts_published_intervals(lsat7_2pl):
    published = [(high - low) / (2 * 1.959964) for low, high in MIRT_2PL_A_CI]
    np.testing.assert_allclose(lsat7_2pl.discrimination_se, published, atol=0.005)


def _numerical_standard_errors(R, a, b, h=1e-4):
    """SEs from a central-difference Hessian of the marginal log-likelihood in (a, b): a slow, obvious oracle."""
    x0 = np.concatenate([a, b])
    n = len(a)

    def ll(x):
        return mml_log_likelihood(R, x[n:], x[:n])

    hess = np.empty((2 * n, 2 * n))
    for i in range(2 * n):
        for j in range(i, 2 * n):
            e_i, e_j = np.eye(2 * n)[i] * h, np.eye(2 * n)[j] * h
            hess[i, j] = hess[j, i] = (ll(x0 + e_i + e_j) - ll(x0 + e_i - e_j) - ll(x0 - e_i + e_j)
                                       + ll(x0 - e_i - e_j)) / (4 * h * h)
    se = np.sqrt(np.diag(np.linalg.inv(-hess)))
    return se[:n], se[n:]


def test_louis_standard_errors_equal_the_numerical_observed_information(lsat7, lsat7_2pl):
    fit = lsat7_2pl
    se_a, se_b = _numerical_standard_errors(lsat7[0], fit.discrimination, fit.difficulty)
    np.testing.assert_allclose(fit.discrimination_se, se_a, rtol=2e-3)
    np.testing.assert_allclose(fit.difficulty_se, se_b, rtol=2e-3)


def test_1pl_standard_errors_equal_the_numerical_observed_information(lsat7):
    R = lsat7[0]
    fit = irt_1pl_mml(R)
    a, b = float(fit.discrimination[0]), fit.difficulty
    h = 1e-4
    x0 = np.concatenate([[a], b])

    def ll(x):
        return mml_log_likelihood(R, x[1:], np.full(5, x[0]))

    hess = np.empty((6, 6))
    for i in range(6):
        for j in range(i, 6):
            e_i, e_j = np.eye(6)[i] * h, np.eye(6)[j] * h
            hess[i, j] = hess[j, i] = (ll(x0 + e_i + e_j) - ll(x0 + e_i - e_j) - ll(x0 - e_i + e_j)
                                       + ll(x0 - e_i - e_j)) / (4 * h * h)
    se = np.sqrt(np.diag(np.linalg.inv(-hess)))
    np.testing.assert_allclose(fit.discrimination_se, se[0], rtol=2e-3)
    np.testing.assert_allclose(fit.difficulty_se, se[1:], rtol=2e-3)


def test_woodbury_standard_errors_equal_the_direct_inverse():
    # More parameters than (model, node) columns: the Woodbury branch; compared with the direct one.
    rng = np.random.default_rng(3)
    theta = rng.normal(size=8)
    b = rng.normal(size=300)
    p = 1 / (1 + np.exp(-(theta[None, :] - b[:, None])))
    R = rng.random(p.shape) < p
    fit = irt_2pl_mml(R)
    blocks_calls = []
    original = irt_mml_information._diag_inverse_blocks

    def direct(blocks, sizes, v, signs):
        blocks_calls.append(v.shape)
        pad = np.zeros((v.shape[0], v.shape[0] - v.shape[1] + 1))  # force the n x n branch
        return original(blocks, sizes, np.hstack([v, pad]), np.concatenate([signs, np.ones(pad.shape[1])]))

    irt_mml_information._diag_inverse_blocks = direct
    try:
        again = irt_2pl_mml(R)
    finally:
        irt_mml_information._diag_inverse_blocks = original
    assert blocks_calls and blocks_calls[0][0] > blocks_calls[0][1]  # the fit's own call took Woodbury
    ok = np.isfinite(fit.discrimination_se)
    assert ok.sum() > 100
    np.testing.assert_allclose(fit.discrimination_se[ok], again.discrimination_se[ok], rtol=1e-6)
    np.testing.assert_allclose(fit.difficulty_se, again.difficulty_se, rtol=1e-6)


def test_marginal_log_likelihood_equals_an_adaptive_integral():
    # Two questions, three models with credit 1, 0.5 (partial) and NaN (unobserved).
    R = np.array([[1.0, 0.5, np.nan], [0.0, 1.0, 1.0]])
    a, b = np.array([1.3, 0.7]), np.array([-0.4, 0.9])

    def person(m):
        def integrand(t):
            total = 0.0
            for q in range(2):
                if not np.isnan(R[q, m]):
                    p = 1 / (1 + math.exp(-a[q] * (t - b[q])))
                    total += R[q, m] * math.log(p) + (1 - R[q, m]) * math.log(1 - p)
            return math.exp(total - t * t / 2) / math.sqrt(2 * math.pi)
        return math.log(integrate.quad(integrand, -12, 12, epsabs=1e-13)[0])

    expected = sum(person(m) for m in range(3))
    got = mml_log_likelihood(R, b, a, n_quadrature=801, theta_range=(-12.0, 12.0))
    assert got == pytest.approx(expected, abs=1e-8)


def test_the_e_step_equals_a_slow_loop_over_cells():
    rng = np.random.default_rng(5)
    R = rng.random((6, 4))
    R[rng.random(R.shape) < 0.3] = np.nan
    a, b = rng.uniform(0.5, 2, 6), rng.normal(size=6)
    nodes, weights = irt_mml._quadrature(11, (-4.0, 4.0))
    y, w = irt_mml._targets_and_weights(R)
    ll, post = irt_mml._e_step(y, w, a, b, nodes, np.log(weights))
    slow = np.zeros((4, 11))
    for m in range(4):
        for k in range(11):
            for q in range(6):
                if not np.isnan(R[q, m]):
                    p = 1 / (1 + math.exp(-a[q] * (nodes[k] - b[q])))
                    slow[m, k] += R[q, m] * math.log(p) + (1 - R[q, m]) * math.log(1 - p)
    joint = np.exp(slow) * weights[None, :]
    np.testing.assert_allclose(post, joint / joint.sum(axis=1, keepdims=True), rtol=1e-12)
    assert ll == pytest.approx(float(np.log(joint.sum(axis=1)).sum()), rel=1e-13)


def test_it_recovers_simulated_item_parameters():
    rng = np.random.default_rng(11)
    theta = rng.normal(size=3000)
    a_true, b_true = rng.uniform(0.6, 2.0, 15), rng.uniform(-1.5, 1.5, 15)
    p = 1 / (1 + np.exp(-a_true[:, None] * (theta[None, :] - b_true[:, None])))
    fit = irt_2pl_mml(rng.random(p.shape) < p)
    np.testing.assert_allclose(fit.difficulty, b_true, atol=0.15)
    np.testing.assert_allclose(fit.discrimination, a_true, atol=0.3)
    # The true values lie within 4 standard errors.
    assert np.all(np.abs(fit.difficulty - b_true) < 4 * fit.difficulty_se)


def test_permuting_models_changes_no_item_parameter(lsat7):
    R = lsat7[0][:, ::7]
    perm = np.random.default_rng(0).permutation(R.shape[1])
    fit, permuted = irt_2pl_mml(R), irt_2pl_mml(R[:, perm])
    np.testing.assert_allclose(permuted.difficulty, fit.difficulty, atol=1e-9)
    np.testing.assert_allclose(permuted.ability, fit.ability[perm], atol=1e-9)


def test_threaded_row_blocks_give_the_one_block_fit(monkeypatch):
    rng = np.random.default_rng(2)
    R = rng.random((400, 12)) < 0.6
    monkeypatch.setattr(irt_mml_em, "_THREADED_CELLS", 1 << 40)
    one = irt_2pl_mml(R)
    monkeypatch.setattr(irt_mml_em, "_THREADED_CELLS", 1)
    monkeypatch.setattr(irt_mml_em.os, "cpu_count", lambda: 2)
    two = irt_2pl_mml(R)
    np.testing.assert_allclose(two.difficulty, one.difficulty, atol=1e-9)
    np.testing.assert_allclose(two.discrimination, one.discrimination, atol=1e-9)
    assert two.log_likelihood == pytest.approx(one.log_likelihood, abs=1e-8)


def test_all_solved_and_all_failed_questions_end_on_their_bounds():
    R = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]], dtype=float)
    R = np.repeat(R, 3, axis=1)
    fit = irt_2pl_mml(R)
    assert fit.difficulty[0] == -6.0 and fit.difficulty[3] == 6.0
    assert fit.difficulty_at_bound.tolist() == [True, False, False, True]
    assert np.isnan(fit.difficulty_se[[0, 3]]).all() and np.isfinite(fit.difficulty_se[[1, 2]]).all()


def test_an_unobserved_question_keeps_its_start_and_has_no_standard_error():
    R = np.array([[1.0, 0.0, 1.0, 1.0, 0.0], [np.nan] * 5, [0.0, 0.0, 1.0, 1.0, 0.0]])
    fit = irt_2pl_mml(R)
    assert fit.difficulty[1] == 0.0 and fit.discrimination[1] == 1.0
    assert np.isnan(fit.difficulty_se[1]) and np.isnan(fit.discrimination_se[1])


def test_max_iter_1_raises_convergence_error(lsat7):
    with pytest.raises(ConvergenceError, match="irt_2pl_mml did not converge"):
        irt_2pl_mml(lsat7[0], max_iter=1)
    with pytest.raises(ConvergenceError, match="irt_1pl_mml did not converge"):
        irt_1pl_mml(lsat7[0], max_iter=1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_quadrature": 2}, irt_mml.QUADRATURE_MESSAGE.format(value=2)),
    ({"discrimination_bounds": (0.0, 5.0)},
     irt_mml.BOUNDS_MESSAGE.format(name="discrimination_bounds", rule="0 < low < high", value=(0.0, 5.0))),
    ({"difficulty_bounds": (3.0, -3.0)},
     irt_mml.BOUNDS_MESSAGE.format(name="difficulty_bounds", rule="low < high", value=(3.0, -3.0))),
    ({"theta_range": "wide"}, irt_mml.BOUNDS_MESSAGE.format(name="theta_range", rule="low < high", value="wide")),
])
def test_it_rejects_bad_settings_by_name(kwargs, message):
    with pytest.raises(ValueError) as info:
        irt_2pl_mml(np.ones((2, 2), dtype=bool), **kwargs)
    assert str(info.value) == message


def test_log_likelihood_rejects_bad_parameters_by_name_and_position():
    R = np.ones((3, 2), dtype=bool)
    with pytest.raises(ValueError) as info:
        mml_log_likelihood(R, [0.0, 0.0], [1.0, 1.0, 1.0])
    assert str(info.value) == irt_mml.SHAPE_MESSAGE.format(name="difficulty", n=3, shape=(2,))
    with pytest.raises(ValueError) as info:
        mml_log_likelihood(R, [0.0, 0.0, 0.0], [1.0, -1.0, 1.0])
    assert str(info.value) == irt_mml.PARAMETER_MESSAGE.format(name="discrimination", rule=" > 0", bad=-1.0,
                                                              index=1)
