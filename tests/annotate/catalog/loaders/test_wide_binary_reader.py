"""The byte-level reader of 0/1/blank wide CSV files gives what the chunked reader gives: the
same cells, ids, rows and notes for a file it takes, and for any other file (cells such as
``" 1"``, ``"1.0"`` or ``"true"``, quotes, carriage returns, ragged or blank lines, blank or
repeated ids, bad credits) it steps aside and the chunked reader decides as before, problems
included. The JSON the loading service writes for options and metadata is ``json.dumps``'s."""
from __future__ import annotations

import contextlib
import json

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.loaders import wide_stream
from annotate.catalog.loaders.base import LoadError
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.services.json_text import metadata_json, metadata_json_texts, options_json, options_json_texts


def _parse(path, monkeypatch, *, binary: bool):
    with monkeypatch.context() as patch:
        if not binary:
            patch.setattr(wide_stream, "_read_csv_binary", lambda head, cells: False)
        try:
            return parse_files(responses=path, file_format="wide", dataset="d"), None
        except LoadError as error:
            return None, [(p.file, p.row, p.column, p.message) for p in error.problems]


def _blocks(cells) -> np.ndarray:
    return np.concatenate([block for _, block, _ in cells.blocks()]) if cells.n_questions else np.empty(0)


def _assert_same(path, monkeypatch) -> None:
    fast, fast_problems = _parse(path, monkeypatch, binary=True)
    slow, slow_problems = _parse(path, monkeypatch, binary=False)
    assert fast_problems == slow_problems
    if slow is None:
        return
    assert fast.notes == slow.notes
    pd.testing.assert_frame_equal(fast.questions, slow.questions)
    pd.testing.assert_frame_equal(fast.models, slow.models)
    assert (fast.cells is None) == (slow.cells is None)
    if slow.cells is None:  # both went to the whole-file reader
        pd.testing.assert_frame_equal(fast.responses, slow.responses)
        return
    a, b = fast.cells, slow.cells
    for name in ("ids", "rows", "row_counts", "col_counts", "col_first"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.dtype == b.dtype and a.denominator == b.denominator and a.n_components() == b.n_components()
    assert np.array_equal(_blocks(a), _blocks(b))
    observed_a = np.concatenate([o for _, _, o in a.blocks()]) if a.n_questions else np.empty(0)
    observed_b = np.concatenate([o for _, _, o in b.blocks()]) if b.n_questions else np.empty(0)
    assert np.array_equal(observed_a, observed_b)


def _generated(rng: np.random.Generator, n_rows: int, n_models: int, *, blank_share: float) -> list[list[str]]:
    cells = np.where(rng.random((n_rows, n_models)) < 0.5, "1", "0").astype(object)
    cells[rng.random((n_rows, n_models)) < blank_share] = ""
    return [[f" q{i} " if i % 7 == 0 else f"q{i}", *row] for i, row in enumerate(cells.tolist())]


def _write(path, header: list[str], rows: list[list[str]], newline: str = "\n") -> None:
    path.write_text(newline.join([",".join(header)] + [",".join(r) for r in rows]) + newline, encoding="utf-8")


@pytest.mark.parametrize("blank_share", [0.0, 0.1, 1.0])
def test_a_generated_binary_file_reads_the_same(tmp_path, monkeypatch, blank_share):
    monkeypatch.setattr(wide_stream, "CHUNK_CELLS", 40)  # several chunks in the chunked reader
    rows = _generated(np.random.default_rng(7), 60, 5, blank_share=blank_share)
    rows.insert(10, [""] * 6)  # a row blank in every cell is skipped
    path = tmp_path / "wide.csv"
    _write(path, ["question_id"] + [f"m{j}" for j in range(5)], rows)
    _assert_same(path, monkeypatch)


def test_the_binary_reader_takes_a_clean_file_and_no_other(tmp_path, monkeypatch):
    path = tmp_path / "wide.csv"
    _write(path, ["question_id", "a", "b"], [["q1", "1", ""], ["q2", "0", "1"]])
    taken = []
    original = wide_stream._read_csv_binary
    monkeypatch.setattr(wide_stream, "_read_csv_binary", lambda head, cells: taken.append(original(head, cells))
                        or taken[-1])
    parse_files(responses=path, file_format="wide", dataset="d")
    _write(path, ["question_id", "a", "b"], [["q1", "1", ""], ["q2", "1.0", "1"]])
    parse_files(responses=path, file_format="wide", dataset="d")
    assert taken == [True, False]


@pytest.mark.parametrize(("newline", "stray", "taken"), [("\r\n", False, True), ("\n\r", False, False),
                                                       ("\r\n", True, False)])
def test_crlf_line_ends_are_taken_and_a_lone_carriage_return_is_not(tmp_path, monkeypatch, newline, stray, taken):
    """A file saved with CRLF line ends (as Windows tools save them) is read by the binary reader,
    with the cells, ids and rows the chunked reader gives; any other carriage return (LF CR line
    ends, one CR inside a line) sends it to the chunked reader."""
    rows = _generated(np.random.default_rng(11), 30, 4, blank_share=0.1)
    if stray:
        rows[9][0] = "q9\rx"
    path = tmp_path / "wide.csv"
    _write(path, ["question_id"] + [f"m{j}" for j in range(4)], rows, newline=newline)
    took = []
    original = wide_stream._read_csv_binary
    with monkeypatch.context() as patch:
        patch.setattr(wide_stream, "_read_csv_binary", lambda head, cells: took.append(original(head, cells))
                      or took[-1])
        with contextlib.suppress(LoadError):  # a stray CR makes a short line: refused by the chunked reader
            parse_files(responses=path, file_format="wide", dataset="d")
    assert took == [taken]
    _assert_same(path, monkeypatch)
    if taken:
        parsed, _ = _parse(path, monkeypatch, binary=True)
        assert parsed.cells.ids.tolist() == [r[0].strip() for r in rows]
        assert parsed.cells.rows.tolist() == list(range(2, 32))


@pytest.mark.parametrize("cell", [" 1", "1 ", "1.0", "1e0", "+1", "-0", "true", "True", "2", "-1", "abc", "nan",
                                  "0,5", '"1"', "0.5"])
def test_a_cell_other_than_0_1_or_blank_is_read_as_before(tmp_path, monkeypatch, cell):
    rows = _generated(np.random.default_rng(3), 20, 3, blank_share=0.2)
    rows[13][2] = cell
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(["question_id,m0,m1,m2"] + [",".join(r) for r in rows]) + "\n", encoding="utf-8")
    _assert_same(path, monkeypatch)


