"""IRT difficulties on their fit's bound: marked in the question list and sorted
as one tie (by question id), never as an order of difficulty."""
from __future__ import annotations

import re

import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import Dataset, MethodResult, Question, QuestionResult, ResponseSet, RunStatus, ScoringRun
from annotate.runs.selectors.results import AT_BOUND_ATOL, bound_side, run_estimation_bounds
from annotate.runs.services.sort_keys import sort_key_rows, sort_keys_rebuild
from tests.annotate.factories import make_user

pytestmark = pytest.mark.django_db

# question -> stored irt_1pl, in creation (id) order: b1 is a hair under the bound (what a fit
# rescaled back to logits can store), b2 exactly on it; x is the hardest interior estimate.
VALUES = {"b1": 5.0 - 1e-9, "b2": 5.0, "x": 4.25, "m": 0.5, "low": -5.0}


@pytest.fixture
def run():
    dataset = Dataset.objects.create(name="Bench")
    rs = ResponseSet.objects.create(name="bench", file_name="b.csv", checksum="d" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now())
    MethodResult.objects.create(run=run, method="irt_1pl", params={"bounds": [-5.0, 5.0], "l2": 0.0},
                                duration_s=0.1, notes={"difficulties_at_bound": 3})
    for external_id, value in VALUES.items():
        q = Question.objects.create(dataset=dataset, external_id=external_id, text=f"Question {external_id}")
        QuestionResult.objects.create(run=run, question=q, kept=True, n_observed=3,
                                      scores={"eip_scaled": 50.0, "irt_1pl": value})
    sort_keys_rebuild(run=run)
    return run


@pytest.fixture
def rita():
    user = make_user("rita")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _ids(html: str) -> list[str]:
    return re.findall(r"<tr[^>]*>\s*<td>([^<]*)</td>", html[html.index('id="question-table"'):])


def test_the_run_knows_the_box_of_its_irt_fit(run):
    assert run_estimation_bounds(run=run) == {"irt_1pl": (-5.0, 5.0)}


@pytest.mark.parametrize(("value", "side"), [
    (5.0, "≥"), (5.0 - AT_BOUND_ATOL, "≥"), (5.0 - 2 * AT_BOUND_ATOL, ""), (0.0, ""),
    (-5.0 + AT_BOUND_ATOL, "≤"), (-5.0, "≤"), (None, ""),
])
def test_a_value_is_on_the_bound_within_the_fits_own_tolerance(value, side):
    assert bound_side(value, (-5.0, 5.0)) == side


def test_values_on_a_bound_sort_as_one_tie_by_question_id():
    # ids 7 (a hair under 5), 3 (exactly 5), 9 (4), 1 (-5): descending, 3 and 7 tie at 5 -> id order 3, 7
    rows = list(sort_key_rows(run_id=1, question_ids=np.array([7, 3, 9, 1]),
                              columns={"irt_1pl": np.array([5.0 - 1e-9, 5.0, 4.0, -5.0])},
                              bounds={"irt_1pl": (-5.0, 5.0)}))
    descending = {question: desc for _, question, _, _, desc in rows}
    assert sorted(descending, key=descending.get) == [3, 7, 9, 1]
    # without the bound the stored noise would order them: 3 (5.0) then 7 (5 - 1e-9) as well here,
    # so check the ascending side, where the noise puts 7 first and the tie puts 3 first
    ascending = {question: asc for _, question, _, asc, _ in rows}
    assert sorted(ascending, key=ascending.get) == [1, 9, 3, 7]
    unbounded = list(sort_key_rows(run_id=1, question_ids=np.array([7, 3, 9, 1]),
                                   columns={"irt_1pl": np.array([5.0 - 1e-9, 5.0, 4.0, -5.0])}))
    ascending = {question: asc for _, question, _, asc, _ in unbounded}
    assert sorted(ascending, key=ascending.get) == [1, 9, 7, 3]


def test_the_list_marks_values_on_the_bound_and_explains_them(run, rita):
    html = rita.get(reverse("annotate:run_questions", kwargs={"run_id": run.pk}),
                    {"sort": "irt_1pl", "direction": "desc"}).content.decode()
    assert _ids(html) == ["b1", "b2", "x", "m", "low"]  # the tie at 5 in question order, then the rest
    assert html.count('<td class="num at-bound">≥ ') == 2 and html.count('<td class="num at-bound">≤ ') == 1
    assert html.count('<span class="flag">at bound</span>') == 3  # = the run's difficulties_at_bound
    assert 'id="bound-note"' in html and "within [−5, 5] logits" in html
    ascending = rita.get(reverse("annotate:run_questions", kwargs={"run_id": run.pk}),
                         {"sort": "irt_1pl", "direction": "asc"}).content.decode()
    assert _ids(ascending) == ["low", "m", "x", "b1", "b2"]
