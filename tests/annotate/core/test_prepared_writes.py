"""PreparedInsert and PreparedUpdate: writes compiled once per connection store
what ``objects.create`` and ``queryset.update`` store.

Cast: ``ada`` judges one study; ``ben`` has the same pairs on screen.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from annotate.core import PreparedInsert, PreparedUpdate
from annotate.core.prepared import ERR_AUTO_KEY
from annotate.models import Assignment, Judgment, Pair, Participation
from tests.annotate.factories import make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db

JUDGMENT_INSERT = PreparedInsert(Judgment)
ASSIGNMENT_INSERT = PreparedInsert(Assignment, skip_conflicts_on=("participation", "pair"))
VOTE_ADD = PreparedUpdate("test vote", lambda pair_id: (Pair.objects.filter(pk=pair_id),
                                                        {"n_votes": F("n_votes") + 1}), "pair_id")
CURSOR_SET = PreparedUpdate("test cursor", lambda participation_id, cursor: (
    Participation.objects.filter(pk=participation_id), {"order_cursor": cursor}), "participation_id", "cursor")
SHOWN = datetime(2026, 3, 1, 12, 30, 15, 250_000, tzinfo=UTC)


@pytest.fixture
def cast():
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=6), n_pairs=6, seed=3)
    pairs = list(Pair.objects.filter(study=study).order_by("position"))
    return study, make_evaluator(study, "ada"), make_evaluator(study, "ben"), pairs


def _judgment(participation, pair, *, harder=True, client_seconds=None):
    return Judgment(participation=participation, pair=pair, choice="left" if harder else "skip",
                    left_question_id=pair.question_a_id, harder_question_id=pair.question_a_id if harder else None,
                    shown_at=SHOWN, submitted_at=SHOWN + timedelta(seconds=7.5), seconds=7.5,
                    client_seconds=client_seconds)


def _stored(judgment_id):
    return Judgment.objects.filter(pk=judgment_id).values(
        "participation_id", "pair_id", "choice", "left_question_id", "harder_question_id", "shown_at",
        "submitted_at", "seconds", "client_seconds").get()


def test_an_inserted_row_reads_back_as_the_orms_insert_of_the_same_values(cast):
    _study, ada, ben, pairs = cast
    for harder, client_seconds in ((True, 6.25), (False, None)):
        mine = _judgment(ada, pairs[0 if harder else 1], harder=harder, client_seconds=client_seconds)
        assert JUDGMENT_INSERT.insert(mine) is True
        assert mine.pk is not None and not mine._state.adding and mine._state.db == "default"
        theirs = Judgment.objects.create(participation=ben, pair=mine.pair, choice=mine.choice,
                                         left_question_id=mine.left_question_id,
                                         harder_question_id=mine.harder_question_id, shown_at=SHOWN,
                                         submitted_at=SHOWN + timedelta(seconds=7.5), seconds=7.5,
                                         client_seconds=client_seconds)
        got, want = _stored(mine.pk), _stored(theirs.pk)
        assert got.pop("participation_id") == ada.pk and want.pop("participation_id") == ben.pk
        assert got == want
        assert got["shown_at"] == SHOWN and got["client_seconds"] == client_seconds


def test_a_second_judgment_of_a_pair_fails_on_the_constraint_and_keeps_nothing(cast):
    _study, ada, _ben, pairs = cast
    assert JUDGMENT_INSERT.insert(_judgment(ada, pairs[0]))
    with pytest.raises(IntegrityError), transaction.atomic():
        JUDGMENT_INSERT.insert(_judgment(ada, pairs[0], harder=False))
    assert list(Judgment.objects.filter(participation=ada).values_list("pair_id", "choice")) == [
        (pairs[0].pk, "left")]


def test_a_conflict_on_the_named_constraint_is_skipped_and_leaves_the_first_row(cast):
    _study, ada, ben, pairs = cast
    first = Assignment(participation=ada, pair=pairs[0], left_question_id=pairs[0].question_a_id, shown_at=SHOWN)
    again = Assignment(participation=ada, pair=pairs[0], left_question_id=pairs[0].question_b_id,
                       shown_at=SHOWN + timedelta(hours=1))
    other = Assignment(participation=ben, pair=pairs[0], left_question_id=pairs[0].question_b_id, shown_at=SHOWN)
    assert ASSIGNMENT_INSERT.insert(first) is True
    with transaction.atomic():  # the skipped row does not break the transaction it is in
        assert ASSIGNMENT_INSERT.insert(again) is False
        assert ASSIGNMENT_INSERT.insert(other) is True
    assert again.pk is None and again._state.adding
    stored = {a.pk: (a.participation_id, a.left_question_id, a.shown_at) for a in Assignment.objects.all()}
    assert stored == {first.pk: (ada.pk, pairs[0].question_a_id, SHOWN),
                      other.pk: (ben.pk, pairs[0].question_b_id, SHOWN)}


def test_updates_change_the_rows_the_queryset_names_and_count_them(cast):
    _study, ada, ben, pairs = cast
    before = dict(Pair.objects.values_list("pk", "n_votes"))
    assert VOTE_ADD.run(pair_id=pairs[2].pk) == 1
    assert VOTE_ADD.run(pair_id=pairs[2].pk) == 1
    assert VOTE_ADD.run(pair_id=max(before) + 1000) == 0
    after = dict(Pair.objects.values_list("pk", "n_votes"))
    assert after == {**before, pairs[2].pk: before[pairs[2].pk] + 2}
    assert CURSOR_SET.run(participation_id=ada.pk, cursor=17) == 1
    assert dict(Participation.objects.filter(pk__in=[ada.pk, ben.pk]).values_list("pk", "order_cursor")) == {
        ada.pk: 17, ben.pk: ben.order_cursor}


def test_the_update_is_built_once_per_connection(cast):
    _study, ada, _ben, _pairs = cast
    built = []
    update = PreparedUpdate("counted", lambda participation_id, cursor: built.append(cursor) or (
        Participation.objects.filter(pk=participation_id), {"order_cursor": cursor}), "participation_id", "cursor")
    for cursor in (3, 4, 5):
        update.run(participation_id=ada.pk, cursor=cursor)
    assert Participation.objects.get(pk=ada.pk).order_cursor == 5
    assert len(built) == 1


def test_a_model_whose_key_the_database_does_not_make_is_refused():
    from django.contrib.sessions.models import Session

    with pytest.raises(ValueError) as error:
        PreparedInsert(Session)
    assert str(error.value) == ERR_AUTO_KEY.format(model="sessions.Session")


def test_an_update_after_the_insert_runs_once_with_it_or_after_its_skipped_conflict(cast):
    _study, ada, _ben, pairs = cast
    with CaptureQueriesContext(connection) as sent:
        assert JUDGMENT_INSERT.insert(_judgment(ada, pairs[0]), then=(VOTE_ADD, {"pair_id": pairs[0].pk})) is True
    assert len(sent.captured_queries) == (1 if connection.vendor == "postgresql" else 2)  # one statement there
    assert Pair.objects.get(pk=pairs[0].pk).n_votes == pairs[0].n_votes + 1
    assert Judgment.objects.filter(participation=ada, pair=pairs[0]).count() == 1
    first = Assignment(participation=ada, pair=pairs[1], left_question_id=pairs[1].question_a_id, shown_at=SHOWN)
    again = Assignment(participation=ada, pair=pairs[1], left_question_id=pairs[1].question_b_id, shown_at=SHOWN)
    assert ASSIGNMENT_INSERT.insert(first, then=(CURSOR_SET, {"participation_id": ada.pk, "cursor": 4})) is True
    assert ASSIGNMENT_INSERT.insert(again, then=(CURSOR_SET, {"participation_id": ada.pk, "cursor": 9})) is False
    assert again.pk is None
    assert Participation.objects.get(pk=ada.pk).order_cursor == 9  # the update ran although the row was skipped
    assert list(Assignment.objects.filter(participation=ada, pair=pairs[1]).values_list("pk", "left_question_id")) \
        == [(first.pk, pairs[1].question_a_id)]


def test_an_insert_that_fails_runs_no_update(cast):
    _study, ada, _ben, pairs = cast
    assert JUDGMENT_INSERT.insert(_judgment(ada, pairs[2])) is True
    with pytest.raises(IntegrityError), transaction.atomic():
        JUDGMENT_INSERT.insert(_judgment(ada, pairs[2]), then=(VOTE_ADD, {"pair_id": pairs[2].pk}))
    assert Pair.objects.get(pk=pairs[2].pk).n_votes == pairs[2].n_votes
    assert Judgment.objects.filter(participation=ada, pair=pairs[2]).count() == 1
