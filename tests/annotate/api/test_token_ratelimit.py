"""Failed API tokens are rate-limited per client address (issue 13).

Cast: ``owner`` (staff, a valid token), a guesser at 10.9.0.1, a neighbour at
10.9.0.2. Limit: 10 failures per address in a 60-second window (settings
RATELIMIT_ATTEMPTS / RATELIMIT_WINDOW_S). Decision (annotate/core/ratelimit.py,
docs/deploy.md): once an address is blocked, every token request from it gets
429, a valid token included, until the window ends.
"""
from __future__ import annotations

import os
import socket
import threading
import uuid

import pytest
from django.core.cache import cache, caches
from django.test import Client, RequestFactory, override_settings
from django.urls import reverse

from annotate.api.auth import ERR_BAD_TOKEN, ERR_MALFORMED, ERR_RATE_LIMITED
from annotate.api.services import api_token_create
from annotate.core import ratelimit
from tests.annotate.factories import make_user

pytestmark = pytest.mark.django_db

LIMIT = 10
GUESSER = "10.9.0.1"
NEIGHBOUR = "10.9.0.2"


@pytest.fixture(autouse=True)
def clock(settings, monkeypatch) -> list[float]:
    """Fresh counters and a clock the test can move (``clock[0]`` seconds)."""
    settings.RATELIMIT_ATTEMPTS = LIMIT
    settings.RATELIMIT_WINDOW_S = 60
    clock = [6_000_000.0]  # the start of a window: 6,000,000 / 60 = 100,000
    monkeypatch.setattr(ratelimit, "now", lambda: clock[0])
    cache.clear()
    yield clock
    cache.clear()


@pytest.fixture
def owner_key() -> str:
    return api_token_create(user=make_user("owner", staff=True))[1]


def studies(key: str, address: str):
    client = Client(HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR=address)
    return client.get(reverse("annotate:api_studies"))


def test_ten_bad_tokens_then_429_even_with_a_valid_token_until_the_window_passes(owner_key, clock):
    for k in range(LIMIT):
        response = studies(f"guess-{k}", GUESSER)
        assert response.status_code == 401 and response.json() == {"error": ERR_BAD_TOKEN}
    refused = studies("guess-10", GUESSER)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"
    assert refused.json() == {"error": ERR_RATE_LIMITED.format(wait=60)}
    clock[0] += 15
    valid_but_blocked = studies(owner_key, GUESSER)
    assert valid_but_blocked.status_code == 429 and valid_but_blocked["Retry-After"] == "45"
    assert studies(owner_key, NEIGHBOUR).status_code == 200  # another address is not affected
    clock[0] += 45  # the next window
    assert studies(owner_key, GUESSER).status_code == 200


def test_a_malformed_header_counts_as_a_failure(owner_key):
    for _ in range(LIMIT):
        client = Client(HTTP_AUTHORIZATION="Bearer x", REMOTE_ADDR=GUESSER)
        assert client.get(reverse("annotate:api_studies")).json() == {"error": ERR_MALFORMED}
    assert studies(owner_key, GUESSER).status_code == 429


def test_valid_tokens_and_no_token_never_count(owner_key):
    for _ in range(3 * LIMIT):
        assert studies(owner_key, GUESSER).status_code == 200
    for _ in range(3 * LIMIT):
        assert Client(REMOTE_ADDR=GUESSER).get(reverse("annotate:api_studies")).status_code == 401
    assert studies(owner_key, GUESSER).status_code == 200
    assert studies("guess", GUESSER).status_code == 401  # still counted from zero: not blocked


# --- atomic counters on Redis -----------------------------------------------------------------------


def _redis_reachable() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


def test_redis_counts_every_failure_of_a_simultaneous_burst():
    """8 threads x 25 failures at once on one key: Redis's INCR counts exactly 200."""
    if not _redis_reachable():
        if os.environ.get("CI") == "true":
            pytest.fail("Redis is not listening on 127.0.0.1:6379; CI must provide it", pytrace=False)
        pytest.skip("Redis is not listening on 127.0.0.1:6379")
    redis_cache = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                               "LOCATION": "redis://127.0.0.1:6379/15", "KEY_PREFIX": f"eip-test-{uuid.uuid4().hex}"}}
    with override_settings(CACHES=redis_cache):
        request = RequestFactory().get("/api/studies/", REMOTE_ADDR=GUESSER)
        keys = ratelimit.door_keys(ratelimit.API_TOKEN_DOOR, request)
        start = threading.Barrier(8)

        def burst() -> None:
            start.wait()
            for _ in range(25):
                ratelimit.attempt_failed(keys)

        threads = [threading.Thread(target=burst) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        try:
            assert caches["default"].get(keys[0]) == 8 * 25
            assert ratelimit.attempts_blocked(keys)
        finally:
            caches["default"].delete_many(keys)
