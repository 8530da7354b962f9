"""The JSON API (django-ninja): the :class:`~ninja.NinjaAPI`, its OpenAPI
document and the interactive docs page (researchers and staff).

Scripts upload a response set, start and poll a scoring run, and download a
study's report and judgments (:mod:`annotate.api.views`). The OpenAPI 3.1
document is generated from the endpoints and their schemas
(:mod:`annotate.api.schemas`) and served to anyone at ``/api/openapi.json``;
the docs page that renders it (Swagger UI) at ``/api/docs/``, to signed-in
researchers and staff (most endpoints are the researchers'; each one still
checks its own access when tried out).
"""
from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, re_path, reverse
from ninja import NinjaAPI, Swagger
from ninja.openapi.docs import render_template
from ninja.parser import Parser
from ninja.responses import Response

from annotate.api.errors import ApiError, api_not_found, install_error_handlers, json_method_not_allowed
from annotate.api.views import router
from annotate.core import JsonTooDeepError, loads_bounded
from annotate.studies import researcher_required

TITLE = "EIP human-alignment API"
DESCRIPTION = (
    "Authenticate with a per-user token: `Authorization: Token <key>` "
    "(`manage.py create_api_token --user NAME` prints a key once; only its hash is stored). "
    "A logged-in browser session also works; then POST requests need the CSRF token. "
    "Uploads and scoring runs need a staff account; studies, reports and judgments a researcher "
    "or staff account; evaluators have no access. Errors are JSON objects with an `error` message."
)
OPENAPI_NAME = "openapi.json"


class _JsonOrNothing(Parser):
    """A JSON body; one that is not JSON reads as ``null`` (the schema then refuses it with our message).
    One nested deeper than ``JSON_MAX_DEPTH`` is a 400 saying so."""

    def parse_body(self, request: HttpRequest) -> Any:
        try:
            return loads_bounded(request.body)
        except JsonTooDeepError as error:
            raise ApiError(400, str(error)) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None


class _DocsSwagger(Swagger):
    """Swagger UI reading our document; "try it out" sends the session's CSRF token.
    Our page template: a language, a main landmark, AA contrast and named selects
    (``annotate/api/swagger.html``); no deep links (a link inside each operation's
    toggle button is a nested control and a target under 24 px)."""

    template = "annotate/api/swagger.html"
    default_settings = {**Swagger.default_settings, "deepLinking": False}

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        settings = {**self.settings, "url": reverse("annotate:api_openapi")}
        context = {"swagger_settings": json.dumps(settings, indent=1), "api": api, "add_csrf": True}
        return render_template(request, self.template, self.template_cdn, context)


class _Api(NinjaAPI):
    def get_content_type(self) -> str:
        return self.renderer.media_type  # "application/json": JSON is UTF-8 by definition (RFC 8259)


api = _Api(
    title=TITLE,
    version="1.0.0",
    description=DESCRIPTION,
    openapi_url=None,  # served by the operation below, at the same URL as before ninja
    docs_url=None,  # served by docs() below, to researchers and staff
    docs=_DocsSwagger(),
    urls_namespace="annotate-api",
    parser=_JsonOrNothing(),
    servers=[{"url": "/", "description": "this site"}],
    openapi_extra={"info": {"summary": "Upload response sets, run the difficulty methods, download study "
                                       "reports and judgments.",
                            "license": {"name": "MIT", "identifier": "MIT"}}},
)
install_error_handlers(api)


@api.get("/" + OPENAPI_NAME, auth=None, response=dict[str, Any], url_name="api_openapi",
         operation_id="getOpenApi", summary="This document (OpenAPI 3.1). Anyone.")
def openapi(request: HttpRequest) -> HttpResponse:
    prefix = request.path.removesuffix(OPENAPI_NAME)
    return Response(api.get_openapi_schema(path_prefix=prefix))


api.add_router("", router)


@researcher_required
def docs(request: HttpRequest) -> HttpResponse:
    """The interactive docs page (Swagger UI) of the generated document, for
    researchers and staff (most endpoints are theirs; each still checks its own access)."""
    return api.docs.render_page(request, api)


def api_urlpatterns() -> list[URLPattern]:
    """The endpoints' URL patterns (to mount under ``api/``), without a namespace so
    that their names stay ``api_*``; a 405 answers in JSON like every other error.
    The last pattern takes every other path under the prefix: a JSON 404
    (:func:`annotate.api.errors.api_not_found`), never the site's HTML page."""
    patterns, _, _ = api.urls
    return [
        *(path(str(p.pattern), json_method_not_allowed(p.callback), name=p.name)
          for p in patterns
          if p.name != "api-root"),  # ninja's placeholder for the API's root URL
        re_path(r"^.*$", api_not_found, name="api_not_found"),
    ]
