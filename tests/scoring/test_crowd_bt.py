"""Crowd Bradley-Terry (scoring.crowd_bt): the scale with one reliability per evaluator."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.metrics import roc_auc_score

from scoring.crowd_bt import crowd_bradley_terry
from scoring.exceptions import ConvergenceError
from scoring.human_scale import bradley_terry


def simulate(seed, *, eta, n_items=40, per_evaluator=60, spread=1.2):
    """Votes from a Bradley-Terry truth: evaluator e follows it with probability eta[e], else flips a coin."""
    g = np.random.default_rng(seed)
    truth = g.normal(0, spread, n_items)
    h, o, ev = [], [], []
    for e, eta_e in enumerate(eta):
        i = g.integers(0, n_items, per_evaluator)
        j = (i + g.integers(1, n_items, per_evaluator)) % n_items
        p = eta_e / (1 + np.exp(-(truth[i] - truth[j]))) + (1 - eta_e) / 2
        win = g.random(per_evaluator) < p
        h += np.where(win, i, j).tolist()
        o += np.where(win, j, i).tolist()
        ev += [e] * per_evaluator
    return truth, np.array(h), np.array(o), np.array(ev)


SPAMMERS = np.r_[np.zeros(5), np.ones(15)]  # 5 random clickers, 15 careful judges


@pytest.mark.parametrize("seed", range(6))
def test_reliabilities_separate_spammers_from_careful_judges(seed):
    truth, h, o, ev = simulate(seed, eta=SPAMMERS)
    fit = crowd_bradley_terry(h, o, ev, n_items=truth.size, n_evaluators=SPAMMERS.size)
    assert roc_auc_score(SPAMMERS, fit.reliability) > 0.9


def test_the_weighted_scale_recovers_the_truth_better_than_the_unweighted_one():
    gains = []
    for seed in range(10):
        truth, h, o, ev = simulate(100 + seed, eta=SPAMMERS)
        fit = crowd_bradley_terry(h, o, ev, n_items=truth.size, n_evaluators=SPAMMERS.size)
        plain, _ = bradley_terry(h, o, n_items=truth.size)
        gains.append(stats.spearmanr(fit.difficulty, truth).statistic - stats.spearmanr(plain, truth).statistic)
    gains = np.array(gains)
    assert np.mean(gains) > 0.005 and (gains > 0).sum() >= 8, gains


def test_it_recovers_simulated_reliabilities_with_intervals_that_cover_them():
    eta = np.tile([0.25, 0.5, 0.75, 1.0], 4)
    errors, covered = [], 0
    for seed in range(4):
        truth, h, o, ev = simulate(200 + seed, eta=eta, n_items=30, per_evaluator=250, spread=2.0)
        fit = crowd_bradley_terry(h, o, ev, n_items=truth.size, n_evaluators=eta.size)
        errors.append(fit.reliability - eta)
        covered += int(((fit.reliability_low <= eta) & (eta <= fit.reliability_high)).sum())
    errors = np.concatenate(errors)
    assert np.mean(np.abs(errors)) < 0.12, errors
    assert covered >= 0.8 * errors.size
    # The order of the reliabilities is recovered: Spearman with the truth over all evaluators.
    assert stats.spearmanr(np.tile(eta, 4), np.tile(eta, 4) + errors).statistic > 0.8


def test_the_fit_maximises_the_likelihood_it_documents():
    # Cross-check with another optimiser (SLSQP, finite-difference gradients, eta bounded to [0, 1]) on the
    # documented penalised likelihood written out here.
    _, h, o, ev = simulate(7, eta=[1.0, 0.6, 0.0], n_items=8, per_evaluator=40)
    fit = crowd_bradley_terry(h, o, ev, n_items=8, n_evaluators=3, tol=1e-9)

    def negative(x):
        b, eta = x[:8], x[8:]
        p = 1 / (1 + np.exp(-(b[h] - b[o])))
        return -(np.log(0.5 + eta[ev] * (p - 0.5)).sum() - 0.05 * b @ b)

    # The likelihood need not be concave: the best of several starts (plain Bradley-Terry or zeros, eta 0.5-1).
    plain, _ = bradley_terry(h, o, n_items=8)
    starts = [np.r_[b0, [e0] * 3] for b0 in (np.zeros(8), plain) for e0 in (0.5, 0.9, 1.0)]
    runs = [optimize.minimize(negative, x0, method="SLSQP", bounds=[(None, None)] * 8 + [(0.0, 1.0)] * 3,
                              options={"ftol": 1e-12, "maxiter": 1000}) for x0 in starts]
    other = min((r for r in runs if r.success), key=lambda r: r.fun)
    assert fit.log_likelihood == pytest.approx(-other.fun, abs=1e-5)
    np.testing.assert_allclose(fit.reliability, other.x[8:], atol=1e-3)
    np.testing.assert_allclose(fit.difficulty, other.x[:8], atol=1e-3)


def test_vote_weights_are_the_posterior_of_following_the_scale():
    _, h, o, ev = simulate(3, eta=[1.0, 0.5], n_items=10, per_evaluator=50)
    fit = crowd_bradley_terry(h, o, ev, n_items=10, n_evaluators=2)
    b, eta = fit.difficulty, fit.reliability
    p = 1 / (1 + np.exp(-(b[h] - b[o])))
    np.testing.assert_allclose(fit.vote_weight, eta[ev] * p / (eta[ev] * p + (1 - eta[ev]) / 2), rtol=1e-12)
    assert fit.n_judgments.tolist() == [50, 50]


def test_unjudged_items_and_evaluators_are_nan():
    fit = crowd_bradley_terry([0, 0, 1], [1, 2, 2], [0, 0, 0], n_items=4, n_evaluators=2)
    assert np.isnan(fit.difficulty[3]) and np.isnan(fit.se[3])
    assert np.isnan(fit.reliability[1]) and np.isnan(fit.reliability_low[1])
    assert np.all(np.isfinite(fit.difficulty[:3]))


def test_max_iter_one_raises_convergence_error():
    _, h, o, ev = simulate(1, eta=SPAMMERS)
    with pytest.raises(ConvergenceError):
        crowd_bradley_terry(h, o, ev, max_iter=1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"harder": [0, 1], "other": [1], "evaluator": [0, 0]}, "equal lengths"),
    ({"harder": [0, 1], "other": [0, 2], "evaluator": [0, 0]}, "compares a question with itself"),
    ({"harder": [0, 5], "other": [1, 2], "evaluator": [0, 0], "n_items": 3}, "harder holds index 5 at position 1"),
    ({"harder": [0], "other": [1], "evaluator": [0], "penalty": 0.0}, "penalty must be a number > 0.0; got 0.0"),
    ({"harder": [0], "other": [1], "evaluator": [0], "ci_level": 1.5}, "ci_level must be a number > 0.0 and < 1.0"),
])
def test_it_names_the_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        crowd_bradley_terry(**kwargs)
