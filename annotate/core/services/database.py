"""PostgreSQL housekeeping around loads and runs; every function is a no-op elsewhere.

- :func:`load_lock`: one transaction-level advisory lock taken by every load,
  so simultaneous uploads that create the same dataset, subject, question or
  model names are serialised (the second one checks again against what the
  first created, and reuses it or refuses clearly) instead of failing on a
  unique index with an IntegrityError.
- :func:`responses_analyze`: ``ANALYZE`` of the membership tables (which
  question is which row, which model which column of a response set's
  matrix) after a load, so the planner does not plan over a million new rows
  with the statistics of an empty table.
- :func:`pairs_analyze`: ``ANALYZE`` of the pairs table after a study's pairs
  are written, so the judging queries (by study and position) use the index
  on them instead of a plan made for a study of a few hundred pairs.
- :func:`sort_keys_analyze`: ``ANALYZE`` of the question list's sort keys
  after a run is stored, so its first page is planned as the index range it
  is, not with the statistics of a table a million rows smaller.
- :func:`rows_insert`: many rows into one table without building model
  instances (``COPY`` on PostgreSQL, multi-row ``INSERT`` statements
  elsewhere), for the million-row writes of loads and scoring runs.
- :func:`backend_pid` / :func:`backend_cancel`: the server process serving
  this connection, recorded on a run when it starts, and the cancellation of
  a dead worker's still-running query when its run is reaped.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import partial
from itertools import chain, islice

from django.db import connection, models

from annotate.models import Pair, QuestionSortKey, ResponseSetModel, ResponseSetQuestion

#: The advisory-lock key of loads (any fixed 64-bit number; "EIPLOAD" in ASCII).
LOAD_LOCK_KEY = 0x4549504C4F4144
#: Rows per ``INSERT`` statement of :func:`rows_insert` outside PostgreSQL (fewer when the
#: database's limit on bound parameters allows fewer).
ROWS_PER_STATEMENT = 500
#: SQLite's default limit on the parameters of one statement: 32,766 since SQLite 3.32, 999 before.
SQLITE_MAX_PARAMS = 32_766 if sqlite3.sqlite_version_info >= (3, 32) else 999


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def load_lock() -> None:
    """Wait for, then hold until the end of the current transaction, the load lock (PostgreSQL)."""
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOAD_LOCK_KEY])


def responses_analyze() -> None:
    """Refresh the planner statistics of the membership tables (PostgreSQL ``ANALYZE``)."""
    if _postgres():
        with connection.cursor() as cursor:
            for model in (ResponseSetQuestion, ResponseSetModel):
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def pairs_analyze() -> None:
    """Refresh the planner statistics of the pairs table (PostgreSQL ``ANALYZE``)."""
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(Pair._meta.db_table)}")


def sort_keys_analyze() -> None:
    """Refresh the planner statistics of the sort-key table (PostgreSQL ``ANALYZE``)."""
    if _postgres():
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(QuestionSortKey._meta.db_table)}")


def backend_pid() -> int | None:
    """The PostgreSQL backend pid of this connection; None on other databases."""
    if not _postgres():
        return None
    connection.ensure_connection()
    return int(connection.connection.info.backend_pid)


def backend_cancel(*, pid: int, started_before: datetime) -> bool:
    """Cancel the running query of backend ``pid`` (``pg_cancel_backend``), if it is still the same process.

    Parameters
    ----------
    pid : int
        The pid recorded when the run started.
    started_before : datetime
        The run's last sign of life: a backend started later is another
        connection that reused the pid, and is left alone.

    Returns
    -------
    bool
        True when a query was cancelled; False on other databases, for this
        connection's own pid, or when no such backend is left.
    """
    if not _postgres() or pid == backend_pid():
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_cancel_backend(pid) FROM pg_stat_activity "
            "WHERE pid = %s AND backend_start <= %s AND state <> 'idle'",
            [pid, started_before],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def rows_insert(*, model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[object]] = (),
                columns: Sequence[Sequence[object]] | None = None) -> None:
    """Insert ``rows`` (one value per name in ``fields``, in that order) into ``model``'s table.

    PostgreSQL: one ``COPY ... FROM STDIN`` (psycopg 3); elsewhere multi-row
    ``INSERT ... VALUES (...), (...)`` statements of :func:`rows_per_statement`
    rows each. No model instance is built, no default is filled in and no id
    is returned: every column without a database default must be given,
    foreign keys as ids, JSON fields as JSON text (``json.dumps`` of the
    value, which is what ``JSONField`` writes). Through ``bulk_create`` a
    million rows cost minutes of per-object preparation (and SQLite batches
    of a few hundred rows); PostgreSQL's ``executemany`` about 150 s per
    million, ``COPY`` 2.2 s per 100,000. ``rows`` may be an iterator (for
    example ``zip`` of column lists); it is read once.

    ``columns`` (instead of ``rows``): one list (or range) of Python values
    per name in ``fields``, all of the same length, row ``i`` being the
    ``i``-th value of each. The
    same rows are inserted; outside PostgreSQL each statement's values are
    interleaved from slices of the columns, so no tuple per row is built.

    Raises
    ------
    django.db.IntegrityError
        As the database raises it (e.g. a unique constraint); inside the
        caller's transaction, which then rolls back whole.
    ValueError
        If ``columns`` does not hold one sequence per field, all of one length.
    """
    if columns is not None:
        n_rows = len(columns[0]) if len(columns) else 0
        if len(columns) != len(fields) or any(len(column) != n_rows for column in columns):
            raise ValueError(f"columns must be {len(fields)} sequences of one length, one per field")
    meta = model._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    names = ", ".join(quote(meta.get_field(name).column) for name in fields)
    with connection.cursor() as cursor, connection.wrap_database_errors:
        raw = cursor.cursor
        if _postgres() and hasattr(raw, "copy"):
            with raw.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in (rows if columns is None else zip(*columns)):
                    copy.write_row(row)
            return
        # The driver's cursor: Django's wrapper would, under DEBUG, keep each long statement's text
        # with every value quoted. Errors still come out as Django's (wrap_database_errors).
        execute, mark = raw.execute, "%s"
        if isinstance(raw, sqlite3.Cursor):
            # SQLite's own execute with its own "?" marks: Django's cursor would rewrite every "%s" of
            # each (long) statement to "?" with a regular expression, statement after statement.
            execute, mark = partial(sqlite3.Cursor.execute, raw), "?"
        row_marks = "(" + ", ".join([mark] * len(fields)) + ")"
        per_statement = rows_per_statement(n_fields=len(fields))
        full = f"INSERT INTO {table} ({names}) VALUES " + ", ".join([row_marks] * per_statement)

        def statement(n: int) -> str:
            return full if n == per_statement else (
                f"INSERT INTO {table} ({names}) VALUES " + ", ".join([row_marks] * n))

        if columns is not None:
            n_fields = len(fields)
            for start in range(0, n_rows, per_statement):
                n = min(per_statement, n_rows - start)
                values: list[object] = [None] * (n * n_fields)
                for k, column in enumerate(columns):
                    values[k::n_fields] = column[start:start + n]
                execute(statement(n), values)
            return
        iterator = iter(rows)
        while True:
            chunk = list(islice(iterator, per_statement))
            if not chunk:
                return
            execute(statement(len(chunk)), list(chain.from_iterable(chunk)))


def rows_per_statement(*, n_fields: int) -> int:
    """Rows in one ``INSERT`` statement of :func:`rows_insert` outside PostgreSQL.

    ``min(ROWS_PER_STATEMENT, max_params // n_fields)``, at least 1, where
    ``max_params`` is the connection's limit on bound parameters (SQLite's
    ``SQLITE_LIMIT_VARIABLE_NUMBER`` as the open connection reports it, else
    ``SQLITE_MAX_PARAMS``; Django's ``max_query_params`` on other databases).

    Parameters
    ----------
    n_fields : int
        Values per row (at least 1).

    Returns
    -------
    int
    """
    return max(1, min(ROWS_PER_STATEMENT, _max_params() // n_fields))


def _max_params() -> int:
    if connection.vendor != "sqlite":
        return int(connection.features.max_query_params or SQLITE_MAX_PARAMS)
    connection.ensure_connection()
    getlimit = getattr(connection.connection, "getlimit", None)
    if getlimit is None:  # Python before 3.11
        return SQLITE_MAX_PARAMS
    return int(getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
