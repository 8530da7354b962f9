"""Long unbroken names and notes wrap: the page is never wider than the window.

Cast: ``owner`` (staff) on the manage page of a study with a 200-character
unbroken name and invitation note (the most the columns hold), ``rita``
(researcher) on the question list of a run of a response set with a
200-character unbroken name, and on the import page whose run select names it.
"""
from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import Browser

from annotate.models import ResponseSet, RunStatus, ScoringRun
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_researcher, make_study, make_user
from tests.browser.flow import log_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
VIEWPORT = {"width": 1280, "height": 800}
WIDTHS = "() => [document.scrollingElement.scrollWidth, window.innerWidth]"


def _width_after(browser: Browser, base_url: str, user, path: str) -> tuple[int, int]:
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(30_000)
    log_in_as(page, base_url, user)
    response = page.goto(base_url + path)
    assert response is not None and response.status == 200
    return tuple(page.evaluate(WIDTHS))


def test_a_long_study_name_and_invitation_note_wrap_on_the_manage_page(live_server, browser: Browser):
    study = make_study(make_catalog(per_subject=2), n_pairs=2, name="S" * 200)
    owner = make_user("owner", staff=True)
    invitation_create(study=study, note="N" * 200, created_by=owner)
    scroll_width, window_width = _width_after(browser, live_server.url, owner, f"/studies/{study.pk}/manage/")
    assert scroll_width <= window_width, (scroll_width, window_width)


def test_a_long_response_set_name_wraps_on_the_run_pages_and_in_the_run_selects(live_server, browser: Browser):
    rs = ResponseSet.objects.create(name="x" * 200, file_name="x.csv", checksum="a" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now())
    rita = make_researcher("rita")
    for path in (f"/results/runs/{run.pk}/questions/", f"/results/runs/{run.pk}/", "/results/",
                 "/studies/new/", "/studies/new/imported/"):
        scroll_width, window_width = _width_after(browser, live_server.url, rita, path)
        assert scroll_width <= window_width, (path, scroll_width, window_width)
