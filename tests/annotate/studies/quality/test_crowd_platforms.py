"""Crowd platforms (Prolific-style): ids from the join link's query
parameters, stored with the participation and in judgments.csv, a returning
participant resumes, and the done page shows the completion code and sends
the evaluator on to the completion URL.

Cast: ``owner`` (staff); crowd participants arriving with PIDs ``pid-ada`` and
``pid-bob``.
"""
from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Participation
from annotate.studies.services.participation import (
    invitation_create,
    participation_accept_guidelines,
    participation_onboard,
)
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import make_catalog, make_study, make_user
from tests.annotate.studies.quality.helpers import answer_all

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CODE = "C1X2Y3Z4"
COMPLETION_URL = f"https://app.prolific.com/submissions/complete?cc={CODE}"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=4), n_pairs=3, name="Crowd")


def join(client: Client, token: str, query: str):
    """Open the link (GET) and press Start (the form posts back to the same URL, query included)."""
    url = reverse("annotate:study_join", kwargs={"token": token}) + query
    assert client.get(url).status_code == 200
    return client.post(url, {"consent": "yes"})


def test_prolific_ids_are_stored_with_the_participation(study):
    token = invitation_create(study=study).token
    response = join(Client(), token, "?PROLIFIC_PID=pid-ada&STUDY_ID=st-1&SESSION_ID=se-1")
    assert response.status_code == 302
    [p] = Participation.objects.filter(study=study)
    assert (p.platform_participant_id, p.platform_study_id, p.platform_session_id) == ("pid-ada", "st-1", "se-1")


def test_a_returning_participant_resumes_in_another_browser(study):
    token = invitation_create(study=study).token
    first = Client()
    join(first, token, "?PROLIFIC_PID=pid-ada&STUDY_ID=st-1&SESSION_ID=se-1")
    ada = Participation.objects.get(study=study)
    users_before = get_user_model().objects.count()

    second = Client()  # no cookie, no session: only the PID says who this is
    response = join(second, token, "?PROLIFIC_PID=pid-ada&STUDY_ID=st-1&SESSION_ID=se-2")
    assert response.status_code == 302
    assert Participation.objects.filter(study=study).count() == 1
    assert get_user_model().objects.count() == users_before
    ada.refresh_from_db()
    assert ada.platform_session_id == "se-2"  # the latest session
    assert int(second.session["_auth_user_id"]) == ada.user_id

    join(Client(), token, "?PROLIFIC_PID=pid-bob&STUDY_ID=st-1&SESSION_ID=se-3")
    assert sorted(Participation.objects.filter(study=study).values_list("platform_participant_id", flat=True)) == [
        "pid-ada", "pid-bob"]


def test_a_link_without_ids_still_works_and_stores_none(study):
    token = invitation_create(study=study).token
    join(Client(), token, "")
    [p] = Participation.objects.filter(study=study)
    assert (p.platform_participant_id, p.platform_study_id, p.platform_session_id) == ("", "", "")


def test_parameter_names_are_set_per_study(study):
    study_quality_settings_update(study=study, speeder_seconds=5, participant_param="workerId", study_param="",
                                  session_param="assignmentId", completion_code="", completion_url="")
    token = invitation_create(study=study).token
    join(Client(), token, "?workerId=W7&assignmentId=A9&PROLIFIC_PID=ignored&STUDY_ID=ignored")
    [p] = Participation.objects.filter(study=study)
    assert (p.platform_participant_id, p.platform_study_id, p.platform_session_id) == ("W7", "", "A9")


def test_the_manage_page_offers_a_prolific_link_with_a_copy_button(study):
    invitation = invitation_create(study=study)
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    link = f"http://testserver/join/{invitation.token}/"
    assert f"{link}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&amp;STUDY_ID={{{{%STUDY_ID%}}}}" \
           f"&amp;SESSION_ID={{{{%SESSION_ID%}}}}</code>" in page
    assert f'data-copy="prolific-{invitation.pk}"' in page and f'data-copy="link-{invitation.pk}"' in page
    assert '<script src="/static/annotate/manage.js" defer></script>' in page
    assert "<script>" not in page  # no inline script (CSP)


