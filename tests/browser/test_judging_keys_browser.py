"""The judging page's keys in a real browser, and an expired session.

Only a plain press of Left, Right or S answers: with Shift, Control, Alt or
Meta held, as an auto-repeat, while an input method composes, or with the
focus in a text field, nothing is sent and the same pair stays on screen. An
evaluator whose session expired while judging logs in again and is told the
answer was not saved, with the same pair in front of them.

Cast: ``ada``, an evaluator with a password, onboarded in an 8-pair study.
"""
from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session
from playwright.sync_api import Page, expect

from annotate.models import Choice, Judgment
from tests.annotate.factories import make_catalog, make_evaluator, make_study
from tests.annotate.judging_forms import token_of
from tests.browser.flow import id_on_screen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-Correct-horse-9"
UNSAVED = "Your session had expired, so your last answer was not saved. Here is the same pair again."
PLAIN = {"ArrowLeft": Choice.LEFT, "ArrowRight": Choice.RIGHT, "s": Choice.SKIP}


@pytest.fixture
def ada(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    study = make_study(make_catalog(per_subject=4), n_pairs=8, seed=5)
    participation = make_evaluator(study, "ada")
    participation.user.set_password(PASSWORD)
    participation.user.save()
    return participation


def log_in(page: Page, base: str, next_url: str) -> None:
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-submit")


def open_judging(page: Page, live_server, participation) -> int:
    """Log ada in, land on the judging page; the pair id on screen."""
    page.set_default_timeout(10_000)
    log_in(page, live_server.url, f"/studies/{participation.study_id}/judge/")
    expect(page.locator("h1")).to_have_text("Which question is harder?")
    keys_on(page)
    return pair_on_screen(page, participation)


def keys_on(page: Page) -> None:
    """Wait for judging.js (a deferred script) to listen: a key pressed before
    would prove nothing."""
    page.wait_for_selector("#judge-form[data-keys=on]", state="attached")


def pair_on_screen(page: Page, participation) -> int:
    return id_on_screen(page, participation)


def assert_nothing_sent(page: Page, pair_id: int, participation) -> None:
    """The keydown handler runs before ``press`` returns; a submission would
    mark the form as sending at once. Wait a little more for a stray request."""
    assert page.evaluate("document.getElementById('judge-form').classList.contains('sending')") is False
    page.wait_for_timeout(300)
    assert Judgment.objects.count() == 0
    assert pair_on_screen(page, participation) == pair_id
    expect(page.locator("#choose-left")).to_be_enabled()


def press_plain_and_expect(page: Page, key: str, pair_id: int, participation) -> None:
    """An unmodified press answers the pair on screen (the control)."""
    page.keyboard.press(key)
    page.wait_for_function(
        "prev => document.querySelector('input[name=pair]')?.value !== prev", arg=token_of(participation, pair_id))
    rows = list(Judgment.objects.all())
    assert [(j.participation_id, j.pair_id, j.choice) for j in rows] == [(participation.pk, pair_id, PLAIN[key])]


@pytest.mark.parametrize("key", list(PLAIN))
@pytest.mark.parametrize("modifier", ["Shift", "Control", "Alt", "Meta"])
def test_a_modified_key_never_answers(live_server, page: Page, ada, modifier, key):
    pair_id = open_judging(page, live_server, ada)
    page.keyboard.press(f"{modifier}+{key}")
    assert_nothing_sent(page, pair_id, ada)
    press_plain_and_expect(page, key, pair_id, ada)


@pytest.mark.parametrize("key", list(PLAIN))
def test_a_plain_key_answers_once(live_server, page: Page, ada, key):
    pair_id = open_judging(page, live_server, ada)
    press_plain_and_expect(page, key, pair_id, ada)


@pytest.mark.parametrize("flags", [{"repeat": True}, {"isComposing": True}, {"keyCode": 229}])
def test_a_repeated_or_composing_key_never_answers(live_server, page: Page, ada, flags):
    pair_id = open_judging(page, live_server, ada)
    for key in PLAIN:
        page.evaluate(
            """([key, flags]) => {
                 const event = new KeyboardEvent('keydown', {key, bubbles: true, cancelable: true, ...flags});
                 if ('keyCode' in flags) { Object.defineProperty(event, 'keyCode', {value: flags.keyCode}); }
                 document.body.dispatchEvent(event);
               }""",
            [key, flags],
        )
    assert_nothing_sent(page, pair_id, ada)
    # The same synthetic event without the flag does answer (the control).
    page.evaluate("""() => document.body.dispatchEvent(
                       new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true, cancelable: true}))""")
    page.wait_for_function(
        "prev => document.querySelector('input[name=pair]')?.value !== prev", arg=token_of(ada, pair_id))
    assert list(Judgment.objects.values_list("pair_id", "choice")) == [(pair_id, Choice.RIGHT)]


@pytest.mark.parametrize("field", ["input", "textarea", "select"])
def test_keys_typed_in_a_form_field_never_answer(live_server, page: Page, ada, field):
    pair_id = open_judging(page, live_server, ada)
    page.evaluate(
        """field => { const el = document.createElement(field); el.id = 'typing';
                      if (field === 'select') { el.innerHTML = '<option>s</option><option>t</option>'; }
                      document.body.appendChild(el); }""",
        field,
    )
    page.focus("#typing")
    for key in PLAIN:
        page.keyboard.press(key)
    assert_nothing_sent(page, pair_id, ada)


def test_an_expired_session_keeps_the_pair_and_says_the_answer_was_lost(live_server, page: Page, ada):
    pair_id = open_judging(page, live_server, ada)
    left_text = page.locator("section.question.left").inner_text()
    expect(page.locator(".messages")).to_have_count(0)
    Session.objects.all().delete()  # the session expires on the server while the page is open
    page.click("#choose-left")
    expect(page.locator("h1")).to_have_text("Log in")
    assert Judgment.objects.count() == 0
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-submit")
    expect(page.locator(".messages li")).to_have_text(UNSAVED)
    assert page.url == f"{live_server.url}/studies/{ada.study_id}/judge/"
    assert pair_on_screen(page, ada) == pair_id
    assert page.locator("section.question.left").inner_text() == left_text
    assert Judgment.objects.count() == 0
    page.reload()
    expect(page.locator(".messages")).to_have_count(0)  # said once
    keys_on(page)
    press_plain_and_expect(page, "ArrowLeft", pair_id, ada)
