"""No 5xx from participant or researcher input, and nothing written on a refusal.

Property tests (Hypothesis) over every participant-facing view (join with its
platform ids, decline, "start fresh", onboarding, judging, done, closed) and
the new-study form with its live counts (``eligible.json``): hostile strings
(NUL bytes, lone surrogates sent as the raw bytes a browser would send,
control characters, over-long values) and hostile integers (huge, negative,
with signs and spaces). Every answer must be below 500; an answer that
refuses (4xx, or the form shown again) must leave every table as it was.
Run on SQLite and PostgreSQL. Example counts are modest (suite time).
"""
from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings, strategies as st

from annotate.models import (
    Assignment,
    ConsentDecline,
    Invitation,
    Judgment,
    Pair,
    Participation,
    Study,
)
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_evaluator, make_researcher, make_study

pytestmark = pytest.mark.django_db
EXAMPLES = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TABLES = (Participation, ConsentDecline, Judgment, Assignment, Study, Pair, Invitation, get_user_model())

NASTY = ["\x00", "a\x00b", "\ud800", "x\udfffy", "\x1b[0m", "\u202e", "\ufeff", " ", "", "-1", "0", "+1", " 7 ",
         "1e309", "nan", "inf", "-inf", "１２", "0x10", "9" * 19, "9" * 20, "99999999999999999999",
         str(2**63), str(-(2**63) - 1), "x" * 5000, "<script>alert(1)</script>", "' OR 1=1 --", "%00", "..", "/"]
hostile_text = st.one_of(
    st.sampled_from(NASTY),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
)
hostile_int = st.one_of(st.integers(min_value=-(2**80), max_value=2**80), st.sampled_from([0, -1, 2**63, 2**64]))


def encoded(params: dict[str, object]) -> str:
    """``params`` as a browser sends them: UTF-8 bytes, a lone surrogate as its
    raw (invalid) UTF-8 bytes, percent-encoded."""
    parts = []
    for name, value in params.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            raw = str(item).encode("utf-8", "surrogatepass")
            parts.append(f"{quote(name)}={quote(raw, safe='')}")
    return "&".join(parts)


def counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in TABLES)


def refused(status: int) -> bool:
    return 400 <= status < 500


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study() -> Study:
    return make_study(make_catalog(per_subject=4), n_pairs=4, name="Hostile")


@pytest.fixture
def token(study) -> str:
    return invitation_create(study=study).token


@given(pid=hostile_text, sid=hostile_text, session=hostile_text, consent=hostile_text)
@EXAMPLES
def test_the_join_page_never_fails_on_hostile_platform_ids(token, pid, sid, session, consent):
    cache.clear()
    url = reverse("annotate:study_join", kwargs={"token": token})
    query = encoded({"PROLIFIC_PID": pid, "STUDY_ID": sid, "SESSION_ID": session})
    client = Client()
    assert client.get(f"{url}?{query}").status_code < 500
    before = counts()
    response = client.post(f"{url}?{query}", encoded({"consent": consent}),
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code < 500
    if refused(response.status_code) or response.status_code == 200:
        assert counts() == before
    fresh = client.post(reverse("annotate:study_join_fresh", kwargs={"token": token}) + f"?{query}")
    assert fresh.status_code < 500


@given(bad=hostile_text)
@EXAMPLES
def test_a_hostile_invitation_token_is_refused_without_a_write(bad):
    cache.clear()
    before = counts()
    path = quote(bad.encode("utf-8", "surrogatepass"), safe="") or "x"
    for suffix in ("", "declined/"):
        client = Client()
        assert client.get(f"/join/{path}/{suffix}").status_code < 500
        assert client.post(f"/join/{path}/{suffix}", {"consent": "yes"}).status_code < 500
    assert counts() == before


@given(field=hostile_text, level=hostile_text, subjects=st.lists(hostile_text, max_size=3))
@EXAMPLES
def test_onboarding_never_fails_on_hostile_values(study, field, level, subjects):
    participation = Participation.objects.filter(study=study, user__username="ona").first() or make_evaluator(
        study, "ona", ready=False)
    client = Client()
    client.force_login(participation.user)
    url = reverse("annotate:study_onboarding", kwargs={"study_id": study.pk})
    before = counts()
    response = client.post(url, encoded({"field_of_study": field, "education_level": level,
                                         "qualified_subjects": subjects}),
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code < 500
    if response.status_code != 302:
        assert counts() == before


@given(pair=hostile_text, left=hostile_text, choice=hostile_text, client_ms=hostile_text)
@EXAMPLES
def test_the_judging_form_never_fails_on_hostile_values(study, pair, left, choice, client_ms):
    participation = Participation.objects.filter(study=study, user__username="jo").first() or make_evaluator(
        study, "jo")
    client = Client()
    client.force_login(participation.user)
    url = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    assert client.get(url).status_code < 500
    before = counts()
    response = client.post(url, encoded({"pair": pair, "left": left, "choice": choice, "client_ms": client_ms}),
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code < 500
    assert counts() == before  # a forged pair token never matches the one on screen: always refused


@given(study_id=hostile_int, unsaved=hostile_text)
@EXAMPLES
def test_participant_pages_never_fail_on_hostile_ids(study, study_id, unsaved):
    participation = Participation.objects.filter(study=study, user__username="id").first() or make_evaluator(
        study, "id")
    client = Client()
    client.force_login(participation.user)
    before = counts()
    for name in ("study_entry", "study_onboarding", "study_guidelines", "study_judge", "study_done",
                 "study_closed"):
        path = reverse(f"annotate:{name}", kwargs={"study_id": study.pk}).replace(f"/{study.pk}/", f"/{study_id}/")
        response = client.get(f"{path}?{encoded({'unsaved': unsaved})}")
        assert response.status_code < 500, (name, study_id)
    if study_id != study.pk:
        assert counts() == before


FORM_FIELDS = ("name", "run", "datasets", "subjects", "n_pairs", "pairs_per_subject", "strategy",
               "adaptive_min_comparisons", "adaptive_random_share", "target_judgments_per_pair",
               "attention_check_share", "seed", "guidelines", "consent_text", "onboarding_questions", "members",
               "speeder_seconds", "participant_param", "study_param", "session_param", "completion_code",
               "completion_url")


@given(values=st.fixed_dictionaries({}, optional=dict.fromkeys(FORM_FIELDS, hostile_text)),
       ids=st.lists(hostile_int, max_size=3))
@EXAMPLES
def test_the_new_study_form_and_its_counts_never_fail_on_hostile_values(study, values, ids):
    owner = get_user_model().objects.filter(username="owner").first() or make_researcher("owner")
    client = Client()
    client.force_login(owner)
    data = {"name": "Hostile form", "run": study.scoring_run_id, "datasets": [d.pk for d in study.datasets.all()],
            "n_pairs": 2, "strategy": "uniform", "target_judgments_per_pair": 3, "seed": 1,
            "attention_check_share": 0, "speeder_seconds": 5, **values}
    if ids:
        data["datasets"] = ids
    before = counts()
    response = client.post(reverse("annotate:study_create"), encoded(data),
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code < 500
    if response.status_code != 302:
        assert counts() == before
    else:
        Study.objects.exclude(pk=study.pk).delete()
    query = encoded({"run": data["run"], "datasets": data["datasets"], "subjects": data.get("subjects", ""),
                     "include_unkept": data.get("name", "")})
    assert client.get(reverse("annotate:study_scope_counts") + f"?{query}").status_code < 500
