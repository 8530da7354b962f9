"""Scoring runs on the compact matrix (issue 16): the same results as the float64 path.

A run whose methods are all ``compact`` in the registry reads
``response_matrix_compact`` (uint8 for a binary fully observed set, a
FractionMatrix for credits k/n, float32 with NaN otherwise) and never the float64 ``response_matrix``; every stored
figure equals what the float64 path stores, on binary, partial-credit and
missing-cell sets.
"""
from __future__ import annotations

import numpy as np
import pytest

from annotate.catalog.selectors import matrix as matrix_selectors
from annotate.models import Dataset, LanguageModel, MethodResult, Question, ResponseSet
from annotate.runs.services import scoring as service
from annotate.runs.services.scoring import reads_compact, scoring_run_create, scoring_run_execute
from scoring.fraction import FractionMatrix
from scoring.methods import method_keys
from tests.annotate.factories import write_responses

pytestmark = pytest.mark.django_db

COMPACT = ["eip", "simple_rank", "accuracy", "weighted_accuracy"]


def _set(kind: str, *, n_questions: int = 120, n_models: int = 9, seed: int = 3) -> ResponseSet:
    """A response set of random cells over two datasets: "binary" (0/1, fully
    observed), "partial" (half the credits in quarters), "missing" (0/1,
    about 30% of the cells unobserved) or "partial-missing" (both)."""
    rng = np.random.default_rng(seed)
    datasets = [Dataset.objects.create(name=f"{kind}-D{k}") for k in range(2)]
    questions = Question.objects.bulk_create(
        Question(dataset=datasets[i % 2], external_id=f"{kind}-{i}") for i in range(n_questions))
    models = LanguageModel.objects.bulk_create(LanguageModel(name=f"{kind}-m{j}") for j in range(n_models))
    skill = np.linspace(0.2, 0.8, n_models)
    credit = (rng.random((n_questions, n_models)) < skill).astype(np.float64)
    if kind.startswith("partial"):  # quarters: fractions k/4, stored as uint8 numerators
        credit = np.where(rng.random(credit.shape) < 0.5, rng.integers(0, 5, credit.shape) / 4, credit)
    observed = np.ones(credit.shape, dtype=bool)
    if kind.endswith("missing"):
        observed = rng.random(credit.shape) > 0.3
        observed[:, :] |= np.eye(n_questions, n_models, dtype=bool)  # every model observed somewhere
    rs = ResponseSet.objects.create(name=kind, file_name=f"{kind}.csv", checksum=kind.ljust(64, "0"),
                                    file_format="wide")
    write_responses(rs, [(questions[i], models[j], credit[i, j])
                         for i in range(n_questions) for j in range(n_models) if observed[i, j]])
    return rs


def _results(run) -> dict:
    """Everything a run stored, as plain values."""
    run.refresh_from_db()
    return {
        "status": run.status,
        "diagnostics": run.diagnostics,
        "methods": sorted((r.method, r.n_iter, r.converged, r.residual, sorted(r.params.items()),
                           sorted(r.notes.items())) for r in MethodResult.objects.filter(run=run)),
        "questions": sorted((r.question_id, r.kept, r.n_observed, r.component, sorted(r.scores.items()))
                            for r in run.question_results.all()),
        "models": sorted((r.model_id, r.n_observed, sorted(r.scores.items())) for r in run.model_results.all()),
        "models_used": sorted(run.models_used.values_list("pk", flat=True)),
        "datasets_used": sorted(run.datasets_used.values_list("pk", flat=True)),
    }


def _run(rs: ResponseSet, methods: list[str], *, compact: bool, monkeypatch) -> dict:
    """Execute a run of ``methods``, forcing the float64 path when ``compact`` is False;
    fails if the other selector is called."""
    with monkeypatch.context() as patch:
        if compact:
            patch.setattr(service, "response_matrix", _refuse("response_matrix"))
        else:
            patch.setattr(service, "reads_compact", lambda keys: False)
            patch.setattr(service, "response_matrix_compact", _refuse("response_matrix_compact"))
        run = scoring_run_create(response_set=rs, params={"methods": methods})
        scoring_run_execute(run=run)
    return _results(run)


def _refuse(name: str):
    def refuse(**kwargs):
        raise AssertionError(f"{name} must not be called on this path")
    return refuse


