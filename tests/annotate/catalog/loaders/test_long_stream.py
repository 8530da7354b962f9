"""Long CSV/TSV and JSON Lines read a chunk at a time (issue 16, point 1): the same parse, cell
for cell, as the whole-file reader they replace (kept in ``_long_whole_reference``), the same
problems (file, row, column) wherever the chunk, and the same matrix (row and column order) for
the store."""
from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.loaders import long_stream, tabular
from annotate.catalog.loaders.base import LoadError
from annotate.catalog.loaders.tabular import parse_jsonl, parse_long
from annotate.catalog.loaders.tabular_files import parse_files
from tests.annotate.catalog.loaders import _long_whole_reference as reference


@pytest.fixture
def small_chunks(monkeypatch):
    """7 records per chunk and 2 or 3 matrix rows per block (of 5 models): every file spans several."""
    monkeypatch.setattr(long_stream, "CHUNK_ROWS", 7)
    monkeypatch.setattr(long_stream, "BLOCK_CELLS", 12)


def _whole(monkeypatch, function, *args, **kwargs):
    """``function`` with the whole-file readers of before (a ParsedResponseSet with a long form)."""
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "_read_long", reference._read_long)
        patch.setattr(tabular, "_read_jsonl", reference._read_jsonl)
        return function(*args, **kwargs)


def _outcome(function, *args, **kwargs):
    try:
        return function(*args, **kwargs), None
    except LoadError as exc:
        return None, ([str(p) for p in exc.problems], [(p.file, p.row, p.column) for p in exc.problems],
                      exc.n_unlisted)


KEY = ["dataset", "external_id", "model"]


def _same(streamed, whole) -> None:
    assert whole.cells is None
    assert streamed.notes == whole.notes
    pd.testing.assert_frame_equal(streamed.questions, whole.questions)
    pd.testing.assert_frame_equal(streamed.models, whole.models)
    assert streamed.observed_counts() == whole.observed_counts()
    responses = whole.responses
    if streamed.cells is not None:
        cells = streamed.cells
        # The matrix the store gets: questions and models in the order of their first response,
        # each located at the row of its first response.
        first_q = responses.drop_duplicates(["dataset", "external_id"])
        used = np.flatnonzero(cells.row_counts > 0)
        assert cells.datasets[used].tolist() == first_q["dataset"].tolist()
        assert cells.ids[used].tolist() == first_q["external_id"].tolist()
        assert [f"{cells.file}:{r}" for r in cells.rows[used].tolist()] == first_q["source"].tolist()
        first_m = responses.drop_duplicates("model")
        order = cells.model_order()
        assert cells.models[order].tolist() == first_m["model"].tolist()
        assert [f"{cells.file}:{cells.model_row(j)}" for j in order.tolist()] == first_m["source"].tolist()
    # Cell for cell (the long form of the cells is row-major, the file's was in file order).
    got = streamed.responses.sort_values(KEY).reset_index(drop=True)
    want = responses.sort_values(KEY).reset_index(drop=True)
    pd.testing.assert_frame_equal(got.drop(columns="source"), want.drop(columns="source"))


def _compare(monkeypatch, function, *args, **kwargs):
    """Asserts the streamed parse equals the whole-file one; returns the problems (or None)."""
    streamed, streamed_error = _outcome(function, *args, **kwargs)
    whole, whole_error = _outcome(_whole, monkeypatch, function, *args, **kwargs)
    assert streamed_error == whole_error
    if whole is not None:
        _same(streamed, whole)
    return whole_error


# --- generated files -------------------------------------------------------------------------


def _records(seed: int, n_questions: int = 12, n_models: int = 5) -> list[dict]:
    """Shuffled records of a partial-credit matrix with missing cells, two datasets (one left
    to the default), subjects, question texts, options and a kept column; a few exact
    duplicates; some records with a blank credit."""
    rng = np.random.default_rng(seed)
    credits = ["0", "1", "0.5", "0.25", "1e-13", "0.9999999999999999", " 1 ", ""]
    out = []
    for q in range(n_questions):
        dataset = "" if q % 3 == 0 else ("d1" if q % 3 == 1 else "d2")
        for m in rng.permutation(n_models)[: rng.integers(1, n_models + 1)].tolist():
            out.append({"dataset": dataset, "question_id": f"q{q}", "model": f"model-{m}",
                        "credit": credits[int(rng.integers(len(credits)))],
                        "subject": f"s{q % 2}" if rng.random() < 0.7 else "",
                        "question": f"text of q{q}", "options_json": json.dumps([f"a{q}", "b"]),
                        "src": f"src{q % 4}"})
    order = rng.permutation(len(out)).tolist()
    out = [out[i] for i in order]
    out += [dict(out[i]) for i in (3, 11, 20)]  # exact duplicates, later in the file
    return out


