"""The report's model pools come from a stored pools analysis (issue 11, point 4):
no GET of the report reruns EIP, the stored figures equal what the report
used to compute itself, and without a stored analysis the section says so and
offers to queue one.

Study: the hand-built one of ``test_alignment_service`` (consensus b a b a on
pairs (q0,q1), (q2,q3), (q4,q5), (q6,q7)) with the response matrix ``R`` of
``test_alignment_pools_labels`` (zebrafinch 70B proprietary, marmoset 8B open,
quokka 3B open).
"""
from __future__ import annotations

import json
import sys
from io import StringIO

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.analyses.services import analysis_run_create, analysis_run_execute
from annotate.models import AnalysisKind, AnalysisRun, LanguageModel, Question, RunStatus
from annotate.reports.services import AlignmentReport, alignment_report_compute, study_alignment_report
from scoring import FIRST, SECOND, harder_of_pairs, method_agreement
from scoring.analyses import access_pools, pool_analysis, size_pools
from tests.annotate.factories import MODEL_NAMES, make_user, write_responses
from tests.annotate.reports.test_pools_labels import R
from tests.annotate.reports.test_report import build_study
from tests.annotate.reports.test_schema import SCHEMA, errors

pytestmark = pytest.mark.django_db
TOL = 1e-12
CONSENSUS = np.array([SECOND, FIRST, SECOND, FIRST], dtype=np.int8)  # b a b a
PAIRS = np.array([[0, 1], [2, 3], [4, 5], [6, 7]])


def pool_study():
    study, _ = build_study()
    study.members.add(*get_user_model().objects.filter(groups__name="researcher"))  # e.g. researcher_client's rhea
    run = study.scoring_run
    models = [LanguageModel.objects.get(name=n) for n in MODEL_NAMES]
    for model, size, access in zip(models, (70, 8, 3), ("proprietary", "open_weight", "open_weight")):
        model.parameters_b, model.access = size, access
        model.save()
    questions = list(Question.objects.filter(dataset__in=study.datasets.all()).order_by("pk"))
    write_responses(run.response_set, [(q, m, R[i, j]) for i, q in enumerate(questions) for j, m in enumerate(models)])
    return study


def store_pools(study) -> AnalysisRun:
    return analysis_run_execute(run=analysis_run_create(kind="pools", response_set=study.scoring_run.response_set))


@pytest.fixture
def researcher_client():
    cache.clear()
    rhea = make_user("rhea")
    rhea.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(rhea)
    return client


def refuse_eip(monkeypatch) -> None:
    """Every module's ``eip`` and ``pool_analysis`` raise from now on."""
    targets = {"eip": sys.modules["scoring.eip"].eip,
               "pool_analysis": sys.modules["scoring.analyses.pools"].pool_analysis}

    def refuse(*args, **kwargs):
        raise AssertionError("EIP was run while serving the report")

    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("scoring", "annotate")):
            continue
        for attr, target in targets.items():
            if getattr(module, attr, None) is target:
                monkeypatch.setattr(module, attr, refuse)


def report_gets(study_id: int) -> list[str]:
    kw = {"study_id": study_id}
    return [
        reverse("annotate:study_report", kwargs=kw), reverse("annotate:study_report_json", kwargs=kw),
        reverse("annotate:study_report_csv", kwargs=kw), reverse("annotate:study_report_zip", kwargs=kw),
        *(reverse("annotate:study_report_plot", kwargs={**kw, "name": n, "fmt": "png"})
          for n in ("pools", "agreement")),
    ]


def test_refuse_eip_really_refuses(monkeypatch):
    refuse_eip(monkeypatch)
    with pytest.raises(AssertionError, match="EIP was run"):
        analysis_run_execute(run=analysis_run_create(kind="pools", response_set=pool_study().scoring_run.response_set))


def test_no_get_of_the_report_runs_eip_and_the_pools_equal_a_direct_computation(researcher_client, monkeypatch):
    study = pool_study()
    stored = store_pools(study)  # the worker's job, with the real EIP
    # what the report used to compute during the request: EIP per pool of the run's matrix (alpha 0.85)
    sizes = size_pools([70, 8, 3], thresholds=(10, 70), labels=("small", "medium", "large"))
    access = access_pools(["proprietary", "open-weight", "open-weight"])
    direct = pool_analysis(R, {**sizes.masks, **access.masks}, alpha=0.85)

    refuse_eip(monkeypatch)
    for url in report_gets(study.pk):
        assert researcher_client.get(url + "?n_boot=30").status_code == 200, url
    report_url = reverse("annotate:study_report_json", kwargs={"study_id": study.pk})
    report = researcher_client.get(report_url + "?n_boot=30").json()
    pools = report["pools"]
    assert (pools["status"], pools["analysis_run"], pools["available"], pools["alpha"]) == ("done", stored.pk, True,
                                                                                           0.85)
    assert [p["name"] for p in pools["pools"]] == list(direct.pools)  # whole, small, medium, large, open, proprietary
    for p in pools["pools"]:
        d = direct.pools[p["name"]]
        assert (p["n_models"], p["n_observed"], p["n_all_solved"], p["n_all_failed"]) == (
            d.n_models, d.n_observed, d.n_all_solved, d.n_all_failed), p["name"]
        assert p["share_dead"] == (None if d.share_dead is None else pytest.approx(d.share_dead, abs=TOL))
        for m, c in d.correlations.items():
            assert p["correlations"][m]["value"] == (None if c.value is None else pytest.approx(c.value, abs=TOL))
        if d.eip is None:
            assert p["consensus"] is None and p["undefined_reason"] == d.undefined_reason
            continue
        expected = method_agreement(harder_of_pairs(d.eip.difficulty_scaled, PAIRS), CONSENSUS)
        assert p["consensus"]["agreement"] == pytest.approx(expected.agreement, abs=TOL), p["name"]
        assert p["consensus"]["n_ties"] == expected.n_ties
        kappa = expected.kappa.kappa
        assert p["consensus"]["kappa"]["value"] == (None if kappa is None else pytest.approx(kappa, abs=TOL))
    assert {p["name"] for p in pools["pools"] if p["consensus"] is not None} == {"whole", "small", "open-weight"}


