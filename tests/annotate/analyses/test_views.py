"""Analysis pages: who may see and start them, the stored result, a POST that
starts a run (Post/Redirect/Get) and the status page's progress, downloads.

Cast: ``owner`` (staff), ``rita`` (researcher), ``eve`` (evaluator), anonymous.
"""
from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import Group
from django.test import override_settings
from django.urls import reverse

from annotate.analyses import services as service
from annotate.models import AnalysisRun, RunStatus
from scoring.analyses import eip_vs_accuracy
from scoring.baselines import accuracy
from scoring.eip import eip
from tests.annotate.analyses.test_runs import guttman, load_matrix
from tests.annotate.factories import client_for, make_user

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
SCRIPT = "<script>alert('owned')</script>"
# 4 nested models and one partial-credit model; a model name carries markup.
R = np.column_stack([guttman(4, [0, 1, 2, 3, 1, 2, 4, 3]), [0.5, 1, 0, 0.5, 1, 0, 0, 1]])
NAMES = ["alpha-1", "beta-2", "gamma-3", f"delta {SCRIPT}", "eps-5"]


@pytest.fixture
def rs():
    return load_matrix(R, name="pages", datasets=["x"] * 4 + ["y"] * 4, models=NAMES)


@pytest.fixture
def cast():
    researchers, evaluators = (Group.objects.get_or_create(name=n)[0] for n in ("researcher", "evaluator"))
    owner = make_user("owner", staff=True)
    rita = make_user("rita")
    rita.groups.add(researchers)
    eve = make_user("eve")
    eve.groups.add(evaluators)
    return {"owner": owner, "rita": rita, "eve": eve}



def done_run(rs) -> AnalysisRun:
    return service.analysis_run_execute(run=service.analysis_run_create(kind="rank_changes", response_set=rs))


def _urls(run: AnalysisRun) -> list[str]:
    ids = {"analysis_id": run.pk}
    return [reverse("annotate:analyses"), reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"}),
            reverse("annotate:analysis_run", kwargs=ids), reverse("annotate:analysis_run_json", kwargs=ids),
            reverse("annotate:analysis_run_csv", kwargs=ids),
            reverse("annotate:analysis_run_plot", kwargs={**ids, "fmt": "svg"}),
            reverse("annotate:analysis_run_table_csv", kwargs={**ids, "table": "windows"}),
            reverse("annotate:analysis_run_zip", kwargs=ids), reverse("annotate:analysis_run_codebook", kwargs=ids)]


def test_anonymous_visitors_go_to_the_login_page(rs):
    for url in _urls(done_run(rs)):
        response = client_for().get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url


def test_evaluators_get_403_and_cannot_start_a_run(rs, cast):
    for url in _urls(done_run(rs)):
        assert client_for(cast["eve"]).get(url).status_code == 403, url
    before = AnalysisRun.objects.count()
    response = client_for(cast["eve"]).post(reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"}),
                                            {"response_set": rs.pk, "alpha": "0.85"})
    assert response.status_code == 403
    assert AnalysisRun.objects.count() == before


def test_researchers_and_staff_see_every_page(rs, cast):
    for who in ("rita", "owner"):
        for url in _urls(done_run(rs)):
            assert client_for(cast[who]).get(url).status_code == 200, (who, url)


def test_the_kind_page_shows_the_stored_result_for_the_chosen_parameters(rs, cast):
    run = done_run(rs)
    expected = eip_vs_accuracy(eip(R).competency, accuracy(R)).kendall.value
    url = reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"})
    for query in ({}, {"response_set": rs.pk, "alpha": "0.85"}):  # defaults, and the same params spelt out
        response = client_for(cast["rita"]).get(url, query)
        body = response.content.decode()
        assert response.status_code == 200
        assert reverse("annotate:analysis_run", kwargs={"analysis_id": run.pk}) in body
        assert f"Kendall tau between EIP competency and accuracy: {expected:.4f}" in body
        assert SCRIPT not in body and "delta &lt;script&gt;" in body
    other = client_for(cast["rita"]).get(url, {"response_set": rs.pk, "alpha": "0.5"}).content.decode()
    assert 'id="no-result"' in other and "Kendall tau between" not in other