@pytest.mark.parametrize("case", ["crlf", "quoted id", "ragged long", "ragged short", "empty line", "blank id",
                                  "repeated id", "tab separated", "header only", "no trailing newline"])
def test_a_file_the_binary_reader_refuses_is_read_as_before(tmp_path, monkeypatch, case):
    rows = _generated(np.random.default_rng(5), 12, 3, blank_share=0.2)
    header = ["question_id", "m0", "m1", "m2"]
    lines = [",".join(header)] + [",".join(r) for r in rows]
    newline, tail = "\n", "\n"
    if case == "crlf":
        newline = "\r\n"
    elif case == "quoted id":
        lines[3] = '"q,x",1,0,1'
    elif case == "ragged long":
        lines[4] += ",1"
    elif case == "ragged short":
        lines[4] = "q99,1"
    elif case == "empty line":
        lines.insert(5, "")
    elif case == "blank id":
        lines[6] = ",1,0,1"
    elif case == "repeated id":
        lines[7] = lines[2]
    elif case == "tab separated":
        lines = [line.replace(",", "\t") for line in lines]
    elif case == "header only":
        lines = lines[:1]
    elif case == "no trailing newline":
        tail = ""
    path = tmp_path / "wide.csv"
    path.write_text(newline.join(lines) + tail, encoding="utf-8")
    _assert_same(path, monkeypatch)


@pytest.mark.parametrize("options", [[], ["a", "b"], ("x",), ["é ü \u2028", 'quote " and \\'], ["1", 2, None],
                                     [1.5, True], [["nested"]]])
