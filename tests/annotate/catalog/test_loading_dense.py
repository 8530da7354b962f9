"""A wide file loaded from its compact form (dense blocks, issue 16 point 1) stores what the
long form stored: the same preview, membership rows and matrix, batch by batch."""
from __future__ import annotations

import numpy as np
import pytest

from annotate.catalog import matrix_store
from annotate.catalog.loaders import tabular, wide_stream
from annotate.catalog.loaders.tabular import parse_wide
from annotate.catalog.services import loading
from annotate.catalog.services.loading import response_set_load, response_set_preview
from annotate.models import ResponseSetModel, ResponseSetQuestion

# Question q3 has no response (not a row of the matrix); m3 is first observed on q4 (the last column).
WIDE = (
    "question_id,m1,m2,m3,m4\n"
    "q1,1,,,0\n"
    "q2,0.5,1,,\n"
    "q3,,,,\n"
    "q4,,0,1,\n"
    "q5,1,1,0.25,1\n"
    "q6,,,,1\n"
    "q7,0,0,,\n"
)


def _parse(path, *, whole: bool, monkeypatch):
    with monkeypatch.context() as patch:
        if whole:
            patch.setattr(tabular, "read_wide_stream", lambda *a, **k: wide_stream.FALLBACK)
        return parse_wide(path, dataset="dense")


def _stored(response_set):
    rows = list(ResponseSetQuestion.objects.filter(response_set=response_set).order_by("row")
                .values_list("row", "question__external_id"))
    columns = list(ResponseSetModel.objects.filter(response_set=response_set).order_by("column")
                   .values_list("column", "model__name"))
    return rows, columns, matrix_store.read_dense(matrix_store.store_path(response_set))


@pytest.mark.django_db
def test_the_compact_form_loads_the_matrix_the_long_form_loaded(tmp_path, monkeypatch):
    monkeypatch.setattr(wide_stream, "CHUNK_CELLS", 10)  # 2 rows per block
    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", 3)  # batches straddle blocks
    path = tmp_path / "wide.csv"
    path.write_text(WIDE, encoding="utf-8")
    compact = _parse(path, whole=False, monkeypatch=monkeypatch)
    long = _parse(path, whole=True, monkeypatch=monkeypatch)
    assert compact.cells is not None and long.cells is None
    preview_compact = response_set_preview(parsed=compact)
    preview_long = response_set_preview(parsed=long)
    assert preview_compact == preview_long
    assert (preview_compact.n_responses, preview_compact.n_questions, preview_compact.n_models) == (13, 6, 4)
    assert (preview_compact.n_cells, preview_compact.n_missing, preview_compact.n_components) == (24, 11, 1)
    progress: list[tuple[int, int]] = []
    loaded = response_set_load(parsed=compact, name="compact", progress=lambda d, t: progress.append((d, t)))
    assert compact.cells is not None  # never built the long form
    assert progress == [(6, 13), (13, 13)]
    rows, columns, matrix = _stored(loaded)
    assert rows == [(0, "q1"), (1, "q2"), (2, "q4"), (3, "q5"), (4, "q6"), (5, "q7")]
    assert columns == [(0, "m1"), (1, "m4"), (2, "m2"), (3, "m3")]
    nan = np.nan
    assert np.array_equal(matrix, [[1, 0, nan, nan], [0.5, nan, 1, nan], [nan, nan, 0, 1],
                                   [1, 1, 1, 0.25], [nan, 1, nan, nan], [0, nan, 0, nan]], equal_nan=True)
    info = matrix_store.store_info(matrix_store.store_path(loaded))
    assert (info["credit_dtype"], info["credit_denominator"]) == ("uint8", 4)  # 1/2 and 1/4: numerators of k/4
    # The same file through the long form (another dataset name: the catalog rows are shared otherwise).
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "wide.csv"
    copy.write_text(WIDE + "q8,,,,\n", encoding="utf-8")  # another checksum; q8 has no response
    reference = response_set_load(parsed=_parse(copy, whole=True, monkeypatch=monkeypatch), name="long")
    rows_long, columns_long, matrix_long = _stored(reference)
    assert (rows_long, columns_long) == (rows, columns)
    assert np.array_equal(matrix_long, matrix, equal_nan=True)


