"""The evaluator flow's first steps (issue 14): the consent step on the
invitation link, a closed study's link, and a pair with a blank side.

Cast: a visitor with the link (anonymous ``Client``), ``ada`` an evaluator.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import ConsentDecline, Judgment, Participation, Question, StudyStatus
from annotate.studies.selectors.study_monitor import study_monitor
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.studies import study_set_status
from annotate.studies.views.judging import MSG_CONSENT_MISSING, MSG_EMPTY_QUESTION
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=4), n_pairs=8, seed=3)


def join_url(invitation) -> str:
    return reverse("annotate:study_join", kwargs={"token": invitation.token})


def test_the_invitation_shows_the_studys_consent_text_rendered_from_markdown(study):
    study.consent_text = "We keep **your answers** for ten years.\n\n- point one"
    study.save()
    page = Client().get(join_url(invitation_create(study=study))).content.decode()
    assert "We keep <strong>your answers</strong> for ten years." in page
    assert "<li>point one</li>" in page
    assert 'name="consent" value="yes"' in page and 'name="consent" value="no"' in page


def test_declining_stores_the_decline_and_nothing_else(study):
    invitation = invitation_create(study=study)
    users_before = get_user_model().objects.count()
    client = Client()
    response = client.post(join_url(invitation), {"consent": "no"})
    assert response.status_code == 302
    assert response.url == reverse("annotate:study_join_declined", kwargs={"token": invitation.token})
    decline = ConsentDecline.objects.get()
    assert (decline.study_id, decline.invitation_id) == (study.pk, invitation.pk)
    assert Participation.objects.count() == 0
    assert get_user_model().objects.count() == users_before
    assert "sessionid" not in client.cookies and "eip_evaluator" not in client.cookies
    page = client.get(response.url)
    assert page.status_code == 200 and "Nothing about you was stored" in page.content.decode()


def test_the_manage_page_counts_the_declines(study):
    invitation = invitation_create(study=study)
    for _ in range(2):  # two visitors decline, one agrees: 2 declines, whatever else happens
        Client().post(join_url(invitation), {"consent": "no"})
    Client().post(join_url(invitation), {"consent": "yes"})
    assert study_monitor(study=study).n_consent_declines == 2
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert '<dt>Declined consent</dt><dd id="live-consent-declines">2</dd>' in page


def test_the_guidelines_are_rendered_from_markdown_with_math(study):
    study.guidelines = "Call the **harder** one.\n\n- think of $x^2$\n\n<script>alert(1)</script>"
    study.save()
    ada = make_evaluator(study, "ada")  # onboarded; the page stays reachable from judging
    client = Client()
    client.force_login(ada.user)
    page = client.get(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk})).content.decode()
    guidelines = page.split('<div class="guidelines">', 1)[1].split("</div>", 1)[0]
    assert "Call the <strong>harder</strong> one." in guidelines and "<li>" in guidelines
    assert '<span class="math math-inline">x^2</span>' in guidelines and "katex.min.js" in page
    assert "<script>" not in guidelines and "**" not in guidelines


def test_a_post_without_a_decision_joins_nobody(study):
    invitation = invitation_create(study=study)
    response = Client().post(join_url(invitation))
    assert response.status_code == 400
    assert MSG_CONSENT_MISSING in response.content.decode()
    assert Participation.objects.count() == 0 and ConsentDecline.objects.count() == 0


def test_agreeing_records_the_time_of_consent(study):
    invitation = invitation_create(study=study)
    before = timezone.now()
    response = Client().post(join_url(invitation), {"consent": "yes"})
    assert response.status_code == 302
    participation = Participation.objects.get()
    assert before <= participation.consented_at <= timezone.now()
    assert ConsentDecline.objects.count() == 0


def test_a_closed_studys_link_says_closed_before_anything_else(study):
    invitation = invitation_create(study=study)
    study_set_status(study=study, status=StudyStatus.CLOSED)
    client = Client()
    response = client.get(join_url(invitation))
    body = response.content.decode()
    assert response.status_code == 200
    assert "This study is closed" in body
    assert 'name="consent"' not in body  # no consent text, no login, no onboarding
    assert "sessionid" not in client.cookies
    assert client.post(join_url(invitation), {"consent": "no"}).status_code == 200
    assert ConsentDecline.objects.count() == 0 and Participation.objects.count() == 0


def test_a_returning_evaluator_of_a_closed_study_is_told_it_is_closed_at_the_link(study):
    invitation = invitation_create(study=study)
    client = Client()
    client.post(join_url(invitation), {"consent": "yes"})
    study_set_status(study=study, status=StudyStatus.CLOSED)
    response = client.get(join_url(invitation), follow=True)  # to their own closed page, with their progress
    assert response.status_code == 200 and "This study is closed" in response.content.decode()


def test_the_judging_page_refuses_a_pair_with_an_empty_side(study):
    ada = make_evaluator(study, "ada")
    client = Client()
    client.force_login(ada.user)
    Question.objects.filter(pk__in=study.pairs.values("question_a")).update(text="  \n")
    response = client.get(reverse("annotate:study_judge", kwargs={"study_id": study.pk}))
    body = response.content.decode()
    assert response.status_code == 409
    assert MSG_EMPTY_QUESTION in body
    assert 'name="choice"' not in body
    assert Judgment.objects.count() == 0
