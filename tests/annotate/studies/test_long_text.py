"""Text longer than its column is refused with an error naming the field and its
limit (nothing written, nothing cut), and a refused value is echoed shortened.

Cast: ``owner`` (staff, manages the study), ``ada`` (evaluator, not yet onboarded).
"""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotate.api.services import api_token_create, api_token_save
from annotate.core.forms import ECHO_CHARS, short_echo
from annotate.models import ApiToken, Invitation
from annotate.studies.services.participation import invitation_create, invitation_save
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_researcher, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=2), n_pairs=2, name="Main")


def test_a_note_longer_than_its_column_is_refused_on_the_manage_page(study):
    client = client_for(make_user("owner", staff=True))
    url = reverse("annotate:study_invitation_create", kwargs={"study_id": study.pk})
    response = client.post(url, {"note": "N" * 3000}, follow=True)
    page = response.content.decode()
    assert Invitation.objects.filter(study=study).count() == 0
    assert "No link made: Note (who gets this link): Ensure this value has at most 200 characters (it has 3000)." \
        in page
    client.post(url, {"note": "N" * 200})  # at the limit: kept whole
    assert Invitation.objects.get(study=study).note == "N" * 200


def test_the_services_refuse_a_long_note_or_token_name_instead_of_cutting_it(study):
    with pytest.raises(ValueError, match=r"Note: at most 200 characters \(it has 201\)"):
        invitation_create(study=study, note="n" * 201)
    invitation = invitation_create(study=study, note="  short  ")
    invitation.note = "n" * 201
    with pytest.raises(ValueError, match="at most 200 characters"):
        invitation_save(entry=invitation, fields=["note"])
    invitation.refresh_from_db()
    assert [i.note for i in Invitation.objects.all()] == ["short"]
    rita = make_researcher("rita")
    with pytest.raises(ValueError, match=r"name: at most 100 characters \(it has 101\)"):
        api_token_create(user=rita, name="t" * 101)
    assert ApiToken.objects.count() == 0
    token, _ = api_token_create(user=rita, name="t" * 100)
    token.name = "t" * 101
    with pytest.raises(ValueError, match="at most 100 characters"):
        api_token_save(entry=token, fields=["name"])
    token.refresh_from_db()
    assert token.name == "t" * 100


def test_a_tampered_onboarding_value_is_echoed_shortened(study):
    ada = make_evaluator(study, "ada", ready=False)
    client = client_for(ada.user)
    tampered = "<script>" + "x" * 5000
    page = client.post(reverse("annotate:study_onboarding", kwargs={"study_id": study.pk}),
                       {"field_of_study": tampered, "education_level": tampered}).content.decode()
    shown = "&lt;script&gt;" + "x" * (ECHO_CHARS - len("<script>")) + "…"
    assert page.count(f"Select a valid choice. {shown} is not one of the available choices.") == 2
    assert "x" * (ECHO_CHARS - len("<script>") + 1) not in page
    ada.refresh_from_db()
    assert ada.field_of_study == ""


@pytest.mark.parametrize(("value", "shown"), [("a" * 80, "a" * 80), ("a" * 81, "a" * 80 + "…"), (12, "12")])
def test_short_echo_keeps_at_most_80_characters(value, shown):
    assert short_echo(value) == shown
