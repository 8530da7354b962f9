"""What to say when a name (a dataset's, a subject's, a model's) names nothing.

One wording for every import and command that looks a catalog row up by its
name: ``no dataset 'MMLU-Pro'; did you mean 'mmlu-pro'?``, so a reader sees
that the name is unknown (not the row's id or the question), and which
stored name it most likely meant.
"""
from __future__ import annotations

from collections.abc import Iterable

UNKNOWN_NAME = "no {kind} {name!r}"
DID_YOU_MEAN = "; did you mean {match}?"
KNOWN = "; known: {known}"
#: Known names listed when none matches (more are counted, not listed).
KNOWN_SHOWN = 10


def _folded(name: str) -> str:
    return " ".join(name.split()).casefold()


def name_suggestions(name: str, known: Iterable[str]) -> list[str]:
    """The known names that equal ``name`` up to case and runs of spaces, sorted.

    Examples
    --------
    >>> name_suggestions("MMLU-Pro", ["mmlu-pro", "gsm8k"])
    ['mmlu-pro']
    >>> name_suggestions("mmlu pro", ["mmlu-pro"])
    []
    """
    folded = _folded(name)
    return sorted({k for k in known if k != name and _folded(k) == folded})


def unknown_name(*, kind: str, name: str, known: Iterable[str]) -> str:
    """The sentence for ``name``, which names no ``kind``: a case-insensitive
    match as a suggestion, else (up to ``KNOWN_SHOWN``) the known names.

    Parameters
    ----------
    kind : str
        What the name was to name ("dataset", "subject", "model").
    name : str
        The name as given.
    known : iterable of str
        Every stored name of that kind.

    Examples
    --------
    >>> unknown_name(kind="dataset", name="MMLU-Pro", known=["mmlu-pro", "gsm8k"])
    "no dataset 'MMLU-Pro'; did you mean 'mmlu-pro'?"
    >>> unknown_name(kind="dataset", name="x", known=["b", "a"])
    "no dataset 'x'; known: 'a', 'b'"
    >>> unknown_name(kind="subject", name="x", known=[])
    "no subject 'x'; known: none"
    """
    known = sorted(set(known))
    text = UNKNOWN_NAME.format(kind=kind, name=name)
    matches = name_suggestions(name, known)
    if matches:
        return text + DID_YOU_MEAN.format(match=" or ".join(repr(m) for m in matches))
    shown = ", ".join(repr(k) for k in known[:KNOWN_SHOWN])
    if len(known) > KNOWN_SHOWN:
        shown += f" and {len(known) - KNOWN_SHOWN:,} more"
    return text + KNOWN.format(known=shown or "none")
