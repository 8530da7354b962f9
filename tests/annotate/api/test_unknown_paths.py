"""A path under /api/ that no endpoint has answers the API's JSON 404, whatever
the method and whoever asks; a path outside the API still gets the site's HTML
404 page, and the API's own routes answer as before.

Cast: an anonymous client, ``owner`` (staff) by token and by session (with the
CSRF check on, as a browser).
"""
from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from annotate.api.errors import ERR_NO_ENDPOINT, ERR_NO_ENDPOINT_SLASH, PATH_CHARS
from annotate.api.services import api_token_create
from tests.annotate.factories import make_user

pytestmark = pytest.mark.django_db

DOCUMENT = "/api/openapi.json"
UNKNOWN = [
    ("get", "/api/nope"),
    ("get", "/api/nope/"),
    ("get", "/api/"),
    ("post", "/api/v1/whatever"),
    ("put", "/api/v1/studies/1/"),
    ("patch", "/api/studies/1/nope/"),
    ("delete", "/api/response-sets/1/x/y/z/"),
    ("options", "/api/scoring-runs/1/nope/"),
    ("head", "/api/..%2f..%2fetc/passwd"),
]


@pytest.fixture
def clients() -> dict[str, Client]:
    owner = make_user("owner", staff=True)
    _, key = api_token_create(user=owner)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(owner)
    return {"anonymous": Client(), "token": Client(HTTP_AUTHORIZATION=f"Token {key}"), "session": browser}


def _json_404(response) -> dict:
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content) if response.content else {}


@pytest.mark.parametrize("who", ["anonymous", "token", "session"])
@pytest.mark.parametrize(("method", "path"), UNKNOWN)
def test_an_unknown_api_path_is_the_apis_json_404(clients, who, method, path):
    response = getattr(clients[who], method)(path)
    body = _json_404(response)
    if method != "head":  # a HEAD answer has no body
        assert body == {"error": ERR_NO_ENDPOINT.format(path=response.wsgi_request.path, document=DOCUMENT)}


@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_a_known_endpoint_without_its_trailing_slash_is_named_not_redirected(clients, method):
    response = getattr(clients["token"], method)("/api/studies")
    assert _json_404(response) == {"error": ERR_NO_ENDPOINT_SLASH.format(path="/api/studies")}
    response = clients["token"].get("/api/scoring-runs/7/models")
    assert _json_404(response) == {"error": ERR_NO_ENDPOINT_SLASH.format(path="/api/scoring-runs/7/models")}


def test_a_long_unknown_path_is_cut_in_the_message(clients):
    path = "/api/" + "x" * 5000
    message = _json_404(clients["anonymous"].get(path))["error"]
    assert message == ERR_NO_ENDPOINT.format(path=path[:PATH_CHARS] + "…", document=DOCUMENT)


@pytest.mark.parametrize("path", ["/nope/", "/apix/", "/api-docs/", "/studies/1/nope/", "/results/runs/x/"])
def test_an_unknown_path_outside_the_api_is_still_the_sites_html_404(clients, path):
    response = clients["session"].get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "<h1>Page not found</h1>" in response.content.decode()


@override_settings(DEBUG=True)
def test_with_debug_on_an_unknown_api_path_is_still_json_and_the_site_keeps_its_page(clients):
    assert _json_404(clients["anonymous"].get("/api/nope"))["error"].startswith("no API endpoint at /api/nope")
    page = clients["anonymous"].get("/nope/")
    assert page.status_code == 404 and "<h1>Page not found</h1>" in page.content.decode()


def test_the_apis_routes_answer_as_before(clients):
    document = clients["anonymous"].get(DOCUMENT)
    assert document.status_code == 200 and document.json()["openapi"] == "3.1.0"
    assert clients["token"].get("/api/studies/").status_code == 200
    refused = clients["token"].options("/api/studies/")
    assert refused.status_code == 405 and refused["Allow"] == "GET"
    assert clients["anonymous"].get("/api/studies/").status_code == 401
    missing = clients["token"].get("/api/scoring-runs/424242/")
    assert missing.status_code == 404 and missing.json() == {"error": "no scoring run 424242"}
