"""The large-delete confirm flow under attack: a forged confirm without the
CSRF token, a double submit, and someone who may not delete (a researcher, a
staff member without the delete permission) change nothing or queue one
deletion only."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client, override_settings
from django.urls import reverse

from annotate.models import ResponseSet
from tests.annotate.factories import make_catalog, make_researcher

pytestmark = pytest.mark.django_db
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.fixture
def response_set() -> ResponseSet:
    return make_catalog(per_subject=3).response_set


def delete_url(response_set: ResponseSet) -> str:
    return reverse("admin:annotate_responseset_delete", args=[response_set.pk])


def queued_deletions() -> int:
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.count()


def test_a_confirm_without_the_csrf_token_is_refused(response_set):
    client = Client(enforce_csrf_checks=True)
    client.force_login(get_user_model().objects.create_superuser("root", password=None))
    with override_settings(TASKS=DATABASE):
        response = client.post(delete_url(response_set), {"confirm_delete": "yes"})
    assert response.status_code == 403
    assert queued_deletions() == 0
    assert ResponseSet.objects.get(pk=response_set.pk).status == response_set.status


def test_a_double_submit_queues_one_deletion(response_set):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password=None))
    with override_settings(TASKS=DATABASE):
        first = client.post(delete_url(response_set), {"confirm_delete": "yes"})
        second = client.post(delete_url(response_set), {"confirm_delete": "yes"})
    assert first.status_code == 302 and second.status_code in (302, 404)
    assert queued_deletions() == 1


def test_a_finished_or_failed_deletion_does_not_block_a_new_request_and_other_sets_are_their_own(response_set):
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    from annotate.catalog.services.deletion import response_set_delete_request

    other = ResponseSet.objects.create(name="other", file_name="o.csv", checksum="o" * 64, file_format="wide")
    with override_settings(TASKS=DATABASE):
        response_set_delete_request(response_sets=[response_set])
        response_set_delete_request(response_sets=[response_set, other])  # the first set's task is still queued
        assert sorted(DBTaskResult.objects.values_list("args_kwargs__args", flat=True)) == sorted(
            [[response_set.pk], [other.pk]])
        DBTaskResult.objects.update(status=TaskResultStatus.FAILED)  # a worker died: the reaper failed them
        response_set_delete_request(response_sets=[response_set])
    assert queued_deletions() == 3


@pytest.mark.parametrize("who", ["researcher", "staff_without_delete"])
def test_someone_who_may_not_delete_cannot_confirm(response_set, who):
    if who == "researcher":
        user = make_researcher("rita")
    else:
        user = get_user_model().objects.create_user("stan", is_staff=True)
        user.user_permissions.add(Permission.objects.get(codename="view_responseset"))
    client = Client()
    client.force_login(user)
    with override_settings(TASKS=DATABASE):
        response = client.post(delete_url(response_set), {"confirm_delete": "yes"})
    assert response.status_code in (302, 403)  # the admin's login page, or forbidden
    if response.status_code == 302:
        assert "/login/" in response.url
    assert queued_deletions() == 0
    assert ResponseSet.objects.filter(pk=response_set.pk).exists()
