"""The admin keeps a judged study's scope and every scoring result as they are.

A study's datasets and subjects are editable until its first judgment (saving
a change draws the pairs again); from then on they are read-only, the page
shows the reason, and a stale form that still posts a change is refused with
that reason. Pairs and scoring results are never edited, added or deleted one
by one.
"""
from __future__ import annotations

import io
import zipfile

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from annotate.models import (
    MethodResult,
    ModelResult,
    Question,
    QuestionResult,
    ScoringRun,
    Study,
    Subject,
)
from annotate.studies.admin.studies import SCOPE_OPEN
from annotate.studies.services.scope import ERR_SCOPE_FROZEN
from tests.annotate.factories import make_catalog, make_study, make_user
from tests.annotate.studies.test_studies import judge_first_pair, scope_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    """A superuser: every model permission, so only the admin's own rules refuse."""
    user = make_user("root", staff=True)
    user.is_superuser = True
    user.save()
    client.force_login(user)
    return client


@pytest.fixture
def two_datasets():
    """A study on the first dataset; one run scores the questions of both."""
    catalog = make_catalog(per_subject=5)
    other = make_catalog(subjects=("Chemistry", "Biology"), per_subject=5)
    QuestionResult.objects.filter(run=other.run).update(run=catalog.run)
    study = make_study(catalog, n_pairs=6, seed=3, name="Pilot")
    return catalog, other, study


def change_url(study: Study) -> str:
    return reverse("admin:annotate_study_change", args=[study.pk])


def study_post(study: Study, **changes) -> dict[str, object]:
    """The change form as the browser posts it, with ``changes`` applied, and
    the pair inline's management form (every pair marked for deletion)."""
    pairs = list(study.pairs.order_by("position"))
    data: dict[str, object] = {
        "name": study.name,
        "datasets": [d.pk for d in study.datasets.all()],
        "subjects": [s.pk for s in study.subjects.all()],
        "target_judgments_per_pair": study.target_judgments_per_pair,
        "guidelines": study.guidelines,
        "consent_text": study.consent_text,
        "onboarding_questions": list(study.onboarding_questions),
        "status": study.status,
        "pairs-TOTAL_FORMS": len(pairs),
        "pairs-INITIAL_FORMS": len(pairs),
        "pairs-MIN_NUM_FORMS": 0,
        "pairs-MAX_NUM_FORMS": 1000,
    }
    for k, pair in enumerate(pairs):
        data[f"pairs-{k}-id"] = pair.pk
        data[f"pairs-{k}-study"] = study.pk
        data[f"pairs-{k}-DELETE"] = "on"
    data.update(changes)
    return data


def test_before_any_judgment_the_admin_changes_the_scope_and_draws_the_pairs_again(admin_client, two_datasets):
    _catalog, other, study = two_datasets
    page = admin_client.get(change_url(study))
    assert page.status_code == 200
    assert SCOPE_OPEN in page.content.decode()
    chemistry = Subject.objects.get(name="Chemistry")
    before = scope_state(study)

    response = admin_client.post(change_url(study), study_post(study, datasets=[other.dataset.pk],
                                                               subjects=[chemistry.pk]))

    assert response.status_code == 302
    after = scope_state(study)
    assert after["datasets"] == [other.dataset.pk]
    assert after["subjects"] == [chemistry.pk]
    assert after["n_pairs"] == 6
    assert {p[0] for p in after["pairs"]}.isdisjoint({p[0] for p in before["pairs"]})  # drawn again
    questions = {q for p in after["pairs"] for q in p[2:4]}
    assert set(Question.objects.filter(pk__in=questions).values_list("dataset_id", "subject_id")) == {
        (other.dataset.pk, chemistry.pk)}