def test_a_bad_query_or_an_empty_post_is_refused_with_400_and_starts_nothing(rs, cast):
    url = reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"})
    assert client_for(cast["rita"]).get(url, {"response_set": rs.pk, "alpha": "2"}).status_code == 400
    assert client_for(cast["rita"]).post(url, {}).status_code == 400
    assert client_for(cast["rita"]).get(reverse("annotate:analysis_kind", kwargs={"kind": "nope"})).status_code == 404
    assert not AnalysisRun.objects.exists()


def test_a_post_queues_a_run_and_the_status_page_follows_it(rs, cast):
    url = reverse("annotate:analysis_kind", kwargs={"kind": "profiles"})
    data = {"response_set": rs.pk, "alpha": "0.85", "group_by": "dataset", "bins": "4"}
    with override_settings(TASKS=DATABASE):
        response = client_for(cast["rita"]).post(url, data)
    run = AnalysisRun.objects.get()
    status_url = reverse("annotate:analysis_run", kwargs={"analysis_id": run.pk})
    assert response.status_code == 302 and response["Location"] == status_url
    assert (run.kind, run.status, run.params["bins"], run.created_by) == ("profiles", RunStatus.QUEUED, 4, cast["rita"])
    page = client_for(cast["rita"]).get(status_url).content.decode()
    assert 'data-seconds="2"' in page and "<strong>queued</strong>" in page
    # the worker has started and reports progress
    AnalysisRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, progress=0.4, message="EIP")
    page = client_for(cast["rita"]).get(status_url).content.decode()
    assert 'data-seconds="2"' in page
    assert "<strong>running</strong>" in page and "40%" in page and "(EIP)" in page
    # done: no refresh, the result
    AnalysisRun.objects.filter(pk=run.pk).update(status=RunStatus.QUEUED, progress=0.0, message="")
    service.analysis_run_execute(run=run)
    page = client_for(cast["rita"]).get(status_url).content.decode()
    assert "data-seconds" not in page and "<strong>done</strong>" in page and "100%" in page
    assert "EIP difficulty (0-100) per dataset" in page


def test_a_second_post_with_the_same_parameters_shows_the_queued_run(rs, cast):
    url = reverse("annotate:analysis_kind", kwargs={"kind": "pools"})
    data = {"response_set": rs.pk, "alpha": "0.85"}
    with override_settings(TASKS=DATABASE):
        first = client_for(cast["owner"]).post(url, data)
        second = client_for(cast["rita"]).post(url, data)
    assert first["Location"] == second["Location"]
    assert AnalysisRun.objects.count() == 1


def test_with_the_immediate_backend_the_redirect_lands_on_the_result(cast):
    url = reverse("annotate:analysis_kind", kwargs={"kind": "case_study"})
    data = {"alpha": "0.85", "seed": "1", "n_seeds": "2", "mirt_epochs": "10", "skip_irt": "on"}
    with override_settings(TASKS=IMMEDIATE):
        response = client_for(cast["owner"]).post(url, data, follow=True)
    run = AnalysisRun.objects.get()
    assert run.status == RunStatus.DONE and run.response_set is None and run.params["skip_irt"] is True
    body = response.content.decode()
    assert "Recovery over 2 simulated draws" in body and "<strong>done</strong>" in body


def test_a_failed_run_shows_its_error(cast):
    rs = load_matrix(guttman(3, [1, 2, 1, 0]), name="failing", datasets=["d"] * 4)
    run = service.analysis_run_create(kind="dataset_robustness", response_set=rs)
    with pytest.raises(ValueError):
        service.analysis_run_execute(run=run)
    url = reverse("annotate:analysis_run", kwargs={"analysis_id": run.pk})
    page = client_for(cast["rita"]).get(url).content.decode()
    assert "The run stopped while computing the analysis: groups must hold at least 2 distinct datasets" in page
    assert "http-equiv" not in page


