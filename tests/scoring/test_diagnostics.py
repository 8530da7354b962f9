"""Response-matrix diagnostics and component-aware pair sampling."""
from __future__ import annotations

import numpy as np
import pytest

from scoring.diagnostics import cell_diagnostics, matrix_diagnostics
from scoring.pair_sampling import sample_pairs

nan = np.nan


def two_blocks() -> np.ndarray:
    """Models {1,2} (columns 0,1) answer questions 1..4 (rows 0..3); models {3,4}
    answer questions 5..8; nothing across."""
    R = np.full((8, 4), nan)
    R[:4, :2] = [[1, 0], [0, 1], [1, 1], [0, 0]]
    R[4:, 2:] = [[1, 0], [0, 1], [1, 1], [0, 0]]
    return R


def test_two_blocks_give_two_components():
    d = matrix_diagnostics(two_blocks())
    assert d.n_components == 2
    assert d.question_component.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert d.model_component.tolist() == [0, 0, 1, 1]
    # 32 cells, 16 observed
    assert (d.n_cells, d.n_missing) == (32, 16)
    # every question answered by 2 models < 3
    assert d.n_observed.tolist() == [2] * 8
    assert d.low_coverage.all()
    assert d.summary == {"n_cells": 32, "n_missing": 16, "min_models": 3, "n_low_coverage": 8, "n_components": 2}


def test_missing_cells_and_low_coverage_on_a_hand_matrix():
    R = np.array([
        [1.0, 0.0, 1.0, nan],   # 3 models
        [nan, 1.0, nan, nan],   # 1 model
        [0.0, 0.0, 1.0, 1.0],   # 4 models
    ])
    d = matrix_diagnostics(R)
    # 12 cells, 3 + 1 + 4 = 8 observed
    assert (d.n_cells, d.n_missing) == (12, 4)
    assert d.n_observed.tolist() == [3, 1, 4]
    assert d.low_coverage.tolist() == [False, True, False]
    assert d.n_components == 1
    assert matrix_diagnostics(R, min_models=4).low_coverage.tolist() == [True, True, False]


def test_a_chain_through_shared_models_is_one_component():
    # q0-m0, q1-m0, q1-m1, q2-m1: connected through the shared models
    R = np.array([[1, nan], [0, 1], [nan, 0.0]])
    assert matrix_diagnostics(R).n_components == 1


def test_an_unanswered_question_and_an_idle_model_are_components_of_their_own():
    R = np.array([[1, 0, nan], [nan, nan, nan]])
    d = matrix_diagnostics(R)
    assert d.n_components == 3
    assert d.question_component.tolist() == [0, 1]
    assert d.model_component.tolist() == [0, 0, 2]


def test_a_binary_matrix_is_fully_observed():
    d = matrix_diagnostics(np.ones((3, 2), dtype=np.uint8), min_models=2)
    assert (d.n_missing, d.n_components, d.n_low_coverage) == (0, 1, 0)


def test_it_rejects_a_bad_min_models():
    with pytest.raises(ValueError, match="min_models"):
        matrix_diagnostics(np.ones((2, 2)), min_models=0)


@pytest.mark.parametrize("strategy", ["uniform", "stratified_gap", "methods_disagree"])
def test_sampling_never_pairs_questions_of_different_blocks(strategy):
    d = matrix_diagnostics(two_blocks())
    ids = np.arange(1, 9)
    subjects = np.zeros(8, dtype=np.int64)  # one subject: only the blocks separate them
    rng = np.random.default_rng(7)
    difficulty = {"eip": rng.random(8), "acc": rng.random(8)}
    block_of = dict(zip(ids.tolist(), d.question_component.tolist()))
    # 2 blocks of 4 questions: 6 + 6 = 12 within-block pairs (of 28 same-subject pairs)
    seen = set()
    for seed in range(200):
        s = sample_pairs(
            ids, subjects, n_pairs=12, strategy=strategy, components=d.question_component,
            difficulty=difficulty, rng=seed,
        )
        assert s.n_possible == 12
        for a, b in s.pairs.tolist():
            assert block_of[a] == block_of[b]
            seen.add((a, b))
    assert len(seen) == 12
    with pytest.raises(ValueError, match="only 12 distinct"):
        sample_pairs(ids, subjects, n_pairs=13, components=d.question_component, rng=0)


def test_fewer_pairs_than_possible_still_stay_within_blocks():
    d = matrix_diagnostics(two_blocks())
    ids, subjects = np.arange(1, 9), np.array(list("aabbaabb"))
    block_of = dict(zip(ids.tolist(), d.question_component.tolist()))
    for seed in range(300):
        s = sample_pairs(ids, subjects, n_pairs=2, components=d.question_component, rng=seed)
        assert all(block_of[a] == block_of[b] for a, b in s.pairs.tolist())
    # subjects a = {1,2,5,6}, b = {3,4,7,8}; within blocks: (1,2), (5,6), (3,4), (7,8)
    assert sample_pairs(ids, subjects, n_pairs=4, components=d.question_component, rng=0).n_possible == 4


