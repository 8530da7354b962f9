"""Blindness: nothing an evaluator's browser receives (body or headers) names a
language model, carries a difficulty or ability value, question metadata, or
another evaluator's identity or answers."""
from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import LanguageModel, ModelResult, QuestionResult
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.studies import study_set_status
from tests.annotate.factories import make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Invitation 404s count towards the rate limit (annotate/core/ratelimit.py),
    kept in the cache across tests; start every test with none."""
    cache.clear()

FORM_RE = re.compile(r'name="pair" value="([0-9a-f]{16})".*?name="left" value="([0-9a-f]{16})"', re.S)
NUMERIC_FIELDS = ("eip", "eip_scaled", "simple_rank", "accuracy_difficulty", "irt_1pl", "irt_2pl", "irt_mirt")


def renderings(value: float) -> set[str]:
    """How a number could leak: repr and 2-4 decimals (2 only when |v| >= 1, to
    avoid matching harmless strings like "0.00")."""
    forms = {repr(value), f"{value:.3f}", f"{value:.4f}", str(value)}
    if abs(value) >= 1:
        forms.add(f"{value:.2f}")
    return forms


class Recorder:
    """A test client that keeps every response for the final scan."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.responses = []

    def get(self, url, **kw):
        response = self.client.get(url, **kw)
        self.responses.append((url, response))
        return response

    def post(self, url, data=None, **kw):
        response = self.client.post(url, data or {}, **kw)
        self.responses.append((url, response))
        return response


def forbidden_strings(study) -> set[str]:
    out = set(LanguageModel.objects.values_list("name", flat=True))
    question_ids = set(study.pairs.values_list("question_a_id", flat=True)) | set(
        study.pairs.values_list("question_b_id", flat=True)
    )
    for scores in QuestionResult.objects.filter(question_id__in=question_ids).values_list("scores", flat=True):
        assert set(NUMERIC_FIELDS) <= set(scores)
        for field in NUMERIC_FIELDS:
            out |= renderings(scores[field])
    for scores in ModelResult.objects.values_list("scores", flat=True):
        for field in ("eip", "eip_scaled", "accuracy"):
            out |= renderings(scores[field])
    out |= {"secret_level", "bo-other-evaluator"}
    return out


def test_no_evaluator_facing_response_reveals_models_scores_or_peers(settings):
    settings.CSRF_FAILURE_VIEW = "annotate.studies.views.judging.csrf_failure"
    catalog = make_catalog(per_subject=4)
    study = make_study(catalog, n_pairs=8, seed=5)
    invitation = invitation_create(study=study)
    other = make_evaluator(study, "bo-other-evaluator")
    # bo answers first, so the pages could in principle show their answers.
    bo = Client()
    bo.force_login(other.user)
    for _ in range(8):
        page = bo.get(reverse("annotate:study_judge", kwargs={"study_id": study.pk})).content.decode()
        pid, lid = FORM_RE.search(page).groups()
        bo.post(reverse("annotate:study_judge", kwargs={"study_id": study.pk}),
                {"pair": pid, "left": lid, "choice": "left"})

    web = Recorder(Client())
    sid = study.pk
    join = reverse("annotate:study_join", kwargs={"token": invitation.token})
    web.get(reverse("login"))
    web.get(join)
    web.post(join, {"consent": "yes"})
    web.get(reverse("annotate:study_entry", kwargs={"study_id": sid}))
    web.get(reverse("annotate:study_onboarding", kwargs={"study_id": sid}))
    web.post(reverse("annotate:study_onboarding", kwargs={"study_id": sid}), {"field_of_study": "nope"})
    web.post(
        reverse("annotate:study_onboarding", kwargs={"study_id": sid}),
        {"field_of_study": "arts", "education_level": "associate"},
    )
    web.get(reverse("annotate:study_guidelines", kwargs={"study_id": sid}))
    web.post(reverse("annotate:study_guidelines", kwargs={"study_id": sid}))
    judge = reverse("annotate:study_judge", kwargs={"study_id": sid})
    n_pages = 0
    while True:
        page = web.get(judge)
        if page.status_code == 302:
            break
        n_pages += 1
        pid, lid = FORM_RE.search(page.content.decode()).groups()
        web.post(judge, {"pair": pid, "left": lid, "choice": "bogus"})  # 400 page
        web.post(judge, {"pair": pid, "left": lid, "choice": "skip" if n_pages == 3 else "right"})
        web.post(judge, {"pair": pid, "left": lid, "choice": "left"})  # repeat, ignored
    assert n_pages == 8
    web.get(reverse("annotate:study_done", kwargs={"study_id": sid}))
    web.get(reverse("annotate:studies"))
    web.get(reverse("annotate:study_manage", kwargs={"study_id": sid}))  # 403
    web.get(reverse("annotate:home"))
    csrf = Recorder(Client(enforce_csrf_checks=True))
    csrf.client.cookies = web.client.cookies
    csrf.post(judge, {"pair": 1, "left": 1, "choice": "left"})
    study_set_status(study=study, status="closed")
    web.get(reverse("annotate:study_closed", kwargs={"study_id": sid}))

    forbidden = forbidden_strings(study)
    assert len(forbidden) > 30  # the check has teeth: model names and many numbers
    statuses = set()
    for url, response in web.responses + csrf.responses:
        statuses.add(response.status_code)
        text = response.content.decode() + "\n" + "\n".join(f"{k}: {v}" for k, v in response.items())
        leaked = sorted(s for s in forbidden if s in text)
        assert not leaked, (url, response.status_code, leaked)
    assert {200, 302, 400, 403} <= statuses
