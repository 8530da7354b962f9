"""Markdown to safe HTML, in one place: study guidelines and consent text
(and, on the evaluator side, questions) are written in Markdown, rendered
with Python-Markdown and sanitised with nh3 (an allow-list of tags and
attributes; scripts, event handlers and ``javascript:`` links are dropped).
"""
from __future__ import annotations

import markdown
import nh3

#: Python-Markdown extensions: fenced code blocks, tables, lists that do not mix ordered and bulleted items.
EXTENSIONS = ("fenced_code", "tables", "sane_lists")


def render_markdown(text: str) -> str:
    """Render ``text`` (Markdown) to sanitised HTML, safe to mark as such in a template.

    Parameters
    ----------
    text : str
        Markdown; raw HTML in it is sanitised, not trusted.

    Returns
    -------
    str
        HTML with only nh3's default allow-list of tags and attributes
        (links get ``rel="noopener noreferrer"``).

    Examples
    --------
    >>> render_markdown("**hard** <script>x()</script>")
    '<p><strong>hard</strong> </p>'
    """
    html = markdown.markdown(text or "", extensions=list(EXTENSIONS), output_format="html")
    return nh3.clean(html)
