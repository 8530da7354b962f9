"""The compact store of response-set matrices (issue 16, point 1): every cell, mask
and dtype round-trips exactly; loads write it atomically; deletion removes it."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from annotate.catalog import matrix_store as ms
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.selectors.matrix import response_matrix, response_matrix_compact
from annotate.catalog.services.loading import response_set_load
from annotate.models import ResponseSet, ResponseSetModel, ResponseSetQuestion
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from scoring.fraction import FractionMatrix


def _random(shape, *, seed, missing=0.0, values=(0.0, 1.0)):
    rng = np.random.default_rng(seed)
    R = rng.choice(np.array(values), size=shape)
    if missing:
        R[rng.random(shape) < missing] = np.nan
    return R


@pytest.mark.parametrize(("values", "missing", "dtype", "denominator"), [
    ((0.0, 1.0), 0.0, np.uint8, 1),                       # binary, fully observed
    ((0.0, 1.0), 0.3, np.uint8, 1),                       # binary with missing cells
    ((0.0, 0.25, 0.5, 0.75, 1.0), 0.2, np.uint8, 4),      # fractions k/4: uint8 numerators
    ((0.0, 0.1, 0.3, 0.7, 1.0), 0.05, np.uint8, 10),      # fractions k/10 (float32 would round 0.1)
    ((0.0, 0.1, 0.3, 0.7, 1.0), 0.0, np.uint8, 10),       # fractions, fully observed
    ((0.0, 1 / 3, 0.5, 1.0), 0.1, np.uint8, 6),           # lcm(3, 2)
    ((0.0, 2.0 ** -9, 0.5, 1.0), 0.2, np.float32, 1),     # exact in float32, but k/512: 512 > 255
    ((0.0, 0.1, 1 / 3, 0.999999999, 1.0), 0.2, np.float64, 1),  # no small fraction, float32 would round
])
def test_every_cell_mask_and_dtype_round_trip_exactly(tmp_path, values, missing, dtype, denominator):
    # 9,000 rows: two row chunks (8,192 + 808), so a block boundary is crossed
    R = _random((9_000, 7), seed=len(values) + int(10 * missing), missing=missing, values=values)
    attrs = ms.write_matrix(tmp_path / "m.zarr", R, response_set=5)
    assert ms.open_credit(tmp_path / "m.zarr").dtype == np.dtype(dtype)
    observed = ~np.isnan(R)
    assert attrs == {"layout": 2, "response_set": 5, "n_questions": 9_000, "n_models": 7,
                     "n_observed": int(observed.sum()), "credit_dtype": np.dtype(dtype).name,
                     "credit_denominator": denominator, "fully_observed": missing == 0.0}
    assert ms.store_info(tmp_path / "m.zarr") == attrs
    back = ms.read_dense(tmp_path / "m.zarr")
    np.testing.assert_array_equal(back, R)  # NaN where NaN
    assert back[observed].tobytes() == R[observed].tobytes()  # every other cell bit for bit
    assert np.array_equal(ms.open_observed(tmp_path / "m.zarr")[...], observed)
    stored = ms.read_matrix(tmp_path / "m.zarr")
    assert stored.credit.dtype == np.dtype(dtype) and stored.denominator == denominator
    if denominator > 1:  # the numerators, checked against the fractions themselves
        i, j = np.argwhere(observed)[:50].T
        assert [Fraction(int(k), denominator) for k in stored.credit[i, j]] == [
            Fraction(float(v)).limit_denominator(255) for v in R[i, j]]
    assert (stored.observed is None) == (missing == 0.0)
    assert np.all(stored.credit[~observed] == 0)  # missing cells hold 0, always read with the mask
    rows, columns = np.array([8_999, 3, 8_192, 0]), np.array([6, 0, 2])
    np.testing.assert_array_equal(ms.read_dense(tmp_path / "m.zarr", rows=rows, columns=columns),
                                  R[np.ix_(rows, columns)])
    compact = ms.read_compact(tmp_path / "m.zarr")
    if denominator > 1:
        assert isinstance(compact, FractionMatrix) and compact.denominator == denominator
        assert compact.numerators.dtype == np.uint8
        assert (compact.observed_bits is None) == (missing == 0.0)  # 1 bit a cell: (9,000, 1) bytes for 7 models
        assert compact.observed_bits is None or compact.observed_bits.shape == (9_000, 1)
        np.testing.assert_array_equal(compact.to_dense(), R)
        part = ms.read_compact(tmp_path / "m.zarr", rows=rows, columns=columns)
        np.testing.assert_array_equal(part.to_dense(), R[np.ix_(rows, columns)])
    else:
        assert compact.dtype == (np.uint8 if missing == 0.0 else np.result_type(dtype, np.float32))
        np.testing.assert_array_equal(compact.astype(np.float64), R)


def test_a_layout_1_store_reads_as_denominator_1(tmp_path):
    R = _random((50, 4), seed=1, missing=0.1)
    ms.write_matrix(tmp_path / "old.zarr", R)
    import zarr
    group = zarr.open_group(str(tmp_path / "old.zarr"), mode="r+")
    group.attrs.update({"layout": 1})
    group.attrs.__delitem__("credit_denominator")
    assert "credit_denominator" not in ms.store_info(tmp_path / "old.zarr")
    np.testing.assert_array_equal(ms.read_dense(tmp_path / "old.zarr"), R)
    assert ms.read_matrix(tmp_path / "old.zarr").denominator == 1


def test_the_scan_of_blocks_finds_the_denominator_of_the_whole():
    scan = ms.DenominatorScan()
    assert scan.add(np.array([0.0, 1.0])) == 1
    assert scan.add(np.array([0.5, 1.0])) == 2
    assert scan.add(np.array([0.25])) == 4
    assert scan.add(np.array([0.2])) == 20  # lcm(4, 5)
    assert scan.add(np.array([0.3])) == 20  # 6/20
    assert scan.add(np.array([1 / 17])) is None  # lcm(20, 17) = 340 > 255
    assert scan.add(np.array([0.5])) is None  # stays None


def test_the_writer_refuses_a_credit_that_is_not_its_fraction(tmp_path):
    writer = ms.MatrixWriter(tmp_path / "f.zarr", n_questions=2, n_models=2, dtype=np.uint8, denominator=10)
    with pytest.raises(ValueError, match=r"credit 0\.25 at \(question 1, model 0\) is not a multiple of 1/10"):
        writer.write_rows(0, np.array([[0.3, 1.0], [0.25, 0.0]]))
    with pytest.raises(ValueError, match="needs the uint8 dtype"):
        ms.MatrixWriter(tmp_path / "g.zarr", n_questions=1, n_models=1, dtype=np.float32, denominator=10)


def test_a_fully_observed_mask_stores_no_chunk(tmp_path):
    ms.write_matrix(tmp_path / "full.zarr", np.ones((20_000, 3)))
    assert not list((tmp_path / "full.zarr" / "observed").rglob("c/*"))  # all-True chunks are the fill value
    assert list((tmp_path / "full.zarr" / "credit").rglob("c/*"))
    assert ms.read_matrix(tmp_path / "full.zarr").observed is None


def test_the_long_form_writer_equals_the_dense_writer(tmp_path):
    R = _random((300, 5), seed=3, missing=0.4, values=(0.0, 0.5, 1.0))
    rows, columns = np.nonzero(~np.isnan(R))
    order = np.random.default_rng(0).permutation(rows.size)  # cells in any order
    ms.write_cells(tmp_path / "long.zarr", rows[order], columns[order], R[rows, columns][order],
                   n_questions=300, n_models=5)
    np.testing.assert_array_equal(ms.read_dense(tmp_path / "long.zarr"), R)


def test_it_refuses_a_credit_outside_the_dtype(tmp_path):
    writer = ms.MatrixWriter(tmp_path / "bad.zarr", n_questions=2, n_models=2, dtype=np.uint8)
    with pytest.raises(ValueError, match=r"uint8 holds 0/1 only; got the value 0\.5"):
        writer.write_rows(0, np.array([[1.0, 0.5], [0.0, 1.0]]))
    writer = ms.MatrixWriter(tmp_path / "bad2.zarr", n_questions=1, n_models=2, dtype=np.float32)
    with pytest.raises(ValueError, match=r"credit 1\.5 is not in \[0, 1\]"):
        writer.write_rows(0, np.array([[1.5, 0.5]]))


WIDE = "question_id,m1,m2,m3\nq1,1,0,\nq2,0,1,1\nq3,,0.5,1\nq4,1,1,1\n"


def _load(tmp_path, text=WIDE, name="set"):
    path = tmp_path / f"{name}.csv"
    path.write_text(text)
    return response_set_load(parsed=parse_files(responses=path, file_format="wide", dataset="D"), name=name)


@pytest.mark.django_db
def test_a_load_writes_the_store_in_file_order_and_the_membership_rows(tmp_path, settings):
    rs = _load(tmp_path)
    path = ms.store_path(rs)
    assert path == settings.EIP_STORE_DIR / f"response-set-{rs.pk}.zarr"
    assert (ms.store_info(path)["credit_dtype"], ms.store_info(path)["credit_denominator"]) == ("uint8", 2)
    nan = np.nan
    np.testing.assert_array_equal(ms.read_dense(path), [[1, 0, nan], [0, 1, 1], [nan, 0.5, 1], [1, 1, 1]])
    assert list(ResponseSetQuestion.objects.filter(response_set=rs).order_by("row")
                .values_list("row", "question__external_id")) == [(0, "q1"), (1, "q2"), (2, "q3"), (3, "q4")]
    assert list(ResponseSetModel.objects.filter(response_set=rs).order_by("column")
                .values_list("column", "model__name")) == [(0, "m1"), (1, "m2"), (2, "m3")]
    assert (rs.n_questions, rs.n_models, rs.n_responses) == (4, 3, 10)
    assert not list((settings.EIP_STORE_DIR / ms.TEMP_FOLDER).iterdir())  # the temporary store was moved


@pytest.mark.django_db
def test_compact_and_dense_matrices_agree_and_eip_scores_alike(tmp_path):
    binary = _load(tmp_path, "question_id,m1,m2,m3\nq1,1,0,1\nq2,0,1,1\nq3,0,0,1\nq4,1,1,1\nq5,0,0,0\n", "bin")
    dense, compact = response_matrix(response_set=binary), response_matrix_compact(response_set=binary)
    assert compact.R.dtype == np.uint8 and dense.R.dtype == np.float64
    np.testing.assert_array_equal(compact.R, dense.R)
    assert compact.question_ids.tolist() == dense.question_ids.tolist()
    partial = _load(tmp_path, name="partial")
    dense, compact = response_matrix(response_set=partial), response_matrix_compact(response_set=partial)
    assert isinstance(compact.R, FractionMatrix) and compact.R.denominator == 2  # 0.5 = 1/2
    np.testing.assert_array_equal(compact.R.to_dense(), dense.R)
    assert compact.question_ids.tolist() == dense.question_ids.tolist()
    # a model subset drops the question left without an observed cell (q1 has only m1, m2 observed... q3: m2, m3)
    m3 = ResponseSetModel.objects.get(response_set=partial, model__name="m3").model_id
    sub = response_matrix(response_set=partial, model_ids=[m3])
    assert sub.R.ravel().tolist() == [1.0, 1.0, 1.0]  # q2, q3, q4; q1 has no m3 cell
    sub_compact = response_matrix_compact(response_set=partial, model_ids=[m3])
    assert sub_compact.R.to_dense().ravel().tolist() == [1.0, 1.0, 1.0]
    assert sub_compact.question_ids.tolist() == sub.question_ids.tolist()
    assert sub_compact.store_rows.tolist() == sub.store_rows.tolist() == [1, 2, 3]


@pytest.mark.django_db(transaction=True)
def test_deleting_a_response_set_removes_its_store_after_the_commit(tmp_path):
    rs = _load(tmp_path)
    path = ms.store_path(rs)
    assert path.is_dir()
    ResponseSet.objects.filter(pk=rs.pk).delete()
    assert not path.exists()


@pytest.mark.django_db
def test_a_store_missing_on_disk_is_a_clear_error(tmp_path):
    rs = _load(tmp_path)
    ms.store_remove(rs)
    with pytest.raises(FileNotFoundError, match=f"no matrix store at .*response-set-{rs.pk}.zarr"):
        response_matrix(response_set=rs)


@pytest.mark.django_db
def test_a_set_scores_the_same_from_the_store_as_from_its_matrix(tmp_path):
    from scoring import eip
    rs = _load(tmp_path, "question_id,m1,m2,m3\nq1,1,0,1\nq2,0,1,1\nq3,0,0,1\nq4,1,1,0\n", "s")
    run = scoring_run_execute(run=scoring_run_create(response_set=rs, params={"methods": ["eip", "accuracy"]}))
    expected = eip(np.array([[1, 0, 1], [0, 1, 1], [0, 0, 1], [1, 1, 0]], dtype=float))
    got = [r.scores.get("eip") for r in run.question_results.order_by("question__external_id")]
    assert got == pytest.approx(expected.difficulty.tolist(), abs=1e-15)
