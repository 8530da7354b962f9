"""The JSON text of question options and metadata, as the loading service writes it.

Each value is written as ``json.dumps`` writes it (what ``JSONField`` would
store). A whole column of values is encoded with C-level work per column
instead of a Python call per value where its values allow it (every option
list a list of str; every metadata dict with the same str keys and str or
None values); any other column is encoded value by value, with the same
text.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from operator import itemgetter

__all__ = ["metadata_json", "metadata_json_texts", "options_json", "options_json_texts"]


def options_json(options: list | tuple) -> str:
    """``json.dumps(list(options))``; a list of str is joined directly (the same text, without
    building an encoder per value).

    Parameters
    ----------
    options : list or tuple

    Returns
    -------
    str
    """
    if not options:
        return "[]"
    try:
        return "[" + ", ".join(map(encode_basestring_ascii, options)) + "]"
    except TypeError:  # an item that is not a str
        return json.dumps(list(options))


def metadata_json(metadata: dict) -> str:
    """``json.dumps(metadata)``; str keys with str or None values are joined directly (the same
    text).

    Parameters
    ----------
    metadata : dict

    Returns
    -------
    str
    """
    if not metadata:
        return "{}"
    try:
        return "{" + ", ".join([encode_basestring_ascii(key) + ": " + ("null" if value is None else
                                                                     encode_basestring_ascii(value))
                                for key, value in metadata.items()]) + "}"
    except TypeError:  # a key or value that is not a str (or None)
        return json.dumps(metadata)


def options_json_texts(values: list, texts: list | None = None) -> list[str]:
    """The stored JSON text of each value of an options column.

    Parameters
    ----------
    values : list
        One value per question: a list (or tuple) of options, or anything
        else for none.
    texts : list or None, default None
        Aligned with ``values``: the text each list was decoded from as
        strict JSON (``json.loads``: no control character inside a string),
        or None (:data:`~annotate.catalog.loaders.base.OPTIONS_TEXT`).

    Returns
    -------
    list of str
        :func:`options_json` of each list or tuple, ``"[]"`` for any other
        value.

    Notes
    -----
    A decoded text is the stored text itself when it is ASCII without a
    backslash or DEL, holds two double quotes per option and equals
    ``'["' + '", "'.join(options) + '"]'``. Then every quote in it delimits
    a string (a quote inside one would need a backslash), so the options
    are exactly the runs between them: printable ASCII (strict JSON has no
    control character inside a string) without quote or backslash, which
    ``json.dumps`` writes unescaped, between quotes, separated by
    ``", "``, that is, as this text. Any other value is encoded.
    """
    if texts is None:
        return [options_json(v) if isinstance(v, (list, tuple)) else "[]" for v in values]
    return [text if _written_as(text, value) else options_json(value) if isinstance(value, (list, tuple)) else "[]"
            for value, text in zip(values, texts)]


def _written_as(text: object, options: object) -> bool:
    """True when ``text`` (decoded as strict JSON) is ``json.dumps`` of ``options`` (see
    :func:`options_json_texts`)."""
    if type(text) is not str or type(options) is not list or not options or not text.isascii() \
            or "\\" in text or "\x7f" in text or text.count('"') != 2 * len(options):
        return False
    try:
        return text == '["' + '", "'.join(options) + '"]'
    except TypeError:  # an option that is not a str
        return False


def metadata_json_texts(values: list) -> list[str]:
    """The stored JSON text of each value of a metadata column.

    Parameters
    ----------
    values : list
        One value per question: a dict, or anything else for none.

    Returns
    -------
    list of str
        :func:`metadata_json` of each dict, ``"{}"`` for any other value.

    Notes
    -----
    When every value is a dict with the same str keys in the same order
    and str or None values (a loader's kept columns), each distinct value
    of a key is encoded once and every row's text is filled into one
    template; any other column is encoded value by value.
    """
    if values and set(map(type, values)) == {dict}:
        shapes = set(map(tuple, values))
        keys = next(iter(shapes))
        if len(shapes) == 1 and keys and set(map(type, keys)) == {str}:
            columns = []
            for key in keys:
                column = list(map(itemgetter(key), values))
                if not set(map(type, column)) <= {str, type(None)}:
                    break
                encoded = {value: "null" if value is None else encode_basestring_ascii(value)
                           for value in set(column)}
                columns.append(list(map(encoded.__getitem__, column)))
            else:
                template = "{{" + ", ".join(encode_basestring_ascii(key).replace("{", "{{").replace("}", "}}")
                                            + ": {}" for key in keys) + "}}"
                return list(map(template.format, *columns))
    return [metadata_json(v) if isinstance(v, dict) else "{}" for v in values]