def test_before_any_judgment_an_impossible_scope_is_refused_on_the_form(admin_client, two_datasets):
    catalog, other, study = two_datasets
    before = scope_state(study)
    # Physics belongs to the first dataset only: no question of the new one.
    physics = Subject.objects.get(name="Physics")
    response = admin_client.post(change_url(study), study_post(study, datasets=[other.dataset.pk],
                                                               subjects=[physics.pk]))
    assert response.status_code == 400  # the form again, refused, with the reason
    assert f"subjects [&#x27;Physics&#x27;] have no question of the chosen datasets in run {catalog.run.pk}" \
        in response.content.decode()
    assert scope_state(study) == before


def test_a_judged_study_shows_its_scope_read_only_with_the_reason(admin_client, two_datasets):
    _catalog, _other, study = two_datasets
    judge_first_pair(study, choice="skip")
    page = admin_client.get(change_url(study)).content.decode()
    reason = ERR_SCOPE_FROZEN.format(name="Pilot", study_id=study.pk, n_judgments=1).replace("'", "&#x27;")
    assert reason in page
    assert 'name="datasets"' not in page and 'name="subjects"' not in page
    assert SCOPE_OPEN not in page


@pytest.mark.parametrize("change", ["datasets", "subjects"])
def test_a_judged_study_refuses_a_posted_scope_change_and_keeps_everything(admin_client, two_datasets, change):
    catalog, other, study = two_datasets
    judge_first_pair(study)
    before = scope_state(study)
    posted = {
        "datasets": {"datasets": [catalog.dataset.pk, other.dataset.pk]},
        "subjects": {"subjects": [catalog.subjects[0].pk]},
    }[change]

    response = admin_client.post(change_url(study), study_post(study, name="Pilot renamed", **posted))

    assert response.status_code == 302
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert ERR_SCOPE_FROZEN.format(name="Pilot renamed", study_id=study.pk, n_judgments=1) in shown
    assert scope_state(study) == before  # datasets, subjects, pairs: all as they were
    assert Study.objects.get(pk=study.pk).name == "Pilot renamed"  # other fields still save


def test_pairs_are_never_deleted_or_added_through_the_inline(admin_client, two_datasets):
    catalog, _other, study = two_datasets
    before = scope_state(study)
    data = study_post(study)
    data.update({"pairs-TOTAL_FORMS": 7, "pairs-6-question_a": catalog.questions[0].pk,
                 "pairs-6-question_b": catalog.questions[1].pk, "pairs-6-position": 6, "pairs-6-study": study.pk})
    response = admin_client.post(change_url(study), data)
    assert response.status_code == 302
    assert scope_state(study) == before
    judge_first_pair(study)
    before = scope_state(study)
    response = admin_client.post(change_url(study), study_post(study))
    assert response.status_code == 302
    assert scope_state(study) == before


# --- scoring results ------------------------------------------------------------


def result_values(run: ScoringRun) -> dict[str, object]:
    return {
        "run": list(ScoringRun.objects.filter(pk=run.pk).values_list("status", "params", "error", "finished_at")),
        "questions": list(QuestionResult.objects.filter(run=run).order_by("pk").values_list(
            "pk", "question_id", "kept", "n_observed", "scores")),
        "models": list(ModelResult.objects.filter(run=run).order_by("pk").values_list(
            "pk", "model_id", "n_observed", "scores")),
        "methods": list(MethodResult.objects.filter(run=run).order_by("pk").values_list(
            "pk", "method", "n_iter", "converged", "residual")),
    }


@pytest.fixture
def scored():
    catalog = make_catalog(per_subject=3)
    MethodResult.objects.create(run=catalog.run, method="eip", n_iter=17, converged=True, residual=3.1e-9,
                                duration_s=0.25)
    return catalog.run


