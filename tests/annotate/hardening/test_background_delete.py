"""Deleting a response set: a confirm page with counts only, deleted by the task worker, refused while a
study uses its runs (issue 13)."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.deletion import ProtectedError
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.text import capfirst

from annotate.catalog.admin.deletion import DELETE_QUEUED_MESSAGE
from annotate.catalog.services.deletion import USED_BY_STUDIES, response_set_delete, response_set_delete_request
from annotate.models import AnalysisRun, LanguageModel, MethodResult, Question, QuestionResult, ResponseSet, ScoringRun
from tests.annotate.factories import make_catalog, make_study, n_stored_responses

pytestmark = pytest.mark.django_db
IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.fixture
def admin_client():
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password=None))
    return client


@pytest.fixture
def catalog():
    # 2 subjects x 5 questions, 3 models: 30 responses; one done scoring run with 10 question results
    return make_catalog(per_subject=5)


def test_the_delete_page_shows_counts_only_and_the_worker_deletes(admin_client, catalog):
    rs = catalog.response_set
    ResponseSet.objects.filter(pk=rs.pk).update(n_responses=30)  # make_catalog leaves it 0
    url = reverse("admin:annotate_responseset_delete", args=[rs.pk])
    page = admin_client.get(url).content.decode()
    # counts: 10 questions, 3 models, 30 responses, 1 scoring run, 0 analysis runs; no object list
    assert f"<td>{rs}</td><td>10</td><td>3</td>\n    <td>30</td><td>1</td><td>0</td>" in page
    assert "Question 0-0" not in page and "m1/" not in page
    with override_settings(TASKS=IMMEDIATE):
        response = admin_client.post(url, {"confirm_delete": "yes"}, follow=True)
    assert DELETE_QUEUED_MESSAGE.format(sets=str(rs), responses="30 responses") in response.content.decode()
    assert not ResponseSet.objects.filter(pk=rs.pk).exists()
    assert (n_stored_responses(), ScoringRun.objects.count(), QuestionResult.objects.count()) == (0, 0, 0)
    # the catalog stays
    assert (Question.objects.count(), LanguageModel.objects.count()) == (10, 3)


def test_with_the_database_queue_the_set_waits_for_the_worker(admin_client, catalog):
    from django_tasks_db.models import DBTaskResult

    url = reverse("admin:annotate_responseset_delete", args=[catalog.response_set.pk])
    with override_settings(TASKS=DATABASE):
        admin_client.post(url, {"confirm_delete": "yes"})
    assert ResponseSet.objects.filter(pk=catalog.response_set.pk).exists()
    task = DBTaskResult.objects.get()
    assert task.task_path == "annotate.catalog.tasks.delete_response_set" and task.args_kwargs["args"] == [
        catalog.response_set.pk]


def test_the_action_replaces_delete_selected_and_confirms_with_totals(admin_client, catalog):
    other = make_catalog(per_subject=2)
    changelist = reverse("admin:annotate_responseset_changelist")
    page = admin_client.get(changelist).content.decode()
    assert 'value="delete_in_background"' in page and 'value="delete_selected"' not in page
    selected = [catalog.response_set.pk, other.response_set.pk]
    confirm = admin_client.post(changelist, {"action": "delete_in_background", "_selected_action": selected})
    text = confirm.content.decode()
    # totals: 10 + 4 questions, 3 + 3 models, 1 + 1 scoring runs
    assert "<th>total</th><td>14</td><td>6</td>" in text and "<td>2</td><td>0</td></tr>\n  </tfoot>" in text
    with override_settings(TASKS=IMMEDIATE):
        admin_client.post(changelist, {"action": "delete_in_background", "_selected_action": selected,
                                       "confirm_delete": "yes"})
    assert ResponseSet.objects.count() == 0 and n_stored_responses() == 0


def test_a_set_whose_run_a_study_uses_is_refused_with_the_study_named(admin_client, catalog):
    make_study(catalog, name="Pilot")
    url = reverse("admin:annotate_responseset_delete", args=[catalog.response_set.pk])
    message = USED_BY_STUDIES.format(response_set=catalog.response_set, studies="Pilot")
    assert message in admin_client.get(url).content.decode()
    with override_settings(TASKS=IMMEDIATE):
        response = admin_client.post(url, {"confirm_delete": "yes"}, follow=True)
    assert capfirst(message) in response.content.decode()  # the admin's message list capitalises
    assert ResponseSet.objects.filter(pk=catalog.response_set.pk).exists() and n_stored_responses() == 30
    with pytest.raises(ValueError, match="the studies Pilot use its scoring runs"):
        response_set_delete_request(response_sets=[catalog.response_set])
    with pytest.raises(ValueError, match="the studies Pilot use its scoring runs"):
        response_set_delete(response_set_id=catalog.response_set.pk)
    with pytest.raises(ProtectedError):  # what the check spares the user
        catalog.response_set.delete()


def test_responses_go_in_batches_and_the_counts_are_exact(catalog):
    other = make_catalog(per_subject=2)  # 12 responses of another set stay untouched
    AnalysisRun.objects.create(kind="pools", response_set=catalog.response_set, params_key="k" * 64)
    with CaptureQueriesContext(connection) as queries:
        outcome = response_set_delete(response_set_id=catalog.response_set.pk, batch=7)
    bounded = [q["sql"] for q in queries if q["sql"].startswith('DELETE FROM "annotate_responsesetquestion"')
               and '"annotate_responsesetquestion"."id" <=' in q["sql"]]
    assert len(bounded) == 1  # 10 question rows (30 responses) in batches of 7: one bounded by a highest id, then 3
    assert (outcome.response_set, outcome.n_responses) == (str(catalog.response_set), 30)
    assert n_stored_responses(other.response_set) == 12
    assert n_stored_responses() == 12
    assert AnalysisRun.objects.count() == 0 and MethodResult.objects.count() == 0
    assert ScoringRun.objects.filter(response_set=other.response_set).count() == 1


def test_deleting_a_set_twice_says_it_is_gone(catalog):
    response_set_delete(response_set_id=catalog.response_set.pk)
    with pytest.raises(ValueError, match=f"no response set with id {catalog.response_set.pk}"):
        response_set_delete(response_set_id=catalog.response_set.pk)
