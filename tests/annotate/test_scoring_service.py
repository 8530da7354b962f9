"""The response-matrix selector and the scoring service (issue 3)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from annotate.models import Dataset, LanguageModel, Question, Response, ResponseSet, Subject
from annotate.selectors.matrix import ERR_NO_RESPONSES, NO_SUBJECT, response_matrix

pytestmark = pytest.mark.django_db


def _response_set(name: str) -> ResponseSet:
    return ResponseSet.objects.create(name=name, file_name=f"{name}.csv", checksum=name.ljust(64, "0"),
                                      file_format="wide")


@pytest.fixture
def tiny():
    """Three questions in two datasets, three models, one with a gap; plus a
    second response set whose rows must never leak in.

    Created in an order that differs from the id order where it matters: the
    model "a-first" is created last, so it has the largest id.
    """
    d1, d2 = Dataset.objects.create(name="D1"), Dataset.objects.create(name="D2")
    algebra = Subject.objects.create(name="algebra")
    q1 = Question.objects.create(dataset=d1, subject=algebra, external_id="1")
    q2 = Question.objects.create(dataset=d1, subject=None, external_id="2")
    q3 = Question.objects.create(dataset=d2, subject=algebra, external_id="3")
    q_other = Question.objects.create(dataset=d1, subject=algebra, external_id="only-in-other-set")
    m1 = LanguageModel.objects.create(name="zeta")
    m2 = LanguageModel.objects.create(name="eta")
    m_other = LanguageModel.objects.create(name="only-in-other-set")
    m3 = LanguageModel.objects.create(name="a-first")
    rs, other = _response_set("tiny"), _response_set("other")
    cells = {(q1, m1): 1.0, (q1, m2): 0.0, (q1, m3): 1.0, (q2, m2): 0.5, (q3, m1): 0.0, (q3, m3): 0.25}
    Response.objects.bulk_create(Response(response_set=rs, question=q, model=m, credit=c) for (q, m), c in cells.items())
    Response.objects.bulk_create([
        Response(response_set=other, question=q_other, model=m_other, credit=1.0),
        Response(response_set=other, question=q2, model=m1, credit=1.0),  # (q2, m1) stays NaN in "tiny"
    ])
    return {"rs": rs, "q": (q1, q2, q3), "m": (m1, m2, m3), "d": (d1, d2), "algebra": algebra}


def test_it_builds_the_matrix_with_nan_where_unobserved_in_id_order(tiny):
    (q1, q2, q3), (m1, m2, m3) = tiny["q"], tiny["m"]
    matrix = response_matrix(response_set=tiny["rs"])
    assert matrix.question_ids.tolist() == [q1.pk, q2.pk, q3.pk]  # ascending Question.id
    assert matrix.model_ids.tolist() == [m1.pk, m2.pk, m3.pk]  # ascending id, not name order
    assert matrix.R.dtype == np.float64 and matrix.question_ids.dtype == np.int64
    nan = math.nan
    expected = np.array([
        [1.0, 0.0, 1.0],
        [nan, 0.5, nan],
        [0.0, nan, 0.25],
    ])
    np.testing.assert_array_equal(matrix.R, expected)  # NaN == NaN in assert_array_equal
    assert matrix.question_datasets.tolist() == [tiny["d"][0].pk, tiny["d"][0].pk, tiny["d"][1].pk]
    assert matrix.question_subjects.tolist() == [tiny["algebra"].pk, NO_SUBJECT, tiny["algebra"].pk]
    assert not matrix.R.flags.writeable


def test_it_restricts_to_models_and_datasets_and_drops_empty_rows(tiny):
    (q1, q2, q3), (m1, m2, m3) = tiny["q"], tiny["m"]
    matrix = response_matrix(response_set=tiny["rs"], model_ids=[m3.pk, m1.pk], dataset_ids=[tiny["d"][0].pk])
    # q2 has no response from m1 or m3, q3 is in D2: only q1 is left
    assert matrix.question_ids.tolist() == [q1.pk]
    assert matrix.model_ids.tolist() == [m1.pk, m3.pk]
    np.testing.assert_array_equal(matrix.R, [[1.0, 1.0]])


def test_it_refuses_a_selection_without_responses(tiny):
    with pytest.raises(ValueError) as caught:
        response_matrix(response_set=tiny["rs"], model_ids=[tiny["m"][1].pk], dataset_ids=[tiny["d"][1].pk])
    assert str(caught.value) == ERR_NO_RESPONSES.format(
        response_set="tiny v1", model_ids=[tiny["m"][1].pk], dataset_ids=[tiny["d"][1].pk])


@pytest.mark.parametrize("bad", ["1,2", [1.5], [True], []])
def test_it_rejects_malformed_id_lists(tiny, bad):
    with pytest.raises(ValueError, match="model_ids"):
        response_matrix(response_set=tiny["rs"], model_ids=bad)
