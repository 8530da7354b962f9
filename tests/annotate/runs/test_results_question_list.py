"""The question list's search, filters, sort and page jump, and the report's run picker.

Hand-made catalog (no scoring code runs): run ``done`` over six questions with
stored scores chosen by hand; min_models = 3, so q5 (2 models) and q6 (1
model) are flagged (low coverage). Cast: ``rita`` (researcher).
"""
from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import Dataset, Pair, Question, QuestionResult, ResponseSet, RunStatus, ScoringRun, Study, Subject
from annotate.runs import views
from tests.annotate.factories import make_user

pytestmark = pytest.mark.django_db

# external id: (subject, text, kept, n_observed, eip_scaled, irt_1pl)
ROWS = {
    "q1": ("algebra", "Solve x + 1 = 2", True, 5, 40.0, 0.5),
    "q2": ("algebra", "Factor a quadratic", True, 4, 80.0, -1.0),
    "q3": ("algebra", "Every model solved this", False, 5, 0.0, None),
    "q4": ("biology", "Name the organelle", True, 3, 60.0, 2.0),
    "q5": ("biology", "Cell division phases", True, 2, 20.0, 0.0),
    "q6": ("biology", "Every model failed this", False, 1, 100.0, None),
}


def _ids(html: str) -> list[str]:
    return re.findall(r"<tr[^>]*>\s*<td>([^<]*)</td>", html[html.index('id="question-table"'):])


@pytest.fixture
def catalog():
    dataset = Dataset.objects.create(name="Bench")
    subjects = {name: Subject.objects.create(name=name) for name in ("algebra", "biology")}
    rs = ResponseSet.objects.create(name="bench", file_name="b.csv", checksum="c" * 64, file_format="wide")
    run = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now(),
                                    params={"min_models": 3}, diagnostics={"min_models": 3})
    questions = {}
    for external_id, (subject, text, kept, n, eip, irt) in ROWS.items():
        q = Question.objects.create(dataset=dataset, subject=subjects[subject], external_id=external_id, text=text)
        questions[external_id] = q
        scores = {"eip_scaled": eip, **({} if irt is None else {"irt_1pl": irt})}
        QuestionResult.objects.create(run=run, question=q, kept=kept, n_observed=n, scores=scores)
    return run, subjects, questions


@pytest.fixture
def rita():
    user = make_user("rita")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _list(client, run, **query) -> str:
    response = client.get(reverse("annotate:run_questions", kwargs={"run_id": run.pk}), query)
    assert response.status_code == 200
    return response.content.decode()


def test_default_order_is_eip_hardest_first(catalog, rita):
    run, _, _ = catalog
    assert _ids(_list(rita, run)) == ["q6", "q2", "q4", "q1", "q5", "q3"]


def test_sort_by_another_method_puts_undefined_last_either_way(catalog, rita):
    run, _, _ = catalog
    # irt_1pl: q4 2.0 > q1 0.5 > q5 0.0 > q2 -1.0; q3, q6 undefined (by question id)
    assert _ids(_list(rita, run, sort="irt_1pl")) == ["q4", "q1", "q5", "q2", "q3", "q6"]
    assert _ids(_list(rita, run, sort="irt_1pl", direction="asc")) == ["q2", "q5", "q1", "q4", "q3", "q6"]


def test_sort_by_question_and_by_models_observed(catalog, rita):
    run, _, _ = catalog
    assert _ids(_list(rita, run, sort="question")) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    # n_observed 5, 4, 5, 3, 2, 1 -> descending, ties by question id
    assert _ids(_list(rita, run, sort="n_observed")) == ["q1", "q3", "q2", "q4", "q5", "q6"]


def test_every_registered_question_column_is_a_sort_choice(catalog, rita):
    from scoring.methods import iter_columns, methods

    run, _, _ = catalog
    html = _list(rita, run)
    shown = [c for m in methods() for c in m.shown_question_columns]
    assert shown and all(f'<option value="{c}"' in html for c in shown)
    assert len(shown) <= len(list(iter_columns("question")))


