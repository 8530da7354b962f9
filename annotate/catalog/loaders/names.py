"""Clean names and credits of a parsed upload once, the same way for every format.

Every parser (:func:`annotate.catalog.loaders.tabular_files.parse_files`,
:func:`annotate.catalog.loaders.harness.parse_harness_logs`) passes its result through
:func:`finish_parsed` before returning it.

Names (dataset, subject and model names, question ids)
    Unicode NFC; zero-width characters (U+200B, U+200C, U+200D, U+2060,
    U+FEFF), bidirectional controls (U+202A-U+202E, U+2066-U+2069) and every
    other Unicode format character (category Cf) removed, so no stored name
    shows reversed or hides a character (what
    :func:`annotate.core.name_text_problem` refuses where a name is typed);
    no-break spaces (U+00A0, U+202F, U+2007) become spaces;
    leading and trailing whitespace stripped and inner runs of whitespace
    collapsed to one space. "Llama\\u00a0 3" and "Llama 3" are then the same
    name. Names that differ only by case are not merged here (the loading
    service refuses them, or merges them on request).

Credits near 0 or 1 (the documented rule)
    A credit in (0, 1e-12) becomes exactly 0 and one in (1 - 1e-12, 1)
    exactly 1, the bounds decided in exact arithmetic on the number as
    written (:func:`scoring.exact.near_zero_or_one`: ``0.999999999999`` is
    exactly 1e-12 from 1 and stays). A credit outside [0, 1], even by one
    unit in the last place (``1.0000000000000002``), is refused like any
    other out-of-range credit, naming its file, row and column. Values
    just inside are rounding noise of a scorer, and a subnormal credit
    (5e-324) would otherwise make EIP divide by a number whose reciprocal
    overflows. How many were rounded is a note of the load summary.
"""
from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders.base import ParsedResponseSet
from scoring.exact import near_zero_or_one

if TYPE_CHECKING:
    import pandas as pd

#: Credits within this distance of 0 or 1 are rounded to 0 or 1 exactly.
CREDIT_SNAP = 1e-12
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
NO_BREAK_SPACES = "\u00a0\u202f\u2007"
NAMES_CLEANED_NOTE = (
    "{count} name(s) were normalised (Unicode NFC, zero-width and direction-changing characters removed, "
    "no-break spaces and "
    "repeated whitespace made one space), e.g. {example!r} -> {cleaned!r}"
)
CREDITS_SNAPPED_NOTE = (
    "{count} credit(s) within 1e-12 of 0 or 1 were rounded to exactly 0 or 1 ({low} to 0, {high} to 1)"
)

_DROP = {ord(c): None for c in ZERO_WIDTH}
_SPACES = {ord(c): " " for c in NO_BREAK_SPACES}
_WHITESPACE = re.compile(r"\s+")
_KEYS = {"questions": ["dataset", "external_id"], "models": ["name"]}
# (frame attribute, columns holding names)
_NAME_COLUMNS = (
    ("questions", ("dataset", "external_id", "subject")),
    ("models", ("name",)),
    ("responses", ("dataset", "external_id", "model")),
)


# A str that cleaning leaves alone for sure: printable ASCII, single spaces, none at either end.
_PLAIN = re.compile(r"[!-~]+(?: [!-~]+)*")


