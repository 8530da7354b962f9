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
