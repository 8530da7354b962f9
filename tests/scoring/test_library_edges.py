"""Edges of the human-side library where a confident number would be nonsense."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from scoring.analyses._common import correlation
from scoring.exceptions import ConvergenceError, NoEstimateError
from scoring.human_scale import bradley_terry, human_scale, spearman_brown


def _bt_by_scipy(harder, other, n):
    """Unpenalised Bradley-Terry by scipy's BFGS on the log-likelihood, centred to sum 0."""
    h, o = np.asarray(harder), np.asarray(other)

    def nll(b):
        return np.logaddexp(0.0, -(b[h] - b[o])).sum()

    def grad(b):
        p = 1.0 / (1.0 + np.exp(b[h] - b[o]))  # 1 - sigma(b_h - b_o)
        g = np.zeros(n)
        np.add.at(g, h, -p)
        np.add.at(g, o, p)
        return g

    res = minimize(nll, np.zeros(n), jac=grad, method="BFGS", options={"gtol": 1e-12, "maxiter": 10_000})
    return res.x - res.x.mean()


def test_an_unpenalised_fit_without_an_estimate_raises_and_names_the_questions():
    # question 0 is judged harder than 1 and 2 and never easier: its logit has no finite maximum
    harder, other = [0, 0, 1, 2], [1, 2, 2, 1]
    with pytest.raises(NoEstimateError, match=r"no maximum-likelihood estimate: question\(s\) \[0\]") as info:
        bradley_terry(harder, other, penalty=0.0)
    assert info.value.questions == (0,)
    assert isinstance(info.value, ConvergenceError)
    with pytest.raises(NoEstimateError):
        human_scale(harder, other, [0, 1, 0, 1], penalty=0.0, n_boot=0, n_splits=0)


def test_two_questions_one_always_harder_have_no_estimate():
    # the case that returned logits +-21.2 with standard errors near 30,000 and converged=True
    with pytest.raises(NoEstimateError, match=r"\[0\]"):
        bradley_terry([0] * 5, [1] * 5, penalty=0.0)


def test_a_penalty_keeps_that_case_finite():
    b, _ = bradley_terry([0] * 5, [1] * 5, penalty=0.1)
    assert np.isfinite(b).all() and b[0] > b[1]


def test_an_unpenalised_fit_with_an_estimate_matches_scipy():
    rng = np.random.default_rng(5)
    n = 8
    truth = rng.normal(size=n)
    i, j = rng.integers(0, n, (2, 400))
    keep = i != j
    i, j = i[keep], j[keep]
    first = rng.random(i.size) < 1.0 / (1.0 + np.exp(-(truth[i] - truth[j])))
    harder, other = np.where(first, i, j), np.where(first, j, i)
    b, _ = bradley_terry(harder, other, penalty=0.0, tol=1e-11)
    np.testing.assert_allclose(b, _bt_by_scipy(harder, other, n), atol=1e-6)


def test_two_disconnected_groups_each_with_an_estimate_do_not_raise():
    # {0, 1} and {2, 3}: each strongly connected within itself
    b, _ = bradley_terry([0, 1, 0, 2, 3, 2], [1, 0, 1, 3, 2, 3], penalty=0.0)
    assert np.isfinite(b).all()
    assert b[0] - b[1] == pytest.approx(np.log(2), abs=1e-8) and b[2] - b[3] == pytest.approx(np.log(2), abs=1e-8)


def test_spearman_brown_of_mirrored_halves_is_undefined():
    r = -1 + 2**-52  # the correlation of two exactly mirrored halves after rounding
    assert 2 * r / (1 + r) < -1e15  # what the plain formula gives
    assert np.isnan(spearman_brown(r))
    assert np.isnan(spearman_brown(-1.0))
    assert spearman_brown(-0.5) == pytest.approx(-2.0, abs=1e-15)  # defined, if odd: 2 (-1/2) / (1/2)
    assert spearman_brown(0.6) == pytest.approx(0.75, abs=1e-15)


def test_a_pearson_correlation_of_a_vector_constant_within_rounding_is_undefined():
    x = [1.0, 1.0 + 2**-52, 1.0, 1.0 + 2**-51]
    r = correlation(x, [1.0, 2.0, 3.0, 4.0], method="pearson")
    assert r.value is None and "constant within rounding" in r.undefined_reason
    assert correlation([1.0, 1.5, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0], method="pearson").value is not None