@pytest.mark.django_db
def test_a_binary_wide_file_is_stored_as_uint8_from_its_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(wide_stream, "CHUNK_CELLS", 8)
    rng = np.random.default_rng(3)
    values = (rng.random((11, 3)) < 0.5).astype(int)
    path = tmp_path / "binary.csv"
    path.write_text("question_id,a,b,c\n" + "".join(f"q{i}," + ",".join(map(str, row)) + "\n"
                                                   for i, row in enumerate(values.tolist())), encoding="utf-8")
    loaded = response_set_load(parsed=parse_wide(path, dataset="binary"), name="binary")
    path_store = matrix_store.store_path(loaded)
    assert matrix_store.store_info(path_store)["credit_dtype"] == "uint8"
    assert np.array_equal(matrix_store.read_compact(path_store), values)


# Records out of order: mC is first named on q1 (the first question) but after mB, so the column
# order of the long form (first response) is not the order of the first question observing each model.
LONG = (
    "question_id,model,credit\n"
    "q1,mA,1\n"
    "q2,mB,0\n"
    "q1,mC,0.5\n"
    "q3,mA,\n"
    "q2,mA,1\n"
    "q4,mC,0\n"
    "q1,mA,1\n"
)


@pytest.mark.django_db
def test_a_long_file_read_in_chunks_loads_the_matrix_its_long_form_loaded(tmp_path, monkeypatch):
    from annotate.catalog.loaders import long_stream
    from annotate.catalog.loaders.tabular import parse_long
    from tests.annotate.catalog.loaders import _long_whole_reference as reference
    monkeypatch.setattr(long_stream, "CHUNK_ROWS", 2)
    monkeypatch.setattr(long_stream, "BLOCK_CELLS", 6)  # 2 rows of 3 models per block
    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", 2)
    path = tmp_path / "long.csv"
    path.write_text(LONG, encoding="utf-8")
    compact = parse_long(path, dataset="dense-long")
    assert compact.cells is not None
    preview = response_set_preview(parsed=compact)
    assert (preview.n_responses, preview.n_questions, preview.n_models, preview.n_cells, preview.n_missing) == (
        5, 3, 3, 9, 4)
    loaded = response_set_load(parsed=compact, name="compact-long")
    assert compact.cells is not None  # never built the long form
    rows, columns, matrix = _stored(loaded)
    assert rows == [(0, "q1"), (1, "q2"), (2, "q4")]
    assert columns == [(0, "mA"), (1, "mB"), (2, "mC")]
    nan = np.nan
    assert np.array_equal(matrix, [[1, nan, 0.5], [1, 0, nan], [nan, nan, 0]], equal_nan=True)
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "long.csv"
    copy.write_text(LONG + "q5,mB,\n", encoding="utf-8")  # another checksum; q5 has no response
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "_read_long", reference._read_long)
        whole = parse_long(copy, dataset="dense-long")
    assert whole.cells is None
    assert response_set_preview(parsed=whole).n_responses == 5
    rows_long, columns_long, matrix_long = _stored(response_set_load(parsed=whole, name="whole-long"))
    assert (rows_long, columns_long) == (rows, columns)
    assert np.array_equal(matrix_long, matrix, equal_nan=True)


TENTHS = (
    "question_id,m1,m2,m3\n"
    "q1,0.5,1,\n"      # the first blocks are halves: n = 2
    "q2,0,,0.5\n"
    "q3,0.1,0.3,1\n"   # then tenths: n = lcm(2, 10) = 10
    "q4,,0.7,0.9\n"
    "q5,0.25,1,0\n"    # and a quarter: n = lcm(10, 4) = 20
    "q6,0.05,,1\n"
)


