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
  instances (``COPY`` on PostgreSQL, one ``executemany`` elsewhere), for the
  million-row writes of loads and scoring runs.
- :func:`backend_pid` / :func:`backend_cancel`: the server process serving
  this connection, recorded on a run when it starts, and the cancellation of
  a dead worker's still-running query when its run is reaped.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import connection, models

from annotate.models import Pair, QuestionSortKey, ResponseSetModel, ResponseSetQuestion

#: The advisory-lock key of loads (any fixed 64-bit number; "EIPLOAD" in ASCII).
LOAD_LOCK_KEY = 0x4549504C4F4144


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


def rows_insert(*, model: type[models.Model], fields: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Insert ``rows`` (one value per name in ``fields``, in that order) into ``model``'s table.

    PostgreSQL: one ``COPY ... FROM STDIN`` (psycopg 3); elsewhere one
    ``executemany``. No model instance is built, no default is filled in and
    no id is returned: every column without a database default must be
    given, foreign keys as ids, JSON fields as JSON text (``json.dumps`` of
    the value, which is what ``JSONField`` writes). Through ``bulk_create``
    a million rows cost minutes of per-object preparation (and SQLite
    batches of a few hundred rows); PostgreSQL's ``executemany`` about 150 s
    per million, ``COPY`` 2.2 s per 100,000.

    Raises
    ------
    django.db.IntegrityError
        As the database raises it (e.g. a unique constraint); inside the
        caller's transaction, which then rolls back whole.
    """
    meta = model._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    columns = ", ".join(quote(meta.get_field(name).column) for name in fields)
    with connection.cursor() as cursor:
        raw = cursor.cursor
        if _postgres() and hasattr(raw, "copy"):
            with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        placeholders = ", ".join(["%s"] * len(fields))
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({placeholders})", rows)
