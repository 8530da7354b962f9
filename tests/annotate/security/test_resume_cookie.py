"""The evaluator resume cookie (issue 13): logout and "Not you? Start fresh"
forget it; it continues only the study it was issued for, and never replaces
someone signed in on the browser.

Cast: ``ada`` joins by invitation (a pseudonymous evaluator), ``owner`` is staff.
"""
from __future__ import annotations

import pytest
from django.core import signing
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Participation
from annotate.studies.services.participation import invitation_create
from annotate.studies.views.judging import RESUME_COOKIE, RESUME_MAX_STUDIES, RESUME_SALT
from tests.annotate.factories import make_catalog, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=4), n_pairs=8, seed=3)


@pytest.fixture
def other_study():
    return make_study(make_catalog(per_subject=4), n_pairs=8, seed=4)


def join_url(study) -> str:
    return reverse("annotate:study_join", kwargs={"token": invitation_create(study=study).token})


def signed_in_user_id(client: Client) -> int | None:
    value = client.session.get("_auth_user_id")
    return None if value is None else int(value)


def expire_session(client: Client) -> None:
    del client.cookies["sessionid"]  # the session expired; the resume cookie stays


@pytest.fixture
def ada(study):
    """A browser that joined ``study`` by invitation: (client, join URL, ada's user id)."""
    client = Client()
    url = join_url(study)
    assert client.post(url, {"consent": "yes"}).status_code == 302
    return client, url, Participation.objects.get(study=study).user_id


def test_the_control_a_returning_evaluator_continues_after_the_session_expired(ada):
    client, url, ada_id = ada
    expire_session(client)
    assert "Continue as evaluator-" in client.get(url).content.decode()
    client.post(url, {"consent": "yes"})
    assert signed_in_user_id(client) == ada_id
    assert Participation.objects.count() == 1


def test_logout_forgets_the_evaluator(ada):
    client, url, ada_id = ada
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert client.cookies[RESUME_COOKIE].value == ""  # deleted
    assert client.cookies[RESUME_COOKIE]["max-age"] == 0
    page = client.get(url).content.decode()
    assert "Continue as" not in page and "I agree — start" in page
    client.post(url, {"consent": "yes"})  # the next person on this browser
    assert signed_in_user_id(client) not in (None, ada_id)
    assert Participation.objects.count() == 2


def test_the_admin_logout_forgets_the_evaluator_too(ada):
    client, _, _ = ada
    client.post("/admin/logout/")
    assert client.cookies[RESUME_COOKIE].value == ""


def test_start_fresh_signs_out_and_forgets_the_evaluator(ada):
    client, url, ada_id = ada
    token = url.rstrip("/").rsplit("/", 1)[1]
    expire_session(client)
    page = client.get(url).content.decode()
    assert "Not you?" in page and 'id="join-fresh"' in page
    response = client.post(reverse("annotate:study_join_fresh", kwargs={"token": token}))
    assert response.status_code == 302 and response.url == url
    assert client.cookies[RESUME_COOKIE].value == ""
    client.post(url, {"consent": "yes"})
    assert signed_in_user_id(client) not in (None, ada_id)


def test_start_fresh_also_signs_out_a_signed_in_person(study):
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    url = join_url(study)
    assert "I agree — join as owner" in client.get(url).content.decode()
    client.post(reverse("annotate:study_join_fresh", kwargs={"token": url.rstrip("/").rsplit("/", 1)[1]}))
    assert signed_in_user_id(client) is None


def test_a_resume_continues_only_the_study_it_was_issued_for(ada, other_study):
    client, _, ada_id = ada
    expire_session(client)
    other = join_url(other_study)
    page = client.get(other).content.decode()
    assert "Continue as" not in page
    client.post(other, {"consent": "yes"})
    newcomer = signed_in_user_id(client)
    assert newcomer not in (None, ada_id)
    assert Participation.objects.get(study=other_study).user_id == newcomer


def test_the_cookie_remembers_each_study_with_its_own_evaluator(ada, study, other_study):
    client, url, ada_id = ada
    expire_session(client)
    other = join_url(other_study)
    client.post(other, {"consent": "yes"})
    bo_id = signed_in_user_id(client)
    expire_session(client)
    client.post(url, {"consent": "yes"})
    assert signed_in_user_id(client) == ada_id
    expire_session(client)
    client.post(other, {"consent": "yes"})
    assert signed_in_user_id(client) == bo_id
    assert Participation.objects.count() == 2


def test_the_cookie_keeps_at_most_the_newest_studies(study):
    client = Client()
    entries = [[1_000_000 + k, 5] for k in range(RESUME_MAX_STUDIES)]
    client.cookies[RESUME_COOKIE] = signing.dumps({"s": entries}, salt=RESUME_SALT)
    client.post(join_url(study), {"consent": "yes"})
    kept = signing.loads(client.cookies[RESUME_COOKIE].value, salt=RESUME_SALT)["s"]
    assert len(kept) == RESUME_MAX_STUDIES
    assert kept[0] == [1_000_001, 5] and kept[-1][0] == study.pk  # the oldest dropped, the new one last


def test_a_signed_in_person_is_never_replaced_by_the_cookie(ada, study):
    client, url, _ = ada
    owner = make_user("owner", staff=True)
    client.force_login(owner)  # someone else signs in on this browser
    page = client.get(url).content.decode()
    assert "Continue as" not in page and "I agree — join as owner" in page
    assert signed_in_user_id(client) == owner.pk


@pytest.mark.parametrize(("payload", "salt"), [
    ({"u": "ADA"}, RESUME_SALT),  # the old format (no study): not honoured
    ({"s": [["STUDY", "ADA"]]}, "another.purpose"),  # signed for something else
    ({"s": "STUDY"}, RESUME_SALT),  # malformed
    ({"s": [["STUDY", "ADA", 3]]}, RESUME_SALT),  # malformed entry
])
def test_an_old_forged_or_malformed_cookie_resumes_nobody(ada, study, payload, salt):
    client, url, ada_id = ada
    expire_session(client)

    def fill(value):
        if value == "ADA":
            return ada_id
        if value == "STUDY":
            return study.pk
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    client.cookies[RESUME_COOKIE] = signing.dumps(fill(payload), salt=salt)
    assert "Continue as" not in client.get(url).content.decode()
    client.post(url, {"consent": "yes"})
    assert signed_in_user_id(client) != ada_id


def test_a_cookie_signed_with_another_key_resumes_nobody(ada, other_study):
    client, _, ada_id = ada
    expire_session(client)
    forged = signing.dumps({"s": [[other_study.pk, ada_id]]}, key="not-the-site-secret-" * 3, salt=RESUME_SALT)
    client.cookies[RESUME_COOKIE] = forged
    client.post(join_url(other_study), {"consent": "yes"})
    assert signed_in_user_id(client) != ada_id
