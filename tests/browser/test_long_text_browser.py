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
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_researcher, make_study, make_user
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


#: What makes the evaluators table of the manage page wide: a Prolific participant id (24 unbroken characters),
#: a background, a speeder's flag and prefilled exclusion reason, an exclusion with its reason.
PROLIFIC_ID = "5f8e3c2a9b1d4e7f6a0c2b3d"


def test_a_crowded_evaluators_table_fits_1280_px_and_selects_look_like_the_inputs(live_server, browser: Browser):
    catalog = make_catalog(per_subject=4)
    study = make_study(catalog, n_pairs=4, name="Crowd pilot")
    owner = make_user("owner", staff=True)
    for k in range(4):
        p = make_evaluator(study, f"participant-{k}")
        judge(p, ["left", "right"])
        p.platform_participant_id, p.platform_study_id = f"{PROLIFIC_ID[:-1]}{k}", "6a" * 12
        if k == 0:
            p.excluded_at, p.excluded_by = timezone.now(), owner
            p.exclusion_reason = "median 0.1 s per vote, below 30 s"
        p.save()
    study.speeder_seconds = 3600.0  # every evaluator is a speeder: a flag and a prefilled reason on each row
    study.save(update_fields=["speeder_seconds"])
    draft = make_study(catalog, n_pairs=2, name="Draft")  # no judgment: its stopping-rules form is shown
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(30_000)
    log_in_as(page, live_server.url, owner)
    page.goto(f"{live_server.url}/studies/{study.pk}/manage/")
    scroll_width, window_width = page.evaluate(WIDTHS)
    assert scroll_width <= window_width, (scroll_width, window_width)
    heads = page.locator("table.evaluators thead th").all_inner_texts()
    assert heads[-1] == "Exclusion from the analyses"
    page.goto(f"{live_server.url}/studies/{draft.pk}/manage/")
    assert page.evaluate(WIDTHS)[0] <= window_width
    look = """(sel) => { const s = getComputedStyle(document.querySelector(sel));
        return [s.fontSize, s.borderTopLeftRadius, s.paddingLeft, s.borderTopColor]; }"""
    field = page.evaluate(look, "#id_target_reliability")
    for select in ("#id_method_a", "#id_resume_by_participant_id"):
        assert page.evaluate(look, select) == field, select
    heights = [page.locator(s).bounding_box()["height"] for s in ("#id_method_a", "#id_target_reliability")]
    assert abs(heights[0] - heights[1]) <= 2, heights