def test_judgments_csv_carries_the_platform_ids(study):
    token = invitation_create(study=study).token
    join(Client(), token, "?PROLIFIC_PID=pid-ada&STUDY_ID=st-1&SESSION_ID=se-1")
    ada = Participation.objects.get(study=study)
    answer_all(ada, lambda pair: pair.question_a_id, start=START)
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    response = client.get(reverse("annotate:study_judgments_csv", kwargs={"study_id": study.pk}))
    content = b"".join(response.streaming_content) if response.streaming else response.content
    rows = list(csv.DictReader(io.StringIO(content.decode())))
    assert len(rows) == 3
    assert {(r["platform_participant_id"], r["platform_study_id"], r["platform_session_id"]) for r in rows} == {
        ("pid-ada", "st-1", "se-1")}


def finished_client(study, query="?PROLIFIC_PID=pid-ada") -> Client:
    client = Client()
    join(client, invitation_create(study=study).token, query)
    participation = Participation.objects.get(study=study)
    participation_onboard(participation=participation, field_of_study="mathematics", education_level="phd",
                          qualified_subjects=[])
    participation_accept_guidelines(participation=participation)
    answer_all(participation, lambda pair: pair.question_a_id, start=START)
    return client


def test_the_done_page_shows_the_code_and_redirects_to_the_completion_url(study):
    study_quality_settings_update(study=study, speeder_seconds=5, participant_param="PROLIFIC_PID",
                                  study_param="STUDY_ID", session_param="SESSION_ID", completion_code=CODE,
                                  completion_url=COMPLETION_URL)
    client = finished_client(study)
    assert client.get(reverse("annotate:study_judge", kwargs={"study_id": study.pk})).url == reverse(
        "annotate:study_done", kwargs={"study_id": study.pk})
    page = client.get(reverse("annotate:study_done", kwargs={"study_id": study.pk})).content.decode()
    assert f'<code id="completion-code">{CODE}</code>' in page
    # a script counts down 5 s and can be stopped (a delayed meta refresh fails WCAG 2.2.1)
    assert '<p id="completion-redirect" data-seconds="5">' in page and "annotate/completion.js" in page
    assert 'http-equiv="refresh"' not in page and 'id="completion-stay"' in page
    assert f'<a href="{COMPLETION_URL}" id="completion-link">' in page


def test_without_a_completion_url_the_done_page_stays(study):
    study_quality_settings_update(study=study, speeder_seconds=5, participant_param="PROLIFIC_PID",
                                  study_param="STUDY_ID", session_param="SESSION_ID", completion_code=CODE,
                                  completion_url="")
    page = finished_client(study).get(reverse("annotate:study_done", kwargs={"study_id": study.pk})).content.decode()
    assert CODE in page and "You may close this window." in page
    assert 'http-equiv="refresh"' not in page and "completion.js" not in page


def test_a_completion_url_that_is_not_http_is_refused(study):
    with pytest.raises(ValueError, match=r"^completion_url must start with https:// or http://; got 'javascript:x'$"):
        study_quality_settings_update(study=study, speeder_seconds=5, participant_param="PROLIFIC_PID",
                                      study_param="", session_param="", completion_code="",
                                      completion_url="javascript:x")


def test_a_pid_held_by_another_account_is_not_taken_over(study):
    token = invitation_create(study=study).token
    join(Client(), token, "?PROLIFIC_PID=pid-ada")
    ada = Participation.objects.get(study=study)
    ada.user.is_staff = True  # no longer a pseudonymous evaluator: nobody may log in as them through a PID
    ada.user.save()
    visitor = Client()
    join(visitor, token, "?PROLIFIC_PID=pid-ada&SESSION_ID=se-9")
    assert int(visitor.session["_auth_user_id"]) != ada.user_id
    newcomer = Participation.objects.exclude(pk=ada.pk).get(study=study)
    assert (newcomer.platform_participant_id, newcomer.platform_session_id) == ("", "se-9")
