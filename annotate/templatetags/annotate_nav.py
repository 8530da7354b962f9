"""The role-dependent navigation bar of ``base.html``: ``{% role_nav %}``."""
from __future__ import annotations

from django import template
from django.urls import reverse

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


@register.inclusion_tag("annotate/_nav.html", takes_context=True)
def role_nav(context: template.Context) -> dict:
    """Links for the visitor's role (none for anonymous visitors); the link of
    the current section is marked ``current``."""
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    role = None if user is None else user_role(user=user)
    path = getattr(request, "path", "")
    links = []
    for label, name in NAV_LINKS.get(role, ()):
        url = reverse(name)
        links.append({"label": label, "url": url, "current": path.startswith(url)})
    return {"links": links, "role": role}
