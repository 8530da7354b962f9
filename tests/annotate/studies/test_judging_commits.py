"""The commits of one answer, outside any test transaction, on the database
the suite runs on (SQLite by default; PostgreSQL with ``DATABASE_URL``).

Every commit of a write waits for the write-ahead log to reach the disk, so
the answer's POST commits as few times as its guarantees allow: on the hot
path (a uniform study with no stopping rule left to check) the judgment, the
pair's vote count, the next assignment and the evaluator's cursor commit
together, once, and nothing of them is kept when one part fails. A study
whose rule still needs checking commits the answer first and the next
assignment after the check: twice.

Cast: ``ada`` judges.
"""
from __future__ import annotations

import pytest
from django.db import connection

from annotate.models import Assignment, Judgment, Pair
from annotate.studies.selectors.studies import participation_get
from annotate.studies.services import judging as judging_service
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from tests.annotate.factories import make_catalog, make_study
from tests.annotate.judging_forms import form_data
from tests.annotate.studies.test_judging_scale import judge_url, on_screen, ready_client

pytestmark = pytest.mark.django_db(transaction=True)

WRITES = ("INSERT", "UPDATE", "DELETE")


def commits_of_an_answer(study, monkeypatch) -> tuple[int, list[str], object]:
    """(commits, writes made outside a transaction, the participation) of ``ada``'s second answer's POST."""
    participation, client = ready_client(study, "ada")
    pair_id, left_id = on_screen(client, study)
    client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left"))
    pair_id, left_id = on_screen(client, study)
    data = form_data(client, study, pair_id, left_id, "right")
    commits: list[int] = []
    outside: list[str] = []
    real_commit = connection.commit

    def counting_commit():
        commits.append(1)
        real_commit()

    def watch(execute, sql, params, many, context):
        if sql.lstrip().upper().startswith(WRITES) and not connection.in_atomic_block:
            outside.append(sql)  # an autocommitted write: a commit of its own
        return execute(sql, params, many, context)

    monkeypatch.setattr(connection, "commit", counting_commit)
    with connection.execute_wrapper(watch):
        assert client.post(judge_url(study), data).status_code == 302
    monkeypatch.undo()
    return len(commits), outside, participation


def test_an_answer_and_the_next_pair_commit_once(monkeypatch):
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=8), n_pairs=20, seed=3)
    commits, outside, participation = commits_of_an_answer(study, monkeypatch)
    assert (commits, outside) == (1, [])
    assert Judgment.objects.filter(participation=participation).count() == 2
    assert Assignment.objects.filter(participation=participation, pair__judgments=None).count() == 1  # next pair
    assert sum(Pair.objects.filter(study=study).values_list("n_votes", flat=True)) == 2


def test_a_rule_left_to_check_commits_the_answer_before_the_check(monkeypatch):
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=8), n_pairs=20, seed=3)
    stopping_rules_set(study=study, values=StoppingInput(max_judgments=1000))
    commits, outside, participation = commits_of_an_answer(study, monkeypatch)
    assert (commits, outside) == (2, [])
    assert Judgment.objects.filter(participation=participation).count() == 2


def test_an_answer_whose_next_pair_fails_leaves_nothing(monkeypatch):
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=8), n_pairs=20, seed=3)
    ada, client = ready_client(study, "ada")
    pair_id, left_id = on_screen(client, study)
    participation = participation_get(study_id=study.pk, user=ada.user)  # as the view reads it: with its rules
    votes_before = sum(Pair.objects.filter(study=study).values_list("n_votes", flat=True))
    cursor_before = participation.order_cursor

    def broken(**kwargs):
        raise RuntimeError("the walk to the next pair failed")

    monkeypatch.setattr(judging_service, "participation_next_pair", broken)
    with pytest.raises(RuntimeError):
        judging_service.judgment_submit(participation=participation, pair_id=pair_id, left_question_id=left_id,
                                        choice="left", assign_next=True)
    monkeypatch.undo()
    participation.refresh_from_db()
    assert Judgment.objects.filter(participation=participation).count() == 0
    assert sum(Pair.objects.filter(study=study).values_list("n_votes", flat=True)) == votes_before
    assert participation.order_cursor == cursor_before
    # The same answer, sent again, is stored once, with its vote and the next pair.
    assert client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left")).status_code == 302
    assert Judgment.objects.filter(participation=participation).count() == 1
    assert sum(Pair.objects.filter(study=study).values_list("n_votes", flat=True)) == votes_before + 1
    assert Assignment.objects.filter(participation=participation, pair__judgments=None).count() == 1
