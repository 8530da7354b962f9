"""The human difficulty scale in the alignment report (issue 15, points 1-2), end to end on a hand-made study.

Two subjects, each its own connected component of the comparison graph:
Mathematics m0..m3 (six pairs, every pair of the four) and Physics p0..p2 (three pairs); p3 is only in an
attention-check pair. Votes ("x>y" = x judged harder)::

    ann  m1>m0 m2>m1 m3>m2 m2>m0 m3>m1 m3>m0 | p1>p0 p2>p1 p2>p0 | attention p3>p0
    ben  m1>m0 m1>m2 m3>m2 m2>m0 m3>m1 m0>m3 | p1>p0 p1>p2 p2>p0
    cat  m0>m1 m2>m1 m3>m2 m2>m0 (skip)  m3>m0 | p0>p1 p2>p1 p2>p0
    eve  every vote reversed, then excluded by the researcher (in no figure)

Pairs are stored in mixed orientations (question_a is sometimes the harder one, sometimes not), and the judging
page's left/right is translated back, so nothing depends on which question a pair stores first.

The expected scale is fitted here independently: scipy's BFGS on the penalised Bradley-Terry log-likelihood
(penalty 0.1, the report's), per subject; the expected standard errors come from the analytic Hessian written
judgment by judgment, restricted to the sum-to-zero subspace; the correlations from scipy.stats, per subject,
overall as the mean weighted by questions (4 and 3).
"""
from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from scipy import optimize, stats

from annotate.models import Judgment, Pair, QuestionResult, Study
from annotate.reports.services import alignment_report_compute
from annotate.reports.services.report_files import render_plot, report_files
from tests.annotate.factories import make_catalog, make_evaluator, make_user
from tests.annotate.reports.test_schema import SCHEMA, errors

pytestmark = pytest.mark.django_db

NAMES = ("m0", "m1", "m2", "m3", "p0", "p1", "p2", "p3")
EIP = {"m0": 10, "m1": 30, "m2": 20, "m3": 40, "p0": 50, "p1": 70, "p2": 60, "p3": 80}
SIMPLE = {"m0": 0.1, "m1": 0.2, "m2": 0.3, "m3": 0.4, "p0": 0.3, "p1": 0.1, "p2": 0.2, "p3": 0.5}
PAIRS = (("m0", "m1"), ("m2", "m1"), ("m2", "m3"), ("m0", "m2"), ("m3", "m1"), ("m0", "m3"),
         ("p0", "p1"), ("p2", "p1"), ("p0", "p2"))
VOTES = {
    "ann": ("m1>m0", "m2>m1", "m3>m2", "m2>m0", "m3>m1", "m3>m0", "p1>p0", "p2>p1", "p2>p0"),
    "ben": ("m1>m0", "m1>m2", "m3>m2", "m2>m0", "m3>m1", "m0>m3", "p1>p0", "p1>p2", "p2>p0"),
    "cat": ("m0>m1", "m2>m1", "m3>m2", "m2>m0", "m3>m0", "p0>p1", "p2>p1", "p2>p0"),
}
EVE = ("m0>m1", "m1>m2", "m2>m3", "m0>m2", "m1>m3", "m0>m3", "p0>p1", "p1>p2", "p0>p2")
PENALTY = 0.1


def _judge(participation, pair, harder_name, q, now, *, left_is_a):
    left = pair.question_a if left_is_a else pair.question_b
    if harder_name is None:
        pressed, harder = "skip", None
    else:
        harder = q[harder_name]
        pressed = "left" if harder == left else "right"
    Judgment.objects.create(participation=participation, pair=pair, choice=pressed, left_question=left,
                            harder_question=harder, shown_at=now, submitted_at=now, seconds=3.0)


