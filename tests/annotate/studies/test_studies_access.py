"""Who can reach what, and the staff view of a study.

Cast: ``owner`` (staff), ``ada`` (evaluator in the study), ``outsider``
(evaluator in another study), anonymous visitors.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import Invitation, StudyStatus
from annotate.studies.selectors.study_monitor import study_monitor
from annotate.studies.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Invitation 404s count towards the rate limit (annotate/core/ratelimit.py),
    kept in the cache across tests; start every test with none."""
    cache.clear()

EVALUATOR_PAGES = ("study_entry", "study_onboarding", "study_guidelines", "study_judge", "study_done", "study_closed")
STAFF_PAGES = ("study_manage",)
STAFF_POSTS = ("study_status", "study_invitation_create")


@pytest.fixture
def cast():
    catalog = make_catalog(per_subject=4)
    study = make_study(catalog, n_pairs=6, name="Main")
    other = make_study(catalog, n_pairs=2, name="Other")
    owner = make_user("owner", staff=True)
    ada = make_evaluator(study, "ada")
    outsider = make_evaluator(other, "outsider")
    return study, other, owner, ada, outsider



def test_anonymous_visitors_are_sent_to_login(cast):
    study = cast[0]
    client = Client()
    for name in EVALUATOR_PAGES + STAFF_PAGES:
        url = reverse(f"annotate:{name}", kwargs={"study_id": study.pk})
        response = client.get(url)
        assert response.status_code == 302 and response.url == f"{reverse('login')}?next={url}", name
    assert client.get(reverse("annotate:studies")).url.startswith(reverse("login"))


def test_an_evaluator_cannot_reach_another_study(cast):
    _study, other, _, ada, _ = cast
    client = client_for(ada.user)
    for name in EVALUATOR_PAGES:
        assert client.get(reverse(f"annotate:{name}", kwargs={"study_id": other.pk})).status_code == 404, name
    assert client.post(reverse("annotate:study_judge", kwargs={"study_id": other.pk}), {"pair": 1}).status_code == 404


def test_an_evaluator_cannot_reach_staff_pages_or_the_admin(cast):
    study, _, _, ada, _ = cast
    client = client_for(ada.user)
    for name in STAFF_PAGES:
        assert client.get(reverse(f"annotate:{name}", kwargs={"study_id": study.pk})).status_code == 403
    for name in STAFF_POSTS:
        response = client.post(reverse(f"annotate:{name}", kwargs={"study_id": study.pk}), {"status": "closed"})
        assert response.status_code == 403
    assert Invitation.objects.count() == 0
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN
    admin = client.get("/admin/")
    assert admin.status_code == 302 and admin.url.startswith("/admin/login/")


def test_the_study_list_sends_an_evaluator_straight_to_their_study(cast):
    study, _, _, ada, _ = cast
    response = client_for(ada.user).get(reverse("annotate:studies"))
    assert response.url == reverse("annotate:study_entry", kwargs={"study_id": study.pk})


def test_staff_without_a_participation_do_not_get_judging_pages(cast):
    study, _, owner, _, _ = cast
    assert client_for(owner).get(reverse("annotate:study_judge", kwargs={"study_id": study.pk})).status_code == 404


def test_staff_see_every_study_and_manage_invitations_and_status(cast):
    study, _, owner, _, _ = cast
    client = client_for(owner)
    listing = client.get(reverse("annotate:studies")).content.decode()
    assert "Main" in listing and "Other" in listing
    client.post(reverse("annotate:study_invitation_create", kwargs={"study_id": study.pk}), {"note": "class of 2026"})
    invitation = Invitation.objects.get(study=study)
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert f"http://testserver/join/{invitation.token}/" in page and "class of 2026" in page
    client.post(reverse("annotate:study_invitation_revoke",
                        kwargs={"study_id": study.pk, "invitation_id": invitation.pk}))
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None
    assert Client().get(reverse("annotate:study_join", kwargs={"token": invitation.token})).status_code == 404
    client.post(reverse("annotate:study_status", kwargs={"study_id": study.pk}), {"status": "closed"})
    study.refresh_from_db()
    assert study.status == StudyStatus.CLOSED and study.closed_at is not None


def test_the_coverage_report_counts_votes_skips_and_seconds(cast):
    study, _, owner, ada, _ = cast
    t0 = timezone.now()
    # ada: vote after 10 s, vote after 40 s, skip after 3 s; leaves a 4th pair on screen.
    for seconds, choice in ((10, "left"), (40, "right"), (3, "skip")):
        screen = judging_screen(participation=ada, now=t0)
        judgment_submit(participation=ada, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice, now=t0 + timedelta(seconds=seconds))
    on_screen = judging_screen(participation=ada, now=t0)
    bo = make_evaluator(study, "bo")
    screen = judging_screen(participation=bo, now=t0)
    judgment_submit(participation=bo, pair_id=screen.pair.pk, left_question_id=screen.left.pk, choice="left",
                    now=t0 + timedelta(seconds=20))

    coverage = study_monitor(study=study)
    rows = {e.username: e for e in coverage.evaluators}
    assert (rows["ada"].judged, rows["ada"].skipped) == (2, 1)
    assert rows["ada"].skip_rate == pytest.approx(1 / 3, abs=1e-12)
    assert rows["ada"].median_seconds == pytest.approx(25.0, abs=1e-6)  # median(10, 40)
    assert (rows["bo"].judged, rows["bo"].skipped, rows["bo"].skip_rate) == (1, 0, 0.0)
    assert coverage.median_seconds == pytest.approx(20.0, abs=1e-6)  # median(10, 20, 40)
    assert (coverage.n_votes, coverage.n_skips) == (3, 1)
    cells = {p.pair_id: p.cells for p in coverage.pairs}
    assert cells[on_screen.pair.pk][0] == "…"
    assert sum(p.votes_a + p.votes_b for p in coverage.pairs) == 3 and sum(p.skips for p in coverage.pairs) == 1
    ada_cells = sorted(m for p in coverage.pairs for m in p.cells[:1] if m)  # by question identity: "A" or "B"
    assert len(ada_cells) == 4 and ada_cells[-2:] == ["S", "…"] and set(ada_cells[:2]) <= {"A", "B"}

    page = client_for(owner).get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert "3 votes, 1 skip; median 20.0 s per vote" in page
    assert "33%" in page  # ada's skip rate
