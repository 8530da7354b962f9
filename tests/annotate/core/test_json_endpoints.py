"""Every JSON endpoint of the site outside the API answers its refusals in JSON.

The endpoints are found by walking the URL patterns: every route that ends in
``.json`` (outside ``api/``, which has its own errors) and every view marked
by :func:`annotate.core.views.errors.json_refusals` (the Markdown preview
answers JSON too). Each is asked as an evaluator (403), for an object that
does not exist (404), with bad input (400) and with the wrong method (405
where it takes one method): each answer is ``{"error": "<message>"}`` with
``application/json``. A signed-out visitor is still sent to the login page.

Cast: ``olga`` (researcher, owns the study), ``ada`` (evaluator in it).
"""
from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.core.views.errors import JSON_ENDPOINT_ATTR
from annotate.studies.views.access import ERR_NO_STUDY, ERR_ROLE
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_researcher, make_study

pytestmark = pytest.mark.django_db

#: How each endpoint is asked: its method, and the query or form data of a request it refuses as bad input
#: (None: it has no input to refuse).
REQUESTS = {
    "study_scope_counts": ("get", {"run": "not a number"}),
    "markdown_preview": ("post", {"text": "x" * 100_001}),
    "study_report_json": ("get", {"n_boot": "many"}),
    "analysis_run_json": ("get", None),
}
MISSING_ID = 987654


def _json_endpoints() -> dict[str, str]:
    """URL name -> route of every JSON endpoint of the site outside the API."""
    found: dict[str, str] = {}

    def walk(patterns, prefix: str, namespace: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), p.namespace or namespace)
            elif isinstance(p, URLPattern):
                route = prefix + str(p.pattern)
                if route.startswith("api/") or not p.name:
                    continue
                if route.endswith(".json") or getattr(p.callback, JSON_ENDPOINT_ATTR, False):
                    found[f"{namespace}:{p.name}" if namespace else p.name] = route

    walk(get_resolver().url_patterns, "", "")
    return found


def _kwargs(route: str, study_id: int) -> dict[str, int]:
    return {name: study_id for name in ("study_id", "analysis_id") if f"<int:{name}>" in route}


def _refusal(response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.content[:200])
    assert response["Content-Type"] == "application/json", response["Content-Type"]
    document = response.json()
    assert set(document) >= {"error"} and document["error"], document
    return document["error"]


def test_the_walk_finds_every_json_endpoint_and_each_is_marked():
    endpoints = _json_endpoints()
    assert sorted(endpoints) == sorted(f"annotate:{name}" for name in REQUESTS)
    resolver = get_resolver()
    for name in endpoints:
        view = resolver.resolve(reverse(name, kwargs=_kwargs(endpoints[name], 1))).func
        assert getattr(view, JSON_ENDPOINT_ATTR, False), name


@pytest.fixture
def cast():
    olga = make_researcher("olga")
    study = make_study(make_catalog(), owner=olga, n_pairs=2)
    return {"study": study, "olga": olga, "ada": make_evaluator(study, "ada").user}


@pytest.mark.parametrize("name", list(REQUESTS))
def test_every_refusal_of_a_json_endpoint_is_json(cast, name):
    route = _json_endpoints()[f"annotate:{name}"]
    method, bad = REQUESTS[name]
    study = cast["study"]
    url = reverse(f"annotate:{name}", kwargs=_kwargs(route, study.pk))
    # an evaluator: not a researcher
    assert _refusal(getattr(client_for(cast["ada"]), method)(url, {}), 403) == ERR_ROLE
    olga = client_for(cast["olga"])
    if _kwargs(route, 0):  # an object that does not exist
        missing = reverse(f"annotate:{name}", kwargs=_kwargs(route, MISSING_ID))
        message = _refusal(getattr(olga, method)(missing, {}), 404)
        assert message in (ERR_NO_STUDY, "not found", "No AnalysisRun matches the given query.")
    if bad is not None:
        _refusal(getattr(olga, method)(url, bad), 400)
    other = "post" if method == "get" else "get"
    wrong = getattr(olga, other)(url)
    if wrong.status_code == 405:
        _refusal(wrong, 405)
        assert wrong["Allow"] == method.upper()
    # signed out: the login page, as every page of the site
    anonymous = getattr(client_for(None), method)(url, {})
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")


def test_a_bad_request_says_what_is_wrong(cast):
    olga = client_for(cast["olga"])
    counts = _refusal(olga.get(reverse("annotate:study_scope_counts"), {"run": "x"}), 400)
    assert "run" in counts.lower() and "<" not in counts
    report = _refusal(olga.get(reverse("annotate:study_report_json", kwargs={"study_id": cast["study"].pk}),
                               {"n_boot": "many"}), 400)
    assert report.startswith("Bad report parameters") and "n_boot" in report
    preview = _refusal(olga.post(reverse("annotate:markdown_preview"), {"text": "x" * 100_001}), 400)
    assert preview.startswith("No preview:")
