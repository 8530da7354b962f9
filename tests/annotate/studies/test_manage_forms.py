"""Every form of a study's manage page, refused: the page comes back with status
400, what was typed still in the form, the error at its field and a summary at
the top that links to the form; nothing is saved. A study judged elsewhere
(imported) shows none of the controls that cannot apply to it, and the page
says one thing about the completion code."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.core import serializers
from django.urls import reverse
from django.utils.html import escape

from annotate.models import (
    ExclusionEvent,
    Invitation,
    Participation,
    StoppingRules,
    Study,
    StudyOrigin,
    StudyStatus,
)
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from tests.annotate.factories import client_for, make_evaluator, make_study


def database_state() -> str:
    """Every row a manage-page form may write, as text."""
    rows = [*Study.objects.order_by("pk"), *StoppingRules.objects.order_by("pk"), *Invitation.objects.order_by("pk"),
            *Participation.objects.order_by("pk"), *ExclusionEvent.objects.order_by("pk")]
    return serializers.serialize("json", rows)


@dataclass(frozen=True)
class Refusal:
    """One refused submission: where it goes, what it sends, what must come back."""

    url: str  # a URL name; "pid" in ``data`` keys stands for the evaluator's participation id
    data: dict[str, str]
    kept: tuple[str, ...]  # typed values the re-rendered page must show
    field_id: str  # the id of the field the error belongs to
    error: str
    anchor: str  # the form the summary links to
    method: str = "post"
    correctable: bool = True  # False: a refusal that other values cannot turn into a success


CORRECT = "Correct the marked field"
STOPPING_MIN_0 = "Ensure this value is greater than or equal to 0."
REFUSALS = {
    "stopping rules: a negative budget beside a reliability and a judgment budget": Refusal(
        "study_stopping_rules", {"target_reliability": "0.8", "max_judgments": "500", "alpha": "0.05",
                                 "budget": "-1"},
        ('value="0.8"', 'value="500"', 'value="-1"'), "id_budget", STOPPING_MIN_0, "stopping-form"),
    "stopping rules: a budget without a pay (the service's refusal)": Refusal(
        "study_stopping_rules", {"target_reliability": "0.8", "alpha": "0.05", "budget": "100"},
        ('value="0.8"', 'value="100"'), "id_pay_per_judgment", "A budget in money needs pay per judgment above 0",
        "stopping-form"),
    "quality settings: a negative speeder threshold beside a completion code": Refusal(
        "study_quality_settings", {"speeder_seconds": "-2", "completion_code": "TYPED-CODE-7",
                                   "participant_param": "PID"},
        ('value="TYPED-CODE-7"', 'value="PID"', 'value="-2"'), "id_speeder_seconds", STOPPING_MIN_0,
        "settings-form"),
    "quality settings: a parameter name with a space (the service's refusal)": Refusal(
        "study_quality_settings", {"speeder_seconds": "3.5", "completion_code": "TYPED-CODE-8",
                                   "participant_param": "my id"},
        ('value="TYPED-CODE-8"', 'value="3.5"', 'value="my id"'), "id_participant_param",
        "Participant id parameter must be letters, digits", "settings-form"),
    "invitation: a note longer than 200 characters": Refusal(
        "study_invitation_create", {"note": "n" * 201}, ('value="' + "n" * 201 + '"',), "id_note",
        "Ensure this value has at most 200 characters (it has 201).", "invitation-form"),
    "exclusion: a blank reason": Refusal(
        "study_evaluator_exclude", {"reason": "   "}, (), "reason-pid", "A reason is required to exclude an evaluator",
        "evaluator-pid"),
    "include again: an evaluator who is not excluded": Refusal(
        "study_evaluator_restore", {"reason": "typed reason"}, (), "reason-pid", "not excluded", "evaluator-pid",
        correctable=False),
    "status: a status that does not exist": Refusal(
        "study_status", {"status": "finished"}, (), "study-status", "Select a valid choice", "study-status"),
    "price the projections: a negative pay": Refusal(
        "study_manage", {"pay": "-5"}, ('value="-5"',), "id_pay", STOPPING_MIN_0, "cost-form", method="get"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(REFUSALS))
def test_every_manage_form_refused_keeps_what_was_typed_and_saves_nothing(catalog, olga, case):
    refusal = REFUSALS[case]
    study = make_study(catalog, owner=olga)
    stopping_rules_set(study=study, values=StoppingInput(alpha=Decimal("0.05"), max_judgments=40,
                                                         pay_per_judgment=Decimal("0.25")))
    evaluator = make_evaluator(study, "cy")
    kwargs = {"study_id": study.pk} | ({"participation_id": evaluator.pk} if "evaluator" in refusal.url else {})
    before = database_state()
    client = client_for(olga)
    page = getattr(client, refusal.method)(reverse(f"annotate:{refusal.url}", kwargs=kwargs), refusal.data)
    html = page.content.decode()
    assert page.status_code == 400
    assert database_state() == before
    for typed in refusal.kept:
        assert typed in html, typed
    field_id = refusal.field_id.replace("pid", str(evaluator.pk))
    # the error stands at its field: after the field's id and before the next field or the end of its block
    at_field = html.split(f'id="{field_id}"', 1)[1].split("</p>")[0].split("</td>")[0]
    assert escape(refusal.error) in at_field or refusal.error in at_field, at_field
    summary = html.split('id="form-problems"')[1].split("</div>")[0]
    anchor = refusal.anchor.replace("pid", str(evaluator.pk))
    assert html.count('class="messages"') == 0  # no banner of the old way beside it
    if not refusal.correctable:
        assert CORRECT not in summary and "not included again." in summary and "not excluded" in summary
        return
    if refusal.method == "get":  # a price query saves nothing, so does not say it saved nothing
        assert "Nothing was saved." not in summary and "priced at the rules&#x27; own pay." in summary
        assert f'href="#{anchor}"' in summary and "correct it and price them again" in summary
    else:
        assert f'href="#{anchor}"' in summary and "Nothing was saved." in summary and CORRECT in summary
    assert f'id="{anchor}"' in html  # the link has somewhere to go
    assert html.count('class="messages"') == 0  # no banner of the old way beside it
    title, text = summary.split("<li>")[1].split(">", 1)[1].split(": ", 1)
    assert not text.startswith(title)  # "<what was not done>: <field>: <error>", no word said twice


@pytest.mark.django_db
def test_a_valid_submission_still_saves_and_goes_back_to_the_page(catalog, olga):
    study = make_study(catalog, owner=olga)
    url = reverse("annotate:study_stopping_rules", kwargs={"study_id": study.pk})
    page = client_for(olga).post(url, {"target_reliability": "0.8", "max_judgments": "500", "alpha": "0.05"})
    assert page.status_code == 302 and page["Location"].endswith(f"/studies/{study.pk}/manage/")
    rules = StoppingRules.objects.get(study=study)
    assert (rules.target_reliability, rules.max_judgments) == (Decimal("0.800"), 500)


@pytest.fixture
def imported(catalog, olga):
    study = make_study(catalog, owner=olga, n_pairs=1)
    Study.objects.filter(pk=study.pk).update(origin=StudyOrigin.IMPORTED, status=StudyStatus.CLOSED)
    study.refresh_from_db()
    return study


@pytest.mark.django_db
def test_an_imported_study_shows_no_control_that_cannot_apply(imported, olga):
    page = client_for(olga).get(reverse("annotate:study_manage", kwargs={"study_id": imported.pk}))
    html = page.content.decode()
    assert page.status_code == 200
    for absent in ('id="invitations"', "Prolific", 'id="completion"', "Earned the code", "Reopen study",
                   'id="stopping"', 'id="id_participant_param"', 'id="id_completion_code"', "1 pairs"):
        assert absent not in html, absent
    assert "1 pair with judgments imported from elsewhere" in html
    assert 'id="id_speeder_seconds"' in html  # flagging speeders still applies to judgments made elsewhere
    assert "Quality settings" in html and "Declined consent" not in html


@pytest.mark.django_db
def test_an_imported_study_refuses_an_invitation_and_reopening(imported, olga):
    client = client_for(olga)
    before = database_state()
    for name, data in (("study_invitation_create", {"note": "x"}), ("study_status", {"status": "open"})):
        page = client.post(reverse(f"annotate:{name}", kwargs={"study_id": imported.pk}), data)
        assert page.status_code == 400, name
        assert "judgments were made elsewhere" in page.content.decode()
    confirm = client.get(reverse("annotate:study_status_confirm", kwargs={"study_id": imported.pk}))
    assert confirm.status_code == 400 and 'id="confirm-status"' not in confirm.content.decode()
    assert database_state() == before


@pytest.mark.django_db
def test_an_imported_study_saves_its_speeder_threshold_and_keeps_the_rest(imported, olga):
    Study.objects.filter(pk=imported.pk).update(completion_code="KEEP", participant_param="PID")
    url = reverse("annotate:study_quality_settings", kwargs={"study_id": imported.pk})
    assert client_for(olga).post(url, {"speeder_seconds": "4"}).status_code == 302
    imported.refresh_from_db()
    assert (imported.speeder_seconds, imported.completion_code, imported.participant_param) == (4.0, "KEEP", "PID")


@pytest.mark.django_db
@pytest.mark.parametrize(("code", "label", "absent"), [("", "Met the rules", "Earned the code"),
                                                        ("ABC", "Earned the code", "No completion code is set")])
def test_the_completion_counts_say_what_the_code_setting_says(catalog, olga, code, label, absent):
    study = make_study(catalog, owner=olga)
    Study.objects.filter(pk=study.pk).update(completion_code=code)
    html = client_for(olga).get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert f"<dt>{label}</dt>" in html and absent not in html


@pytest.mark.django_db
def test_refusals_that_no_value_can_correct_say_why_and_ask_for_no_correction(catalog, olga, imported):
    from tests.annotate.factories import judge

    study = make_study(catalog, owner=olga, name="Judged")
    judge(make_evaluator(study, "eve"), ["left"])
    client = client_for(olga)
    cases = [  # (url, study, data, title, reason)
        ("study_stopping_rules", study, {"max_judgments": "50", "alpha": "0.05"}, "Stopping rules not saved.",
         "are frozen: it already has judgments"),
        ("study_status_confirm", imported, {}, "Status not changed.", "made elsewhere: it stays closed."),
    ]
    for url, target, data, title, reason in cases:
        before = database_state()
        response = client.post(reverse(f"annotate:{url}", kwargs={"study_id": target.pk}), data)
        html = response.content.decode()
        summary = html.split('id="form-problems"')[1].split("</div>")[0]
        assert response.status_code == 400 and database_state() == before, url
        assert CORRECT not in summary and title in summary and escape(reason) in summary, summary


@pytest.mark.django_db
def test_editing_a_frozen_study_says_on_the_manage_page_that_its_settings_cannot_change(catalog, olga):
    from tests.annotate.factories import judge

    study = make_study(catalog, owner=olga, name="Judged")
    judge(make_evaluator(study, "eve"), ["left"])
    before = database_state()
    for method, data in (("get", {}), ("post", {"name": "Renamed", "n_pairs": "3"})):
        client = client_for(olga)
        response = getattr(client, method)(reverse("annotate:study_edit", kwargs={"study_id": study.pk}), data)
        assert response.status_code == 302 and response["Location"] == f"/studies/{study.pk}/manage/"
        # The next page this session opens shows it, even from a client that keeps only its session cookie.
        page = client_for(olga)
        page.cookies["sessionid"] = client.cookies["sessionid"]
        html = page.get(response["Location"]).content.decode()
        messages_ = html.split('class="messages"')[1].split("</ul>")[0]
        assert "This study has judgments, so its settings can no longer change." in messages_, method
    assert database_state() == before
