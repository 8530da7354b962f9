"""The Create-study button submits even when the pointer goes down on it while
another field still has focus (its blur and change fire between mouse-down and
mouse-up). The button must not move in between, or the click is lost."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Study
from tests.annotate.factories import make_catalog, make_researcher

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 760])
def test_typing_in_the_speeder_field_then_clicking_create_submits_at_once(live_server, page: Page, width):
    page.set_viewport_size({"width": width, "height": 800})
    catalog = make_catalog(per_subject=5)
    make_researcher("olga", password="olga-pass-7")
    page.set_default_timeout(30_000)  # a loaded shared machine
    page.goto(f"{live_server.url}/accounts/login/?next=/studies/new/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass-7")
    page.click("#login-submit")
    expect(page.locator("h1")).to_have_text("New study")
    page.fill("#id_name", "Blur study")
    page.select_option("#id_run", str(catalog.run.pk))
    page.get_by_label(catalog.dataset.name).check()
    expect(page.locator("#total-pairs")).to_have_text("20")
    page.fill("#id_n_pairs", "5")
    page.locator("#id_speeder_seconds").click()
    page.keyboard.press("Control+A")
    page.keyboard.type("7")  # focus stays in the field: its change event fires on the mouse-down below
    button = page.locator("#save-study")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    moved = button.bounding_box()
    page.mouse.up()
    assert abs(moved["y"] - box["y"]) < 1, (box, moved)
    expect(page.locator("h1")).to_have_text("Blur study")  # one click was enough
    assert Study.objects.get(name="Blur study").speeder_seconds == 7
