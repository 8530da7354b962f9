"""PreparedQuery: a read compiled once per connection gives what its queryset gives.

Cast: ``ada`` and ``ben`` judge one study; ``cy`` has no participation.
"""
from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections
from django.db.models import Count, Exists, OuterRef
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.core import PreparedQuery
from annotate.core.prepared import ERR_DATETIME_PARAM, ERR_NOT_DATETIME, ERR_NOT_INT, ERR_UNMARKED
from annotate.models import Assignment, Judgment, Pair, Participation, Study
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db


def _participation(study_id, user_id):
    return (Participation.objects.select_related("study", "study__stopping_rules")
            .filter(study_id=study_id, user_id=user_id).order_by("pk"))


def _pairs_with_counts(study_id, mine):
    decided = Judgment.objects.filter(participation_id=mine, pair_id=OuterRef("pk"))
    return (Pair.objects.filter(study_id=study_id).annotate(decided=Exists(decided), n_judged=Count("judgments"))
            .order_by("position"))


PARTICIPATION = PreparedQuery("test participation", _participation, "study_id", "user_id")
PAIRS = PreparedQuery("test pairs", _pairs_with_counts, "study_id", "mine")
PAIR_ROWS = PreparedQuery(
    "test pair rows",
    lambda study_id: Pair.objects.filter(study_id=study_id).order_by("position")
    .values_list("pk", "position", "question_a_id", "attention_check"),
    "study_id",
)


@pytest.fixture
def cast():
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=6), n_pairs=6, seed=3)
    ada, ben = make_evaluator(study, "ada"), make_evaluator(study, "ben")
    judge(ada, ["left", "skip", "right"])
    judge(ben, ["right"])
    return study, ada, ben


def test_rows_are_the_querysets_rows_for_each_set_of_values(cast):
    study, _ada, _ben = cast
    assert PAIR_ROWS.rows(study_id=study.pk) == list(
        Pair.objects.filter(study_id=study.pk).order_by("position")
        .values_list("pk", "position", "question_a_id", "attention_check"))
    assert len(PAIR_ROWS.rows(study_id=study.pk)) == 6
    assert PAIR_ROWS.rows(study_id=study.pk + 1000) == []


def test_objects_carry_the_related_rows_and_annotations_the_queryset_gives(cast):
    study, ada, ben = cast
    for participation in (ada, ben):
        got = PARTICIPATION.objects(study_id=study.pk, user_id=participation.user_id)
        want = list(_participation(study.pk, participation.user_id))
        assert [p.pk for p in got] == [p.pk for p in want] == [participation.pk]
        assert got[0].study.name == study.name
        assert got[0].seed == participation.seed
        with CaptureQueriesContext(connection) as reads:  # the study and its (missing) rules came with the row
            assert got[0].study.status == want[0].study.status
            assert Study.stopping_rules.is_cached(got[0].study)
        assert len(reads.captured_queries) == 0
    rows = PAIRS.objects(study_id=study.pk, mine=ada.pk)
    want = list(_pairs_with_counts(study.pk, ada.pk))
    assert [(p.pk, p.decided, p.n_judged) for p in rows] == [(p.pk, p.decided, p.n_judged) for p in want]
    decided = set(Judgment.objects.filter(participation=ada).values_list("pair_id", flat=True))
    assert {p.pk for p in rows if p.decided} == decided and len(decided) == 3


def test_the_sql_is_compiled_once_per_connection(cast):
    _study, ada, _ben = cast
    built = []
    query = PreparedQuery("counted", lambda mine: built.append(mine) or Assignment.objects.filter(
        participation_id=mine).values_list("pair_id"), "mine")
    first = query.rows(mine=ada.pk)
    second = query.rows(mine=ada.pk)
    assert first == second and len(first) == 3
    assert len(built) == 1


@pytest.mark.django_db(transaction=True)
def test_the_compiled_sql_outlives_the_database_session_but_not_the_thread(cast):
    _study, ada, _ben = cast
    built = []
    query = PreparedQuery("counted", lambda mine: built.append(mine) or Assignment.objects.filter(
        participation_id=mine).values_list("pair_id"), "mine")
    first = query.rows(mine=ada.pk)
    connection.close()  # what the end of a request does with CONN_MAX_AGE = 0
    assert connection.connection is None or connection.is_in_memory_db()  # SQLite keeps an in-memory database open
    assert query.rows(mine=ada.pk) == first  # a new database session of the same connection object
    assert len(built) == 1
    in_thread = []

    def other_thread():
        try:
            in_thread.append(query.rows(mine=ada.pk))
        finally:
            connections.close_all()

    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join(timeout=60)
    assert in_thread == [first] and len(built) == 2  # another thread, another connection object


