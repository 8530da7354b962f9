"""A study that stops by a rule, in a real browser: the researcher chooses the
rules on the manage page, sees each rule's state with projections and their
cost, the budget fires, and a late participant following the invitation
link is told the study is full, while a participant who finished comes back
through the same link in a new browser and gets their completion code.

Cast: ``owner`` (staff, logs in); evaluators ``ada``, ``bob``, ``cy`` (their
answers are recorded through the judging service); a late crowd participant
with PID ``late-1``; ``ada`` joined as PID ``pid-001``. Screenshots go to /tmp/h26_*.png.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Participation, StoppingRules, Study
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import difficulty_of, make_catalog, make_evaluator, make_study, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def log_in(page: Page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.locator("form button[type=submit], form input[type=submit]").first.click()


def test_a_study_stops_by_its_budget_and_a_late_participant_sees_it_is_full(live_server, page: Page, browser):
    catalog = make_catalog(per_subject=8)
    study = make_study(catalog, n_pairs=24, target=4, name="Pilot with a budget")
    invitation = invitation_create(study=study, note="Prolific batch 1")
    make_user("owner", staff=True, password="owner-pass-1")
    page.set_default_timeout(15_000)
    log_in(page, live_server.url, "owner", "owner-pass-1")
    manage = f"{live_server.url}/studies/{study.pk}/manage/"
    page.goto(manage)
    expect(page.locator("#no-stopping-rule")).to_be_visible()
    page.fill("#id_target_reliability", "0.8")
    page.select_option("#id_method_a", "eip")
    page.select_option("#id_method_b", "simple_rank")
    page.fill("#id_max_judgments", "30")
    page.fill("#id_pay_per_judgment", "0.15")
    page.click("#save-stopping")
    expect(page.locator("#stopping-table")).to_be_visible()
    assert StoppingRules.objects.get(study=study).max_judgments == 30

    # Evaluators answer until 27 judgments, a skip now and then. Where EIP and simple rank disagree on a pair, the
    # answer sides with whichever method has fewer such votes so far, so the comparison stays undecided whatever
    # order the pairs come in (the order depends on the evaluators' ids).
    eip = {q.pk: difficulty_of(k)["eip_scaled"] for k, q in enumerate(catalog.questions)}
    simple = {q.pk: difficulty_of(k)["simple_rank"] for k, q in enumerate(catalog.questions)}
    people = [make_evaluator(study, name) for name in ("ada", "bob", "cy")]
    now = START
    discordant = {"eip": 0, "simple": 0}

    def judge(participation) -> bool:
        nonlocal now
        now += timedelta(seconds=40)
        screen = judging_screen(participation=participation, now=now)
        if screen is None:
            return False
        shown = (screen.left.pk, screen.right.pk)
        by_eip, by_simple = max(shown, key=eip.__getitem__), max(shown, key=simple.__getitem__)
        side = "eip" if discordant["eip"] <= discordant["simple"] else "simple"
        harder = by_eip if by_eip == by_simple or side == "eip" else by_simple
        choice = "skip" if screen.pair.position % 9 == 4 else ("left" if harder == screen.left.pk else "right")
        if choice != "skip" and by_eip != by_simple:
            discordant[side] += 1
        now += timedelta(seconds=40)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice, now=now)
        return True

    for k in range(27):
        assert judge(people[k % 3]), (k, StoppingRules.objects.get(study=study).fired_rule)
    page.goto(manage + "?pay=0.20")
    expect(page.locator("#projection-budget")).to_have_text("3")
    expect(page.locator("#cost-budget")).to_have_text("0.60")
    expect(page.locator("#rule-comparison")).to_contain_text("votes that tell the methods apart side with EIP")
    expect(page.locator("#rule-reliability")).to_contain_text("SSR")
    page.screenshot(path="/tmp/h26_manage_projections.png", full_page=True)

    # bob has a pair on screen when the budget is spent by ada and cy: he finishes it, then he is done.
    now += timedelta(seconds=5)
    bob_screen = judging_screen(participation=people[1], now=now)
    assert bob_screen is not None
    for participation in (people[0], people[2], people[0]):
        assert judge(participation)
    rule = StoppingRules.objects.get(study=study)
    assert (rule.fired_rule, rule.fired_after_judgments) == ("budget", 30)
    assert judging_screen(participation=people[0], now=now) is None
    assert judging_screen(participation=people[1], now=now).pair.pk == bob_screen.pair.pk
    assert judge(people[1]) and judging_screen(participation=people[1], now=now) is None

    # ada joined from a crowd platform as PID pid-001 and finished with the budget: she earned the code.
    Participation.objects.filter(pk=people[0].pk).update(platform_participant_id="pid-001")
    Study.objects.filter(pk=study.pk).update(completion_code="C0DE-123")
    assert Participation.objects.get(pk=people[0].pk).finished_at is not None

    page.goto(manage)
    expect(page.locator("#stopping-fired")).to_contain_text("Study full")
    expect(page.locator("#stopping-fired")).to_contain_text("after 30 judgments")
    expect(page.locator("#study-status")).to_have_text("Full — stopped by the budget rule at 30 judgments")
    page.screenshot(path="/tmp/h26_manage_full.png", full_page=True)

    # A late participant from the crowd platform.
    late = browser.new_context().new_page()
    late.goto(f"{live_server.url}/join/{invitation.token}/?PROLIFIC_PID=late-1&STUDY_ID=s&SESSION_ID=x")
    expect(late.locator("#study-full")).to_have_text("This study is full")
    expect(late.locator("body")).not_to_contain_text(re.compile("I agree"))
    late.screenshot(path="/tmp/h26_full.png", full_page=True)
    assert study.participations.count() == 3

    # ada opens the same link in a new browser: she is no newcomer; she agrees again and sees her code.
    again = browser.new_context().new_page()
    again.goto(f"{live_server.url}/join/{invitation.token}/?PROLIFIC_PID=pid-001&STUDY_ID=s&SESSION_ID=y")
    expect(again.locator("#study-full")).to_have_count(0)
    again.click("#join-start")
    expect(again.locator("#completion-code")).to_have_text("C0DE-123")
    again.screenshot(path="/tmp/h26_returning_done.png", full_page=True)
    assert study.participations.count() == 3
