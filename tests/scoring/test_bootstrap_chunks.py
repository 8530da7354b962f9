"""The bootstrap drawn in blocks of rows (issue 16) gives the intervals of the
single (n_boot, n) index matrix it replaces, for a fixed seed, whatever the
block size.

``_one_matrix_reference`` is the old code path, kept here.
"""
from __future__ import annotations

import numpy as np
import pytest

import scoring.pair_inference as pairs_module
from scoring.pair_inference import _bootstrap_kernel, bootstrap_agreement_ci
from scoring.pairs import SECOND, _scored


def _one_matrix_reference(m, h, *, n_boot: int, level: float, seed: int):
    mm, hh, _ = _scored(m, h)
    idx = np.random.default_rng(seed).integers(0, mm.size, size=(n_boot, mm.size))
    agreement, kappa = _bootstrap_kernel(mm, hh, idx)
    q = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    defined = ~np.isnan(kappa)
    return tuple(np.quantile(agreement, q)), tuple(np.quantile(kappa[defined], q)), int((~defined).sum())


def _verdicts(seed: int, n: int):
    rng = np.random.default_rng(seed)
    method = rng.choice([-1, 0, 1, 2], size=n, p=[0.05, 0.4, 0.4, 0.15])
    human = rng.choice([0, 1, 3, -1], size=n, p=[0.45, 0.4, 0.1, 0.05])
    human[0] = SECOND  # at least one scored pair
    return method, human


@pytest.mark.parametrize("n", [1, 7, 64, 1001])
@pytest.mark.parametrize("chunk_cells", [1, 13, 4096, 1 << 22])
def test_blocks_of_any_size_give_the_one_matrix_intervals(monkeypatch, n, chunk_cells):
    method, human = _verdicts(n, n)
    monkeypatch.setattr(pairs_module, "BOOT_CHUNK_CELLS", chunk_cells)
    ci = bootstrap_agreement_ci(method, human, n_boot=301, rng=17)
    agreement, kappa, undefined = _one_matrix_reference(method, human, n_boot=301, level=0.95, seed=17)
    assert ci.agreement == pytest.approx(agreement, abs=0.0)
    assert ci.n_kappa_undefined == undefined
    assert ci.kappa == pytest.approx(kappa, abs=0.0)


def test_a_fixed_seed_gives_identical_intervals_run_to_run():
    method, human = _verdicts(3, 500)
    first = bootstrap_agreement_ci(method, human, n_boot=400, rng=5)
    assert bootstrap_agreement_ci(method, human, n_boot=400, rng=5) == first