def test_without_components_sampling_is_unchanged():
    ids, subjects = np.arange(1, 9), np.zeros(8, dtype=np.int64)
    a = sample_pairs(ids, subjects, n_pairs=5, rng=3).pairs
    b = sample_pairs(ids, subjects, n_pairs=5, components=np.zeros(8, dtype=np.int64), rng=3).pairs
    assert a.tolist() == b.tolist()


def test_it_rejects_components_of_the_wrong_shape():
    with pytest.raises(ValueError, match="components must be integers of shape"):
        sample_pairs([1, 2, 3], ["a", "a", "a"], n_pairs=1, components=[0, 0])


def test_cell_diagnostics_equal_the_dense_ones():
    rng = np.random.default_rng(0)
    for _ in range(20):
        R = np.where(rng.random((15, 6)) < 0.3, 1.0, nan)
        rows, cols = np.nonzero(~np.isnan(R))
        dense, cells = matrix_diagnostics(R), cell_diagnostics(rows, cols, n_questions=15, n_models=6)
        assert dense.summary == cells.summary
        assert dense.question_component.tolist() == cells.question_component.tolist()
        assert dense.model_component.tolist() == cells.model_component.tolist()
        assert dense.n_observed.tolist() == cells.n_observed.tolist()


def test_cell_diagnostics_refuse_a_repeated_or_outside_cell():
    with pytest.raises(ValueError, match="more than once"):
        cell_diagnostics([0, 0], [1, 1], n_questions=1, n_models=2)
    with pytest.raises(ValueError, match="outside"):
        cell_diagnostics([0, 1], [0, 0], n_questions=1, n_models=2)


@pytest.mark.parametrize("block_cells", [1, 7, 40, 2**22])
def test_blockwise_diagnostics_equal_the_cell_ones_whatever_the_block(block_cells, monkeypatch):
    """Blocks of 1 row, a few rows or the whole matrix: the same components, in the same order."""
    import scoring.diagnostics as diagnostics

    monkeypatch.setattr(diagnostics, "BLOCK_CELLS", block_cells)
    rng = np.random.default_rng(1)
    n_components = set()
    for density in (0.05, 0.1, 0.2, 0.4):
        for _ in range(10):
            R = np.where(rng.random((30, 8)) < density, rng.random((30, 8)), nan).astype(np.float32)
            rows, cols = np.nonzero(~np.isnan(R))
            dense, cells = matrix_diagnostics(R), cell_diagnostics(rows, cols, n_questions=30, n_models=8)
            assert dense.summary == cells.summary
            assert dense.question_component.tolist() == cells.question_component.tolist()
            assert dense.model_component.tolist() == cells.model_component.tolist()
            assert dense.n_observed.tolist() == cells.n_observed.tolist()
            assert dense.n_observed_models.tolist() == (~np.isnan(R)).sum(axis=0).tolist()
            n_components.add(dense.n_components)
    assert len(n_components) > 5  # the cases span from one component to many


def test_a_chain_of_questions_joins_models_across_blocks(monkeypatch):
    """Model 0-1 meet in the first row, 1-2 in the last: one component only when blocks carry over."""
    import scoring.diagnostics as diagnostics

    monkeypatch.setattr(diagnostics, "BLOCK_CELLS", 3)  # one row a block
    R = np.array([[1, 0, nan], [nan, nan, nan], [nan, 1, 1], [nan, nan, 0]])
    d = matrix_diagnostics(R)
    assert d.n_components == 2  # the empty question is a component of its own
    assert d.question_component.tolist() == [0, 1, 0, 0]
    assert d.model_component.tolist() == [0, 0, 0]
    assert d.n_observed_models.tolist() == [1, 2, 2]


def test_an_integer_matrix_is_one_component_without_reading_its_cells():
    R = np.zeros((4, 3), dtype=np.uint8)
    d, dense = matrix_diagnostics(R, min_models=4), matrix_diagnostics(R.astype(np.float64), min_models=4)
    assert d.summary == dense.summary == {"n_cells": 12, "n_missing": 0, "min_models": 4, "n_low_coverage": 4,
                                          "n_components": 1}
    assert d.question_component.tolist() == dense.question_component.tolist() == [0, 0, 0, 0]
    assert d.n_observed_models.tolist() == dense.n_observed_models.tolist() == [4, 4, 4]


def test_fully_observed_blocks_join_their_models_with_the_rest(monkeypatch):
    """A fully observed block (a shortcut) next to blocks with gaps: the same as the cell diagnostics."""
    import scoring.diagnostics as diagnostics

    monkeypatch.setattr(diagnostics, "BLOCK_CELLS", 8)  # two rows of 4 models a block
    R = np.array([[1, nan, nan, nan], [nan, 0, nan, nan], [1, 1, 0, 0], [0, 1, 1, 0],
                  [nan, nan, nan, nan], [nan, nan, 1, nan]])
    rows, cols = np.nonzero(~np.isnan(R))
    d, cells = matrix_diagnostics(R), cell_diagnostics(rows, cols, n_questions=6, n_models=4)
    assert d.question_component.tolist() == cells.question_component.tolist() == [0, 0, 0, 0, 1, 0]
    assert d.model_component.tolist() == cells.model_component.tolist() == [0, 0, 0, 0]
    assert d.n_components == 2