def test_values_must_be_the_declared_integers(cast):
    study, _ada, _ben = cast
    with pytest.raises(TypeError, match="takes"):
        PAIR_ROWS.rows(study=study.pk)
    with pytest.raises(TypeError) as error:
        PAIR_ROWS.rows(study_id=str(study.pk))
    assert str(error.value) == ERR_NOT_INT.format(name="test pair rows", param="study_id", value=str(study.pk))


SHOWN_SINCE = PreparedQuery(
    "test assignments shown since",
    lambda mine, since: Assignment.objects.filter(participation_id=mine, shown_at__gte=since).order_by("pk")
    .values_list("pk"),
    "mine", "since", datetimes=("since",),
)


def test_a_datetime_parameter_gives_what_the_queryset_gives_at_each_moment(cast):
    _study, ada, _ben = cast
    shown = list(Assignment.objects.filter(participation=ada).order_by("pk"))
    assert len(shown) == 3
    base = timezone.now()
    for k, assignment in enumerate(shown):  # an hour apart, the first three hours ago
        assignment.shown_at = base - timedelta(hours=3 - k)
        assignment.save(update_fields=["shown_at"])
    # Each cut-off, in UTC and in another zone (the same moment), at and just after a row's moment.
    for since in (base - timedelta(hours=4), base - timedelta(hours=2), base - timedelta(hours=2, microseconds=-1),
                  (base - timedelta(hours=1)).astimezone(timezone.get_fixed_timezone(-300)), base):
        expected = list(Assignment.objects.filter(participation=ada, shown_at__gte=since).order_by("pk")
                        .values_list("pk"))
        assert SHOWN_SINCE.rows(mine=ada.pk, since=since) == expected
    assert [len(SHOWN_SINCE.rows(mine=ada.pk, since=base - timedelta(hours=h))) for h in (4, 2, 0)] == [3, 2, 0]


def test_a_datetime_parameter_must_be_an_aware_datetime(cast):
    _study, ada, _ben = cast
    for value in (datetime(2026, 1, 1), "2026-01-01 00:00:00", 1_700_000_000):
        with pytest.raises(TypeError) as error:
            SHOWN_SINCE.rows(mine=ada.pk, since=value)
        assert str(error.value) == ERR_NOT_DATETIME.format(name="test assignments shown since", param="since",
                                                           value=value)
    assert SHOWN_SINCE.rows(mine=ada.pk, since=datetime(2999, 1, 1, tzinfo=UTC)) == []


def test_a_datetime_parameter_must_be_one_of_the_parameters():
    with pytest.raises(ValueError) as error:
        PreparedQuery("typo", lambda mine: Assignment.objects.filter(participation_id=mine), "mine",
                      datetimes=("since",))
    assert str(error.value) == ERR_DATETIME_PARAM.format(name="typo", param="since", params=["mine"])


def test_a_parameter_that_does_not_reach_the_sql_is_refused():
    query = PreparedQuery("unused", lambda study_id, other: Pair.objects.filter(study_id=study_id), "study_id",
                          "other")
    with pytest.raises(ValueError) as error:
        query.rows(study_id=1, other=2)
    assert str(error.value) == ERR_UNMARKED.format(name="unused", param="other")


def _prepared_statements() -> list[str]:
    """The statements the database keeps prepared for this session (PostgreSQL), other than SQL ``PREPARE``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        return [statement for (statement,) in cursor.fetchall()]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements of PostgreSQL")
def test_on_postgresql_the_database_keeps_the_statement_prepared(cast):
    study, _ada, _ben = cast
    query = PreparedQuery("prepared", lambda study_id: Pair.objects.filter(study_id=study_id, position__gte=4)
                          .order_by("position").values_list("position"), "study_id")
    assert [s for s in _prepared_statements() if "position\" >= " in s] == []
    assert query.rows(study_id=study.pk) == [(4,), (5,)]
    assert query.rows(study_id=study.pk + 1000) == []
    prepared = [s for s in _prepared_statements() if "position\" >= " in s]
    assert len(prepared) == 1 and "$1" in prepared[0]  # once, with its values bound on the server


def test_the_query_log_shows_the_statement_with_its_values(cast):
    study, _ada, _ben = cast
    for _ in range(2):  # prepared on PostgreSQL by the first run, executed as prepared by the second
        with CaptureQueriesContext(connection) as logged:
            assert len(PAIR_ROWS.rows(study_id=study.pk)) == 6
        (sql,) = [q["sql"] for q in logged.captured_queries]
        assert sql.startswith("SELECT ") and f"= {study.pk}" in sql and "$1" not in sql and "%s" not in sql