def test_search_matches_the_question_id_or_text(catalog, rita):
    run, _, _ = catalog
    assert _ids(_list(rita, run, q="every model")) == ["q6", "q3"]  # case-insensitive text
    assert _ids(_list(rita, run, q="q4")) == ["q4"]
    assert _ids(_list(rita, run, q="  organelle ")) == ["q4"]
    assert "No question matches." in _list(rita, run, q="nothing like this")


def test_filters_subject_status_and_coverage_combine(catalog, rita):
    run, subjects, _ = catalog
    assert _ids(_list(rita, run, subject=subjects["biology"].pk)) == ["q6", "q4", "q5"]
    assert _ids(_list(rita, run, status="kept")) == ["q2", "q4", "q1", "q5"]
    assert _ids(_list(rita, run, status="excluded")) == ["q6", "q3"]
    assert _ids(_list(rita, run, coverage="low")) == ["q6", "q5"]
    assert _ids(_list(rita, run, coverage="ok")) == ["q2", "q4", "q1", "q3"]
    assert _ids(_list(rita, run, subject=subjects["biology"].pk, status="kept", coverage="low")) == ["q5"]
    html = _list(rita, run, coverage="low")
    assert html.count("flagged: low coverage</strong>") == 2


def test_an_unknown_filter_value_is_an_error_and_shows_everything(catalog, rita):
    run, _, _ = catalog
    html = _list(rita, run, sort="no_such_column")
    assert 'id="filter-errors"' in html and len(_ids(html)) == 6
    html = _list(rita, run, status="A" * 10_000)
    [errors] = re.findall(r'<p class="error" id="filter-errors">(.*?)</p>', html, flags=re.S)
    assert errors == (f"EIP status: Select a valid choice. {'A' * 80}… is not one of the available choices. "
                      "(showing all)")


def test_pages_and_the_page_jump_keep_the_filters(catalog, rita, monkeypatch):
    run, _subjects, _ = catalog
    monkeypatch.setattr(views, "QUESTIONS_PER_PAGE", 2)
    assert _ids(_list(rita, run, page=2)) == ["q4", "q1"]
    assert _ids(_list(rita, run, page=99)) == ["q5", "q3"]  # past the end: the last page
    html = _list(rita, run, status="kept", page=2)
    assert _ids(html) == ["q1", "q5"]
    jump = html[html.index('id="page-jump"'):html.index("</form>", html.index('id="page-jump"'))]
    assert '<input type="hidden" name="status" value="kept">' in jump
    assert 'name="page" min="1" max="2" value="2"' in jump
    assert "page 2 of 2" in html


def test_report_run_picker_offers_finished_runs_covering_the_study(catalog, rita):
    run, _subjects, q = catalog
    rs = run.response_set
    study = Study.objects.create(name="S", scoring_run=run, n_pairs=1, seed=1)
    Pair.objects.create(study=study, position=0, question_a=q["q1"], question_b=q["q2"])
    covering = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now())
    partial = ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE, finished_at=timezone.now())
    failed = ScoringRun.objects.create(response_set=rs, status=RunStatus.FAILED)
    for other in (covering, failed):
        for key in ("q1", "q2"):
            QuestionResult.objects.create(run=other, question=q[key], kept=True, n_observed=3, scores={})
    QuestionResult.objects.create(run=partial, question=q["q1"], kept=True, n_observed=3, scores={})

    from annotate.reports.forms import ReportParamsForm
    from annotate.runs.selectors.scoring import study_report_runs

    choices = study_report_runs(study=study)
    assert [c.run.pk for c in choices] == [run.pk, covering.pk]
    assert choices[0].is_study_run and "the study's run" in choices[0].label
    form = ReportParamsForm({"run": str(partial.pk)}, runs=[(c.run.pk, c.label) for c in choices])
    assert not form.is_valid() and f"run {partial.pk} is not one the report can use" in form.errors["run"][0]
    ok = ReportParamsForm({"run": str(covering.pk)}, runs=[(c.run.pk, c.label) for c in choices])
    assert ok.is_valid() and ok.cleaned_data["run"] == covering.pk
    assert [value for value, _ in ok.fields["run"].choices] == ["", run.pk, covering.pk]
