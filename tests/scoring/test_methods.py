"""The method registry: one entry per difficulty method (issue 11)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scoring import method_runners, methods as registry
from scoring.baselines import accuracy, question_accuracy_difficulty, simple_rank
from scoring.eip import eip
from scoring.method_runners import MethodInput, MethodOutput
from scoring.methods import DifficultyMethod, get_method, register_method, run_method, unregister_method
from scoring.mirt import irt_mirt
from scoring.pairs import TIE, harder_of_pairs

R = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, np.nan]], dtype=np.float64)
DATA = MethodInput(R=R, question_groups=np.array(["A", "A", "B", "B"]), params={"alpha": 0.85, "tol": 1e-12})


def _constant(data: MethodInput) -> MethodOutput:
    n_q, n_m = data.R.shape
    return MethodOutput(question_columns={"c_q": np.full(n_q, 2.0)}, model_columns={"c_m": np.arange(n_m, dtype=float)})


CONSTANT = DifficultyMethod(key="constant", label="Constant", runner=_constant, question_columns=("c_q",),
                            model_columns=("c_m",), difficulty_column="c_q", competency_column="c_m")


def test_the_paper_methods_are_registered_in_order_with_one_label_each():
    assert registry.method_keys() == (
        "eip", "simple_rank", "accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_1pl_mml", "irt_2pl_mml",
        "irt_mirt")
    assert [m.label for m in registry.difficulty_methods()] == [
        "EIP", "Simple rank", "Accuracy", "1PL IRT", "2PL IRT", "1PL IRT (MML)", "2PL IRT (MML)",
        "Multidimensional IRT"]
    assert [m.key for m in registry.competency_methods()] == [
        "eip", "accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_1pl_mml", "irt_2pl_mml", "irt_mirt"]
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


# --- ties (issue 12, point 1) --------------------------------------------------------


def test_the_registry_declares_tie_tolerances_by_kind_of_method():
    tolerance = {m.key: m.tie_tolerance for m in registry.difficulty_methods()}
    # deterministic fits 1e-9; exact counts 1e-12; MIRT's seeds are handled by replicates; the MML fits
    # stop at a parameter change of 1e-5 logits, so differences of 1e-6 of the spread are within their accuracy
    assert tolerance == {"eip": 1e-9, "simple_rank": 1e-12, "accuracy": 1e-12, "irt_1pl": 1e-9, "irt_2pl": 1e-9,
                         "irt_1pl_mml": 1e-6, "irt_2pl_mml": 1e-6, "irt_mirt": 1e-9}
    mirt = get_method("irt_mirt")
    assert mirt.replicate_columns == method_runners.MIRT_SEED_COLUMNS == tuple(f"irt_mirt_s{k}" for k in range(5))
    assert mirt.shown_question_columns == ("irt_mirt",)
    assert [m.key for m in registry.methods() if m.replicate_columns] == ["irt_mirt"]


def test_a_replicate_column_must_be_a_question_column_other_than_the_difficulty():
    with pytest.raises(ValueError, match="replicate column 'c_m' of method 'constant' must be one of its question"):
        dataclasses.replace(CONSTANT, replicate_columns=("c_m",))
    with pytest.raises(ValueError, match="replicate column 'c_q' of method 'constant'"):
        dataclasses.replace(CONSTANT, replicate_columns=("c_q",))


def _with_twins(seed: int) -> np.ndarray:
    """60 x 12 random credit with two pairs of identical rows: 0 = 1 (0/1) and 2 = 3 (with a NaN)."""
    rng = np.random.default_rng(seed)
    R = (rng.random((60, 12)) < rng.uniform(0.2, 0.9, size=(1, 12))).astype(np.float64)
    R[1] = R[0]
    R[2, 5] = np.nan
    R[3] = R[2]
    assert not np.array_equal(R[0], R[4])
    return R


@pytest.mark.parametrize("method", [m.key for m in registry.difficulty_methods()])
def test_questions_with_identical_responses_tie_for_every_method_and_seed(method):
    R = _with_twins(3)
    m = get_method(method)
    out = run_method(method, MethodInput(R=R, question_groups=np.array(["A"] * 60), params={"mirt_epochs": 100}))
    twins = [[0, 1], [2, 3], [1, 0]]
    columns = [m.difficulty_column, *m.replicate_columns]
    for column in columns:
        verdicts = harder_of_pairs(out.question_columns[column], twins, tol=m.tie_tolerance)
        assert verdicts.tolist() == [TIE] * 3, column
    # and not every pair ties: the method separates other questions
    assert (harder_of_pairs(out.question_columns[m.difficulty_column], [[0, 4], [2, 5], [6, 7]],
                            tol=m.tie_tolerance) != TIE).any()
    if method == "irt_mirt":
        assert len(columns) == 6 and out.params["seeds"] == 5
        seeds = np.array([out.question_columns[c] for c in m.replicate_columns])
        np.testing.assert_allclose(out.question_columns["irt_mirt"], seeds.mean(axis=0), rtol=0, atol=1e-12)
        assert len({tuple(s) for s in seeds}) == 5  # five different fits


def test_mirt_runs_the_seeds_asked_for_and_leaves_the_other_seed_columns_blank():
    R = _with_twins(4)
    out = run_method("irt_mirt", MethodInput(R=R, question_groups=np.array(["A"] * 60),
                                             params={"mirt_epochs": 30, "mirt_seed": 3, "mirt_seeds": 2}))
    fits = [irt_mirt(R, epochs=30, rng=seed) for seed in (3, 4)]
    for k, fit in enumerate(fits):
        expected = method_runners.pool_identical_questions(R, fit.difficulty)
        np.testing.assert_array_equal(out.question_columns[f"irt_mirt_s{k}"], expected)
        assert expected[0] == expected[1] == (fit.difficulty[0] + fit.difficulty[1]) / 2
    assert all(np.isnan(out.question_columns[f"irt_mirt_s{k}"]).all() for k in (2, 3, 4))
    np.testing.assert_allclose(out.model_columns["irt_mirt"], (fits[0].ability + fits[1].ability) / 2, rtol=0,
                               atol=1e-12)
    assert out.params["seeds"] == 2 and out.params["seed"] == 3
    with pytest.raises(ValueError, match="mirt_seeds must be an integer from 1 to 5; got 6"):
        run_method("irt_mirt", MethodInput(R=R, question_groups=np.array(["A"] * 60), params={"mirt_seeds": 6}))


def test_mirt_seeds_fitted_side_by_side_equal_the_fits_one_after_the_other_and_leave_blas_as_it_was(monkeypatch):
    from threadpoolctl import threadpool_info

    from scoring import method_runners

    monkeypatch.setattr("os.cpu_count", lambda: 3)  # three threads even on a one-core machine
    R = _with_twins(5)
    before = [(pool["internal_api"], pool["num_threads"]) for pool in threadpool_info()]
    fits = method_runners._mirt_fits(R, epochs=20, seeds=[7, 8, 9, 10, 11])
    assert [(pool["internal_api"], pool["num_threads"]) for pool in threadpool_info()] == before
    for seed, fit in zip([7, 8, 9, 10, 11], fits):
        alone = irt_mirt(R, epochs=20, rng=seed)
        np.testing.assert_array_equal(fit.difficulty, alone.difficulty)
        np.testing.assert_array_equal(fit.ability, alone.ability)
        np.testing.assert_array_equal(fit.elbo_trace, alone.elbo_trace)


# --- marginal-ML IRT beside the paper's joint-ML fits ---------------------------------


def test_the_mml_runners_return_what_the_mml_fits_return():
    from scoring.irt_mml import irt_1pl_mml, irt_2pl_mml

    for key, fit in (("irt_1pl_mml", irt_1pl_mml), ("irt_2pl_mml", irt_2pl_mml)):
        out, expected = run_method(key, DATA), fit(R)
        np.testing.assert_array_equal(out.question_columns[key], expected.difficulty)
        np.testing.assert_array_equal(out.question_columns[f"{key}_se"], expected.difficulty_se)
        np.testing.assert_array_equal(out.model_columns[key], expected.ability)
        assert out.notes["marginal_log_likelihood"] == expected.log_likelihood
        assert (out.converged, out.n_iter, out.params["n_quadrature"]) == (True, expected.n_iter, 61)
        method = get_method(key)
        assert method.higher_is_harder and method.difficulty_column == key and method.label.endswith("(MML)")
        assert "psychometric standard" in method.unit(key) and "the paper's" in method.unit(key)
    np.testing.assert_array_equal(run_method("irt_2pl_mml", DATA).question_columns["irt_2pl_mml_discrimination"],
                                  irt_2pl_mml(R).discrimination)


def test_registering_the_mml_methods_leaves_the_jml_figures_unchanged():
    # The paper's joint-ML runners still call irt_1pl / irt_2pl with the paper's defaults, bit for bit.
    from scoring.irt import irt_1pl, irt_2pl

    for key, fit in (("irt_1pl", irt_1pl), ("irt_2pl", irt_2pl)):
        out, expected = run_method(key, DATA), fit(R)
        np.testing.assert_array_equal(out.question_columns[key], expected.difficulty)
        np.testing.assert_array_equal(out.model_columns[key], expected.ability)
        assert out.params == {"l2": 0.01, "bounds": [-5.0, 5.0], "max_iter": 1000, "tol": 1e-9,
                              **({"discrimination_bounds": [0.1, 5.0]} if key == "irt_2pl" else {})}


def test_as_harder_negates_only_a_method_registered_higher_is_easier():
    values = np.array([0.25, -1.0, np.nan])
    harder = registry.DifficultyMethod(key="h", label="H", runner=lambda d: None, question_columns=("h",),
                                       difficulty_column="h")
    easier = registry.DifficultyMethod(key="e", label="E", runner=lambda d: None, question_columns=("e",),
                                       difficulty_column="e", higher_is_harder=False)
    np.testing.assert_array_equal(harder.as_harder(values), [0.25, -1.0, np.nan])
    np.testing.assert_array_equal(easier.as_harder(values), [-0.25, 1.0, np.nan])