@pytest.mark.parametrize("kind", ["binary", "partial", "missing", "partial-missing"])
def test_a_compact_run_stores_exactly_what_the_float64_run_stores(kind, monkeypatch):
    rs = _set(kind)
    compact = _run(rs, COMPACT, compact=True, monkeypatch=monkeypatch)
    reference = _run(rs, COMPACT, compact=False, monkeypatch=monkeypatch)
    assert compact["status"] == "done"
    assert compact == reference  # every score, count, component and residual, to the last digit
    assert len(compact["questions"]) == 120 and len(compact["models"]) == 9
    eip_row = next(m for m in compact["methods"] if m[0] == "eip")
    assert eip_row[1] >= 3 and eip_row[2] is True  # EIP iterated and converged


def test_the_compact_matrices_of_the_test_sets_are_uint8_fractions_or_float32():
    forms = [matrix_selectors.response_matrix_compact(response_set=_set(kind)).R
             for kind in ("binary", "partial", "missing", "partial-missing")]
    assert [f.dtype for f in forms[::2]] == [np.uint8, np.float32]  # 0/1; 0/1 with gaps (NaN)
    assert [(type(f), f.denominator, f.fully_observed) for f in forms[1::2]] == [
        (FractionMatrix, 4, True), (FractionMatrix, 4, False)]  # quarters: uint8 numerators of k/4


def test_missing_cells_are_counted_from_the_compact_matrix(monkeypatch):
    rs = _set("missing", seed=7)
    stored = _run(rs, ["eip", "accuracy"], compact=True, monkeypatch=monkeypatch)
    dense = matrix_selectors.response_matrix(response_set=rs).R
    observed = ~np.isnan(dense)
    assert [q[2] for q in stored["questions"]] == observed.sum(axis=1).tolist()
    assert [m[1] for m in stored["models"]] == observed.sum(axis=0).tolist()
    assert stored["diagnostics"]["n_missing"] == int((~observed).sum()) > 0


def test_only_runs_of_compact_methods_read_the_compact_matrix():
    assert reads_compact(COMPACT)
    assert reads_compact(["eip", "accuracy"])
    assert not reads_compact(["eip", "accuracy", "irt_1pl"])
    assert not reads_compact(list(method_keys()))


def test_a_run_with_an_irt_method_reads_the_float64_matrix(monkeypatch):
    rs = _set("binary", n_questions=30, n_models=6)
    monkeypatch.setattr(service, "response_matrix_compact", _refuse("response_matrix_compact"))
    run = scoring_run_create(response_set=rs, params={"methods": ["eip", "accuracy", "irt_1pl"]})
    scoring_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == "done" and run.question_results.count() == 30


def test_question_results_are_stored_in_batches(monkeypatch):
    rs = _set("binary", n_questions=23, n_models=5)
    monkeypatch.setattr(service, "STORE_BATCH", 10)
    calls = []
    original = service._insert_question_results

    def counting(rows):
        calls.append(len(rows))
        return original(rows)

    monkeypatch.setattr(service, "_insert_question_results", counting)
    run = scoring_run_create(response_set=rs, params={"methods": ["eip", "accuracy"]})
    scoring_run_execute(run=run)
    assert calls == [10, 10, 3]
    stored = list(run.question_results.order_by("question_id"))
    assert len(stored) == 23
    first = stored[0]
    assert isinstance(first.scores, dict) and set(first.scores) >= {"accuracy_difficulty"}
    assert isinstance(first.kept, bool) and first.n_observed == 5 and first.component == 0


def test_the_scores_text_is_what_json_writes():
    import json
    import math

    lists = {"eip": [0.1, None, 1e-300, -0.0, 5e-324], "eip_scaled": [None, None, 99.0, 1 / 3, math.pi],
             "odd \"key\"": [1.0, 2.5, None, None, 0.0]}
    keys = {column: json.dumps(column) + ": " for column in lists}
    for i in range(5):
        text = service._scores_json(lists, keys, i)
        assert text == json.dumps(service._scores(lists, i))
        assert json.loads(text) == service._scores(lists, i)
    assert service._scores_json(lists, keys, 1) == '{"odd \\"key\\"": 2.5}'
