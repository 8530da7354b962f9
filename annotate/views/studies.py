"""Study list and the staff view of a study: coverage, progress, invitations."""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate.forms.judging import InvitationForm, StudyStatusForm
from annotate.models import Invitation, Study
from annotate.selectors.studies import participations_of, studies_for_staff, study_coverage, user_is_researcher
from annotate.services.studies import invitation_create, invitation_revoke, study_set_status


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous -> login page; logged in but not staff -> 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapper


def studies(request: HttpRequest) -> HttpResponse:
    """Staff: every study (manage and report). Researchers: every study's
    report. Evaluators: their own (straight in when only one)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if user_is_researcher(user=request.user):
        return render(request, "annotate/judging/study_list.html",
                      {"studies": studies_for_staff(), "can_manage": request.user.is_staff})
    mine = participations_of(user=request.user)
    if len(mine) == 1:
        return redirect("annotate:study_entry", study_id=mine[0].study_id)
    return render(request, "annotate/judging/my_studies.html", {"participations": mine})


@staff_required
def study_manage(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("scoring_run"), pk=study_id)
    context = {
        "coverage": study_coverage(study=study),
        "invitation_form": InvitationForm(),
        "join_base": request.build_absolute_uri("/")[:-1],
    }
    return render(request, "annotate/judging/study_manage.html", context)


@staff_required
@require_POST
def study_invitation_create(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = InvitationForm(request.POST)
    if form.is_valid():
        invitation_create(study=study, note=form.cleaned_data["note"], created_by=request.user)
    return redirect("annotate:study_manage", study_id=study_id)


@staff_required
@require_POST
def study_invitation_revoke(request: HttpRequest, study_id: int, invitation_id: int) -> HttpResponse:
    invitation = get_object_or_404(Invitation, pk=invitation_id, study_id=study_id)
    invitation_revoke(invitation=invitation)
    return redirect("annotate:study_manage", study_id=study_id)


@staff_required
@require_POST
def study_status(request: HttpRequest, study_id: int) -> HttpResponse:
    study = get_object_or_404(Study, pk=study_id)
    form = StudyStatusForm(request.POST)
    if form.is_valid():
        study_set_status(study=study, status=form.cleaned_data["status"])
    return redirect("annotate:study_manage", study_id=study_id)
