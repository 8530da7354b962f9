"""A join link whose platform ids are still the platform's unfilled
placeholders (what a researcher gets when testing the copied Prolific link)
is refused for every platform parameter and placeholder style, before
anything is written, with a page that says so.

Cast: ``rita``, a researcher opening the copied link herself; ``pat``, the
next person to open the same link in another browser.
"""
from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import ConsentDecline, Participation, Study
from annotate.studies.selectors.study_monitor import platform_link_query
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.study_quality import study_quality_settings_update
from tests.annotate.factories import make_catalog, make_study

pytestmark = pytest.mark.django_db

#: Every placeholder style of a link template: Prolific, survey tools' {{name}} and {name}, Qualtrics' ${...},
#: CloudResearch's and SONA's %name%.
STYLES = ["{{%NAME%}}", "{{NAME}}", "{NAME}", "%NAME%", "${e://Field/NAME}", "pid-{{%NAME%}}"]
#: Each platform's parameter names: Prolific's (the default), MTurk's, CloudResearch's.
PLATFORMS = {
    "prolific": ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
    "mturk": ("workerId", "hitId", "assignmentId"),
    "cloudresearch": ("participantId", "projectId", "assignmentId"),
}


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()


@pytest.fixture
def study() -> Study:
    return make_study(make_catalog(per_subject=4), n_pairs=3, name="Crowd")


def use_platform(study: Study, platform: str) -> None:
    participant, study_param, session = PLATFORMS[platform]
    study_quality_settings_update(study=study, speeder_seconds=5.0, participant_param=participant,
                                  study_param=study_param, session_param=session, completion_code="",
                                  completion_url="")


def written() -> tuple[int, int, int]:
    return Participation.objects.count(), ConsentDecline.objects.count(), get_user_model().objects.count()


def assert_refused(response) -> None:
    page = response.content.decode()
    assert response.status_code == 400
    assert "<h1>This link still has its placeholder</h1>" in page
    assert "the platform fills it in when it sends you to the study" in page


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("style", STYLES)
def test_an_unfilled_placeholder_is_refused_for_every_parameter(study, platform, which, style):
    use_platform(study, platform)
    names = PLATFORMS[platform]
    values = {name: f"real-{k}" for k, name in enumerate(names)}
    values[names[which]] = style.replace("NAME", names[which])
    url = reverse("annotate:study_join", kwargs={"token": invitation_create(study=study).token})
    url += "?" + urlencode(values)
    before = written()
    for consent in (None, "yes", "no"):
        client = Client()
        response = client.get(url) if consent is None else client.post(url, {"consent": consent})
        assert_refused(response)
        assert names[which] in response.content.decode()
    assert written() == before


def test_the_copied_prolific_link_is_refused_and_never_becomes_a_participant(study):
    token = invitation_create(study=study).token
    copied = reverse("annotate:study_join", kwargs={"token": token}) + platform_link_query(study=study)
    assert copied.endswith("?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
    rita, pat = Client(), Client()
    before = written()
    assert_refused(rita.post(copied, {"consent": "yes"}))
    assert_refused(pat.get(copied))
    assert_refused(pat.post(copied, {"consent": "yes"}))
    assert written() == before
    assert "_auth_user_id" not in pat.session


def test_filled_ids_still_join(study):
    for platform in sorted(PLATFORMS):
        use_platform(study, platform)
        names = PLATFORMS[platform]
        url = reverse("annotate:study_join", kwargs={"token": invitation_create(study=study).token})
        url += "?" + urlencode({names[0]: f"5f{platform}0a1b2c3d4e5f6a7b8c9d", names[1]: "st-1", names[2]: "se-1"})
        assert Client().post(url, {"consent": "yes"}).status_code == 302
    assert sorted(Participation.objects.values_list("platform_participant_id", flat=True)) == [
        "5fcloudresearch0a1b2c3d4e5f6a7b8c9d", "5fmturk0a1b2c3d4e5f6a7b8c9d", "5fprolific0a1b2c3d4e5f6a7b8c9d"]
