"""Deleting an evaluator's personal data while keeping their judgments anonymous.

Cast: study "Main" (6 pairs) with evaluators ``evaluator-ada1`` (judged 4
pairs: 3 votes and a skip, came through an invitation with a note naming her)
and ``evaluator-bob2`` (judged 2); ada is also in study "Second"; ``owner``
(staff) and ``rita`` (researcher).
"""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.db import SessionStore
from django.core.management import CommandError, call_command
from django.test import Client, RequestFactory
from django.urls import reverse

from annotate.models import Judgment, Participation
from annotate.studies.admin.privacy import delete_evaluator_personal_data
from annotate.studies.admin.studies import ParticipationAdmin
from annotate.studies.selectors.study_monitor import study_monitor
from annotate.studies.services.participation import ensure_role_groups, invitation_create
from annotate.studies.services.privacy import evaluator_delete_personal_data
from annotate.studies.services.transfer_export import study_export
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast():
    catalog = make_catalog(per_subject=4)
    study = make_study(catalog, n_pairs=6, name="Main")
    second = make_study(catalog, n_pairs=2, name="Second")
    ada = make_evaluator(study, "evaluator-ada1")
    ada.invitation = invitation_create(study=study, note="sent to ada.lovelace@example.org")
    ada.save()
    ada_second = Participation.objects.create(study=second, user=ada.user, field_of_study="arts",
                                              education_level="phd")
    bob = make_evaluator(study, "evaluator-bob2")
    judge(ada, ["left", "right", "skip", "left"])
    judge(bob, ["right", "right"])
    researchers, _ = ensure_role_groups()
    rita = make_user("rita")
    rita.groups.add(researchers)
    return study, second, ada, ada_second, bob, make_user("owner", staff=True), rita


def test_the_command_deletes_the_account_and_background_and_keeps_the_judgments(cast):
    _study, _, ada, ada_second, _, _, _ = cast
    user_id = ada.user.pk
    judgments = sorted(Judgment.objects.filter(participation=ada).values_list("pair_id", "choice", "seconds"))
    assert len(judgments) == 4

    call_command("delete_evaluator_data", pseudonym="evaluator-ada1")

    assert not get_user_model().objects.filter(pk=user_id).exists()
    assert not get_user_model().objects.filter(username="evaluator-ada1").exists()
    ada.refresh_from_db()
    placeholder = ada.user
    assert placeholder.username == "deleted-evaluator-1"
    assert not placeholder.is_active and not placeholder.has_usable_password()
    assert placeholder.email == "" and placeholder.groups.count() == 0
    assert (ada.field_of_study, ada.education_level, ada.invitation_id) == ("", "", None)
    assert ada.qualified_subjects.count() == 0
    assert sorted(Judgment.objects.filter(participation=ada).values_list("pair_id", "choice", "seconds")) == judgments
    ada_second.refresh_from_db()  # both of ada's studies now belong to the same placeholder
    assert ada_second.user_id == placeholder.pk and ada_second.field_of_study == ""


def test_reports_still_count_the_anonymous_judgments(cast):
    study, _, ada, _, _, _, _ = cast
    before = study_monitor(study=study)
    evaluator_delete_personal_data(user=ada.user)
    after = study_monitor(study=study)
    assert (after.n_votes, after.n_skips) == (before.n_votes, before.n_skips) == (5, 1)
    rows = {e.username: (e.judged, e.skipped) for e in after.evaluators}
    assert rows == {"deleted-evaluator-1": (3, 1), "evaluator-bob2": (2, 0)}
    assert [(p.votes_a, p.votes_b) for p in after.pairs] == [(p.votes_a, p.votes_b) for p in before.pairs]


def test_exports_show_the_placeholder_and_no_background(cast):
    study, _, ada, _, _, _, _ = cast
    evaluator_delete_personal_data(user=ada.user)
    evaluators = {e["pseudonym"]: e for e in study_export(study=study)["evaluators"]}
    assert sorted(evaluators) == ["deleted-evaluator-1", "evaluator-bob2"]
    anonymous = evaluators["deleted-evaluator-1"]
    assert (anonymous["field_of_study"], anonymous["education_level"], anonymous["qualified_subjects"]) == ("", "", [])
    assert len(anonymous["judgments"]) == 4


def test_each_deleted_evaluator_gets_the_next_number(cast):
    _, _, ada, _, bob, _, _ = cast
    assert evaluator_delete_personal_data(user=ada.user).replacement == "deleted-evaluator-1"
    result = evaluator_delete_personal_data(user=bob.user)
    assert (result.pseudonym, result.replacement, result.participations, result.judgments) == (
        "evaluator-bob2", "deleted-evaluator-2", 1, 2)


def test_the_deleted_evaluator_is_logged_out_everywhere(cast):
    study, _, ada, _, _, _, _ = cast
    client = Client()
    client.force_login(ada.user)
    page = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    assert client.get(page).status_code == 200
    evaluator_delete_personal_data(user=ada.user)
    response = client.get(page)
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.parametrize("who", ["owner", "rita"])
def test_it_refuses_staff_and_researchers(cast, who):
    with pytest.raises(CommandError, match=f"user '{who}' is staff or a researcher; only evaluators' data"):
        call_command("delete_evaluator_data", pseudonym=who)
    assert get_user_model().objects.filter(username=who).exists()


def test_it_refuses_an_unknown_pseudonym_and_a_placeholder(cast):
    _, _, ada, _, _, _, _ = cast
    with pytest.raises(CommandError, match="no evaluator with the pseudonym 'evaluator-zz99'"):
        call_command("delete_evaluator_data", pseudonym="evaluator-zz99")
    evaluator_delete_personal_data(user=ada.user)
    with pytest.raises(CommandError, match="'deleted-evaluator-1' is already an anonymous placeholder"):
        call_command("delete_evaluator_data", pseudonym="deleted-evaluator-1")


def test_the_admin_action_deletes_each_selected_evaluator_once(cast):
    study, _, ada, _, bob, owner, _ = cast
    request = RequestFactory().post("/admin/annotate/participation/")
    request.user = owner
    request.session = SessionStore()
    request._messages = FallbackStorage(request)
    model_admin = ParticipationAdmin(Participation, admin.site)
    # ada is selected twice (both her studies) and bob once
    delete_evaluator_personal_data(model_admin, request, Participation.objects.filter(pk__in=[ada.pk, bob.pk]) |
                                   Participation.objects.filter(user=ada.user))
    texts = sorted(str(m) for m in request._messages)
    assert texts == [
        "Deleted the personal data of evaluator-ada1; 4 judgments kept as deleted-evaluator-1.",
        "Deleted the personal data of evaluator-bob2; 2 judgments kept as deleted-evaluator-2.",
    ]
    assert Judgment.objects.filter(pair__study=study).count() == 6


def test_the_admin_offers_the_action_on_participations_and_registers_tokens_and_analysis_runs(cast):
    from annotate.models import AnalysisRun, ApiToken

    *_, owner, _ = cast
    owner.is_superuser = True
    owner.save()
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("admin:annotate_participation_changelist"))
    assert page.status_code == 200
    assert b"delete_evaluator_personal_data" in page.content
    assert admin.site.is_registered(ApiToken) and admin.site.is_registered(AnalysisRun)
