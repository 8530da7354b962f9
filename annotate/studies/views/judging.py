"""Evaluator-facing views: join by invitation, onboarding, guidelines, judging,
done. Blind: nothing here renders a score, a model or another evaluator's
answer. Every POST redirects (Post/Redirect/Get)."""
from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.views import LogoutView, redirect_to_login
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotate.core import DECLINE_DOOR, attempt_failed, attempts_blocked, door_keys, posted, too_many_attempts
from annotate.models import Invitation, Participation
from annotate.models.studies import SKIP_BUTTON_LABEL
from annotate.studies.forms.judging import JudgmentForm, OnboardingForm
from annotate.studies.selectors.completion import completion_goal_text, completion_rules_text, completion_verdict
from annotate.studies.selectors.judging_tokens import PAIR, QUESTION, TOKEN_RE, judging_token_value
from annotate.studies.selectors.resume import resume_note
from annotate.studies.selectors.studies import (
    completion_url_for,
    evaluator_get_active,
    invitation_get_active,
    participation_get,
    participation_next_step,
    participation_progress,
    participation_qualified_subjects,
    screened_out_url_for,
    study_subjects,
    user_is_evaluator,
)
from annotate.studies.services.admission import CLOSED, FULL, REFUSED, REMEMBERED, SIGNED_IN, invitation_admission
from annotate.studies.services.judging import (
    InvalidSubmissionError,
    PairNotInStudyError,
    judging_assign_next,
    judging_screen,
    judgment_submit,
)
from annotate.studies.services.participation import (
    InvitationRevokedError,
    ParticipantIdInUseError,
    PlatformIdError,
    PlatformIds,
    PlatformPlaceholderError,
    StudyClosedError,
    consent_decline,
    invitation_accept,
    participation_accept_guidelines,
    participation_give_consent,
    participation_onboard,
    platform_ids_from_query,
)

#: A browser's long-lived random key: names no one, survives logging out.
BROWSER_COOKIE = "eip_browser"
BROWSER_KEY_RE = re.compile(r"[A-Za-z0-9_-]{32}")
BROWSER_MAX_AGE = 365 * 24 * 3600
RESUME_COOKIE = "eip_evaluator"
RESUME_SALT = "annotate.judging.resume"
RESUME_MAX_AGE = 180 * 24 * 3600
# The resume cookie names the evaluator per study it was issued for, at most this many studies.
RESUME_MAX_STUDIES = 20
# An answer posted after the session expired is not stored. The judging URL the
# evaluator comes back to carries the pair that was on screen (``?unsaved=<pair
# id>``, through the login page's ``next``); evaluators who come back through
# their invitation link instead get it from a short-lived signed cookie.
UNSAVED_PARAM = "unsaved"
UNSAVED_COOKIE = "eip_unsaved"
UNSAVED_SALT = "annotate.judging.unsaved"
UNSAVED_MAX_AGE = 24 * 3600
MSG_UNSAVED = "Your session had expired, so your last answer was not saved. Here is the same pair again."
MSG_CONSENT_MISSING = "Choose whether you agree to take part: press one of the two buttons."
MSG_ANSWERED_ELSEWHERE = ("This pair was already answered in another tab or window; your first answer ({first}) "
                          "was kept and this one was not saved. Answers are final.")
#: The judging page's buttons, as the notice above names the answer that was kept.
CHOICE_WORDS = {"left": "left / top is harder", "right": "right / bottom is harder",
                "skip": SKIP_BUTTON_LABEL[:1].lower() + SKIP_BUTTON_LABEL[1:]}
MSG_EMPTY_QUESTION = "This pair cannot be shown: one of its questions has no text. Nothing was saved."
MSG_ANSWER_UNREADABLE = "This answer could not be read. Go back to the study page and try again."
MSG_ANSWER_NOT_SHOWN = "This answer does not match the pair you were shown. Nothing was saved."
CONSENT_FIELD = "consent"  # the join form's two buttons send "yes" or "no"
STEP_URLS = {
    "onboarding": "annotate:study_onboarding",
    "guidelines": "annotate:study_guidelines",
    "closed": "annotate:study_closed",
    "judge": "annotate:study_judge",
    "done": "annotate:study_done",
}
#: Seconds the done page shows the completion code before it sends the evaluator to the completion URL.
COMPLETION_REDIRECT_SECONDS = 5
_STUDY_PATH = re.compile(r"^/studies/(\d+)/")


