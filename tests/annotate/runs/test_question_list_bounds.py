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
    assert 'id="bound-note"' in html and "bounds: 1PL IRT [−5, 5] logits." in html
    ascending = rita.get(reverse("annotate:run_questions", kwargs={"run_id": run.pk}),
                         {"sort": "irt_1pl", "direction": "asc"}).content.decode()
    assert _ids(ascending) == ["low", "m", "x", "b1", "b2"]


def test_a_real_mml_fit_on_its_bound_is_marked_and_the_note_gives_each_methods_own_bound(rita):
    """Scored by the real service: a question every model solves runs the MML difficulty to its
    lower bound (-6 logits, the fit's default), one every model fails to its upper bound; the
    JML fit of the same run has its own box (-5, 5). Each mark and the note follow each method's box."""
    from annotate.models import LanguageModel
    from annotate.runs.services import scoring as service
    from tests.annotate.factories import write_responses

    dataset = Dataset.objects.create(name="Sim")
    questions = [Question.objects.create(dataset=dataset, external_id=f"q{i}", text=f"Question {i}")
                 for i in range(8)]
    models = [LanguageModel.objects.create(name=f"model-{j}") for j in range(6)]
    cells = np.array([[1, 1, 1, 1, 1, 1],  # q0: every model solves it
                      [1, 1, 0, 1, 1, 1], [1, 0, 1, 1, 0, 1], [0, 1, 1, 0, 1, 0],
                      [1, 0, 0, 1, 0, 1], [0, 0, 1, 0, 1, 0], [0, 1, 0, 0, 0, 0],
                      [0, 0, 0, 0, 0, 0]], dtype=float)  # q7: every model fails it
    rs = ResponseSet.objects.create(name="sim", file_name="s.csv", checksum="f" * 64, file_format="wide")
    write_responses(rs, [(q, m, cells[i, j]) for i, q in enumerate(questions) for j, m in enumerate(models)])
    run = service.scoring_run_execute(run=service.scoring_run_create(
        response_set=rs, params={"methods": ["eip", "accuracy", "irt_1pl", "irt_1pl_mml"]}))
    stored = {r.question.external_id: r.score("irt_1pl_mml")
              for r in QuestionResult.objects.filter(run=run).select_related("question")}
    assert stored["q0"] == -6.0 and stored["q7"] == 6.0  # the fit's box, not an unbounded estimate
    assert min(stored[f"q{i}"] for i in range(1, 7)) > -6.0 and max(stored[f"q{i}"] for i in range(1, 7)) < 6.0
    notes = MethodResult.objects.get(run=run, method="irt_1pl_mml").notes
    assert run_estimation_bounds(run=run) == {"irt_1pl": (-5.0, 5.0), "irt_1pl_mml": (-6.0, 6.0)}

    html = rita.get(reverse("annotate:run_questions", kwargs={"run_id": run.pk}),
                    {"sort": "irt_1pl_mml", "direction": "desc"}).content.decode()
    note = html[html.index('id="bound-note"'):]
    note = note[:note.index("</p>")]
    assert "1PL IRT [−5, 5] logits" in note and "1PL IRT (MML) [−6, 6] logits" in note
    assert '<td class="num at-bound">≥ 6.00 <span class="flag">at bound</span>' in html
    assert '<td class="num at-bound">≤ −6.00 <span class="flag">at bound</span>' in html
    assert _ids(html)[0] == "q7" and _ids(html)[-1] == "q0"
    marked_mml = html.count("6.00 <span")  # JML difficulties here stay inside (-5, 5): no 5.00 mark
    assert marked_mml == 2 and "5.00 <span" not in html
    assert notes["difficulties_at_bound"] == marked_mml  # the page marks what the fit counts
