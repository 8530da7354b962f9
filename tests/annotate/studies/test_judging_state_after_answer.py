"""The judging state an answer leaves, derived from the counts read with the
pair before it, is the state read from the database after it.

Cast: ``ada`` answers a uniform study with a target of 2; ``bo`` voted on
some of her pairs first, so her vote takes them to the target.
"""
from __future__ import annotations

import pytest
from django.utils import timezone

from annotate.models import Assignment, Pair
from annotate.studies.selectors.studies import (
    participation_next_pair,
    participation_state,
    uniform_state_after_answer,
)
from annotate.studies.services.judging import _pair_as_shown, judging_assign_next, judging_screen, judgment_submit
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return make_study(make_catalog(subjects=("Mathematics",), per_subject=6), n_pairs=12, seed=4, target=2)


def _answer_and_compare(ada, choice: str) -> None:
    pair_id = judging_screen(participation=ada).pair.pk
    counted = _pair_as_shown(participation=ada, pair_id=pair_id, counted=True)
    left = counted.shown_left_id
    judgment_submit(participation=ada, pair_id=pair_id, left_question_id=left, choice=choice)  # no next pair yet
    derived = uniform_state_after_answer(participation=ada, counted=counted, choice=choice)
    assert derived == participation_state(participation=ada)
    judging_assign_next(participation=ada)


def test_each_answer_leaves_the_state_read_after_it(study):
    bo = make_evaluator(study, "bo")
    judge(bo, ["left", "right", "skip", "left", "right", "left"])
    ada = make_evaluator(study, "ada")
    for choice in ["left", "skip", "right", "left", "skip", "right", "left", "right"]:
        _answer_and_compare(ada, choice)
    assert participation_state(participation=ada).judged == 6


def test_with_another_pair_open_the_state_is_left_to_a_read(study):
    ada = make_evaluator(study, "ada")
    first = judging_screen(participation=ada).pair
    second = Pair.objects.get(pk=participation_next_pair(participation=ada).pair_id)  # not yet assigned
    Assignment.objects.create(participation=ada, pair=second, left_question_id=second.question_a_id,
                              shown_at=timezone.now())  # a second tab's pair
    counted = _pair_as_shown(participation=ada, pair_id=first.pk, counted=True)
    assert uniform_state_after_answer(participation=ada, counted=counted, choice="left") is None
