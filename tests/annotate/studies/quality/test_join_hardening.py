"""Joining a study with hostile or repeated input: platform ids the database
cannot hold, tokens no invitation has, the same new participant id joining
twice at once, declines repeated from one browser or id, and the study's
"resume by participant id" setting.

Cast: crowd participants ``pid-ada`` and ``pid-bob``; ``mallory`` knows
``pid-ada``'s id and has the study's link.
"""
from __future__ import annotations

import threading

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotate.models import ConsentDecline, Participation, Study
from annotate.studies.services.participation import ERR_PLATFORM_ID, ERR_PLATFORM_ID_LONG, invitation_create
from annotate.studies.services.study_quality import study_quality_settings_update
from annotate.studies.views.judging import BROWSER_COOKIE
from tests.annotate.factories import make_catalog, make_study

pytestmark = pytest.mark.django_db
CROWD = {"speeder_seconds": 5.0, "participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID",
         "session_param": "SESSION_ID", "completion_code": "", "completion_url": ""}


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study() -> Study:
    return make_study(make_catalog(per_subject=4), n_pairs=3, name="Crowd")


@pytest.fixture
def token(study) -> str:
    return invitation_create(study=study).token


def shown(message: str) -> str:
    """``message`` as the refusal page prints it: first letter capitalised, HTML-escaped."""
    return escape(message[0].upper() + message[1:])


def join_url(token: str, query: str = "") -> str:
    return reverse("annotate:study_join", kwargs={"token": token}) + query


@pytest.mark.parametrize(("pid", "problem"), [
    ("a%00b", "a NUL character"),
    ("a%01b", "a control character"),
])
def test_a_platform_id_the_database_cannot_hold_is_refused_before_anything_is_written(token, pid, problem):
    client = Client()
    response = client.post(join_url(token, f"?PROLIFIC_PID={pid}"), {"consent": "yes"})
    assert response.status_code == 400
    assert shown(ERR_PLATFORM_ID.format(param="PROLIFIC_PID", problem=problem)) in response.content.decode()
    assert Participation.objects.count() == 0


def test_an_over_long_platform_id_is_refused_not_cut(token):
    response = Client().post(join_url(token, "?SESSION_ID=" + "s" * 129), {"consent": "yes"})
    assert response.status_code == 400
    assert shown(ERR_PLATFORM_ID_LONG.format(param="SESSION_ID", limit=128)) in response.content.decode()
    assert Participation.objects.count() == 0
    assert Client().post(join_url(token, "?SESSION_ID=" + "s" * 128), {"consent": "yes"}).status_code == 302


@pytest.mark.parametrize("bad", ["a\x00b", "x" * 65, "../etc", "%00"])
def test_a_token_no_invitation_can_have_is_a_plain_404(bad):
    assert Client().get(f"/join/{bad}/").status_code == 404


def test_declining_twice_in_one_browser_stores_one_row(token):
    client = Client()
    for _ in range(5):
        assert client.post(join_url(token), {"consent": "no"}).status_code == 302
    assert ConsentDecline.objects.count() == 1
    assert BROWSER_COOKIE in client.cookies
    Client().post(join_url(token), {"consent": "no"})  # another browser: another decline
    assert ConsentDecline.objects.count() == 2


def test_declining_twice_with_one_participant_id_stores_one_row(token):
    for _ in range(3):  # three fresh browsers, one participant id
        assert Client().post(join_url(token, "?PROLIFIC_PID=pid-ada"), {"consent": "no"}).status_code == 302
    assert ConsentDecline.objects.count() == 1
    decline = ConsentDecline.objects.get()
    assert "pid-ada" not in (decline.participant_key + decline.browser_key)  # only keyed hashes are kept


def test_new_declines_are_rate_limited_per_address_like_logins(token, settings):
    settings.RATELIMIT_ATTEMPTS = 3
    statuses = [Client().post(join_url(token), {"consent": "no"}).status_code for _ in range(5)]
    assert statuses == [302, 302, 302, 429, 429]
    assert ConsentDecline.objects.count() == 3


def test_a_second_join_with_the_same_new_id_continues_the_first(token):
    """A double click on "I agree": two requests with the same new id, the
    second inserting after the first (the race the unique constraint decides)."""
    first, second = Client(), Client()
    url = join_url(token, "?PROLIFIC_PID=pid-ada")
    assert first.post(url, {"consent": "yes"}).status_code == 302
    response = second.post(url, {"consent": "yes"})
    assert response.status_code == 302
    assert Participation.objects.filter(platform_participant_id="pid-ada").count() == 1 == Participation.objects.count()


@pytest.mark.django_db(transaction=True)
def test_twelve_simultaneous_joins_of_one_new_id_end_with_one_participation(token):
    if connection.vendor != "postgresql":
        pytest.skip(f"needs PostgreSQL for simultaneous writers (this run uses {connection.vendor})")
    url = join_url(token, "?PROLIFIC_PID=pid-burst")
    barrier = threading.Barrier(12)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def click() -> None:
        try:
            client = Client()
            barrier.wait()
            statuses.append(client.post(url, {"consent": "yes"}).status_code)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert statuses == [302] * 12
    assert Participation.objects.filter(platform_participant_id="pid-burst").count() == 1
    assert Participation.objects.count() == 1


def _set_resume(study: Study, mode: str) -> None:
    study_quality_settings_update(study=study, **CROWD, resume_by_participant_id=mode)


def test_resume_on_lets_anyone_with_the_id_continue(study, token):
    url = join_url(token, "?PROLIFIC_PID=pid-ada")
    Client().post(url, {"consent": "yes"})
    mallory = Client()
    assert mallory.post(url, {"consent": "yes"}).status_code == 302
    assert int(mallory.session["_auth_user_id"]) == Participation.objects.get().user_id  # the documented trade-off


def test_resume_off_refuses_a_known_id_from_another_browser(study, token):
    _set_resume(study, "off")
    url = join_url(token, "?PROLIFIC_PID=pid-ada")
    ada = Client()
    ada.post(url, {"consent": "yes"})
    mallory = Client()
    response = mallory.post(url, {"consent": "yes"})
    assert response.status_code == 409
    assert "has already joined this study" in response.content.decode()
    assert "_auth_user_id" not in mallory.session
    assert Participation.objects.count() == 1
    assert ada.post(url, {"consent": "yes"}).status_code == 302  # ada's own browser continues (its cookie)


def test_resume_in_the_same_browser_only(study, token):
    _set_resume(study, "same_browser")
    url = join_url(token, "?PROLIFIC_PID=pid-ada")
    ada = Client()
    ada.post(url, {"consent": "yes"})
    user_id = Participation.objects.get().user_id
    ada.post(reverse("logout"))  # logging out forgets the evaluator, not the browser key
    assert BROWSER_COOKIE in ada.cookies
    assert ada.post(url, {"consent": "yes"}).status_code == 302
    assert int(ada.session["_auth_user_id"]) == user_id
    mallory = Client()
    assert mallory.post(url, {"consent": "yes"}).status_code == 409
    assert "in the browser it joined with" in mallory.post(url, {"consent": "yes"}).content.decode()
    assert Participation.objects.count() == 1


def test_the_manage_page_says_which_resume_setting_is_in_force(study):
    from tests.annotate.factories import make_user

    _set_resume(study, "same_browser")
    client = Client()
    client.force_login(make_user("owner", staff=True))
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert 'Resume by participant id: <strong>on, in the same browser only</strong>' in page
