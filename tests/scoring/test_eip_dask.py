"""EIP on Dask (issue 16, point 2): the same scores, masks and iteration count
as the in-memory ``eip()``, on a ``distributed.LocalCluster``.

One module-scoped cluster (two worker processes, ~0.5 s to start) serves every
test; matrices are small but cut into several Dask blocks and sub-blocks so
that the block-by-block sums really differ in grouping from ``eip()``'s.
"""
from __future__ import annotations

import numpy as np
import pytest

from scoring.eip import NO_KEPT_QUESTIONS, eip
from scoring.eip_cluster import eip_dask_from_zarr, eip_on_cluster_from_zarr
from scoring.eip_dask import ERR_SCHEDULER, SchedulerUnreachableError, check_scheduler, dask_client, eip_dask
from scoring.method_runners import MethodInput
from scoring.methods import run_method

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        yield c


def assert_same(got, want):
    """Scores within 1e-12, masks and iteration count identical."""
    assert got.n_iter == want.n_iter
    for name in ("kept", "all_solved", "all_failed", "dangling"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    np.testing.assert_allclose(got.difficulty, want.difficulty, rtol=0, atol=1e-12)  # NaN where not kept, both
    np.testing.assert_allclose(got.competency, want.competency, rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.difficulty_scaled, want.difficulty_scaled, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.competency_scaled, want.competency_scaled, rtol=0, atol=1e-9)
    assert got.residual <= got.tol and abs(got.residual - want.residual) < 1e-15


def test_the_papers_toy_graph_gives_the_exact_fractions():
    R = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.uint8)
    res = eip_dask(R, alpha=0.5, tol=1e-14, row_chunk=1)  # one question per block, Dask's local threads
    np.testing.assert_allclose(res.competency, [8 / 15, 7 / 15], rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.difficulty, [17 / 60, 17 / 60, 26 / 60], rtol=0, atol=1e-12)


def test_binary_uint8_with_all_solved_all_failed_rows_and_a_dangling_model(client):
    rng = np.random.default_rng(16)
    R = (rng.random((4000, 30)) < 0.55).astype(np.uint8)
    R[:, 7] = 1  # model 7 solves every kept question: no failure weight, dangling
    R[:5] = 1  # all solved
    R[5:9] = 0  # all failed (not kept: model 7's failures there do not count)
    want = eip(R)
    assert want.all_solved.sum() == 5 and want.all_failed.sum() == 4 and want.dangling.tolist().count(True) == 1
    assert_same(eip_dask(R, row_chunk=700, chunk_bytes=30 * 8 * 64, client=client), want)


def test_partial_credit_with_missing_cells_float64_and_float32(client):
    rng = np.random.default_rng(2)
    R = rng.random((3000, 25))
    R[rng.random(R.shape) < 0.3] = np.nan
    R[0] = [1.0] * 12 + [np.nan] * 13  # observed cells all 1: all solved
    R[1] = np.nan  # never observed: neither kept nor solved nor failed
    R[1, 3] = 0.0  # ... except one failure: all failed
    want = eip(R)
    assert want.all_solved[0] and want.all_failed[1] and not want.kept[:2].any()
    assert_same(eip_dask(R, row_chunk=512, chunk_bytes=4096, client=client), want)
    R32 = R.astype(np.float32)
    assert_same(eip_dask(R32, row_chunk=1000), eip(R32))  # Dask's local threads


def test_uint8_with_an_observed_mask_equals_float_with_nan(client):
    rng = np.random.default_rng(3)
    credit = (rng.random((2500, 20)) < 0.5).astype(np.uint8)
    observed = rng.random(credit.shape) < 0.8
    credit[~observed & (rng.random(credit.shape) < 0.5)] = 1  # garbage under the mask is ignored
    as_float = np.where(observed, credit, np.nan)
    assert_same(eip_dask(credit, observed, row_chunk=600, client=client), eip(as_float))