@pytest.mark.django_db
def test_fraction_blocks_wait_on_disk_as_numerators_and_load_bit_for_bit(tmp_path, monkeypatch):
    import pickle

    from annotate.catalog.loaders.dense import BINARY
    monkeypatch.setattr(wide_stream, "CHUNK_CELLS", 8)  # 2 rows per block (4 columns)
    path = tmp_path / "tenths.csv"
    path.write_text(TENTHS, encoding="utf-8")
    parsed = _parse(path, whole=False, monkeypatch=monkeypatch)
    cells = parsed.cells
    on_disk = [np.load(p) for _, _, p, _, _ in cells._blocks]
    assert [b.dtype for b in on_disk] == [BINARY] * 3  # one byte a cell, not float64
    assert [d for *_, d in cells._blocks] == [2, 10, 20]  # each block's own denominator
    assert cells.denominator == 20
    copy = pickle.loads(pickle.dumps(cells))  # a parse kept between preview and confirm
    for (s1, c1, o1), (s2, c2, o2) in zip(cells.blocks(), copy.blocks(), strict=True):
        assert s1 == s2 and np.array_equal(o1, o2) and c1.tobytes() == c2.tobytes()
    loaded = response_set_load(parsed=parsed, name="tenths")
    info = matrix_store.store_info(matrix_store.store_path(loaded))
    assert (info["credit_dtype"], info["credit_denominator"]) == ("uint8", 20)
    nan = np.nan
    expected = np.array([[0.5, 1, nan], [0, nan, 0.5], [0.1, 0.3, 1], [nan, 0.7, 0.9], [0.25, 1, 0], [0.05, nan, 1]])
    _, _, matrix = _stored(loaded)
    observed = ~np.isnan(expected)
    assert np.array_equal(np.isnan(matrix), ~observed)
    assert matrix[observed].tobytes() == expected[observed].tobytes()  # parsed "0.1" etc. back bit for bit


OPTION_CELLS = ['["a", "b"]', '["a","b"]', '[ "x" ]', '["caf\u00e9"]', '["caf\\u00e9"]', '["q\\"uote", "b\\\\s"]',
                '["a\\nb"]', "[]", "", '["", ""]', '["a\\u007fb"]', '["{0}", "<&>"]', '[1, null, "x"]']


@pytest.mark.django_db
def test_options_and_metadata_are_stored_as_json_dumps_writes_them_whether_a_cell_is_kept_as_read_or_not(tmp_path):
    import csv
    import json

    from django.db import connection

    from annotate.catalog.loaders.base import OPTIONS_TEXT
    from annotate.models import Question
    ids = [f"q{k}" for k in range(len(OPTION_CELLS))]
    with (tmp_path / "questions.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "question", "options_json", "src", "level"])
        for k, (question_id, cell) in enumerate(zip(ids, OPTION_CELLS)):
            writer.writerow([question_id, f"text {k}", cell, f"s\u00e9{k % 3}", "" if k % 2 else 'l"v'])
    (tmp_path / "wide.csv").write_text("question_id,m1\n" + "".join(f"{q},{k % 2}\n" for k, q in enumerate(ids)),
                                       encoding="utf-8")
    parsed = parse_wide(tmp_path / "wide.csv", dataset="opts", questions=tmp_path / "questions.csv",
                        keep_columns=["src", "level"])
    kept = parsed.questions[OPTIONS_TEXT].tolist()
    assert kept == [cell.strip() for cell in OPTION_CELLS]  # every cell decoded, each kept as read
    expected = {row.external_id: (json.dumps(row.options), json.dumps(row.metadata))
                for row in parsed.questions.itertuples(index=False)}
    response_set_load(parsed=parsed, name="opts")
    stored = {q.external_id: (q.options, q.metadata) for q in Question.objects.filter(dataset__name="opts")}
    assert {k: (json.loads(o), json.loads(m)) for k, (o, m) in expected.items()} == stored
    if connection.vendor == "sqlite":  # the stored text itself (PostgreSQL's jsonb keeps no text)
        with connection.cursor() as cursor:
            cursor.execute("SELECT external_id, options, metadata FROM annotate_question")
            assert {k: (o, m) for k, o, m in cursor.fetchall()} == expected
