"""SSR and the standard errors it reads: bounded by the penalty, equal to an independent computation.

The standard errors come from the inverse of the penalised information on the
sum-to-zero subspace. Here that inverse is computed independently: the optimum
by scipy's optimiser on the objective written per judgment, the information
summed per judgment, and the inverse on an orthonormal basis of the subspace
(``scipy.linalg.null_space``), with no pseudo-inverse and no rank-one shift.
"""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import linalg
from scipy.optimize import minimize

from scoring.human_scale import human_scale

PENALTY = 0.1
#: 202 votes on 50 questions: one subject of an adaptive simulated study at 8 votes per question
#: (bench adaptive, seed 1006), where 19 questions had won or lost every comparison and a
#: truncated-eigenvalue pseudo-inverse left the constant direction in (SE ~2.6e6, SSR ~ -4e11).
NULL_DIRECTION_CASE = Path(__file__).parent / "data" / "bt_null_direction.json"


def _independent(harder, other, n, penalty):
    """Optimum, standard errors and SSR of the penalised scale, computed without the library."""
    h, o = np.asarray(harder), np.asarray(other)

    def negative(x):
        d = x[h] - x[o]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = np.bincount(h, weights=1.0 - p, minlength=n) - np.bincount(o, weights=1.0 - p, minlength=n)
        return np.logaddexp(0.0, -d).sum() + 0.5 * penalty * x @ x, -(grad - penalty * x)

    b = minimize(negative, np.zeros(n), jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-16}).x
    info = penalty * np.eye(n)
    for i, j in zip(h.tolist(), o.tolist(), strict=True):
        p = 1.0 / (1.0 + math.exp(-(b[i] - b[j])))
        u = np.zeros(n)
        u[i], u[j] = 1.0, -1.0
        info += p * (1.0 - p) * np.outer(u, u)
    basis = linalg.null_space(np.ones((1, n)))  # orthonormal, shape (n, n - 1)
    cov = basis @ np.linalg.inv(basis.T @ info @ basis) @ basis.T
    se = np.sqrt(np.diag(cov))
    v = np.var(b, ddof=1)
    return b, se, (v - np.mean(se**2)) / v


def test_a_question_that_won_every_comparison_leaves_ssr_finite_and_equal_to_an_independent_computation():
    # Question 0 was judged harder in all four of its comparisons (no finite unpenalised estimate);
    # the others form a cycle of wins and losses.
    harder = [0, 0, 0, 0, 1, 2, 3, 1, 3, 2]
    other = [1, 2, 3, 1, 2, 3, 1, 3, 2, 1]
    s = human_scale(harder, other, list(range(10)), penalty=PENALTY, n_boot=0, n_splits=0)
    b, se, ssr = _independent(harder, other, 4, PENALTY)
    np.testing.assert_allclose(s.difficulty, b, atol=1e-6)
    np.testing.assert_allclose(s.se, se, atol=1e-6)
    assert np.all(s.se <= 1 / math.sqrt(PENALTY))  # the penalty bounds every variance by 1 / penalty
    assert math.isfinite(s.ssr) and s.ssr <= 1.0
    assert s.ssr == pytest.approx(ssr, abs=1e-6)


def test_standard_errors_do_not_carry_the_constant_direction():
    """The case where a truncated pseudo-inverse kept the information's zero eigenvalue (round-off
    3.0e-15 against its cutoff 2.9e-15): every SE and SSR match the independent computation."""
    case = json.loads(NULL_DIRECTION_CASE.read_text(encoding="utf-8"))
    harder, other = case["harder"], case["other"]
    n = 50
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = human_scale(harder, other, np.zeros(len(harder), dtype=int), n_items=n, penalty=PENALTY, n_boot=0,
                        n_splits=0)
    b, se, ssr = _independent(harder, other, n, PENALTY)
    wins = np.bincount(harder, minlength=n)
    losses = np.bincount(other, minlength=n)
    assert ((wins == 0) | (losses == 0)).sum() >= 5  # questions without both a win and a loss
    np.testing.assert_allclose(s.difficulty, b, atol=1e-6)
    np.testing.assert_allclose(s.se, se, atol=1e-6)
    assert np.all(s.se <= 1 / math.sqrt(PENALTY))
    assert s.ssr == pytest.approx(ssr, abs=1e-6)
    assert 0.0 < s.ssr < 1.0
