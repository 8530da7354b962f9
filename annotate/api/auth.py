"""Who may call an API view: token or session authentication, then a role check.

* ``Authorization: Token <key>``: the token's user; CSRF does not apply (no
  cookie is involved, so a third-party page cannot forge the request).
* Otherwise the session (a logged-in browser): unsafe methods must carry the
  CSRF token exactly as the site's forms do.
* Nobody: 401 with ``WWW-Authenticate: Token``.

Roles: ``"staff"`` (uploads and scoring runs), ``"researcher"`` (staff or the
researcher group: studies, reports, judgments). Evaluators have no role here.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.views.decorators.csrf import csrf_exempt

from annotate.api.tokens import api_token_user
from annotate.selectors.studies import user_is_researcher

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
ROLES = ("staff", "researcher")
ERR_NO_CREDENTIALS = "authentication required: send the header 'Authorization: Token <key>'"
ERR_MALFORMED = "malformed Authorization header; use 'Authorization: Token <key>'"
ERR_BAD_TOKEN = "invalid or revoked token"
ERR_CSRF = "CSRF check failed ({reason}); a session-authenticated request must send the CSRF token"
ERR_ROLE = {"staff": "staff only", "researcher": "researchers and staff only"}
ERR_METHOD = "method {method} not allowed; use {allowed}"


def api_error(status: int, message: str, **extra) -> JsonResponse:
    """``{"error": message, ...extra}`` with ``status``."""
    return JsonResponse({"error": message, **extra}, status=status)


class _CsrfCheck(CsrfViewMiddleware):
    def _reject(self, request: HttpRequest, reason: str) -> str:
        return reason


def _csrf_failure(request: HttpRequest) -> str | None:
    """The reason the request fails Django's CSRF check, or None when it passes."""
    check = _CsrfCheck(lambda r: HttpResponse())
    check.process_request(request)
    return check.process_view(request, None, (), {})


def _authenticate(request: HttpRequest) -> JsonResponse | None:
    """Set ``request.user`` from the token, or keep the session's; an error response or None."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header:
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "token" or not key.strip():
            return _unauthorized(ERR_MALFORMED)
        user = api_token_user(key=key.strip())
        if user is None:
            return _unauthorized(ERR_BAD_TOKEN)
        request.user = user
        return None
    if not request.user.is_authenticated:
        return _unauthorized(ERR_NO_CREDENTIALS)
    if request.method not in SAFE_METHODS:
        reason = _csrf_failure(request)
        if reason is not None:
            return api_error(403, ERR_CSRF.format(reason=reason))
    return None


def _unauthorized(message: str) -> JsonResponse:
    response = api_error(401, message)
    response["WWW-Authenticate"] = 'Token realm="api"'
    return response


def _has_role(request: HttpRequest, role: str) -> bool:
    if role == "staff":
        return bool(request.user.is_staff)
    return user_is_researcher(user=request.user)


def api_view(*, methods: tuple[str, ...], role: str | None) -> Callable:
    """Decorate an API view: allowed methods, authentication, role.

    Parameters
    ----------
    methods : tuple of str
        HTTP methods the view answers; others get 405 (JSON, with ``Allow``).
    role : {"staff", "researcher"} or None
        Who may call it; None = anyone (no authentication).
    """
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {ROLES} or None; got {role!r}")

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method not in methods:
                response = api_error(405, ERR_METHOD.format(method=request.method, allowed=", ".join(methods)))
                response["Allow"] = ", ".join(methods)
                return response
            if role is not None:
                refused = _authenticate(request)
                if refused is not None:
                    return refused
                if not _has_role(request, role):
                    return api_error(403, ERR_ROLE[role])
            return view(request, *args, **kwargs)

        wrapper.api_role = role
        wrapper.api_methods = tuple(methods)
        return wrapper

    return decorate