@pytest.mark.slow  # three runs, one through a second client; ~5 s on an idle 2-core machine
def test_a_zarr_store_of_uint8_credit_and_its_mask_scores_as_in_memory(client, tmp_path):
    zarr = pytest.importorskip("zarr")
    rng = np.random.default_rng(4)
    credit = (rng.random((5000, 40)) < 0.5).astype(np.uint8)
    observed = rng.random(credit.shape) < 0.9
    credit[~observed] = 0  # the store's convention: 0 where not observed
    group = zarr.open_group(str(tmp_path / "set.zarr"), mode="w")
    group.create_array("credit", shape=credit.shape, chunks=(1024, 16), dtype=np.uint8, fill_value=0)[:] = credit
    group.create_array("observed", shape=credit.shape, chunks=(1024, 16), dtype=bool, fill_value=True)[:] = observed
    group.attrs["fully_observed"] = False
    as_float = np.where(observed, credit, np.nan)
    address = client.scheduler.address
    on_cluster = eip_on_cluster_from_zarr(tmp_path / "set.zarr", scheduler=address)  # a new client, by address
    assert (on_cluster.n_workers, on_cluster.scheduler) == (2, address)
    assert_same(on_cluster.result, eip(as_float))
    # The method registry's EIP runner, told to read the store on the cluster (what the service will pass).
    params = {"eip_dask_scheduler": address, "eip_dask_store": str(tmp_path / "set.zarr"),
              "eip_dask_rows": [4, 0, 2, 3], "eip_dask_columns": list(range(40))}
    R = as_float[[4, 0, 2, 3]]
    out = run_method("eip", MethodInput(R=R, question_groups=np.zeros(4), params=params))
    assert out.notes["engine"] == "dask" and out.notes["dask_store"] == str(tmp_path / "set.zarr")
    np.testing.assert_allclose(out.question_columns["eip"], eip(R).difficulty, rtol=0, atol=1e-12)
    rows, columns = np.arange(0, 5000, 3), np.array([39, 0, 5, 17, 22, 8])
    assert_same(eip_dask_from_zarr(str(tmp_path / "set.zarr"), rows=rows, columns=columns),  # local threads
                eip(as_float[rows][:, columns]))


def test_without_a_client_it_runs_on_local_threads():
    rng = np.random.default_rng(5)
    R = (rng.random((1500, 12)) < 0.4).astype(bool)
    assert_same(eip_dask(R, row_chunk=400), eip(R))


def test_bad_input_is_refused_with_the_cell_or_column_named():
    R = np.zeros((10, 3), dtype=np.uint8)
    R[0, 0] = 1
    R[7, 2] = 2
    with pytest.raises(ValueError) as exc:
        eip_dask(R, row_chunk=4)
    assert str(exc.value) == ("R has credit 2 at (question 7, model 2); credit must lie in [0, 1] "
                              "(integer matrices must be 0/1)")
    F = np.full((6, 3), 0.5)
    F[:, 1] = np.nan
    with pytest.raises(ValueError) as exc:
        eip_dask(F, row_chunk=2)
    assert str(exc.value) == "R has models with no observed cell (columns [1]); drop them before scoring"
    with pytest.raises(ValueError) as exc:
        eip_dask(np.ones((4, 2), dtype=np.uint8))
    assert str(exc.value) == NO_KEPT_QUESTIONS
    with pytest.raises(ValueError, match="observed must be a bool array"):
        eip_dask(np.ones((4, 2)), np.ones((4, 2)))


def test_scheduler_settings_are_checked_and_an_unreachable_one_is_named():
    assert check_scheduler(" tcp://10.0.0.5:8786 ") == "tcp://10.0.0.5:8786"
    assert check_scheduler("local") == "local" and check_scheduler("") == ""
    with pytest.raises(ValueError) as exc:
        check_scheduler("10.0.0.5:8786")
    assert str(exc.value) == ERR_SCHEDULER.format(name="EIP_DASK_SCHEDULER", value="10.0.0.5:8786", off="")
    with pytest.raises(SchedulerUnreachableError) as exc, dask_client("tcp://127.0.0.1:9", timeout=0.5):
        pass
    assert str(exc.value).startswith("EIP_DASK_SCHEDULER='tcp://127.0.0.1:9': no Dask scheduler answered within 0.5 s")
