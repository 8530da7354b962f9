"""The Content-Security-Policy header (Django 5.2 has none built in).

On when ``CSP_ENABLED`` (default: when DEBUG is off); the policy is the
``CONTENT_SECURITY_POLICY`` setting. Pages load scripts, styles and fonts from
this site only (KaTeX included, from our static files) and carry no inline
``<script>`` or ``style=`` attribute, so ``'self'`` suffices. A response that
already has the header (e.g. a view that set its own) keeps it.
"""
from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    """Adds ``Content-Security-Policy`` to every response when ``CSP_ENABLED``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(settings, "CSP_ENABLED", False) and HEADER not in response:
            response[HEADER] = settings.CONTENT_SECURITY_POLICY
        return response
