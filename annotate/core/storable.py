"""What the database can store, checked before it sees a value.

A hostile value must end as a clear refusal, never reach the database: an id
too large for a 64-bit column (SQLite raises ``OverflowError`` on it inside
``pk__in``), a NUL byte (PostgreSQL refuses it in text), a lone surrogate
(not encodable as UTF-8). Forms, services and the study import use these.
"""
from __future__ import annotations

#: Largest database id (a signed 64-bit column).
ID_MAX = 2**63 - 1


#: A text longer than its column holds (label, the column's limit, the text's length).
ERR_TEXT_TOO_LONG = "{label}: at most {limit} characters (it has {n:,})"


def column_text(value: str, *, model: type, field: str, label: str) -> str:
    """``value`` without surrounding blanks, refused when longer than ``model``'s ``field`` holds.

    Parameters
    ----------
    value : str
    model : Django model class
    field : str
        A ``CharField`` of ``model`` (its ``max_length`` is the limit).
    label : str
        The field's name as the person who typed it knows it (starts the error).

    Returns
    -------
    str
        ``value.strip()``, whole: it is never cut to fit.

    Raises
    ------
    ValueError
        ``ERR_TEXT_TOO_LONG`` when the stripped text is longer than the column.
    """
    text = value.strip()
    limit = model._meta.get_field(field).max_length
    if len(text) > limit:
        raise ValueError(ERR_TEXT_TOO_LONG.format(label=label, limit=limit, n=len(text)))
    return text


#: Smallest and largest integer a 64-bit column holds.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def storable_text_problem(value: str, *, controls: bool = True) -> str | None:
    """What keeps ``value`` out of a text column, or None.

    Parameters
    ----------
    value : str
    controls : bool, default True
        Also refuse the other C0/C1 control characters (an id never holds
        them); tab, newline and carriage return are always allowed.

    Returns
    -------
    str or None
        "a NUL character" (PostgreSQL refuses it), "a lone surrogate"
        (not UTF-8) or "a control character"; None when ``value`` can be stored.
    """
    for ch in value:
        code = ord(ch)
        if code == 0:
            return "a NUL character"
        if 0xD800 <= code <= 0xDFFF:
            return "a lone surrogate"
        if controls and ((code < 0x20 and ch not in "\t\n\r") or 0x7F <= code <= 0x9F):
            return "a control character"
    return None


def unstorable_in(document: object, path: str = "", *, ints: bool = True) -> str | None:
    """The first place in a JSON-like ``document`` (dicts, lists, scalars) that
    no database column can hold, described ("study.name holds a NUL
    character", "evaluators[2].seed is beyond the 64-bit integer range"), or None.
    Keys are checked as well as values; ``ints=False`` checks only the text."""
    stack: list[tuple[str, object]] = [(path or "document", document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            problem = storable_text_problem(value, controls=False)
            if problem is not None:
                return f"{where} holds {problem}"
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if ints and not INT64_MIN <= value <= INT64_MAX:
                return f"{where} is beyond the 64-bit integer range"
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and storable_text_problem(key, controls=False) is not None:
                    return f"a key in {where} holds {storable_text_problem(key, controls=False)}"
                stack.append((f"{where}.{key}", item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{k}]", item) for k, item in enumerate(value))
    return None


def id_or_none(value: object) -> int | None:
    """``value`` as a database id (decimal digits, 1 to :data:`ID_MAX`), else None."""
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    number = int(text)
    return number if 1 <= number <= ID_MAX else None
