"""The walk to an evaluator's next pair: a short first query when most pairs
ahead are offerable, the same pair found whatever the chunks.

Cast: ``ada`` judges a 70-pair study; nobody else has voted.
"""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import annotate.studies.selectors.studies as selectors
from annotate.models import Judgment, Pair
from annotate.studies.selectors.studies import (
    FIRST_CHUNK,
    ORDER_CHUNK,
    _Count,
    evaluator_order_positions,
    participation_next_pair,
)
from tests.annotate.factories import make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db

N_PAIRS = 70
TARGET = 3


@pytest.fixture
def ada(monkeypatch):
    """Ada at the start of her order, with the sizes of the chunks her walks compute recorded."""
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=13), n_pairs=N_PAIRS, seed=9,
                       target=TARGET)
    participation = make_evaluator(study, "ada")
    chunks = []
    original = selectors.evaluator_order_positions

    def recorded(*, seed, n, indices):
        chunks.append(len(indices))
        return original(seed=seed, n=n, indices=indices)

    monkeypatch.setattr(selectors, "evaluator_order_positions", recorded)
    return participation, chunks


def _pair_at(participation, index: int) -> Pair:
    [position] = evaluator_order_positions(seed=participation.seed, n=N_PAIRS, indices=[index])  # not recorded
    return Pair.objects.get(study=participation.study, position=position)


def test_the_first_query_is_short_when_at_least_half_the_pairs_ahead_are_offerable(ada):
    participation, chunks = ada
    found = participation_next_pair(participation=participation, n_offerable=N_PAIRS // 2, n_pairs=N_PAIRS)
    assert (found.pair_id, found.cursor) == (_pair_at(participation, 0).pk, 1)
    assert chunks == [FIRST_CHUNK]


def test_the_first_query_is_a_full_chunk_when_fewer_are_offerable_or_their_number_is_unknown(ada):
    participation, chunks = ada
    for n_offerable in (N_PAIRS // 2 - 1, None):
        found = participation_next_pair(participation=participation, n_offerable=n_offerable, n_pairs=N_PAIRS)
        assert (found.pair_id, found.cursor) == (_pair_at(participation, 0).pk, 1)
    assert chunks == [ORDER_CHUNK, ORDER_CHUNK]


def test_past_a_short_first_chunk_that_holds_nothing_offerable_the_walk_finds_the_next_pair(ada):
    participation, chunks = ada
    full = [_pair_at(participation, k).pk for k in range(FIRST_CHUNK + 2)]  # indices 0..9 reach the target
    Pair.objects.filter(pk__in=full).update(n_votes=TARGET)
    with CaptureQueriesContext(connection) as ctx:
        found = participation_next_pair(participation=participation, n_offerable=N_PAIRS - len(full),
                                        n_pairs=N_PAIRS)
    assert (found.pair_id, found.cursor) == (_pair_at(participation, FIRST_CHUNK + 2).pk, FIRST_CHUNK + 3)
    assert chunks == [FIRST_CHUNK, ORDER_CHUNK]
    assert len(ctx.captured_queries) == 2


def test_a_counted_query_is_counted_without_its_models_ordering():
    assert Judgment._meta.ordering  # the model has a default ordering, which the count must drop
    counted = _Count(Judgment.objects.filter(participation_id=1).values("pk"))
    assert "ORDER BY" not in str(counted.query)
