"""Scoring-run requests identical to a queued or running run return that run (issue 13)."""
from __future__ import annotations

from io import StringIO

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import path, reverse

from annotate.models import RunStatus, ScoringRun
from annotate.runs.services.scoring import scoring_run_create, scoring_run_request
from tests.annotate.factories import make_catalog, make_user

pytestmark = pytest.mark.django_db
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
urlpatterns = [path("admin/", admin.site.urls)]


@pytest.fixture
def catalog():
    return make_catalog(per_subject=3)


def test_four_identical_requests_queue_one_run(catalog):
    rs, models = catalog.response_set, catalog.models
    with override_settings(TASKS=DATABASE):
        params = {"alpha": 0.85, "methods": ["eip", "accuracy"]}
        outcomes = [scoring_run_request(response_set=rs, model_ids=ids, params=params)
                    for ids in ([models[0].pk, models[1].pk], [models[1].pk, models[0].pk],
                                [models[0].pk, models[1].pk, models[0].pk], [models[0].pk, models[1].pk])]
    # defaults filled in (alpha 0.85 is the default), the subset in any order or repeated: all identical
    assert [o.created for o in outcomes] == [True, False, False, False]
    assert {o.run.pk for o in outcomes} == {outcomes[0].run.pk}
    assert ScoringRun.objects.filter(status=RunStatus.QUEUED).count() == 1


def test_a_different_parameter_subset_or_method_list_queues_its_own_run(catalog):
    rs, models = catalog.response_set, catalog.models
    with override_settings(TASKS=DATABASE):
        first = scoring_run_request(response_set=rs, params={"methods": ["eip", "accuracy"]})
        others = [
            scoring_run_request(response_set=rs, params={"methods": ["eip", "accuracy"], "alpha": 0.5}),
            scoring_run_request(response_set=rs, params={"methods": ["eip", "accuracy", "simple_rank"]}),
            scoring_run_request(response_set=rs, params={"methods": ["eip", "accuracy"]}, model_ids=[models[0].pk]),
        ]
    assert first.created and all(o.created for o in others)
    assert ScoringRun.objects.filter(status=RunStatus.QUEUED).count() == 4


def test_a_running_run_counts_and_a_finished_one_does_not(catalog):
    rs = catalog.response_set  # make_catalog's run is done: it never counts
    with override_settings(TASKS=DATABASE):
        first = scoring_run_request(response_set=rs)
        ScoringRun.objects.filter(pk=first.run.pk).update(status=RunStatus.RUNNING)
        again = scoring_run_request(response_set=rs)
        assert (again.created, again.run.pk) == (False, first.run.pk)
        ScoringRun.objects.filter(pk=first.run.pk).update(status=RunStatus.FAILED)
        third = scoring_run_request(response_set=rs)
    assert third.created and third.run.pk != first.run.pk


def test_the_results_page_says_an_identical_run_is_already_queued(catalog):
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    url = reverse("annotate:response_set_score", kwargs={"response_set_id": catalog.response_set.pk})
    with override_settings(TASKS=DATABASE):
        client.post(url)
        response = client.post(url, follow=True)
    queued = ScoringRun.objects.get(status=RunStatus.QUEUED)
    assert ScoringRun.objects.filter(status=RunStatus.QUEUED).count() == 1
    assert (f"An identical scoring run of {catalog.response_set} (run {queued.pk}) is already queued; "
            "no second run was queued.") in response.content.decode()


def test_the_api_returns_the_queued_run_for_an_identical_request(catalog):
    staff = Client()
    staff.force_login(make_user("staff", staff=True))
    body = {"response_set": catalog.response_set.pk, "params": {"methods": ["eip", "accuracy"]}}
    with override_settings(TASKS=DATABASE):
        ids = [staff.post(reverse("annotate:api_scoring_runs"), body, content_type="application/json").json()["id"]
               for _ in range(4)]
    assert len(set(ids)) == 1
    assert ScoringRun.objects.filter(status=RunStatus.QUEUED).count() == 1


@pytest.mark.urls(__name__)
def test_the_admin_action_does_not_queue_a_copy_of_a_queued_run(catalog):
    with override_settings(TASKS=DATABASE):
        queued = scoring_run_create(response_set=catalog.response_set)
        root = get_user_model().objects.create_superuser("root", password=None)
        client = Client()
        client.force_login(root)
        changelist = reverse("admin:annotate_scoringrun_changelist")
        response = client.post(changelist, {"action": "run_scoring", "_selected_action": [queued.pk]}, follow=True)
    assert ScoringRun.objects.count() == 2  # make_catalog's done run and the queued one
    assert f"Not queued again: identical run(s) [{queued.pk}] are already queued or running." in \
        response.content.decode()


def test_the_command_does_not_start_a_copy_of_a_running_run(catalog):
    methods = ["eip", "accuracy", "simple_rank"]
    running = scoring_run_create(response_set=catalog.response_set, params={"methods": methods})
    ScoringRun.objects.filter(pk=running.pk).update(status=RunStatus.RUNNING)
    out = StringIO()
    call_command("score_responses", "--response-set", catalog.response_set.name, "--methods", ",".join(methods),
                 stdout=out)
    assert out.getvalue().strip() == f"An identical scoring run (run {running.pk} on {catalog.response_set}) " \
                                     "is already running; not started again."
    assert ScoringRun.objects.count() == 2


def test_the_run_list_says_each_runs_settings_and_a_repeat_of_a_finished_run_is_named(catalog):
    from annotate.runs.selectors.settings import run_settings_text
    from annotate.runs.services.scoring import DEFAULT_PARAMS

    rs = catalog.response_set
    first = scoring_run_create(response_set=rs)
    ScoringRun.objects.filter(pk=first.pk).update(status=RunStatus.DONE)
    other = scoring_run_create(response_set=rs, params={"alpha": 0.9, "methods": ["eip", "accuracy"]},
                               model_ids=[catalog.models[0].pk, catalog.models[1].pk])
    ScoringRun.objects.filter(pk=other.pk).update(status=RunStatus.DONE)
    other.refresh_from_db()
    assert run_settings_text(params=first.params, defaults=DEFAULT_PARAMS) == "defaults"
    assert run_settings_text(params=other.params, defaults=DEFAULT_PARAMS) == (
        "damping factor α 0.9; 2 of 9 methods (EIP, Accuracy); 2 models only")
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("annotate:results")).content.decode()
    assert "Score again with the default settings" in page
    assert "damping factor α 0.9; 2 of 9 methods" in page and ">defaults<" in page
    with override_settings(TASKS=DATABASE):
        response = client.post(reverse("annotate:response_set_score", kwargs={"response_set_id": rs.pk}),
                               follow=True)
    new = ScoringRun.objects.get(status=RunStatus.QUEUED)
    assert (f"Run {first.pk} already holds the results of the same settings; run {new.pk} computes them again"
            in response.content.decode())
