"""API tokens and who may call the API.

Cast: ``owner`` (staff), ``rita`` (researcher), ``ada`` (evaluator in study
"Main"), anonymous scripts.
"""
from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotate.api.selectors import api_token_for_key
from annotate.api.services import api_token_authenticate, api_token_create, api_token_revoke
from annotate.models import ApiToken
from annotate.studies.services.participation import ensure_role_groups
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast():
    study = make_study(make_catalog(per_subject=3), n_pairs=2, name="Main")
    researchers, _ = ensure_role_groups()
    rita = make_user("rita")
    rita.groups.add(researchers)
    study.members.add(rita)  # researchers reach only studies they own or were added to
    return make_user("owner", staff=True), rita, make_evaluator(study, "ada").user, study


def token_client(key: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def test_the_command_prints_a_key_once_and_stores_only_its_hash(cast):
    out = StringIO()
    call_command("create_api_token", user="owner", name="nightly script", stdout=out)
    key = re.search(r"key \(shown once\): (\S+)", out.getvalue()).group(1)
    assert re.fullmatch(r"eip_[A-Za-z0-9_-]{43}", key)  # 32 random bytes, URL-safe base64
    token = ApiToken.objects.get()
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert token.prefix == key[:12] and token.name == "nightly script"
    stored = [str(getattr(token, f.attname)) for f in ApiToken._meta.fields]
    assert not any(key in value for value in stored)
    assert token_client(key).get(reverse("annotate:api_studies")).status_code == 200


def test_the_command_refuses_evaluators_and_unknown_users(cast):
    with pytest.raises(CommandError, match="user 'ada' is neither staff nor a researcher"):
        call_command("create_api_token", user="ada")
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("create_api_token", user="nobody")
    assert ApiToken.objects.count() == 0


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (None, "authentication required: send the header 'Authorization: Token <key>'"),
        ("Bearer abc", "malformed Authorization header; use 'Authorization: Token <key>'"),
        ("Token ", "malformed Authorization header; use 'Authorization: Token <key>'"),
        ("Token eip_not-a-real-key", "invalid or revoked token"),
    ],
)
def test_it_answers_401_without_valid_credentials(cast, header, message):
    client = Client(HTTP_AUTHORIZATION=header) if header else Client()
    response = client.get(reverse("annotate:api_studies"))
    assert response.status_code == 401
    assert response.json() == {"error": message}
    assert response["WWW-Authenticate"] == 'Token realm="api"'


def test_a_revoked_token_or_a_deactivated_user_is_refused(cast):
    owner, rita, _, _ = cast
    revoked, revoked_key = api_token_create(user=owner)
    _, rita_key = api_token_create(user=rita)
    assert token_client(revoked_key).get(reverse("annotate:api_studies")).status_code == 200
    api_token_revoke(token=revoked)
    assert token_client(revoked_key).get(reverse("annotate:api_studies")).status_code == 401
    rita.is_active = False
    rita.save()
    assert token_client(rita_key).get(reverse("annotate:api_studies")).status_code == 401


def test_it_stamps_when_a_token_was_last_used(cast):
    owner, _, _, _ = cast
    token, key = api_token_create(user=owner)
    assert token.last_used_at is None
    token_client(key).get(reverse("annotate:api_studies"))
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_the_selector_finds_a_token_without_writing_and_the_service_stamps_once_a_minute(cast):
    owner, _, _, _ = cast
    token, key = api_token_create(user=owner)
    assert api_token_for_key(key=key) == token
    assert [api_token_for_key(key=k) for k in ("", "not-ours", key[:-1] + "x")] == [None, None, None]
    token.refresh_from_db()
    assert token.last_used_at is None  # a read is a read
    assert api_token_authenticate(key=key) == owner
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    api_token_authenticate(key=key)
    token.refresh_from_db()
    assert token.last_used_at == first  # within the minute: not written again
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    api_token_authenticate(key=key)
    token.refresh_from_db()
    assert token.last_used_at >= first


def test_roles_staff_researcher_and_evaluator(cast):
    owner, rita, ada, study = cast
    _, owner_key = api_token_create(user=owner)
    _, rita_key = api_token_create(user=rita)
    # A token an evaluator somehow holds (e.g. a researcher later demoted) gives nothing.
    ada_key = "eip_" + "a" * 43
    ApiToken.objects.create(user=ada, prefix=ada_key[:12], key_hash=hashlib.sha256(ada_key.encode()).hexdigest())
    report = reverse("annotate:api_study_judgments", kwargs={"study_id": study.pk})
    uploads = reverse("annotate:api_response_sets")
    assert token_client(owner_key).get(report).status_code == 200
    assert token_client(rita_key).get(report).status_code == 200
    assert token_client(owner_key).get(uploads).status_code == 200
    refused = token_client(rita_key).get(uploads)
    assert refused.status_code == 403 and refused.json() == {"error": "staff only"}
    for url in (report, uploads, reverse("annotate:api_studies")):
        response = token_client(ada_key).get(url)
        assert response.status_code == 403, url
    session = Client()
    session.force_login(ada)
    assert session.get(report).json() == {"error": "researchers and staff only"}


def test_a_session_needs_the_csrf_token_but_a_token_request_does_not(cast):
    owner, _, _, _ = cast
    _, key = api_token_create(user=owner)
    url = reverse("annotate:api_scoring_runs")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    refused = browser.post(url, data="{}", content_type="application/json")
    assert refused.status_code == 403
    assert refused.json()["error"].startswith("CSRF check failed (CSRF cookie not set.)")
    browser.get(reverse("login"))  # a page with a form sets the CSRF cookie
    csrf = browser.cookies["csrftoken"].value
    with_csrf = browser.post(url, data="{}", content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert with_csrf.status_code == 400  # past the CSRF check; the body itself is refused
    scripted = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {key}")
    assert scripted.post(url, data="{}", content_type="application/json").status_code == 400


def test_it_answers_405_with_allow_for_other_methods(cast):
    owner, _, _, _ = cast
    _, key = api_token_create(user=owner)
    response = token_client(key).delete(reverse("annotate:api_studies"))
    assert response.status_code == 405 and response["Allow"] == "GET"
    assert response.json() == {"error": "method DELETE not allowed; use GET"}
