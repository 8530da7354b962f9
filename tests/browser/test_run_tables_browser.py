"""The run pages read like a document: tables stand at full height and the page scrolls.

Cast: ``rita`` (researcher) on the question list and the leaderboard of a
finished run of 60 questions (50 on the first page) and 3 models, in a
1280 x 800 window.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from tests.annotate.factories import make_catalog, make_researcher
from tests.browser.flow import log_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
VIEWPORT = {"width": 1280, "height": 800}
#: Per table: rows, inner height seen, inner height needed, inner width seen, the page's and the window's widths.
BOXES = """() => [...document.querySelectorAll('.table-scroll')].map(box => [
    box.querySelectorAll('tbody tr').length, box.clientHeight, box.scrollHeight, box.getBoundingClientRect().width,
    document.scrollingElement.scrollWidth, window.innerWidth])"""


def test_the_question_list_and_leaderboard_show_every_row_of_the_page_without_an_inner_scroll_box(
        live_server, browser: Browser):
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=30)
    rita = make_researcher("rita")
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(30_000)
    log_in_as(page, live_server.url, rita)
    for path, n_rows, pages in ((f"/results/runs/{catalog.run.pk}/questions/", 50,
                                 "questions 1–50 of 60 · page 1 of 2"),
                                (f"/results/runs/{catalog.run.pk}/models/", 3, None)):
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 200
        [(rows, seen, needed, width, page_width, window_width)] = page.evaluate(BOXES)
        assert rows == n_rows, path
        assert needed == seen and seen > VIEWPORT["height"] * (n_rows == 50), (path, seen, needed)
        assert width <= window_width and page_width <= window_width, (path, width, page_width, window_width)
        if pages:
            assert page.locator("#page-of").inner_text() == pages
            assert page.locator("a[rel=next]").get_attribute("href") == "?page=2"
