"""A participant coming back to a study that filled by a stopping rule, or
closed, is recognised before the study's state is: the finished one sees the
done page with the completion code, the one with a pair on screen finishes
that pair only, a true newcomer is told the study is full (or closed) and
nothing is written for them.

Cast: crowd participants ``pid-001`` (finishes every pair and earns the code)
and ``pid-002`` (has a pair on screen when the budget is spent), both joined
through the invitation link in their own browser and come back in a fresh
one; ``cy`` (a named evaluator) spends the budget; ``late-9`` is a newcomer.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import ConsentDecline, Judgment, Participation, StoppingRules, StudyStatus
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import (
    invitation_create,
    participation_accept_guidelines,
    participation_onboard,
)
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from annotate.studies.services.studies import study_set_status
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user
from tests.annotate.judging_forms import form_data

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
CODE = "C0DE-123"
CROWD = {"speeder_seconds": 0.0, "participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID",
         "session_param": "SESSION_ID", "completion_code": CODE, "completion_url": ""}
FULL_TEXT = "This study is full"
CLOSED_TEXT = "This study is closed"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


class Clock:
    def __init__(self) -> None:
        self.now = START

    def tick(self) -> datetime:
        self.now += timedelta(seconds=30)
        return self.now


def answer_one(participation, clock: Clock) -> bool:
    """Serve ``participation`` a pair and answer "left"; False when nothing is left."""
    screen = judging_screen(participation=participation, now=clock.tick())
    if screen is None:
        return False
    judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                    choice="left", now=clock.tick())
    return True


def link(token: str, pid: str) -> str:
    return reverse("annotate:study_join", kwargs={"token": token}) + f"?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=x"


def join_by_link(token: str, pid: str) -> Participation:
    """``pid`` joins through the link in their own browser and gets ready to judge."""
    assert Client().post(link(token, pid), {"consent": "yes"}).status_code == 302
    participation = Participation.objects.get(platform_participant_id=pid)
    participation_onboard(participation=participation, field_of_study="mathematics", education_level="master_student")
    participation_accept_guidelines(participation=participation)
    return participation


@pytest.fixture
def world():
    """A 4-pair study (target 2 votes a pair) whose budget is 6 judgments: pid-001 answers all 4 pairs and is
    finished, pid-002 answers 1 and has a second on screen, cy's judgment is the 6th and fills the study."""
    study = make_study(make_catalog(per_subject=4), n_pairs=4, target=2, name="Crowd with a budget")
    study_quality_settings_update(study=study, **CROWD, resume_by_participant_id="on")
    assert stopping_rules_set(study=study, values=StoppingInput(max_judgments=6)) is not None
    token = invitation_create(study=study, note="Prolific").token
    clock = Clock()
    first, second = join_by_link(token, "pid-001"), join_by_link(token, "pid-002")
    cy = make_evaluator(study, "cy")
    while answer_one(first, clock):
        pass
    first.refresh_from_db()
    assert first.finished_at is not None and Judgment.objects.filter(participation=first).count() == 4
    assert answer_one(second, clock)
    on_screen = judging_screen(participation=second, now=clock.tick())
    assert on_screen is not None
    assert answer_one(cy, clock)
    rule = StoppingRules.objects.get(study=study)
    assert (rule.fired_rule, rule.fired_after_judgments) == ("budget", 6)
    return study, token, on_screen.pair.pk


def come_back(token: str, pid: str) -> tuple[Client, str]:
    """``pid`` opens the link in a fresh browser, agrees again, and follows where it leads: (client, last page)."""
    client = Client()
    page = client.get(link(token, pid))
    assert page.status_code == 200
    body = page.content.decode()
    assert FULL_TEXT not in body and CLOSED_TEXT not in body and 'name="consent"' in body
    followed = client.post(link(token, pid), {"consent": "yes"}, follow=True)
    assert followed.status_code == 200
    return client, followed.content.decode()


def test_the_finished_participant_gets_the_done_page_with_their_code_in_a_fresh_browser(world):
    _, token, _ = world
    rows = Participation.objects.count()
    _, page = come_back(token, "pid-001")
    assert "All done" in page and f'<code id="completion-code">{CODE}</code>' in page
    assert FULL_TEXT not in page
    assert Participation.objects.count() == rows == 3


