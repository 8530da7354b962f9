"""The judging benchmark's floor: the site's URLs plus a trivial POST and GET.

``python -m bench judging`` serves this URL configuration (its settings set
``ROOT_URLCONF = "bench.trivial_urls"``); the site's own ``eipsite.urls``
never includes it. The trivial pair is the least a Django page of this site
costs on the same server: the same middleware, session, CSRF check and
signed-in user (both views read ``request.user``, as every judging request
does), no query of its own. ``bench/trivial/`` takes a POST and redirects
(302) to ``bench/trivial/page/``, which renders a small template with a CSRF
token, so the client can post again, as it does on the judging page.
"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template import engines
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from eipsite.urls import urlpatterns as site_urlpatterns

#: The page the trivial POST leads to: a form with the CSRF token, as small as a page gets.
PAGE = """<!doctype html><title>trivial</title>
<form method="post" action="{% url 'bench_trivial_post' %}">{% csrf_token %}
<input type="hidden" name="choice" value="left"><button>{{ user.get_username }}</button></form>"""
_PAGE = engines["django"].from_string(PAGE)  # compiled once, as the cached template loader does for files


@login_required
@require_POST
def trivial_post(request: HttpRequest) -> HttpResponse:
    """Read the posted field and redirect (Post/Redirect/Get), nothing else."""
    request.POST.get("choice")
    return redirect("bench_trivial_page")


@login_required
@require_GET
def trivial_page(request: HttpRequest) -> HttpResponse:
    """Render :data:`PAGE` through the site's template engine and context processors."""
    return HttpResponse(_PAGE.render({}, request))


urlpatterns = [
    path("bench/trivial/", trivial_post, name="bench_trivial_post"),
    path("bench/trivial/page/", trivial_page, name="bench_trivial_page"),
    *site_urlpatterns,
]

handler400 = "annotate.core.views.errors.bad_request"
handler403 = "annotate.core.views.errors.permission_denied"
handler404 = "annotate.core.views.errors.page_not_found"
handler500 = "annotate.core.views.errors.server_error"
