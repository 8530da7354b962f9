"""The matrix store addressed by a URL (``EIP_STORE_URL``), read and written through fsspec.

fsspec's local (``file://``) and in-memory (``memory://``) file systems stand
for a shared file system and an object store: a load writes the store there,
scoring reads it back, deletion removes it, and nothing lands in the local
folder ``EIP_STORE_DIR`` (which keeps only the parse scratch files). A Dask
LocalCluster (worker processes) reads through the URL a store written by
another process.
"""
from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from annotate.catalog import matrix_store as ms
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.selectors.matrix import response_matrix, response_matrix_compact
from annotate.catalog.services.loading import response_set_load
from annotate.models import ResponseSet
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from scoring import eip
from scoring.fraction import FractionMatrix

ROOT = Path(__file__).resolve().parents[3]
nan = np.nan
# Credits in tenths with gaps: stored as uint8 numerators of k/10 with a mask.
WIDE = "question_id,m1,m2,m3\nq1,1,0,\nq2,0,0.3,1\nq3,,0.5,1\nq4,0.7,1,0.1\nq5,0,0,0.9\n"
MATRIX = np.array([[1, 0, nan], [0, 0.3, 1], [nan, 0.5, 1], [0.7, 1, 0.1], [0, 0, 0.9]])


@pytest.fixture(params=["file", "memory"])
def store_url(request, tmp_path, settings):
    if request.param == "file":
        url = f"file://{tmp_path / 'shared-store'}"
    else:
        url = f"memory://eip-test-{uuid.uuid4().hex[:8]}/store"
    settings.EIP_STORE_URL = url
    yield url
    if request.param == "memory":
        import fsspec
        fs, path = fsspec.filesystem("memory"), url.removeprefix("memory://")
        if fs.exists(path):
            fs.rm(path, recursive=True)


def _load(tmp_path, name="set"):
    path = tmp_path / f"{name}.csv"
    path.write_text(WIDE)
    return response_set_load(parsed=parse_files(responses=path, file_format="wide", dataset="D"), name=name)


def _local_stores(settings) -> list[str]:
    return sorted(str(p.relative_to(settings.EIP_STORE_DIR)) for p in Path(settings.EIP_STORE_DIR).rglob("*.zarr"))


@pytest.mark.django_db(transaction=True)
def test_a_load_writes_through_the_url_and_scoring_reads_it_back(store_url, tmp_path, settings):
    rs = _load(tmp_path)
    location = ms.store_path(rs)
    assert location == f"{store_url}/response-set-{rs.pk}.zarr" and ms.store_exists(location)
    info = ms.store_info(location)
    assert (info["credit_dtype"], info["credit_denominator"], info["n_observed"]) == ("uint8", 10, 13)
    np.testing.assert_array_equal(ms.read_dense(location), MATRIX)
    assert _local_stores(settings) == []  # nothing in the local folder, temporary stores included
    import fsspec
    fs, root = fsspec.core.url_to_fs(store_url)
    assert not fs.glob(f"{root}/{ms.TEMP_FOLDER}/*.zarr")  # the temporary store was moved into place

    dense, compact = response_matrix(response_set=rs), response_matrix_compact(response_set=rs)
    np.testing.assert_array_equal(dense.R, MATRIX)
    assert isinstance(compact.R, FractionMatrix) and compact.R.denominator == 10
    run = scoring_run_execute(run=scoring_run_create(response_set=rs, params={"methods": ["eip", "accuracy"]}))
    got = [r.scores.get("eip") for r in run.question_results.order_by("question__external_id")]
    assert got == pytest.approx(eip(MATRIX).difficulty.tolist(), abs=1e-15)

    ResponseSet.objects.filter(pk=rs.pk).delete()  # the store goes once the deletion commits
    assert not ms.store_exists(location)


def test_a_store_missing_at_the_url_is_a_clear_error(store_url):
    message = r"no matrix store at .*response-set-77\.zarr \(response set response-set-77\)"
    with pytest.raises(FileNotFoundError, match=message):
        ms.read_dense(ms.store_path(77))


@pytest.mark.parametrize("kind", ["binary", "fractions", "float64"])
def test_every_storage_form_round_trips_through_a_url(store_url, kind):
    rng = np.random.default_rng(5)
    values = {"binary": (0.0, 1.0), "fractions": (0.0, 0.2, 0.4, 1.0), "float64": (0.0, 0.123456789, 1.0)}[kind]
    R = rng.choice(np.array(values), size=(9_000, 5))
    R[rng.random(R.shape) < 0.1] = nan
    temp = ms.temp_store_path(3)
    ms.write_matrix(temp, R, response_set=3)
    final = ms.store_publish(temp, 3)
    assert final == ms.store_path(3) and ms.store_exists(final) and not ms.store_exists(temp)
    back = ms.read_dense(final)
    observed = ~np.isnan(R)
    assert np.array_equal(np.isnan(back), ~observed) and back[observed].tobytes() == R[observed].tobytes()
    ms.store_remove(3)
    assert not ms.store_exists(final)


@pytest.mark.parametrize("value", ["just/a/folder", "s3://"])
def test_a_malformed_store_url_stops_the_site(monkeypatch, value):
    monkeypatch.setenv("EIP_STORE_URL", value)
    code = "import eipsite.settings"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and f"EIP_STORE_URL={value!r} is not a store URL" in out.stderr


WRITER = """
import sys
import numpy as np
from annotate.catalog.matrix_store import write_matrix
rng = np.random.default_rng(9)
R = rng.integers(0, 5, size=(20_000, 12)) / 4
R[rng.random(R.shape) < 0.05] = np.nan
R[:, 0] = 0.25  # every model observed
write_matrix(sys.argv[1], R)
np.save(sys.argv[2], R)
"""


def test_a_dask_local_cluster_reads_through_the_url_a_store_another_process_wrote(tmp_path):
    distributed = pytest.importorskip("distributed")
    from scoring.eip_cluster import eip_dask_from_zarr

    url = f"file://{tmp_path / 'shared' / 'response-set-1.zarr'}"
    subprocess.run([sys.executable, "-c", WRITER, url, str(tmp_path / "R.npy")], cwd=ROOT, check=True, timeout=300)
    R = np.load(tmp_path / "R.npy")
    assert ms.store_info(url)["credit_denominator"] == 4
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_cluster = eip_dask_from_zarr(url, client=client)
    in_memory = eip(R)
    assert on_cluster.n_iter == in_memory.n_iter
    np.testing.assert_allclose(on_cluster.difficulty, in_memory.difficulty, rtol=0, atol=1e-12)
    np.testing.assert_allclose(on_cluster.competency, in_memory.competency, rtol=0, atol=1e-12)
