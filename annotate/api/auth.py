"""Who may call an API endpoint: ninja auth classes for our tokens and the
browser session, each with a role check.

* ``Authorization: Token <key>`` (:class:`TokenAuth`): the token's user; CSRF
  does not apply (no cookie is involved, so a third-party page cannot forge
  the request). A malformed header or an unknown key is refused at once (the
  session is not tried).
* Otherwise the session (:class:`SessionAuth`, a logged-in browser): unsafe
  methods must carry the CSRF token exactly as the site's forms do.
* Nobody: 401 with ``WWW-Authenticate: Token`` (:mod:`annotate.api.errors`).

Roles: ``"staff"`` (uploads and scoring runs), ``"researcher"`` (staff or the
researcher group: studies, reports, judgments). Evaluators have no role here.
Use :data:`STAFF` or :data:`RESEARCHER` as an endpoint's ``auth``.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from ninja.security import APIKeyCookie, APIKeyHeader

from annotate.api.errors import ApiError
from annotate.api.services import api_token_authenticate
from annotate.core import API_TOKEN_DOOR, attempt_failed, attempts_blocked, door_keys, seconds_left
from annotate.studies import user_is_researcher

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
ROLES = ("staff", "researcher")
TOKEN_SCHEME = "token"
ERR_MALFORMED = "malformed Authorization header; use 'Authorization: Token <key>'"
ERR_BAD_TOKEN = "invalid or revoked token"
ERR_RATE_LIMITED = (
    "too many failed token attempts from your network address; wait {wait} s and try again (every token is "
    "refused until then)"
)
ERR_CSRF = "CSRF check failed ({reason}); a session-authenticated request must send the CSRF token"
ERR_ROLE = {"staff": "staff only", "researcher": "researchers and staff only"}
ERR_UNKNOWN_ROLE = "role must be one of {roles}; got {value!r}"


def _check_role(user: AbstractBaseUser, role: str) -> AbstractBaseUser:
    allowed = bool(user.is_staff) if role == "staff" else user_is_researcher(user=user)
    if not allowed:
        raise ApiError(403, ERR_ROLE[role])
    return user


class _RoleAuth:
    """An auth class that also checks a role (403 when the user lacks it)."""

    def __init__(self, role: str) -> None:
        if role not in ROLES:
            raise ValueError(ERR_UNKNOWN_ROLE.format(roles=ROLES, value=role))
        self.role = role
        super().__init__()


class TokenAuth(_RoleAuth, APIKeyHeader):
    """``Authorization: Token <key>``, a key from ``manage.py create_api_token``."""

    param_name = "Authorization"
    openapi_description = "`Token <key>`; keys from `manage.py create_api_token` (staff and researchers)."

    def authenticate(self, request: HttpRequest, key: str | None) -> AbstractBaseUser | None:
        if not key:
            return None  # no header: the session may still authenticate
        counters = door_keys(API_TOKEN_DOOR, request)
        if attempts_blocked(counters):  # even a valid token, until the window ends
            wait = seconds_left()
            raise ApiError(429, ERR_RATE_LIMITED.format(wait=wait), headers={"Retry-After": str(wait)})
        scheme, _, value = key.partition(" ")
        if scheme.lower() != TOKEN_SCHEME or not value.strip():
            attempt_failed(counters)
            raise ApiError(401, ERR_MALFORMED)
        user = api_token_authenticate(key=value.strip())
        if user is None:
            attempt_failed(counters)
            raise ApiError(401, ERR_BAD_TOKEN)
        request.user = user
        return _check_role(user, self.role)


class _CsrfCheck(CsrfViewMiddleware):
    def _reject(self, request: HttpRequest, reason: str) -> Any:
        return reason


def _csrf_failure(request: HttpRequest) -> str | None:
    """The reason the request fails Django's CSRF check, or None when it passes."""
    check = _CsrfCheck(lambda r: HttpResponse())
    check.process_request(request)
    return check.process_view(request, lambda r: HttpResponse(), (), {})


class SessionAuth(_RoleAuth, APIKeyCookie):
    """A logged-in browser (the session cookie); unsafe methods need the CSRF token."""

    param_name = settings.SESSION_COOKIE_NAME
    openapi_description = "A logged-in browser; POST also needs the CSRF token (header X-CSRFToken)."

    def _get_key(self, request: HttpRequest) -> str | None:
        return request.COOKIES.get(self.param_name)  # the CSRF check (with its reason) is in authenticate

    def authenticate(self, request: HttpRequest, key: str | None) -> AbstractBaseUser | None:
        if not request.user.is_authenticated:
            return None
        if request.method not in SAFE_METHODS:
            reason = _csrf_failure(request)
            if reason is not None:
                raise ApiError(403, ERR_CSRF.format(reason=reason))
        return _check_role(request.user, self.role)


STAFF = [TokenAuth("staff"), SessionAuth("staff")]
RESEARCHER = [TokenAuth("researcher"), SessionAuth("researcher")]
