"""Study list and the researcher view of a study: coverage, progress, invitations."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import NON_FIELD_ERRORS
from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.core import form_add_service_error, form_problems
from annotate.models import Invitation, Participation, Study, StudyOrigin, StudyStatus
from annotate.reports import study_live_counts
from annotate.studies.forms.judging import (
    ExclusionForm,
    InvitationForm,
    RestoreForm,
    StudyQualitySettingsForm,
    StudyStatusForm,
)
from annotate.studies.forms.stopping import CostForm, StoppingRulesForm
from annotate.studies.selectors.completion import study_completion_summary
from annotate.studies.selectors.stopping import stopping_rules_of, study_stopping_state
from annotate.studies.selectors.studies import (
    participations_of,
    study_scope_frozen,
    study_status_change,
    user_is_researcher,
)
from annotate.studies.selectors.study_list import study_list_rows
from annotate.studies.selectors.study_monitor import platform_link_query, study_monitor
from annotate.studies.services.participation import invitation_create, invitation_revoke
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from annotate.studies.services.studies import study_set_status
from annotate.studies.services.study_quality import (
    ERR_REASON_EMPTY,
    participation_exclude,
    participation_restore,
    study_quality_settings_update,
)
from annotate.studies.views.access import study_access_required

SETTINGS_FIELDS = ("speeder_seconds", "participant_param", "study_param", "session_param", "completion_code",
                   "completion_url", "completion_min_votes", "completion_min_check_share", "completion_min_seconds",
                   "screened_out_url", "resume_by_participant_id")

#: Why a study judged elsewhere (imported or derived) takes no invitation and keeps its status.
ERR_EXTERNAL_INVITATION = ("This study's judgments were made elsewhere: it takes no evaluators, "
                           "so it has no invitation links.")
ERR_EXTERNAL_STATUS = "This study's judgments were made elsewhere: it stays closed."


def studies(request: HttpRequest) -> HttpResponse:
    """Staff: every study. Researchers: the studies they own or were added to
    (manage and report). Evaluators: their own (straight in when only one)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if user_is_researcher(user=request.user):
        return render(request, "annotate/judging/study_list.html",
                      {"studies": study_list_rows(user=request.user), "can_manage": True})
    mine = participations_of(user=request.user)
    if len(mine) == 1:
        return redirect("annotate:study_entry", study_id=mine[0].study_id)
    return render(request, "annotate/judging/my_studies.html", {"participations": mine})


#: The summary's lead (in bold, then what to do) for a refused submission, and for a price query with a bad
#: pay (a GET: nothing was to be saved).
NOTHING_SAVED = ("Nothing was saved.", "Correct the marked field and send the form again:")
NOT_PRICED = ("The projections are priced at the rules' own pay.", "The pay entered cannot be used; correct it "
              "and price them again:")


@dataclass(frozen=True)
class Problem:
    """A refused submission as the manage page's summary shows it: the form's anchor, its name, what is wrong,
    and whether sending the form again with other values can succeed (an error at a field) or not (a refusal:
    the study is frozen, judged elsewhere, ...)."""

    anchor: str
    title: str
    text: str
    correctable: bool = True
    #: What the summary says before a correctable problem (a priced view writes nothing, so says so differently).
    lead: tuple[str, str] = NOTHING_SAVED

    @classmethod
    def of(cls, form: BaseForm, anchor: str, title: str) -> Problem:
        """The problem of a bound, invalid ``form``: correctable when one of its fields has an error."""
        fields = [name for name in form.errors if name != NON_FIELD_ERRORS]
        return cls(anchor, title, form_problems(form), correctable=bool(fields))


def _is_external(study: Study) -> bool:
    """Whether the study's judgments were made elsewhere (imported or derived): no invitations, no reopening."""
    return study.origin != StudyOrigin.JUDGED


def _settings_form(study: Study, data: QueryDict | None = None) -> StudyQualitySettingsForm:
    """The quality and crowd settings form; a study judged elsewhere keeps only its speeder threshold."""
    form = StudyQualitySettingsForm(data, initial={f: getattr(study, f) for f in SETTINGS_FIELDS})
    if _is_external(study):
        for name in SETTINGS_FIELDS:
            if name != "speeder_seconds":
                del form.fields[name]
    return form


def _manage_page(request: HttpRequest, study: Study, *, problem: Problem | None = None,
                 **forms_: object) -> HttpResponse:
    """The manage page; with ``problem``, a refused submission re-shown with status 400: its bound form
    (one of ``forms_``, keeping what was typed, errors at their fields) and a summary at the top."""
    stopping = _stopping_context(request, study)
    context = {
        "study": study,
        "external": _is_external(study),
        "frozen": study_scope_frozen(study=study),
        "monitor": study_monitor(study=study),
        "live": study_live_counts(study=study),
        "completion": study_completion_summary(study=study),
        "invitation_form": InvitationForm(),
        "settings_form": _settings_form(study),
        "exclusion": None,
        "status_error": "",
        "join_base": request.build_absolute_uri("/")[:-1],
        "platform_query": platform_link_query(study=study),
        **stopping,
        **forms_,
    }
    cost_form = context["cost_form"]
    if problem is None and cost_form.is_bound and not cost_form.is_valid():
        problem = dataclasses.replace(Problem.of(cost_form, "cost-form", "Pricing"), lead=NOT_PRICED)
    context["problems"] = [problem] if problem else []
    return render(request, "annotate/judging/study_manage.html", context, status=400 if problem else 200)


def _refused(request: HttpRequest, study: Study, anchor: str, title: str, **forms_: object) -> HttpResponse:
    """The manage page re-shown (400) with the bound, invalid form in ``forms_``, summarised under ``title``."""
    form = next(iter(forms_.values()))
    return _manage_page(request, study, problem=Problem.of(form, anchor, title), **forms_)


