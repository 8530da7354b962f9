"""Codes as words on pages: ``{% load annotate_labels %}`` (see :mod:`annotate.labels`)."""
from __future__ import annotations

from django import template

from annotate import labels

register = template.Library()


@register.filter
def label(code, group: str) -> str:
    """``{{ pair.how|label:"consensus" }}`` -> "no consensus"."""
    return labels.label(code, group)


@register.filter
def method_notes(notes) -> list[tuple[str, str]]:
    """``{% for name, text in result.notes|method_notes %}``."""
    return labels.method_notes(notes)


@register.filter
def params_text(params) -> list[tuple[str, str]]:
    """``{% for name, text in run.params|params_text %}``."""
    return labels.params_text(params)


@register.filter
def analysis_label(kind: str) -> str:
    """An analysis kind's label from its registry (the kind itself when unknown)."""
    from annotate.services.analyses import kind_label

    try:
        return kind_label(kind)
    except (KeyError, ValueError):
        return labels.humanize(str(kind))