@pytest.mark.parametrize("model", ["scoringrun", "questionresult", "modelresult"])
def test_result_pages_are_read_only(admin_client, scored, model):
    run = scored
    row = {
        "scoringrun": run,
        "questionresult": QuestionResult.objects.filter(run=run).first(),
        "modelresult": ModelResult.objects.filter(run=run).first(),
    }[model]
    before = result_values(run)
    url = reverse(f"admin:annotate_{model}_change", args=[row.pk])

    page = admin_client.get(url)
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()

    forged = {"kept": "", "n_observed": 0, "scores": '{"eip": 0.5}', "status": "failed", "error": "forged",
              "methods-TOTAL_FORMS": 1, "methods-INITIAL_FORMS": 1, "methods-0-id": "", "methods-0-DELETE": "on"}
    assert admin_client.post(url, forged).status_code == 403
    assert admin_client.get(reverse(f"admin:annotate_{model}_add")).status_code == 403
    assert admin_client.post(reverse(f"admin:annotate_{model}_add"), forged).status_code == 403
    assert result_values(run) == before


@pytest.mark.parametrize("model", ["questionresult", "modelresult"])
def test_a_single_result_cannot_be_deleted(admin_client, scored, model):
    run = scored
    row = {"questionresult": QuestionResult, "modelresult": ModelResult}[model].objects.filter(run=run).first()
    before = result_values(run)
    assert admin_client.post(reverse(f"admin:annotate_{model}_delete", args=[row.pk]), {"post": "yes"}).status_code \
        == 403
    listing = reverse(f"admin:annotate_{model}_changelist")
    response = admin_client.post(listing, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert response.status_code in (200, 302)
    assert result_values(run) == before


@pytest.mark.parametrize("way", ["delete page", "delete selected"])
def test_deleting_the_whole_run_is_the_way_to_drop_its_results(admin_client, scored, way):
    run = scored
    assert QuestionResult.objects.filter(run=run).count() == 6
    if way == "delete page":
        response = admin_client.post(reverse("admin:annotate_scoringrun_delete", args=[run.pk]), {"post": "yes"})
    else:
        response = admin_client.post(reverse("admin:annotate_scoringrun_changelist"),
                                     {"action": "delete_selected", "_selected_action": [run.pk], "post": "yes"})
    assert response.status_code == 302
    assert not ScoringRun.objects.filter(pk=run.pk).exists()
    assert QuestionResult.objects.filter(run_id=run.pk).count() == 0
    assert ModelResult.objects.filter(run_id=run.pk).count() == 0
    assert MethodResult.objects.filter(run_id=run.pk).count() == 0


# --- a report names the run it used ---------------------------------------------


@pytest.mark.parametrize("own_run", [True, False])
def test_the_report_page_json_and_codebook_name_the_run_they_used(admin_client, own_run):
    catalog = make_catalog(per_subject=5)
    study = make_study(catalog, n_pairs=6, seed=3)
    judge_first_pair(study, username="ada")
    judge_first_pair(study, username="bob")
    run = catalog.run
    query = ""
    if not own_run:  # a later run over the same responses, with the same results
        run = ScoringRun.objects.create(response_set=catalog.response_set, status="done", progress=1.0,
                                        finished_at=catalog.run.finished_at)
        QuestionResult.objects.bulk_create(
            QuestionResult(run=run, question_id=q.question_id, kept=q.kept, n_observed=q.n_observed, scores=q.scores)
            for q in QuestionResult.objects.filter(run=catalog.run)
        )
        query = f"?run={run.pk}"
    label = f"scoring run {run.pk} ({catalog.response_set})"  # e.g. "responses-4 v1"

    page = admin_client.get(reverse("annotate:study_report", args=[study.pk]) + query)
    assert page.status_code == 200
    header = " ".join(page.content.decode().split())
    assert label + ("" if own_run else ", not the run the pairs came from") in header

    document = admin_client.get(reverse("annotate:study_report_json", args=[study.pk]) + query).json()
    assert document["run"]["id"] == run.pk
    assert document["run"]["is_study_run"] is own_run
    assert document["study"]["scoring_run"] == catalog.run.pk

    bundle = admin_client.get(reverse("annotate:study_report_zip", args=[study.pk]) + query)
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content) if bundle.streaming else bundle.content)) as z:
        codebook = z.read("codebook.md").decode()
    assert f"- scoring run: {run.pk} (response set {catalog.response_set}" in codebook
    assert ("; not the run the pairs came from" in codebook) is not own_run