@study_access_required
def study_manage(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("scoring_run"), pk=study_id)
    return _manage_page(request, study)


def _stopping_context(request: HttpRequest, study: Study) -> dict[str, object]:
    """The stopping-rule panel: each rule's state with projections priced at ``?pay=``, and the rules' form."""
    rules = stopping_rules_of(study=study)
    cost_form = CostForm(request.GET or None, initial={"pay": rules.pay_per_judgment if rules else None})
    pay = cost_form.cleaned_data["pay"] if cost_form.is_valid() else None
    initial = {f: getattr(rules, f) for f in StoppingRulesForm.base_fields} if rules else {}
    return {"stopping": study_stopping_state(study=study, rules=rules, projections=True, pay=pay),
            "stopping_form": StoppingRulesForm(initial=initial), "cost_form": cost_form}


@study_access_required
@require_POST
def study_stopping_rules(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = StoppingRulesForm(request.POST)
    if form.is_valid():
        try:
            stopping_rules_set(study=study, values=StoppingInput(**form.cleaned_data))
        except ValueError as error:
            form_add_service_error(form, error)
        else:
            messages.success(request, "Stopping rules saved.")
            return redirect("annotate:study_manage", study_id=study_id)
    return _refused(request, study, "stopping-form", "Stopping rules not saved", stopping_form=form)


@study_access_required
@require_POST
def study_invitation_create(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = InvitationForm(request.POST)
    if form.is_valid() and _is_external(study):
        form.add_error(None, ERR_EXTERNAL_INVITATION)
    if not form.is_valid():
        return _refused(request, study, "invitation-form", "No link made", invitation_form=form)
    invitation_create(study=study, note=form.cleaned_data["note"], created_by=request.user)
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_invitation_revoke(request: HttpRequest, study_id: int, invitation_id: int) -> HttpResponse:
    invitation = get_object_or_404(Invitation, pk=invitation_id, study_id=study_id)
    invitation_revoke(invitation=invitation)
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
def study_status_confirm(request: HttpRequest, study_id: int) -> HttpResponse:
    """The confirmation step before launching (a draft), closing or reopening: what it does; its form posts
    to ``study_status``."""
    study = get_object_or_404(Study, pk=study_id)
    if _is_external(study):
        refusal = Problem("study-status", "Status not changed", ERR_EXTERNAL_STATUS, correctable=False)
        return _manage_page(request, study, problem=refusal, status_error=ERR_EXTERNAL_STATUS)
    target = StudyStatus.CLOSED if study.status == StudyStatus.OPEN else StudyStatus.OPEN
    context = {"study": study, "target": target, "monitor": study_monitor(study=study),
               "change": study_status_change(study=study, status=target)}
    return render(request, "annotate/judging/study_status_confirm.html", context)


@study_access_required
@require_POST
def study_status(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = StudyStatusForm(request.POST)
    if form.is_valid() and _is_external(study) and form.cleaned_data["status"] != study.status:
        form.add_error(None, ERR_EXTERNAL_STATUS)
    if form.is_valid():
        try:
            study_set_status(study=study, status=form.cleaned_data["status"])
        except ValueError as error:
            form_add_service_error(form, error)
    if not form.is_valid():
        return _manage_page(request, study, problem=Problem.of(form, "study-status", "Status not changed"),
                            status_error=form_problems(form))
    messages.success(request, f"Study {study.name!r} is now {study.get_status_display()}.")
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_quality_settings(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = _settings_form(study, request.POST)
    if form.is_valid():
        values = {f: getattr(study, f) for f in SETTINGS_FIELDS} | form.cleaned_data
        try:
            study_quality_settings_update(study=study, **values)
        except ValueError as error:
            form_add_service_error(form, error)
        else:
            messages.success(request, "Settings saved.")
            return redirect("annotate:study_manage", study_id=study_id)
    return _refused(request, study, "settings-form", "Settings not saved", settings_form=form)


def _evaluator_action(request: HttpRequest, study_id: int, participation_id: int, *, exclude: bool) -> HttpResponse:
    """Exclude an evaluator or include them again; a refusal re-shows the page (400) with the error at their row."""
    participation = get_object_or_404(Participation, pk=participation_id, study_id=study_id)
    form = (ExclusionForm if exclude else RestoreForm)(request.POST)
    form.fields["reason"].error_messages["required"] = ERR_REASON_EMPTY[:1].upper() + ERR_REASON_EMPTY[1:]
    if form.is_valid():
        try:
            if exclude:
                participation_exclude(participation=participation, reason=form.cleaned_data["reason"],
                                      by=request.user)
            else:
                participation_restore(participation=participation, by=request.user,
                                      reason=form.cleaned_data["reason"])
        except ValueError as error:
            form_add_service_error(form, error)
        else:
            return redirect("annotate:study_manage", study_id=study_id)
    study = get_object_or_404(Study, pk=study_id)
    name = participation.user.get_username()
    title = f"{name} not excluded" if exclude else f"{name} not included again"
    row = {"participation_id": participation_id, "reason": request.POST.get("reason", "")[:500],
           "errors": form.errors.get("reason") or form.non_field_errors()}
    return _manage_page(request, study, problem=Problem.of(form, f"evaluator-{participation_id}", title),
                        exclusion=row, exclusion_form=form)


@study_access_required
@require_POST
def study_evaluator_exclude(request: HttpRequest, study_id: int, participation_id: int) -> HttpResponse:
    return _evaluator_action(request, study_id, participation_id, exclude=True)


@study_access_required
@require_POST
def study_evaluator_restore(request: HttpRequest, study_id: int, participation_id: int) -> HttpResponse:
    return _evaluator_action(request, study_id, participation_id, exclude=False)