def test_no_get_runs_eip_without_a_stored_analysis_either(researcher_client, monkeypatch):
    study = pool_study()
    refuse_eip(monkeypatch)
    for url in report_gets(study.pk):
        assert researcher_client.get(url + "?n_boot=30").status_code == 200, url


def test_without_a_stored_analysis_the_section_says_not_computed_and_the_rest_renders(researcher_client):
    study = pool_study()
    report = study_alignment_report(study=study, n_boot=20)
    pools = report["pools"]
    assert (pools["available"], pools["status"], pools["pools"], pools["analysis_run"]) == (False, "not_computed",
                                                                                           [], None)
    assert pools["undefined_reason"].startswith("not computed yet: no finished model-pool analysis of response set")
    assert "manage.py paper_report --response-set" in pools["undefined_reason"]
    assert report["consensus_agreement"]["eip"]["agreement"] == 1.0  # the rest is there
    page = researcher_client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=20")
    html = page.content.decode()
    assert "<p>Not computed yet: no finished model-pool analysis" in html
    # said in the folded section's summary and once in its body, not three times
    assert html.count("not computed") + html.count("Not computed") == 2
    assert ('Model pools <span class="muted small">EIP rerun on subsets of the models · not computed yet</span>'
            in html)
    assert 'id="table-pools"' not in html  # no empty table beside the message
    timing = html.split('id="report-timing">')[1].split("</p>")[0]
    assert timing.startswith("Computed in ") and "pools" not in timing  # no time for pools not computed
    assert 'id="compute-pools"' in html
    assert reverse("annotate:study_report_pools", kwargs={"study_id": study.pk}) in html
    assert "Agreement with each evaluator and with the consensus (%)" in html


def test_the_button_queues_the_analysis_and_the_report_reads_it_once_done(researcher_client):
    study = pool_study()
    run = study.scoring_run
    url = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    post = researcher_client.post(reverse("annotate:study_report_pools", kwargs={"study_id": study.pk}),
                                  {"run": run.pk, "query": "n_boot=20"})
    assert post.status_code == 302 and post["Location"] == url + "?n_boot=20"
    [queued] = AnalysisRun.objects.filter(kind=AnalysisKind.POOLS)
    assert (queued.status, queued.response_set_id, queued.params["alpha"]) == (RunStatus.QUEUED,
                                                                                run.response_set_id, 0.85)
    again = researcher_client.post(reverse("annotate:study_report_pools", kwargs={"study_id": study.pk}),
                                   {"run": run.pk})
    assert again.status_code == 302 and AnalysisRun.objects.filter(kind=AnalysisKind.POOLS).count() == 1

    page = researcher_client.get(url + "?n_boot=20").content.decode()
    assert f"<p>The model-pool analysis {queued.pk} of response set" in page
    analysis_run_execute(run=queued)  # the worker
    report_url = reverse("annotate:study_report_json", kwargs={"study_id": study.pk})
    report = researcher_client.get(report_url + "?n_boot=20").json()
    assert (report["pools"]["status"], report["pools"]["analysis_run"]) == ("done", queued.pk)  # the cache refreshed
    assert len(report["pools"]["pools"]) == 6


def test_an_analysis_with_another_alpha_is_not_read(researcher_client):
    study = pool_study()
    analysis_run_execute(run=analysis_run_create(kind="pools", response_set=study.scoring_run.response_set,
                                                 params={"alpha": 0.5}))
    assert study_alignment_report(study=study, n_boot=10)["pools"]["status"] == "not_computed"


def test_the_command_reads_the_stored_analysis(tmp_path):
    study = pool_study()
    stored = store_pools(study)
    out = StringIO()
    call_command("alignment_report", study=study.name, out=str(tmp_path), n_boot=20, stdout=out)
    assert "not computed" not in out.getvalue()
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["pools"]["analysis_run"] == stored.pk


def test_the_typed_report_round_trips_through_its_json_and_matches_the_schema():
    study = pool_study()
    store_pools(study)
    report = alignment_report_compute(study=study, n_boot=30)
    document = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert errors(document, SCHEMA) == []
    assert AlignmentReport.from_json(document) == report
    assert document["pools"]["pools"][0]["name"] == report.pools.pools[0].name == "whole"
    same = study_alignment_report(study=study, n_boot=30)
    assert {k: v for k, v in same.items() if k not in ("generated_at", "timing")} == {
        k: v for k, v in document.items() if k not in ("generated_at", "timing")}


def test_the_pools_plot_is_offered_only_once_the_analysis_is_stored(researcher_client):
    study = pool_study()
    url = reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=20"
    assert "plots/pools.png" not in researcher_client.get(url).content.decode()
    store_pools(study)
    assert "plots/pools.png" in researcher_client.get(url).content.decode()
