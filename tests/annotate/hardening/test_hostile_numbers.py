"""Hostile numbers in every number a researcher or a script types: the analysis
parameter forms, the API's id and count parameters (path, query, JSON body,
multipart field) and ``create_study``'s number options.

Each hostile value (a 20-digit integer, -1, 1e309, NaN, a NUL byte, 10,000
characters) ends as a clear refusal naming the parameter (a 4xx page or JSON
error, a ``CommandError`` naming the option), and nothing is written.

Cast: ``owner`` (staff, API token), ``rita`` (researcher).
"""
from __future__ import annotations

import json

import pytest
from django import forms
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotate.analyses.forms import analysis_form_class
from annotate.analyses.services import NEEDS_RESPONSE_SET, defaults
from annotate.api.services import api_token_create
from annotate.management.commands.create_study import OPTION_TYPES
from annotate.models import AnalysisKind, AnalysisRun, ScoringRun, Study
from tests.annotate.factories import client_for, make_catalog, make_researcher, make_user

pytestmark = pytest.mark.django_db

HOSTILE = ("99999999999999999999", "-1", "1e309", "NaN", "\x00", "9" * 10_000)


def _written() -> tuple[int, int, int]:
    return AnalysisRun.objects.count(), ScoringRun.objects.count(), Study.objects.count()


# --- the analysis forms ------------------------------------------------------------------------------


def _number_fields() -> list[tuple[str, str]]:
    """(kind, parameter) of every number parameter of every analysis (a number default, not a bool)."""
    return [(kind, name) for kind in AnalysisKind.values for name, default in defaults(kind).items()
            if isinstance(default, int | float) and not isinstance(default, bool)]


def test_the_walk_finds_the_number_fields_of_every_analysis():
    found = _number_fields()
    assert {k for k, _ in found} == set(AnalysisKind.values)
    for kind, name in found:  # each is a number field of the form (the scoring run: a list of run ids)
        field = analysis_form_class(kind).base_fields[name]
        assert isinstance(field, forms.TypedChoiceField if name == "run" else forms.IntegerField | forms.FloatField)
    assert {("human_labels", "run"), ("human_labels", "n_boot"), ("case_study", "n_seeds"), ("profiles", "bins"),
            ("efficiency", "seed"), ("scaling", "alpha")} <= set(found)


@pytest.mark.parametrize(("kind", "name"), _number_fields())
def test_an_analysis_form_refuses_a_hostile_number_in_its_own_field_and_starts_nothing(kind, name):
    catalog = make_catalog()
    client = client_for(make_researcher("rita"))
    data = {k: v for k, v in defaults(kind).items() if not isinstance(v, bool)}
    if kind in NEEDS_RESPONSE_SET:
        data["response_set"] = catalog.response_set.pk
    before = _written()
    for value in HOSTILE:
        response = client.post(reverse("annotate:analysis_kind", kwargs={"kind": kind}), {**data, name: value})
        assert response.status_code == 400, (kind, name, value[:30])
        errors = response.context["form"].errors
        assert name in errors, (kind, name, value[:30], errors)
        assert len(str(errors)) < 2_000  # the error does not repeat 10,000 characters
    assert _written() == before


# --- the API -----------------------------------------------------------------------------------------


def _api_id_paths() -> list[str]:
    """The route of every API endpoint with an integer in its path (``<int:...>``)."""
    found, todo = [], [(get_resolver(), "")]
    while todo:
        resolver, prefix = todo.pop()
        for p in resolver.url_patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                todo.append((p, route))
            elif isinstance(p, URLPattern) and route.startswith("api/") and "<int:" in route:
                found.append(route)
    return sorted(found)


