"""column_nanquantile equals np.nanquantile(axis=0) value for value (bootstrap intervals of the
human scale and of human labels use it)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from scoring._quantiles import column_nanquantile


@pytest.mark.parametrize("seed", range(8))
def test_it_equals_numpy_nanquantile_on_draws_with_gaps(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 60)), int(rng.integers(1, 80))
    x = rng.normal(size=(n_rows, n_cols))
    x[rng.random(x.shape) < rng.uniform(0, 0.6)] = np.nan
    x[:, rng.random(n_cols) < 0.1] = np.nan  # all-NaN columns
    x[rng.random(x.shape) < 0.02] = np.inf  # infinities are values, not gaps
    x[rng.random(x.shape) < 0.02] = -np.inf
    if seed % 2:
        x = np.round(x, 1)  # ties
    q = np.array([0.025, 0.975, rng.uniform()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on all-NaN columns and inf - inf
        expected = np.nanquantile(x, q, axis=0)
        got = column_nanquantile(x, q)
        np.testing.assert_array_equal(column_nanquantile(x, 0.3), np.nanquantile(x, 0.3, axis=0))
    np.testing.assert_array_equal(got, expected)


def test_shapes_of_empty_input():
    assert column_nanquantile(np.empty((5, 0)), np.array([0.1, 0.9])).shape == (2, 0)
    assert np.isnan(column_nanquantile(np.full((3, 2), np.nan), 0.5)).all()
