"""Object-level permission on studies: who sees and changes which study.

Cast: ``olga`` (researcher, owns study "Olga's"), ``max`` (researcher, added
to it as a member), ``otto`` (researcher, owns only study "Otto's": an
outsider to Olga's), ``ada`` (evaluator in Olga's study), ``root`` (staff).
"""
from __future__ import annotations

import re

import pytest
from django.contrib.admin.sites import site
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.models import Invitation, Study, StudyStatus
from annotate.studies.selectors.studies import can_manage_study, studies_visible_to, study_for_researcher
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import client_for, make_catalog, make_evaluator, make_researcher, make_study, make_user

pytestmark = pytest.mark.django_db

PLOT_KW = {"name": "agreement", "fmt": "png"}
#: Every researcher page and download of one study (GET), with extra URL kwargs.
STUDY_GETS = (
    ("study_manage", {}), ("study_edit", {}), ("study_status_confirm", {}), ("study_report", {}),
    ("study_report_json", {}), ("study_report_csv", {}), ("study_report_zip", {}), ("study_judgments_csv", {}),
    ("study_report_pairs_csv", {}),
    ("study_report_plot", PLOT_KW),
)
#: Every researcher write on one study (POST), with the data that would succeed for its owner.
STUDY_POSTS = (
    ("study_status", {"status": "closed"}), ("study_invitation_create", {"note": "sneaky"}),
    ("study_edit", {"name": "renamed"}), ("study_report_pools", {"run": "1"}),
)
API_STUDY = ("api_study_report", "api_study_judgments")


@pytest.fixture
def cast():
    catalog = make_catalog(per_subject=4)
    olga, member, otto = make_researcher("olga"), make_researcher("max"), make_researcher("otto")
    study = make_study(catalog, n_pairs=4, name="Olga's", owner=olga)
    study.members.add(member)
    other = make_study(catalog, n_pairs=2, name="Otto's", owner=otto)
    ada = make_evaluator(study, "ada")
    screen = judging_screen(participation=ada)
    judgment_submit(participation=ada, pair_id=screen.pair.pk, left_question_id=screen.left.pk, choice="left")
    root = make_user("root", staff=True)
    return {"study": study, "other": other, "olga": olga, "max": member, "otto": otto, "ada": ada.user,
            "root": root}



def url(name: str, study: Study, extra: dict | None = None) -> str:
    return reverse(f"annotate:{name}", kwargs={"study_id": study.pk, **(extra or {})})


def test_the_selector_lets_owner_member_and_staff_manage_and_nobody_else(cast):
    study = cast["study"]
    for who, allowed in {"olga": True, "max": True, "root": True, "otto": False, "ada": False}.items():
        assert can_manage_study(user=cast[who], study=study) is allowed, who
        assert (study_for_researcher(user=cast[who], study_id=study.pk) is not None) is allowed, who
    assert list(studies_visible_to(user=cast["olga"])) == [study]
    assert list(studies_visible_to(user=cast["otto"])) == [cast["other"]]
    assert set(studies_visible_to(user=cast["root"])) == {study, cast["other"]}
    assert list(studies_visible_to(user=cast["ada"])) == []


def test_the_owner_and_a_member_reach_every_page_and_download(cast):
    study = cast["study"]
    for who in ("olga", "max", "root"):
        client = client_for(cast[who])
        for name, extra in STUDY_GETS:
            response = client.get(url(name, study, extra))
            assert response.status_code in (200, 302), (who, name, response.status_code)
            if response.status_code == 302:  # edit of a judged study, status without ?status=: back to manage
                assert response.url == url("study_manage", study), (who, name)


def test_an_outsider_researcher_gets_404_on_every_page_download_and_write(cast):
    study = cast["study"]
    client = client_for(cast["otto"])
    for name, extra in STUDY_GETS:
        assert client.get(url(name, study, extra)).status_code == 404, name
    for name, data in STUDY_POSTS:
        assert client.post(url(name, study), data).status_code == 404, name
    invitation = invitation_create(study=study, note="real")
    revoke = reverse("annotate:study_invitation_revoke", kwargs={"study_id": study.pk, "invitation_id": invitation.pk})
    assert client.post(revoke).status_code == 404
    study.refresh_from_db()
    invitation.refresh_from_db()
    assert study.status == StudyStatus.OPEN and study.name == "Olga's" and invitation.revoked_at is None
    assert list(Invitation.objects.filter(study=study)) == [invitation]


def test_an_outsider_cannot_smuggle_a_study_through_the_revoke_url(cast):
    """The invitation belongs to Olga's study; Otto names his own study in the URL."""
    invitation = invitation_create(study=cast["study"], note="real")
    revoke = reverse("annotate:study_invitation_revoke",
                     kwargs={"study_id": cast["other"].pk, "invitation_id": invitation.pk})
    assert client_for(cast["otto"]).post(revoke).status_code == 404
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


