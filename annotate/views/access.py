"""Access checks shared by the researcher-facing views."""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from annotate.selectors.studies import user_is_researcher


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous -> login page; logged in but neither staff nor researcher -> 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not user_is_researcher(user=request.user):
            raise PermissionDenied("staff and researchers only")
        return view(request, *args, **kwargs)

    return wrapper
