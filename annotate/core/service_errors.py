"""A service's ``ValueError`` in the words of the form that called it.

Services name their arguments in their error messages (``"n_pairs must be an
integer >= 1; got 0"``): right for the API, the commands and the tests, but a
researcher on a page sees the form's labels, not its argument names. A form
that hands a service's error back to the page goes through
:func:`form_add_service_error` (or :func:`service_error_text` for a flash
message): the identifiers of the form's fields become their labels, the
maths shorthand becomes words, and the error is put on the field it names.

A form may declare ``service_names``, a mapping from a service argument that
it has no field of its own for to the field that carries it (the New-study
form's ``pairs_per_subject`` is its "Number of pairs" in per-subject mode),
and ``service_words``, how a message names a field whose label does not read
as a noun in a sentence (the stopping rules' "Compare method" / "with method").
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from django import forms
from django.forms.utils import pretty_name

#: The code of an error put on a form by :func:`form_add_service_error` (a sentence that names its field).
SERVICE_CODE = "service"

#: Shorthand of the services' messages and its words, in order (regular expression, replacement).
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern), words) for pattern, words in (
    (r" \(2\*\*63 - 1\)", ""),
    (r"\ban integer >= (-?\d+)", r"a whole number of at least \1"),
    (r"\ba whole number >= (-?\d+)", r"a whole number of at least \1"),
    (r"\ba non-negative integer\b", "a whole number of at least 0"),
    (r"\ban integer from\b", "a whole number from"),
    (r"\ba (?:finite )?number in \[([^,\]]+), ([^\]]+)\]", r"a number from \1 to \2"),
    (r"\ba number in \(([^,)]+), ([^)]+)\)", r"a number between \1 and \2 (not \1 or \2 itself)"),
    (r"\ba (?:finite )?number >= (-?[\d.]+)", r"a number of at least \1"),
    (r"\binteger\b", "whole number"),
    (r" >= ", " at least "),
    (r" <= ", " at most "),
    (r" > ", " above "),
    (r" < ", " below "),
    (r"(\w) but only\b", r"\1, but only"),
    (r"; got (.+)$", r" (entered: \1)"),
))


#: A message's first word that is prose (capitalised at the start of a sentence); anything else
#: there is an echoed name (a file "big.csv", a dataset "mmlu-pro", an identifier "n_pairs") and keeps its case.
_PROSE_WORD = re.compile(r"^[a-z]+(?=[\s,;:]|$)")


def sentence_start(message: str) -> str:
    """``message`` with its first letter capitalised, unless it opens with an echoed name.

    A name the user gave (a file's, a dataset's) is shown as given: only a
    first word of plain lower-case letters is capitalised.

    Examples
    --------
    >>> sentence_start("cannot tell the format of big.csv"), sentence_start("big.csv is 60 bytes")
    ('Cannot tell the format of big.csv', 'big.csv is 60 bytes')
    """
    return message[:1].upper() + message[1:] if _PROSE_WORD.match(message) else message


def _label_of(form: forms.BaseForm, name: str) -> str:
    field = form.fields[name]
    return str(field.label) if field.label else pretty_name(name)


def _words_of(form: forms.BaseForm, name: str) -> str:
    """How a message names the field: its ``service_words`` entry, else its label."""
    return getattr(form, "service_words", {}).get(name) or _label_of(form, name)


def _mid_sentence(label: str) -> str:
    """``"Number of pairs"`` -> ``"number of pairs"``; an acronym (``"EIP"``) keeps its case."""
    return label[:1].lower() + label[1:] if label[1:2].islower() else label


def service_error_words(form: forms.BaseForm, error: Exception | str) -> tuple[str | None, str]:
    """The field a service's error is about, and the error in the form's words.

    Parameters
    ----------
    form : django.forms.BaseForm
        The form whose cleaned data the service was given; its optional
        ``service_names`` maps service arguments to its field names.
    error : Exception or str
        The service's error (its message names service arguments).

    Returns
    -------
    (str or None, str)
        The name of the form's field the message names first (None when it
        names none), and the message with every field identifier replaced by
        the field's label, ``>=``-style shorthand in words, and its first
        letter capitalised unless it opens with an echoed name (:func:`sentence_start`).

    Examples
    --------
    A form with a field ``n_pairs`` labelled "Number of pairs" turns
    ``"n_pairs must be an integer >= 1; got 0"`` into
    ``("n_pairs", "Number of pairs must be a whole number of at least 1 (entered: 0)")``.
    """
    message = str(error)
    aliases: Mapping[str, str] = getattr(form, "service_names", {})
    names = {name: name for name in form.fields} | {k: v for k, v in aliases.items() if v in form.fields}
    found: list[tuple[int, str]] = []
    for identifier in sorted(names, key=len, reverse=True):  # the longest first: "seed" inside "seed_x" stays
        if "_" in identifier:  # an argument name, wherever it stands
            pattern = re.compile(rf"(?<![\w'\"]){re.escape(identifier)}(?:=|\b)(?!['\"])")
        else:  # a plain word ("seed", "alpha", "name") only as the subject that opens the message
            pattern = re.compile(rf"^{re.escape(identifier)}(?= must\b| is\b| has\b| holds\b)")
        match = pattern.search(message)
        if match is None:
            continue
        found.append((match.start(), names[identifier]))
        label = _words_of(form, names[identifier])

        def replace(m: re.Match[str], label: str = label) -> str:
            words = label if m.start() == 0 else _mid_sentence(label)
            return words + (" is " if m.group(0).endswith("=") else "")

        message = pattern.sub(replace, message)
    for pattern, words in _PHRASES:
        message = pattern.sub(words, message)
    message = sentence_start(message)
    return (min(found)[1] if found else None), message


def form_add_service_error(form: forms.BaseForm, error: Exception | str,
                           others: Sequence[forms.BaseForm] = ()) -> None:
    """Put a service's error, in the form's words, on the field it names.

    Parameters
    ----------
    form : django.forms.BaseForm
        The page's main form: the error goes on it as a whole when no form
        has a field the message names.
    error : Exception or str
        The service's error.
    others : sequence of django.forms.BaseForm, optional
        Further forms whose data the service was given (the New-study page's
        stopping rules): the error goes on the first of ``form, *others``
        with a field that the message names.
    """
    for candidate in (form, *others):
        field, message = service_error_words(candidate, error)
        if field is not None:
            candidate.add_error(field, forms.ValidationError(message, code=SERVICE_CODE))
            return
    form.add_error(None, forms.ValidationError(service_error_words(form, error)[1], code=SERVICE_CODE))


def service_error_text(form: forms.BaseForm, error: Exception | str) -> str:
    """A service's error in the words of ``form``, for a message on the next page."""
    return service_error_words(form, error)[1]


def form_problems(form: forms.BaseForm) -> str:
    """Every error of a bound, invalid form on one line: ``Label: message; ...``.

    Whole-form errors, and the sentences of :func:`form_add_service_error`
    (which name their field in words), stand without the prefix."""

    def line(name: str, errors: list[forms.ValidationError]) -> str:
        plain = " ".join(m for e in errors if e.code != SERVICE_CODE for m in e.messages)
        sentences = [m for e in errors if e.code == SERVICE_CODE for m in e.messages]
        if plain and name in form.fields:
            plain = f"{_label_of(form, name)}: {plain}"
        return " ".join([plain, *sentences] if plain else sentences)

    return "; ".join(line(k, v) for k, v in form.errors.as_data().items())