def test_options_json_is_json_dumps(options):
    assert options_json(options) == json.dumps(list(options))


@pytest.mark.parametrize("metadata", [{}, {"src": "a", "level": None}, {"é": "ü\n"}, {"n": 3}, {"x": [1]},
                                      {1: "a"}, {"t": True, "f": 1.5}])
def test_metadata_json_is_json_dumps(metadata):
    assert metadata_json(metadata) == json.dumps(metadata)


_OPTION_CELLS = ['["a", "b"]', "[]", '[""]', '["", ""]', '["a","b"]', '[ "a", "b" ]', '["a",\n"b"]', '["a",  "b"]',
                 '["caf\u00e9"]', '["caf\\u00e9"]', '["caf\\u00E9"]', '["a\\"b", "c"]', '["a\\\\b"]', '["a\\/b"]',
                 '["a\\nb"]', '["a\x7fb"]', '["a\\u007fb"]', '["a\\u0041"]', '["\U0001F600"]', '["\\ud83d\\ude00"]',
                 '["a", ", ", "b"]', '["a\\", \\"b"]', '["{}", "<&>"]', '["x"]', '[1, "x"]', '[null]']


@pytest.mark.parametrize("text", _OPTION_CELLS)
def test_an_options_cell_is_stored_as_read_only_when_it_is_what_json_dumps_writes(text):
    decoded = json.loads(text)
    # the text's own runs between '["', '", "' and '"]', as raw as they are written (escapes unread)
    raw_runs = text[2:-2].split('", "')
    others = [[], ["a", "b"], ["a", "b", ""], ['a", "b'], ["a\tb"], [1, "x"], raw_runs]
    # Its own list, and every other list it could be paired with, get json.dumps's text.
    for options in [decoded, *others]:
        assert options_json_texts([options], [text]) == [json.dumps(options)]
    assert options_json_texts([decoded, None, ("x",)], [text, text, text]) == [json.dumps(decoded), "[]", '["x"]']
    assert options_json_texts([decoded]) == [json.dumps(decoded)]


@pytest.mark.parametrize("values", [
    [{"src": "a", "level": None}, {"src": "é\n", "level": "x"}, {"src": 'q"\\', "level": None}],
    [{"a{b}": "{0}", "}": "{}"}, {"a{b}": "", "}": "\x00\x01\U0001F600"}],
    [{"src": "a"}, {"level": "b"}], [{"src": "a", "level": "b"}, {"level": "b", "src": "a"}],
    [{"n": 3}, {"n": None}], [{"n": "a"}, {"n": 1.5}], [{1: "a"}, {1: "b"}], [{}, {}], [{"a": "b"}, None],
    [{"a": "b"}, float("nan")], [], [{"a": ["x"]}], [{"t": True}, {"t": "true"}],
])
def test_a_column_of_metadata_is_encoded_as_json_dumps_encodes_each_dict(values):
    expected = [json.dumps(v) if isinstance(v, dict) else "{}" for v in values]
    assert metadata_json_texts(values) == expected


@pytest.mark.parametrize("text", ['["a", "b"]', "[]", '["a",1]', '["a"] ', ' ["a"]', '["a"], ["b"]', '["a"]x', "[",
                                  '{"a": 1}', '"a"', '[["a"]]', '["\\u00e9", "\\ud83d\\ude00"]', "[null]",
                                  "[1.5, true]", "[" * 200 + "]" * 200, '["a", ["b"]]', "nan", '["x"]]'])
@pytest.mark.parametrize("max_depth", [None, 0, 1, 2, 100])
def test_options_cells_parse_as_loads_bounded_says(text, max_depth):
    """The one-scan reading of a list-of-str cell agrees with the bounded parse, bad cells included."""
    from annotate.catalog.loaders._tabular_common import _parse_options
    from annotate.core import loads_bounded

    try:
        value = loads_bounded(text, max_depth=max_depth)
    except json.JSONDecodeError:
        expected = None
    else:
        expected = [v if isinstance(v, str) else json.dumps(v) for v in value] if isinstance(value, list) else None
    assert _parse_options(text, max_depth) == expected
