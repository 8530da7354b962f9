"""The whole evaluator flow by keyboard only, with a visible focus ring on
every element Tab reaches (issue 14, point 8): consent, onboarding,
guidelines, three pairs with math typeset by KaTeX, the done page.

Screenshots of the judging page go to /tmp/h14c_*.png for a human to look at.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Choice, Judgment, Participation
from annotate.studies.services.participation import invitation_create
from tests.browser.flow import focused, latex_study, math_done, tab_to

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_evaluator_does_the_whole_study_by_keyboard(live_server, page: Page):
    study = latex_study(n_pairs=3)
    invitation = invitation_create(study=study)
    page.set_default_timeout(10_000)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/join/{invitation.token}/")

    tab_to(page, lambda f: f["id"] == "join-start")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("About you")
    assert Participation.objects.get(study=study).consented_at is not None

    tab_to(page, lambda f: f["name"] == "field_of_study")
    page.keyboard.press("ArrowDown")  # the first real choice after the empty one
    tab_to(page, lambda f: f["name"] == "education_level")
    page.keyboard.press("ArrowDown")
    tab_to(page, lambda f: f["name"] == "qualified_subjects")
    page.keyboard.press("Space")
    tab_to(page, lambda f: f["id"] == "onboarding-next")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Guidelines")
    participation = Participation.objects.get(study=study)
    assert participation.field_of_study and participation.education_level
    assert participation.qualified_subjects.count() == 1

    tab_to(page, lambda f: f["id"] == "start-judging")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Which question is harder?")
    page.wait_for_selector("#judge-form[data-keys=on]", state="attached")
    math_done(page)
    # KaTeX typeset every piece of delimited math on screen (raw LaTeX without delimiters stays text, so a
    # pair with question 3861 may carry a single piece of math: which pair comes first depends on the seed)
    n_math = page.locator("span.math").count()
    assert n_math >= 1 and page.locator("span.math.math-done").count() == n_math
    assert page.locator("span.math.math-error").count() == 0
    page.screenshot(path="/tmp/h14c_judge.png", full_page=True)

    # pair 1: Tab through the question boxes (scrollable, so focusable) to the left button, Enter
    box = tab_to(page, lambda f: f["tag"] == "DIV")
    assert box["visible"]
    page.screenshot(path="/tmp/h14c_judge_focus.png")
    tab_to(page, lambda f: f["id"] == "choose-left")
    page.screenshot(path="/tmp/h14c_judge_button_focus.png")
    first = page.locator("input[name=pair]").get_attribute("value")
    page.keyboard.press("Enter")
    page.wait_for_function("p => document.querySelector('input[name=pair]').value !== p", arg=first)
    page.wait_for_selector("#judge-form[data-keys=on]", state="attached")
    # pair 2: the arrow key; pair 3: S skips
    second = page.locator("input[name=pair]").get_attribute("value")
    math_done(page)
    page.screenshot(path="/tmp/h14c_judge_pair2.png", full_page=True)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("p => document.querySelector('input[name=pair]').value !== p", arg=second)
    page.wait_for_selector("#judge-form[data-keys=on]", state="attached")
    math_done(page)
    page.screenshot(path="/tmp/h14c_judge_pair3.png", full_page=True)
    page.keyboard.press("s")
    expect(page.locator("h1")).to_have_text("All done — thank you!")
    assert focused(page) is None or focused(page)["visible"]

    choices = sorted(Judgment.objects.filter(participation__study=study).values_list("choice", flat=True))
    assert choices == sorted([Choice.LEFT, Choice.RIGHT, Choice.SKIP])


def test_declining_by_keyboard_ends_the_visit(live_server, page: Page):
    study = latex_study(n_pairs=1)
    invitation = invitation_create(study=study)
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/join/{invitation.token}/")
    tab_to(page, lambda f: f["id"] == "consent-decline")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("You are not taking part")
    assert Participation.objects.filter(study=study).count() == 0
    assert study.consent_declines.count() == 1
