"""EIP never returns NaN for kept questions: subnormal credits are refused, non-finite iterates raise (issue 13)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from scoring import NonFiniteError
from scoring.eip import eip

eip_module = importlib.import_module("scoring.eip")  # scoring.eip, the attribute, is the function

TINY = float(np.finfo(np.float64).tiny)


def test_a_subnormal_credit_alone_in_its_row_is_refused_naming_the_cell():
    # question 1 has one success weight 5e-324 and nothing else: S(1) = 5e-324, 1/S(1) = inf
    R = np.array([[1.0, 0.0], [5e-324, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError) as caught:
        eip(R)
    assert str(caught.value) == eip_module.SUBNORMAL_SUCCESS.format(
        value=5e-324, row=1, column=0, total=5e-324, tiny=TINY)
    assert "max_iter" not in str(caught.value)


def test_a_subnormal_credit_beside_a_normal_one_scores_finitely():
    # S(1) = 1 + 5e-324 == 1.0: harmless, every score is finite and sums to 1
    R = np.array([[1.0, 0.0], [5e-324, 1.0], [0.0, 1.0], [0.0, 0.0]])
    res = eip(R)
    kept = res.difficulty[res.kept]
    assert np.isfinite(kept).all() and np.isfinite(res.competency).all()
    assert abs(kept.sum() - 1.0) < 1e-12 and abs(res.competency.sum() - 1.0) < 1e-12


def test_the_smallest_normal_success_weight_still_scores_finitely():
    R = np.array([[1.0, 0.0], [TINY, 0.0], [0.0, 1.0]])
    res = eip(R)
    assert np.isfinite(res.difficulty[res.kept]).all() and np.isfinite(res.competency).all()


def test_a_non_finite_iterate_raises_nonfinite_error_not_convergence_error(monkeypatch):
    real = eip_module._build_graph

    def poisoned(R, rows_per_chunk):
        graph = real(R, rows_per_chunk)
        inv_s = graph.inv_s.copy()
        inv_s[0] = np.inf  # as if 1 / S(q) had overflowed
        return eip_module._Graph(**{**graph.__dict__, "inv_s": inv_s})

    monkeypatch.setattr(eip_module, "_build_graph", poisoned)
    R = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5]])
    with pytest.raises(NonFiniteError) as caught, np.errstate(invalid="ignore"):  # inf * 0 is the poison
        eip(R)
    assert caught.value.n_iter == 1 and caught.value.method == "EIP"
    assert "max_iter" not in str(caught.value)
    assert str(caught.value).startswith("EIP produced a non-finite value in the model vector pi_M at iteration 1")
