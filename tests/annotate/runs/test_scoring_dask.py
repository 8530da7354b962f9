"""A scoring run's EIP on a Dask cluster (issue 16, point 2): settings
``EIP_DASK_SCHEDULER`` / ``EIP_DASK_MIN_CELLS``; the stored scores equal an
in-memory run's, and the run's EIP record says it ran on Dask."""
from __future__ import annotations

import numpy as np
import pytest

from annotate.catalog.matrix_store import store_path
from annotate.models import (
    Dataset,
    LanguageModel,
    MethodResult,
    Question,
    QuestionResult,
    ResponseSet,
    RunStatus,
)
from annotate.runs.services.scoring import eip_engine_params, scoring_run_create, scoring_run_execute
from tests.annotate.factories import write_responses

pytestmark = pytest.mark.django_db
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def address():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def response_set():
    """60 questions x 7 models, partial credit with gaps; question 0 all solved, 1 all failed."""
    rng = np.random.default_rng(16)
    credit = np.round(rng.random((60, 7)), 2)
    credit[rng.random(credit.shape) < 0.2] = np.nan
    credit[0], credit[1] = 1.0, 0.0
    dataset = Dataset.objects.create(name="D")
    questions = Question.objects.bulk_create(Question(dataset=dataset, external_id=str(i)) for i in range(60))
    models = LanguageModel.objects.bulk_create(LanguageModel(name=f"m{j}") for j in range(7))
    rs = ResponseSet.objects.create(name="s", file_name="s.csv", checksum="s".ljust(64, "0"), file_format="wide")
    write_responses(rs, [(questions[i], models[j], float(credit[i, j]))
                         for j, i in zip(*np.nonzero(~np.isnan(credit.T)))])
    return rs


def _run(response_set, model_ids=None):
    run = scoring_run_create(response_set=response_set, model_ids=model_ids, params={"methods": ["eip", "accuracy"]})
    scoring_run_execute(run=run)
    eip = MethodResult.objects.get(run=run, method="eip")
    scores = {r.question_id: r.scores.get("eip") for r in QuestionResult.objects.filter(run=run)}
    return run, eip, scores


def _same_scores(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        (a[k] is None and b[k] is None) or abs(a[k] - b[k]) <= 1e-12 for k in a
    )


def test_a_run_on_the_configured_cluster_stores_the_in_memory_scores_and_says_dask(response_set, address, settings):
    settings.EIP_DASK_SCHEDULER = ""
    _, memory, memory_scores = _run(response_set)
    assert "engine" not in memory.notes
    settings.EIP_DASK_SCHEDULER, settings.EIP_DASK_MIN_CELLS = address, 420  # 60 x 7 cells: just large enough
    run, dask, dask_scores = _run(response_set)
    assert run.status == RunStatus.DONE
    assert dask.notes["engine"] == "dask" and dask.notes["dask_scheduler"] == address
    # the workers read the set's matrix store themselves (nothing sent from this process)
    assert dask.notes["dask_workers"] == 2 and dask.notes["dask_store"] == str(store_path(response_set.pk))
    assert (dask.notes["kept"], dask.notes["all_solved"], dask.notes["all_failed"]) == (58, 1, 1)
    assert dask.n_iter == memory.n_iter and _same_scores(dask_scores, memory_scores)
    # a subset of the models: the workers read only the store columns the run selected
    models = sorted(LanguageModel.objects.values_list("pk", flat=True))[1:6]
    settings.EIP_DASK_SCHEDULER = ""
    _, memory, memory_scores = _run(response_set, model_ids=models)
    settings.EIP_DASK_SCHEDULER, settings.EIP_DASK_MIN_CELLS = address, 300  # 60 x 5 cells
    _, dask, dask_scores = _run(response_set, model_ids=models)
    assert dask.notes["engine"] == "dask" and dask.notes["dask_store"] == str(store_path(response_set.pk))
    assert dask.n_iter == memory.n_iter and _same_scores(dask_scores, memory_scores)
    assert memory_scores != _run(response_set)[2]  # the subset really scores differently
    settings.EIP_DASK_MIN_CELLS = 421  # one cell too many: in memory again
    assert eip_engine_params(420) == {}


@pytest.mark.slow  # starts and stops its own LocalCluster
def test_local_starts_a_cluster_for_the_run(response_set, settings):
    settings.EIP_DASK_SCHEDULER, settings.EIP_DASK_MIN_CELLS = "local", 0
    run, eip, _ = _run(response_set)
    assert run.status == RunStatus.DONE and eip.notes["engine"] == "dask" and eip.notes["dask_scheduler"] == "local"


def test_a_bad_or_unreachable_scheduler_fails_the_run_with_the_setting_named(response_set, settings):
    settings.EIP_DASK_SCHEDULER, settings.EIP_DASK_MIN_CELLS = "dask-host:8786", 0
    run = scoring_run_create(response_set=response_set, params={"methods": ["eip", "accuracy"]})
    with pytest.raises(ValueError, match=r"EIP_DASK_SCHEDULER='dask-host:8786' is not a Dask scheduler"):
        scoring_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "tcp://dask-scheduler:8786" in run.error
    settings.EIP_DASK_SCHEDULER, settings.EIP_DASK_TIMEOUT_S = "tcp://127.0.0.1:9", 1
    run = scoring_run_create(response_set=response_set, params={"methods": ["eip", "accuracy"]})
    with pytest.raises(ConnectionError):
        scoring_run_execute(run=run)
    run.refresh_from_db()
    assert run.error.startswith(
        "The run stopped while computing EIP: EIP_DASK_SCHEDULER='tcp://127.0.0.1:9': no Dask scheduler answered "
        "within 1 s"
    )
    assert run.error.endswith("(SchedulerUnreachableError)")
    assert not MethodResult.objects.filter(run=run).exists()


@pytest.mark.parametrize("kind", ["binary", "partial-missing"])
def test_a_compact_run_on_the_cluster_stores_the_in_memory_scores(kind, address, settings):
    """The run reads the compact matrix (uint8; fractions k/4 as uint8 numerators with a mask) and the
    workers read the store (dividing the numerators): the same scores as in memory."""
    from annotate.catalog.selectors.matrix import response_matrix_compact
    from tests.annotate.runs.test_scoring_compact import _set

    rs = _set(kind, n_questions=50, n_models=6, seed=11)
    compact = response_matrix_compact(response_set=rs).R
    assert compact.dtype == np.uint8 if kind == "binary" else compact.denominator == 4
    settings.EIP_DASK_SCHEDULER = ""
    _, memory, memory_scores = _run(rs)
    settings.EIP_DASK_SCHEDULER, settings.EIP_DASK_MIN_CELLS = address, 0
    run, dask, dask_scores = _run(rs)
    assert run.status == RunStatus.DONE and dask.notes["engine"] == "dask"
    assert dask.notes["dask_store"] == str(store_path(rs.pk))
    assert dask.n_iter == memory.n_iter and _same_scores(dask_scores, memory_scores)
    assert sum(v is not None for v in dask_scores.values()) > 40
