"""Rate limiting of logins and invitation links; invitation tokens.

Cast: ``owner`` (staff, password "right-password-1"), visitors from several
network addresses. Default limit: 10 failures per address and per username in
a 60-second window (settings RATELIMIT_ATTEMPTS / RATELIMIT_WINDOW_S).
"""
from __future__ import annotations

import base64
import re

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory
from django.urls import reverse

from annotate.core import ratelimit
from annotate.models import Invitation
from annotate.studies.services.participation import invitation_create, invitation_revoke
from tests.annotate.factories import make_catalog, make_study, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "right-password-1"
LIMIT = 10


@pytest.fixture(autouse=True)
def _fresh_counters(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast hashing
    settings.RATELIMIT_ATTEMPTS = LIMIT
    settings.RATELIMIT_WINDOW_S = 60
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def owner():
    return make_user("owner", staff=True, password=PASSWORD)


@pytest.fixture
def study():
    return make_study(make_catalog(per_subject=3), n_pairs=2, name="Main")


def login(client: Client, username: str, password: str, url: str | None = None):
    return client.post(url or reverse("login"), {"username": username, "password": password})


def test_it_refuses_the_eleventh_failed_login_from_one_address(owner):
    client = Client(REMOTE_ADDR="10.0.0.1")
    for k in range(LIMIT):  # different usernames: only the address key fills up
        assert login(client, f"guess-{k}", "wrong").status_code == 400
    refused = login(client, "guess-x", "wrong")
    assert refused.status_code == 429
    assert "Too many failed attempts" in refused.content.decode()
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Even the right password is refused from that address during the window ...
    assert login(client, "owner", PASSWORD).status_code == 429
    # ... but another address logs in normally.
    assert login(Client(REMOTE_ADDR="10.0.0.2"), "owner", PASSWORD).status_code == 302


def test_it_limits_failed_logins_per_username_across_addresses(owner):
    for k in range(LIMIT):
        assert login(Client(REMOTE_ADDR=f"10.1.0.{k}"), "OWNER", "wrong").status_code == 400
    fresh = Client(REMOTE_ADDR="10.1.1.1")
    assert login(fresh, "owner", PASSWORD).status_code == 429  # usernames compared case-insensitively
    assert login(fresh, "someone-else", "wrong").status_code == 400  # the address itself is not blocked


def test_it_does_not_count_successful_logins(owner):
    client = Client(REMOTE_ADDR="10.2.0.1")
    for _ in range(2 * LIMIT):
        assert login(client, "owner", PASSWORD).status_code == 302
        client.logout()


def test_it_lets_attempts_through_again_in_the_next_window(owner, monkeypatch):
    clock = [1_000_040.0]  # 20 s into a 60 s window (1,000,040 = 16,667 * 60 + 20)
    monkeypatch.setattr(ratelimit, "now", lambda: clock[0])
    client = Client(REMOTE_ADDR="10.3.0.1")
    for k in range(LIMIT):
        login(client, f"guess-{k}", "wrong")
    refused = login(client, "owner", PASSWORD)
    assert refused.status_code == 429 and refused["Retry-After"] == "40"  # 60 - 20 seconds left
    clock[0] += 40.0  # the next window starts
    assert login(client, "owner", PASSWORD).status_code == 302


def test_the_admin_login_shares_the_login_limit(owner):
    client = Client(REMOTE_ADDR="10.4.0.1")
    for k in range(LIMIT // 2):
        assert login(client, f"guess-{k}", "wrong").status_code == 400
    for k in range(LIMIT // 2):
        assert login(client, f"admin-guess-{k}", "wrong", url=reverse("admin:login")).status_code == 400
    assert login(client, "owner", PASSWORD, url=reverse("admin:login")).status_code == 429


def test_it_rate_limits_unknown_invitation_tokens_per_address(study):
    invitation = invitation_create(study=study)
    guesser = Client(REMOTE_ADDR="10.5.0.1")
    for k in range(LIMIT):
        assert guesser.get(reverse("annotate:study_join", kwargs={"token": f"guess{k}"})).status_code == 404
    assert guesser.get(reverse("annotate:study_join", kwargs={"token": "guess-more"})).status_code == 429
    assert guesser.get(reverse("annotate:study_join", kwargs={"token": invitation.token})).status_code == 429
    other_address = Client(REMOTE_ADDR="10.5.0.2")
    assert other_address.get(reverse("annotate:study_join", kwargs={"token": invitation.token})).status_code == 200


def test_a_class_joining_from_one_address_is_never_blocked(study):
    invitation = invitation_create(study=study)
    url = reverse("annotate:study_join", kwargs={"token": invitation.token})
    for _ in range(3 * LIMIT):  # thirty evaluators behind one NAT
        evaluator = Client(REMOTE_ADDR="10.6.0.1")
        assert evaluator.get(url).status_code == 200
        assert evaluator.post(url, {"consent": "yes"}).status_code == 302
    assert study.participations.count() == 3 * LIMIT


def test_it_keys_on_the_proxy_address_only_when_told_to(settings):
    forwarded = RequestFactory().get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    settings.TRUST_X_FORWARDED_FOR = False
    assert ratelimit.client_address(forwarded) == "127.0.0.1"  # a client can forge the header
    settings.TRUST_X_FORWARDED_FOR = True
    assert ratelimit.client_address(forwarded) == "203.0.113.7"  # the entry our proxy appended


# --- invitation tokens ------------------------------------------------------------


def test_invitation_tokens_carry_32_random_bytes(study):
    tokens = [invitation_create(study=study).token for _ in range(50)]
    assert len(set(tokens)) == 50
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token), token
        # 43 url-safe base64 characters = 32 bytes (256 bits) of randomness
        assert len(base64.urlsafe_b64decode(token + "=")) == 32


def test_a_revoked_invitation_admits_nobody_and_stops_resuming(study):
    invitation = invitation_create(study=study)
    url = reverse("annotate:study_join", kwargs={"token": invitation.token})
    first = Client(REMOTE_ADDR="10.7.0.1")
    assert first.post(url, {"consent": "yes"}).status_code == 302
    resume_cookie = first.cookies["eip_evaluator"].value
    invitation_revoke(invitation=Invitation.objects.get(pk=invitation.pk))

    newcomer = Client(REMOTE_ADDR="10.7.0.2")
    assert newcomer.get(url).status_code == 404
    assert newcomer.post(url, {"consent": "yes"}).status_code == 404
    returning = Client(REMOTE_ADDR="10.7.0.3")
    returning.cookies["eip_evaluator"] = resume_cookie
    response = returning.get(url)
    assert response.status_code == 404 and "_auth_user_id" not in returning.session
    assert study.participations.count() == 1
