"""rows_insert: many rows into one table (COPY on PostgreSQL, multi-row INSERT statements
elsewhere), every row once, with the exact values, or nothing inside a failed transaction.

The rows are language models (a text key, a nullable float, a JSON text column).
"""
from __future__ import annotations

import sqlite3

import pytest
from django.db import IntegrityError, connection, transaction

from annotate.core.services import database
from annotate.core.services.database import ROWS_PER_STATEMENT, rows_insert, rows_per_statement
from annotate.models import LanguageModel

pytestmark = pytest.mark.django_db

FIELDS = ("name", "family", "parameters_b", "access", "metadata")
on_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's parameter limit and statement trace")


def _row(i: int) -> tuple:
    return (f"model-{i:05d}", "fam" if i % 2 else "", None if i % 3 == 0 else i + 0.25, "unknown",
            "{}" if i % 4 else f'{{"i": {i}}}')


def _stored() -> list[tuple]:
    return list(LanguageModel.objects.order_by("name").values_list(*FIELDS))


def _expected(n: int) -> list[tuple]:
    return [(f"model-{i:05d}", "fam" if i % 2 else "", None if i % 3 == 0 else i + 0.25, "unknown",
             {} if i % 4 else {"i": i}) for i in range(n)]


@pytest.fixture
def inserts():
    """The row count of each INSERT statement run on the SQLite connection meanwhile (the trace
    shows each statement with its values bound; every row of these tests has access 'unknown')."""
    counts: list[int] = []
    connection.ensure_connection()

    def trace(statement: str) -> None:
        if statement.startswith("INSERT INTO"):
            counts.append(statement.count("'unknown'"))

    connection.connection.set_trace_callback(trace)
    yield counts
    connection.connection.set_trace_callback(None)


@pytest.fixture
def variable_limit():
    """Set SQLite's limit on bound parameters for one test (restored after)."""
    connection.ensure_connection()
    raw = connection.connection
    before = raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    yield lambda limit: raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)
    raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, before)


@pytest.mark.parametrize("n", [1, ROWS_PER_STATEMENT - 1, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 1,
                               2 * ROWS_PER_STATEMENT + 7])
def test_every_row_is_stored_once_with_its_exact_values(n):
    rows_insert(model=LanguageModel, fields=FIELDS, rows=[_row(i) for i in range(n)])
    assert _stored() == _expected(n)


def test_rows_may_be_an_iterator_of_columns_zipped_and_none_is_null():
    names = [f"model-{i:05d}" for i in range(ROWS_PER_STATEMENT + 3)]
    sizes = [None if i % 3 == 0 else i + 0.25 for i in range(len(names))]
    rows_insert(model=LanguageModel, fields=FIELDS,
                rows=zip(names, ["fam" if i % 2 else "" for i in range(len(names))], sizes,
                         ["unknown"] * len(names), ["{}" if i % 4 else f'{{"i": {i}}}' for i in range(len(names))]))
    assert _stored() == _expected(len(names))
    assert LanguageModel.objects.filter(parameters_b__isnull=True).count() == len(range(0, len(names), 3))


@pytest.mark.parametrize("n", [0, 1, ROWS_PER_STATEMENT, 2 * ROWS_PER_STATEMENT + 7])
def test_columns_store_the_same_rows_as_rows(n):
    rows = [_row(i) for i in range(n)]
    columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in FIELDS]
    rows_insert(model=LanguageModel, fields=FIELDS, columns=columns)
    assert _stored() == _expected(n)


def test_columns_may_be_ranges_and_repeated_values():
    n = ROWS_PER_STATEMENT + 3
    rows_insert(model=LanguageModel, fields=("name", "family", "parameters_b", "access", "metadata"),
                columns=([f"model-{i:05d}" for i in range(n)], ["fam"] * n, range(1, n + 1), ["unknown"] * n,
                         ["{}"] * n))
    stored = list(LanguageModel.objects.order_by("name").values_list("name", "parameters_b"))
    assert stored == [(f"model-{i:05d}", float(i + 1)) for i in range(n)]


@pytest.mark.parametrize("columns", [
    (["a", "b"], ["", ""], [None, None], ["unknown", "unknown"]),  # one column short
    (["a", "b"], [""], [None, None], ["unknown", "unknown"], ["{}", "{}"]),  # one column shorter
])
def test_columns_of_another_count_or_length_are_refused_and_insert_nothing(columns):
    with pytest.raises(ValueError, match="5 sequences of one length"):
        rows_insert(model=LanguageModel, fields=FIELDS, columns=columns)
    assert LanguageModel.objects.count() == 0


def test_no_rows_insert_nothing():
    rows_insert(model=LanguageModel, fields=FIELDS, rows=iter([]))
    assert LanguageModel.objects.count() == 0