COLUMNS = ["dataset", "question_id", "model", "credit", "subject", "question", "options_json", "src"]


def _write_csv(path, records, sep=",") -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=sep, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([r[c] for c in COLUMNS] for r in records)


def _write_jsonl(path, records) -> None:
    lines = []
    for r in records:
        record = {c: r[c] for c in COLUMNS if c != "credit" and (r[c] != "" or c in ("dataset", "subject"))}
        text = r["credit"].strip()
        record["credit"] = None if text == "" else float(text) if "." in text or "e" in text else int(text)
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("form", ["csv", "tsv", "jsonl"])
def test_a_streamed_long_file_parses_as_the_whole_file_did(tmp_path, monkeypatch, small_chunks, seed, form):
    records = _records(seed)
    path = tmp_path / f"long.{form}"
    if form == "jsonl":
        _write_jsonl(path, records)
        function = parse_jsonl
    else:
        _write_csv(path, records, sep="\t" if form == "tsv" else ",")
        function = parse_long
    _compare(monkeypatch, function, path, dataset="default", subject_column="subject", keep_columns=["src"])
    streamed = function(path, dataset="default", subject_column="subject", keep_columns=["src"])
    assert streamed.cells is not None and len(streamed.cells._blocks) > 1
    assert any("exact duplicate" in n for n in streamed.notes)


def test_streamed_cells_hold_the_credits_written_in_the_file(tmp_path, small_chunks):
    """An independent check of the values: the last non-blank credit of each cell, parsed by
    Python's float(), snapped within 1e-12 of 0 or 1 (the duplicates repeat the same credit)."""
    records = _records(5)
    path = tmp_path / "long.csv"
    _write_csv(path, records)
    parsed = parse_long(path, dataset="default", subject_column="subject", keep_columns=["src"])
    want = {}
    for r in records:
        if r["credit"].strip():
            value = float(r["credit"])
            value = 0.0 if 0 < value < 1e-12 else 1.0 if 1 - 1e-12 < value < 1 else value
            want[(r["dataset"] or "default", r["question_id"], r["model"])] = value
    got = {(d, q, m): c for d, q, m, c in parsed.responses[["dataset", "external_id", "model", "credit"]]
           .itertuples(index=False)}
    assert got == want


def test_the_long_bench_file_parses_as_the_whole_file_did(tmp_path, monkeypatch):
    """The generator of ``python -m bench store`` (a bigger file, default chunk size lowered)."""
    from bench.bench_store import _long_csv
    monkeypatch.setattr(long_stream, "CHUNK_ROWS", 1000)
    path = tmp_path / "long.csv"
    _long_csv(path, 60, 40)
    _compare(monkeypatch, parse_files, responses=path, file_format="long", dataset="bench-long")


def test_names_to_clean_give_the_long_form_as_before(tmp_path, monkeypatch, small_chunks):
    path = tmp_path / "long.csv"
    path.write_text("question_id,model,credit\nq1,Llama\u00a03,1\nq2 ,GPT-4 ,0\nq1,GPT-4,1\n"
                    "q3,Llama 3,0.5\nq2,Llama 3,\nq3,GPT-4,0\nq4,GPT-4,1\nq5,GPT-4,0\n", encoding="utf-8")
    _compare(monkeypatch, parse_long, path, dataset="d")


def test_questions_and_models_files_are_checked_as_before(tmp_path, monkeypatch, small_chunks):
    questions = tmp_path / "questions.csv"
    questions.write_text("question_id,subject,question\nq1,s,text one\nq2,s,text two\nq3,t,\n", encoding="utf-8")
    models = tmp_path / "models.csv"
    models.write_text("model\nm1\nm2\n", encoding="utf-8")
    path = tmp_path / "long.csv"
    path.write_text("question_id,model,credit,question\n" + "".join(
        f"q{q},m{m},{(q + m) % 2},{'text one' if q == 1 else ''}\n" for q in (1, 2, 3) for m in (1, 2)
    ), encoding="utf-8")
    _compare(monkeypatch, parse_long, path, dataset="d", questions=questions, models=models,
             subject_column="subject")
    bad = tmp_path / "bad.csv"
    bad.write_text("question_id,model,credit,question\n" + "".join(
        f"q{q},m{m},1,{'other text' if q == 2 else ''}\n" for q in (1, 2, 3, 4) for m in (1, 2, 3)
    ), encoding="utf-8")
    _compare(monkeypatch, parse_long, bad, dataset="d", questions=questions, models=models,
             subject_column="subject")


