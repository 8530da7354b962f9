"""Pairs in flight in an adaptive study: the pair an evaluator was shown and has not answered yet.

The site chooses an evaluator's next pair when they post their previous answer; the vote on it comes with their
next answer, and meanwhile the others are served. A choice that does not know which pairs the others are judging
now gives several of them the same most informative pair, and all but one of those votes teach little. So the
choice leaves out every pair in flight while another pair is left (:func:`adaptive_choose`), and the study's one
read carries them (:attr:`StudyReads.open_pairs`).

Cast: the 2-subject catalog of 6 questions each of the judging tests (2 x 15 possible pairs), prior votes stored
directly, evaluators shown pairs by writing their assignments as the judging service does.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import Assignment, Judgment, Pair
from annotate.studies.services import adaptive_reads
from annotate.studies.services.adaptive import adaptive_choose, pair_get_or_create
from annotate.studies.services.adaptive_reads import IN_FLIGHT_MAX_AGE, study_reads
from tests.annotate.factories import make_catalog, make_evaluator
from tests.annotate.studies.test_adaptive_estimate import Votes
from tests.annotate.studies.test_adaptive_reads import judge
from tests.annotate.studies.test_judging_adaptive import adaptive_study

pytestmark = pytest.mark.django_db


def show(participation, a: int, b: int) -> Pair:
    """``participation`` is shown the pair of questions ``a`` and ``b`` (made if new), not answered yet."""
    pair = pair_get_or_create(study=participation.study, question_a_id=a, question_b_id=b)
    Assignment.objects.create(participation=participation, pair=pair, left_question_id=a, shown_at=timezone.now())
    return pair


def shown_of(participation) -> list[tuple[int, int, int, bool]]:
    return [(x.pair_id, x.pair.question_a_id, x.pair.question_b_id, x.pair.attention_check)
            for x in Assignment.objects.filter(participation=participation).select_related("pair").order_by("pk")]


def pool_of(study) -> list[int]:
    """The pool's question ids, ascending (the first questions are of one subject: the catalog's order)."""
    return list(study.pool.order_by("question_id").values_list("question_id", flat=True))


def in_flight(study) -> dict[int, tuple[int, int]]:
    """The pairs in flight by evaluator, each as its two question ids in ascending order (a pair row keeps the
    order it was made in)."""
    return {pid: tuple(sorted(pair)) for pid, pair in study_reads(study_id=study.pk).open_pairs.items()}


def same(pair: tuple[int, int] | None, a: int, b: int) -> bool:
    return pair is not None and sorted(pair) == sorted((a, b))


@pytest.fixture
def study():
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=6)
    study = adaptive_study(catalog, per_evaluator=30, min_comparisons=1, random_share=0.0)
    votes = Votes(study, seed=3)
    for _ in range(12):
        votes.add()
    return study


def test_the_read_carries_each_evaluators_unanswered_newest_pair_and_nothing_answered(study):
    a, b, c = pool_of(study)[:3]
    first, second, third = (make_evaluator(study, name) for name in ("first", "second", "third"))
    show(first, a, b)
    answered = show(second, a, c)
    judge(second, answered, harder=a)
    show(third, b, c)
    assert in_flight(study) == {first.pk: (a, b), third.pk: (b, c)}
    # An older pair left open behind an answered newer one is no longer in flight: the newest pair is what an
    # evaluator is judging now.
    newer = show(first, a, c)
    judge(first, newer, harder=c)
    assert in_flight(study) == {third.pk: (b, c)}


def test_a_pair_another_evaluator_is_judging_is_not_chosen_while_another_is_left(study):
    chooser = make_evaluator(study, "chooser")
    first = adaptive_choose(study=study, participation=chooser, shown=[])
    assert first is not None
    other = make_evaluator(study, "other")
    show(other, *first)
    again = adaptive_choose(study=study, participation=chooser, shown=[])
    assert again is not None and not same(again, *first)
    # Once the other evaluator has answered it, the pair is a candidate again (and, the votes having changed,
    # the choice is made afresh).
    judge(other, Pair.objects.get(question_a_id=first[0], question_b_id=first[1]), harder=first[0])
    assert study_reads(study_id=study.pk).open_pairs == {}


def test_every_pair_in_flight_is_left_out_and_the_chooser_s_own_is_not_counted_twice(study):
    chooser = make_evaluator(study, "chooser")
    taken = []
    for k in range(6):
        pair = adaptive_choose(study=study, participation=chooser, shown=[])
        assert pair is not None
        assert not any(same(pair, *t) for t in taken)
        taken.append(pair)
        show(make_evaluator(study, f"busy{k}"), *pair)
    assert len(study_reads(study_id=study.pk).open_pairs) == 6


def test_when_only_pairs_in_flight_are_left_one_of_them_is_chosen():
    catalog = make_catalog(subjects=("Law",), per_subject=3)
    small = adaptive_study(catalog, per_evaluator=3, min_comparisons=1, random_share=0.0, name="Small")
    q = pool_of(small)
    chooser = make_evaluator(small, "chooser")
    mine = show(chooser, q[0], q[1])
    judge(chooser, mine, harder=q[0])
    busy = make_evaluator(small, "busy")
    show(busy, q[0], q[2])
    show(make_evaluator(small, "busy2"), q[1], q[2])
    # Left for the chooser: (0, 2) and (1, 2), both in flight; one of them is served rather than nothing.
    pair = adaptive_choose(study=small, participation=chooser, shown=shown_of(chooser))
    assert same(pair, q[0], q[2]) or same(pair, q[1], q[2])
    # Nothing left at all: None, as before.
    for a, b in ((q[0], q[2]), (q[1], q[2])):
        judge(chooser, show(chooser, a, b), harder=a)
    assert adaptive_choose(study=small, participation=chooser, shown=shown_of(chooser)) is None
    assert Judgment.objects.filter(participation=chooser).count() == 3


def shown_ago(participation, a: int, b: int, age: timedelta) -> Pair:
    """``participation`` was shown the pair of ``a`` and ``b`` ``age`` ago and has not answered it."""
    pair = show(participation, a, b)
    Assignment.objects.filter(participation=participation, pair=pair).update(shown_at=timezone.now() - age)
    return pair


def test_an_abandoned_pair_stops_being_in_flight_once_older_than_the_limit(study):
    a, b, c = pool_of(study)[:3]
    gone, busy = make_evaluator(study, "gone"), make_evaluator(study, "busy")
    shown_ago(gone, a, b, IN_FLIGHT_MAX_AGE + timedelta(seconds=1))
    shown_ago(busy, a, c, IN_FLIGHT_MAX_AGE - timedelta(minutes=1))
    assert in_flight(study) == {busy.pk: (a, c)}
    # The limit is counted from the moment of the read: the same pairs an hour earlier were both in flight.
    earlier = {pid: tuple(sorted(pair)) for pid, pair in
               study_reads(study_id=study.pk, now=timezone.now() - timedelta(hours=1)).open_pairs.items()}
    assert earlier == {gone.pk: (a, b), busy.pk: (a, c)}


def test_the_limit_is_the_module_setting(study, monkeypatch):
    a, b = pool_of(study)[:2]
    gone = make_evaluator(study, "gone")
    shown_ago(gone, a, b, timedelta(minutes=10))
    assert in_flight(study) == {gone.pk: (a, b)}
    monkeypatch.setattr(adaptive_reads, "IN_FLIGHT_MAX_AGE", timedelta(minutes=5))
    assert in_flight(study) == {}


def test_an_old_open_pair_is_chosen_for_others_and_a_fresh_one_is_not():
    catalog = make_catalog(subjects=("Law",), per_subject=4)
    small = adaptive_study(catalog, per_evaluator=6, min_comparisons=0, random_share=0.0, name="Small")
    chooser = make_evaluator(small, "chooser")
    free = adaptive_choose(study=small, participation=chooser, shown=[])
    assert free is not None
    # The pair the chooser would get is held by another evaluator: shown recently, it is left out ...
    holder = make_evaluator(small, "holder")
    held = shown_ago(holder, *free, timedelta(minutes=1))
    again = adaptive_choose(study=small, participation=chooser, shown=[])
    assert again is not None and not same(again, *free)
    # ... shown longer ago than the limit (the holder left), it is the chooser's again.
    Assignment.objects.filter(participation=holder, pair=held).update(
        shown_at=timezone.now() - IN_FLIGHT_MAX_AGE - timedelta(seconds=1))
    assert same(adaptive_choose(study=small, participation=chooser, shown=[]), *free)