def test_downloads_parse_back_and_need_a_finished_run(rs, cast):
    run = done_run(rs)
    client = client_for(cast["rita"])
    ids = {"analysis_id": run.pk}
    document = json.loads(client.get(reverse("annotate:analysis_run_json", kwargs=ids)).content)
    assert document["result"] == run.result and document["kind"] == "rank_changes"
    response = client.get(reverse("annotate:analysis_run_csv", kwargs=ids))  # the main table, tidy
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    models = pd.read_csv(io.BytesIO(response.content))
    assert list(models.columns[:3]) == ["model", "family", "accuracy"]
    # markup survives as text; no cell starts with a formula character
    assert sorted(models["model"]) == sorted(NAMES)
    assert models["accuracy"].tolist() == [m["accuracy"] for m in run.result["models"]]
    windows = client.get(reverse("annotate:analysis_run_table_csv", kwargs={**ids, "table": "windows"}))
    assert windows["Content-Disposition"] == f'attachment; filename="analysis-{run.pk}-rank_changes-windows.csv"'
    assert pd.read_csv(io.BytesIO(windows.content))["last_accuracy_rank"].tolist() == [
        b["last"] for w in run.result["windows"] for b in w["blocks"]]
    assert client.get(reverse("annotate:analysis_run_table_csv", kwargs={**ids, "table": "nope"})).status_code == 404
    archive = zipfile.ZipFile(io.BytesIO(client.get(reverse("annotate:analysis_run_zip", kwargs=ids)).content))
    assert archive.read("models.csv") == response.content and "codebook.md" in archive.namelist()
    codebook = client.get(reverse("annotate:analysis_run_codebook", kwargs=ids))
    assert codebook["Content-Type"] == "text/markdown; charset=utf-8"
    assert "| `rank_change_eip_higher` | number | rank change (+ = EIP higher) |" in codebook.content.decode()
    png = client.get(reverse("annotate:analysis_run_plot", kwargs={**ids, "fmt": "png"}))
    assert png["Content-Type"] == "image/png" and png.content.startswith(b"\x89PNG")
    assert client.get(reverse("annotate:analysis_run_plot", kwargs={**ids, "fmt": "gif"})).status_code == 404
    queued = service.analysis_run_create(kind="profiles", response_set=rs)
    for name in ("analysis_run_json", "analysis_run_csv", "analysis_run_zip", "analysis_run_codebook"):
        assert client.get(reverse(f"annotate:{name}", kwargs={"analysis_id": queued.pk})).status_code == 404
    table_url = reverse("annotate:analysis_run_table_csv", kwargs={"analysis_id": queued.pk, "table": "models"})
    assert client.get(table_url).status_code == 404


# --- the parameter form: one form, the values on screen (tester's report) -----------------------


def _params_form(body: str) -> str:
    start = body.index('id="params-form"')
    return body[start:body.index("</form>", start)]


def test_it_puts_both_buttons_in_the_form_that_holds_the_visible_fields(rs, cast):
    url = reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"})
    body = client_for(cast["rita"]).get(url).content.decode()
    form = _params_form(body)
    assert 'name="alpha"' in form and 'name="response_set"' in form
    assert 'value="run"' in form and 'value="show"' in form
    assert 'type="hidden" name="alpha"' not in body  # no stale copy of other values


def test_it_runs_with_exactly_the_values_posted_after_showing_other_ones(rs, cast):
    other = load_matrix(R, name="other", datasets=["x"] * 4 + ["y"] * 4)
    url = reverse("annotate:analysis_kind", kwargs={"kind": "profiles"})
    client = client_for(cast["rita"])
    client.get(url, {"response_set": rs.pk, "alpha": "0.85", "group_by": "dataset", "bins": "20"})  # shown
    with override_settings(TASKS=DATABASE):
        response = client.post(url, {"response_set": other.pk, "alpha": "0.6", "group_by": "subject", "bins": "7",
                                     "action": "run"})
    run = AnalysisRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("annotate:analysis_run",
                                                                           kwargs={"analysis_id": run.pk})
    assert run.response_set == other
    assert run.params == {"alpha": 0.6, "bins": 7, "group_by": "subject"}


def test_it_shows_the_stored_result_for_the_posted_values_without_starting_a_run(rs, cast):
    url = reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"})
    response = client_for(cast["rita"]).post(url, {"response_set": rs.pk, "alpha": "0.5", "action": "show"})
    assert response.status_code == 302
    assert response["Location"] == f"{url}?response_set={rs.pk}&alpha=0.5"
    assert not AnalysisRun.objects.exists()


