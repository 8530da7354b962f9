"""Exact partial credit k/n as uint8 numerators and a bit-packed mask (scoring.fraction)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scoring import accuracy, eip, question_accuracy_difficulty, simple_rank, weighted_accuracy
from scoring.diagnostics import matrix_diagnostics
from scoring.fraction import (
    ERR_NOT_FRACTION,
    FractionMatrix,
    combine_denominators,
    fraction_denominator,
    pack_observed,
    to_numerators,
)

nan = np.nan


def _k_over_n(shape, n, missing, seed):
    """Random credit k/n (as a parser gives it: the double nearest k/n) with a share of NaN."""
    rng = np.random.default_rng(seed)
    R = rng.integers(0, n + 1, size=shape) / n
    R[rng.random(shape) < missing] = nan
    return R


@pytest.mark.parametrize("n", [2, 3, 7, 10, 16, 100, 255])
def test_every_cell_round_trips_bit_for_bit(n):
    R = _k_over_n((300, 19), n, 0.05, seed=n)
    m = FractionMatrix.from_dense(R)
    assert m.numerators.dtype == np.uint8 and m.observed_bits.shape == (300, 3)  # ceil(19 / 8) bytes a row
    back = m.to_dense()
    assert np.array_equal(np.isnan(back), np.isnan(R))
    assert back[~np.isnan(R)].tobytes() == R[~np.isnan(R)].tobytes()  # bit for bit, not within a tolerance
    # Each numerator is the fraction the double stands for (an independent check with Fraction).
    for i, j in np.argwhere(~np.isnan(R))[:200]:
        assert Fraction(float(R[i, j])).limit_denominator(255) == Fraction(int(m.numerators[i, j]), m.denominator)


def test_the_denominator_is_the_smallest_that_holds_every_value():
    assert fraction_denominator([0.0, 1.0]) == 1
    assert fraction_denominator([0.0, 0.5, 1.0]) == 2
    assert fraction_denominator([0.3, 0.7]) == 10  # 3/10, 7/10
    assert fraction_denominator([0.5, 1 / 3]) == 6  # lcm(2, 3)
    assert fraction_denominator([0.25, 0.2]) == 20  # lcm(4, 5)
    assert fraction_denominator(np.arange(256) / 255) == 255
    assert fraction_denominator([1 / 256]) is None  # denominator 256 does not fit
    assert fraction_denominator([0.333]) is None  # 333/1000
    assert fraction_denominator([1 / 7, 1 / 11, 1 / 13]) is None  # lcm 1001 > 255
    assert fraction_denominator(np.linspace(0, 1, 300)) is None  # more distinct values than any n <= 255 has
    assert fraction_denominator([nan]) is None
    assert combine_denominators(2, 5) == 10
    assert combine_denominators(16, 17) is None  # 272
    assert combine_denominators(4, None) is None


def test_a_value_that_is_not_exactly_k_over_n_is_named():
    with pytest.raises(ValueError) as error:
        to_numerators(np.array([[0.5, 0.30000000000000004]]), 10)
    assert str(error.value) == ERR_NOT_FRACTION.format(value=0.30000000000000004, row=0, column=1, denominator=10,
                                                       k=3, nearest=0.3)


def test_it_refuses_a_numerator_above_the_denominator():
    with pytest.raises(ValueError, match=r"numerators has 11 at \(question 1, model 0\), above the denominator 10"):
        FractionMatrix(np.array([[3, 4], [11, 0]], dtype=np.uint8), 10)
    with pytest.raises(ValueError, match="denominator must be an integer in"):
        FractionMatrix(np.zeros((1, 1), dtype=np.uint8), 256)
    with pytest.raises(ValueError, match="observed_bits must be uint8 of shape"):
        FractionMatrix(np.zeros((2, 9), dtype=np.uint8), 3, np.zeros((2, 1), dtype=np.uint8))


def test_rows_read_as_float64_with_nan():
    m = FractionMatrix(np.array([[3, 10], [0, 7]], dtype=np.uint8), 10, pack_observed([[True, True], [False, True]]))
    assert m.shape == (2, 2) and m.dtype == np.float64 and m.nbytes == 4 + 2
    np.testing.assert_array_equal(m[0:2], [[0.3, 1.0], [nan, 0.7]])
    np.testing.assert_array_equal(m[1], [nan, 0.7])
    np.testing.assert_array_equal(m[np.array([1, 0])], [[nan, 0.7], [0.3, 1.0]])
    np.testing.assert_array_equal(m.column_counts(), [1, 2])
    taken = m.take(rows=np.array([1]), columns=np.array([1, 0]))
    np.testing.assert_array_equal(taken.to_dense(), [[0.7, nan]])


@pytest.mark.parametrize("missing", [0.0, 0.05])
def test_methods_score_it_as_its_float64_matrix(missing):
    # 70,000 x 30 is above EIP's 16 MiB cache: the fraction form is streamed a block at a time.
    R = _k_over_n((70_000, 30), 10, missing, seed=1)
    m = FractionMatrix.from_dense(R)
    assert (m.observed_bits is None) == (missing == 0.0)
    want, got = eip(R), eip(m)
    assert got.n_iter == want.n_iter
    np.testing.assert_allclose(got.difficulty, want.difficulty, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got.competency, want.competency, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(simple_rank(m), simple_rank(R))
    np.testing.assert_array_equal(accuracy(m), accuracy(R))
    np.testing.assert_array_equal(question_accuracy_difficulty(m), question_accuracy_difficulty(R))
    groups = np.arange(R.shape[0]) % 3
    np.testing.assert_array_equal(weighted_accuracy(m, groups), weighted_accuracy(R, groups))
    d_m, d_r = matrix_diagnostics(m), matrix_diagnostics(R)
    assert d_m.n_missing == d_r.n_missing and d_m.n_components == d_r.n_components


def test_a_small_fraction_matrix_gives_the_hand_worked_eip():
    # The binary example of eip's docstring, as fractions 1/1: the same scores.
    m = FractionMatrix(np.array([[1, 0], [1, 0], [0, 1]], dtype=np.uint8), 1)
    res = eip(m, alpha=0.5)
    np.testing.assert_allclose(res.competency * 15, [8, 7], atol=1e-12)
    np.testing.assert_allclose(res.difficulty * 60, [17, 17, 26], atol=1e-12)


def test_a_model_with_no_observed_cell_is_refused():
    m = FractionMatrix(np.array([[1, 0], [2, 0]], dtype=np.uint8), 2, pack_observed([[True, False], [True, False]]))
    with pytest.raises(ValueError, match=r"models with no observed cell \(columns \[1\]\)"):
        eip(m)
