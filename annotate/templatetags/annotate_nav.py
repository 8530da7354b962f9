"""The role-dependent navigation bar of ``base.html``: ``{% role_nav %}``."""
from __future__ import annotations

from functools import lru_cache

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template.loader import render_to_string
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.autoreload import file_changed
from django.utils.safestring import SafeString, mark_safe

from annotate.studies import user_role

register = template.Library()

#: role -> ((label, url name), ...) in display order.
NAV_LINKS: dict[str, tuple[tuple[str, str], ...]] = {
    "admin": (("Results", "annotate:results"), ("Studies", "annotate:studies"), ("Analyses", "annotate:analyses"),
              ("Admin", "admin:index")),
    "researcher": (("Results", "annotate:results"), ("Studies & reports", "annotate:studies"),
                   ("Analyses", "annotate:analyses")),
    "evaluator": (("My studies", "annotate:studies"),),
}


@register.simple_tag(takes_context=True)
def role_nav(context: template.Context) -> SafeString:
    """Links for the visitor's role (none for anonymous visitors); the link of
    the current section is marked ``current`` (``annotate/_nav.html``)."""
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    role = None if user is None else user_role(user=user)
    path = getattr(request, "path", "")
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    urls = _role_urls(role, urlconf, get_script_prefix())
    return _nav_html(role, _home_url(urlconf, get_script_prefix()),
                     tuple((label, url, path.startswith(url)) for label, url in urls))


@lru_cache(maxsize=64)
def _role_urls(role: str | None, urlconf: str, script_prefix: str) -> tuple[tuple[str, str], ...]:
    """(label, URL) of each link of ``role``, reversed once per URL configuration and script prefix."""
    return tuple((label, reverse(name, urlconf=urlconf)) for label, name in NAV_LINKS.get(role or "", ()))


@lru_cache(maxsize=16)
def _home_url(urlconf: str, script_prefix: str) -> str:
    """The home page's URL, reversed once per URL configuration and script prefix."""
    return reverse("annotate:home", urlconf=urlconf)


@lru_cache(maxsize=256)
def _nav_html(role: str | None, home: str, links: tuple[tuple[str, str, bool], ...]) -> SafeString:
    """``annotate/_nav.html`` for ``role``: the site's name (the method's only for researchers and admins; an
    evaluator or a visitor sees a neutral one) linking to ``home``, and the role's (label, URL, current) links,
    rendered once per combination."""
    return mark_safe(render_to_string("annotate/_nav.html", {
        "role": role, "home": home,
        "links": [{"label": label, "url": url, "current": current} for label, url, current in links]}))


@receiver(setting_changed)
def _forget_rendered_navigation(*, setting: str, **kwargs: object) -> None:
    """A test that changes the URL configuration or the templates gets navigation made from the new ones."""
    if setting in ("ROOT_URLCONF", "TEMPLATES", "FORCE_SCRIPT_NAME"):
        _role_urls.cache_clear()
        _home_url.cache_clear()
        _nav_html.cache_clear()


@receiver(file_changed)
def _forget_navigation_of_a_changed_template(*, file_path: object, **kwargs: object) -> None:
    """The development server shows an edited template's navigation without a restart, as it does the template."""
    if str(file_path).endswith(".html"):
        _nav_html.cache_clear()
