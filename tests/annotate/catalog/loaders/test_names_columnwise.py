"""Cleaning a long column of names (where plain names are picked out column-wise) changes the
same names, in the same order, as cleaning each name does."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.loaders.names import _any_changed, _clean_column, _unplain, clean_name

TRICKY = [" a", "a ", "a  b", "a\u00a0b", "x\u200by", "cafe\u0301", "a\n", "tab\tx", "\u202eevil", "ok\r",
          "\ud800lone", "é", "plain-name_1", "GPT-4", "x y z", "~!", "", "a\x7f"]


def _reference(values: list) -> tuple[list, dict]:
    changed: dict = {}
    out = []
    for v in values:
        cleaned = clean_name(v) if isinstance(v, str) else v
        if isinstance(v, str) and cleaned != v:
            changed.setdefault(v, cleaned)
        out.append(cleaned)
    return out, changed


@pytest.mark.parametrize("extra", [[], [None, float("nan")], ["\ud800lone"]])
def test_a_long_column_is_cleaned_as_name_by_name(extra):
    values = [f"q{i}" for i in range(100)] + TRICKY + extra + [f"q{i}" for i in range(10)] + TRICKY[::-1]
    changed: dict = {}
    got = _clean_column(pd.Series(values, dtype=object), changed)
    expected, expected_changed = _reference(values)
    assert [v if isinstance(v, str) else None for v in got.tolist()] == [
        v if isinstance(v, str) else None for v in expected]
    assert list(changed.items()) == list(expected_changed.items())
    assert _any_changed(np.array(values, dtype=object)) is True


def test_a_long_plain_column_is_unchanged_and_kept_whole():
    values = pd.Series([f"model-{i} v{i % 7}" for i in range(200)], dtype="str")
    changed: dict = {}
    assert _clean_column(values, changed) is values and changed == {}
    assert _any_changed(values.to_numpy(dtype=object)) is False


def test_only_names_that_are_not_plain_are_looked_at():
    values = np.array([f"q{i}" for i in range(80)] + [" a", "b\u00a0c"], dtype=object)
    assert _unplain(values) == [" a", "b\u00a0c"]
    assert _unplain(values[:10]) == values[:10].tolist()  # short columns: every value