def _participation_or_404(request: HttpRequest, study_id: int) -> Participation:
    participation = participation_get(study_id=study_id, user=request.user)
    if participation is None:
        raise Http404("no such study for you")
    return participation


def _resume_entries(request: HttpRequest) -> dict[int, int]:
    """The resume cookie's entries, study id -> evaluator's user id ({} when
    missing, forged, expired or of an older format)."""
    try:
        data = signing.loads(request.COOKIES.get(RESUME_COOKIE, ""), salt=RESUME_SALT, max_age=RESUME_MAX_AGE)
    except signing.BadSignature:
        return {}
    entries = data.get("s") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return {}
    return {
        entry[0]: entry[1]
        for entry in entries
        if isinstance(entry, list) and len(entry) == 2 and all(type(v) is int for v in entry)
    }


def _resume_user(request: HttpRequest, study_id: int):
    """The pseudonymous evaluator this browser joined ``study_id`` as, if any,
    and only while nobody is signed in on it: the cookie never continues
    another study, nor replaces a signed-in person."""
    if request.user.is_authenticated:
        return None
    user_id = _resume_entries(request).get(study_id)
    return None if user_id is None else evaluator_get_active(pk=user_id)


def _remember_evaluator(request: HttpRequest, response: HttpResponse, study_id: int, user_id: int) -> None:
    """Add (study, evaluator) to the resume cookie, newest last, keeping the
    newest ``RESUME_MAX_STUDIES`` studies."""
    entries = _resume_entries(request)
    entries.pop(study_id, None)
    entries[study_id] = user_id
    kept = [[s, u] for s, u in entries.items()][-RESUME_MAX_STUDIES:]
    response.set_cookie(
        RESUME_COOKIE,
        signing.dumps({"s": kept}, salt=RESUME_SALT),
        max_age=RESUME_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )


def forget_evaluator(response: HttpResponse) -> HttpResponse:
    """Delete the resume and unsaved-answer cookies (logout, "Not you? Start fresh")."""
    response.delete_cookie(RESUME_COOKIE, samesite="Lax")
    response.delete_cookie(UNSAVED_COOKIE, samesite="Lax")
    return response


def forgetting_evaluator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a logout view so that it also forgets the evaluator this browser
    joined as: the next person to open an invitation link starts fresh."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return forget_evaluator(view(request, *args, **kwargs))

    return wrapper


