"""Smaller hardening of issue 13: the Content-Security-Policy header, 403s
logged as one line, usernames checked with Django's validator.

Cast: ``outsider`` (signed in, neither staff nor researcher), ``owner`` (staff).
"""
from __future__ import annotations

import logging
import re
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.urls import reverse

from annotate.core.csp import HEADER
from annotate.core.logfilters import ForbiddenWithoutTraceback
from annotate.studies.services.participation import (
    ERR_USERNAME_EMPTY,
    ERR_USERNAME_INVALID,
    evaluator_create,
    username_check,
)
from tests.annotate.factories import make_catalog, make_study, make_user

pytestmark = pytest.mark.django_db
TEMPLATES = Path(__file__).resolve().parents[3] / "annotate" / "templates"


# --- Content-Security-Policy -------------------------------------------------------------------


@override_settings(CSP_ENABLED=True)
def test_the_policy_is_sent_on_pages_api_answers_and_errors():
    client = Client()
    for url, status in (("/accounts/login/", 200), ("/api/openapi.json", 200), ("/no-such-page/", 404)):
        response = client.get(url)
        assert response.status_code == status
        assert response[HEADER] == django_settings.CONTENT_SECURITY_POLICY
    policy = dict(part.strip().split(" ", 1) for part in django_settings.CONTENT_SECURITY_POLICY.split(";"))
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in django_settings.CONTENT_SECURITY_POLICY


@override_settings(CSP_ENABLED=False)
def test_no_policy_when_it_is_off():
    assert HEADER not in Client().get("/accounts/login/")


def test_no_template_has_an_inline_script_style_or_event_handler():
    """The policy allows none of them ('self' only); KaTeX and judging.js are static files."""
    inline = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>|<style\b|\sstyle=|\son[a-z]+=",
                        re.IGNORECASE)
    found = [f"{path.relative_to(TEMPLATES)}: {match.group(0)}"
             for path in TEMPLATES.rglob("*.html") for match in inline.finditer(path.read_text())]
    assert found == []


# --- 403s in the log --------------------------------------------------------------------------


def test_a_403_is_logged_as_one_warning_line_without_a_traceback(caplog):
    client = Client()
    client.force_login(make_user("outsider"))
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get(reverse("annotate:study_manage", kwargs={"study_id": 1}))
    assert response.status_code == 403
    [record] = [r for r in caplog.records if r.name == "django.request"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "Forbidden (Permission denied): /studies/1/manage/"
    assert record.exc_info is None and record.exc_text is None
    assert "Traceback" not in caplog.text


def test_the_filter_keeps_tracebacks_of_other_errors():
    record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "Internal Server Error: /x", None,
                               (ValueError, ValueError("boom"), None))
    record.status_code = 500
    assert ForbiddenWithoutTraceback().filter(record) is True
    assert record.exc_info is not None


# --- usernames --------------------------------------------------------------------------------


@pytest.mark.parametrize("username", ["vera", "vera.k+1@uni-x_y", "Zoë", "a" * 150])
def test_usernames_of_letters_digits_and_at_dot_plus_minus_underscore_are_accepted(username):
    assert username_check(username=f"  {username} ") == username


@pytest.mark.parametrize("username", ["vera k", "<script>", "vera\u200b", "x/y", "a" * 151, "ve\nra", "ü" * 151])
def test_other_usernames_are_refused_naming_the_rule(username):
    with pytest.raises(ValueError) as caught:
        username_check(username=username)
    shown = username if len(username) <= 60 else username[:60] + "…"
    assert str(caught.value) == ERR_USERNAME_INVALID.format(username=shown, limit=150)


def test_a_blank_username_is_refused():
    with pytest.raises(ValueError, match=ERR_USERNAME_EMPTY):
        username_check(username="   ")


def test_create_evaluator_refuses_a_bad_username_and_creates_nobody():
    study = make_study(make_catalog(), n_pairs=2, name="Pilot")
    before = get_user_model().objects.count()
    with pytest.raises(CommandError, match=re.escape("username '<b>eve</b>' is not allowed")):
        call_command("create_evaluator", "--username", "<b>eve</b>", "--study", "Pilot", stdout=StringIO())
    with pytest.raises(ValueError, match="is not allowed"):
        evaluator_create(username="eve eve", study=study)
    assert get_user_model().objects.count() == before


def test_create_evaluator_stores_the_normalised_name():
    study = make_study(make_catalog(), n_pairs=2, name="Pilot")
    user, _ = evaluator_create(username="\uff56\uff45\uff52\uff41", study=study)  # fullwidth "vera" (NFKC)
    assert user.username == "vera"