def test_text_with_quotes_percent_signs_and_non_ascii_is_stored_as_given():
    names = ["it's", 'say "hi"', "100% sure", "%s and %%s", "é (composed)", "e\u0301 (decomposed)", "𝔁 astral",
             "tab\there", "line\nbreak", "semi; DROP TABLE x; --", "  padded  "]
    rows_insert(model=LanguageModel, fields=("name", "family", "parameters_b", "access", "metadata"),
                rows=[(name, "", None, "unknown", "{}") for name in names])
    assert sorted(LanguageModel.objects.values_list("name", flat=True)) == sorted(names)


@on_sqlite
def test_rows_go_in_statements_of_rows_per_statement_rows(inserts):
    n = 2 * ROWS_PER_STATEMENT + 7
    rows_insert(model=LanguageModel, fields=FIELDS, rows=[_row(i) for i in range(n)])
    assert inserts == [ROWS_PER_STATEMENT, ROWS_PER_STATEMENT, 7]
    assert LanguageModel.objects.count() == n


def test_rows_per_statement_is_500_for_a_few_fields():
    assert rows_per_statement(n_fields=3) == 500


@on_sqlite
def test_rows_per_statement_follows_the_connections_parameter_limit(variable_limit):
    variable_limit(32_766)  # SQLite's default since 3.32 (builds may raise it)
    assert rows_per_statement(n_fields=65) == 500  # 65 * 500 = 32,500 <= 32,766
    assert rows_per_statement(n_fields=66) == 496  # 32,766 // 66
    variable_limit(999)  # the default before 3.32
    assert rows_per_statement(n_fields=2) == 499


@pytest.mark.skipif(connection.vendor == "sqlite", reason="the limit Django states for other databases")
def test_without_a_stated_limit_the_sqlite_default_is_assumed():
    assert connection.features.max_query_params is None
    assert rows_per_statement(n_fields=66) == 32_766 // 66


@on_sqlite
def test_a_lower_parameter_limit_fills_each_statement_up_to_it(inserts, variable_limit):
    variable_limit(10)  # 5 fields: 2 rows use exactly the 10 parameters allowed
    assert rows_per_statement(n_fields=len(FIELDS)) == 2
    assert rows_per_statement(n_fields=11) == 1  # never fewer than one row
    rows_insert(model=LanguageModel, fields=FIELDS, rows=[_row(i) for i in range(5)])
    assert inserts == [2, 2, 1]
    assert _stored() == _expected(5)


@on_sqlite
def test_one_parameter_under_a_full_statement_gives_one_row_less(inserts, variable_limit):
    variable_limit(9)
    rows_insert(model=LanguageModel, fields=FIELDS, rows=[_row(i) for i in range(3)])
    assert inserts == [1, 1, 1]
    assert _stored() == _expected(3)


def test_the_sqlite_default_limit_follows_the_library_version():
    expected = 32_766 if sqlite3.sqlite_version_info >= (3, 32) else 999
    assert expected == database.SQLITE_MAX_PARAMS


@pytest.mark.parametrize("clash_at", [1, ROWS_PER_STATEMENT, ROWS_PER_STATEMENT + 5])
def test_a_failing_row_leaves_nothing_inserted_inside_a_transaction(clash_at):
    rows = [_row(i) for i in range(ROWS_PER_STATEMENT + 10)]
    rows[clash_at] = (rows[0][0], *rows[clash_at][1:])  # the name of row 0 again: unique constraint
    with pytest.raises(IntegrityError), transaction.atomic():
        rows_insert(model=LanguageModel, fields=FIELDS, rows=rows)
    assert LanguageModel.objects.count() == 0
    rows_insert(model=LanguageModel, fields=FIELDS, rows=[_row(0)])  # the connection is usable afterwards
    assert _stored() == _expected(1)


@on_sqlite
def test_sqlite_statements_go_to_the_driver_without_djangos_mark_rewriting(monkeypatch):
    from django.db.backends.sqlite3.base import SQLiteCursorWrapper

    def refuse(self, query, **kwargs):  # a regular expression over each whole statement: never for these
        raise AssertionError("convert_query called for a rows_insert statement")

    with monkeypatch.context() as patch:
        patch.setattr(SQLiteCursorWrapper, "convert_query", refuse)
        rows_insert(model=LanguageModel, fields=FIELDS, rows=[_row(i) for i in range(ROWS_PER_STATEMENT + 3)])
        rows_insert(model=LanguageModel, fields=FIELDS, columns=[list(c) for c in zip(*[_row(i) for i in range(
            ROWS_PER_STATEMENT + 3, ROWS_PER_STATEMENT + 9)])])
    assert _stored() == _expected(ROWS_PER_STATEMENT + 9)
