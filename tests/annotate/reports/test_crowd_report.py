"""Judges weighted by reliability in the alignment report (``crowd=True``): the
crowd section equals a direct fit of :func:`scoring.crowd_bt.crowd_bradley_terry`
on the same votes; spammers get lower reliabilities; the page, the zip, the
codebook and the JSON carry it, and a report without the option has none.

A simulated study: two subjects of six questions, the six ordered by the
run's EIP difficulty (``difficulty_of``: increasing with the index). Careful
evaluators ``ann``, ``ben``, ``cat``, ``dan`` call the harder question by a
Bradley-Terry draw on the true order (1.2 logits per rank); spammers ``sam`` and
``sue`` click at random. Everyone judges every pair once.
"""
from __future__ import annotations

import csv
import io
import math
import zipfile
from fractions import Fraction

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from scipy import stats

from annotate.models import Judgment, Pair, Participation, QuestionResult
from annotate.reports.services import alignment_report_compute
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.report_files import report_files
from scoring.crowd_bt import crowd_bradley_terry
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user
from tests.annotate.reports.test_schema import SCHEMA, errors

pytestmark = pytest.mark.django_db

CAREFUL = ("ann", "ben", "cat", "dan")
SPAMMERS = ("sam", "sue")
PER_SUBJECT = 6
N_BOOT = 50


def build_study(seed: int = 7):
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=PER_SUBJECT)
    study = make_study(catalog, n_pairs=30, seed=3)  # every same-subject pair: 15 + 15
    rank = {q.pk: k % PER_SUBJECT for k, q in enumerate(catalog.questions)}
    rng = np.random.default_rng(seed)
    now = timezone.now()
    pairs = list(Pair.objects.filter(study=study).select_related("question_a", "question_b").order_by("position"))
    for name in (*CAREFUL, *SPAMMERS):
        participation = make_evaluator(study, name)
        for pair in pairs:
            a, b = pair.question_a, pair.question_b
            if name in SPAMMERS:
                harder = a if rng.random() < 0.5 else b
            else:
                p_a = 1 / (1 + math.exp(-1.2 * (rank[a.pk] - rank[b.pk])))
                harder = a if rng.random() < p_a else b
            left = a if rng.random() < 0.5 else b
            Judgment.objects.create(participation=participation, pair=pair, left_question=left, harder_question=harder,
                                    choice="left" if harder == left else "right", shown_at=now, submitted_at=now,
                                    seconds=4.0)
    return catalog, study


@pytest.fixture
def built():
    return build_study()


def direct_fit(study):
    """The votes read straight from the database, fitted by scoring.crowd_bt (questions by id, evaluators in
    order of joining, votes by pair then evaluator)."""
    pairs = {p.pk: p for p in Pair.objects.filter(study=study, attention_check=False)}
    question_ids = sorted({q for p in pairs.values() for q in (p.question_a_id, p.question_b_id)})
    item = {q: i for i, q in enumerate(question_ids)}
    people = list(Participation.objects.filter(study=study, judgments__isnull=False).distinct()
                  .order_by("created_at", "id"))
    who = {p.pk: i for i, p in enumerate(people)}
    votes = list(Judgment.objects.filter(pair__study=study, harder_question__isnull=False)
                 .order_by("pair_id", "participation_id"))
    harder = [item[j.harder_question_id] for j in votes]
    other = [item[pairs[j.pair_id].question_b_id if j.harder_question_id == pairs[j.pair_id].question_a_id
                  else pairs[j.pair_id].question_a_id] for j in votes]
    evaluator = [who[j.participation_id] for j in votes]
    fit = crowd_bradley_terry(harder, other, evaluator, n_items=len(question_ids), n_evaluators=len(people),
                              penalty=0.1, ci_level=0.95)
    return fit, people, votes, pairs, question_ids


