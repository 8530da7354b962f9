"""A participant is told the completion rule before and while judging, and
the guidelines say what the page's buttons and the resume setting do.

Cast: crowd participants ``pid-ada`` (answers) and ``pid-sid`` (skips);
``nora``, who opens a plain invitation link without a participant id.
"""
from __future__ import annotations

import importlib
import re

import pytest
from django.apps import apps
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Participation, Study
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import make_catalog, make_study

pytestmark = pytest.mark.django_db
PID = "?PROLIFIC_PID=pid-ada&STUDY_ID=st-1&SESSION_ID=se-1"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


def crowd(study: Study, *, code: str = "C0DE-42", min_votes: int = 3, resume: str = "on") -> Study:
    return study_quality_settings_update(
        study=study, speeder_seconds=5.0, participant_param="PROLIFIC_PID", study_param="STUDY_ID",
        session_param="SESSION_ID", completion_code=code, completion_url="", completion_min_votes=min_votes,
        resume_by_participant_id=resume)


@pytest.fixture
def study() -> Study:
    return crowd(make_study(make_catalog(per_subject=5), n_pairs=6, name="Paid"))


def text_of(html: str) -> str:
    """The page's text: tags dropped, entities of quotes read, blanks made one space."""
    text = re.sub(r"<[^>]+>", " ", html).replace("&ldquo;", "\u201c").replace("&rdquo;", "\u201d")
    return re.sub(r"\s+", " ", text.replace("&quot;", '"').replace("&#x27;", "'"))


def join_and_read_guidelines(client: Client, token: str, query: str = PID) -> tuple[str, str]:
    """The consent page's text, then (after agreeing and onboarding) the guidelines page's text."""
    url = reverse("annotate:study_join", kwargs={"token": token}) + query
    consent = client.get(url)
    assert consent.status_code == 200
    assert client.post(url, {"consent": "yes"}).status_code == 302
    study_id = Participation.objects.latest("pk").study_id
    onboarding = reverse("annotate:study_onboarding", kwargs={"study_id": study_id})
    client.post(onboarding, {"field_of_study": "prefer_not_to_say", "education_level": "prefer_not_to_say"})
    guidelines = client.get(reverse("annotate:study_guidelines", kwargs={"study_id": study_id}))
    assert guidelines.status_code == 200
    return text_of(consent.content.decode()), text_of(guidelines.content.decode())


def judge_page(client: Client, study: Study) -> str:
    client.post(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk}))
    response = client.get(reverse("annotate:study_judge", kwargs={"study_id": study.pk}))
    assert response.status_code == 200
    return response.content.decode()


def press(client: Client, study: Study, page: str, choice: str) -> str:
    fields = dict(re.findall(r'name="(pair|left)" value="([^"]+)"', page))
    url = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    assert client.post(url, {**fields, "choice": choice, "client_ms": "4000"}).status_code == 302
    return client.get(url).content.decode()


def goal_line(page: str) -> str:
    found = re.search(r'<p class="small" id="completion-goal">([^<]*)</p>', page)
    return "" if found is None else found.group(1)


def test_the_consent_and_guidelines_pages_say_skips_do_not_count_towards_the_code(study):
    consent, guidelines = join_and_read_guidelines(Client(), invitation_create(study=study).token)
    rule = ("To earn the completion code, answer at least 3 pairs: say which question is harder. "
            "\u201cSkip \u2014 not qualified\u201d is not an answer: skipped pairs do not count towards the 3.")
    assert rule in consent
    assert rule in guidelines


def test_the_rule_follows_the_study_setting_and_is_absent_without_a_code(study):
    crowd(study, min_votes=1)
    consent, guidelines = join_and_read_guidelines(Client(), invitation_create(study=study).token)
    assert "answer at least 1 pair: say which" in guidelines
    crowd(study, code="", min_votes=3)  # no code to earn: nothing to tell
    consent, guidelines = join_and_read_guidelines(Client(), invitation_create(study=study).token,
                                                   "?PROLIFIC_PID=pid-bob")
    assert "To earn the completion code" not in consent and "To earn the completion code" not in guidelines
    assert "Your completion code, and coming back" not in guidelines and "Coming back later" in guidelines