def _plain_values(values: list[str]) -> np.ndarray | None:
    """True where ``_PLAIN`` matches a value of ``values`` (all str) whole: a name cleaning leaves
    alone. Checked by Arrow's regular expressions (the same pattern, anchored); None when Arrow
    cannot hold the values (a str with a lone surrogate)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    try:
        array = pa.array(values, type=pa.large_string())
    except (pa.ArrowException, UnicodeError):
        return None
    return pc.match_substring_regex(array, "^" + _PLAIN.pattern + "$").to_numpy(zero_copy_only=False)


def _clean(value: str) -> str:
    """:func:`clean_name` of a str, with a quick exit for the common plain ASCII name."""
    return value if _PLAIN.fullmatch(value) else clean_name(value)  # type: ignore[return-value]


def clean_name(value: object) -> object:
    """A name in its canonical form; anything but a str is returned unchanged.

    Examples
    --------
    >>> clean_name("Llama\\u00a03\\u200b ")
    'Llama 3'
    >>> clean_name("cafe\\u0301") == "caf\\u00e9"
    True
    >>> clean_name("\\u202eevil\\u2066 model\\u2069")
    'evil model'
    """
    if not isinstance(value, str):
        return value
    text = value.translate(_DROP).translate(_SPACES)
    text = "".join(ch for ch in text if ch.isascii() or unicodedata.category(ch) != "Cf")
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def _clean_column(series: pd.Series, changed: dict[str, str]) -> pd.Series:
    """``series`` with every str cleaned; ``changed`` receives each changed value (first
    seen first). Each distinct value is cleaned once (a column of a long form repeats a
    name on every row)."""
    import pandas as pd
    values = series.astype(object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    mapping = {}
    for value in _unplain(uniques):
        if isinstance(value, str):
            cleaned = _clean(value)
            if cleaned != value:
                mapping[value] = cleaned
                changed.setdefault(value, cleaned)
    if not mapping:
        return series
    is_changed = np.array([isinstance(v, str) and v in mapping for v in uniques], dtype=bool)
    new_values = np.array([mapping.get(v, v) if isinstance(v, str) else v for v in uniques], dtype=object)
    out = values.to_numpy(dtype=object, copy=True)
    take = codes >= 0
    take[take] = is_changed[codes[take]]
    out[take] = new_values[codes[take]]
    return pd.Series(out, index=series.index, dtype=object, name=series.name)


def clean_names(values: pd.Series) -> pd.Series:
    """``values`` with every str in its :func:`clean_name` form (what :func:`finish_parsed`
    stores); the same object when no value changes.

    Parameters
    ----------
    values : Series of object
        Names (str; anything else is kept as it is).

    Returns
    -------
    Series of object, same index and length.
    """
    return _clean_column(values, {})


def spelled_two_ways(datasets: pd.Series, ids: pd.Series, *,
                     cleaned: tuple[pd.Series, pd.Series] | None = None) -> list[tuple[int, int]]:
    """Question ids written two ways in one file that clean to one id.

    Parameters
    ----------
    datasets, ids : Series of object, same length
        The dataset and the id of each question of one file, as written.
    cleaned : (Series, Series) or None, default None
        :func:`clean_names` of ``datasets`` and of ``ids`` when the caller has
        them (each the same object as the input when cleaning changed nothing).

    Returns
    -------
    list of (int, int)
        ``(first, other)`` positions: ``ids[other]`` is a spelling different
        from ``ids[first]`` (the first spelling of that id in the file) that
        :func:`clean_name` makes the same (dataset, id); one pair per later
        spelling, at its first position, in file order. Empty when cleaning
        changes no id (then no two distinct ids can meet).

    Examples
    --------
    >>> import pandas as pd
    >>> spelled_two_ways(pd.Series(["D", "D", "D"]), pd.Series(["q3", "q4", "q3\u200b"]))
    [(0, 2)]
    """
    import pandas as pd
    clean_datasets, clean_ids = cleaned if cleaned is not None else (clean_names(datasets), clean_names(ids))
    if clean_ids is ids:
        return []
    keys = pd.DataFrame({"d": clean_datasets.to_numpy(dtype=object), "i": clean_ids.to_numpy(dtype=object),
                         "raw": ids.to_numpy(dtype=object)})
    spellings = keys.drop_duplicates(["d", "i", "raw"])  # each spelling at its first position
    later = spellings.duplicated(["d", "i"], keep="first")
    if not later.any():
        return []
    position = pd.Series(spellings.index, index=spellings.index)
    first = position.groupby([spellings["d"], spellings["i"]], dropna=False, sort=False).transform("first")
    return list(zip(first[later].tolist(), position[later].tolist()))


def _any_changed(values: np.ndarray) -> bool:
    """True when cleaning would change one of ``values`` (each distinct value cleaned once)."""
    import pandas as pd
    return any(isinstance(v, str) and _clean(v) != v for v in _unplain(pd.unique(np.asarray(values, dtype=object))))


def _unplain(values: np.ndarray) -> list:
    """``values`` (object array) without the str that :data:`_PLAIN` matches whole (cleaning
    leaves those alone), matched column-wise when every value is a str."""
    listed = values.tolist()
    if len(listed) < 64 or not set(map(type, listed)) <= {str}:
        return listed
    plain = _plain_values(listed)
    return listed if plain is None else [v for v, p in zip(listed, plain.tolist()) if not p]


def _merge_rows(frame: pd.DataFrame, before: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Rows that cleaning made duplicates of one key (a question or model spelled two ways
    in one upload) become one, the first kept; duplicates already in the upload are left
    for the loading service to refuse. The tabular parsers refuse a question id written two
    ways in one file before this (:func:`spelled_two_ways`)."""
    import pandas as pd
    if not set(key) <= set(frame.columns):
        return frame
    touched = pd.Series(False, index=frame.index)
    for column in key:
        touched |= frame[column].astype(object).ne(before[column].astype(object)) & frame[column].notna()
    groups = frame.groupby(key, dropna=False, sort=False)
    any_touched = touched.groupby([frame[c] for c in key], dropna=False, sort=False).transform("any")
    drop = any_touched & groups.cumcount().gt(0)
    return frame.loc[~drop].reset_index(drop=True) if drop.any() else frame


