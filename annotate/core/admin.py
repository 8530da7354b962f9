"""The admin's writes, through services: a base for every editable ModelAdmin.

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
from django.http import HttpRequest


class ServiceWritesAdmin(admin.ModelAdmin):
    """A ModelAdmin whose add, change and delete call services.

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
