"""The home page: what the visitor's role lets them do."""
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotate.studies.selectors.studies import user_is_evaluator, user_is_researcher


def home(request: HttpRequest) -> HttpResponse:
    user = request.user
    context = {
        "is_staff": user.is_authenticated and user.is_staff,
        "is_researcher": user_is_researcher(user=user),
        "is_evaluator": user_is_evaluator(user=user),
    }
    return render(request, "annotate/home.html", context)