def test_the_judging_page_counts_answers_not_skips_against_the_rule(study):
    client = Client()
    join_and_read_guidelines(client, invitation_create(study=study).token)
    page = judge_page(client, study)
    assert goal_line(page) == "3 answers needed for your completion code; you have 0 (skips do not count)."
    page = press(client, study, page, "left")
    assert goal_line(page) == "3 answers needed for your completion code; you have 1 (skips do not count)."
    page = press(client, study, page, "skip")
    assert goal_line(page) == "3 answers needed for your completion code; you have 1 (skips do not count)."
    page = press(client, study, page, "right")
    page = press(client, study, page, "left")
    assert goal_line(page) == "You have the 3 answers your completion code needs (you have 3)."


def test_the_judging_page_has_no_goal_line_without_a_code(study):
    crowd(study, code="")
    client = Client()
    join_and_read_guidelines(client, invitation_create(study=study).token)
    assert goal_line(judge_page(client, study)) == ""


def test_the_default_guidelines_quote_the_skip_button_as_it_reads(study):
    client = Client()
    _, guidelines = join_and_read_guidelines(client, invitation_create(study=study).token)
    page = judge_page(client, study)
    button = re.search(r'id="choose-skip">([^<]*)<kbd>', page).group(1).strip()
    assert button == "Skip \u2014 not qualified"
    assert f'press "{button}"' in guidelines
    assert "Skip - not" not in guidelines


@pytest.mark.parametrize(("resume", "query", "says", "never"), [
    ("on", PID, "in this or any other browser", "refused"),
    ("same_browser", PID, "In another browser your participant id is refused.", "any other browser"),
    ("off", PID, "In another browser your participant id is refused.", "any other browser"),
    ("on", "", "In another browser, or after signing out, the link starts afresh under a new pseudonym.",
     "any other browser"),
])
def test_the_guidelines_say_what_coming_back_does(study, resume, query, says, never):
    crowd(study, resume=resume)
    consent, guidelines = join_and_read_guidelines(Client(), invitation_create(study=study).token, query)
    assert says in guidelines and says in consent
    assert never not in guidelines
    assert "same browser" not in guidelines and "with this browser" not in consent


def test_what_the_guidelines_say_about_coming_back_is_what_happens(study):
    """Resume "on" says any browser: a second browser with the id continues; "same browser" says it is refused."""
    token = invitation_create(study=study).token
    join_and_read_guidelines(Client(), token)
    url = reverse("annotate:study_join", kwargs={"token": token}) + PID
    assert Client().post(url, {"consent": "yes"}).status_code == 302
    assert Participation.objects.filter(study=study).count() == 1
    crowd(study, resume="same_browser")
    assert Client().post(url, {"consent": "yes"}).status_code == 409


def test_studies_holding_the_old_default_guidelines_get_the_new_one(study):
    migration = importlib.import_module("annotate.migrations.0025_guidelines_skip_label")
    old = migration.OLD_DEFAULT
    assert 'press "Skip - not\n  qualified"' in old and "with the same browser" in old
    Study.objects.filter(pk=study.pk).update(guidelines=old)
    custom = crowd(make_study(make_catalog(per_subject=3), n_pairs=2, name="Own words"))
    Study.objects.filter(pk=custom.pk).update(guidelines="My own guidelines.")
    migration.forwards(apps, None)
    study.refresh_from_db()
    custom.refresh_from_db()
    assert 'press "Skip \u2014 not qualified"' in study.guidelines
    assert "same browser" not in study.guidelines
    assert custom.guidelines == "My own guidelines."
