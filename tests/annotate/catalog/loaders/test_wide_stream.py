"""Wide files read a chunk at a time (issue 16, point 1): the same parse, cell for cell, as the
whole-file reader, the same problems (file, row, column) wherever the chunk, and the same stored
matrix."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.loaders import tabular, wide_stream
from annotate.catalog.loaders.base import LoadError
from annotate.catalog.loaders.dense import DenseCells
from annotate.catalog.loaders.tabular import CREDIT_NOT_A_NUMBER, CREDIT_OUT_OF_RANGE, MAX_PROBLEMS, parse_wide
from annotate.catalog.loaders.tabular_files import parse_files


@pytest.fixture
def small_chunks(monkeypatch):
    """3 rows of 4 columns per chunk, 2 rows per Parquet batch: every input spans several."""
    monkeypatch.setattr(wide_stream, "CHUNK_CELLS", 12)
    monkeypatch.setattr(wide_stream, "PARQUET_BATCH_ROWS", 2)


def _whole(monkeypatch, function, *args, **kwargs):
    """``function`` with the streamed reader switched off (the reader every file used before)."""
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "read_wide_stream", lambda *a, **k: wide_stream.FALLBACK)
        return function(*args, **kwargs)


def _same(streamed, whole) -> None:
    assert streamed.cells is not None and whole.cells is None
    assert streamed.notes == whole.notes
    pd.testing.assert_frame_equal(streamed.questions, whole.questions)
    pd.testing.assert_frame_equal(streamed.models, whole.models)
    assert streamed.observed_counts() == whole.observed_counts()
    pd.testing.assert_frame_equal(streamed.responses, whole.responses)  # the long form, built on demand


WIDE = {
    "binary with missing cells and a blank row": (
        "question_id,m1,m2,m3\n"
        "q1,1,0,\n"
        "q2,,1,1\n"
        ",,,\n"
        "q3,0,,\n"
        "q4,1,1,1\n"
        "q5,,,\n"
        "q6,0,1,0\n"
        "q7,1,,0\n"
    ),
    "partial credit, spaces, credits near 0 and 1": (
        "question_id,m1,m2,m3\n"
        "q1, 0.5 ,0.25,1\n"
        "q2,0.3333333333333333,,1e-13\n"
        "q3,0.9999999999999999,0.75,\n"
        "q4,0,1,0.125\n"
        "q5,,, 1 \n"
    ),
    "names to clean (the long form is built, as before)": (
        "question_id,Llama\u00a03,GPT-4 \n"
        "q1,1,0\n"
        "q2 ,0,1\n"
        "q3,1,1\n"
        "q4,,1\n"
    ),
    "a model observed only late (column order of the store)": (
        "question_id,m1,m2,m3\n"
        "q1,,1,\n"
        "q2,,0,\n"
        "q3,,1,\n"
        "q4,1,,1\n"
    ),
}


@pytest.mark.parametrize("text", WIDE.values(), ids=WIDE.keys())
def test_a_streamed_wide_csv_parses_as_the_whole_file_did(tmp_path, monkeypatch, small_chunks, text):
    path = tmp_path / "wide.csv"
    path.write_text(text, encoding="utf-8")
    streamed = parse_wide(path, dataset="d")
    whole = _whole(monkeypatch, parse_wide, path, dataset="d")
    if "Llama" in text:
        assert streamed.cells is None and any("normalised" in n for n in streamed.notes)
        pd.testing.assert_frame_equal(streamed.responses, whole.responses)
        assert streamed.notes == whole.notes
        return
    _same(streamed, whole)


def test_streamed_cells_hold_the_credits_and_counts(tmp_path, small_chunks):
    path = tmp_path / "wide.csv"
    path.write_text(WIDE["partial credit, spaces, credits near 0 and 1"], encoding="utf-8")
    parsed = parse_wide(path, dataset="d")
    cells = parsed.cells
    assert isinstance(cells, DenseCells)
    assert cells.rows.tolist() == [2, 3, 4, 5, 6]
    assert cells.row_counts.tolist() == [3, 2, 2, 3, 1]
    assert cells.col_counts.tolist() == [4, 3, 4]
    assert (cells.snapped_low, cells.snapped_high) == (1, 1)
    assert cells.dtype == np.float64  # 1/3 is no float32
    assert parsed.notes[-1].startswith("2 credit(s) within 1e-12")
    assert cells.first_cells(4) == [(0, 0, 0.5), (0, 1, 0.25), (0, 2, 1.0), (1, 0, 0.3333333333333333)]


def test_a_streamed_wide_csv_with_questions_and_models_files(tmp_path, monkeypatch, small_chunks):
    (tmp_path / "r.csv").write_text("question_id,m1,m2\nq1,1,0\nq2,0,\nq3,1,1\nq4,,1\n", encoding="utf-8")
    (tmp_path / "q.csv").write_text("question_id,category,question\nq1,math,A\nq2,law,B\nq3,math,C\nq4,law,D\n"
                                    "q5,law,E\n", encoding="utf-8")
    (tmp_path / "m.csv").write_text("model,parameters_b\nm1,7\nm2,70\n", encoding="utf-8")
    kwargs = {"dataset": "d", "questions": tmp_path / "q.csv", "models": tmp_path / "m.csv",
              "subject_column": "category"}
    _same(parse_wide(tmp_path / "r.csv", **kwargs), _whole(monkeypatch, parse_wide, tmp_path / "r.csv", **kwargs))


def test_a_bad_credit_in_a_later_chunk_is_located_by_file_row_and_column(tmp_path, monkeypatch, small_chunks):
    rows = [f"q{i},1,0,1" for i in range(1, 10)]
    rows[6] = "q7,1,maybe,1"  # row 8 of the file, the third chunk
    rows[8] = "q9,1,0,1.5"  # row 10, the fourth chunk
    path = tmp_path / "wide.csv"
    path.write_text("question_id,m1,m2,m3\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(LoadError) as streamed:
        parse_wide(path, dataset="d")
    assert [(p.file, p.row, p.column, p.message) for p in streamed.value.problems] == [
        ("wide.csv", 8, "m2", CREDIT_NOT_A_NUMBER.format(value="maybe")),
        ("wide.csv", 10, "m3", CREDIT_OUT_OF_RANGE.format(value="1.5")),
    ]
    with pytest.raises(LoadError) as whole:
        _whole(monkeypatch, parse_wide, path, dataset="d")
    assert streamed.value.problems == whole.value.problems


def test_more_bad_credits_than_listed_are_counted_across_chunks(tmp_path, monkeypatch, small_chunks):
    n = MAX_PROBLEMS // 3 + 10  # every cell bad: 3 per row
    path = tmp_path / "wide.csv"
    path.write_text("question_id,m1,m2,m3\n" + "".join(f"q{i},x,2,-1\n" for i in range(n)), encoding="utf-8")
    with pytest.raises(LoadError) as streamed:
        parse_wide(path, dataset="d")
    with pytest.raises(LoadError) as whole:
        _whole(monkeypatch, parse_wide, path, dataset="d")
    assert streamed.value.n_problems == 3 * n == whole.value.n_problems
    assert streamed.value.problems == whole.value.problems and len(streamed.value.problems) == MAX_PROBLEMS


@pytest.mark.parametrize(("rows", "expected"), [
    (["q1,1,0", "q2,0,1", "q3,1,1", "q1,1,0"], None),  # an exact duplicate in a later chunk: noted, dropped
    (["q1,1,0", "q2,0,1", "q3,1,1", "q1,0,0"], "conflicts with row 2"),  # disagreeing: refused
    (["q1,1,0", "q2,0,1", "q3,1,1", " ,1,0"], "question id is blank"),
    (["q1,1,0", "q2,0,1", "q3,1,1", "q4,1,0,1"], "row has 4 fields but the header has 3"),  # CSV parser refuses
])
def test_what_only_the_whole_file_reader_reports_is_reported_as_before(tmp_path, monkeypatch, small_chunks,
                                                                         rows, expected):
    path = tmp_path / "wide.csv"
    path.write_text("question_id,m1,m2\n" + "\n".join(rows) + "\n", encoding="utf-8")
    if expected is None:
        streamed = parse_wide(path, dataset="d")
        whole = _whole(monkeypatch, parse_wide, path, dataset="d")
        assert streamed.cells is None and "exact duplicate" in " ".join(streamed.notes)
        pd.testing.assert_frame_equal(streamed.responses, whole.responses)
        return
    with pytest.raises(LoadError) as streamed:
        parse_wide(path, dataset="d")
    with pytest.raises(LoadError) as whole:
        _whole(monkeypatch, parse_wide, path, dataset="d")
    assert streamed.value.problems == whole.value.problems
    assert expected in str(streamed.value)


# --- Parquet ---------------------------------------------------------------------------------


def test_a_wide_parquet_file_parses_as_the_same_table_in_csv(tmp_path, monkeypatch, small_chunks):
    table = pd.DataFrame({
        "question_id": [f"q{i}" for i in range(7)],
        "ints": np.array([1, 0, 1, 1, 0, 0, 1], dtype=np.int8),
        "floats": [0.5, None, 1.0, 0.25, None, 0.0, 1.0],
        "texts": ["1", "", "0", None, " 0.5 ", "1", "0"],
    })
    table.to_parquet(tmp_path / "wide.parquet", index=False)
    csv = table.astype(object).where(table.notna(), "")
    csv["floats"] = [("" if v == "" else repr(v)) for v in csv["floats"]]
    csv.to_csv(tmp_path / "wide.csv", index=False)
    from_parquet = parse_files(responses=tmp_path / "wide.parquet", dataset="d")
    from_csv = _whole(monkeypatch, parse_wide, tmp_path / "wide.csv", dataset="d")
    assert from_parquet.file_format == "wide" and from_parquet.cells is not None
    assert from_parquet.cells.row_counts.tolist() == [3, 1, 3, 2, 2, 3, 3]
    expected = from_csv.responses.assign(source=from_csv.responses["source"].str.replace("wide.csv", "wide.parquet"))
    pd.testing.assert_frame_equal(from_parquet.responses, expected)


def test_an_integer_parquet_file_is_read_as_uint8(tmp_path, small_chunks):
    values = np.random.default_rng(1).integers(0, 2, size=(9, 3), dtype=np.uint8)
    frame = pd.DataFrame(values, columns=["a", "b", "c"])
    frame.insert(0, "question_id", [f"q{i}" for i in range(9)])
    frame.to_parquet(tmp_path / "wide.parquet", index=False)
    cells = parse_wide(tmp_path / "wide.parquet", dataset="d").cells
    assert cells.dtype == np.uint8 and cells.n_observed == 27
    stacked = np.concatenate([credit for _, credit, _ in cells.blocks()])
    assert stacked.dtype == np.uint8 and np.array_equal(stacked, values)


def test_bad_parquet_cells_are_located_in_a_later_batch(tmp_path, small_chunks):
    frame = pd.DataFrame({"question_id": ["q1", "q2", "q3", "q4", "q5", "q3"],
                          "a": [1, 0, 1, 2, 0, 1], "b": [0.5, 0.1, None, 0.2, float("inf"), 1.0]})
    frame.to_parquet(tmp_path / "wide.parquet", index=False)
    with pytest.raises(LoadError) as error:
        parse_wide(tmp_path / "wide.parquet", dataset="d")
    assert [(p.row, p.column, p.message) for p in error.value.problems] == [
        (5, "a", CREDIT_OUT_OF_RANGE.format(value="2")),
        (7, "question_id", wide_stream.PARQUET_DUPLICATE_ID.format(question_id="q3", first=4)),  # ids first
        (6, "b", "credit 'inf' is NaN or infinite; leave the cell blank for 'not observed'"),  # then credits
    ]


def test_a_pickled_compact_parse_keeps_its_blocks_after_the_original_is_gone(tmp_path, small_chunks):
    import gc
    import pickle
    path = tmp_path / "wide.csv"
    path.write_text(WIDE["binary with missing cells and a blank row"], encoding="utf-8")
    parsed = parse_wide(path, dataset="d")
    expected = parsed.cells.long_form()
    folder = parsed.cells.folder
    kept = pickle.dumps(parsed)
    del parsed
    gc.collect()
    assert not folder.exists()  # the original's blocks went with it
    again = pickle.loads(kept)
    assert again.cells is not None and again.cells.folder != folder
    pd.testing.assert_frame_equal(again.responses, expected)


def test_the_dense_blocks_of_a_parse_lie_under_the_store_folder_and_go_with_it(tmp_path, small_chunks):
    """Blocks go to EIP_STORE_DIR/scratch (the disk sized for response sets), not the system's
    temporary folder, and are removed when the parse is gone."""
    import gc
    from pathlib import Path

    from django.conf import settings

    path = tmp_path / "wide.csv"
    path.write_text(WIDE["partial credit, spaces, credits near 0 and 1"], encoding="utf-8")
    parsed = parse_wide(path, dataset="d")
    folder = parsed.cells.folder
    assert folder.parent == Path(settings.EIP_STORE_DIR) / "scratch"
    assert any(folder.iterdir())  # the blocks are there while the parse lives
    del parsed
    gc.collect()
    assert not folder.exists()