def test_it_preselects_the_newest_scored_response_set_not_the_newest_upload(rs, cast):
    from annotate.models import ScoringRun

    ScoringRun.objects.create(response_set=rs, status=RunStatus.DONE)
    newer = load_matrix(R, name="newer-unscored", datasets=["x"] * 8)
    assert newer.created_at >= rs.created_at
    response = client_for(cast["rita"]).get(reverse("annotate:analysis_kind", kwargs={"kind": "rank_changes"}))
    assert response.context["form"].initial["response_set"] == rs


def test_it_refuses_dataset_robustness_on_one_dataset_and_suggests_subjects(cast):
    one = load_matrix(R, name="one", datasets=["x"] * 8, subjects=["s", "t"] * 4)
    url = reverse("annotate:analysis_kind", kwargs={"kind": "dataset_robustness"})
    with override_settings(TASKS=DATABASE):
        response = client_for(cast["rita"]).post(url, {"response_set": one.pk, "alpha": "0.85",
                                                       "group_by": "dataset", "action": "run"})
    assert response.status_code == 400
    assert "needs at least 2 datasets; response set one" in response.content.decode()
    assert "Group by subject instead." in response.content.decode()
    assert not AnalysisRun.objects.exists()
    page = client_for(cast["rita"]).get(url)  # one dataset: the form starts on subjects
    assert page.context["form"].initial["group_by"] == "subject"
    with override_settings(TASKS=DATABASE):
        ok = client_for(cast["rita"]).post(url, {"response_set": one.pk, "alpha": "0.85", "group_by": "subject"})
    assert ok.status_code == 302 and AnalysisRun.objects.get().params["group_by"] == "subject"


def test_it_prints_whole_ranks_without_decimals_and_says_how_ties_are_ranked(cast):
    # Models m0 < m1 = m1-twin < m2 on a Guttman matrix (the twin is a copy of m1's
    # column). Competition ranking (ties share the best rank of their group):
    # m2 -> 1, m1 and m1-twin span ranks 2 and 3 -> both 2, m0 -> 4.
    G = guttman(3, [0, 1, 2, 1, 2, 0])
    tied = load_matrix(np.column_stack([G, G[:, 1]]), name="ties", datasets=["x"] * 6,
                       models=["m0", "m1", "m2", "m1-twin"])
    run = service.analysis_run_execute(run=service.analysis_run_create(kind="rank_changes", response_set=tied))
    url = reverse("annotate:analysis_run", kwargs={"analysis_id": run.pk})
    page = client_for(cast["rita"]).get(url).content.decode()
    table = page[page.index('id="table-models"'):]
    table = table[:table.index("</table>")]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(<td.*?)</tr>", table)]
    # columns: model, family, accuracy, EIP (0-100), accuracy rank, EIP rank, rank change, ...
    assert {row[0]: row[4] for row in rows} == {"m2": "1", "m1": "2", "m1-twin": "2", "m0": "4"}
    assert {row[0]: row[6] for row in rows} == {"m2": "0", "m1": "0", "m1-twin": "0", "m0": "0"}
    assert "share the best rank of their group" in page


def test_the_rank_filter_keeps_fractions_and_leaves_other_columns_alone():
    from annotate.analyses.services.files import Table
    from annotate.templatetags.annotate_tables import display_rows

    table = Table("t", "t", ("model", "accuracy", "EIP rank", "rank change", "mean |rank change|"),
                  [["a", 1.0, 1.0, -2.0, 1.0], ["b", 0.5, 2.5, 0.5, 1.25]])
    assert display_rows(table) == [["a", "1.0000", "1", "\u22122", "1.0000"], ["b", "0.5000", "2.5", "0.5", "1.2500"]]


def test_coded_columns_show_their_labels_on_the_page_and_keep_keys_in_the_csv():
    from annotate.analyses.services.files import Table, _method_labels
    from annotate.templatetags.annotate_tables import display_rows
    from scoring.methods import get_method, method_keys

    keys = list(method_keys())
    table = Table("t", "t", ("method", "Spearman"), [[k, 0.5] for k in keys], display=_method_labels())
    assert [row[0] for row in display_rows(table)] == [get_method(k).label for k in keys]
    assert any(get_method(k).label != k for k in keys)  # the labels are not the keys
    frame = table.tidy().frame
    assert list(frame.columns) == ["method", "method_label", "spearman"]
    assert list(frame["method"]) == keys and list(frame["method_label"]) == [get_method(k).label for k in keys]
