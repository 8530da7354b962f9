"""The byte-level check of a CSV file (:func:`_checked_bytes`, which does not build the text)
accepts exactly the files the decoding check accepts and, for any other file, adds the very
problem the decoding check adds; Arrow's UTF-8 validation agrees with Python's decoder; a
header read from the bytes is the header read from the text."""
from __future__ import annotations

import codecs

import pytest

from annotate.catalog.loaders import _tabular_common as common
from annotate.catalog.loaders._tabular_common import (
    _checked_bytes,
    _decode_with_bytes,
    _Problems,
    _read_csv,
    _read_csv_head,
    _utf8_valid,
)

# Well-formed and ill-formed UTF-8 (Unicode table 3-7): overlong forms, surrogates, code points
# above U+10FFFF, truncated and stray continuation bytes.
UTF8_CASES = [
    b"", b"plain ascii", "é ü ☃ 😀 \u2028".encode(), b"\xc3\xa9", b"\xe2\x98\x83", b"\xf0\x9f\x98\x80",
    b"\xf4\x8f\xbf\xbf", b"\xef\xbb\xbfbom", b"\xed\x9f\xbf",
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\xfe",
    b"\x80", b"\xbf", b"a\xc3", b"a\xe2\x98", b"a\xf0\x9f\x98", b"\xc3a", b"\xe2\x98a", b"ok\x80ok",
]


@pytest.mark.parametrize("data", UTF8_CASES)
def test_arrow_accepts_what_python_decodes(data):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        expected = False
    else:
        expected = True
    assert _utf8_valid(data) is expected


FILES = [
    b"a,b\n1,2\n",
    codecs.BOM_UTF8 + b"a,b\n1,2\n",
    codecs.BOM_UTF8 + codecs.BOM_UTF8 + b"a,b\n",
    b"",
    codecs.BOM_UTF8,
    b" \t\r\n\x0b\x0c\x1c\x1d\x1e\x1f ",
    "\u00a0\u2003\n".encode(),  # blank by str.isspace, not ASCII
    "\u00a0x\n".encode(),  # a non-ASCII space first, then text
    "é,b\n1,2\n".encode(),
    "\n\n  é\n".encode(),
    b"a,b\n1,\x002\n",
    b"\x00",
    b"a,b\n\xff\n",
    b"a,b\n1,2\n\xed\xa0\x80",
    codecs.BOM_UTF16_LE + "a,b\n".encode("utf-16-le"),
    codecs.BOM_UTF16_BE + "a,b\n".encode("utf-16-be"),
    codecs.BOM_UTF32_LE + "a,b\n".encode("utf-32-le"),
    codecs.BOM_UTF32_BE + "a,b\n".encode("utf-32-be"),
]


def _problems(problems: _Problems) -> list[tuple]:
    return [(p.file, p.row, p.column, p.message) for p in problems.items]


@pytest.mark.parametrize("content", FILES)
def test_it_accepts_and_refuses_what_the_decoding_check_does(tmp_path, content):
    path = tmp_path / "f.csv"
    path.write_bytes(content)
    fast, slow = _Problems(), _Problems()
    decoded = _decode_with_bytes(path, slow)
    assert _checked_bytes(path, fast) == (None if decoded is None else decoded[0])
    assert _problems(fast) == _problems(slow)


def test_a_missing_file_is_the_same_problem(tmp_path):
    fast, slow = _Problems(), _Problems()
    assert _checked_bytes(tmp_path / "nope.csv", fast) is None
    assert _decode_with_bytes(tmp_path / "nope.csv", slow) is None
    assert _problems(fast) == _problems(slow) != []


@pytest.mark.parametrize("content", [
    b"a,b\n1,2\n",
    codecs.BOM_UTF8 + "é,\"b\nc\"\n1,2\n".encode(),  # a quoted header field over two lines
    b"x\ty\n1\t2",
    b"a;b\n1;2\n",
    b"a,,b\n",
    b"a,a\n",
    b"\"a,b\n",
])
def test_the_header_read_from_bytes_is_the_one_read_from_the_text(tmp_path, content):
    path = tmp_path / "f.csv"
    path.write_bytes(content)
    fast, slow = _Problems(), _Problems()
    from_bytes = _read_csv_head(path, fast, whole_text=False)
    from_text = _read_csv_head(path, slow)
    assert _problems(fast) == _problems(slow)
    assert (from_bytes is None) == (from_text is None)
    if from_text is not None:
        assert (from_bytes.sep, from_bytes.header, from_bytes.data, from_bytes.text) == (
            from_text.sep, from_text.header, from_text.data, "")


@pytest.mark.parametrize("content", [
    "é,b\n1,2\n\"3,4\n".encode(),
    codecs.BOM_UTF8 + "é,b\n1,2\n5,6,7\n".encode(),
    codecs.BOM_UTF8 + codecs.BOM_UTF8 + b"a,b\n\"x\"y,2\n\"3\n",
    "a\tb\n1\t2\n\"\u2603\n".encode(),
])
def test_a_broken_file_reads_as_from_the_text(tmp_path, monkeypatch, content):
    path = tmp_path / "f.csv"
    path.write_bytes(content)
    fast = _Problems()
    fast_table = _read_csv(path, fast)
    with monkeypatch.context() as patch:  # the reader as it was: the header and any message from the whole text
        patch.setattr(common, "_read_csv_head", lambda path, problems, **_: _read_csv_head(path, problems))
        slow = _Problems()
        slow_table = _read_csv(path, slow)
    assert _problems(fast) == _problems(slow)
    assert (fast_table is None) == (slow_table is None)
    if slow_table is not None:
        assert fast_table.frame.equals(slow_table.frame) and fast_table.header == slow_table.header
