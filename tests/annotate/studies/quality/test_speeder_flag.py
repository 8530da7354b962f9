"""The manage page's pace column: median server seconds per vote and the
speeder flag below the study's threshold (default 5 s).

Cast: ``owner`` (staff), evaluators ``ada`` (fast) and ``bob`` (steady).
"""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models.studies import DEFAULT_SPEEDER_SECONDS
from annotate.studies.selectors.study_monitor import study_monitor
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user
from tests.annotate.studies.quality.helpers import answer_all

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def cast():
    study = make_study(make_catalog(per_subject=4), n_pairs=4, name="Pace")
    ada, bob = make_evaluator(study, "ada"), make_evaluator(study, "bob")
    # ada: a skip after 1 s (not timed), then votes taking 2, 3 and 10 s -> median of (2, 3, 10) = 3.
    steps = iter([None, "a", "a", "a"])
    answer_all(ada, lambda pair: pair.question_a_id if next(steps) else None, start=START, seconds=[1, 2, 3, 10])
    # bob: votes taking 4, 6, 5 and 9 s -> median of (4, 5, 6, 9) = (5 + 6) / 2 = 5.5.
    answer_all(bob, lambda pair: pair.question_b_id, start=START, seconds=[4, 6, 5, 9])
    return study, make_user("owner", staff=True)


def manage_page(study, owner) -> str:
    client = Client()
    client.force_login(owner)
    return client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()


def test_the_median_counts_votes_only_and_flags_below_the_threshold(cast):
    study, owner = cast
    assert study.speeder_seconds == DEFAULT_SPEEDER_SECONDS == 5.0
    rows = {e.username: e for e in study_monitor(study=study).evaluators}
    assert rows["ada"].median_seconds == pytest.approx(3.0, abs=1e-9)
    assert rows["bob"].median_seconds == pytest.approx(5.5, abs=1e-9)
    assert (rows["ada"].speeder, rows["bob"].speeder) == (True, False)
    assert (rows["ada"].judged, rows["ada"].skipped, rows["ada"].assigned) == (3, 1, 4)
    page = manage_page(study, owner)
    assert page.count('<span class="flag speeder">speeder</span>') == 1
    assert '<dd id="live-speeders">1</dd>' in page


def test_the_researcher_sets_the_threshold(cast):
    study, owner = cast
    client = Client()
    client.force_login(owner)
    response = client.post(reverse("annotate:study_quality_settings", kwargs={"study_id": study.pk}), {
        "speeder_seconds": "6", "participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID",
        "session_param": "SESSION_ID", "completion_code": "", "completion_url": "",
    })
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.speeder_seconds == 6.0
    rows = {e.username: e for e in study_monitor(study=study).evaluators}
    assert (rows["ada"].speeder, rows["bob"].speeder) == (True, True)  # 5.5 < 6
    assert manage_page(study, owner).count('<span class="flag speeder">speeder</span>') == 2


def test_an_evaluator_without_votes_is_never_a_speeder(cast):
    study, _ = cast
    make_evaluator(study, "cy")
    row = {e.username: e for e in study_monitor(study=study).evaluators}["cy"]
    assert (row.median_seconds, row.speeder, row.judged, row.assigned) == (None, False, 0, 0)


def test_a_negative_threshold_is_refused_and_nothing_changes(cast):
    study, owner = cast
    client = Client()
    client.force_login(owner)
    client.post(reverse("annotate:study_quality_settings", kwargs={"study_id": study.pk}), {
        "speeder_seconds": "-1", "participant_param": "PROLIFIC_PID", "study_param": "", "session_param": "",
        "completion_code": "X", "completion_url": "",
    })
    study.refresh_from_db()
    assert (study.speeder_seconds, study.completion_code) == (5.0, "")
