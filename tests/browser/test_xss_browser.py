"""Hostile question text in a real browser: the judging page, the manage
page's pair texts and the question list render script-like text, Markdown
links, raw HTML and KaTeX commands as inert text, under the production
Content-Security-Policy, with no script run, no dialog and no CSP violation.
Run on both databases (the suite runs on SQLite and PostgreSQL)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Question
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_researcher, make_study
from tests.browser.flow import log_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Each sets window.__xss (or opens a dialog) if it ever runs.
PAYLOADS = [
    "<script>window.__xss = 1; alert(1)</script> Which is larger?",
    '<img src=x onerror="window.__xss = 2"> Which is larger?',
    "[a link](javascript:window.__xss=3) and <a href=\"javascript:window.__xss=4\">another</a>",
    "Math $\\href{javascript:window.__xss=5}{x}$ and $\\htmlId{owned}{y}$ and "
    "$$</span><script>window.__xss=6</script>$$",
    '<svg onload="window.__xss = 7"></svg><iframe src="javascript:window.__xss=8"></iframe> **bold** __init__',
    "<style>body { display: none }</style><form action=/logout/><button>Go</button></form> 2*3*4",
]
OPTIONS = ['<img src=x onerror="window.__xss = 9">', "$\\href{javascript:window.__xss=10}{a}$", "plain", "`code`"]


def _hostile_study(text_format: str):
    catalog = make_catalog(subjects=("Physics",), per_subject=len(PAYLOADS))
    catalog.dataset.text_format = text_format
    catalog.dataset.save(update_fields=["text_format"])
    for question, text in zip(Question.objects.filter(dataset=catalog.dataset).order_by("pk"), PAYLOADS, strict=True):
        question.text, question.options = text, OPTIONS
        question.save(update_fields=["text", "options"])
    return catalog, make_study(catalog, n_pairs=4, seed=3, name="Hostile text")


def _watch(page: Page) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    return problems


def _assert_inert(page: Page) -> None:
    assert page.evaluate("() => window.__xss") is None
    assert page.evaluate("() => document.querySelectorAll('main script, main img[onerror], main svg[onload], "
                         "main iframe, main a[href^=\"javascript\"], main form[action=\"/logout/\"], "
                         "main style, #owned').length") == 0


@pytest.mark.parametrize("text_format", ["plain", "markdown"])
def test_hostile_question_text_is_inert_on_every_page_that_shows_it(live_server, page: Page, settings, text_format):
    settings.CSP_ENABLED = True
    problems = _watch(page)
    catalog, study = _hostile_study(text_format)
    page.set_default_timeout(15_000)

    page.goto(f"{live_server.url}/join/{invitation_create(study=study).token}/")
    page.click("#join-start")
    expect(page).to_have_url(re.compile(r"/onboarding/$"))
    page.select_option("select[name=field_of_study]", "arts")
    page.select_option("select[name=education_level]", "phd")
    page.click("#onboarding-next")
    page.click("#start-judging")
    expect(page.locator("h1")).to_have_text("Which question is harder?")
    page.wait_for_load_state("networkidle")
    shown = page.locator("main").inner_text()
    assert "Which is larger?" in shown or "another" in shown or "bold" in shown or "2*3*4" in shown
    _assert_inert(page)

    researcher = make_researcher("rita")
    study.members.add(researcher)
    page.context.clear_cookies()
    log_in_as(page, live_server.url, researcher)
    for path in (f"/studies/{study.pk}/manage/", f"/results/runs/{catalog.run.pk}/questions/"):
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
        expect(page.locator("main")).to_contain_text("Which is larger?")  # the hostile texts are on the page
        _assert_inert(page)
    if text_format == "plain":  # plain text shows the markup as written, character for character
        expect(page.locator("main")).to_contain_text("<script>window.__xss = 1; alert(1)</script> Which is larger?")
    assert problems == []
