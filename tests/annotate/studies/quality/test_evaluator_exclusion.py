"""Excluding an evaluator from analyses: audited, reversible, judgments kept;
the report leaves them out of every number exactly as if their judgments
were gone, and lists them (page, CSV, JSON).

Cast: ``owner`` (staff), evaluators ``ada`` and ``bob`` (call question a harder
on every pair) and ``cy`` (calls question b harder on every pair).
"""
from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Assignment, ExclusionAction, ExclusionEvent, Judgment, Participation
from annotate.reports.services.live import study_live_counts
from annotate.reports.services.report import alignment_report_compute
from annotate.studies.services.study_quality import ERR_REASON_EMPTY, participation_exclude, participation_restore
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user
from tests.annotate.studies.quality.helpers import answer_all

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
REASON = "median 2 s per vote; failed both attention checks"


@pytest.fixture(autouse=True)
def _no_cached_reports():
    cache.clear()


@pytest.fixture
def cast():
    study = make_study(make_catalog(per_subject=4), n_pairs=4, name="Excl")
    ada, bob, cy = (make_evaluator(study, name) for name in ("ada", "bob", "cy"))
    for evaluator in (ada, bob):
        answer_all(evaluator, lambda pair: pair.question_a_id, start=START)
    answer_all(cy, lambda pair: pair.question_b_id, start=START)
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    return study, owner, client, cy


def comparable(report) -> dict:
    """The report's numbers: everything but the time stamps and the exclusion list."""
    doc = report.to_json()
    for key in ("generated_at", "timing", "excluded_evaluators"):
        doc.pop(key)
    return doc


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def exclude(client, study, participation, reason=REASON):
    url = reverse("annotate:study_evaluator_exclude", kwargs={"study_id": study.pk,
                                                              "participation_id": participation.pk})
    return client.post(url, {"reason": reason})


def test_live_counts_before_and_after_excluding(cast):
    study, _, client, cy = cast
    live = study_live_counts(study=study)
    # Both orders of each pair (orientation-free): 8 units, each with two votes one way and one the other;
    # D_o = 16/24, D_e = 2 * 12 * 12 / (24 * 23) = 12/23, alpha = 1 - (2/3) / (12/23) = -5/18.
    assert (live.n_votes, live.n_skips, live.n_pairs, live.n_consensus) == (12, 0, 4, 4)
    assert live.alpha.value == pytest.approx(-5 / 18, abs=1e-12)
    exclude(client, study, cy)
    live = study_live_counts(study=study)
    # ada and bob agree on every pair: D_o = 0, alpha = 1.
    assert (live.n_votes, live.n_consensus) == (8, 4)
    assert live.alpha.value == pytest.approx(1.0, abs=1e-12)


def test_the_report_equals_the_report_without_their_judgments(cast):
    study, _, client, cy = cast
    before = comparable(alignment_report_compute(study=study, n_boot=200, rng=5))
    assert exclude(client, study, cy).status_code == 302
    excluded = alignment_report_compute(study=study, n_boot=200, rng=5)
    assert comparable(excluded) != before
    assert excluded.study.n_votes == 8 and excluded.study.n_evaluators == 2
    assert [e.pseudonym for e in excluded.evaluators] == ["ada", "bob"]
    [row] = excluded.excluded_evaluators
    assert (row.id, row.pseudonym, row.excluded_by, row.reason, row.n_judgments) == (cy.pk, "cy", "owner", REASON, 4)

    Judgment.objects.filter(participation=cy).delete()  # the same study with cy's judgments really gone
    Assignment.objects.filter(participation=cy).delete()
    Participation.objects.filter(pk=cy.pk).delete()
    removed = alignment_report_compute(study=study, n_boot=200, rng=5)
    assert comparable(excluded) == comparable(removed)
    assert removed.excluded_evaluators == ()


def test_the_judgments_are_kept_and_the_report_lists_the_exclusion(cast):
    study, _, client, cy = cast
    report_url = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    assert "Evaluators excluded" not in client.get(report_url).content.decode()  # now cached
    exclude(client, study, cy)
    assert Judgment.objects.filter(participation=cy).count() == 4

    page = client.get(report_url).content.decode()  # the exclusion changes the cache key
    assert "Evaluators excluded from the analyses" in page and REASON in page
    document = json.loads(body(client.get(reverse("annotate:study_report_json", kwargs={"study_id": study.pk}))))
    [listed] = document["excluded_evaluators"]
    assert {k: listed[k] for k in ("id", "pseudonym", "excluded_by", "reason", "n_judgments")} == {
        "id": cy.pk, "pseudonym": "cy", "excluded_by": "owner", "reason": REASON, "n_judgments": 4}
    assert document["study"]["n_votes"] == 8

    archive = zipfile.ZipFile(io.BytesIO(body(client.get(
        reverse("annotate:study_report_zip", kwargs={"study_id": study.pk})))))
    rows = list(csv.DictReader(io.StringIO(archive.read("excluded_evaluators.csv").decode())))
    assert [(r["pseudonym"], r["excluded_by"], r["reason"], r["n_judgments"]) for r in rows] == [
        ("cy", "owner", REASON, "4")]
    judgments = list(csv.DictReader(io.StringIO(body(client.get(
        reverse("annotate:study_judgments_csv", kwargs={"study_id": study.pk}))).decode())))
    assert len(judgments) == 12
    assert sorted((r["evaluator"], r["evaluator_excluded"]) for r in judgments)[::4] == [
        ("ada", "0"), ("bob", "0"), ("cy", "1")]


def test_it_is_audited_and_reversible(cast):
    study, _, client, cy = cast
    before = comparable(alignment_report_compute(study=study, n_boot=200, rng=5))
    exclude(client, study, cy)
    client.post(reverse("annotate:study_evaluator_restore", kwargs={"study_id": study.pk, "participation_id": cy.pk}),
                {"reason": "checked the timings again"})
    cy.refresh_from_db()
    assert (cy.excluded_at, cy.excluded_by, cy.exclusion_reason) == (None, None, "")
    assert comparable(alignment_report_compute(study=study, n_boot=200, rng=5)) == before
    events = list(ExclusionEvent.objects.filter(participation=cy).values_list("action", "reason", "by__username"))
    assert events == [(ExclusionAction.EXCLUDE, REASON, "owner"),
                      (ExclusionAction.RESTORE, "checked the timings again", "owner")]
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert "Exclusion log" in page and "included again" in page


def test_a_reason_is_required_and_a_second_exclusion_is_refused(cast):
    study, owner, client, cy = cast
    with pytest.raises(ValueError, match=f"^{ERR_REASON_EMPTY}$"):
        participation_exclude(participation=cy, reason="  ", by=owner)
    exclude(client, study, cy, reason="")
    cy.refresh_from_db()
    assert cy.excluded_at is None and not ExclusionEvent.objects.exists()
    participation_exclude(participation=cy, reason="speeder", by=owner)
    with pytest.raises(ValueError, match=r"^evaluator 'cy' is already excluded$"):
        participation_exclude(participation=cy, reason="again", by=owner)
    participation_restore(participation=cy, by=owner)
    with pytest.raises(ValueError, match=r"^evaluator 'cy' is not excluded$"):
        participation_restore(participation=cy, by=owner)