def test_the_crowd_section_equals_a_direct_fit_on_the_same_votes(built):
    catalog, study = built
    report = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True)
    section = report.crowd
    assert section is not None and section.available and section.converged
    fit, people, votes, pairs, question_ids = direct_fit(study)
    assert section.n_votes == len(votes) == 6 * 30
    rows = {e.pseudonym: e for e in section.evaluators}
    for i, person in enumerate(people):
        row = rows[person.user.username]
        assert row.id == person.pk and row.n_judgments == int(fit.n_judgments[i]) == 30
        assert row.reliability == pytest.approx(float(fit.reliability[i]), abs=1e-9)
        assert row.reliability_ci == pytest.approx((float(fit.reliability_low[i]), float(fit.reliability_high[i])),
                                                   abs=1e-9)
    weighted = {q.id: q.difficulty_weighted for q in section.questions}
    assert sorted(weighted) == question_ids
    for i, q in enumerate(question_ids):
        assert weighted[q] == pytest.approx(float(fit.difficulty[i]), abs=1e-9)

    # The weighted consensus, in exact arithmetic: each vote counts its evaluator's reliability.
    eta = {p.pk: Fraction(float(fit.reliability[i])) for i, p in enumerate(people)}
    total = {}
    for j in votes:
        sign = 1 if j.harder_question_id == pairs[j.pair_id].question_a_id else -1
        total[j.pair_id] = total.get(j.pair_id, Fraction(0)) + sign * eta[j.participation_id]
    eip = dict(QuestionResult.objects.filter(run=catalog.run).values_list("question_id", "scores__eip_scaled"))
    decided = {p: t > 0 for p, t in total.items() if t != 0}  # True: question_a judged harder
    agree = sum((eip[pairs[p].question_a_id] > eip[pairs[p].question_b_id]) == a_harder
                for p, a_harder in decided.items())
    [eip_row] = [m for m in section.methods if m.method == "eip"]
    assert section.n_pairs_consensus_weighted == len(decided) == eip_row.weighted.n_pairs
    assert eip_row.weighted.n_agree == agree
    assert eip_row.weighted.consensus_agreement == pytest.approx(agree / len(decided), abs=1e-12)

    # Unweighted: the report's own consensus agreement, shown as is.
    assert eip_row.unweighted.consensus_agreement == report.consensus_agreement["eip"].agreement
    assert eip_row.unweighted.n_pairs == report.consensus_agreement["eip"].n_pairs

    # Weighted scale against EIP: Spearman per subject (each its own component), the mean weighted by questions.
    subject_of = {q.pk: q.subject_id for q in catalog.questions}
    rhos, sizes = [], []
    for subject in {subject_of[q] for q in question_ids}:
        ids = [q for q in question_ids if subject_of[q] == subject]
        rhos.append(stats.spearmanr([weighted[q] for q in ids], [eip[q] for q in ids]).statistic)
        sizes.append(len(ids))
    assert eip_row.weighted.scale_spearman == pytest.approx(float(np.average(rhos, weights=sizes)), abs=1e-9)
    assert eip_row.weighted.n_questions == len(question_ids)


def test_spammers_get_lower_reliability_than_careful_judges(built):
    _, study = built
    section = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True).crowd
    eta = {e.pseudonym: e for e in section.evaluators}
    careful = [eta[name] for name in CAREFUL]
    spammers = [eta[name] for name in SPAMMERS]
    assert len(careful) == 4 and len(spammers) == 2
    assert max(s.reliability for s in spammers) < min(c.reliability for c in careful)
    for e in (*careful, *spammers):
        low, high = e.reliability_ci
        assert 0.0 <= low <= e.reliability <= high <= 1.0


def _owner_client():
    client = Client()
    client.force_login(make_user("owner", staff=True))
    return client


