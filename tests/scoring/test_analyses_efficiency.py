"""Timing helpers and the synthetic matrices of section 3.4."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from scoring.analyses.efficiency import eip_scaling, simulate_responses, time_methods
from scoring.eip import eip
from scoring.irt import irt_1pl


def test_it_simulates_a_uint8_matrix_independent_of_the_chunk_size():
    big = simulate_responses(1000, 7, rng=3)
    small = simulate_responses(1000, 7, rng=3, chunk_bytes=8 * 7 * 13)  # 13 rows a chunk
    assert big.R.dtype == np.uint8 and big.R.shape == (1000, 7)
    assert set(np.unique(big.R)) <= {0, 1}
    np.testing.assert_array_equal(big.R, small.R)
    np.testing.assert_array_equal(big.difficulty, small.difficulty)


def test_its_1pl_cells_follow_the_logistic_probability():
    # Independent check: P(cell = 1) = sigmoid(theta_m - beta_q) for the
    # returned parameters. The mean of 60,000 Bernoulli cells is within
    # 4 standard errors (sd <= 0.5 / sqrt(60000) = 0.002) of the mean p.
    sim = simulate_responses(3000, 20, rng=0)
    p = expit(sim.ability[None, :] - sim.difficulty[:, None])
    assert sim.R.mean() == pytest.approx(p.mean(), abs=4 * 0.5 / np.sqrt(p.size))
    # Per model over 3000 questions: within 4 * 0.5 / sqrt(3000) = 0.037.
    np.testing.assert_allclose(sim.R.mean(axis=0), p.mean(axis=0), rtol=0, atol=4 * 0.5 / np.sqrt(3000))
    # and the questions a model solves are mostly the easy ones
    assert stats.spearmanr(sim.R.mean(axis=1), -sim.difficulty).statistic > 0.7


def test_its_uniform_model_has_density_one_half():
    sim = simulate_responses(2000, 10, model="uniform", rng=1)
    assert sim.ability is None
    assert sim.R.mean() == pytest.approx(0.5, abs=4 * 0.5 / np.sqrt(20000))


def test_it_times_eip_on_growing_sizes_and_divides_per_iteration_and_cell():
    res = eip_scaling([(400, 5), (800, 10)], repeats=2, rng=0)
    first_matrix = simulate_responses(400, 5, rng=0).R  # same generator state for the first size
    assert res.rows[0].n_iter == eip(first_matrix).n_iter
    assert res.rows[0].density == pytest.approx(first_matrix.mean(), abs=1e-15)
    for row in res.rows:
        assert len(row.seconds) == 2
        assert row.n_cells == row.n_questions * row.n_models
        expected = row.median_seconds / row.n_iter / (row.n_cells / 1e6)
        assert row.seconds_per_iter_per_mcell == pytest.approx(expected, rel=1e-12)


def test_it_times_each_method_and_reports_its_iterations():
    R = simulate_responses(300, 6, rng=2).R
    res = time_methods(R, methods=("eip", "irt_1pl"), repeats={"eip": 3})
    assert len(res.timings["eip"].seconds) == 3
    assert len(res.timings["irt_1pl"].seconds) == 1  # omitted from the mapping: once
    assert res.timings["eip"].n_iter == eip(R).n_iter
    assert res.timings["irt_1pl"].n_iter == irt_1pl(R).n_iter
    assert res.timings["eip"].median_seconds == pytest.approx(float(np.median(res.timings["eip"].seconds)), rel=1e-12)


def test_it_records_a_method_that_does_not_converge():
    R = simulate_responses(200, 5, rng=4).R
    res = time_methods(R, methods=("eip",), repeats=1, method_kwargs={"eip": {"max_iter": 1}})
    timing = res.timings["eip"]
    assert timing.converged is False and timing.n_iter == 1
    assert timing.error.startswith("EIP did not converge")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: time_methods(np.ones((3, 2)), methods=("eip", "glm")),
            "methods must be a non-empty subset of ('eip', 'irt_1pl', 'irt_2pl', 'irt_mirt'); got ('eip', 'glm')",
        ),
        (lambda: time_methods(np.ones((3, 2)), repeats=0), "repeats must be an integer >= 1; got 0"),
        (lambda: eip_scaling([(10, 0)]), "sizes must be an integer >= 1; got 0"),
        (lambda: eip_scaling([10]), "sizes must hold (n_questions, n_models) pairs; got 10"),
        (lambda: simulate_responses(10, 2, model="2pl"), "model must be one of ('1pl', 'uniform'); got '2pl'"),
    ],
)
def test_it_rejects_bad_arguments(call, message):
    with pytest.raises(ValueError) as exc:
        call()
    assert str(exc.value) == message
