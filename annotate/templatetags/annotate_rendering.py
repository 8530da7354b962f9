"""Question text as safe HTML in templates: ``{{ question.text|question_html }}``,
``{{ option|option_html }}`` and a study's guidelines or consent text,
``{{ study.guidelines|markdown_html }}`` (see :mod:`annotate.rendering`)."""
from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from annotate.rendering import render_markdown, render_option, render_question

register = template.Library()


@register.filter
def question_html(text: str) -> SafeString:
    """Markdown with math, sanitised by nh3 (safe to output as is)."""
    return mark_safe(render_question(text or ""))


@register.filter
def option_html(text: str) -> SafeString:
    """One answer option, inline (sanitised by nh3)."""
    return mark_safe(render_option(str(text or "")))


@register.filter
def markdown_html(text: str) -> SafeString:
    """A study's guidelines or consent text: Markdown with math, sanitised by nh3."""
    return mark_safe(render_markdown(text or ""))
