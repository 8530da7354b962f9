"""Property-based run of schemathesis against the generated OpenAPI document:
no request that schemathesis derives from the document, valid or not, gets a 5xx.

The document is loaded from the Django WSGI application itself (no server);
every operation is called with a staff token, on a database holding a
finished scoring run, a study with judgments and a loaded response set, so
that valid ids lead somewhere. Bounded by ``MAX_EXAMPLES`` per operation.
"""
from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from annotate.api.services import api_token_create
from annotate.models import ResponseSet
from annotate.studies.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

MAX_EXAMPLES = 15
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """As ``django.test.Client`` does: a request through the WSGI app must not close the
    connection that holds the test's transaction (PostgreSQL would lose it)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def staff_headers() -> dict[str, str]:
    """A staff token, and objects with small ids for the generated ids to hit."""
    catalog = make_catalog(per_subject=3)
    study = make_study(catalog, n_pairs=3, name="Fuzzed")
    participation = make_evaluator(study, "evaluator-f1")
    for choice in ("left", "skip"):
        screen = judging_screen(participation=participation)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice)
    _, key = api_token_create(user=make_user("owner", staff=True))
    return {"Authorization": f"Token {key}"}


def test_every_operation_is_fuzzed():
    # schemathesis leaves out the operation serving the document itself (GET /api/openapi.json)
    operations = {(r.ok().method.upper(), r.ok().path) for r in schema.get_all_operations()}
    assert operations == {
        ("GET", "/api/response-sets/"), ("POST", "/api/response-sets/"),
        ("GET", "/api/response-sets/{response_set_id}/"),
        ("POST", "/api/scoring-runs/"), ("GET", "/api/scoring-runs/{run_id}/"), ("GET", "/api/uploads/{upload_id}/"),
        ("GET", "/api/scoring-runs/{run_id}/questions/"), ("GET", "/api/scoring-runs/{run_id}/models/"),
        ("GET", "/api/studies/"),
        ("GET", "/api/studies/{study_id}/report/"), ("GET", "/api/studies/{study_id}/judgments/"),
        ("POST", "/api/response-sets/{response_set_id}/human/"),
        ("POST", "/api/response-sets/{response_set_id}/human-labels/"), ("GET", "/api/analysis-runs/{analysis_id}/"),
        ("POST", "/api/studies/derived/"), ("POST", "/api/studies/imported/"),
    }


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_request_gets_a_server_error(case, staff_headers):
    case.call_and_validate(headers=staff_headers, checks=[not_a_server_error])


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(("body", "error"), [
    ({"response_set": 1, "model_ids": list(range(1, 300_001))},
     "model_ids lists 300,000 ids; the limit is 10,000 (setting MAX_ID_LIST_LENGTH)"),
    ({"response_set": 1, "dataset_ids": list(range(1, 10_002))},
     "dataset_ids lists 10,001 ids; the limit is 10,000 (setting MAX_ID_LIST_LENGTH)"),
    ({"response_set": 1, "params": {"methods": _nested(400)}},
     "JSON nested deeper than 100 levels (the limit, setting JSON_MAX_DEPTH)"),
])
def test_the_limits_answer_a_clear_400_not_a_server_error(staff_headers, body, error):
    body = {**body, "response_set": ResponseSet.objects.get().pk}  # ids do not restart on PostgreSQL
    case = schema["/api/scoring-runs/"]["POST"].Case(body=body, media_type="application/json")
    response = case.call_and_validate(headers=staff_headers, checks=[not_a_server_error])
    assert response.status_code == 400
    assert response.json() == {"error": error}
