"""Every admin page that may add, change or delete does so through a service.

The architecture test reads the admin modules and refuses a write written in
them; this test asks every registered ModelAdmin of the app, as a superuser
would meet it, which writes it permits, and checks that Django's own doors
for those writes (``save_model``, ``save_related``, ``delete_model``,
``delete_queryset``) are replaced by the app's code. Then it edits and deletes
a few entries through the admin pages and sees the services called.
"""
from __future__ import annotations

from unittest import mock

import pytest
from django.contrib import admin
from django.db.models import ProtectedError
from django.test import RequestFactory
from django.urls import reverse

from annotate.models import ApiToken, Dataset, LanguageModel
from tests.annotate.factories import make_catalog

pytestmark = pytest.mark.django_db


def _doors(model_admin, request) -> list[str]:
    doors = []
    if model_admin.has_add_permission(request) or model_admin.has_change_permission(request):
        doors.append("save_model")
        form = model_admin.get_form(request)
        if form._meta.model._meta.many_to_many or any(
                inline.has_add_permission(request, None) or inline.has_change_permission(request)
                for inline in model_admin.get_inline_instances(request)):
            doors.append("save_related")
    if model_admin.has_delete_permission(request):
        doors += ["delete_model", "delete_queryset"]
    return doors


def _owner(cls: type, name: str) -> str:
    return next(k.__module__ for k in cls.__mro__ if name in vars(k))


def test_every_write_an_annotate_admin_permits_is_replaced_by_the_apps_code(admin_user):
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    checked, not_ours = [], []
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label != "annotate":
            continue
        for door in _doors(model_admin, request):
            checked.append((model.__name__, door))
            if not _owner(type(model_admin), door).startswith("annotate."):
                not_ours.append(f"{type(model_admin).__name__}.{door}")
    assert not_ours == []
    # the walk met the admins that do write (a renamed registry must not silence the test)
    assert {("Dataset", "save_model"), ("Question", "delete_queryset"), ("Study", "save_related"),
            ("ResponseSet", "delete_model"), ("ApiToken", "save_model")} <= set(checked)


def test_a_django_door_left_open_is_found(admin_user):
    class Plain(admin.ModelAdmin):
        pass

    request = RequestFactory().get("/admin/")
    request.user = admin_user
    doors = _doors(Plain(Dataset, admin.site), request)
    assert doors == ["save_model", "delete_model", "delete_queryset"]
    assert {_owner(Plain, d) for d in doors} == {"django.contrib.admin.options"}


def test_editing_a_dataset_in_the_admin_calls_the_catalog_service(admin_client):
    make_catalog(per_subject=2)
    dataset = Dataset.objects.order_by("pk").first()
    url = reverse("admin:annotate_dataset_change", args=[dataset.pk])
    from annotate.catalog.admin.catalog import DatasetAdmin
    from annotate.catalog.services.edits import catalog_entry_save

    spy = mock.Mock(wraps=catalog_entry_save)
    with mock.patch.object(DatasetAdmin, "save_service", staticmethod(spy)):  # looked up on the admin class
        response = admin_client.post(url, {"name": dataset.name, "description": "Edited in the admin",
                                           "text_format": dataset.text_format})
    assert response.status_code == 302, response.content.decode()[:1500]
    assert spy.call_args.kwargs["fields"] == ["description"]
    dataset.refresh_from_db()
    assert dataset.description == "Edited in the admin"


def test_a_referenced_model_is_not_deleted_and_a_lone_one_is(admin_client):
    make_catalog(per_subject=2)
    from annotate.catalog.services.edits import catalog_entry_delete

    used = LanguageModel.objects.filter(response_set_columns__isnull=False).first()
    if used is not None:
        with pytest.raises(ProtectedError):
            catalog_entry_delete(entry=used)
        assert LanguageModel.objects.filter(pk=used.pk).exists()
    lone = LanguageModel.objects.create(name="lone-model")
    response = admin_client.post(reverse("admin:annotate_languagemodel_delete", args=[lone.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not LanguageModel.objects.filter(pk=lone.pk).exists()


def test_renaming_an_api_token_in_the_admin_goes_through_the_token_service(admin_client, admin_user):
    from annotate.api.admin import ApiTokenAdmin
    from annotate.api.services import api_token_create, api_token_save

    token, _ = api_token_create(user=admin_user, name="script")
    url = reverse("admin:annotate_apitoken_change", args=[token.pk])
    spy = mock.Mock(wraps=api_token_save)
    with mock.patch.object(ApiTokenAdmin, "save_service", staticmethod(spy)):
        response = admin_client.post(url, {"name": "nightly"})
    assert response.status_code == 302, response.content.decode()[:1500]
    assert spy.call_args.kwargs["fields"] == ["name"]
    token.refresh_from_db()
    assert token.name == "nightly" and ApiToken.objects.count() == 1


def test_an_invitation_added_in_the_admin_goes_through_the_study_service(admin_client):
    from annotate.models import Invitation
    from annotate.studies.admin.studies import InvitationAdmin
    from annotate.studies.services.participation import invitation_save
    from tests.annotate.factories import make_study

    study = make_study(make_catalog(per_subject=4), n_pairs=3, seed=1, name="Pilot")
    spy = mock.Mock(wraps=invitation_save)
    with mock.patch.object(InvitationAdmin, "save_service", staticmethod(spy)):
        response = admin_client.post(reverse("admin:annotate_invitation_add"),
                                     {"study": study.pk, "note": "  lab group A  "})
    assert response.status_code == 302, response.content.decode()[:1500]
    assert spy.call_args.kwargs["fields"] is None  # a new entry
    invitation = Invitation.objects.get(study=study)
    assert invitation.note == "lab group A" and len(invitation.token) >= 40


def test_a_participation_is_never_deleted_through_the_admin(admin_user):
    from django.core.exceptions import PermissionDenied

    from annotate.models import Participation
    from annotate.studies.admin.studies import ParticipationAdmin

    model_admin = ParticipationAdmin(Participation, admin.site)
    request = RequestFactory().post("/admin/")
    request.user = admin_user
    with pytest.raises(PermissionDenied):
        model_admin.delete_queryset(request, Participation.objects.none())
