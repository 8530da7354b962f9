"""Ordinary words, numbers and buttons never break mid-word, no page is wider than a 1280 px window,
and what a results table does not show at once is cued.

Cast: ``owner`` (staff) on the manage page and the alignment report of a
study judged by five simulated evaluators, with an invitation link, and on
the result pages of the study's run; ``rita`` (researcher) on the question
list of a run whose questions are long but one.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from annotate.models import Question
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_researcher, make_user
from tests.annotate.report_cast import judged_study
from tests.browser.flow import log_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
VIEWPORT = {"width": 1280, "height": 800}
WIDTHS = "() => [document.scrollingElement.scrollWidth, window.innerWidth]"
#: The outermost elements that reach past the window's right edge (for the failure message).
PAST_THE_EDGE = """() => [...document.querySelectorAll('main *')]
    .filter(el => el.getBoundingClientRect().right > window.innerWidth
                  && el.parentElement.getBoundingClientRect().right <= window.innerWidth)
    .map(el => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().width))"""
#: Every visible table cell, header or button whose text is one short word (no space, at most 20
#: characters), with the number of lines its text is drawn on: a word broken mid-word takes two (a
#: hyphenated word may also break after each hyphen).
ONE_WORD_LINES = """() => [...document.querySelectorAll('main td, main th, main button, main .button')]
    .filter(el => el.offsetParent !== null && !el.querySelector('.visually-hidden'))
    .filter(el => /^\\S{1,20}$/.test(el.textContent.trim()))
    .map(el => {
        const tops = new Set(), walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(node);
            [...range.getClientRects()].filter(r => r.width > 0).forEach(r => tops.add(Math.round(r.top)));
        }
        return [el.textContent.trim(), tops.size];
    })"""


def test_short_words_stay_on_one_line_and_no_page_is_wider_than_the_window(live_server, browser: Browser):
    study = judged_study()
    owner = make_user("owner", staff=True)
    invitation_create(study=study, note="demo invitation (setup_demo)", created_by=owner)
    run = study.scoring_run_id
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(90_000)  # the live server draws the report's plots on a shared machine
    log_in_as(page, live_server.url, owner)
    checked = set()
    for path in (f"/studies/{study.pk}/manage/", f"/studies/{study.pk}/report/?n_boot=100",
                 f"/results/runs/{run}/", f"/results/runs/{run}/questions/", f"/results/runs/{run}/models/",
                 "/results/"):
        response = page.goto(live_server.url + path)
        assert response is not None and response.status == 200, path
        scroll_width, window_width = page.evaluate(WIDTHS)
        assert scroll_width <= window_width, (path, scroll_width, window_width, page.evaluate(PAST_THE_EDGE))
        words = page.evaluate(ONE_WORD_LINES)
        broken = [word for word, lines in words if not 1 <= lines <= 1 + word.count("-")]
        assert broken == [], (path, broken)
        checked |= {word for word, _ in words}
        if "/report/" in path:  # each plot at its drawn size (never stretched), shorter than the window
            page.locator("#section-plots > summary").click()
            page.wait_for_function("() => [...document.querySelectorAll('.plot-full img')]"
                                   ".every(i => i.complete && i.naturalWidth > 0)")
            sizes = page.evaluate("() => [...document.querySelectorAll('.plot-full img')].map(i => "
                                  "[i.closest('figure').id, i.width, i.naturalWidth, i.height])")
            assert {name for name, *_ in sizes} >= {"plot-profiles", "plot-agreement", "plot-heatmap"}, sizes
            assert all(shown <= natural and height < VIEWPORT["height"] for _, shown, natural, height in sizes), sizes
    assert {"Revoke", "active", "majority", "Mathematics", "Copy"} <= checked, sorted(checked)


def test_a_clipped_question_shows_an_ellipsis_and_opens_whole_and_a_wide_table_says_it_scrolls(
        live_server, browser: Browser):
    long_tail = " It goes on" + ", and on" * 60 + "."
    catalog = make_catalog(subjects=("Mathematics",), per_subject=3, with_text=long_tail)
    short = Question.objects.filter(dataset=catalog.dataset).order_by("pk").first()
    short.text, short.options = "Short?", []
    short.save(update_fields=["text", "options"])
    stored = {q.external_id: q.text for q in Question.objects.filter(dataset=catalog.dataset)}
    rita = make_researcher("rita")
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(30_000)
    log_in_as(page, live_server.url, rita)
    page.goto(f"{live_server.url}/results/runs/{catalog.run.pk}/questions/")
    page.wait_for_load_state("load")
    rows = page.evaluate("""() => [...document.querySelectorAll('#question-table tbody tr')].map(tr => [
        tr.cells[0].textContent.trim(), tr.querySelector('.question-clip').classList.contains('clipped'),
        !tr.querySelector('details.question-whole').hidden])""")
    clipped = {qid: qid != short.external_id for qid in stored}
    assert sorted(map(tuple, rows)) == sorted((qid, cut, cut) for qid, cut in clipped.items())
    long_id = next(qid for qid in stored if qid != short.external_id)
    row = page.locator("#question-table tbody tr", has=page.locator("td", has_text=long_id)).first
    row.locator("details.question-whole > summary").click()
    assert row.locator(".question-clip").is_hidden()
    assert row.locator("details.question-whole p.plain-text").inner_text() == stored[long_id]
    assert row.locator("details.question-whole .options li").all_inner_texts() == [
        f"option {c} of {long_id[1:]}" for c in "abcd"]
    box_wider, note_shown = page.evaluate("""() => { const box = document.querySelector('.table-scroll');
        return [box.scrollWidth > box.clientWidth + 1, !document.querySelector('#question-scroll-note').hidden]; }""")
    assert note_shown == box_wider
    page.set_viewport_size({"width": 640, "height": 800})
    page.wait_for_function("() => !document.querySelector('#question-scroll-note').hidden")
