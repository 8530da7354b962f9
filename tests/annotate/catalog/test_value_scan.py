"""The load plan's column scans give what a test of each value gives: the column-wise path
(every value a str, every option list a list of str) and the value-by-value path agree with a
plain loop on the same values."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotate.catalog.services.value_scan import text_length, text_lengths, value_suspects


def _slow_suspects(values, limit, required):
    return [i for i, v in enumerate(values)
            if not (isinstance(v, str) and len(v) <= limit and (not required or v.strip()))]


class _Str(str):
    pass


COLUMNS = [
    [],
    ["a", "bb", "ccc"],
    ["ok", "", " ", "\t\n", "\u00a0", "\u2003x", "\x1c", "x\u200b", "toolong!", "  padded  "],
    ["a", None, float("nan"), 3, "b", "", np.str_("np"), _Str(" "), _Str("fine")],
    ["é" * 5, "😀" * 4, "ü" * 6],
]


@pytest.mark.parametrize("values", COLUMNS)
@pytest.mark.parametrize("required", [True, False])
@pytest.mark.parametrize("limit", [0, 4, 5, 100])
def test_suspects_are_those_of_a_plain_loop(values, required, limit):
    assert value_suspects(list(values), limit=limit, required=required) == _slow_suspects(values, limit, required)


def test_a_blank_or_long_value_is_a_suspect_and_a_short_one_is_not():
    # "" and "  " blank; "abcdef" is 6 characters, over the limit of 5; "abc" fine
    assert value_suspects(["abc", "", "  ", "abcdef"], limit=5, required=True) == [1, 2, 3]
    assert value_suspects(["abc", "", "  ", "abcdef"], limit=5, required=False) == [3]


OPTION_COLUMNS = [
    [],
    [["a", "bc"], [], ("d",), "xyz"],
    [["é", "😀"], ["1", 2, None], [1.5], None, float("nan"), {"k": "v"}, {"a", "b"}],
    [["a"], [["nested", "x"]]],
    [["a"], ["b", 3]],  # an item that is not a str: value by value
    ["abc", "", "é😀 x", "\n" * 5],  # texts: every value a str
    ["abc", ["de"]],
]


@pytest.mark.parametrize("values", OPTION_COLUMNS)
def test_text_lengths_are_those_of_each_value(values):
    expected = [text_length(v) for v in values]
    got = text_lengths(list(values))
    assert got.dtype == np.int64 and got.tolist() == expected


def test_text_length_counts_characters_of_str_items_only():
    assert text_length(["ab", "é😀"]) == 4
    assert text_length(["ab", 3, None, "c"]) == 3  # non-str items skipped
    assert text_length({"key": "v"}) == 0 and text_length(None) == 0
    assert text_length(math.pi) == 0 and text_length("abc") == 3
