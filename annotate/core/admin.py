"""The admin's writes, through services: a base for every editable ModelAdmin;
a refused add or change form answered with status 400 (:class:`RefusedFormStatusMixin`);
and stored JSON shown formatted (:func:`json_display`), never as a raw JSON box.

Django's ``ModelAdmin`` saves and deletes by itself (``obj.save()``,
``obj.delete()``, ``queryset.delete()``). :class:`ServiceWritesAdmin` replaces
those four doors with calls of the domain's services, so that an edit in the
admin follows the same rules (and transaction) as the same edit anywhere else.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.contrib import admin
from django.db.models import Model
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString


class RefusedFormStatusMixin:
    """For a ModelAdmin: a refused add or change form answers 400, as the site's own pages do.

    Django's admin re-shows a POSTed form that did not validate (nothing saved,
    the errors at their fields, the typed values kept) with status 200; a POST
    that reaches :meth:`render_change_form` is always such a refusal, since a
    saved form redirects.
    """

    def render_change_form(self, request: HttpRequest, context: dict, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().render_change_form(request, context, *args, **kwargs)
        if request.method == "POST":
            response.status_code = 400
        return response


class ServiceWritesAdmin(RefusedFormStatusMixin, admin.ModelAdmin):
    """A ModelAdmin whose add, change and delete call services, and whose refused forms answer 400.

    Subclasses set (as ``staticmethod``):

    ``save_service(*, entry, fields)``
        Saves ``entry``: ``fields`` is ``None`` for a new entry, else the
        changed form fields (empty: nothing to write).
    ``delete_service(*, entry)``
        Deletes one entry (the admin has already refused an entry that
        protected rows still reference).
    """

    save_service: Callable[..., Any]
    delete_service: Callable[..., Any]

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm, change: bool) -> None:
        self.save_service(entry=obj, fields=changed_fields(form) if change else None)

    def save_related(self, request: HttpRequest, form: ModelForm, formsets: Sequence[Any], change: bool) -> None:
        """No many-to-many fields or inlines are edited through a :class:`ServiceWritesAdmin`."""
        if form.instance._meta.many_to_many or formsets:
            raise NotImplementedError(f"{type(self).__name__} edits related rows: save them through a service")

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        self.delete_service(entry=obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for entry in queryset:
            self.delete_service(entry=entry)


def changed_fields(form: ModelForm) -> list[str]:
    """The model fields a change form changed (form-only fields left out)."""
    concrete = {f.name for f in form.instance._meta.concrete_fields}
    return [name for name in form.changed_data if name in concrete]


#: How a missing or empty value reads.
EMPTY = "–"


def json_html(value: Any) -> SafeString:
    """A stored JSON value as readable HTML: a mapping as a list of "key: value"
    rows, a list of plain values as one comma-separated line (else a numbered
    list), None and empty containers as "–", every text escaped.

    Parameters
    ----------
    value : JSON-like
        dicts, lists and scalars, as a ``JSONField`` returns them.

    Returns
    -------
    SafeString
        HTML with no markup of ``value``'s own.

    Examples
    --------
    >>> str(json_html({"alpha": 0.85, "methods": ["eip", "irt_1pl"]}))
    '<dl class="json"><dt>alpha</dt><dd>0.85</dd><dt>methods</dt><dd>eip, irt_1pl</dd></dl>'
    """
    if isinstance(value, dict):
        if not value:
            return format_html("{}", EMPTY)
        rows = format_html_join("", "<dt>{}</dt><dd>{}</dd>", ((k, json_html(v)) for k, v in value.items()))
        return format_html('<dl class="json">{}</dl>', rows)
    if isinstance(value, list):
        if not value:
            return format_html("{}", EMPTY)
        if all(not isinstance(v, dict | list) for v in value):
            return format_html("{}", ", ".join(str(_scalar(v)) for v in value))
        items = format_html_join("", "<li>{}</li>", ((json_html(v),) for v in value))
        return format_html('<ol class="json">{}</ol>', items)
    return format_html("{}", _scalar(value))


def _scalar(value: Any) -> str:
    if value is None:
        return EMPTY
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def json_display(field: str, description: str) -> Callable[[Any, Model], SafeString]:
    """An admin display method showing ``field`` (a ``JSONField``) as :func:`json_html` renders it.

    Parameters
    ----------
    field : str
        The model's JSON field.
    description : str
        The row's label on the change page.

    Returns
    -------
    callable
        A method to assign to a ``ModelAdmin`` or inline attribute and list in
        its ``readonly_fields`` (the raw field left out of the form).
    """
    def show(admin_: Any, obj: Model) -> SafeString:
        return json_html(getattr(obj, field))

    return admin.display(description=description)(show)
