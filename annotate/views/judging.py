"""Evaluator-facing views: join by invitation, onboarding, guidelines, judging,
done. Blind: nothing here renders a score, a model or another evaluator's
answer. Every POST redirects (Post/Redirect/Get)."""
from __future__ import annotations

import re

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotate.forms.judging import JudgmentForm, OnboardingForm
from annotate.models import Participation
from annotate.selectors.studies import (
    evaluator_get_active,
    invitation_get_active,
    participation_get,
    participation_next_step,
    participation_progress,
    user_is_evaluator,
)
from annotate.services.judging import (
    InvalidSubmissionError,
    PairNotInStudyError,
    judging_screen,
    judgment_submit,
)
from annotate.services.studies import (
    InvitationRevokedError,
    StudyClosedError,
    invitation_accept,
    participation_accept_guidelines,
    participation_onboard,
)

RESUME_COOKIE = "eip_evaluator"
RESUME_SALT = "annotate.judging.resume"
RESUME_MAX_AGE = 180 * 24 * 3600
STEP_URLS = {
    "onboarding": "annotate:study_onboarding",
    "guidelines": "annotate:study_guidelines",
    "closed": "annotate:study_closed",
    "judge": "annotate:study_judge",
}
_STUDY_PATH = re.compile(r"^/studies/(\d+)/")


def _participation_or_404(request: HttpRequest, study_id: int) -> Participation:
    participation = participation_get(study_id=study_id, user=request.user)
    if participation is None:
        raise Http404("no such study for you")
    return participation


def _resume_user(request: HttpRequest):
    """The pseudonymous evaluator this browser joined as earlier, if any."""
    try:
        data = signing.loads(request.COOKIES.get(RESUME_COOKIE, ""), salt=RESUME_SALT, max_age=RESUME_MAX_AGE)
    except signing.BadSignature:
        return None
    return evaluator_get_active(pk=data.get("u"))


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    invitation = invitation_get_active(token=token)
    if invitation is None:
        return render(request, "annotate/judging/join_invalid.html", status=404)
    if not request.user.is_authenticated:
        returning = _resume_user(request)
        if returning is not None:
            login(request, returning, backend="django.contrib.auth.backends.ModelBackend")
    user = request.user if request.user.is_authenticated else None
    if user is not None and participation_get(study_id=invitation.study_id, user=user) is not None:
        return redirect("annotate:study_entry", study_id=invitation.study_id)
    if request.method == "GET":
        return render(request, "annotate/judging/join.html", {"study": invitation.study})
    try:
        participation, user, created = invitation_accept(invitation=invitation, user=user)
    except (InvitationRevokedError, StudyClosedError):
        return render(request, "annotate/judging/join_invalid.html", {"study": invitation.study}, status=404)
    if created:
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    response = redirect("annotate:study_entry", study_id=participation.study_id)
    if user_is_evaluator(user=user):
        response.set_cookie(
            RESUME_COOKIE,
            signing.dumps({"u": user.pk}, salt=RESUME_SALT),
            max_age=RESUME_MAX_AGE,
            httponly=True,
            samesite="Lax",
            secure=request.is_secure(),
        )
    return response


@login_required
def study_entry(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    return redirect(STEP_URLS[participation_next_step(participation=participation)], study_id=study_id)


@login_required
@require_http_methods(["GET", "POST"])
def study_onboarding(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    subjects = participation.study.subjects.order_by("name")
    initial = {
        "field_of_study": participation.field_of_study,
        "education_level": participation.education_level,
        "qualified_subjects": participation.qualified_subjects.all() if participation.onboarded_at else [],
    }
    form = OnboardingForm(request.POST or None, subjects=subjects, initial=initial)
    if request.method == "POST" and form.is_valid():
        participation_onboard(participation=participation, **form.cleaned_data)
        return redirect("annotate:study_guidelines", study_id=study_id)
    return render(request, "annotate/judging/onboarding.html", {"study": participation.study, "form": form})


@login_required
@require_http_methods(["GET", "POST"])
def study_guidelines(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    if participation.onboarded_at is None:
        return redirect("annotate:study_onboarding", study_id=study_id)
    if request.method == "POST":
        participation_accept_guidelines(participation=participation)
        return redirect("annotate:study_judge", study_id=study_id)
    context = {"participation": participation, "study": participation.study}
    return render(request, "annotate/judging/guidelines.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def study_judge(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    step = participation_next_step(participation=participation)
    if step != "judge":
        return redirect(STEP_URLS[step], study_id=study_id)
    if request.method == "POST":
        return _submit(request, participation)
    screen = judging_screen(participation=participation)
    if screen is None:
        return redirect("annotate:study_done", study_id=study_id)
    return render(request, "annotate/judging/judge.html", {"study": participation.study, "screen": screen})


def _submit(request: HttpRequest, participation: Participation) -> HttpResponse:
    form = JudgmentForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("This answer could not be read. Go back to the study page and try again.")
    try:
        judgment_submit(
            participation=participation,
            pair_id=form.cleaned_data["pair"],
            left_question_id=form.cleaned_data["left"],
            choice=form.cleaned_data["choice"],
            client_seconds=form.client_seconds(),
        )
    except PairNotInStudyError:
        raise Http404("no such pair in this study") from None
    except InvalidSubmissionError:
        return HttpResponseBadRequest("This answer does not match the pair you were shown. Nothing was saved.")
    except StudyClosedError:
        return redirect("annotate:study_closed", study_id=participation.study_id)
    return redirect("annotate:study_judge", study_id=participation.study_id)


@login_required
def study_done(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    progress = participation_progress(participation=participation)
    if not progress.done:
        return redirect("annotate:study_entry", study_id=study_id)
    return render(request, "annotate/judging/done.html", {"study": participation.study, "progress": progress})


@login_required
def study_closed(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    if participation_next_step(participation=participation) != "closed":
        return redirect("annotate:study_entry", study_id=study_id)
    progress = participation_progress(participation=participation)
    return render(request, "annotate/judging/closed.html", {"study": participation.study, "progress": progress})


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: a stale or expired form. Nothing was stored; send
    the evaluator back to their study (through the login page if needed)."""
    match = _STUDY_PATH.match(request.path)
    if match:
        target = reverse("annotate:study_entry", kwargs={"study_id": int(match.group(1))})
    else:
        target = reverse("annotate:studies")
    return render(request, "annotate/judging/csrf_failure.html", {"target": target}, status=403)
