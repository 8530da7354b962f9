"""EIP (paper sections 2.1-2.4): hand-worked matrices, a dense reference, invariants."""
from __future__ import annotations

import dataclasses
import re
import tracemalloc

import numpy as np
import pytest

from scoring.eip import NO_KEPT_QUESTIONS, eip
from scoring.exceptions import ConvergenceError

NAN = np.nan

# 3 questions x 2 models. m0 solves q0 and q1, m1 solves q2.
THREE_BY_TWO = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float64)


def _three_by_two_fixed_point(a: float) -> tuple[np.ndarray, np.ndarray]:
    """Closed form for THREE_BY_TWO (no dangling model).

    S = (1, 1, 1); failures: q0, q1 by m1 and q2 by m0, so F = (1, 2).
        pQ0 = pQ1 = a * pM1 / 2 + (1 - a) / 3,   pQ2 = a * pM0 + (1 - a) / 3
        pM0 = a * (pQ0 + pQ1) + (1 - a) / 2,      pM1 = a * pQ2 + (1 - a) / 2
    With x = pM0 and pM1 = 1 - x:
        x = a * (a (1 - x) + 2 (1 - a) / 3) + (1 - a) / 2
        x (1 + a^2) = a^2 + 2 a (1 - a) / 3 + (1 - a) / 2
    """
    x = (a**2 + 2 * a * (1 - a) / 3 + (1 - a) / 2) / (1 + a**2)
    pq01 = a * (1 - x) / 2 + (1 - a) / 3
    pq2 = a * x + (1 - a) / 3
    return np.array([pq01, pq01, pq2]), np.array([x, 1 - x])


