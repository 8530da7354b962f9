"""A researcher creates a study in the browser: the live counts, the Markdown
preview, the draft, and the launch with its confirmation step.

Screenshots of each page go to ``$EIP_SCREENSHOTS`` (default: none taken).
"""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Page, expect

from annotate.models import Pair, Question, Study, StudyStatus
from annotate.studies.services.studies import study_create
from tests.annotate.factories import make_catalog, make_researcher

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("EIP_SCREENSHOTS", "")


def shot(page: Page, name: str) -> None:
    """A full-page screenshot (it resizes the viewport for a moment: blur fields before)."""
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"h14a_{name}.png"), full_page=True)


def test_a_researcher_creates_and_launches_a_study_in_the_browser(live_server, page: Page):
    # Mathematics and Physics, 5 questions each; one Physics question has no text:
    # Mathematics 5 eligible -> 10 pairs, Physics 4 -> 6 pairs: 16 in all.
    catalog = make_catalog(per_subject=5)
    Question.objects.filter(pk=catalog.questions[5].pk).update(text="   ")
    make_researcher("olga", password="olga-pass-7")
    page.set_default_timeout(10_000)

    page.goto(f"{live_server.url}/accounts/login/?next=/studies/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass-7")
    page.click("#login-submit")
    expect(page.locator("h1")).to_have_text("Studies")
    shot(page, "studies_empty")
    page.click("#new-study")
    expect(page.locator("h1")).to_have_text("New study")

    page.fill("#id_name", "Browser study")
    page.select_option("#id_run", str(catalog.run.pk))
    page.get_by_label(catalog.dataset.name).check()
    expect(page.locator("#total-pairs")).to_have_text("16")
    expect(page.locator("#total-eligible")).to_have_text("9")
    expect(page.locator("#excluded")).to_contain_text("1 with no question text")
    page.get_by_label("Physics").check()  # only Physics now: 4 eligible, 6 pairs
    expect(page.locator("#total-pairs")).to_have_text("6")
    page.fill("#id_n_pairs", "7")
    expect(page.locator("#pairs-hint")).to_contain_text("7 of at most 6 possible pairs")
    page.fill("#id_n_pairs", "5")
    page.fill("#id_seed", "9")
    page.fill("#id_guidelines", "Pick the **harder** question.\n\n<script>alert(1)</script>")
    page.click("button[data-preview-into=guidelines-preview]")
    expect(page.locator("#guidelines-preview strong")).to_have_text("harder")
    assert page.locator("#guidelines-preview script").count() == 0
    page.fill("#id_consent_text", "I agree to take part.")
    page.locator("#id_consent_text").blur()  # before the full-page screenshot, which moves the page under the mouse
    shot(page, "create_form")
    page.click("#save-study")

    expect(page.locator("h1")).to_have_text("Browser study")
    study = Study.objects.get(name="Browser study")
    assert study.status == StudyStatus.DRAFT and study.n_pairs == 5
    shot(page, "manage_draft")
    page.click("#launch-study")
    expect(page.locator("h1")).to_have_text("Launch “Browser study”?")
    shot(page, "confirm_launch")
    page.click("#confirm-status")
    expect(page.locator(".messages")).to_contain_text("is now open")
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN
    shot(page, "manage_open")

    same = study_create(name="same settings", run=catalog.run, datasets=[catalog.dataset],
                        subjects=[catalog.subjects[1]], n_pairs=5, seed=9)
    pairs = list(Pair.objects.filter(study=study).order_by("position").values_list("question_a", "question_b"))
    assert pairs == list(Pair.objects.filter(study=same).order_by("position").values_list("question_a", "question_b"))
    assert catalog.questions[5].pk not in {q for pair in pairs for q in pair}

    page.click("#edit-study")
    expect(page.locator("h1")).to_have_text(re.compile("Edit"))
    expect(page.locator("#total-pairs")).to_have_text("6")
    shot(page, "edit_form")


def test_a_researcher_creates_an_adaptive_study_in_the_browser(live_server, page: Page):
    # Mathematics and Physics, 5 questions each: 10 eligible, 2 x 10 = 20 possible pairs.
    catalog = make_catalog(per_subject=5)
    make_researcher("olga", password="olga-pass-7")
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/accounts/login/?next=/studies/new/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass-7")
    page.click("#login-submit")
    expect(page.locator("h1")).to_have_text("New study")
    page.fill("#id_name", "Adaptive browser study")
    page.select_option("#id_run", str(catalog.run.pk))
    page.get_by_label(catalog.dataset.name).check()
    expect(page.locator("#total-pairs")).to_have_text("20")
    page.select_option("#id_strategy", "adaptive")
    page.fill("#id_n_pairs", "6")
    expect(page.locator("#pairs-hint")).to_have_text("6 pairs per evaluator, chosen as they judge, among 20 possible "
                                                     "pairs.")
    page.fill("#id_adaptive_min_comparisons", "3")
    page.fill("#id_adaptive_random_share", "0.2")
    page.fill("#id_consent_text", "I agree to take part.")
    page.click("#save-study")
    expect(page.locator("#adaptive-summary")).to_contain_text(
        "6 pairs per evaluator, chosen adaptively from a pool of 10 questions")
    study = Study.objects.get(name="Adaptive browser study")
    assert (study.strategy, study.n_pairs, study.adaptive_min_comparisons, study.adaptive_random_share) == (
        "adaptive", 6, 3, 0.2)
    assert Pair.objects.filter(study=study).count() == 0


def test_the_adaptive_settings_show_only_with_the_adaptive_design(live_server, page: Page):
    make_catalog(per_subject=3)
    make_researcher("olga", password="olga-pass-7")
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/accounts/login/?next=/studies/new/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass-7")
    page.click("#login-submit")
    expect(page.locator("h1")).to_have_text("New study")
    settings = page.locator("#adaptive-settings")
    expect(settings).to_be_hidden()  # uniform by default
    page.select_option("#id_strategy", "adaptive")
    expect(settings).to_be_visible()
    expect(page.get_by_label("Minimum comparisons per question (adaptive design only)")).to_be_visible()
    expect(page.get_by_label("Random share (adaptive design only)")).to_be_visible()
    page.select_option("#id_strategy", "stratified_gap")
    expect(settings).to_be_hidden()


def test_the_live_counts_print_thousands_with_separators(live_server, page: Page):
    # Mathematics and Physics, 50 questions each: 50 x 49 / 2 = 1,225 pairs each, 2,450 in all.
    catalog = make_catalog(per_subject=50)
    make_researcher("olga", password="olga-pass-7")
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/accounts/login/?next=/studies/new/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "olga-pass-7")
    page.click("#login-submit")
    page.select_option("#id_run", str(catalog.run.pk))
    page.get_by_label(catalog.dataset.name).check()
    expect(page.locator("#total-pairs")).to_have_text("2,450")
    expect(page.locator("#counts-status")).to_contain_text("allowing 2,450 distinct same-subject pairs")
    expect(page.locator("tr[data-subject] .n-pairs").first).to_have_text("1,225")
    page.fill("#id_n_pairs", "1500")
    expect(page.locator("#pairs-hint")).to_contain_text("1,500 of at most 2,450 possible pairs")
