"""The whole study in a real browser (issue 14, "must show"): a researcher
(not staff, in the "researcher" group) creates a study on the creation page
with attention checks, a speeder threshold and a completion code and URL,
launches it and copies the Prolific link from the manage page; three crowd
evaluators arrive on it with their platform ids, consent, onboard and judge
by keyboard, attention checks included, one of them at speeder pace; the
two careful ones see the completion code, the speeder (who fails both
attention checks) finishes without it and is told why. The researcher sees the speeder flag and the
attention pass rates, excludes the speeder with a reason, closes the study
(confirmation step) and downloads the report as JSON and CSV: its numbers
are those of the two remaining evaluators, counted here from what the test
itself pressed, and the speeder is listed as excluded.

axe-core runs on every page visited (its summary lines are printed: run with
``-s`` to see them) and must find nothing serious or critical. Screenshots of
each page go to ``$EIP_SCREENSHOTS`` as ``study_<page>.png`` when that is set.

Cast: ``rita`` (researcher); crowd participants ``pid-ann`` and ``pid-ben``
(read each pair, 1.6 s or more per pair) and ``pid-sam`` (presses at once).
Questions: two subjects of five, reference (EIP) difficulties ``EIP`` so
that the attention checks have a known answer.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import time

import pytest
from playwright.sync_api import Browser, Page, expect

from annotate.models import Choice, Judgment, Pair, Participation, Study, StudyStatus
from tests.annotate.factories import make_catalog, make_researcher
from tests.annotate.judging_forms import token_of
from tests.annotate.studies.quality.helpers import set_eip
from tests.browser.axe import assert_accessible
from tests.browser.flow import id_on_screen

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SHOTS = os.environ.get("EIP_SCREENSHOTS", "")
# Percentile ranks over the ten: Mathematics 1, 8, 2, 7, 5 and Physics 0, 6, 3, 9, 4 (of 9): pairs with a
# rank gap of at least 0.5 to serve as attention checks (1-8, 2-7 and 0-9).
EIP = [0.05, 0.95, 0.1, 0.9, 0.5, 0.02, 0.85, 0.12, 0.97, 0.45]
CODE = "C0DE-4711"
SPEEDER_SECONDS = 1.2  # the threshold set on the creation page
PACE = 1.6  # seconds a careful evaluator waits on each pair (above the threshold)
REASON = "pressed through every pair; failed both attention checks"
N_PAIRS, SHARE = 4, 0.33  # round(0.33 * 4 / 0.67) = 2 attention checks on top of 4 pairs


def visit(page: Page, label: str) -> None:
    """axe on the page as it is now, and its screenshot when asked for."""
    assert_accessible(page, label)
    if SHOTS:  # lazy images below the fold would be blank in a full-page screenshot: load them first
        page.evaluate("document.querySelectorAll('img[loading=lazy]').forEach(img => { img.loading = 'eager'; })")
        page.wait_for_function("[...document.images].every(img => img.complete)")
        page.screenshot(path=os.path.join(SHOTS, f"study_{label}.png"), full_page=True)


def create_study(page: Page, base: str, catalog) -> Study:
    page.goto(f"{base}/accounts/login/?next=/studies/")
    visit(page, "login")
    page.fill("#id_username", "rita")
    page.fill("#id_password", "rita-pass-5")
    page.click("#login-submit")
    expect(page.locator("h1")).to_have_text("Studies")
    visit(page, "list_empty")
    page.click("#new-study")
    expect(page.locator("h1")).to_have_text("New study")
    page.fill("#id_name", "Which is harder? (pilot)")
    page.select_option("#id_run", str(catalog.run.pk))
    page.get_by_label(catalog.dataset.name).check()
    expect(page.locator("#total-pairs")).to_have_text("20")  # 2 subjects x C(5, 2)
    page.fill("#id_n_pairs", str(N_PAIRS))
    page.fill("#id_seed", "11")
    page.fill("#id_attention_check_share", str(SHARE))
    page.fill("#id_guidelines", "Call the question **harder** that fewer experts would answer right: $x^2$.")
    page.fill("#id_completion_code", CODE)
    page.fill("#id_completion_url", f"{base}/?cc={CODE}")
    page.fill("#id_speeder_seconds", str(SPEEDER_SECONDS))
    expect(page.locator("#id_participant_param")).to_have_value("PROLIFIC_PID")  # Prolific's names by default
    page.locator("#id_speeder_seconds").blur()
    visit(page, "create")
    page.click("#save-study")
    if page.locator(".errorlist, .form-errors").count():
        raise AssertionError(page.locator(".errorlist, .form-errors").all_inner_texts())
    expect(page.locator("h1")).to_have_text("Which is harder? (pilot)")
    study = Study.objects.get(name="Which is harder? (pilot)")
    assert (study.status, study.n_pairs, study.completion_code, study.speeder_seconds) == (
        StudyStatus.DRAFT, N_PAIRS, CODE, SPEEDER_SECONDS)
    assert (study.participant_param, study.study_param, study.session_param) == (
        "PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
    assert Pair.objects.filter(study=study, attention_check=True).count() == 2

    page.click("#launch-study")
    expect(page.locator("h1")).to_have_text("Launch “Which is harder? (pilot)”?")
    visit(page, "confirm_launch")
    page.click("#confirm-status")
    expect(page.locator("#study-status")).to_have_text("open")
    return study


def copy_prolific_link(page: Page) -> str:
    page.fill("#id_note", "Prolific batch 1")
    page.click("#new-invitation")
    button = page.locator("button[data-copy^=prolific-]")
    expect(button).to_have_count(1)
    visit(page, "manage_open")
    button.click()
    expect(page.locator("#copy-status")).to_contain_text("Link copied")
    return page.evaluate("navigator.clipboard.readText()")


def evaluate(browser: Browser, link: str, pid: str, *, speeder: bool, first: bool) -> list[tuple[int, int | None]]:
    """One crowd evaluator in a browser context of their own; returns what they
    decided on each regular pair: (pair id, question called harder or None for a skip)."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    url = (link.replace("{{%PROLIFIC_PID%}}", pid).replace("{{%STUDY_ID%}}", "prolific-study-1")
           .replace("{{%SESSION_ID%}}", f"session-{pid}"))
    page.goto(url)
    expect(page.locator("#consent-title")).to_be_visible()
    if first:
        visit(page, "join_consent")
    page.locator("#join-start").focus()  # by keyboard from here on
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("About you")
    if first:
        visit(page, "onboarding")
    page.locator("select[name=field_of_study]").focus()
    page.keyboard.press("ArrowDown")
    page.locator("select[name=education_level]").focus()
    page.keyboard.press("ArrowDown")
    page.locator("#onboarding-next").focus()
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("Guidelines")
    expect(page.locator(".guidelines strong")).to_have_text("harder")  # Markdown, not raw asterisks
    if first:
        page.wait_for_selector("html[data-math=done]", state="attached")
        visit(page, "guidelines")
    page.locator("#start-judging").focus()
    page.keyboard.press("Enter")

    decided: list[tuple[int, int | None]] = []
    skipped_once = False
    while True:
        page.wait_for_selector("#judge-form[data-keys=on], #completion-code, #not-earned", state="attached")
        if page.locator("#completion-code, #not-earned").count():
            break
        participation = Participation.objects.get(user__username=page.locator(".who").inner_text().strip())
        pair = Pair.objects.get(pk=id_on_screen(page, participation))
        left = id_on_screen(page, participation, "left")
        if first and not decided:
            page.wait_for_selector("html[data-math=done]", state="attached")
            visit(page, "judge")
        if pair.attention_check:  # careful evaluators get it right, the speeder wrong
            harder = pair.expected_harder_id if not speeder else (
                pair.question_b_id if pair.expected_harder_id == pair.question_a_id else pair.question_a_id)
        elif speeder:
            harder = pair.question_b_id
        elif pid == "pid-ben" and not skipped_once:
            harder, skipped_once = None, True
        else:
            harder = pair.question_a_id
        if not speeder:
            page.wait_for_timeout(PACE * 1000)
        key = "s" if harder is None else ("ArrowLeft" if harder == left else "ArrowRight")
        if not pair.attention_check:
            decided.append((pair.pk, harder))
        page.keyboard.press(key)
        page.wait_for_function(
            """prev => { const el = document.querySelector('input[name=pair]');
                         return !el || el.value !== prev; }""", arg=token_of(participation, pair.pk))
    if speeder:  # failed both attention checks: finished, but the code is not earned (and not shown)
        expect(page.locator("h1")).to_have_text("You have finished the pairs")
        expect(page.locator("#shortfalls li")).to_have_count(1)
        expect(page.locator("#shortfalls li")).to_have_attribute("data-reason", "checks")
        expect(page.locator("#completion-code")).to_have_count(0)
        assert CODE not in page.content()
        context.close()
        return decided
    expect(page.locator("h1")).to_have_text("All done — thank you!")
    expect(page.locator("#completion-code")).to_have_text(CODE)
    if first:
        visit(page, "done")
        expect(page).to_have_url(re.compile(rf"/\?cc={CODE}$"), timeout=15_000)  # sent back to the platform
    context.close()
    return decided