# --- problems --------------------------------------------------------------------------------

HEADER = "question_id,model,credit,dataset,subject,options_json\n"


def _rows(n: int = 20) -> list[str]:
    return [f"q{i // 3},m{i % 3},{i % 2},d,s{(i // 3) % 2},\n" for i in range(n)]


def _with(rows: list[str], changes: dict[int, str]) -> str:
    rows = list(rows)
    for i, row in changes.items():
        rows[i] = row
    return HEADER + "".join(rows)


BAD_CSV = {
    "bad credits in a later chunk": _with(_rows(), {15: "q5,m0,abc,d,s1,\n", 17: "q5,m2,0,5,d,s1\n"}),
    "credits out of range, NaN, infinite, a decimal comma": _with(
        _rows(), {2: "q0,m2,1.5,d,s0,\n", 9: "q3,m0,nan,d,s1,\n", 13: 'q4,m1,"0,5",d,s0,\n', 18: "q6,m0,inf,d,s0,\n"}),
    "blank question id, model and dataset": _with(
        _rows(), {1: ",m1,1,d,s0,\n", 12: "q4,,1,d,s0,\n", 16: "q5,m1,1,,s1,\n", 19: " ,m1,1,d,s0,\n"}),
    "a conflicting duplicate in a later chunk": _with(_rows(), {16: "q0,m1,0,d,s0,\n", 19: "q0,m1,0.5,d,s0,\n"}),
    "exact and conflicting duplicates": _with(_rows(), {14: "q0,m0,0,d,s0,\n", 15: "q1,m0,0,d,s1,\n",
                                                        19: "q1,m0,1,d,s1,\n"}),
    "two subjects for one question, across chunks": _with(_rows(), {17: "q0,m2,0,d,s9,\n", 18: "q1,m2,0,d,s8,\n"}),
    "options that are not a JSON list": _with(_rows(), {10: 'q3,m1,1,d,s1,"{""a"": 1}"\n'}),
    "a row longer than the header in a later chunk": _with(_rows(), {16: "q5,m1,1,d,s1,,extra\n"}),
    "a blank row and a short row": _with(_rows(), {8: ",,,,,\n", 11: "q3,m2,1\n"}),
    "no dataset anywhere": HEADER + "".join(f"q{i},m{i % 2},1,,,\n" for i in range(12)),
    "every credit blank": HEADER + "".join(f"q{i},m{i % 2},,d,s,\n" for i in range(12)),
    "a header only": HEADER,
    "a missing column": "question_id,model\nq1,m1\n",
}


@pytest.mark.parametrize("text", BAD_CSV.values(), ids=BAD_CSV.keys())
def test_problems_are_located_as_the_whole_file_reader_located_them(tmp_path, monkeypatch, small_chunks, text):
    path = tmp_path / "long.csv"
    path.write_text(text, encoding="utf-8")
    assert _compare(monkeypatch, parse_long, path, subject_column="subject") is not None
    if "later chunk" in next(k for k, v in BAD_CSV.items() if v == text):
        with pytest.raises(LoadError) as error:
            parse_long(path, subject_column="subject")
        assert min(p.row or 0 for p in error.value.problems) > 7 + 1  # beyond the first chunk


def test_more_problems_than_listed_are_counted_across_chunks(tmp_path, monkeypatch, small_chunks):
    path = tmp_path / "long.csv"
    path.write_text("question_id,model,credit\n" + "".join(f"q{i},m,2\n" for i in range(260))
                    + "".join(f",m,1\nq{i},,1\n" for i in range(150)), encoding="utf-8")
    _compare(monkeypatch, parse_long, path, dataset="d")
    with pytest.raises(LoadError) as error:
        parse_long(path, dataset="d")
    # 300 blank ids and models are listed first, then 260 credits: 200 listed, 360 counted.
    assert len(error.value.problems) == 200 and error.value.n_unlisted == 560 - 200


