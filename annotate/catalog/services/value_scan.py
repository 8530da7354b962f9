"""Whole-column scans of a parsed upload's values for the load plan's checks.

Each function gives what a test of every value in Python gives; a column of
plain values (every value a ``str``, or every option list a list of ``str``)
is scanned with C-level iteration (``map``), without a Python call a value,
and anything else value by value.
"""
from __future__ import annotations

import numpy as np

__all__ = ["text_length", "text_lengths", "value_suspects"]


def value_suspects(values: list, *, limit: int, required: bool) -> list[int]:
    """Positions of the values that are not a short str (and, when required, not a blank one).

    Parameters
    ----------
    values : list
        One column's values.
    limit : int
        Most characters a value may have.
    required : bool
        A blank value (one that ``str.strip()`` empties) is a suspect too.

    Returns
    -------
    list of int
        Ascending positions of every value that is not a ``str`` of at most
        ``limit`` characters, or (``required``) is blank.

    Notes
    -----
    When every value is a ``str``, lengths and blankness are read column-wise:
    a str is blank when it is empty or ``str.isspace`` (the whitespace that
    ``strip()`` removes).
    """
    n = len(values)
    if set(map(type, values)) <= {str}:
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=n)
        bad = lengths > limit
        if required:
            bad |= (lengths == 0) | np.fromiter(map(str.isspace, values), dtype=bool, count=n)
        return np.flatnonzero(bad).tolist()
    return [i for i, value in enumerate(values)
            if not (isinstance(value, str) and len(value) <= limit and (not required or value.strip()))]


def text_length(value: object) -> int:
    """Characters of a str, or of the str items of a list or tuple together; 0 otherwise.

    Parameters
    ----------
    value : object

    Returns
    -------
    int
    """
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        try:
            return len("".join(value))  # every item a str (the parsers' options): one C-level pass
        except TypeError:
            return sum([len(item) for item in value if isinstance(item, str)])
    return 0


def text_lengths(values: list) -> np.ndarray:
    """:func:`text_length` of each value.

    Parameters
    ----------
    values : list
        One column's values (question texts, or option lists).

    Returns
    -------
    ndarray of int64, shape (len(values),)

    Notes
    -----
    A column of str is measured column-wise (``len``), and one whose values
    are all lists, tuples or str of str likewise (``len("".join(value))``);
    any other column value by value.
    """
    n = len(values)
    types = set(map(type, values))
    if types <= {str}:  # texts: their lengths, without joining their characters
        return np.fromiter(map(len, values), dtype=np.int64, count=n)
    if types <= {list, tuple, str}:
        try:
            return np.fromiter(map(len, map("".join, values)), dtype=np.int64, count=n)
        except TypeError:  # an item that is not a str
            pass
    return np.fromiter(map(text_length, values), dtype=np.int64, count=n)
