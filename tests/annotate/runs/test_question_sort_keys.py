"""The question list sorted through the stored sort keys (issue 16) gives the
order of the stored values: every sortable column, both directions, every filter.

Hand-made run (no scoring code runs): 60 questions in two datasets and three
subjects (one question without a subject), created in a shuffled order so
question ids follow no value; values drawn from a small set (many ties),
about a third undefined (absent from ``scores``). The expected order is a
plain Python sort of the values the test itself stored: defined values by
value (descending or ascending), then the undefined ones, ties and undefined
values by question id. A second run with the same questions must never leak in.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from django.utils import timezone

from annotate.models import (
    Dataset,
    Question,
    QuestionResult,
    QuestionSortKey,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Subject,
)
from annotate.runs.selectors.results import (
    order_by_stored_value,
    question_sort_choices,
    run_questions,
    run_questions_page,
)
from annotate.runs.services.sort_keys import sort_keys_rebuild, sort_positions

pytestmark = pytest.mark.django_db

MIN_MODELS = 3
VALUES = (-1.5, 0.0, 0.25, 0.25, 2.0, 40.0, 100.0)
SORTS = [key for key, _ in question_sort_choices()]
SCORE_COLUMNS = [key for key in SORTS if key not in ("question", "n_observed")]


@pytest.fixture
def run_with_ties():
    rng = random.Random(16)
    datasets = [Dataset.objects.create(name=name) for name in ("Alpha", "Beta")]
    subjects = [Subject.objects.create(name=name) for name in ("algebra", "biology", "chemistry")]
    specs = list(range(60))
    rng.shuffle(specs)
    rs = ResponseSet.objects.create(name="ties", file_name="t.csv", checksum="t" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now(),
                                    params={"min_models": MIN_MODELS}, diagnostics={"min_models": MIN_MODELS})
    other = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now())
    expected = []
    for k in specs:
        subject = None if k == 7 else subjects[k % 3]
        q = Question.objects.create(dataset=datasets[k % 2], subject=subject, external_id=f"id-{k}",
                                    text=f"question {k} {'needle' if k % 5 == 0 else 'hay'}")
        scores = {c: rng.choice(VALUES) for c in SCORE_COLUMNS if rng.random() > 0.3}
        kept, n_observed = rng.random() > 0.25, rng.choice((1, 2, 3, 3, 5))
        QuestionResult.objects.create(run=run, question=q, kept=kept, n_observed=n_observed, scores=scores)
        QuestionResult.objects.create(run=other, question=q, kept=True, n_observed=9,
                                      scores=dict.fromkeys(SCORE_COLUMNS, float(k)))
        expected.append({"id": q.pk, "dataset": q.dataset_id, "subject": q.subject_id, "text": q.text,
                         "external_id": q.external_id, "kept": kept, "n_observed": n_observed, **scores})
    sort_keys_rebuild(run=run)
    sort_keys_rebuild(run=other)
    return run, datasets, subjects, expected


def _expected_order(rows: list[dict], sort: str, descending: bool) -> list[int]:
    """The order of the stored values, by plain Python sorts (stable, so applied last key first)."""
    if sort == "question":
        return sorted((r["id"] for r in rows), reverse=descending)
    by_id = sorted(rows, key=lambda r: r["id"])
    defined = [r for r in by_id if r.get(sort) is not None]
    undefined = [r for r in by_id if r.get(sort) is None]
    defined = sorted(defined, key=lambda r: r[sort], reverse=descending)  # stable: ties stay by id
    return [r["id"] for r in defined + undefined]


def _filters(datasets, subjects) -> list[tuple[dict, object]]:
    """(run_questions keywords, the same filter as a predicate on the stored rows)."""
    return [
        ({}, lambda r: True),
        ({"dataset": datasets[1]}, lambda r: r["dataset"] == datasets[1].pk),
        ({"subject": subjects[0]}, lambda r: r["subject"] == subjects[0].pk),
        ({"search": "NEEDLE"}, lambda r: "needle" in r["text"]),
        ({"search": "id-1"}, lambda r: "id-1" in r["external_id"]),
        ({"status": "kept"}, lambda r: r["kept"]),
        ({"status": "excluded"}, lambda r: not r["kept"]),
        ({"coverage": "low"}, lambda r: r["n_observed"] < MIN_MODELS),
        ({"coverage": "ok"}, lambda r: r["n_observed"] >= MIN_MODELS),
        ({"dataset": datasets[0], "subject": subjects[1], "status": "kept", "coverage": "ok"},
         lambda r: r["dataset"] == datasets[0].pk and r["subject"] == subjects[1].pk and r["kept"]
         and r["n_observed"] >= MIN_MODELS),
    ]


def test_the_fixture_has_ties_and_undefined_values_in_every_column(run_with_ties):
    _, _, _, rows = run_with_ties
    for column in SCORE_COLUMNS:
        values = [r[column] for r in rows if column in r]
        assert len(values) < len(rows) and len(set(values)) < len(values)


@pytest.mark.parametrize("sort", SORTS)
def test_every_sort_and_filter_gives_the_order_of_the_stored_values(run_with_ties, sort):
    run, datasets, subjects, rows = run_with_ties
    assert QuestionSortKey.objects.filter(run=run, column=sort).exists() == (sort != "question")
    for direction in ("desc", "asc"):
        for keywords, keep in _filters(datasets, subjects):
            chosen = [r for r in rows if keep(r)]
            expected = _expected_order(chosen, sort, direction == "desc")
            got = run_questions(run=run, sort=sort, direction=direction, **keywords)
            assert [r.question_id for r in got] == expected, (sort, direction, keywords)
            assert all(r.run_id == run.pk for r in got)


def test_blank_sort_and_direction_are_eip_scaled_descending(run_with_ties):
    run, _, _, rows = run_with_ties
    assert [r.question_id for r in run_questions(run=run)] == _expected_order(rows, "eip_scaled", True)


@pytest.mark.parametrize("sort", ["eip_scaled", "irt_1pl", "n_observed", "question"])
def test_pages_count_every_question_once_and_slice_the_order(run_with_ties, sort):
    run, datasets, subjects, rows = run_with_ties
    for keywords, keep in _filters(datasets, subjects):
        chosen = [r for r in rows if keep(r)]
        first = run_questions_page(run=run, page="", per_page=7, sort=sort, direction="asc", **keywords)
        assert first.number == 1 and first.paginator.count == len(chosen), keywords
        pages = [r.question_id for n in first.paginator.page_range
                 for r in run_questions_page(run=run, page=n, per_page=7, sort=sort, direction="asc",
                                             **keywords).object_list]
        assert pages == _expected_order(chosen, sort, False), keywords
    last = run_questions_page(run=run, page=999, per_page=7, sort=sort)
    assert last.number == last.paginator.num_pages == 9  # 60 questions, 7 a page; past the end: the last


@pytest.mark.parametrize("sort", [s for s in SORTS if s != "question"])
def test_the_keys_agree_with_the_database_sort_of_the_json_values(run_with_ties, sort):
    run, _, _, _ = run_with_ties
    for descending in (True, False):
        reference = order_by_stored_value(QuestionResult.objects.filter(run=run), sort=sort, descending=descending)
        got = run_questions(run=run, sort=sort, direction="desc" if descending else "asc")
        assert [r.question_id for r in got] == list(reference.values_list("question_id", flat=True))


def test_a_run_stored_without_keys_is_sorted_by_its_stored_values(run_with_ties):
    run, _, _, rows = run_with_ties
    QuestionSortKey.objects.filter(run=run).delete()
    for direction in ("desc", "asc"):
        got = run_questions(run=run, sort="irt_1pl", direction=direction, status="kept")
        assert [r.question_id for r in got] == _expected_order([r for r in rows if r["kept"]], "irt_1pl",
                                                               direction == "desc")


def test_a_column_undefined_everywhere_has_no_keys_and_lists_in_question_order(run_with_ties):
    run, _, _, rows = run_with_ties
    for result in QuestionResult.objects.filter(run=run):
        result.scores.pop("irt_mirt", None)
        result.save(update_fields=["scores"])
    sort_keys_rebuild(run=run)
    assert not QuestionSortKey.objects.filter(run=run, column="irt_mirt").exists()
    for direction in ("desc", "asc"):
        got = run_questions(run=run, sort="irt_mirt", direction=direction)
        assert [r.question_id for r in got] == sorted(r["id"] for r in rows)


def test_sort_positions_by_hand():
    # values 2, NaN, 2, 1, inf at question ids 7, 5, 6, 8, 4
    # ascending: 1 (q8), 2 (q6), 2 (q7), then undefined by id: inf (q4), NaN (q5)
    # descending: 2 (q6), 2 (q7), 1 (q8), then q4, q5
    asc, desc = sort_positions(np.array([2.0, np.nan, 2.0, 1.0, np.inf]), np.array([7, 5, 6, 8, 4]))
    assert asc.tolist() == [2, 4, 1, 0, 3]
    assert desc.tolist() == [1, 4, 0, 2, 3]
