"""What the database can store, checked before it sees a value.

A hostile value must end as a clear refusal, never reach the database: an id
too large for a 64-bit column (SQLite raises ``OverflowError`` on it inside
``pk__in``), a NUL byte (PostgreSQL refuses it in text), a lone surrogate
(not encodable as UTF-8). Forms, services and the study import use these.
"""
from __future__ import annotations

#: Largest database id (a signed 64-bit column).
ID_MAX = 2**63 - 1


def storable_text_problem(value: str) -> str | None:
    """What keeps ``value`` out of a text column, or None.

    Returns
    -------
    str or None
        "a NUL character" (PostgreSQL refuses it), "a lone surrogate"
        (not UTF-8) or "a control character" (other C0/C1 controls, except
        tab, newline and carriage return); None when ``value`` can be stored.
    """
    for ch in value:
        code = ord(ch)
        if code == 0:
            return "a NUL character"
        if 0xD800 <= code <= 0xDFFF:
            return "a lone surrogate"
        if (code < 0x20 and ch not in "\t\n\r") or 0x7F <= code <= 0x9F:
            return "a control character"
    return None


def id_or_none(value: object) -> int | None:
    """``value`` as a database id (decimal digits, 1 to :data:`ID_MAX`), else None."""
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        return None
    number = int(text)
    return number if 1 <= number <= ID_MAX else None
