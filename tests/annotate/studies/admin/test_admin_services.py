"""The admin writes a study only through the study services.

Closing a study on its admin change form stamps ``closed_at`` exactly as the
manage page's close does, reopening clears it; a study with evaluators is never
deleted; a participation is viewed, never edited or deleted, in the admin.
"""
from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from annotate.models import Participation, Study, StudyStatus
from annotate.studies.services.studies import ERR_STUDY_HAS_EVALUATORS
from tests.annotate.factories import make_catalog, make_evaluator, make_study
from tests.annotate.studies.admin.test_admin_frozen import admin_client, change_url, study_post  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=5), n_pairs=6, seed=3, name="Pilot")


def test_closing_a_study_in_the_admin_sets_closed_at_like_the_manage_page(admin_client, study):  # noqa: F811
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.OPEN)
    study.refresh_from_db()
    before = timezone.now()
    response = admin_client.post(change_url(study), study_post(study, status=StudyStatus.CLOSED))
    assert response.status_code == 302, response.content.decode()[:2000]
    study.refresh_from_db()
    assert study.status == StudyStatus.CLOSED
    assert study.closed_at is not None and before <= study.closed_at <= timezone.now()

    response = admin_client.post(change_url(study), study_post(study, status=StudyStatus.OPEN))
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.status, study.closed_at) == (StudyStatus.OPEN, None)


def test_an_admin_edit_that_leaves_the_status_keeps_closed_at(admin_client, study):  # noqa: F811
    stamp = timezone.now() - dt.timedelta(days=2)
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.CLOSED, closed_at=stamp)
    study.refresh_from_db()
    response = admin_client.post(change_url(study), study_post(study, name="Pilot, renamed"))
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.name, study.status, study.closed_at) == ("Pilot, renamed", StudyStatus.CLOSED, stamp)


def test_the_admin_deletes_a_study_without_evaluators_through_the_service(admin_client, study):  # noqa: F811
    url = reverse("admin:annotate_study_delete", args=[study.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 302
    assert not Study.objects.filter(pk=study.pk).exists()


def test_the_admin_action_never_deletes_a_study_with_an_evaluator(admin_client, study):  # noqa: F811
    other = make_study(make_catalog(subjects=("Chemistry",), per_subject=5), n_pairs=3, seed=1, name="Empty")
    make_evaluator(study, "ann")
    url = reverse("admin:annotate_study_changelist")
    response = admin_client.post(url, {"action": "delete_selected", "_selected_action": [study.pk, other.pk],
                                       "post": "yes"})
    assert response.status_code in (200, 302)
    assert Study.objects.filter(pk=study.pk).exists()
    # Django's page refuses the protected study before deleting anything; the service refuses it too.
    from annotate.studies.services.studies import study_delete
    with pytest.raises(ValueError) as info:
        study_delete(study=study)
    assert str(info.value) == ERR_STUDY_HAS_EVALUATORS.format(name="Pilot", study_id=study.pk, n=1)


def test_a_participation_is_viewed_not_edited_or_deleted_in_the_admin(admin_client, study):  # noqa: F811
    participation = make_evaluator(study, "ann")
    url = reverse("admin:annotate_participation_change", args=[participation.pk])
    page = admin_client.get(url).content.decode()
    assert "Save" not in page and 'name="field_of_study"' not in page
    response = admin_client.post(url, {"field_of_study": "physics", "order_cursor": 99})
    assert response.status_code == 403
    participation.refresh_from_db()
    assert (participation.field_of_study, participation.order_cursor) == ("mathematics", 0)
    delete = admin_client.post(reverse("admin:annotate_participation_delete", args=[participation.pk]), {"post": "yes"})
    assert delete.status_code == 403 and Participation.objects.filter(pk=participation.pk).exists()
    assert admin_client.get(reverse("admin:annotate_participation_add")).status_code == 403
    changelist = admin_client.get(reverse("admin:annotate_participation_changelist")).content.decode()
    assert "delete_selected" not in changelist and "delete_evaluator_personal_data" in changelist
    assert list(get_messages(admin_client.get(url).wsgi_request)) == []
