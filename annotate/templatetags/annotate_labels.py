"""Codes as words on pages: ``{% load annotate_labels %}`` (see :mod:`annotate.core.labels`)."""
from __future__ import annotations

from django import template

from annotate.core import (
    humanize,
    label as code_label,
    method_notes as method_note_rows,
    params_text as params_text_rows,
)

register = template.Library()


@register.filter
def label(code, group: str) -> str:
    """``{{ pair.how|label:"consensus" }}`` -> "no consensus"."""
    return code_label(code, group)


@register.filter
def method_notes(notes) -> list[tuple[str, str]]:
    """``{% for name, text in result.notes|method_notes %}``."""
    return method_note_rows(notes)


@register.filter
def params_text(params) -> list[tuple[str, str]]:
    """``{% for name, text in run.params|params_text %}``."""
    return params_text_rows(params)


@register.filter
def analysis_label(kind: str) -> str:
    """An analysis kind's label from its registry (the kind itself when unknown)."""
    from annotate.analyses import kind_label

    try:
        return kind_label(kind)
    except (KeyError, ValueError):
        return humanize(str(kind))
