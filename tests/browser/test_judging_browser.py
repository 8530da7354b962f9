"""An evaluator judges a whole 8-pair study in a real browser.

Joins by invitation, fills the onboarding form, reads the guidelines, then
judges with the mouse and the keyboard, skips one pair, refreshes, uses the
back button, double-clicks a choice, and finishes. The database must hold
exactly one judgment or skip per pair.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Choice, Judgment, Participation
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_study
from tests.annotate.judging_forms import token_of
from tests.browser.flow import id_on_screen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def wait_for_next(page: Page, previous: int, participation) -> None:
    """Wait until the page shows another pair (than id ``previous``) or the done page."""
    page.wait_for_function(
        """prev => { const el = document.querySelector('input[name=pair]');
                     return (el && el.value !== prev) || document.title.startsWith('Done'); }""",
        arg=token_of(participation, previous),
    )


def test_an_evaluator_judges_a_whole_study_in_the_browser(live_server, page: Page):
    # Mathematics has 4 questions (6 pairs), Physics 4 (6 pairs); the study takes 8.
    study = make_study(make_catalog(per_subject=4), n_pairs=8, seed=11)
    invitation = invitation_create(study=study)
    page.set_default_timeout(10_000)

    page.goto(f"{live_server.url}/join/{invitation.token}/")
    page.click("#join-start")
    expect(page).to_have_url(re.compile(r"/onboarding/$"))
    page.select_option("select[name=field_of_study]", "computer_science")
    page.select_option("select[name=education_level]", "bachelor_student")
    page.get_by_label("Mathematics").check()
    page.click("#onboarding-next")
    expect(page.locator("h1")).to_have_text("Guidelines")
    page.click("#start-judging")
    expect(page.locator("h1")).to_have_text("Which question is harder?")

    participation = Participation.objects.get(study=study)
    assert participation.field_of_study == "computer_science"
    assert re.fullmatch(r"evaluator-[0-9a-f]{4}", participation.user.username)

    expected: dict[int, str] = {}  # pair id -> choice we made

    # 1. mouse: left
    pid = id_on_screen(page, participation)
    page.click("#choose-left")
    wait_for_next(page, pid, participation)
    expected[pid] = Choice.LEFT
    expect(page.locator("[data-count=judged]")).to_have_text("Judged 1")

    # 2. keyboard: arrow right
    pid = id_on_screen(page, participation)
    page.keyboard.press("ArrowRight")
    wait_for_next(page, pid, participation)
    expected[pid] = Choice.RIGHT

    # 3. keyboard: S skips
    pid = id_on_screen(page, participation)
    page.keyboard.press("s")
    wait_for_next(page, pid, participation)
    expected[pid] = Choice.SKIP
    expect(page.locator("[data-count=skipped]")).to_have_text("Skipped 1")

    # 4. refresh shows the same pair, same way round; then a double click
    pid = id_on_screen(page, participation)
    left_text = page.locator("section.question.left").inner_text()
    page.reload()
    assert id_on_screen(page, participation) == pid
    assert page.locator("section.question.left").inner_text() == left_text
    page.dblclick("#choose-right")
    wait_for_next(page, pid, participation)
    expected[pid] = Choice.RIGHT
    doubled = pid

    # 5. back button: the previous page comes back either re-fetched (the
    # pending pair) or from the cache with the already-judged pair; answering
    # that again changes nothing.
    pid = id_on_screen(page, participation)
    page.go_back()
    back_pid = id_on_screen(page, participation)
    assert back_pid in (pid, doubled)
    page.click("#choose-left")
    wait_for_next(page, back_pid, participation)
    if back_pid == doubled:
        assert id_on_screen(page, participation) == pid  # the pending pair is still pending
    else:
        expected[back_pid] = Choice.LEFT

    # 6. a second tab with the same pair: answer in one, then in the other.
    pid = id_on_screen(page, participation)
    other_tab = page.context.new_page()
    other_tab.goto(page.url)
    assert id_on_screen(other_tab, participation) == pid
    page.click("#choose-right")
    wait_for_next(page, pid, participation)
    expected[pid] = Choice.RIGHT
    other_tab.click("#choose-left")  # stale: ignored, shows the next pending pair
    wait_for_next(other_tab, pid, participation)
    assert id_on_screen(other_tab, participation) == id_on_screen(page, participation)
    other_tab.close()

    # The rest: alternate mouse and keyboard until the done page.
    for k in range(10):
        if page.title().startswith("Done"):
            break
        pid = id_on_screen(page, participation)
        if k % 2:
            page.click("#choose-left")
            expected[pid] = Choice.LEFT
        else:
            page.keyboard.press("ArrowLeft")
            expected[pid] = Choice.LEFT
        wait_for_next(page, pid, participation)
    expect(page.locator("h1")).to_have_text("All done — thank you!")
    expect(page.locator("[data-count=remaining]")).to_have_text("Remaining 0")

    rows = list(Judgment.objects.filter(participation=participation))
    assert len(rows) == 8
    assert {j.pair_id for j in rows} == set(study.pairs.values_list("id", flat=True))
    assert {j.pair_id: j.choice for j in rows} == expected
    assert sum(j.choice == Choice.SKIP for j in rows) == 1
    assert all(j.client_seconds is not None and j.client_seconds >= 0 for j in rows)
    expect(page.locator("[data-count=judged]")).to_have_text("Judged 7")


def test_the_two_questions_sit_side_by_side_and_stack_on_a_phone(live_server, browser):
    study = make_study(make_catalog(per_subject=3), n_pairs=2, seed=2)
    invitation = invitation_create(study=study)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/join/{invitation.token}/")
    page.click("#join-start")
    page.select_option("select[name=field_of_study]", "arts")
    page.select_option("select[name=education_level]", "phd")
    page.click("#onboarding-next")
    page.click("#start-judging")
    left = page.locator("section.question.left").bounding_box()
    right = page.locator("section.question.right").bounding_box()
    assert right["y"] >= left["y"] + left["height"] - 1  # phone: below, not beside
    assert abs(right["x"] - left["x"]) < 1
    page.set_viewport_size({"width": 1280, "height": 900})
    left = page.locator("section.question.left").bounding_box()
    right = page.locator("section.question.right").bounding_box()
    assert right["x"] >= left["x"] + left["width"] - 1  # desktop: beside
    assert abs(right["y"] - left["y"]) < 1
    context.close()
