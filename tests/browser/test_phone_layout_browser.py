"""The judging page on a phone: the questions stack, so they are called top and
bottom (the buttons too); a touch screen shows no key hints; the header keeps
to two rows. Screenshots go to ``$EIP_SCREENSHOTS`` when it is set."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import Browser, expect

from tests.annotate.factories import make_catalog, make_evaluator, make_study
from tests.browser.flow import log_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("EIP_SCREENSHOTS", "")


def judging_page(browser: Browser, live_server, **context):
    study = make_study(make_catalog(per_subject=4), n_pairs=3, seed=3)
    ada = make_evaluator(study, "ada")
    page = browser.new_context(**context).new_page()
    page.set_default_timeout(30_000)
    log_in_as(page, live_server.url, ada.user)
    page.goto(f"{live_server.url}/studies/{study.pk}/judge/")
    return page


def test_on_a_phone_the_stacked_questions_are_top_and_bottom_without_key_hints(live_server, browser: Browser):
    page = judging_page(browser, live_server, viewport={"width": 390, "height": 844}, is_mobile=True,
                        has_touch=True, device_scale_factor=2)
    assert page.locator("#q-left-title").inner_text() == "Top question"  # what is rendered, hidden words aside
    assert page.locator("#q-right-title").inner_text() == "Bottom question"
    expect(page.get_by_role("heading", name="Top question", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Top is harder")).to_be_visible()
    expect(page.get_by_role("button", name="Bottom is harder")).to_be_visible()
    assert page.locator("#q-left-title").bounding_box()["y"] < page.locator("#q-right-title").bounding_box()["y"]
    assert page.locator(".judge-form kbd:visible").count() == 0 and not page.locator(".key-hint").is_visible()
    header = page.locator("header.topbar").bounding_box()
    assert header["height"] < 100, header  # two rows at most
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "h25a_phone_judging.png"))  # full_page would drop the touch emulation


def test_on_a_wide_screen_the_questions_are_left_and_right_with_key_hints(live_server, browser: Browser):
    page = judging_page(browser, live_server, viewport={"width": 1280, "height": 800})
    assert page.locator("#q-left-title").inner_text() == "Left question"
    assert page.locator("#q-right-title").inner_text() == "Right question"
    expect(page.get_by_role("heading", name="Left question", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Left is harder")).to_be_visible()
    expect(page.locator(".key-hint")).to_be_visible()