#: Query and body parameters that hold an id or a count: (method, path, where, parameter, other fields).
API_NUMBERS = [
    ("get", "studies/{study}/report/", "query", "run", {}),
    ("get", "studies/{study}/report/", "query", "min_votes", {}),
    ("get", "studies/{study}/report/", "query", "n_boot", {}),
    ("get", "studies/{study}/report/", "query", "pairs_offset", {}),
    ("post", "scoring-runs/", "json", "response_set", {}),
    ("post", "scoring-runs/", "json", "model_ids", {"response_set": "{set}"}),
    ("post", "scoring-runs/", "json", "dataset_ids", {"response_set": "{set}"}),
    ("post", "studies/derived/", "json", "human_response_set", {"run": "{run}", "name": "d"}),
    ("post", "studies/derived/", "json", "run", {"human_response_set": "{set}", "name": "d"}),
    ("post", "studies/derived/", "json", "n_pairs", {"human_response_set": "{set}", "run": "{run}", "name": "d"}),
    ("post", "studies/derived/", "json", "seed", {"human_response_set": "{set}", "run": "{run}", "name": "d"}),
    ("post", "response-sets/{set}/human-labels/", "json", "run", {"label": "metadata:level"}),
    ("post", "response-sets/{set}/human-labels/", "json", "n_boot", {"label": "metadata:level"}),
    ("post", "response-sets/{set}/human-labels/", "json", "seed", {"label": "metadata:level"}),
    ("post", "studies/imported/", "form", "run", {"name": "imported"}),
]


def _json_value(text: str, name: str):
    """The hostile text as a script would send it in JSON: a number where it parses as one, else the text."""
    try:
        number = json.loads(text) if text not in ("NaN", "1e309") else float(text)
    except ValueError:
        number = text
    return [number] if name.endswith("_ids") else number


@pytest.fixture
def api():
    catalog = make_catalog()
    owner = make_user("owner", staff=True)
    study = Study.objects.create(name="Main", scoring_run=catalog.run, seed=1, n_pairs=1)
    client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=owner)[1]}")
    return client, {"study": study.pk, "set": catalog.response_set.pk, "run": catalog.run.pk}


def _refused(response, name: str) -> None:
    assert 400 <= response.status_code < 500, (name, response.status_code)
    assert response["Content-Type"].startswith("application/json"), name
    body = response.json()
    error = body["error"]
    # the parameter (in the message, or as the key of its field errors), or the missing thing, by name
    assert name in error or name in body.get("fields", {}) or "no " in error, (name, body)
    assert len(json.dumps(body)) < 1_000



@pytest.mark.parametrize("value", HOSTILE, ids=["huge", "negative", "1e309", "nan", "nul", "10k"])
def test_every_api_id_in_a_path_refuses_a_hostile_value_with_json(api, value):
    client, _ = api
    before = _written()
    for route in _api_id_paths():
        path = "/" + route
        while "<int:" in path:
            start = path.index("<int:")
            path = path[:start] + value + path[path.index(">", start) + 1:]
        response = client.post(path, {}) if "human" in route else client.get(path)
        assert 400 <= response.status_code < 500, (route, value[:30], response.status_code)
        assert response["Content-Type"].startswith("application/json"), route
    assert _written() == before


@pytest.mark.parametrize(("method", "path", "where", "name", "others"), API_NUMBERS,
                         ids=[f"{p}:{n}" for _, p, _, n, _ in API_NUMBERS])
def test_every_api_number_parameter_refuses_a_hostile_value_naming_it(api, method, path, where, name, others):
    client, ids = api
    url = "/api/" + path.format(**ids)
    fill = {k: int(v.format(**ids)) if isinstance(v, str) and v.startswith("{") else v for k, v in others.items()}
    before = _written()
    for value in HOSTILE:
        if where == "query":
            response = client.get(url, {name: value})
        elif where == "json":
            body = json.dumps({**fill, name: _json_value(value, name)}, allow_nan=True)
            response = client.post(url, body, content_type="application/json")
        else:
            response = client.post(url, {**fill, name: value})
        _refused(response, name)
    assert _written() == before


# --- create_study -------------------------------------------------------------------------------------


#: Every number option of create_study and the option's name.
OPTIONS = {"pairs": "--pairs", "seed": "--seed", "run_id": "--run", "target": "--target",
           "share": "--attention-check-share", "min_comparisons": "--min-comparisons",
           "random_share": "--random-share"}


def test_every_number_option_of_create_study_is_bounded():
    assert set(OPTIONS) == set(OPTION_TYPES)


@pytest.mark.parametrize("option", list(OPTIONS.values()))
def test_create_study_refuses_a_hostile_number_naming_the_option_and_writes_nothing(option):
    catalog = make_catalog()
    before = _written()
    for value in HOSTILE:
        with pytest.raises(CommandError) as caught:
            call_command("create_study", "--name", "S", "--datasets", catalog.dataset.name, f"{option}={value}")
        message = str(caught.value)
        assert option in message and len(message) < 500, (option, value[:30], message[:200])
    assert _written() == before