BAD_JSONL = {
    "invalid JSON in a later chunk": [{"question_id": f"q{i}", "model": "m", "credit": 1} for i in range(15)]
    + ["{not json", "[1, 2]", '{"question_id": "q", "model": "m"}', '{"question_id": true, "model": "m", "credit": 1}',
       '{"question_id": "q\\u0000", "model": "m", "credit": 1}'],
    "bad credits and blank ids": [{"question_id": f"q{i}", "model": "m", "credit": [1, "x", 2, True, None][i % 5]}
                                  for i in range(15)] + [{"question_id": "", "model": "m", "credit": 1}],
    "a conflict and extra keys": [{"question_id": f"q{i % 6}", "model": f"m{i // 6}", "credit": 1, "extra": i}
                                  for i in range(18)] + [{"question_id": "q1", "model": "m0", "credit": 0.5}],
    "a subject given two ways": [{"question_id": f"q{i % 6}", "model": f"m{i // 6}", "credit": 1,
                                  "subject": "a" if i < 15 else "b"} for i in range(18)],
}


@pytest.mark.parametrize("lines", BAD_JSONL.values(), ids=BAD_JSONL.keys())
def test_json_lines_problems_are_located_as_before(tmp_path, monkeypatch, small_chunks, lines):
    path = tmp_path / "long.jsonl"
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    blank_line = text.replace('1}\n{"question_id": "q4"', '1}\n\n{"question_id": "q4"')  # line numbers skip it
    path.write_text(blank_line, encoding="utf-8")
    assert _compare(monkeypatch, parse_jsonl, path, dataset="d") is not None


def test_json_lines_split_as_the_whole_text_split(tmp_path, monkeypatch, small_chunks):
    """Line numbers count the breaks str.splitlines counts (CR LF, a lone CR, U+2028)."""
    path = tmp_path / "long.jsonl"
    records = [json.dumps({"question_id": f"q{i}", "model": "m", "credit": 1}) for i in range(10)]
    text = records[0] + "\r\n" + records[1] + "\r" + records[2] + "\n" + "\u2028".join(records[3:5]) + "\n"
    text += "\n".join(records[5:]) + '\n{"question_id": 1.5, "model": "m", "credit": 1}\n'
    path.write_bytes(text.encode("utf-8"))
    problems = _compare(monkeypatch, parse_jsonl, path, dataset="d")
    assert problems[1] == [("long.jsonl", 11, "question_id")]  # 10 records on 10 lines (U+2028 breaks one)


# --- the text checks, a block at a time ------------------------------------------------------

TEXTS = {
    "valid, multibyte characters across blocks": "id,model,credit\nq\u00e9,m\u20ac,1\nq\U0001f600,m,0\n".encode(),
    "a UTF-8 byte-order mark": b"\xef\xbb\xbfquestion_id,model,credit\nq1,m,1\n",
    "a bad byte after a byte-order mark": b"\xef\xbb\xbfquestion_id,model,credit\nq1,m\xff,1\n",
    "a bad byte": b"question_id,model,credit\nq1,m,1\nq\xe9x,m,1\n",
    "a multibyte character cut short at the end": b"question_id,model,credit\nq1,m,1\nq\xe2\x82",
    "a NUL character on line 4": b"question_id,model,credit\nq1,m,1\nq2,m,0\nq3\x00,m,1\n",
    "a NUL character then a bad byte": b"question_id,model,credit\nq\x00,m,1\nq\xff,m,1\n",
    "blank": b" \n\t\r\n  ",
    "empty": b"",
    "a byte-order mark only": b"\xef\xbb\xbf",
    "UTF-16": "question_id\n".encode("utf-16"),
    "UTF-32": "question_id\n".encode("utf-32"),
}


@pytest.mark.parametrize("block", [1, 2, 3, 5, 1 << 20])
@pytest.mark.parametrize("raw", TEXTS.values(), ids=TEXTS.keys())
def test_the_text_is_checked_a_block_at_a_time_as_whole(tmp_path, monkeypatch, raw, block):
    from annotate.catalog.loaders import _tabular_common as common
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", block)
    path = tmp_path / "long.csv"
    path.write_bytes(raw)
    whole, streamed = common._Problems(), common._Problems()
    decoded = common._decode(path, whole)
    assert common.check_text(path, streamed) is (decoded is not None)
    assert streamed.items == whole.items
    head_whole, head_streamed = common._read_csv_head(path, common._Problems()), common._read_csv_head(
        path, common._Problems(), keep_text=False)
    assert (head_whole is None) is (head_streamed is None)
    if head_whole is not None:
        assert (head_streamed.sep, head_streamed.header) == (head_whole.sep, head_whole.header)


def test_a_missing_file_is_reported_as_before(tmp_path, monkeypatch):
    _compare(monkeypatch, parse_long, tmp_path / "nothing.csv", dataset="d")
    _compare(monkeypatch, parse_jsonl, tmp_path / "nothing.jsonl", dataset="d")
