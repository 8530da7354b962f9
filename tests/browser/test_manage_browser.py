"""The researcher's manage page in a real browser, and a crowd participant's
visit from a Prolific-style link to the completion redirect.

Cast: ``owner`` (staff, logs in); ``ada`` (attentive, steady), ``bob`` (a
speeder who fails an attention check); a crowd participant with PID
``pid-zoe``. Screenshots go to /tmp/h14b_*.png.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Participation, StudyStatus
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.studies import study_create
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import make_catalog, make_evaluator, make_user
from tests.annotate.studies.quality.helpers import answer_all, set_eip

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EIP = [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7]


def checked_study():
    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, EIP)
    return study_create(name="Crowd pilot", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                        attention_check_share=0.5)


def log_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.locator("form button[type=submit], form input[type=submit]").first.click()


def test_the_researcher_sees_the_flags_excludes_the_speeder_and_closes(live_server, page: Page):
    study = checked_study()
    invitation = invitation_create(study=study, note="Prolific batch 1")
    ada, bob = make_evaluator(study, "ada"), make_evaluator(study, "bob")
    answer_all(ada, lambda p: p.expected_harder_id if p.attention_check else p.question_a_id, start=START,
               seconds=40.0)
    answer_all(bob, lambda p: (p.question_b_id if p.expected_harder_id == p.question_a_id else p.question_a_id)
               if p.attention_check else p.question_a_id, start=START, seconds=1.5)
    make_user("owner", staff=True, password="owner-pass-1")
    page.set_default_timeout(10_000)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)

    log_in(page, live_server.url, "owner", "owner-pass-1")
    page.goto(f"{live_server.url}/studies/{study.pk}/manage/")
    expect(page.locator("#live-speeders")).to_have_text("1")
    expect(page.locator("#live-attention")).to_have_text("50% (2 of 4)")
    expect(page.locator(f"#evaluator-{bob.pk} .speeder")).to_have_text("speeder")
    page.screenshot(path="/tmp/h14b_manage.png", full_page=True)

    page.click(f"button[data-copy=prolific-{invitation.pk}]")
    expect(page.locator("#copy-status")).to_contain_text("Link copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == (f"{live_server.url}/join/{invitation.token}/"
                      "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")

    expect(page.locator(f"#reason-{bob.pk}")).to_have_value("median 1.5 s per vote, below 5.0 s")
    page.locator(f"#evaluator-{bob.pk} form.exclude-form button").click()
    expect(page.locator(f"#evaluator-{bob.pk}")).to_contain_text("excluded")
    expect(page.locator("#live-excluded")).to_have_text("1")
    page.screenshot(path="/tmp/h14b_manage_excluded.png", full_page=True)

    page.click("#close-study")
    expect(page.locator("h1")).to_have_text("Close “Crowd pilot”?")
    page.screenshot(path="/tmp/h14b_close_confirm.png", full_page=True)
    page.click("#confirm-status")
    expect(page.locator("#study-status")).to_have_text("closed")
    study.refresh_from_db()
    assert study.status == StudyStatus.CLOSED
    bob.refresh_from_db()
    assert bob.exclusion_reason == "median 1.5 s per vote, below 5.0 s"

    page.click("#report-link")
    expect(page.locator("#table-excluded_evaluators")).to_contain_text("median 1.5 s per vote, below 5.0 s")
    expect(page.locator("#attention-note")).to_contain_text("2 attention-check pairs")
    page.screenshot(path="/tmp/h14b_report_excluded.png", full_page=True)


def test_a_crowd_participant_arrives_with_ids_and_is_sent_back_with_the_code(live_server, page: Page):
    study = checked_study()
    study_quality_settings_update(study=study, speeder_seconds=5, participant_param="PROLIFIC_PID",
                                  study_param="STUDY_ID", session_param="SESSION_ID", completion_code="C0MPL3TE",
                                  completion_url=f"{live_server.url}/?cc=C0MPL3TE",
                                  completion_min_check_share=0)  # this participant calls every pair "left"
    invitation = invitation_create(study=study)
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/join/{invitation.token}/?PROLIFIC_PID=pid-zoe&STUDY_ID=st-1&SESSION_ID=se-1")
    page.click("#join-start")
    page.select_option("select[name=field_of_study]", "mathematics")
    page.select_option("select[name=education_level]", "phd")
    page.click("#onboarding-next")
    page.click("#start-judging")
    for _ in range(4):  # 2 pairs and 2 attention checks, by keyboard
        page.wait_for_load_state("load")  # judging.js (deferred) listens for the keys
        pair = page.locator("input[name=pair]").get_attribute("value")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            """prev => { const el = document.querySelector('input[name=pair]');
                         return (el && el.value !== prev) || document.title.startsWith('Done'); }""", arg=pair)
    expect(page.locator("#completion-code")).to_have_text("C0MPL3TE")
    page.screenshot(path="/tmp/h14b_done.png", full_page=True)
    expect(page).to_have_url(re.compile(r"/\?cc=C0MPL3TE$"), timeout=15_000)
    participation = Participation.objects.get(study=study)
    assert (participation.platform_participant_id, participation.platform_study_id,
            participation.platform_session_id) == ("pid-zoe", "st-1", "se-1")
    assert participation.judgments.count() == 4
