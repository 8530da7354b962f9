"""The OpenAPI 3.1 description: valid, served, complete, and true to the answers.

Oracles: openapi-spec-validator for the document; the URL resolver for the
list of API routes; jsonschema (Draft 2020-12, the dialect of OpenAPI 3.1) for
real responses against the documented component schemas.
"""
from __future__ import annotations

import io
import re

import jsonschema
import pytest
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from openapi_spec_validator import validate

from annotate.api.schema import openapi_schema
from annotate.api.tokens import api_token_create
from annotate.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def api_routes() -> dict[str, tuple[str, ...]]:
    """OpenAPI path -> HTTP methods, for every URL pattern whose name starts with "api_"."""
    routes: dict[str, tuple[str, ...]] = {}

    def walk(patterns, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern) and (p.name or "").startswith("api_"):
                path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", prefix + str(p.pattern))
                routes["/" + path] = tuple(m.lower() for m in p.callback.api_methods)

    walk(get_resolver().url_patterns, "")
    return routes


def validator_for(component: str) -> jsonschema.Draft202012Validator:
    document = openapi_schema()
    return jsonschema.Draft202012Validator({**document, "$ref": f"#/components/schemas/{component}"})


def test_the_document_is_valid_openapi_3_1():
    document = openapi_schema()
    assert document["openapi"] == "3.1.0"
    validate(document)  # raises OpenAPIValidationError when invalid


def test_the_validator_does_catch_a_broken_document():
    broken = openapi_schema()
    broken["paths"]["/api/studies/"]["get"]["responses"] = {"200": {"no-description": True}}
    with pytest.raises(Exception, match="description"):
        validate(broken)


def test_every_api_route_is_documented_with_its_methods_and_nothing_else():
    documented = {
        path: tuple(sorted(m for m in item if m in ("get", "post", "put", "patch", "delete")))
        for path, item in openapi_schema()["paths"].items()
    }
    routes = {path: tuple(sorted(methods)) for path, methods in api_routes().items()}
    assert documented == routes


@pytest.mark.django_db
def test_it_is_served_to_anyone_at_api_openapi_json():
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json() == openapi_schema()


@pytest.mark.django_db
def test_real_answers_match_the_documented_schemas():
    catalog = make_catalog(per_subject=3)
    study = make_study(catalog, n_pairs=3, name="Schema")
    participation = make_evaluator(study, "evaluator-s1")
    screen = judging_screen(participation=participation)
    judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                    choice="left", client_seconds=2.5)
    staff = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('owner', staff=True))[1]}")

    upload = io.BytesIO(b"model,question_id,credit\nm1,q1,1\nm2,q1,0\n")
    upload.name = "schema.csv"
    created = staff.post(reverse("api_response_sets"), {"responses": upload, "dataset": "schema-ds"}).json()
    validator_for("ResponseSet").validate(created)
    bad = io.BytesIO(b"model,question_id,credit\nm1,q1,9\n")
    bad.name = "bad.csv"
    validator_for("Error").validate(staff.post(reverse("api_response_sets"), {"responses": bad, "dataset": "x"}).json())
    with override_settings(TASKS=IMMEDIATE):
        run = staff.post(reverse("api_scoring_runs"), {"response_set": catalog.response_set.pk,
                                                       "params": {"methods": ["eip", "accuracy"]}},
                         content_type="application/json").json()
    validator_for("ScoringRun").validate(run)
    for study_row in staff.get(reverse("api_studies")).json()["studies"]:
        validator_for("Study").validate(study_row)
    rows = staff.get(reverse("api_study_judgments", kwargs={"study_id": study.pk})).json()["judgments"]
    assert len(rows) == 1
    validator_for("Judgment").validate(rows[0])
    validator_for("Error").validate(Client().get(reverse("api_studies")).json())
    # and the validator is not vacuous:
    with pytest.raises(jsonschema.ValidationError):
        validator_for("ScoringRun").validate({**run, "status": "exploded"})
