"""The response-matrix selector and the scoring service (issue 3)."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from annotate.catalog.selectors.matrix import ERR_NO_RESPONSES, NO_SUBJECT, response_matrix
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject
from tests.annotate.factories import write_responses

pytestmark = pytest.mark.django_db


def _response_set(name: str) -> ResponseSet:
    return ResponseSet.objects.create(name=name, file_name=f"{name}.csv", checksum=name.ljust(64, "0"),
                                      file_format="wide")


@pytest.fixture
def tiny():
    """Three questions in two datasets, three models, one with a gap; plus a
    second response set whose rows must never leak in.

    Created in an order that differs from the id order where it matters: the
    model "a-first" is created last, so it has the largest id.
    """
    d1, d2 = Dataset.objects.create(name="D1"), Dataset.objects.create(name="D2")
    algebra = Subject.objects.create(name="algebra")
    q1 = Question.objects.create(dataset=d1, subject=algebra, external_id="1")
    q2 = Question.objects.create(dataset=d1, subject=None, external_id="2")
    q3 = Question.objects.create(dataset=d2, subject=algebra, external_id="3")
    q_other = Question.objects.create(dataset=d1, subject=algebra, external_id="only-in-other-set")
    m1 = LanguageModel.objects.create(name="zeta")
    m2 = LanguageModel.objects.create(name="eta")
    m_other = LanguageModel.objects.create(name="only-in-other-set")
    m3 = LanguageModel.objects.create(name="a-first")
    rs, other = _response_set("tiny"), _response_set("other")
    cells = {(q1, m1): 1.0, (q1, m2): 0.0, (q1, m3): 1.0, (q2, m2): 0.5, (q3, m1): 0.0, (q3, m3): 0.25}
    write_responses(rs, [(q, m, c) for (q, m), c in cells.items()])
    write_responses(other, [
        (q_other, m_other, 1.0),
        (q2, m1, 1.0),  # (q2, m1) stays NaN in "tiny"
    ])
    return {"rs": rs, "q": (q1, q2, q3), "m": (m1, m2, m3), "d": (d1, d2), "algebra": algebra}


def test_it_builds_the_matrix_with_nan_where_unobserved_in_id_order(tiny):
    (q1, q2, q3), (m1, m2, m3) = tiny["q"], tiny["m"]
    matrix = response_matrix(response_set=tiny["rs"])
    assert matrix.question_ids.tolist() == [q1.pk, q2.pk, q3.pk]  # ascending Question.id
    assert matrix.model_ids.tolist() == [m1.pk, m2.pk, m3.pk]  # ascending id, not name order
    assert matrix.R.dtype == np.float64 and matrix.question_ids.dtype == np.int64
    nan = math.nan
    expected = np.array([
        [1.0, 0.0, 1.0],
        [nan, 0.5, nan],
        [0.0, nan, 0.25],
    ])
    np.testing.assert_array_equal(matrix.R, expected)  # NaN == NaN in assert_array_equal
    assert matrix.question_datasets.tolist() == [tiny["d"][0].pk, tiny["d"][0].pk, tiny["d"][1].pk]
    assert matrix.question_subjects.tolist() == [tiny["algebra"].pk, NO_SUBJECT, tiny["algebra"].pk]
    assert not matrix.R.flags.writeable


def test_it_restricts_to_models_and_datasets_and_drops_empty_rows(tiny):
    (q1, _q2, _q3), (m1, _m2, m3) = tiny["q"], tiny["m"]
    matrix = response_matrix(response_set=tiny["rs"], model_ids=[m3.pk, m1.pk], dataset_ids=[tiny["d"][0].pk])
    # q2 has no response from m1 or m3, q3 is in D2: only q1 is left
    assert matrix.question_ids.tolist() == [q1.pk]
    assert matrix.model_ids.tolist() == [m1.pk, m3.pk]
    np.testing.assert_array_equal(matrix.R, [[1.0, 1.0]])


def test_it_refuses_a_selection_without_responses(tiny):
    with pytest.raises(ValueError) as caught:
        response_matrix(response_set=tiny["rs"], model_ids=[tiny["m"][1].pk], dataset_ids=[tiny["d"][1].pk])
    assert str(caught.value) == ERR_NO_RESPONSES.format(
        response_set="tiny v1", model_ids=[tiny["m"][1].pk], dataset_ids=[tiny["d"][1].pk])


@pytest.mark.parametrize("bad", ["1,2", [1.5], [True], []])
def test_it_rejects_malformed_id_lists(tiny, bad):
    with pytest.raises(ValueError, match="model_ids"):
        response_matrix(response_set=tiny["rs"], model_ids=bad)


# --- the scoring service ------------------------------------------------------------

import dataclasses  # noqa: E402
from pathlib import Path  # noqa: E402

from django.test import override_settings  # noqa: E402

import annotate.demo  # noqa: E402
import scoring.methods as registry  # noqa: E402
from annotate.catalog.loaders.tabular_files import parse_folder  # noqa: E402
from annotate.catalog.services.loading import response_set_load  # noqa: E402
from annotate.models import MethodResult, ModelResult, QuestionResult, RunStatus  # noqa: E402
from annotate.runs.services import scoring as service  # noqa: E402
from scoring.baselines import accuracy, question_accuracy_difficulty, simple_rank, weighted_accuracy  # noqa: E402
from scoring.eip import eip  # noqa: E402
from scoring.irt import irt_1pl, irt_2pl  # noqa: E402
from scoring.methods import get_method, method_keys  # noqa: E402
from scoring.mirt import irt_mirt  # noqa: E402

DEMO = Path(annotate.demo.__file__).parent
FAST = {"mirt_epochs": 60, "mirt_seed": 7}
TOL = 1e-12


@pytest.fixture
def demo_set() -> ResponseSet:
    """The built-in demo (120 questions x 24 models, 12 cells unobserved)."""
    parsed = parse_folder(DEMO, dataset="EIP-demo", subject_column="category", keep_columns=["level"])
    return response_set_load(parsed=parsed, name="EIP-demo")


def _close(stored, expected) -> bool:
    """None stands for NaN; otherwise equal within TOL."""
    if expected is None or (isinstance(expected, float) and math.isnan(expected)):
        return stored is None
    return stored is not None and abs(stored - expected) <= TOL


def _assert_column(rows: dict, ids, field: str, expected) -> None:
    mismatches = [(i, rows[i].score(field), e) for i, e in zip(ids.tolist(), np.asarray(expected, float).tolist())
                  if not _close(rows[i].score(field), e)]
    assert not mismatches, f"{field}: {mismatches[:5]}"


def test_it_stores_exactly_what_the_scoring_functions_return(demo_set):
    run = service.scoring_run_create(response_set=demo_set, params=FAST)
    run = service.scoring_run_execute(run=run)
    assert (run.status, run.progress, run.error) == (RunStatus.DONE, 1.0, "")

    m = response_matrix(response_set=demo_set)
    assert m.R.shape == (120, 24) and int(np.isnan(m.R).sum()) == 12  # demo README: 12 blank cells
    questions = {r.question_id: r for r in QuestionResult.objects.filter(run=run)}
    models = {r.model_id: r for r in ModelResult.objects.filter(run=run)}
    assert sorted(questions) == m.question_ids.tolist() and sorted(models) == m.model_ids.tolist()

    # Same BLAS threading as the service: L-BFGS paths may differ in the last
    # bits with another summation order.
    with threadpool_limits(limits=service.BLAS_THREADS, user_api="blas"):
        e = eip(m.R, alpha=0.85, tol=1e-10)
        one, two = irt_1pl(m.R), irt_2pl(m.R)
        fits = [irt_mirt(m.R, epochs=60, rng=7 + k) for k in range(5)]  # seeds mirt_seed + 0..4
    # each seed's difficulty, with questions of identical responses given their mean (obvious loop)
    rows = [tuple(np.nan_to_num(r, nan=-1.0)) for r in m.R]
    seeds = []
    for fit in fits:
        pooled = fit.difficulty.copy()
        for i, row in enumerate(rows):
            pooled[i] = np.mean([fit.difficulty[j] for j, other in enumerate(rows) if other == row])
        seeds.append(pooled)
    mirt_difficulty, mirt_ability = np.mean(seeds, axis=0), np.mean([f.ability for f in fits], axis=0)
    assert len(set(rows)) < len(rows)  # the demo has questions with identical responses
    for k, pooled in enumerate(seeds):
        _assert_column(questions, m.question_ids, f"irt_mirt_s{k}", pooled)
    for field, expected in {
        "eip": e.difficulty, "eip_scaled": e.difficulty_scaled, "simple_rank": simple_rank(m.R),
        "accuracy_difficulty": question_accuracy_difficulty(m.R), "irt_1pl": one.difficulty,
        "irt_2pl": two.difficulty, "irt_2pl_discrimination": two.discrimination, "irt_mirt": mirt_difficulty,
    }.items():
        _assert_column(questions, m.question_ids, field, expected)
    for field, expected in {
        "eip": e.competency, "eip_scaled": e.competency_scaled, "accuracy": accuracy(m.R),
        "weighted_accuracy": weighted_accuracy(m.R, m.question_datasets), "irt_1pl": one.ability,
        "irt_2pl": two.ability, "irt_mirt": mirt_ability,
    }.items():
        _assert_column(models, m.model_ids, field, expected)
    assert [questions[q].kept for q in m.question_ids.tolist()] == e.kept.tolist()
    assert sum(r.kept for r in questions.values()) == 115  # demo README: EIP keeps 115 of 120
    assert sorted(r.n_observed for r in questions.values())[:12] == [23] * 12  # Heron-180B skipped 12
    excluded = {r.question.external_id for r in QuestionResult.objects.filter(run=run, kept=False)
                .select_related("question")}
    assert excluded == {"303", "501", "305", "217", "120"}  # demo README: 3 all solved, 2 all failed
    assert all(r.score("eip") is None and "eip" not in r.scores for r in questions.values() if not r.kept)

    methods = {r.method: r for r in MethodResult.objects.filter(run=run)}
    assert sorted(methods) == sorted(method_keys())
    assert (methods["eip"].n_iter, methods["eip"].converged) == (e.n_iter, True)
    assert methods["eip"].residual <= 1e-10
    assert methods["eip"].notes == {"kept": 115, "all_solved": 3, "all_failed": 2, "dangling_models": 0}
    assert methods["irt_mirt"].n_iter == 60
    assert methods["irt_mirt"].params == {"n_dims": 3, "epochs": 60, "learning_rate": 0.01, "seed": 7, "seeds": 5}
    assert methods["irt_mirt"].converged == all(f.converged for f in fits)
    stored_2pl = methods["irt_2pl"].params  # paper appendix H.4: L2 0.01, bounds [-5, 5], 1000 iterations
    assert (stored_2pl["l2"], stored_2pl["bounds"], stored_2pl["max_iter"]) == (0.01, [-5.0, 5.0], 1000)
    assert all(r.duration_s >= 0 for r in methods.values())
    assert set(run.models_used.values_list("pk", flat=True)) == set(m.model_ids.tolist())


def test_a_failing_method_leaves_a_failed_run_without_results(demo_set, monkeypatch):
    def broken(R, **kwargs):
        raise RuntimeError("2PL exploded")

    monkeypatch.setitem(registry._REGISTRY, "irt_2pl", dataclasses.replace(get_method("irt_2pl"), runner=broken))
    run = service.scoring_run_create(response_set=demo_set, params=FAST)
    with pytest.raises(RuntimeError, match="2PL exploded"):
        service.scoring_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error == "The run stopped while computing 2PL IRT: 2PL exploded (RuntimeError)"
    assert run.finished_at is not None
    assert not MethodResult.objects.filter(run=run).exists()
    assert not QuestionResult.objects.filter(run=run).exists()
    assert not ModelResult.objects.filter(run=run).exists()


def test_it_scores_a_subset_of_models(demo_set):
    chosen = list(LanguageModel.objects.filter(name__startswith="Heron").values_list("pk", flat=True))
    assert len(chosen) == 4
    run = service.scoring_run_create(response_set=demo_set, model_ids=chosen,
                                     params={"methods": ["eip", "accuracy"]})
    service.scoring_run_execute(run=run)
    full = response_matrix(response_set=demo_set)
    columns = np.searchsorted(full.model_ids, sorted(chosen))
    R = full.R[:, columns]
    expected = eip(R)
    stored = {r.model_id: r.score("eip") for r in ModelResult.objects.filter(run=run)}
    assert sorted(stored) == sorted(chosen)
    for j, model_id in enumerate(sorted(chosen)):
        assert abs(stored[model_id] - expected.competency[j]) <= TOL
    assert sorted(MethodResult.objects.filter(run=run).values_list("method", flat=True)) == ["accuracy", "eip"]
    assert not any("irt_1pl" in r.scores for r in QuestionResult.objects.filter(run=run))
    assert QuestionResult.objects.filter(run=run).count() == 120  # every question has a Heron response
    assert set(run.models_used.values_list("pk", flat=True)) == set(chosen)


def test_it_scores_a_subset_of_datasets_by_hand(tiny):
    (_q1, _q2, q3), (m1, _m2, m3) = tiny["q"], tiny["m"]
    run = service.scoring_run_create(response_set=tiny["rs"], dataset_ids=[tiny["d"][1].pk], params=FAST)
    service.scoring_run_execute(run=run)
    # Only q3 (dataset D2) is left, answered by m1 (credit 0) and m3 (0.25); m2 never saw it.
    # One kept question: pi_Q = (1). S(q3) = 0.25, so with alpha = 0.85 and M = 2,
    # pi_M = 0.85 * (0, 0.25) / 0.25 + 0.15 / 2 = (0.075, 0.925).
    [(question_id, scores)] = QuestionResult.objects.filter(run=run).values_list("question_id", "scores")
    assert question_id == q3.pk and abs(scores["eip"] - 1.0) <= TOL
    stored = {r.model_id: r.score("eip") for r in ModelResult.objects.filter(run=run)}
    assert stored.keys() == {m1.pk, m3.pk}
    assert abs(stored[m1.pk] - 0.075) <= TOL and abs(stored[m3.pk] - 0.925) <= TOL
    assert list(run.datasets_used.values_list("pk", flat=True)) == [tiny["d"][1].pk]


def test_enqueue_runs_it_with_the_immediate_backend(tiny):
    run = service.scoring_run_create(response_set=tiny["rs"], params=FAST)
    immediate = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    with override_settings(TASKS=immediate):
        result = service.scoring_run_enqueue(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert result.return_value == {"run_id": run.pk, "status": "done"}
    assert ModelResult.objects.filter(run=run).count() == 3


def test_it_reports_progress_up_to_one_and_refuses_a_second_execution(tiny):
    seen = []
    run = service.scoring_run_create(response_set=tiny["rs"], params=FAST)
    service.scoring_run_execute(run=run, progress=lambda fraction, label: seen.append((fraction, label)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert [label for _, label in seen] == [*method_keys(), "storing", "done"]
    with pytest.raises(ValueError) as caught:
        service.scoring_run_execute(run=run)
    assert str(caught.value) == service.ERR_NOT_QUEUED.format(run_id=run.pk, status="done")


@pytest.mark.parametrize(("params", "message"), [
    ({"alpha": 1.0}, service.ERR_ALPHA.format(value=1.0)),
    ({"tol": 0}, service.ERR_TOL.format(value=0)),
    ({"mirt_epochs": 0}, service.ERR_EPOCHS.format(value=0)),
    ({"mirt_seed": -1}, service.ERR_SEED.format(value=-1)),
    ({"mirt_seeds": 0}, service.ERR_SEEDS.format(most=5, value=0)),
    ({"mirt_seeds": 6}, service.ERR_SEEDS.format(most=5, value=6)),
    ({"min_models": 0}, service.ERR_MIN_MODELS.format(value=0)),
    ({"min_models": 2.5}, service.ERR_MIN_MODELS.format(value=2.5)),
    ({"methods": ["simple_rank", "accuracy"]}, service.ERR_METHODS.format(
        known=list(method_keys()), required=["eip", "accuracy"], value=["simple_rank", "accuracy"])),
    ({"damping": 0.5}, service.ERR_UNKNOWN_PARAMS.format(keys=["damping"], known=sorted(service.PARAM_KEYS))),
])
def test_it_rejects_bad_params_before_creating_a_run(tiny, params, message):
    with pytest.raises(ValueError) as caught:
        service.scoring_run_create(response_set=tiny["rs"], params=params)
    assert str(caught.value) == message
    assert not service.ScoringRun.objects.exists()


def test_it_rejects_models_without_responses_in_the_set(tiny):
    outsider = LanguageModel.objects.get(name="only-in-other-set")
    with pytest.raises(ValueError) as caught:
        service.scoring_run_create(response_set=tiny["rs"], model_ids=[tiny["m"][0].pk, outsider.pk])
    assert str(caught.value) == service.ERR_NOT_IN_SET.format(name="model_ids", ids=[outsider.pk],
                                                              response_set="tiny v1")


# --- manage.py score_responses ----------------------------------------------------

import io  # noqa: E402

from django.core.management import CommandError, call_command  # noqa: E402


def test_the_command_scores_a_subset_and_prints_a_one_line_summary(demo_set):
    out, err = io.StringIO(), io.StringIO()
    call_command("score_responses", "--response-set", "EIP-demo", "--models", "Heron-180B,Kestrel-72B",
                 "--methods", "eip,simple_rank", stdout=out, stderr=err)
    run = service.ScoringRun.objects.get()
    expected_iter = eip(response_matrix(response_set=demo_set, model_ids=sorted(
        LanguageModel.objects.filter(name__in=["Heron-180B", "Kestrel-72B"]).values_list("pk", flat=True)
    )).R).n_iter
    summary = out.getvalue().strip()
    assert re.fullmatch(
        rf"run {run.pk} on EIP-demo v1: done; eip {expected_iter} iter \d+\.\d\d s, simple_rank \d+\.\d\d s, "
        r"accuracy \d+\.\d\d s\. (\d+) of (\d+) model-question cells not observed; (\d+) questions observed by "
        r"fewer than 3 models; the model-question graph has 1 component\.", summary), summary
    # two models: every question is below 3 models
    R = response_matrix(response_set=demo_set, model_ids=sorted(run.models_used.values_list("pk", flat=True))).R
    counts = re.search(r"\. (\d+) of (\d+) model-question cells not observed; (\d+) questions", summary)
    assert tuple(map(int, counts.groups())) == (int(np.isnan(R).sum()), R.size, R.shape[0])
    assert "100%" in err.getvalue()
    assert sorted(run.models_used.values_list("name", flat=True)) == ["Heron-180B", "Kestrel-72B"]


@pytest.mark.parametrize(("args", "message"), [
    (("--response-set", "nope"), "no response set named 'nope'; known: ['EIP-demo v1']"),
    (("--response-set", "EIP-demo", "--version", "2"), "no response set named 'EIP-demo' with version 2"),
    (("--response-set", "EIP-demo", "--models", "Heron-180B,GPT-99"), "unknown models ['GPT-99']"),
    (("--response-set", "EIP-demo", "--alpha", "1.5"), "alpha must be a number in (0, 1); got 1.5"),
])
def test_the_command_reports_user_mistakes(demo_set, args, message):
    with pytest.raises(CommandError) as caught:
        call_command("score_responses", *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert str(caught.value).startswith(message)
    assert not service.ScoringRun.objects.exists()


# --- admin ------------------------------------------------------------------------

from django.contrib import admin  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import path, reverse  # noqa: E402

import annotate.runs.admin  # noqa: E402  registers the ScoringRun admin

# This module doubles as the URLconf of the admin test: it routes the admin
# after the ScoringRun admin is registered, whatever annotate/admin/__init__.py imports.
urlpatterns = [path("admin/", admin.site.urls)]


@pytest.mark.urls(__name__)
def test_the_admin_action_queues_a_new_run_with_the_same_settings(tiny, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    old = service.scoring_run_create(response_set=tiny["rs"], model_ids=[tiny["m"][0].pk, tiny["m"][2].pk],
                                     params={"alpha": 0.5, "methods": ["eip", "accuracy"]})
    service.scoring_run_execute(run=old)
    admin_user = get_user_model().objects.create_superuser("root", password=None)
    client = Client()
    client.force_login(admin_user)
    changelist = reverse("admin:annotate_scoringrun_changelist")
    assert client.get(changelist).status_code == 200
    response = client.post(changelist, {"action": "run_scoring", "_selected_action": [old.pk]})
    assert response.status_code == 302
    new = service.ScoringRun.objects.exclude(pk=old.pk).get()
    assert new.status == RunStatus.DONE and new.created_by == admin_user
    assert new.params == old.params
    assert sorted(new.models_used.values_list("pk", flat=True)) == sorted([tiny["m"][0].pk, tiny["m"][2].pk])
    assert MethodResult.objects.get(run=new, method="eip").params == {"alpha": 0.5, "tol": 1e-10}


@pytest.mark.parametrize(("ids", "message"), [
    ("12", "model_ids must be a sequence of integer ids or None; got '12'"),
    ([1, True], "model_ids must be a sequence of integer ids or None; got [1, True]"),
    ([], "model_ids must name at least one id (use None for all); got an empty sequence"),
])
def test_it_rejects_bad_model_ids_before_creating_a_run(tiny, ids, message):
    with pytest.raises(ValueError) as caught:
        service.scoring_run_create(response_set=tiny["rs"], model_ids=ids)
    assert str(caught.value) == message
    assert not service.ScoringRun.objects.exists()