def test_a_participant_mid_study_finishes_the_pair_on_screen_and_nothing_more(world):
    study, token, pair_id = world
    client, page = come_back(token, "pid-002")
    assert 'name="choice"' in page  # the judging page
    second = Participation.objects.get(platform_participant_id="pid-002")
    left_id = judging_screen(participation=second).left.pk
    response = client.post(reverse("annotate:study_judge", kwargs={"study_id": study.pk}),
                           form_data(client, study, pair_id, left_id, "left"), follow=True)
    body = response.content.decode()
    assert "All done" in body and f'<code id="completion-code">{CODE}</code>' in body
    assert list(Judgment.objects.filter(participation=second).order_by("pk").values_list("pair_id", flat=True))[-1] \
        == pair_id
    assert Judgment.objects.filter(participation=second).count() == 2
    assert Judgment.objects.filter(pair__study=study).count() == 7  # the budget's 6, and the pair that was on screen
    assert Participation.objects.count() == 3


def test_a_true_newcomer_is_told_the_study_is_full_and_nothing_is_written(world):
    _, token, _ = world
    client = Client()
    body = client.get(link(token, "late-9")).content.decode()
    assert FULL_TEXT in body and 'name="consent"' not in body
    assert FULL_TEXT in client.post(link(token, "late-9"), {"consent": "yes"}).content.decode()
    assert FULL_TEXT in client.post(link(token, "late-9"), {"consent": "no"}).content.decode()
    assert (Participation.objects.count(), ConsentDecline.objects.count()) == (3, 0)
    assert "_auth_user_id" not in client.session


def test_a_known_id_that_may_not_continue_here_is_refused_not_told_the_study_is_full(world):
    study, token, _ = world
    study_quality_settings_update(study=study, **CROWD, resume_by_participant_id="same_browser")
    response = Client().get(link(token, "pid-001"))
    body = response.content.decode()
    assert response.status_code == 409
    assert "has already joined this study; it continues only in the browser it joined with" in body
    assert FULL_TEXT not in body and Participation.objects.count() == 3


def test_the_same_browser_comes_back_to_its_done_page(world):
    """Signed in (the session of the browser that joined): the link goes straight to the participant's next step."""
    study, token, _ = world
    client = Client()
    client.force_login(Participation.objects.get(platform_participant_id="pid-001").user)
    response = client.get(link(token, "pid-001"), follow=True)
    assert response.redirect_chain[-1][0] == reverse("annotate:study_done", kwargs={"study_id": study.pk})
    assert f'<code id="completion-code">{CODE}</code>' in response.content.decode()


def test_in_a_closed_study_the_finished_participant_gets_the_code_the_others_are_told_it_is_closed(world):
    study, token, _ = world
    study_set_status(study=study, status=StudyStatus.CLOSED)
    _, page = come_back(token, "pid-001")
    assert "All done" in page and f'<code id="completion-code">{CODE}</code>' in page
    _, page = come_back(token, "pid-002")  # mid-study: a closed study takes no answer, their progress is kept
    assert CLOSED_TEXT in page and "Answers you gave before it closed are kept" in page
    assert "completion-code" not in page
    newcomer = Client()
    body = newcomer.get(link(token, "late-9")).content.decode()
    assert CLOSED_TEXT in body and 'name="consent"' not in body
    assert CLOSED_TEXT in newcomer.post(link(token, "late-9"), {"consent": "yes"}).content.decode()
    assert (Participation.objects.count(), ConsentDecline.objects.count()) == (3, 0)
    assert Judgment.objects.filter(pair__study=study).count() == 6


def test_the_manage_page_status_line_leads_with_the_rule_that_filled_the_study(world):
    study, _, _ = world
    owner = Client()
    owner.force_login(make_user("owner", staff=True))
    url = reverse("annotate:study_manage", kwargs={"study_id": study.pk})
    status = '<strong id="study-status">Full — stopped by the budget rule at 6 judgments</strong>'
    assert status in owner.get(url).content.decode()
    study_set_status(study=study, status=StudyStatus.CLOSED)  # closed says more than full: no answer is taken
    assert '<strong id="study-status">closed</strong>' in owner.get(url).content.decode()
