"""The completion code is earned, in a real browser: a participant who skips
everything, or fails the attention checks, finishes without the code and sees
why (with the platform's return link); a careful one gets the code.

Each participant joins through the invitation link in a browser of their own
and presses the judging page's buttons; which question is which is read from
the page's text, as a person would.
"""
from __future__ import annotations

import re

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect

from annotate.models import Pair, Question
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.studies import study_create
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import make_catalog, make_user
from tests.annotate.studies.quality.helpers import set_eip

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
CODE = "PAID-7Q2"
RETURN = "https://app.prolific.com/submissions/complete?cc=NOCODE"


def question_text(page, side: str) -> str:
    """The text of the question on ``side`` as the page shows it, without its options."""
    return page.locator(f".question.{side} .question-text").evaluate(
        """el => { const copy = el.cloneNode(true);
                   copy.querySelectorAll('ol.options').forEach(ol => ol.remove());
                   return copy.textContent.trim(); }""")


def run_participant(browser: Browser, link: str, decide, shots: str | None = None) -> str:
    """Join, onboard, judge every pair with ``decide(left, right, check) -> "left"|"right"|"skip"``; the done page."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(link)
    page.click("#join-start")
    expect(page).to_have_url(re.compile(r"/onboarding/$"))
    page.select_option("select[name=field_of_study]", "arts")
    page.select_option("select[name=education_level]", "phd")
    page.click("#onboarding-next")
    page.click("#start-judging")
    by_text = {q.text: q for q in Question.objects.all()}
    checks = {frozenset((p.question_a_id, p.question_b_id)): p.expected_harder_id
              for p in Pair.objects.filter(attention_check=True)}
    while "/judge/" in page.url:
        left = by_text[question_text(page, "left")]
        right = by_text[question_text(page, "right")]
        expected = checks.get(frozenset((left.pk, right.pk)))
        choice = decide(left.pk, right.pk, expected)
        page.click({"left": "#choose-left", "right": "#choose-right", "skip": "#choose-skip"}[choice])
        page.wait_for_load_state()
    expect(page).to_have_url(re.compile(r"/done/$"))
    if shots:
        page.screenshot(path=shots, full_page=True)
    html = page.content()
    context.close()
    return html


def test_only_the_careful_participant_gets_the_code(live_server, browser: Browser, tmp_path):
    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7])  # two checks: q0-3 and q1-2 harder
    study = study_create(name="Paid work", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                         attention_check_share=0.5)
    study_quality_settings_update(study=study, speeder_seconds=5, participant_param="PROLIFIC_PID",
                                  study_param="STUDY_ID", session_param="SESSION_ID", completion_code=CODE,
                                  completion_url="", screened_out_url=RETURN)
    link = f"{live_server.url}/join/{invitation_create(study=study).token}/"

    def skipper(left, right, expected):
        return "skip"

    def careless(left, right, expected):  # answers every pair, calls every check the wrong way
        if expected is None:
            return "left"
        return "right" if expected == left else "left"

    def careful(left, right, expected):
        return "left" if expected in (None, left) else "right"

    skipped = run_participant(browser, link, skipper, shots=str(tmp_path / "not-earned.png"))
    assert CODE not in skipped
    assert "You answered 0 pairs (skips do not count as answers)" in skipped
    assert f'href="{RETURN.replace("&", "&amp;")}"' in skipped and 'id="return-link"' in skipped

    failed = run_participant(browser, link, careless)
    assert CODE not in failed
    assert "You answered 0 of the 2 such pairs you were shown as expected" in failed
    assert "You answered 0 pairs" not in failed

    earned = run_participant(browser, link, careful, shots=str(tmp_path / "earned.png"))
    assert f'<code id="completion-code">{CODE}</code>' in earned
    assert "shortfalls" not in earned

    # The researcher's manage page counts who fell short, and why.
    context = browser.new_context()
    page = context.new_page()
    client = Client()
    client.force_login(make_user("owner", staff=True))
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page.goto(f"{live_server.url}/studies/{study.pk}/manage/")
    expect(page.locator("#completion-finished")).to_have_text("3")
    expect(page.locator("#completion-earned")).to_have_text("1")
    expect(page.locator("#completion-short-votes")).to_have_text("1")
    expect(page.locator("#completion-short-checks")).to_have_text("2")
    page.locator("#completion").screenshot(path=str(tmp_path / "manage-completion.png"))
    page.locator("#quality-settings").screenshot(path=str(tmp_path / "manage-settings.png"))
    context.close()
