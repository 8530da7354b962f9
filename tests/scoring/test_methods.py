"""The method registry: one entry per difficulty method (issue 11)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scoring import methods as registry
from scoring.baselines import accuracy, question_accuracy_difficulty, simple_rank
from scoring.eip import eip
from scoring.methods import (
    DifficultyMethod,
    MethodInput,
    MethodOutput,
    get_method,
    register_method,
    run_method,
    unregister_method,
)

R = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, np.nan]], dtype=np.float64)
DATA = MethodInput(R=R, question_groups=np.array(["A", "A", "B", "B"]), params={"alpha": 0.85, "tol": 1e-12})


def _constant(data: MethodInput) -> MethodOutput:
    n_q, n_m = data.R.shape
    return MethodOutput(question_columns={"c_q": np.full(n_q, 2.0)}, model_columns={"c_m": np.arange(n_m, dtype=float)})


CONSTANT = DifficultyMethod(key="constant", label="Constant", runner=_constant, question_columns=("c_q",),
                            model_columns=("c_m",), difficulty_column="c_q", competency_column="c_m")


def test_the_paper_methods_are_registered_in_order_with_one_label_each():
    assert registry.method_keys() == (
        "eip", "simple_rank", "accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_mirt")
    assert [m.label for m in registry.difficulty_methods()] == [
        "EIP", "Simple rank", "Accuracy", "1PL IRT", "2PL IRT", "Multidimensional IRT"]
    assert [m.key for m in registry.competency_methods()] == [
        "eip", "accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_mirt"]
    assert all(m.higher_is_harder for m in registry.methods())
    assert [m.key for m in registry.methods() if m.required] == ["eip", "accuracy"]


def test_runners_return_what_the_scoring_functions_return():
    out = run_method("eip", DATA)
    expected = eip(R, alpha=0.85, tol=1e-12)
    np.testing.assert_array_equal(out.question_columns["eip_scaled"], expected.difficulty_scaled)
    np.testing.assert_array_equal(out.model_columns["eip"], expected.competency)
    np.testing.assert_array_equal(out.kept, expected.kept)
    assert (out.n_iter, out.converged, out.params) == (expected.n_iter, True, {"alpha": 0.85, "tol": 1e-12})
    np.testing.assert_array_equal(run_method("simple_rank", DATA).question_columns["simple_rank"], simple_rank(R))
    acc = run_method("accuracy", DATA)
    np.testing.assert_array_equal(acc.question_columns["accuracy_difficulty"], question_accuracy_difficulty(R))
    np.testing.assert_array_equal(acc.model_columns["accuracy"], accuracy(R))
    assert acc.kept is None and acc.seconds >= 0


def test_a_registered_method_runs_and_can_be_removed():
    register_method(CONSTANT)
    try:
        assert registry.method_keys()[-1] == "constant"
        out = run_method("constant", DATA)
        assert out.question_columns["c_q"].tolist() == [2.0] * 4 and out.model_columns["c_m"].tolist() == [0, 1, 2]
    finally:
        unregister_method("constant")
    assert "constant" not in registry.method_keys()


def test_it_refuses_a_taken_key_or_column():
    with pytest.raises(ValueError, match="a difficulty method 'eip' is already registered"):
        register_method(dataclasses.replace(CONSTANT, key="eip"))
    with pytest.raises(ValueError, match="column 'simple_rank' of method 'constant' is already filled by method"):
        register_method(dataclasses.replace(CONSTANT, question_columns=("simple_rank",),
                                            difficulty_column="simple_rank"))
    assert "constant" not in registry.method_keys()


def test_it_refuses_a_bad_declaration():
    with pytest.raises(ValueError, match="question column 'x' of method 'bad' must be one of its declared"):
        DifficultyMethod(key="bad", label="Bad", runner=_constant, difficulty_column="x")
    with pytest.raises(ValueError, match="tie_tolerance of method 'bad' must be a finite number >= 0"):
        DifficultyMethod(key="bad", label="Bad", runner=_constant, tie_tolerance=-1.0)
    with pytest.raises(ValueError, match="method key must be a non-empty identifier"):
        DifficultyMethod(key="two words", label="Bad", runner=_constant)


def test_a_runner_that_fills_other_columns_than_declared_is_an_error():
    wrong = dataclasses.replace(CONSTANT, key="wrong", question_columns=("c_q", "extra"))
    register_method(wrong)
    try:
        with pytest.raises(ValueError, match=r"method 'wrong' returned question columns \['c_q'\]; it declares"):
            run_method("wrong", DATA)
    finally:
        unregister_method("wrong")

    def short(data: MethodInput) -> MethodOutput:
        return MethodOutput(question_columns={"c_q": np.zeros(2)}, model_columns={"c_m": np.zeros(3)})

    register_method(dataclasses.replace(CONSTANT, key="short", runner=short))
    try:
        with pytest.raises(ValueError, match=r"returned question column 'c_q' of shape \(2,\); expected \(4,\)"):
            run_method("short", DATA)
    finally:
        unregister_method("short")


def test_an_unknown_key_names_the_known_ones():
    with pytest.raises(KeyError, match="unknown difficulty method 'nope'; known: \\['eip'"):
        get_method("nope")


def test_every_header_starts_with_the_methods_label():
    for m in registry.methods():
        for column in (*m.question_columns, *m.model_columns):
            assert m.column_label(column).startswith(m.label), (m.key, column)
        assert m.competency_header.startswith(m.label)
    with pytest.raises(ValueError, match="the c_q header 'Const' of method 'constant' must start with its label"):
        dataclasses.replace(CONSTANT, column_labels={"c_q": "Const"})