def test_a_researcher_runs_a_whole_crowd_study_in_the_browser(live_server, page: Page, browser: Browser):
    started = time.monotonic()
    catalog = make_catalog(per_subject=5)
    set_eip(catalog.questions, EIP)
    make_researcher("rita", password="rita-pass-5")
    base = live_server.url
    page.set_default_timeout(15_000)
    page.set_viewport_size({"width": 1366, "height": 900})
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)

    study = create_study(page, base, catalog)
    link = copy_prolific_link(page)
    assert re.fullmatch(rf"{re.escape(base)}/join/[^/]+/\?PROLIFIC_PID=\{{\{{%PROLIFIC_PID%\}}\}}"
                        r"&STUDY_ID=\{\{%STUDY_ID%\}\}&SESSION_ID=\{\{%SESSION_ID%\}\}", link), link

    decided = {
        "pid-ann": evaluate(browser, link, "pid-ann", speeder=False, first=True),
        "pid-sam": evaluate(browser, link, "pid-sam", speeder=True, first=False),
        "pid-ben": evaluate(browser, link, "pid-ben", speeder=False, first=False),
    }
    parts = {p.platform_participant_id: p for p in Participation.objects.filter(study=study).select_related("user")}
    assert sorted(parts) == ["pid-ann", "pid-ben", "pid-sam"]
    assert {(p.platform_study_id, p.platform_session_id) for p in parts.values()} == {
        ("prolific-study-1", f"session-{pid}") for pid in parts}
    for pid, choices in decided.items():  # the server stored what was pressed, on the 4 regular pairs
        stored = {(j.pair_id, None if j.choice == Choice.SKIP else j.harder_question_id)
                  for j in Judgment.objects.filter(participation=parts[pid], pair__attention_check=False)}
        assert stored == set(choices) and len(choices) == N_PAIRS
    sam = parts["pid-sam"]

    # The researcher sees the flags: only the speeder; attention 2 of 2 for ann and ben, 0 of 2 for sam.
    page.goto(f"{base}/studies/{study.pk}/manage/")
    expect(page.locator("#live-speeders")).to_have_text("1")
    expect(page.locator(f"#evaluator-{sam.pk} .speeder")).to_have_text("speeder")
    for pid in ("pid-ann", "pid-ben"):
        expect(page.locator(f"#evaluator-{parts[pid].pk} .speeder")).to_have_count(0)
    expect(page.locator("#live-attention")).to_have_text("67% (4 of 6)")
    expect(page.locator(f"#evaluator-{sam.pk}")).to_contain_text("0 / 2")
    expect(page.locator(f"#evaluator-{sam.pk}")).to_contain_text("failed 2")
    expect(page.locator("#live-consent-declines")).to_have_text("0")
    visit(page, "manage_flags")

    page.fill(f"#reason-{sam.pk}", REASON)
    page.locator(f"#evaluator-{sam.pk} form.exclude-form button").click()
    expect(page.locator(f"#evaluator-{sam.pk}")).to_contain_text("excluded")
    expect(page.locator("#live-excluded")).to_have_text("1")
    page.click("#close-study")
    expect(page.locator("h1")).to_have_text("Close “Which is harder? (pilot)”?")
    visit(page, "confirm_close")
    page.click("#confirm-status")
    expect(page.locator("#study-status")).to_have_text("closed")
    visit(page, "manage_closed")

    page.click("#report-link")
    expect(page.locator("#table-excluded_evaluators")).to_contain_text(REASON)
    visit(page, "report")
    with page.expect_download() as download:
        page.click("#download-json")
    report = json.loads(download.value.path().read_text(encoding="utf-8"))
    page.click("#section-agreement summary")  # the agreement section (with its CSV) is folded at first
    with page.expect_download() as download:
        page.click("#download-csv")
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text(encoding="utf-8"))))

    # Counted here from what ann and ben pressed on the regular pairs (attention checks never count):
    kept = [harder for pid in ("pid-ann", "pid-ben") for _, harder in decided[pid]]
    names = sorted(parts[pid].user.get_username() for pid in ("pid-ann", "pid-ben"))
    assert (report["study"]["n_evaluators"], report["study"]["n_judgments"], report["study"]["n_votes"],
            report["study"]["n_skips"]) == (2, len(kept), sum(h is not None for h in kept), kept.count(None))
    assert (len(kept), kept.count(None)) == (8, 1)
    assert report["study"]["n_pairs"] == N_PAIRS and report["study"]["n_attention_checks"] == 2
    assert sorted(e["pseudonym"] for e in report["evaluators"]) == names
    by_name = {e["pseudonym"]: (e["n_votes"], e["n_skips"]) for e in report["evaluators"]}
    for pid in ("pid-ann", "pid-ben"):
        mine = [harder for _, harder in decided[pid]]
        assert by_name[parts[pid].user.get_username()] == (sum(h is not None for h in mine), mine.count(None))
    [excluded] = report["excluded_evaluators"]
    assert (excluded["pseudonym"], excluded["reason"], excluded["excluded_by"], excluded["n_judgments"]) == (
        sam.user.get_username(), REASON, "rita", N_PAIRS)
    # the CSV (agreement table): one row per method and rater, the two remaining evaluators and the consensus
    assert {row["rater"] for row in rows} == {e["short"] for e in report["evaluators"]} | {"consensus"}
    assert {row["pseudonym"] for row in rows if row["rater"] != "consensus"} == set(names)
    votes = {name: n_votes for name, (n_votes, _) in by_name.items()}
    for row in rows:  # every method decides every pair: an evaluator's n_pairs is their votes, the consensus's all 4
        assert int(row["n_pairs"]) == (N_PAIRS if row["rater"] == "consensus" else votes[row["pseudonym"]])
    page.goto(f"{base}/studies/")
    expect(page.locator("#content, main").first).to_contain_text("Which is harder? (pilot)")
    visit(page, "list")
    elapsed = time.monotonic() - started
    print(f"whole study in the browser: {elapsed:.1f} s")