def test_the_page_folds_the_section_with_its_downloads_and_the_zip_and_codebook_carry_it(built):
    _, study = built
    client = _owner_client()
    url = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    page = client.get(url, {"n_boot": N_BOOT, "crowd": "on"}).content.decode()
    section = page.split('<details class="report-section" id="section-crowd">')[1].split("</details>")[0]
    report = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True)
    for e in report.crowd.evaluators:
        assert e.pseudonym in section and f"{e.reliability:.3f}" in section
    assert "Judges weighted by reliability" in section
    csv_url = reverse("annotate:study_report_table_csv", kwargs={"study_id": study.pk, "key": "crowd_evaluators"})
    assert f'href="{csv_url}?n_boot={N_BOOT}&amp;crowd=on"' in section
    rows = list(csv.DictReader(io.StringIO(client.get(csv_url, {"n_boot": N_BOOT, "crowd": "on"})
                                           .content.decode("utf-8-sig"))))
    assert {r["pseudonym"]: float(r["reliability"]) for r in rows} == pytest.approx(
        {e.pseudonym: e.reliability for e in report.crowd.evaluators}, abs=1e-12)
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(
        reverse("annotate:study_report_zip", kwargs={"study_id": study.pk}),
        {"n_boot": N_BOOT, "crowd": "on"}).streaming_content)))
    names = set(archive.namelist())
    assert {"crowd_evaluators.csv", "crowd_methods.csv", "crowd_questions.csv"} <= names
    codebook = archive.read("codebook.md").decode()
    for key in ("crowd_evaluators", "crowd_methods", "crowd_questions"):
        assert f"## {key}.csv" in codebook
    assert "| reliability_low | profile-likelihood interval, lower end |" in codebook
    methods = list(csv.DictReader(io.StringIO(archive.read("crowd_methods.csv").decode("utf-8-sig"))))
    assert [m["method"] for m in methods] == [m.method for m in report.crowd.methods]
    assert {"consensus_agreement_unweighted", "consensus_agreement_weighted", "scale_spearman_unweighted",
            "scale_spearman_weighted"} <= set(methods[0])


def test_the_json_has_the_section_and_validates_against_the_schema(built):
    _, study = built
    report = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True)
    document = report.to_json()
    assert document["params"]["crowd"] is True
    assert AlignmentReport.from_json(document).crowd == report.crowd  # the zip's files are written from the JSON too
    assert {"evaluators", "methods", "questions"} <= set(document["crowd"])
    assert errors(document, SCHEMA) == []


def test_a_report_without_the_option_has_no_crowd_section_and_is_otherwise_the_same(built):
    _, study = built
    plain = alignment_report_compute(study=study, n_boot=N_BOOT)
    crowd = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True)
    assert plain.crowd is None and plain.params.crowd is None
    without, with_ = plain.to_json(), crowd.to_json()
    assert "crowd" not in without and "crowd" not in without["params"]
    for document in (without, with_):
        for volatile in ("generated_at", "timing", "crowd"):
            document.pop(volatile, None)
        document["params"].pop("crowd", None)
    assert without == with_
    files = report_files(plain, [])
    assert not [name for name in files if name.startswith("crowd")]
    codebook = files["codebook.md"].decode()
    assert "crowd_" not in codebook and "weighted by reliability" not in codebook
    page = _owner_client().get(reverse("annotate:study_report", kwargs={"study_id": study.pk}),
                               {"n_boot": N_BOOT}).content.decode()
    assert 'id="section-crowd"' not in page and 'name="crowd"' in page  # the option is offered, not shown


def test_a_study_without_votes_says_why_there_is_no_crowd_model():
    study = make_study(make_catalog(per_subject=4), n_pairs=4)
    section = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True).crowd
    assert not section.available and section.undefined_reason == "no evaluator has voted yet (skips are not votes)"
    assert section.evaluators == () and section.methods == ()


def test_a_fit_that_does_not_converge_leaves_the_section_undefined_with_the_reason(built, monkeypatch):
    import scoring.crowd_bt
    from scoring.exceptions import ConvergenceError

    def refuse(*args, **kwargs):
        raise ConvergenceError("crowd Bradley-Terry", n_iter=500, residual=2e-3, tol=1e-6)

    monkeypatch.setattr(scoring.crowd_bt, "crowd_bradley_terry", refuse)
    _, study = built
    report = alignment_report_compute(study=study, n_boot=N_BOOT, crowd=True)
    assert not report.crowd.available
    assert report.crowd.undefined_reason.startswith(
        "the crowd model could not be fitted: crowd Bradley-Terry did not converge: residual 2.000e-03 > tol 1.0e-06")
    assert report.crowd.methods == () and report.consensus_agreement  # the rest of the report is there