def build_study():
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=4)
    q = dict(zip(NAMES, catalog.questions, strict=True))
    for name, question in q.items():
        QuestionResult.objects.filter(run=catalog.run, question=question).update(scores={
            "eip_scaled": EIP[name], "simple_rank": SIMPLE[name], "accuracy_difficulty": SIMPLE[name],
            "irt_1pl": EIP[name], "irt_2pl": EIP[name],
        })
    study = Study.objects.create(name="Scale", scoring_run=catalog.run, seed=0, n_pairs=len(PAIRS))
    study.datasets.set([catalog.dataset])
    study.subjects.set(catalog.subjects)
    pairs = {frozenset(p): Pair.objects.create(study=study, position=k, question_a=q[p[0]], question_b=q[p[1]])
             for k, p in enumerate(PAIRS)}
    attention = Pair.objects.create(study=study, position=len(PAIRS), question_a=q["p0"], question_b=q["p3"],
                                    attention_check=True, expected_harder=q["p3"])
    now = timezone.now()
    people = {name: make_evaluator(study, name) for name in (*VOTES, "eve")}
    for k, (name, votes) in enumerate([*VOTES.items(), ("eve", EVE)]):
        for j, vote in enumerate(votes):
            harder, other = vote.split(">")
            _judge(people[name], pairs[frozenset((harder, other))], harder, q, now, left_is_a=(j + k) % 2 == 0)
    _judge(people["cat"], pairs[frozenset(("m3", "m1"))], None, q, now, left_is_a=True)
    _judge(people["ann"], attention, "p3", q, now, left_is_a=False)
    people["eve"].excluded_at = now
    people["eve"].exclusion_reason = "reversed every vote"
    people["eve"].save()
    return study, q


def _expected_scale(names):
    """Penalised Bradley-Terry by BFGS, and SEs from the Hessian written judgment by judgment."""
    votes = [v.split(">") for vs in VOTES.values() for v in vs if v.split(">")[0] in names]
    index = {n: i for i, n in enumerate(names)}
    pairs = [(index[h], index[o]) for h, o in votes]

    def loss(b):
        return sum(math.log1p(math.exp(-(b[h] - b[o]))) for h, o in pairs) + PENALTY / 2 * float(b @ b)

    b = optimize.minimize(loss, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10}).x
    hess = PENALTY * np.eye(len(names))
    for h, o in pairs:
        p = 1 / (1 + math.exp(-(b[h] - b[o])))
        e = np.zeros(len(names))
        e[h], e[o] = 1, -1
        hess += p * (1 - p) * np.outer(e, e)
    basis = np.linalg.qr(np.column_stack([np.ones(len(names)), np.eye(len(names))[:, :-1]]))[0][:, 1:]
    cov = basis @ np.linalg.inv(basis.T @ hess @ basis) @ basis.T
    return b, np.sqrt(np.diag(cov))


@pytest.fixture(scope="module")
def expected():
    return {"Mathematics": _expected_scale(["m0", "m1", "m2", "m3"]), "Physics": _expected_scale(["p0", "p1", "p2"])}


@pytest.fixture
def built():
    return build_study()


@pytest.fixture
def report(built):
    study, _ = built
    return alignment_report_compute(study=study, n_boot=60, rng=3)


def _by_external(report, q):
    ext = {question.external_id: name for name, question in q.items()}
    return {ext[row.question.external_id]: row for row in report.human_scale.questions}


def test_the_scale_is_the_penalised_bradley_terry_fit_of_the_kept_votes(built, report, expected):
    _, q = built
    hs = report.human_scale
    assert hs.available and hs.n_votes == 26  # 9 + 9 + 8: skips, the attention check and eve are left out
    rows = _by_external(report, q)
    assert sorted(rows) == ["m0", "m1", "m2", "m3", "p0", "p1", "p2"]  # p3 is only in the attention check
    for subject, names in (("Mathematics", ["m0", "m1", "m2", "m3"]), ("Physics", ["p0", "p1", "p2"])):
        b, se = expected[subject]
        assert [rows[n].difficulty for n in names] == pytest.approx(list(b), abs=1e-5)
        assert [rows[n].se for n in names] == pytest.approx(list(se), abs=1e-5)
        assert sum(rows[n].difficulty for n in names) == pytest.approx(0.0, abs=1e-9)
        assert all(rows[n].ci[0] <= rows[n].ci[1] for n in names)
    assert hs.n_components == 2 and hs.component_sizes == (4, 3)
    assert len(hs.warnings) == 1 and "2 connected components" in hs.warnings[0]
    values = np.array([rows[n].difficulty for n in rows])
    ses = np.array([rows[n].se for n in rows])
    assert hs.ssr == pytest.approx((values.var(ddof=1) - (ses**2).mean()) / values.var(ddof=1), abs=1e-9)
    assert [e.pseudonym for e in hs.evaluators] == ["ann", "ben", "cat"]
    assert [e.n_votes for e in hs.evaluators] == [9, 9, 8]
    assert hs.n_evaluators_flagged == sum(e.misfit for e in hs.evaluators)
    assert all(e.misfit == (e.infit > hs.misfit_threshold) for e in hs.evaluators)


