"""Study list and the researcher view of a study: coverage, progress, invitations."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.core import form_problems, service_error_text
from annotate.models import Invitation, Participation, Study, StudyStatus
from annotate.reports import study_live_counts
from annotate.studies.forms.judging import (
    ExclusionForm,
    InvitationForm,
    RestoreForm,
    StudyQualitySettingsForm,
    StudyStatusForm,
)
from annotate.studies.forms.stopping import ERR_NOT_SAVED, CostForm, StoppingRulesForm, stopping_form_problems
from annotate.studies.selectors.completion import study_completion_summary
from annotate.studies.selectors.stopping import stopping_rules_of, study_stopping_state
from annotate.studies.selectors.studies import (
    participations_of,
    studies_for_researcher,
    study_scope_frozen,
    study_status_change,
    user_is_researcher,
)
from annotate.studies.selectors.study_monitor import platform_link_query, study_monitor
from annotate.studies.services.participation import invitation_create, invitation_revoke
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from annotate.studies.services.studies import study_set_status
from annotate.studies.services.study_quality import (
    participation_exclude,
    participation_restore,
    study_quality_settings_update,
)
from annotate.studies.views.access import study_access_required

SETTINGS_FIELDS = ("speeder_seconds", "participant_param", "study_param", "session_param", "completion_code",
                   "completion_url", "completion_min_votes", "completion_min_check_share", "completion_min_seconds",
                   "screened_out_url", "resume_by_participant_id")


def studies(request: HttpRequest) -> HttpResponse:
    """Staff: every study. Researchers: the studies they own or were added to
    (manage and report). Evaluators: their own (straight in when only one)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if user_is_researcher(user=request.user):
        return render(request, "annotate/judging/study_list.html",
                      {"studies": studies_for_researcher(user=request.user), "can_manage": True})
    mine = participations_of(user=request.user)
    if len(mine) == 1:
        return redirect("annotate:study_entry", study_id=mine[0].study_id)
    return render(request, "annotate/judging/my_studies.html", {"participations": mine})


@study_access_required
def study_manage(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("scoring_run"), pk=study_id)
    context = {
        "study": study,
        "frozen": study_scope_frozen(study=study),
        "monitor": study_monitor(study=study),
        "live": study_live_counts(study=study),
        "completion": study_completion_summary(study=study),
        "invitation_form": InvitationForm(),
        "settings_form": StudyQualitySettingsForm(initial={f: getattr(study, f) for f in SETTINGS_FIELDS}),
        "join_base": request.build_absolute_uri("/")[:-1],
        "platform_query": platform_link_query(study=study),
        **_stopping_context(request, study),
    }
    return render(request, "annotate/judging/study_manage.html", context)


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
    if not form.is_valid():
        messages.error(request, stopping_form_problems(form))
        return redirect("annotate:study_manage", study_id=study_id)
    try:
        stopping_rules_set(study=study, values=StoppingInput(**form.cleaned_data))
    except ValueError as error:
        messages.error(request, ERR_NOT_SAVED.format(problems=service_error_text(form, error)))
    else:
        messages.success(request, "Stopping rules saved.")
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_invitation_create(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = InvitationForm(request.POST)
    if form.is_valid():
        invitation_create(study=study, note=form.cleaned_data["note"], created_by=request.user)
    else:
        messages.error(request, "No link made: " + form_problems(form))
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
    target = StudyStatus.CLOSED if study.status == StudyStatus.OPEN else StudyStatus.OPEN
    context = {"study": study, "target": target, "monitor": study_monitor(study=study),
               "change": study_status_change(study=study, status=target)}
    return render(request, "annotate/judging/study_status_confirm.html", context)


@study_access_required
@require_POST
def study_status(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = StudyStatusForm(request.POST)
    if form.is_valid():
        study_set_status(study=study, status=form.cleaned_data["status"])
        messages.success(request, f"Study {study.name!r} is now {study.get_status_display()}.")
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_quality_settings(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = StudyQualitySettingsForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Settings not saved: " + form_problems(form))
        return redirect("annotate:study_manage", study_id=study_id)
    try:
        study_quality_settings_update(study=study, **form.cleaned_data)
    except ValueError as error:
        messages.error(request, f"Settings not saved: {service_error_text(form, error)}")
    else:
        messages.success(request, "Settings saved.")
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_evaluator_exclude(request: HttpRequest, study_id: int, participation_id: int) -> HttpResponse:
    participation = get_object_or_404(Participation, pk=participation_id, study_id=study_id)
    form = ExclusionForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        participation_exclude(participation=participation, reason=reason, by=request.user)
    except ValueError as error:
        messages.error(request, service_error_text(form, error))
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_evaluator_restore(request: HttpRequest, study_id: int, participation_id: int) -> HttpResponse:
    participation = get_object_or_404(Participation, pk=participation_id, study_id=study_id)
    form = RestoreForm(request.POST)
    reason = form.cleaned_data["reason"] if form.is_valid() else ""
    try:
        participation_restore(participation=participation, by=request.user, reason=reason)
    except ValueError as error:
        messages.error(request, service_error_text(form, error))
    return redirect("annotate:study_manage", study_id=study_id)
