"""The API's errors: every 4xx answer is JSON ``{"error": "<message>", ...}``.

A refused upload adds ``"problems"`` (each with ``file``, ``row``, ``column``,
``message``), invalid upload fields add ``"fields"`` (field -> messages). A
401 carries ``WWW-Authenticate: Token realm="api"``; a 405 carries ``Allow``.
A path under the API's prefix that no endpoint has answers a JSON 404 too
(:func:`api_not_found`, the API's last URL pattern), whatever the method.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve, reverse
from django.views.decorators.csrf import csrf_exempt
from ninja.errors import AuthenticationError, HttpError, ValidationError

if TYPE_CHECKING:
    from ninja import NinjaAPI

ERR_NO_CREDENTIALS = "authentication required: send the header 'Authorization: Token <key>'"
ERR_METHOD = "method {method} not allowed; use {allowed}"
ERR_FIELDS = "the upload's fields are invalid"
ERR_JSON = "the request body must be a JSON object"
ERR_NOT_FOUND = "not found"
ERR_NO_ENDPOINT = "no API endpoint at {path}; the endpoints are listed in {document}"
ERR_NO_ENDPOINT_SLASH = "no API endpoint at {path}; the endpoint is {path}/ (with a trailing slash)"
#: The most characters of a requested path an error message repeats.
PATH_CHARS = 200
WWW_AUTHENTICATE = 'Token realm="api"'
#: Where a request's invalid value was: ninja's first ``loc`` item -> shown as.
FIELD_SOURCES = ("form", "file")


class ApiError(Exception):
    """Answer ``{"error": message, **extra}`` with ``status`` (raised by views and auth classes)."""

    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra


def error_response(status: int, message: str, **extra: Any) -> JsonResponse:
    response = JsonResponse({"error": message, **extra}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = WWW_AUTHENTICATE
    return response


def _message(error: dict) -> str:
    """One pydantic error as text: our own ValueError message as is, else "where: what"."""
    if error.get("type") == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    if error.get("type") == "missing" and error["loc"][0] == "body" and len(error["loc"]) == 2:
        return ERR_JSON  # an empty body
    loc = error["loc"][2:] if error["loc"][0] == "body" else error["loc"][1:]  # body: skip the parameter's name
    where = ".".join(str(part) for part in loc)
    return f"{where}: {error['msg']}" if where else error["msg"]


def _invalid(request: HttpRequest, exc: ValidationError) -> JsonResponse:
    """400 (not ninja's 422): upload fields under ``"fields"``, anything else joined in ``"error"``."""
    fields: dict[str, list[str]] = {}
    for error in exc.errors:
        if error["loc"][0] in FIELD_SOURCES:
            name = str(error["loc"][1]) if len(error["loc"]) > 1 else "__all__"
            fields.setdefault(name, []).append(_message({**error, "loc": error["loc"][:1]}))
    if fields:
        return error_response(400, ERR_FIELDS, fields=fields)
    return error_response(400, "; ".join(_message(e) for e in exc.errors))


def _api_error(request: HttpRequest, exc: ApiError) -> JsonResponse:
    response = error_response(exc.status, exc.message, **exc.extra)
    for name, value in exc.headers.items():
        response[name] = value
    return response


def _http_error(request: HttpRequest, exc: HttpError) -> JsonResponse:
    if isinstance(exc, AuthenticationError):  # no auth class accepted the request
        return error_response(401, ERR_NO_CREDENTIALS)
    if isinstance(exc.__cause__, ApiError):  # ninja wraps the body parser's errors ("Cannot parse request body")
        return _api_error(request, exc.__cause__)
    return error_response(exc.status_code, exc.message)


def _not_found(request: HttpRequest, exc: Http404) -> JsonResponse:
    return error_response(404, str(exc) or ERR_NOT_FOUND)


def install_error_handlers(api: NinjaAPI) -> None:
    """Make every error ``api`` answers one of ours."""
    api.add_exception_handler(ApiError, _api_error)
    api.add_exception_handler(ValidationError, _invalid)
    api.add_exception_handler(HttpError, _http_error)
    api.add_exception_handler(Http404, _not_found)


def json_method_not_allowed(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a ninja path view so that its 405 is one of our JSON errors (``Allow`` kept)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if response.status_code != 405:
            return response
        allowed = ", ".join(sorted(m.strip() for m in response["Allow"].split(",")))
        refused = error_response(405, ERR_METHOD.format(method=request.method, allowed=allowed))
        refused["Allow"] = allowed
        return refused

    return wrapper


@csrf_exempt  # it writes nothing; a POST without a CSRF token gets the same JSON 404 as any other
def api_not_found(request: HttpRequest) -> JsonResponse:
    """The JSON 404 of a path under the API's prefix that no endpoint has, for any method.

    Parameters
    ----------
    request : HttpRequest
        Any method; nothing is read but its path.

    Returns
    -------
    JsonResponse
        404, ``{"error": "no API endpoint at <path>; ..."}`` naming the
        OpenAPI document (the path cut to ``PATH_CHARS`` characters); when
        the path with a trailing slash is an endpoint, the message says so
        instead of redirecting (a redirect would turn a POST into a GET).
    """
    path = request.path
    shown = path if len(path) <= PATH_CHARS else f"{path[:PATH_CHARS]}…"
    if not path.endswith("/"):
        try:
            match = resolve(f"{path}/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            return error_response(404, ERR_NO_ENDPOINT_SLASH.format(path=shown))
    return error_response(404, ERR_NO_ENDPOINT.format(path=shown, document=reverse("annotate:api_openapi")))
