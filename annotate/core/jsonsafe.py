"""JSON parsing with a bound on nesting depth, for every JSON the site reads
from outside: API bodies, JSON Lines cells, ``options_json`` columns, harness
logs and study exports.

Python's ``json`` module recurses once per level: a document nested a few
thousand levels deep raises ``RecursionError`` (a bare 500 in a request).
:func:`loads_bounded` turns that, and any nesting deeper than the
``JSON_MAX_DEPTH`` setting, into :class:`JsonTooDeepError`, a subclass of
``json.JSONDecodeError``: every caller that already reports "not valid JSON"
with the file and row reports this one the same way.
"""
from __future__ import annotations

import json
from typing import IO, Any

from django.conf import settings

#: Used when settings are not configured (scripts, scoring-free tools).
DEFAULT_MAX_DEPTH = 100
ERR_TOO_DEEP = "JSON nested deeper than {max_depth} levels (the limit, setting JSON_MAX_DEPTH)"


class JsonTooDeepError(json.JSONDecodeError):
    """JSON nested deeper than the limit. ``str(error)`` is the message alone
    (no line/column: the depth is found after parsing)."""

    def __init__(self, max_depth: int) -> None:
        message = ERR_TOO_DEEP.format(max_depth=max_depth)
        ValueError.__init__(self, message)
        self.msg = message
        self.doc = ""
        self.pos = 0
        self.lineno = 1
        self.colno = 1
        self.max_depth = max_depth

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.max_depth,)


def max_json_depth() -> int:
    """The ``JSON_MAX_DEPTH`` setting (default 100)."""
    return int(getattr(settings, "JSON_MAX_DEPTH", DEFAULT_MAX_DEPTH)) if settings.configured else DEFAULT_MAX_DEPTH


def _deeper_than(value: Any, max_depth: int) -> bool:
    """True when ``value`` nests containers more than ``max_depth`` deep
    (a scalar is depth 0, ``[]`` depth 1). Iterative: no recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > max_depth:
            return True
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list)))
    return False


def loads_bounded(text: str | bytes | bytearray, *, max_depth: int | None = None) -> Any:
    """Parse JSON text, refusing nesting deeper than ``max_depth``.

    Parameters
    ----------
    text : str or bytes
        The JSON document (bytes are decoded as UTF-8, as ``json.loads`` does).
    max_depth : int, optional
        Deepest nesting of arrays and objects allowed (a scalar is depth 0,
        ``[[1]]`` depth 2). Default: the ``JSON_MAX_DEPTH`` setting (100).

    Returns
    -------
    object
        What ``json.loads`` returns.

    Raises
    ------
    JsonTooDeepError
        Nesting deeper than ``max_depth`` (also when it is too deep for
        Python's parser itself). A subclass of ``json.JSONDecodeError``.
    json.JSONDecodeError
        Not JSON.

    Examples
    --------
    >>> loads_bounded("[[1]]", max_depth=2)
    [[1]]
    """
    limit = max_json_depth() if max_depth is None else max_depth
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonTooDeepError(limit) from None
    opening = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if opening > limit and _deeper_than(value, limit):  # fewer brackets than the limit cannot nest deeper
        raise JsonTooDeepError(limit)
    return value


def load_bounded(fh: IO[str], *, max_depth: int | None = None) -> Any:
    """:func:`loads_bounded` of an open text file's whole content."""
    return loads_bounded(fh.read(), max_depth=max_depth)


class BoundedJSONDecoder(json.JSONDecoder):
    """A ``cls`` for ``json.loads`` (and a form ``JSONField``'s ``decoder``) that
    parses through :func:`loads_bounded`: a too-deep value is a JSON error
    ("Enter a valid JSON." in a form), not a RecursionError."""

    def decode(self, s: str, _w: Any = None) -> Any:
        return loads_bounded(s)