def test_the_study_list_shows_each_researcher_only_their_studies(cast):
    olga_page = client_for(cast["olga"]).get(reverse("annotate:studies")).content.decode()
    otto_page = client_for(cast["otto"]).get(reverse("annotate:studies")).content.decode()
    root_page = client_for(cast["root"]).get(reverse("annotate:studies")).content.decode()
    assert "Olga&#x27;s" in olga_page and "Otto&#x27;s" not in olga_page
    assert "Otto&#x27;s" in otto_page and "Olga&#x27;s" not in otto_page
    assert "Olga&#x27;s" in root_page and "Otto&#x27;s" in root_page


def test_the_api_lists_and_serves_only_the_callers_studies(cast):
    study, other = cast["study"], cast["other"]
    otto = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=cast['otto'])[1]}")
    member = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=cast['max'])[1]}")
    assert [s["id"] for s in otto.get(reverse("annotate:api_studies")).json()["studies"]] == [other.pk]
    assert [s["id"] for s in member.get(reverse("annotate:api_studies")).json()["studies"]] == [study.pk]
    for name in API_STUDY:
        target = reverse(f"annotate:{name}", kwargs={"study_id": study.pk})
        missing = otto.get(target)
        assert missing.status_code == 404, name
        assert missing.json() == {"error": f"no study {study.pk}"}  # as for a study that does not exist
        assert member.get(target, {"n_boot": 20}).status_code == 200, name


def test_an_evaluator_reaches_no_researcher_page(cast):
    study = cast["study"]
    client = client_for(cast["ada"])
    for name, extra in STUDY_GETS:
        assert client.get(url(name, study, extra)).status_code == 403, name
    for name, data in STUDY_POSTS:
        assert client.post(url(name, study), data).status_code == 403, name
    assert client.get(reverse("annotate:study_create")).status_code == 403
    assert client.get(reverse("annotate:study_scope_counts")).status_code == 403
    assert client.post(reverse("annotate:markdown_preview"), {"text": "x"}).status_code == 403
    assert client.get(reverse("annotate:api_studies")).status_code == 403
    for name in API_STUDY:
        assert client.get(reverse(f"annotate:{name}", kwargs={"study_id": study.pk})).status_code == 403, name


def test_the_admin_changelist_shows_staff_every_study_and_add_goes_to_the_page(cast):
    request = RequestFactory().get("/admin/annotate/study/")
    request.user = cast["root"]
    admin = site._registry[Study]
    assert set(admin.get_queryset(request)) == {cast["study"], cast["other"]}
    response = client_for(make_user("boss", staff=True)).get(reverse("admin:annotate_study_add"))
    assert response.status_code == 302 and response.url == reverse("annotate:study_create")


def test_the_admin_queryset_is_the_selectors(cast):
    """A request by a researcher (were they let into an admin site) gets only their own studies."""
    request = RequestFactory().get("/admin/annotate/study/")
    request.user = cast["otto"]
    assert list(site._registry[Study].get_queryset(request)) == [cast["other"]]


def test_staff_add_a_researcher_to_a_study_in_the_admin_and_bad_onboarding_lists_are_refused(cast):
    study, otto = cast["study"], cast["otto"]
    boss = get_user_model().objects.create_superuser(username="boss", password=None)
    client = client_for(boss)
    url = reverse("admin:annotate_study_change", args=[study.pk])
    data = {"name": study.name, "target_judgments_per_pair": 20, "guidelines": "g", "consent_text": "I agree.",
            "onboarding_questions": ["education_level", "shoe_size"], "members": [cast["max"].pk, otto.pk],
            "status": "open", "pairs-TOTAL_FORMS": 0, "pairs-INITIAL_FORMS": 0}
    # the onboarding questions are tick boxes, one per question, ticked as stored; no JSON box to type into
    page = client.get(url).content.decode()
    assert re.search(r'<textarea[^>]*name="onboarding_questions"', page) is None
    for value in ("field_of_study", "education_level", "qualified_subjects"):
        assert f'type="checkbox" name="onboarding_questions" value="{value}"' in page
    refused = client.post(url, data)
    assert refused.status_code == 400
    assert "Select a valid choice. shoe_size is not one of the available choices." in refused.content.decode()
    ticked = ["qualified_subjects", "education_level"]
    assert client.post(url, {**data, "onboarding_questions": ticked}).status_code == 302
    study.refresh_from_db()  # stored in the listed order
    assert set(study.members.all()) == {cast["max"], otto}
    assert study.onboarding_questions == ["education_level", "qualified_subjects"]
    assert client.post(url, {k: v for k, v in data.items() if k != "onboarding_questions"}).status_code == 302
    study.refresh_from_db()  # nothing ticked: nothing asked
    assert study.onboarding_questions == []
    assert can_manage_study(user=otto, study=study)
