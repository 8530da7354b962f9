"""Counts in words: a number and its noun in the number it takes ("1 subject", "2 subjects").

Every message, page and summary of the site that writes a count before a noun
goes through :func:`counted` (templates use Django's ``pluralize``), so no
text reads "1 subjects".
"""
from __future__ import annotations

from django.utils.translation import ngettext

#: The nouns of a count of answers that may be skips: ``counted(n, *JUDGMENTS_AND_SKIPS)``.
JUDGMENTS_AND_SKIPS = ("judgment or skip", "judgments and skips")


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` with thousands separators, then ``singular`` when ``n`` is 1, else ``plural``.

    Parameters
    ----------
    n : int
        A count (a float that is a whole number is read as that number).
    singular : str
        The noun for one ("subject", "distinct same-subject pair").
    plural : str or None, default None
        The noun for any other count; None adds an "s" to ``singular``.

    Returns
    -------
    str

    Examples
    --------
    >>> counted(1, "subject"), counted(0, "subject"), counted(12_000, "analysis", "analyses")
    ('1 subject', '0 subjects', '12,000 analyses')
    """
    number = int(n)
    return f"{number:,} {ngettext(singular, plural or singular + 's', number)}"
