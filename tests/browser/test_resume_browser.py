"""No stranger in an evaluator's seat (issue 13), in a real browser.

Evaluator A joins by invitation, judges a pair and logs out; the next person on
the same browser opens an invitation link and must start as a new evaluator,
not as A. The pages run under the production Content-Security-Policy, and the
browser must report no violation of it.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Judgment, Participation
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def onboard_and_open_judging(page: Page) -> None:
    expect(page).to_have_url(re.compile(r"/onboarding/$"))
    page.select_option("select[name=field_of_study]", "arts")
    page.select_option("select[name=education_level]", "phd")
    page.click("#onboarding-next")
    page.click("#start-judging")
    expect(page.locator("h1")).to_have_text("Which question is harder?")


def test_after_logout_the_next_person_on_the_browser_is_not_signed_in_as_the_evaluator(live_server, page: Page,
                                                                                      settings):
    settings.CSP_ENABLED = True
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    study = make_study(make_catalog(per_subject=3), n_pairs=4, seed=5)
    first_link = f"{live_server.url}/join/{invitation_create(study=study).token}/"
    second_link = f"{live_server.url}/join/{invitation_create(study=study).token}/"
    page.set_default_timeout(10_000)

    # Evaluator A joins, judges one pair, logs out.
    page.goto(first_link)
    page.click("#join-start")
    onboard_and_open_judging(page)
    a_name = page.locator(".who").inner_text()
    assert re.fullmatch(r"evaluator-[0-9a-f]{4}", a_name)
    page.click("#choose-left")
    expect(page.locator("[data-count=judged]")).to_have_text("Judged 1")
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    assert not [c for c in page.context.cookies() if c["name"] == "eip_evaluator"]

    # The next person opens an invitation link (another one, then A's own): not A.
    for link in (second_link, first_link):
        page.goto(link)
        expect(page.locator("#join-start")).to_have_text("I agree — start")  # the consent step, not signed in
        expect(page.locator(".who")).to_have_count(0)  # nobody signed in
        assert a_name not in page.content()
    page.goto(second_link)
    page.click("#join-start")
    onboard_and_open_judging(page)  # a new evaluator goes through onboarding again
    b_name = page.locator(".who").inner_text()
    assert b_name != a_name
    expect(page.locator("[data-count=judged]")).to_have_text("Judged 0")

    users = {p.user.username for p in Participation.objects.filter(study=study)}
    assert users == {a_name, b_name}
    assert Judgment.objects.filter(participation__user__username=b_name).count() == 0
    assert violations == []
