"""The evaluator's progress bar of the judging pages (``{% progress_bar progress %}``) and the skip button's
label (``{% skip_label %}``, as the guidelines quote it)."""
from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from annotate.models.studies import SKIP_BUTTON_LABEL

register = template.Library()

#: The bar's markup. An SVG bar: widths as attributes, not inline styles (the Content-Security-Policy allows none).
#: The line left blank after the first one held the template's comment saying so; it stays, so the pages the bar is
#: on read as they did.
PROGRESS_BAR = (
    '<div class="progress" aria-label="Your progress">\n'
    "  \n"
    '  <svg class="progress-bar" viewBox="0 0 {total} 1" preserveAspectRatio="none" role="img" '
    'aria-label="{judged} judged, {skipped} skipped, {remaining} remaining">\n'
    '    <rect class="seg judged" x="0" y="0" width="{judged}" height="1"/>'
    '<rect class="seg skipped" x="{judged}" y="0" width="{skipped}" height="1"/>\n'
    "  </svg>\n"
    '  <p class="progress-text"><span data-count="judged">Judged {judged}</span> · '
    '<span data-count="skipped">Skipped {skipped}</span> · '
    '<span data-count="remaining">Remaining {remaining}</span></p>\n'
    "</div>"
)


@register.simple_tag
def progress_bar(progress: Any) -> SafeString:
    """``progress`` (an evaluator's counts: ``judged``, ``skipped``, ``remaining``, ``total``) as a bar of judged and
    skipped pairs out of the total (a bar of one unit when there is none) with the three counts in digits."""
    return format_html(PROGRESS_BAR, total=progress.total or 1, judged=progress.judged, skipped=progress.skipped,
                       remaining=progress.remaining)


@register.simple_tag
def skip_label() -> str:
    """The judging page's skip button label (:data:`annotate.models.studies.SKIP_BUTTON_LABEL`)."""
    return SKIP_BUTTON_LABEL
