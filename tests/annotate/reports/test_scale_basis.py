"""Each correlation with the human scale says on how many judged questions and components it was computed, where
it is shown (the forest plot's caption and axis, the scatter plots' titles), and a fragmented scale (largest
component under half the judged questions) is called not meaningful there and in the scale's section.

Cast: a hand-made study of 11 Mathematics questions x0..x10 judged by two evaluators: a triangle x0-x1-x2 (one
component of 3) and four disjoint pairs x3-x4, x5-x6, x7-x8, x9-x10 (four components of 2). Correlations are taken
within components of 3 or more questions, so every rho rests on the 3 questions of the triangle: 3 of the 11
judged questions, in 1 of 5 components; the largest component holds 3 < 11 / 2 of them.
"""
from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotate.models import Judgment, Pair, QuestionResult, Study
from annotate.reports.services import alignment_report_compute
from annotate.reports.services.headline import report_headline, uncertainty_notes
from annotate.reports.services.report_files import plot_human_scale
from annotate.reports.services.tables_crowd import crowd_methods_table
from tests.annotate.factories import make_catalog, make_evaluator, make_user
from tests.annotate.reports.test_human_scale import build_study

pytestmark = pytest.mark.django_db

PAIRS = ((0, 1), (1, 2), (0, 2), (3, 4), (5, 6), (7, 8), (9, 10))


def fragmented_study() -> Study:
    catalog = make_catalog(subjects=("Mathematics",), per_subject=11)
    q = catalog.questions
    for k, question in enumerate(q):
        QuestionResult.objects.filter(run=catalog.run, question=question).update(scores={
            "eip_scaled": 10.0 * k, "simple_rank": 0.1 * k, "accuracy_difficulty": 0.05 * k,
            "irt_1pl": 0.2 * k, "irt_2pl": 0.2 * k,
        })
    study = Study.objects.create(name="Fragmented", scoring_run=catalog.run, seed=0, n_pairs=len(PAIRS))
    study.datasets.set([catalog.dataset])
    study.subjects.set(catalog.subjects)
    people = [make_evaluator(study, "ann"), make_evaluator(study, "ben")]
    now = timezone.now()
    for position, (a, b) in enumerate(PAIRS):
        pair = Pair.objects.create(study=study, position=position, question_a=q[a], question_b=q[b])
        for k, who in enumerate(people):
            # not simply the run's order, so rho is not 1 everywhere; ben differs from ann on the disjoint pairs
            harder = q[b] if ((a + position) % 3 == 0) == (k == 1 and position >= 3) else q[a]
            Judgment.objects.create(participation=who, pair=pair, choice="left" if harder == q[a] else "right",
                                    left_question=q[a], harder_question=harder, shown_at=now, submitted_at=now,
                                    seconds=3.0)
    return study


def scale_panel(report):
    return next(p for p in report_headline(report).panels if p.key == "human_scale")


def test_a_fragmented_scale_says_its_few_questions_and_that_rho_is_not_meaningful():
    study = fragmented_study()
    report = alignment_report_compute(study=study, n_boot=30, rng=1)
    hs = report.human_scale
    assert (hs.n_questions, hs.n_components, sorted(hs.component_sizes)) == (11, 5, [2, 2, 2, 2, 3])
    overall = [r.spearman for r in hs.methods if r.scope == "overall"]
    assert {(r.n, r.n_components) for r in overall} == {(3, 1)}

    panel = scale_panel(report)
    assert panel.note == (
        "Spearman ρ on 3 of the 11 judged questions, in 1 of 5 components (within components of 3 or more "
        "questions); bootstrap interval (evaluators resampled); 0 = no relation; the scale is fragmented (its "
        "largest component holds 3 of the 11 judged questions), so these correlations are not meaningful")
    assert panel.axis == "Spearman ρ with the human scale\nfragmented scale: not meaningful"
    warning = ("The human scale is fragmented: its 11 judged questions fall into 5 connected components and the "
               "largest holds only 3. Values of different components are not comparable, so a correlation with "
               "the scale rests on a few small pieces and is not meaningful; more votes that link the pieces are "
               "needed.")
    assert warning in uncertainty_notes(report)["human_scale"]

    titles = [ax.get_title() for ax in plot_human_scale(report).axes]
    rhos = {r.method: r.spearman.value for r in hs.methods if r.scope == "overall"}
    assert sum(v is not None for v in rhos.values()) >= 3
    expected = []
    for m in report.available:
        if rhos[m.key] is None:
            expected.append(f"{m.label}\nρ undefined\nfragmented scale: ρ not meaningful")
        else:
            expected.append(f"{m.label}\nρ = {rhos[m.key]:.2f} on 3 of the 11 judged questions,\nin 1 of 5 "
                            "components\nfragmented scale: ρ not meaningful")
    assert titles == expected

    crowd = crowd_methods_table(report)
    assert warning in crowd.notes
    header = [c.key for c in crowd.columns]
    for row in crowd.rows:
        for side in ("unweighted", "weighted"):
            assert row[header.index(f"scale_questions_{side}")].value == 3

    cache.clear()
    client = Client()
    client.force_login(make_user("root", staff=True))
    html = client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}), {"n_boot": 20}).content.decode()
    assert "Spearman ρ on 3 of the 11 judged questions, in 1 of 5 components" in html  # the forest's caption
    assert warning in html  # in the scale's section


def test_a_connected_enough_scale_says_its_basis_and_no_warning():
    """The hand-made study of test_human_scale: 7 judged questions in components of 4 and 3, both used."""
    study, _ = build_study()
    report = alignment_report_compute(study=study, n_boot=30, rng=3)
    hs = report.human_scale
    assert (hs.n_questions, sorted(hs.component_sizes)) == (7, [3, 4])
    panel = scale_panel(report)
    assert panel.note == ("Spearman ρ on 7 of the 7 judged questions, in 2 of 2 components (within components of 3 "
                          "or more questions); bootstrap interval (evaluators resampled); 0 = no relation")
    assert panel.axis == "Spearman ρ with the human scale"
    assert not any("fragmented" in n for n in uncertainty_notes(report).get("human_scale", ()))
    titles = [ax.get_title() for ax in plot_human_scale(report).axes]
    assert all(t.endswith(("on 7 of the 7 judged questions,\nin 2 of 2 components", "ρ undefined"))
               for t in titles), titles
    assert "fragmented" not in "".join(titles)
