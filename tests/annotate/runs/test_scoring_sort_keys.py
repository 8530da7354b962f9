"""Storing a scoring run writes the question list's sort keys (issue 16): the
positions of every question in the list sorted by each column the run
computed, in both directions, as a plain sort of the stored values gives them."""
from __future__ import annotations

from pathlib import Path

import pytest

import annotate.demo
from annotate.catalog.loaders.tabular_files import parse_folder
from annotate.catalog.services.loading import response_set_load
from annotate.models import QuestionResult, QuestionSortKey
from annotate.runs.services import scoring as service

pytestmark = pytest.mark.django_db

DEMO = Path(annotate.demo.__file__).parent


@pytest.fixture
def run():
    parsed = parse_folder(DEMO, dataset="EIP-demo", subject_column="category", keep_columns=["level"])
    response_set = response_set_load(parsed=parsed, name="EIP-demo")
    run = service.scoring_run_create(response_set=response_set, params={"methods": ["eip", "accuracy"]})
    return service.scoring_run_execute(run=run)


def _positions(stored: dict[int, float | None], descending: bool) -> dict[int, int]:
    """Question id -> position: defined values by value, then undefined; ties by question id."""
    defined = sorted((q for q in stored if stored[q] is not None),
                     key=lambda q: ((-stored[q] if descending else stored[q]), q))
    undefined = sorted(q for q in stored if stored[q] is None)
    return {q: k for k, q in enumerate(defined + undefined)}


def test_storing_a_run_writes_the_order_of_every_stored_column(run):
    results = list(QuestionResult.objects.filter(run=run))
    assert len(results) == 120
    columns = sorted(QuestionSortKey.objects.filter(run=run).values_list("column", flat=True).distinct())
    # the run's sortable columns with a defined value somewhere, and the count; nothing of methods not run
    assert columns == ["accuracy_difficulty", "eip", "eip_scaled", "n_observed"]
    assert len({r.n_observed for r in results}) > 1  # the 12 blank cells of the demo: ties and distinct counts
    for column in columns:
        stored = {r.question_id: (r.n_observed if column == "n_observed" else r.scores.get(column))
                  for r in results}
        keys = QuestionSortKey.objects.filter(run=run, column=column)
        assert dict(keys.values_list("question_id", "ascending")) == _positions(stored, False), column
        assert dict(keys.values_list("question_id", "descending")) == _positions(stored, True), column


def test_deleting_the_run_deletes_its_keys(run):
    assert QuestionSortKey.objects.filter(run=run).exists()
    run.delete()
    assert not QuestionSortKey.objects.exists()
