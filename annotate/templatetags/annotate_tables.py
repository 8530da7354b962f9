"""Cells of an analysis table for a page: ``{% for row in table|display_rows %}``."""
from __future__ import annotations

import math

from django import template

from annotate.analyses import Table, fmt
from annotate.templatetags.annotate_numbers import with_minus

register = template.Library()


def is_rank_column(name: str) -> bool:
    """A column of ranks or rank changes ("EIP rank", "rank change ..."), not a
    mean of them ("mean |rank change|")."""
    lowered = name.lower()
    return "rank" in lowered and "mean" not in lowered


def rank_text(value) -> str:
    """A rank as printed: whole numbers without decimals ("2", "-3"); a rank
    averaged over ties keeps its fraction ("2.5"); anything else as ``fmt``."""
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.0f}" if value.is_integer() else f"{value:g}"
    return fmt(value)


@register.filter
def display_rows(table: Table) -> list[list[str]]:
    """``table.text_rows()`` (coded values, e.g. method keys, as their
    labels), except that rank columns print whole ranks without decimals
    (``fmt`` would print 1.0 as "1.0000") and negatives take the minus sign
    U+2212 (the page style; the CSV keeps plain numbers)."""
    ranks = [is_rank_column(name) for name in table.header]
    shown = [table.display.get(name, {}) for name in table.header]
    return [[with_minus(rank_text(v) if ranks[i] else fmt(v)) if not isinstance(v, str) else shown[i].get(v, v)
             for i, v in enumerate(row)] for row in table.rows]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numeric_columns(table: Table) -> list[bool]:
    """A column is numeric (right-aligned) when every defined value in it is a number."""
    columns = []
    for i in range(len(table.header)):
        values = [row[i] for row in table.rows if row[i] is not None]
        columns.append(bool(values) and all(_is_number(v) for v in values))
    return columns


@register.filter
def display_header(table: Table) -> list[tuple[str, bool]]:
    """``(name, numeric)`` of each column, numeric ones right-aligned like their cells."""
    return list(zip(table.header, _numeric_columns(table)))


@register.filter
def display_cells(table: Table) -> list[list[tuple[str, bool]]]:
    """:func:`display_rows` with each cell's ``numeric`` flag (its column's)."""
    numeric = _numeric_columns(table)
    return [list(zip(row, numeric)) for row in display_rows(table)]
