"""Rate limiting of the two doors that take guesses: the login forms and the
invitation links.

What is counted
---------------
* ``login`` (the site's and the admin's login form): every failed POST (the
  form comes back with an error, status 400), once per client address and once
  per username typed.
* ``join`` (``/join/<token>/``): every request for an unknown or revoked token
  (status 404), per client address.
* ``decline`` (the join page's "I do not agree", counted by the join view):
  every decline that stores a row, per client address. A second decline from
  the same browser or participant id stores nothing and is not counted.
* ``api-token`` (the API's ``Authorization: Token <key>``, counted by
  :mod:`annotate.api.auth`): every malformed header or unknown/revoked key
  (status 401), per client address. Once blocked, the address gets 429 with
  ``Retry-After`` for every token request, a valid token included, until the
  window ends: a guesser learns nothing from the answers, and a script that
  shares the address with one waits at most one window.

Only failures count, so a class of fifty evaluators joining from one address
behind a NAT is never blocked. Once a key has ``RATELIMIT_ATTEMPTS`` failures
in the current window of ``RATELIMIT_WINDOW_S`` seconds (fixed windows aligned
on the clock, default 10 per 60 s), every further attempt on that door with
that key is refused with a 429 page and a ``Retry-After`` header until the
window ends, even with the right password.

Counters live in Django's cache and are counted with ``cache.add`` then
``cache.incr``. LocMemCache (the local default) is per process; with several
gunicorn workers use a shared cache. Redis (``REDIS_URL``; production uses it
when set) increments atomically, so every failure of a burst from many workers
is counted. The database cache (``CACHE_BACKEND=database``, ``manage.py
createcachetable``; production's fallback) reads then writes in ``incr``, so
under a burst of simultaneous failures a few may go uncounted; the limit then
holds to within the number of workers.
"""
from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

RATE_LIMITED_MESSAGE = (
    "Too many failed attempts from your network address or for this username. "
    "Please wait {wait} and try again."
)
_KEY_PREFIX = "ratelimit"


@dataclass(frozen=True)
class Door:
    """A rate-limited view: which methods count, which keys, what a failure is."""

    scope: str
    methods: frozenset[str]
    by_username: bool
    failed: Callable[[HttpResponse], bool]


DOORS: dict[str, Door] = {
    "login": Door("login", frozenset({"POST"}), True, lambda r: r.status_code == 400),
    "admin_login": Door("login", frozenset({"POST"}), True, lambda r: r.status_code == 400),  # eipsite/urls.py
    "annotate:study_join": Door("join", frozenset({"GET", "POST"}), False, lambda r: r.status_code == 404),
}

#: Stored consent declines: counted by the join view through :func:`door_keys` (every decline that writes a
#: row counts, per address, like a failed login; once blocked, a decline answers 429 and stores nothing).
DECLINE_DOOR = Door("decline", frozenset(), False, lambda r: False)

#: Failed API tokens: not a view, counted by annotate.api.auth through :func:`door_keys`.
API_TOKEN_DOOR = Door("api-token", frozenset(), False, lambda r: r.status_code == 401)

# The clock, replaceable in tests.
now: Callable[[], float] = time.time


def client_address(request: HttpRequest) -> str:
    """The client's IP address: ``REMOTE_ADDR``, or the last ``X-Forwarded-For``
    entry (the one the proxy added) when ``TRUST_X_FORWARDED_FOR`` is on."""
    if getattr(settings, "TRUST_X_FORWARDED_FOR", False):
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _keys(door: Door, request: HttpRequest) -> list[str]:
    values = [("ip", client_address(request))]
    if door.by_username:
        username = (request.POST.get("username") or "").strip().lower()
        if username:
            values.append(("user", username))
    window = int(now() // settings.RATELIMIT_WINDOW_S)
    return [
        f"{_KEY_PREFIX}:{door.scope}:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}:{window}"
        for kind, value in values
    ]


def door_keys(door: Door, request: HttpRequest) -> list[str]:
    """The cache keys counting ``door``'s failures for this request's client
    (and username, when the door counts them), in the current window."""
    return _keys(door, request)


def _seconds_left() -> int:
    window = settings.RATELIMIT_WINDOW_S
    return max(1, math.ceil(window - now() % window))


def seconds_left() -> int:
    """Seconds until the current window ends (at least 1): the ``Retry-After``."""
    return _seconds_left()


def attempts_blocked(keys: list[str]) -> bool:
    """True when any key has used up its failures in the current window."""
    counts = cache.get_many(keys)
    return any(counts.get(key, 0) >= settings.RATELIMIT_ATTEMPTS for key in keys)


def attempt_failed(keys: list[str]) -> None:
    """Count one failure against every key (each expires after two windows)."""
    timeout = 2 * settings.RATELIMIT_WINDOW_S
    for key in keys:
        cache.add(key, 0, timeout=timeout)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=timeout)


def _wait_text(seconds: int) -> str:
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def too_many_attempts(request: HttpRequest) -> HttpResponse:
    """The 429 page, with ``Retry-After``."""
    seconds = _seconds_left()
    message = RATE_LIMITED_MESSAGE.format(wait=_wait_text(seconds))
    html = render_to_string("annotate/ratelimited.html", {"message": message}, request=request)
    response = HttpResponse(html, status=429)
    response["Retry-After"] = str(seconds)
    return response


class RateLimitMiddleware:
    """Refuses over-limit attempts before the view runs; counts failures after.

    Goes after ``AuthenticationMiddleware`` in ``MIDDLEWARE``.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        keys = getattr(request, "_ratelimit_keys", None)
        door = getattr(request, "_ratelimit_door", None)
        if keys and door is not None and response.status_code != 429 and door.failed(response):
            attempt_failed(keys)
        return response

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        match = request.resolver_match
        door = DOORS.get(match.view_name) if match is not None else None
        if door is None or request.method not in door.methods:
            return None
        keys = _keys(door, request)
        if attempts_blocked(keys):
            return too_many_attempts(request)
        request._ratelimit_keys = keys
        request._ratelimit_door = door
        return None
