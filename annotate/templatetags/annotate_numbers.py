"""One number style on every page: ``{% load annotate_numbers %}``.

- counts: whole numbers with thousands separators, never decimals (``12,345``);
- scores: a fixed number of decimals (the registry's, or the filter's argument),
  no thousands separator;
- ranks: whole numbers, 1 = best; ties share the best rank of their group
  (competition ranking, as :mod:`annotate.runs.selectors.results` computes them);
- changes: a sign on every non-zero value (``+2``, ``−3``);
- negatives use the minus sign U+2212 (``−0.25``), never a hyphen;
- a missing or non-finite value is an en dash (``–``).

CSV and JSON downloads keep plain numbers; these filters are for pages only.
"""
from __future__ import annotations

import math
import re
from numbers import Real

from django import template

register = template.Library()

MINUS = "\u2212"
MISSING = "–"
#: A formatted number that rounds to zero but kept the sign of a tiny negative value ("-0.00").
NEGATIVE_ZERO = re.compile(r"[-\u2212]0(\.0*)?%?")


def _number(value) -> float | None:
    if value is None or isinstance(value, bool) or value == "":
        return None
    if isinstance(value, Real):
        x = float(value)
    else:
        try:
            x = float(str(value).replace(MINUS, "-").replace(",", ""))
        except ValueError:
            return None
    return x if math.isfinite(x) else None


def with_minus(text: str) -> str:
    """``text`` with a leading hyphen-minus replaced by U+2212."""
    return MINUS + text[1:] if text.startswith("-") else text


@register.filter
def count(value) -> str:
    """A count: ``1234.0`` -> ``"1,234"``; missing -> ``"–"``."""
    x = _number(value)
    return MISSING if x is None else with_minus(f"{round(x):,}")


@register.filter
def score(value, decimals=3) -> str:
    """A score with ``decimals`` decimals (default 3), no thousands separator:
    ``-0.12345`` -> ``"−0.123"``; a value that rounds to zero prints without
    a sign; missing -> ``"–"``."""
    x = _number(value)
    if x is None:
        return MISSING
    digits = max(int(decimals), 0)
    text = f"{x:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return with_minus(text)


@register.filter
def rank(value) -> str:
    """A rank as a whole number: ``3.0`` -> ``"3"``; missing -> ``"–"``."""
    x = _number(value)
    return MISSING if x is None else f"{round(x):d}"


@register.filter
def change(value) -> str:
    """A signed whole change: ``2`` -> ``"+2"``, ``-3`` -> ``"−3"``, ``0`` -> ``"0"``."""
    x = _number(value)
    if x is None:
        return MISSING
    n = round(x)
    return f"+{n}" if n > 0 else with_minus(str(n))


@register.filter
def percent(value, decimals=1) -> str:
    """A fraction in [0, 1] in percent without the sign: ``0.1234`` -> ``"12.3"``."""
    x = _number(value)
    return MISSING if x is None else score(100.0 * x, decimals)


@register.filter
def sci(value, digits=2) -> str:
    """A tiny or huge quantity (a residual) in scientific notation:
    ``0.000241`` -> ``"2.41 × 10⁻⁴"``; missing -> ``"–"``."""
    x = _number(value)
    if x is None:
        return MISSING
    mantissa, exponent = f"{x:.{int(digits)}e}".split("e")
    power = int(exponent)
    if power == 0:
        return with_minus(mantissa)
    superscript = str(power).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{with_minus(mantissa)} × 10{superscript}"


@register.filter
def cell_text(cell) -> str:
    """A report table cell (:class:`annotate.reports.services.table_cells.Cell`) in
    the page's number style: a whole-number value as a count (``1,234``),
    otherwise its text with U+2212 for a minus; a value that rounds to zero
    (``-0.00``) prints without a sign."""
    value = getattr(cell, "value", None)
    if isinstance(value, int) and not isinstance(value, bool):
        return count(value)
    text = str(getattr(cell, "text", cell))
    if NEGATIVE_ZERO.fullmatch(text):
        text = text[1:]
    return with_minus(text)