def _eip_dense_reference(R, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Slow, obvious EIP: explicit transition matrices and a direct linear solve.

    Builds P_QM = diag(S)^-1 A and P_MQ = diag(F)^-1 B^T over kept questions
    (a dangling model's row of P_MQ is uniform, 1 / Qk), then solves the fixed
    point of the (Qk + M)-state chain of equations 2-3 as one linear system:

        pi_Q - alpha P_MQ^T pi_M = (1 - alpha) / Qk
        pi_M - alpha P_QM^T pi_Q = (1 - alpha) / M

    Returns (difficulty with NaN for excluded questions, competency).
    """
    R = np.asarray(R, dtype=np.float64)
    observed = ~np.isnan(R)
    A = np.where(observed, R, 0.0)
    B = np.where(observed, 1.0 - R, 0.0)
    kept = (A.sum(axis=1) > 0) & (B.sum(axis=1) > 0)
    A, B = A[kept], B[kept]
    n_kept, n_models = A.shape
    P_QM = A / A.sum(axis=1, keepdims=True)
    P_MQ = np.empty((n_models, n_kept))
    for m in range(n_models):
        failures = B[:, m].sum()
        P_MQ[m] = B[:, m] / failures if failures > 0 else 1.0 / n_kept
    system = np.eye(n_kept + n_models)
    system[:n_kept, n_kept:] = -alpha * P_MQ.T
    system[n_kept:, :n_kept] = -alpha * P_QM.T
    rhs = np.concatenate([np.full(n_kept, (1 - alpha) / n_kept), np.full(n_models, (1 - alpha) / n_models)])
    solution = np.linalg.solve(system, rhs)
    difficulty = np.full(R.shape[0], np.nan)
    difficulty[kept] = solution[:n_kept]
    return difficulty, solution[n_kept:]


def _random_response_matrix(rng: np.random.Generator) -> np.ndarray:
    """A small matrix with NaN cells, partial credit and usually a dangling model."""
    n_questions, n_models = int(rng.integers(4, 40)), int(rng.integers(2, 9))
    ability = rng.normal(size=n_models)
    hardness = rng.normal(size=n_questions)
    p = 1 / (1 + np.exp(-(ability[None, :] - hardness[:, None])))
    R = (rng.random((n_questions, n_models)) < p).astype(np.float64)
    partial = rng.random(R.shape) < 0.3
    R[partial] = rng.random(int(partial.sum()))
    R[rng.random(R.shape) < 0.15] = np.nan
    # Row 0 is observed for every model and kept (a success and a failure).
    R[0, :] = np.where(np.arange(n_models) % 2 == 0, 1.0, 0.0)
    if rng.random() < 0.7:  # a model that never fails what it answers: dangling
        m = int(rng.integers(n_models))
        R[:, m] = np.where(np.isnan(R[:, m]), np.nan, 1.0)
        R[0, (m + 1) % n_models] = 0.0
    return R


def _l1_to_fixed_point(res, difficulty: np.ndarray, competency: np.ndarray) -> float:
    kept = ~np.isnan(difficulty)
    return float(np.abs(res.difficulty[kept] - difficulty[kept]).sum() + np.abs(res.competency - competency).sum())


# --- hand-worked matrices -----------------------------------------------------


def test_it_matches_the_hand_solved_three_by_two_matrix_at_alpha_one_half():
    # a = 1/2: x (5/4) = 1/4 + 1/6 + 1/4 = 2/3, so pM = (8/15, 7/15);
    # pQ0 = pQ1 = (7/15)/4 + 1/6 = 17/60, pQ2 = (8/15)/2 + 1/6 = 26/60.
    res = eip(THREE_BY_TWO, alpha=0.5)
    np.testing.assert_allclose(res.competency, [8 / 15, 7 / 15], rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.difficulty, [17 / 60, 17 / 60, 26 / 60], rtol=0, atol=1e-10)


@pytest.mark.parametrize("alpha", [0.1, 0.85, 0.99])
def test_it_matches_the_closed_form_of_the_three_by_two_matrix(alpha):
    difficulty, competency = _three_by_two_fixed_point(alpha)
    # Near alpha = 1 this tiny chain mixes slowly (about alpha^2 per iteration).
    res = eip(THREE_BY_TWO, alpha=alpha, tol=1e-13, max_iter=10_000)
    bound = alpha / (1 - alpha) * 1e-13
    np.testing.assert_allclose(res.difficulty, difficulty, rtol=0, atol=bound + 1e-15)
    np.testing.assert_allclose(res.competency, competency, rtol=0, atol=bound + 1e-15)


def test_it_spreads_a_dangling_models_mass_uniformly_over_kept_questions():
    # m0 solves everything, so F(m0) = 0: its mass goes 1/3 to each question.
    # S = (2, 2, 2); failures: q0 by m2, q1 and q2 by m1, so F = (0, 2, 1).
    # a = 1/2:  pM0 = a * (pQ0 + pQ1 + pQ2) / 2 + 1/6 = 1/4 + 1/6 = 5/12
    #           pM1 = pQ0 / 4 + 1/6,  pM2 = (pQ1 + pQ2) / 4 + 1/6
    #           pQ0 = pM2 / 2 + pM0 / 6 + 1/6,  pQ1 = pQ2 = pM1 / 4 + pM0 / 6 + 1/6
    # With u = pQ0, pQ1 = pQ2 = (1 - u)/2, pM2 = (1 - u)/4 + 1/6:
    #   u = (1 - u)/8 + 1/12 + 5/72 + 1/6  ->  (9/8) u = 32/72  ->  u = 32/81
    # pQ1 = pQ2 = 49/162, pM1 = 8/81 + 1/6 = 43/162, pM2 = 49/324 + 1/6 = 103/324.
    R = np.array([[1, 1, 0], [1, 0, 1], [1, 0, 1]], dtype=np.uint8)
    res = eip(R, alpha=0.5)
    assert res.dangling.tolist() == [True, False, False]
    np.testing.assert_allclose(res.difficulty, [32 / 81, 49 / 162, 49 / 162], rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.competency, [5 / 12, 43 / 162, 103 / 324], rtol=0, atol=1e-10)


def test_it_excludes_all_solved_all_failed_and_unobserved_questions():
    # THREE_BY_TWO plus an all-solved, an all-failed, a never-observed row and
    # two rows whose only observed credit is 1 or 0: none of them has both a
    # success and a failure, so the kept graph is THREE_BY_TWO again.
    R = np.vstack([THREE_BY_TWO, [[1, 1], [0, 0], [NAN, NAN], [1, NAN], [NAN, 0]]])
    res = eip(R, alpha=0.5)
    assert res.kept.tolist() == [True, True, True, False, False, False, False, False]
    assert res.all_solved.tolist() == [False, False, False, True, False, False, True, False]
    assert res.all_failed.tolist() == [False, False, False, False, True, False, False, True]
    np.testing.assert_allclose(res.difficulty[:3], [17 / 60, 17 / 60, 26 / 60], rtol=0, atol=1e-10)
    assert np.isnan(res.difficulty[3:]).all()
    np.testing.assert_allclose(res.competency, [8 / 15, 7 / 15], rtol=0, atol=1e-10)
    # Display scale: kept 17/60 -> 1, 26/60 -> 99; all solved 0, all failed 100, unobserved NaN.
    np.testing.assert_allclose(res.difficulty_scaled, [1, 1, 99, 0, 100, NAN, 0, 100], rtol=0, atol=1e-8)


def test_it_treats_a_missing_cell_as_neither_success_nor_failure():
    # m2 was never asked q0 or q1. S = (1, 1, 2); failures: q0 by m1, q1 by m0,
    # q2 by m2, so F = (1, 1, 1). m2 solves nothing: pM2 = (1 - a)/3 = 1/6.
    # Swapping (m0, q0) with (m1, q1) maps the graph onto itself, so
    # pM0 = pM1 = 5/12 and pQ0 = pQ1 = a * 5/12 + 1/6 = 3/8, pQ2 = a/6 + 1/6 = 1/4.
    # Check: pM0 = a * (pQ0 / 1 + pQ2 / 2) + 1/6 = (3/8 + 1/8)/2 + 1/6 = 5/12.
    R = np.array([[1, 0, NAN], [0, 1, NAN], [1, 1, 0]])
    res = eip(R, alpha=0.5)
    np.testing.assert_allclose(res.competency, [5 / 12, 5 / 12, 1 / 6], rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.difficulty, [3 / 8, 3 / 8, 1 / 4], rtol=0, atol=1e-10)
    # Reading the missing cells as failures (F(m2) = 3) gives a different answer.
    as_failure = eip(np.nan_to_num(R, nan=0.0), alpha=0.5)
    assert abs(as_failure.difficulty[2] - 1 / 4) > 0.05


def test_it_scores_partial_credit_by_hand():
    # Section 2.4. S = (0.5, 1); B = [[0.5, 1], [1, 0]], F = (1.5, 1).
    # a = 1/2:  pQ1 = a * pM0 / 1.5 + 1/4 = x/3 + 1/4 with x = pM0, pQ0 = 3/4 - x/3
    #           pM0 = a * (0.5 pQ0 / 0.5) + 1/4 = (3/4 - x/3)/2 + 1/4
    #   x (1 + 1/6) = 5/8  ->  x = 15/28, pM1 = 13/28, pQ1 = 3/7, pQ0 = 4/7.
    R = np.array([[0.5, 0.0], [0.0, 1.0]])
    res = eip(R, alpha=0.5)
    np.testing.assert_allclose(res.competency, [15 / 28, 13 / 28], rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.difficulty, [4 / 7, 3 / 7], rtol=0, atol=1e-10)


def test_it_stops_at_once_when_the_uniform_start_is_the_fixed_point():
    # Each model solves the question the other fails: uniform is stationary.
    res = eip(np.eye(2, dtype=bool))
    assert res.n_iter == 1
    assert res.residual == 0.0
    np.testing.assert_array_equal(res.difficulty_scaled, [50.0, 50.0])
    np.testing.assert_array_equal(res.competency_scaled, [50.0, 50.0])


def test_it_scales_competency_from_0_to_100():
    # pM = (8/15, 7/15) at a = 1/2: the larger maps to 100, the smaller to 0.
    res = eip(THREE_BY_TWO, alpha=0.5)
    np.testing.assert_allclose(res.competency_scaled, [100.0, 0.0], rtol=0, atol=1e-8)


# --- against the dense reference ----------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_it_matches_the_dense_reference_on_random_matrices(seed):
    rng = np.random.default_rng(seed)
    R = _random_response_matrix(rng)
    alpha = float(rng.uniform(0.3, 0.95))
    difficulty, competency = _eip_dense_reference(R, alpha)
    res = eip(R, alpha=alpha)
    np.testing.assert_allclose(res.difficulty, difficulty, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.competency, competency, rtol=0, atol=1e-9)


def test_the_random_matrices_exercise_dangling_models_missing_cells_and_exclusions():
    # Guards the test above against silently losing its hard cases.
    results = [eip(_random_response_matrix(np.random.default_rng(seed))) for seed in range(40)]
    assert sum(r.dangling.any() for r in results) >= 20
    assert sum((~r.kept).any() for r in results) >= 20


@pytest.mark.parametrize("seed", range(10))
def test_both_vectors_sum_to_one(seed):
    res = eip(_random_response_matrix(np.random.default_rng(seed)))
    assert np.nansum(res.difficulty) == pytest.approx(1.0, abs=1e-12)
    assert res.competency.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("alpha", [0.5, 0.85, 0.95])
@pytest.mark.parametrize("tol", [1e-2, 1e-3, 1e-5])
def test_its_distance_to_the_fixed_point_is_within_alpha_over_one_minus_alpha_times_residual(alpha, tol):
    for seed in range(10):
        R = _random_response_matrix(np.random.default_rng(100 + seed))
        difficulty, competency = _eip_dense_reference(R, alpha)
        res = eip(R, alpha=alpha, tol=tol)
        assert res.residual <= tol
        assert _l1_to_fixed_point(res, difficulty, competency) <= alpha / (1 - alpha) * res.residual + 1e-14


# --- input forms and invariants -----------------------------------------------


def test_compact_and_float_inputs_give_the_same_scores():
    rng = np.random.default_rng(7)
    binary = rng.random((200, 9)) < np.linspace(0.2, 0.8, 9)
    expected = eip(binary.astype(np.float64))
    for R in (binary, binary.astype(np.uint8), binary.astype(np.int64), binary.astype(np.float32)):
        res = eip(R)
        np.testing.assert_allclose(res.difficulty, expected.difficulty, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.competency, expected.competency, rtol=0, atol=1e-12)
        assert res.n_iter == expected.n_iter


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.uint8])
def test_many_small_chunks_give_the_one_chunk_answer(dtype):
    rng = np.random.default_rng(3)
    R = (rng.random((101, 7)) < np.linspace(0.1, 0.9, 7)).astype(dtype)
    if dtype != np.uint8:
        R[rng.random(R.shape) < 0.1] = np.nan
        R[5, :] = np.nan
    one_chunk = eip(R)
    for chunk_bytes in (1, 8 * 7 * 10, 8 * 7 * 33, 2**30):  # 1, 10, 33 and all rows a block
        chunked = eip(R, chunk_bytes=chunk_bytes)
        np.testing.assert_allclose(chunked.difficulty, one_chunk.difficulty, rtol=0, atol=1e-14)
        np.testing.assert_allclose(chunked.competency, one_chunk.competency, rtol=0, atol=1e-14)
        assert chunked.n_iter == one_chunk.n_iter


def test_it_never_copies_a_large_compact_matrix_to_float():
    # 20,000 x 200 uint8 is 4 MB; one float64 copy would be 32 MB (above the
    # 16 MiB limit for converting an input once). With 256 KiB blocks the
    # peak is a few blocks plus vectors of length n_questions (160 KB each).
    R = (np.random.default_rng(0).random((20_000, 200)) < 0.5).astype(np.uint8)
    tracemalloc.start()
    try:
        eip(R, chunk_bytes=256 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * 2**20


def test_permuting_models_and_questions_permutes_the_scores():
    rng = np.random.default_rng(11)
    R = _random_response_matrix(rng)
    rows, cols = rng.permutation(R.shape[0]), rng.permutation(R.shape[1])
    res, permuted = eip(R), eip(R[rows][:, cols])
    np.testing.assert_allclose(permuted.difficulty, res.difficulty[rows], rtol=0, atol=1e-12)
    np.testing.assert_allclose(permuted.competency, res.competency[cols], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(permuted.kept, res.kept[rows])


def test_its_result_is_frozen_and_read_only():
    res = eip(THREE_BY_TWO)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.n_iter = 0
    with pytest.raises(ValueError, match="read-only"):
        res.competency[0] = 1.0
    assert res.converged is True
    assert (res.alpha, res.tol) == (0.85, 1e-10)


# --- errors -------------------------------------------------------------------


def test_it_raises_convergence_error_after_max_iter():
    with pytest.raises(ConvergenceError) as info:
        eip(THREE_BY_TWO, alpha=0.5, max_iter=1)
    assert info.value.method == "EIP"
    assert info.value.n_iter == 1
    assert info.value.tol == 1e-10
    # Iteration 1 from pQ = (8, 8, 8)/24, pM = (12, 12)/24 at a = 1/2:
    #   pQ0 = pQ1 = a * (1/2) / 2 + 1/6 = 7/24,  pQ2 = a * 1/2 + 1/6 = 10/24
    #   pM0 = a * (7/24 + 7/24) + 1/4 = 13/24,   pM1 = a * 10/24 + 1/4 = 11/24
    # (pM uses the new pQ; the old one would give 14/24 and 10/24.)
    # residual = (1 + 1 + 2)/24 + (1 + 1)/24 = 1/4.
    assert info.value.residual == pytest.approx(0.25, abs=1e-15)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan")])
def test_it_rejects_alpha_outside_the_open_unit_interval(alpha):
    with pytest.raises(ValueError, match=re.escape(f"alpha must lie in (0, 1); got {alpha!r}")):
        eip(THREE_BY_TWO, alpha=alpha)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tol": 0}, "tol must be a positive finite number; got 0"),
        ({"tol": float("inf")}, "tol must be a positive finite number; got inf"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1; got 0"),
        ({"max_iter": 2.5}, "max_iter must be an integer >= 1; got 2.5"),
        ({"chunk_bytes": 0}, "chunk_bytes must be an integer >= 1; got 0"),
    ],
)
def test_it_rejects_bad_tuning_knobs(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        eip(THREE_BY_TWO, **kwargs)


def test_it_rejects_a_model_with_no_observed_cell():
    R = np.array([[1, NAN], [0, NAN]])
    message = "R has models with no observed cell (columns [1]); drop them before scoring"
    with pytest.raises(ValueError, match=re.escape(message)):
        eip(R)


@pytest.mark.parametrize(
    ("R", "message"),
    [
        (np.array([1.0, 0.0]), "R must be 2-dimensional (n_questions, n_models); got shape (2,)"),
        (np.zeros((2, 2, 2)), "R must be 2-dimensional (n_questions, n_models); got shape (2, 2, 2)"),
        (np.zeros((0, 3)), "R is empty: shape (0, 3)"),
    ],
)
def test_it_rejects_bad_shapes(R, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        eip(R)


@pytest.mark.parametrize(
    ("R", "message"),
    [
        (np.array([[1.0, 1.5]]), "R has credit 1.5 at (question 0, model 1); credit must lie in [0, 1]"),
        (np.array([[0.0, -0.25]]), "R has credit -0.25 at (question 0, model 1); credit must lie in [0, 1]"),
        (
            np.array([[1, 2]], dtype=np.uint8),
            "R has integer credit 2 at (question 0, model 1); integer matrices must be 0/1",
        ),
    ],
)
def test_it_rejects_credit_outside_zero_one(R, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        eip(R)


def test_it_rejects_a_matrix_where_no_question_is_kept():
    R = np.array([[1, 1], [0, 0], [NAN, 1]])
    with pytest.raises(ValueError, match=re.escape(NO_KEPT_QUESTIONS)):
        eip(R)