#: Django's logout view (``accounts/logout/``, URL name "logout"), forgetting the evaluator.
logout_view = forgetting_evaluator(LogoutView.as_view())


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, token: str) -> HttpResponse:
    """The invitation link: the study's consent text with "agree" and
    "decline". Agreeing joins (and records the time); declining stores only
    the decline, once per browser and participant id. A link whose platform
    ids cannot be stored is refused (400) before anything is written. Who the
    visitor is comes before what the study's state is
    (:mod:`annotate.studies.services.admission`): a participant coming back
    continues their participation (a finished one sees their done page) even
    in a full or closed study; only newcomers are told it is full or closed."""
    invitation = invitation_get_active(token=token)
    if invitation is None:
        return render(request, "annotate/judging/join_invalid.html", status=404)
    try:
        platform = platform_ids_from_query(study=invitation.study, query=request.GET)
    except PlatformIdError as error:
        return render(request, "annotate/judging/join_refused.html",
                      {"study": invitation.study, "message": str(error),
                       "placeholder": isinstance(error, PlatformPlaceholderError)}, status=400)
    user = request.user if request.user.is_authenticated else None
    browser_key = _browser_key(request)
    remembered = _resume_user(request, invitation.study_id)
    admission = invitation_admission(invitation=invitation, user=user, remembered=remembered, platform=platform,
                                     browser_key=browser_key)
    if admission.verdict == SIGNED_IN:
        return redirect("annotate:study_entry", study_id=invitation.study_id)
    if admission.verdict == REFUSED:
        return render(request, "annotate/judging/join_refused.html",
                      {"study": invitation.study, "message": admission.message}, status=409)
    if admission.verdict == CLOSED:
        return render(request, "annotate/judging/closed.html", {"study": invitation.study})
    if admission.verdict == FULL:
        return render(request, "annotate/judging/full.html", {"study": invitation.study})
    returning = admission.participation.user if admission.verdict == REMEMBERED else None
    context = {"study": invitation.study, "returning": returning, "token": token, "missing": "",
               "rules": completion_rules_text(study=invitation.study),
               "resume": resume_note(study=invitation.study, participant_id=platform.participant)}
    if request.method == "GET":
        return render(request, "annotate/judging/join.html", context)
    if returning is not None:  # "Continue as ...": this evaluator joined (and consented) before
        login(request, returning, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("annotate:study_entry", study_id=invitation.study_id)
    decision = request.POST.get(CONSENT_FIELD)
    if decision not in ("yes", "no"):
        return render(request, "annotate/judging/join.html", {**context, "missing": MSG_CONSENT_MISSING},
                      status=400)
    if decision == "no":
        return _decline(request, invitation, token, browser_key, platform)
    response = _accept(request, invitation, user, platform, browser_key)
    return _keep_browser_key(request, response, browser_key)


def _browser_key(request: HttpRequest) -> str:
    """This browser's long-lived random key (from its cookie), or a new one."""
    key = request.COOKIES.get(BROWSER_COOKIE, "")
    return key if BROWSER_KEY_RE.fullmatch(key) else secrets.token_urlsafe(24)


def _keep_browser_key(request: HttpRequest, response: HttpResponse, key: str) -> HttpResponse:
    """Set the browser-key cookie when it is new. It names no one and
    survives logging out, so that a decline counts once per browser and a
    study that resumes participant ids "in the same browser only" knows it."""
    if request.COOKIES.get(BROWSER_COOKIE) != key:
        response.set_cookie(BROWSER_COOKIE, key, max_age=BROWSER_MAX_AGE, httponly=True, samesite="Lax",
                            secure=request.is_secure())
    return response


def _decline(request: HttpRequest, invitation: Invitation, token: str, browser_key: str,
             platform: PlatformIds) -> HttpResponse:
    """I do not agree: count the decline once per browser and participant id;
    new decline rows are rate limited per address like failed logins."""
    counters = door_keys(DECLINE_DOOR, request)
    if attempts_blocked(counters):
        return too_many_attempts(request)
    _, created = consent_decline(invitation=invitation, browser_key=browser_key, participant_id=platform.participant)
    if created:
        attempt_failed(counters)
    response = redirect("annotate:study_join_declined", token=token)
    return _keep_browser_key(request, response, browser_key)


def _accept(request: HttpRequest, invitation: Invitation, user: AbstractBaseUser | None,
            platform: PlatformIds, browser_key: str) -> HttpResponse:
    """I agree: join (creating the pseudonymous evaluator if needed) and record the time of consent."""
    try:
        participation, user, created = invitation_accept(invitation=invitation, user=user, platform=platform,
                                                         browser_key=browser_key)
    except (InvitationRevokedError, StudyClosedError):
        return render(request, "annotate/judging/join_invalid.html", {"study": invitation.study}, status=404)
    except ParticipantIdInUseError as error:
        return render(request, "annotate/judging/join_refused.html",
                      {"study": invitation.study, "message": str(error)}, status=409)
    participation_give_consent(participation=participation)
    if created:
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    response = redirect("annotate:study_entry", study_id=participation.study_id)
    if user_is_evaluator(user=user):
        _remember_evaluator(request, response, participation.study_id, user.pk)
    return response


@require_POST
def join_fresh(request: HttpRequest, token: str) -> HttpResponse:
    """"Not you? Start fresh": sign out whoever is signed in, forget the
    evaluator this browser joined as, and show the invitation again."""
    logout(request)
    url = reverse("annotate:study_join", kwargs={"token": token})
    query = request.GET.urlencode()  # keeps a crowd platform's participant ids
    return forget_evaluator(redirect(f"{url}?{query}" if query else url))


@require_http_methods(["GET"])
def join_declined(request: HttpRequest, token: str) -> HttpResponse:
    """After "I do not agree": nothing about the visitor was stored."""
    invitation = invitation_get_active(token=token)
    if invitation is None:
        return render(request, "annotate/judging/join_invalid.html", status=404)
    return render(request, "annotate/judging/declined.html", {"study": invitation.study, "token": token})


@login_required
def study_entry(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    return redirect(STEP_URLS[participation_next_step(participation=participation)], study_id=study_id)


@login_required
@require_http_methods(["GET", "POST"])
def study_onboarding(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    subjects = study_subjects(study=participation.study)
    initial = {
        "field_of_study": participation.field_of_study,
        "education_level": participation.education_level,
        "qualified_subjects": participation_qualified_subjects(participation=participation)
        if participation.onboarded_at else [],
    }
    form = OnboardingForm(posted(request), subjects=subjects, initial=initial,
                          asked=participation.study.onboarding_questions)
    if request.method == "POST" and form.is_valid():
        participation_onboard(participation=participation, **form.cleaned_data)
        return redirect("annotate:study_guidelines", study_id=study_id)
    return render(request, "annotate/judging/onboarding.html", {"study": participation.study, "form": form},
                  status=400 if form.is_bound else 200)


@login_required
@require_http_methods(["GET", "POST"])
def study_guidelines(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    if participation.onboarded_at is None:
        return redirect("annotate:study_onboarding", study_id=study_id)
    if request.method == "POST":
        participation_accept_guidelines(participation=participation)
        judging_assign_next(participation=participation)  # the first pair, so the judging GET writes nothing
        return redirect("annotate:study_judge", study_id=study_id)
    study = participation.study
    context = {"participation": participation, "study": study, "rules": completion_rules_text(study=study),
               "resume": resume_note(study=study, participant_id=participation.platform_participant_id,
                                     by_invitation=participation.invitation_id is not None)}
    return render(request, "annotate/judging/guidelines.html", context)


@require_http_methods(["GET", "POST"])
def study_judge(request: HttpRequest, study_id: int) -> HttpResponse:
    if not request.user.is_authenticated:
        return _login_again(request, study_id)
    participation = _participation_or_404(request, study_id)
    step = participation_next_step(participation=participation)
    if step != "judge":
        return redirect(STEP_URLS[step], study_id=study_id)
    if request.method == "POST":
        return _submit(request, participation)
    screen = judging_screen(participation=participation)
    if screen is None:
        return redirect("annotate:study_done", study_id=study_id)
    if not (screen.left.text.strip() and screen.right.text.strip()):  # defensive: never a blank side
        return render(request, "annotate/judging/unavailable.html", {"study": participation.study,
                      "message": MSG_EMPTY_QUESTION}, status=409)
    unsaved = _unsaved_pair(request, study_id)
    if unsaved == screen.pair_token:
        messages.warning(request, MSG_UNSAVED)
    if UNSAVED_PARAM in request.GET:  # show the message once, under the plain URL
        response = redirect("annotate:study_judge", study_id=study_id)
    else:
        goal = completion_goal_text(study=participation.study, votes=screen.progress.judged)
        response = render(request, "annotate/judging/judge.html",
                          {"study": participation.study, "screen": screen, "goal": goal})
    if UNSAVED_COOKIE in request.COOKIES:
        response.delete_cookie(UNSAVED_COOKIE)
    return response


def _as_token(value: object) -> str | None:
    """A judging token (:data:`TOKEN_RE`), else None."""
    return value if isinstance(value, str) and TOKEN_RE.fullmatch(value) else None


def _posted_pair(request: HttpRequest) -> str | None:
    """The pair token of a posted judging form, if it reads as one."""
    return _as_token(request.POST.get("pair", "")) if request.method == "POST" else None


def _unsaved_url(study_id: int, pair_id: str | None) -> str:
    """Where to come back to after logging in again: the judging page, marked
    with the pair whose answer was not saved (if the form said which)."""
    url = reverse("annotate:study_judge", kwargs={"study_id": study_id})
    return url if pair_id is None else f"{url}?{UNSAVED_PARAM}={pair_id}"


def _remember_unsaved(request: HttpRequest, response: HttpResponse, study_id: int, pair_id: str | None) -> None:
    """For an evaluator who joined by invitation (and so comes back through the
    link, not the login page): a signed cookie naming them, the study and the pair."""
    returning = _resume_user(request, study_id)
    if pair_id is None or returning is None:
        return
    response.set_cookie(
        UNSAVED_COOKIE,
        signing.dumps({"u": returning.pk, "s": study_id, "p": pair_id}, salt=UNSAVED_SALT),
        max_age=UNSAVED_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )


def _unsaved_pair(request: HttpRequest, study_id: int) -> str | None:
    """The pair whose answer was lost when the session expired, if any: from
    the URL marker, else from the invitation evaluator's cookie."""
    if UNSAVED_PARAM in request.GET:
        return _as_token(request.GET[UNSAVED_PARAM])
    if UNSAVED_COOKIE not in request.COOKIES:
        return None
    try:
        data = signing.loads(request.COOKIES.get(UNSAVED_COOKIE, ""), salt=UNSAVED_SALT, max_age=UNSAVED_MAX_AGE)
    except signing.BadSignature:
        return None
    if data.get("u") != request.user.pk or data.get("s") != study_id:
        return None
    return _as_token(data.get("p"))


def _login_again(request: HttpRequest, study_id: int) -> HttpResponse:
    """No session (it expired): nothing is stored; log in again and come back
    to the judging page, which then says the last answer was not saved."""
    pair_id = _posted_pair(request)
    back = _unsaved_url(study_id, pair_id) if request.method == "POST" else request.get_full_path()
    response = redirect_to_login(back)
    _remember_unsaved(request, response, study_id, pair_id)
    return response


def _answer_refused(request: HttpRequest, participation: Participation, message: str) -> HttpResponse:
    """A refused answer (400): the site's page saying why nothing was saved, with the way back to judging."""
    return render(request, "annotate/judging/answer_refused.html",
                  {"study": participation.study, "message": message}, status=400)


def _submit(request: HttpRequest, participation: Participation) -> HttpResponse:
    form = JudgmentForm(request.POST)
    if not form.is_valid():
        return _answer_refused(request, participation, MSG_ANSWER_UNREADABLE)
    pair_id = judging_token_value(participation=participation, token=form.cleaned_data["pair"], kind=PAIR)
    left_id = judging_token_value(participation=participation, token=form.cleaned_data["left"], kind=QUESTION)
    if pair_id is None or left_id is None:
        return _answer_refused(request, participation, MSG_ANSWER_NOT_SHOWN)
    try:
        result = judgment_submit(
            participation=participation,
            pair_id=pair_id,
            left_question_id=left_id,
            choice=form.cleaned_data["choice"],
            client_seconds=form.client_seconds(),
            assign_next=True,  # so the GET this redirects to writes nothing
        )
    except PairNotInStudyError:
        raise Http404("no such pair in this study") from None
    except InvalidSubmissionError:
        return _answer_refused(request, participation, MSG_ANSWER_NOT_SHOWN)
    except StudyClosedError:
        return redirect("annotate:study_closed", study_id=participation.study_id)
    if result.conflicts:
        messages.warning(request, MSG_ANSWERED_ELSEWHERE.format(first=CHOICE_WORDS[result.judgment.choice]))
    return redirect("annotate:study_judge", study_id=participation.study_id)


@login_required
def study_done(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    progress = participation_progress(participation=participation)
    if not progress.done and participation_next_step(participation=participation) != "done":
        return redirect("annotate:study_entry", study_id=study_id)
    verdict = completion_verdict(participation=participation)
    if not verdict.earned:  # no code: say why, and offer the platform's return link
        context = {"study": participation.study, "progress": progress, "verdict": verdict,
                   "return_url": screened_out_url_for(study=participation.study)}
        return render(request, "annotate/judging/not_earned.html", context)
    context = {"study": participation.study, "progress": progress,
               "completion_url": completion_url_for(study=participation.study),
               "completion_redirect_seconds": COMPLETION_REDIRECT_SECONDS}
    return render(request, "annotate/judging/done.html", context)


@login_required
def study_closed(request: HttpRequest, study_id: int) -> HttpResponse:
    participation = _participation_or_404(request, study_id)
    if participation_next_step(participation=participation) != "closed":
        return redirect("annotate:study_entry", study_id=study_id)
    progress = participation_progress(participation=participation)
    return render(request, "annotate/judging/closed.html", {"study": participation.study, "progress": progress})


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: a stale or expired form. Nothing was stored; send
    the evaluator back to their study (through the login page if needed). A
    judging form goes back to the judging page marked with its pair, which then
    says the answer was not saved."""
    match = _STUDY_PATH.match(request.path)
    study_id = int(match.group(1)) if match else None
    judging = study_id is not None and request.path == reverse("annotate:study_judge", kwargs={"study_id": study_id})
    if judging:
        pair_id = _posted_pair(request)
        target = _unsaved_url(study_id, pair_id)
    elif study_id is not None:
        target = reverse("annotate:study_entry", kwargs={"study_id": study_id})
    else:
        target = reverse("annotate:studies")
    response = render(request, "annotate/judging/csrf_failure.html", {"target": target}, status=403)
    if judging and not request.user.is_authenticated:
        _remember_unsaved(request, response, study_id, pair_id)
    return response
