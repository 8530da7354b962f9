"""Which questions a study may pair, the counts the creation page shows, and
questions without text (never eligible, counted with the reason).

The catalog is made by hand: two subjects of five questions (q<s>-<k>),
three models, a finished run; the tests then blank texts, unkeep questions,
lower coverage and split components, and work out the counts on paper.
"""
from __future__ import annotations

import pytest

from annotate.models import Pair, QuestionResult
from annotate.studies.selectors.study_scope import (
    REASON_LOW_COVERAGE,
    REASON_NO_TEXT,
    REASON_UNKEPT,
    study_scope_candidates,
    study_scope_counts,
)
from annotate.studies.services.studies import study_create
from tests.annotate.factories import make_catalog

pytestmark = pytest.mark.django_db
LOW = REASON_LOW_COVERAGE.format(min_models=3)


def question(catalog, external_id):
    return next(q for q in catalog.questions if q.external_id == external_id)


def blank(catalog, *external_ids, text=""):
    for external_id in external_ids:
        q = question(catalog, external_id)
        q.text = text
        q.save()


def result(catalog, external_id, **fields):
    QuestionResult.objects.filter(run=catalog.run, question=question(catalog, external_id)).update(**fields)


@pytest.fixture
def catalog():
    """Mathematics q0-0..q0-4, Physics q1-0..q1-4; q0-0 and q1-0 unkept (make_catalog's ``unkept=1``)."""
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=5, unkept=1)
    blank(catalog, "q0-1", text="  \n\t ")  # whitespace only
    blank(catalog, "q1-0", "q1-2")  # q1-0 is also unkept: counted once, under the first reason (no text)
    result(catalog, "q1-4", n_observed=2)  # two of three models: below the run's min_models (3)
    return catalog


def test_the_counts_of_a_hand_made_catalog(catalog):
    # Mathematics: q0-0 unkept, q0-1 no text -> eligible q0-2, q0-3, q0-4: 3 questions, 3*2/2 = 3 pairs.
    # Physics: q1-0 and q1-2 no text, q1-4 low coverage -> eligible q1-1, q1-3: 1 pair.
    counts = study_scope_counts(run=catalog.run, datasets=[catalog.dataset])
    rows = {s.name: (s.n_questions, s.n_eligible, s.n_possible_pairs) for s in counts.subjects}
    assert rows == {"Mathematics": (5, 3, 3), "Physics": (5, 2, 1)}
    assert (counts.n_questions, counts.n_eligible, counts.n_possible_pairs) == (10, 5, 4)
    assert counts.excluded == {REASON_NO_TEXT: 3, REASON_UNKEPT: 1, LOW: 1}


def test_counts_follow_the_chosen_subjects_and_the_include_switches(catalog):
    physics = catalog.subjects[1]
    only = study_scope_counts(run=catalog.run, datasets=[catalog.dataset], subjects=[physics])
    assert (only.n_questions, only.n_eligible, only.n_possible_pairs) == (5, 2, 1)
    assert only.excluded == {REASON_NO_TEXT: 2, REASON_UNKEPT: 0, LOW: 1}
    assert len(only.subjects) == 2  # every subject of the datasets is listed; the totals are over the chosen
    # Including unkept and low-coverage questions: q0-0 and q1-4 come back; no-text questions never do.
    # Mathematics 4 eligible -> 6 pairs; Physics q1-1, q1-3, q1-4 -> 3 pairs.
    wide = study_scope_counts(run=catalog.run, datasets=[catalog.dataset], include_unkept=True,
                              include_low_coverage=True)
    assert (wide.n_eligible, wide.n_possible_pairs) == (7, 9)
    assert wide.excluded == {REASON_NO_TEXT: 3, REASON_UNKEPT: 0, LOW: 0}


def test_pairs_are_counted_within_a_connected_component(catalog):
    # Mathematics' eligible q0-2, q0-3 in component 0 and q0-4 in component 1: one pair, not three.
    QuestionResult.objects.filter(run=catalog.run).update(component=0)
    result(catalog, "q0-4", component=1)
    counts = study_scope_counts(run=catalog.run, datasets=[catalog.dataset])
    assert {s.name: s.n_possible_pairs for s in counts.subjects} == {"Mathematics": 1, "Physics": 1}


def test_the_sampler_never_pairs_a_question_without_text(catalog):
    # 4 possible pairs (see the counts above): all of them are drawn, none holds a blank question.
    study = study_create(name="all four", run=catalog.run, datasets=[catalog.dataset], n_pairs=4, seed=3)
    paired = set(Pair.objects.filter(study=study).values_list("question_a__external_id", flat=True)) | set(
        Pair.objects.filter(study=study).values_list("question_b__external_id", flat=True))
    assert paired == {"q0-2", "q0-3", "q0-4", "q1-1", "q1-3"}
    with pytest.raises(ValueError, match="n_pairs=5 but only 4 distinct same-subject pairs"):
        study_create(name="five", run=catalog.run, datasets=[catalog.dataset], n_pairs=5, seed=3)


def test_even_including_everything_a_blank_question_stays_out(catalog):
    candidates = study_scope_candidates(run=catalog.run, datasets=[catalog.dataset], include_unkept=True,
                                        include_low_coverage=True)
    eligible = {q.pk for q in catalog.questions} - {question(catalog, e).pk for e in ("q0-1", "q1-0", "q1-2")}
    assert set(candidates.question_ids[candidates.eligible].tolist()) == eligible
