"""Study list and the researcher view of a study: coverage, progress, invitations, status."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotate.forms.judging import InvitationForm, StudyStatusForm
from annotate.models import Invitation, Study
from annotate.selectors.studies import (
    participations_of,
    studies_for_researcher,
    study_coverage,
    study_scope_frozen,
    study_status_change,
    user_is_researcher,
)
from annotate.services.studies import invitation_create, invitation_revoke, study_set_status
from annotate.views.access import study_access_required


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
        "frozen": study_scope_frozen(study=study),
        "coverage": study_coverage(study=study),
        "invitation_form": InvitationForm(),
        "join_base": request.build_absolute_uri("/")[:-1],
    }
    return render(request, "annotate/judging/study_manage.html", context)


@study_access_required
@require_POST
def study_invitation_create(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = InvitationForm(request.POST)
    if form.is_valid():
        invitation_create(study=study, note=form.cleaned_data["note"], created_by=request.user)
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_POST
def study_invitation_revoke(request: HttpRequest, study_id: int, invitation_id: int) -> HttpResponse:
    invitation = get_object_or_404(Invitation, pk=invitation_id, study_id=study_id)
    invitation_revoke(invitation=invitation)
    return redirect("annotate:study_manage", study_id=study_id)


@study_access_required
@require_http_methods(["GET", "POST"])
def study_status(request: HttpRequest, study_id: int) -> HttpResponse:
    """GET ``?status=...``: the confirmation step; POST: launch, close or reopen."""
    study = get_object_or_404(Study, pk=study_id)
    form = StudyStatusForm(request.POST if request.method == "POST" else request.GET)
    if not form.is_valid():
        return redirect("annotate:study_manage", study_id=study_id)
    if request.method == "GET":
        return render(request, "annotate/judging/study_status_confirm.html",
                      {"study": study, "form": form, "change": study_status_change(study=study,
                                                                                   status=form.cleaned_data["status"])})
    study_set_status(study=study, status=form.cleaned_data["status"])
    messages.success(request, f"Study {study.name!r} is now {study.get_status_display()}.")
    return redirect("annotate:study_manage", study_id=study_id)
