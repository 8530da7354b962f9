"""Question text as safe HTML in templates, in its dataset's text format: a
question with its options, ``{% question_text question clip %}``;
``{{ question.text|question_html:question.dataset.text_format }}``,
``{{ option|option_html:question.dataset.text_format }}``, and a study's
guidelines or consent text, ``{{ study.guidelines|markdown_html }}`` (see
:mod:`annotate.core.rendering`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from django import template
from django.utils.safestring import SafeString, mark_safe

from annotate.core import render_markdown, render_option, render_question, render_question_block

if TYPE_CHECKING:
    from annotate.models import Question

register = template.Library()


@register.simple_tag
def question_text(question: Question, clip: object = False) -> SafeString:
    """``question`` (a :class:`~annotate.models.Question`) with its answer options, in its dataset's text format,
    clipped in lists when ``clip`` is true (:func:`~annotate.core.render_question_block`); safe to output."""
    return mark_safe(render_question_block(question.text, question.options, text_format=question.dataset.text_format,
                                           clip=bool(clip)))


@register.filter
def question_html(text: str, text_format: str) -> SafeString:
    """A question's text in its dataset's text format (plain text or Markdown, with math); safe to output."""
    return mark_safe(render_question(text or "", text_format=text_format))


@register.filter
def option_html(text: str, text_format: str) -> SafeString:
    """One answer option, inline, in its dataset's text format; safe to output."""
    return mark_safe(render_option(str(text or ""), text_format=text_format))


@register.filter
def markdown_html(text: str) -> SafeString:
    """A study's guidelines or consent text: Markdown with math, sanitised by nh3."""
    return mark_safe(render_markdown(text or ""))