def snap_credits(credit: pd.Series) -> tuple[pd.Series, int, int]:
    """``credit`` with values within ``CREDIT_SNAP`` of 0 or 1 made exactly 0 or 1.

    Returns the new series and how many went to 0 and to 1. Values outside
    [0, 1], NaN and non-numbers are left for the loading service to refuse.
    """
    import pandas as pd
    numbers = pd.to_numeric(credit, errors="coerce").to_numpy(dtype=np.float64)
    near_low, near_high = near_zero_or_one(numbers, CREDIT_SNAP)
    low = near_low & (numbers > 0.0)
    high = near_high & (numbers < 1.0)
    n_low, n_high = int(low.sum()), int(high.sum())
    if not n_low and not n_high:
        return credit, 0, 0
    out = credit.copy()
    out[low] = 0.0
    out[high] = 1.0
    return out, n_low, n_high


def finish_parsed(parsed: ParsedResponseSet) -> ParsedResponseSet:
    """Clean every name and snap near-0/1 credits of ``parsed`` (in place); returns it.

    Adds a note for each kind of change, with counts (see the module notes).
    """
    cells = parsed.cells
    snapped = None
    if cells is not None:  # a wide or long file's compact form: credits were snapped while reading
        snapped = (cells.snapped_low, cells.snapped_high)
        if (_any_changed(cells.datasets) or _any_changed(cells.ids)
                or _any_changed(cells.models)):
            parsed.responses = cells.long_form()  # names to clean: the long form, as before (rare)
    changed: dict[str, str] = {}
    for attribute, columns in _NAME_COLUMNS:
        if attribute == "responses" and parsed.cells is not None:
            continue
        frame = getattr(parsed, attribute)
        before = frame.copy() if attribute != "responses" else None
        for column in columns:
            if column in frame.columns:
                frame[column] = _clean_column(frame[column], changed)
        if before is not None and changed:
            setattr(parsed, attribute, _merge_rows(frame, before, _KEYS[attribute]))
    if changed:
        example, cleaned = next(iter(changed.items()))
        parsed.notes.append(NAMES_CLEANED_NOTE.format(count=len(changed), example=example, cleaned=cleaned))
    if snapped is not None:
        n_low, n_high = snapped
        if n_low or n_high:
            parsed.notes.append(CREDITS_SNAPPED_NOTE.format(count=n_low + n_high, low=n_low, high=n_high))
    elif "credit" in parsed.responses.columns:
        credit, n_low, n_high = snap_credits(parsed.responses["credit"])
        if n_low or n_high:
            parsed.responses["credit"] = credit
            parsed.notes.append(CREDITS_SNAPPED_NOTE.format(count=n_low + n_high, low=n_low, high=n_high))
    return parsed
