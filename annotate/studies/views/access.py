"""Access checks shared by the researcher-facing views.

Two decorators: :func:`researcher_required` (a role: staff or the
"researcher" group) and :func:`study_access_required` (that role *and* the
study in the URL's ``study_id`` is one the user may manage, per
:func:`annotate.studies.selectors.studies.can_manage_study`). The object-level rule
lives in the selector; this module only turns its answer into a response.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse

from annotate.studies.selectors.studies import study_for_researcher, user_is_researcher

ERR_ROLE = "staff and researchers only"
ERR_NO_STUDY = "no such study"


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


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous -> login page; logged in but neither staff nor researcher -> 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not user_is_researcher(user=request.user):
            raise PermissionDenied(ERR_ROLE)
        return view(request, *args, **kwargs)

    return wrapper


def study_access_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """As :func:`researcher_required`, and the URL's ``study_id`` must name a
    study the user owns or was added to (staff: any). Otherwise 404, the same
    answer as for a study that does not exist."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not user_is_researcher(user=request.user):
            raise PermissionDenied(ERR_ROLE)
        if study_for_researcher(user=request.user, study_id=kwargs["study_id"]) is None:
            raise Http404(ERR_NO_STUDY)
        return view(request, *args, **kwargs)

    return wrapper
