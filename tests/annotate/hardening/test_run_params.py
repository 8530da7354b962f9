"""A scoring run's parameters have one set of bounds (``annotate.core.run_params``), read by the
service, the API and the analysis forms alike: a value past them is a 400 naming the parameter,
and nothing is queued. A run that fails anyway stores a sentence, not a raw ``ValueError: ...``."""
from __future__ import annotations

import pytest
from django.test import Client

from annotate.analyses.forms import analysis_form_class
from annotate.api.services import api_token_create
from annotate.core import MIN_MODELS_MAX, MIRT_EPOCHS_MAX, SEED_MAX, TOL_MAX, run_failure_text
from annotate.models import AnalysisKind, ScoringRun
from annotate.runs.services.scoring import DEFAULT_PARAMS, MIRT_SEEDS, scoring_run_create
from tests.annotate.factories import make_catalog, make_user

pytestmark = pytest.mark.django_db

#: Per parameter: the largest accepted value, the smallest refused one above it, the message's range.
EDGES = {
    "alpha": (0.999, 1.0, "a number in (0, 1)"),
    "tol": (TOL_MAX, TOL_MAX * 1.0001, "a finite number in (0, 0.01]"),
    "mirt_epochs": (MIRT_EPOCHS_MAX, MIRT_EPOCHS_MAX + 1, "an integer from 1 to 100,000"),
    "mirt_seed": (SEED_MAX, SEED_MAX + 1, "an integer from 0 to 4,294,967,295"),
    "mirt_seeds": (MIRT_SEEDS, MIRT_SEEDS + 1, f"an integer from 1 to {MIRT_SEEDS}"),
    "min_models": (MIN_MODELS_MAX, MIN_MODELS_MAX + 1, "an integer from 1 to 1,000,000"),
}


def test_every_run_parameter_has_an_upper_bound():
    assert set(EDGES) == set(DEFAULT_PARAMS)


@pytest.fixture
def api():
    catalog = make_catalog()
    client = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('owner', staff=True))[1]}")
    return client, catalog.response_set


@pytest.mark.parametrize("name", list(EDGES))
def test_the_api_and_the_service_refuse_a_value_past_a_bound_naming_the_parameter(api, name):
    client, response_set = api
    highest, refused, words = EDGES[name]
    before = ScoringRun.objects.count()
    for value in (refused, 99999999999999999999):
        response = client.post("/api/scoring-runs/", {"response_set": response_set.pk, "params": {name: value}},
                               content_type="application/json")
        assert response.status_code == 400, (name, value)
        assert response.json()["error"] == f"{name} must be {words}; got {value!r}"
    assert ScoringRun.objects.count() == before
    assert scoring_run_create(response_set=response_set, params={name: highest}).params[name] == highest


def test_the_analysis_forms_bound_epochs_and_seeds_like_the_runs():
    form = analysis_form_class(AnalysisKind.CASE_STUDY)()
    assert form.fields["mirt_epochs"].max_value == MIRT_EPOCHS_MAX
    assert form.fields["seed"].max_value == SEED_MAX


def test_a_failed_run_stores_a_sentence():
    text = run_failure_text(ValueError("Maximum allowed dimension exceeded"), step="computing MIRT")
    assert text == "The run stopped while computing MIRT: Maximum allowed dimension exceeded (ValueError)"
    assert run_failure_text(KeyboardInterrupt(), step="storing the results") == (
        "The run stopped while storing the results: no message (KeyboardInterrupt)")