def test_each_method_is_correlated_with_the_scale_overall_and_per_subject(report, expected):
    rows = {(r.method, r.scope): r for r in report.human_scale.methods}
    available = [m.key for m in report.available]
    assert sorted({k for k, _ in rows}) == sorted(available)
    assert {s for _, s in rows} == {"overall", "Mathematics", "Physics"}
    order = {"Mathematics": ["m0", "m1", "m2", "m3"], "Physics": ["p0", "p1", "p2"]}
    for method, values in (("eip", EIP), ("simple_rank", SIMPLE)):
        per = {}
        for subject, names in order.items():
            human = expected[subject][0]
            per[subject] = (stats.spearmanr(human, [values[n] for n in names]).statistic,
                            stats.kendalltau(human, [values[n] for n in names]).statistic)
            got = rows[(method, subject)]
            assert got.spearman.value == pytest.approx(per[subject][0], abs=1e-9)
            assert got.kendall.value == pytest.approx(per[subject][1], abs=1e-9)
            assert got.spearman.n == len(names)
        overall = rows[(method, "overall")]
        assert overall.spearman.value == pytest.approx((4 * per["Mathematics"][0] + 3 * per["Physics"][0]) / 7,
                                                       abs=1e-9)
        assert overall.kendall.value == pytest.approx((4 * per["Mathematics"][1] + 3 * per["Physics"][1]) / 7,
                                                      abs=1e-9)
        assert overall.spearman.n == 7 and overall.spearman.n_components == 2
        low, high = overall.spearman.ci
        assert -1 <= low <= high <= 1


def test_the_scale_is_in_the_json_csv_page_and_plot(built, report):
    study, q = built
    document = report.to_json()
    assert errors(document, SCHEMA) == []
    assert document["human_scale"]["n_votes"] == 26
    files = report_files(report, [])
    scale_rows = list(csv.DictReader(io.StringIO(files["human_scale.csv"].decode())))
    assert len(scale_rows) == 7
    by_id = {int(r["question_pk"]): r for r in scale_rows}
    rows = _by_external(report, q)
    assert float(by_id[q["m3"].pk]["difficulty"]) == pytest.approx(rows["m3"].difficulty, abs=1e-12)
    method_rows = list(csv.DictReader(io.StringIO(files["human_scale_methods.csv"].decode())))
    assert len(method_rows) == 3 * len(report.available)
    summary = list(csv.DictReader(io.StringIO(files["human_scale_summary.csv"].decode())))
    assert [r["n_components"] for r in summary] == ["2"]
    evaluators = list(csv.DictReader(io.StringIO(files["human_scale_evaluators.csv"].decode())))
    assert [r["pseudonym"] for r in evaluators] == ["ann", "ben", "cat"]
    assert render_plot(report, name="human_scale", fmt="png").startswith(b"\x89PNG")

    cache.clear()
    rhea = make_user("rhea")
    rhea.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(rhea)  # a researcher sees the studies they own or were added to
    client = Client()
    client.force_login(rhea)
    page = client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}), {"n_boot": 40})
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="human-scale-summary"' in html and 'id="table-human_scale_methods"' in html
    assert 'id="human-scale-warning"' in html
    assert "plots/human_scale.png" in html


def test_reversing_every_pair_changes_no_figure_of_the_scale(built, report):
    study, _ = built
    for pair in Pair.objects.filter(study=study, attention_check=False):
        pair.question_a, pair.question_b = pair.question_b, pair.question_a
        pair.save()
    again = alignment_report_compute(study=study, n_boot=60, rng=3).human_scale
    before = report.human_scale
    assert again.to_json()["questions"] == before.to_json()["questions"]
    assert again.to_json()["methods"] == before.to_json()["methods"]
    assert (again.ssr, again.split_half, again.n_components) == (before.ssr, before.split_half, before.n_components)
