"""Styled error pages (400, 403, 404, 500) with DEBUG off and on.

With DEBUG off Django calls the handlers named in ``eipsite/urls.py``. With
DEBUG on it would show its technical pages instead; :class:`ErrorPageMiddleware`
renders the same styled pages then too (the traceback of a 500 still goes to
the ``django.request`` log, i.e. the runserver console). Responses a view
builds itself (a 400 with its own message, the API's JSON errors) are left
alone. A JSON endpoint of the site answers its refusals in JSON instead
(:func:`json_refusals`).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

logger = logging.getLogger("django.request")

#: The statuses with a styled page: the templates ``400.html`` ... ``500.html`` (each extends base.html).
ERROR_PAGES = (400, 403, 404, 500)
FALLBACK = "<!doctype html><title>Error {status}</title><h1>Error {status}</h1>"


def error_response(request: HttpRequest, status: int) -> HttpResponse:
    """The styled page of ``status`` (one of :data:`ERROR_PAGES`), template ``<status>.html``."""
    try:
        content = render_to_string(f"{status}.html", request=request)
    except Exception:  # a broken template or a database down must not hide the original error
        logger.exception("could not render the %s page", status)
        content = FALLBACK.format(status=status)
    response = HttpResponse(content, status=status)
    response.error_page = True  # type: ignore[attr-defined]
    return response


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(request, 400)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(request, 403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_response(request, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    return error_response(request, 500)


class ErrorPageMiddleware:
    """With DEBUG on, the styled pages instead of Django's technical ones: for
    exceptions a view raises, and for errors before any view was chosen (no
    route matches, a bad Host header). It is the outermost middleware. With
    DEBUG off it does nothing (the handlers do the work)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (settings.DEBUG and response.status_code in ERROR_PAGES
                and getattr(request, "resolver_match", None) is None and not getattr(response, "error_page", False)):
            return error_response(request, response.status_code)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not settings.DEBUG:
            return None
        if isinstance(exception, Http404):
            return error_response(request, 404)
        if isinstance(exception, PermissionDenied):
            return error_response(request, 403)
        if isinstance(exception, (BadRequest, SuspiciousOperation)):
            return error_response(request, 400)
        logger.error("Internal Server Error: %s", request.path, exc_info=exception)
        return error_response(request, 500)


#: What a JSON endpoint's refusal says when nothing more specific was given, by status.
JSON_REFUSALS = {400: "bad request", 403: "forbidden", 404: "not found", 405: "method not allowed"}
#: The attribute :func:`json_refusals` sets on the views it wraps (tests find the JSON endpoints by it).
JSON_ENDPOINT_ATTR = "json_endpoint"


def _json_refusal(status: int, message: str) -> JsonResponse:
    return JsonResponse({"error": message or JSON_REFUSALS[status]}, status=status)


def json_refusals(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Make a JSON endpoint of the site (outside the API, which has its own) answer every refusal in JSON.

    Put it outermost, above the access decorators. A refusal the view or a
    decorator raises (``Http404``, ``PermissionDenied``, ``BadRequest``,
    ``SuspiciousOperation``) and a refusal it returns in another format (a
    plain-text ``HttpResponseBadRequest``, the 405 of ``require_GET``) become
    ``{"error": "<message>"}`` with the same status (and the 405's ``Allow``
    header). A signed-out visitor is still sent to the login page; a JSON
    answer of the view is left as it is.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except Http404 as exc:
            return _json_refusal(404, str(exc))
        except PermissionDenied as exc:
            return _json_refusal(403, str(exc))
        except (BadRequest, SuspiciousOperation) as exc:
            return _json_refusal(400, str(exc))
        if response.status_code not in JSON_REFUSALS or response.get("Content-Type", "").startswith(
                "application/json"):
            return response
        text = "" if getattr(response, "error_page", False) else response.content.decode("utf-8", "replace").strip()
        answer = _json_refusal(response.status_code, text)
        if response.has_header("Allow"):
            answer["Allow"] = response["Allow"]
        return answer

    setattr(wrapper, JSON_ENDPOINT_ATTR, True)
    return wrapper
