"""What the database can store, checked before it sees a value.

A hostile value must end as a clear refusal, never reach the database: an id
too large for a 64-bit column (SQLite raises ``OverflowError`` on it inside
``pk__in``), a NUL byte (PostgreSQL refuses it in text), a lone surrogate
(not encodable as UTF-8). Forms, services and the study import use these.
"""
from __future__ import annotations

import unicodedata

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


#: Why a name or id is refused: a character that shows nothing or turns the text around.
INVISIBLE_PROBLEM = "an invisible or direction-changing character (U+{code:04X})"


def name_text_problem(value: str) -> str | None:
    """What keeps ``value`` out of a *name or identifier*, or None.

    The one check for names and ids that people type or upload (a study
    name, a completion code, a participant or evaluator id, a group): what
    :func:`storable_text_problem` refuses (NUL, lone surrogates, control
    characters), and every Unicode format character (category ``Cf``):
    the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
    U+2066-U+2069), the zero-width characters (U+200B-U+200D, U+2060), the
    byte-order mark (U+FEFF), the soft hyphen and the rest. They show
    nothing, or show the text reversed, so a name holding one reads as
    another name in every list and CSV. Question text, options and answers
    are data, stored as written: they never pass through this check.

    Returns
    -------
    str or None
        The problem, to follow the value's name ("... holds an invisible or
        direction-changing character (U+202E)"); None for a clean name.
    """
    problem = storable_text_problem(value)
    if problem is not None:
        return problem
    for ch in value:
        if unicodedata.category(ch) == "Cf":
            return INVISIBLE_PROBLEM.format(code=ord(ch))
    return None


#: A name or id refused for its characters (label, the problem).
ERR_NAME_HOLDS = "{label} holds {problem}; names and ids must be plain visible text"


def column_name(value: str, *, model: type, field: str, label: str) -> str:
    """:func:`column_text` for a name or id: also refused when it holds what
    :func:`name_text_problem` finds.

    Raises
    ------
    ValueError
        ``ERR_NAME_HOLDS`` naming ``label`` and the character, or ``ERR_TEXT_TOO_LONG``.
    """
    text = value.strip()
    problem = name_text_problem(text)
    if problem is not None:
        raise ValueError(ERR_NAME_HOLDS.format(label=label, problem=problem))
    return column_text(text, model=model, field=field, label=label)


#: Why a text read from a file cannot be stored (the problem, the column's limit, the text's length).
ERR_VALUE_HOLDS = "holds {problem}, which cannot be stored"
ERR_VALUE_TOO_LONG = "is {n:,} characters long; at most {limit:,} are stored"


def column_value_problem(value: str, *, model: type, field: str, controls: bool = True,
                         name: bool = False) -> str | None:
    """What keeps ``value`` out of ``model``'s text column ``field``, or None.

    The one check for text read from an uploaded file before it lands in (or
    is looked up in) a ``CharField``: its characters, then its length.

    Parameters
    ----------
    value : str
    model : Django model class
    field : str
        A ``CharField`` of ``model`` (its ``max_length`` is the limit).
    controls : bool, default True
        Also refuse control characters other than tab, newline and carriage
        return (see :func:`storable_text_problem`).
    name : bool, default False
        ``value`` is a name or id (an evaluator, a group): also refuse
        invisible and direction-changing characters (:func:`name_text_problem`).

    Returns
    -------
    str or None
        ``ERR_VALUE_HOLDS`` (a NUL, control character, lone surrogate or, for a name, a format character) or
        ``ERR_VALUE_TOO_LONG``, to follow the value's name ("evaluator holds
        a NUL character, ..."); None when the column can hold ``value``.
    """
    problem = name_text_problem(value) if name else storable_text_problem(value, controls=controls)
    if problem is not None:
        return ERR_VALUE_HOLDS.format(problem=problem)
    limit = model._meta.get_field(field).max_length
    if limit is not None and len(value) > limit:
        return ERR_VALUE_TOO_LONG.format(n=len(value), limit=limit)
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
    return ascii_int(str(value), low=1, high=ID_MAX)


#: A whole number refused (what it is, the bounds, the text given).
ERR_WHOLE_NUMBER = "{label} must be a whole number from {low:,} to {high:,}; got {value!r}"


def ascii_int(text: str, *, low: int = 0, high: int = ID_MAX) -> int | None:
    """``text`` as a whole number from ``low`` to ``high``, or None.

    The one parser of whole numbers typed by people (a query parameter, a
    command's key, a posted id). Only ASCII digits count: ``str.isdigit``
    also accepts "²" or "١", which ``int`` refuses or reads differently.

    Parameters
    ----------
    text : str
        Surrounding blanks are ignored; a sign is not accepted.
    low, high : int
        The accepted range, both included (``low`` >= 0).

    Returns
    -------
    int or None
        None when ``text`` is not ASCII digits or falls outside the range.
    """
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit() or len(text) > len(str(high)):
        return None
    number = int(text)
    return number if low <= number <= high else None


def whole_number(text: str, *, label: str, low: int = 0, high: int = ID_MAX) -> int:
    """``text`` read by :func:`ascii_int`, refused with a message naming ``label``.

    Raises
    ------
    ValueError
        ``ERR_WHOLE_NUMBER`` with ``label``, the range and the text.
    """
    number = ascii_int(text, low=low, high=high)
    if number is None:
        raise ValueError(ERR_WHOLE_NUMBER.format(label=label, low=low, high=high, value=text[:40]))
    return number
