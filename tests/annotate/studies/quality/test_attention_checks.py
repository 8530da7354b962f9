"""Attention checks in a study: mixed in blind at creation, served like any
other pair, left out of the report, and scored as a pass rate.

Cast: ``owner`` (staff), evaluators ``ada`` (always attentive), ``bob`` (fails
one check), ``cy`` (skips one check).
"""
from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Pair
from annotate.reports.services.report import alignment_report_compute
from annotate.studies.selectors.study_monitor import study_monitor
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.studies import study_create
from tests.annotate.factories import make_catalog, make_evaluator, make_user
from tests.annotate.studies.quality.helpers import answer_all, set_eip

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
# Questions q0-0..q0-3 (Mathematics) and q1-0..q1-3 (Physics), EIP difficulty by hand. Percentile ranks among the
# eight ((rank - 1) / 7): q0-0 0, q0-2 1/7, q1-1 2/7, q0-1 3/7, q1-0 4/7, q1-3 5/7, q1-2 6/7, q0-3 1.
EIP = [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7]


@pytest.fixture
def study():
    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, EIP)
    # 2 regular pairs and a share of 1/2: 2 checks. The only qualifying checks (gap >= 0.5): Mathematics
    # (q0-0, q0-3), gap 1, and Physics (q1-1, q1-2), gap 4/7; seed 3 draws neither as a regular pair.
    return study_create(name="Careful", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                        attention_check_share=0.5)


def expected_of(study) -> dict[frozenset[str], str]:
    return {frozenset((p.question_a.external_id, p.question_b.external_id)): p.expected_harder.external_id
            for p in Pair.objects.filter(study=study, attention_check=True).select_related(
                "question_a", "question_b", "expected_harder")}


def test_the_checks_are_the_pairs_with_the_largest_known_gaps(study):
    assert expected_of(study) == {frozenset(("q0-0", "q0-3")): "q0-3", frozenset(("q1-1", "q1-2")): "q1-2"}
    assert Pair.objects.filter(study=study, attention_check=False).count() == 2 == study.n_pairs
    assert Pair.objects.filter(study=study).count() == 4


def test_a_share_above_a_half_is_refused():
    catalog = make_catalog(per_subject=4)
    with pytest.raises(ValueError, match=r"^attention_check_share must be a number in \[0, 0.5\]; got 0.6$"):
        study_create(name="Too many", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                     attention_check_share=0.6)


def test_checks_are_served_blind(study):
    ada = make_evaluator(study, "ada")
    client = Client()
    client.force_login(ada.user)
    served = []
    while (screen := judging_screen(participation=ada, now=START)) is not None:
        page = client.get(reverse("annotate:study_judge", kwargs={"study_id": study.pk})).content.decode().lower()
        assert f'name="pair" value="{screen.pair_token}"' in page
        assert "attention" not in page and "expected" not in page and "check" not in page.replace("checkbox", "")
        served.append(screen.pair.attention_check)
        judgment_submit(participation=ada, pair_id=screen.pair.pk, left_question_id=screen.left.pk, choice="left",
                        now=START)
    assert sorted(served) == [False, False, True, True]  # every pair, checks included, was served


def test_the_pass_rate_counts_right_calls_among_voted_checks(study):
    ada, bob, cy = (make_evaluator(study, name) for name in ("ada", "bob", "cy"))
    answer_all(ada, lambda pair: pair.expected_harder_id if pair.attention_check else pair.question_a_id,
               start=START)

    def bob_decides(pair):  # right on the Mathematics check, wrong on the Physics one
        if not pair.attention_check:
            return pair.question_b_id
        if pair.expected_harder.external_id == "q0-3":
            return pair.expected_harder_id
        return pair.question_a_id if pair.expected_harder_id == pair.question_b_id else pair.question_b_id

    answer_all(bob, bob_decides, start=START)
    answer_all(cy, lambda pair: (None if pair.attention_check and pair.expected_harder.external_id == "q1-2"
                                 else pair.expected_harder_id if pair.attention_check else pair.question_a_id),
               start=START)

    monitor = study_monitor(study=study)
    rows = {e.username: e.attention for e in monitor.evaluators}
    assert (rows["ada"].passed, rows["ada"].failed, rows["ada"].skipped, rows["ada"].pass_rate) == (2, 0, 0, 1.0)
    assert (rows["bob"].passed, rows["bob"].failed, rows["bob"].pass_rate) == (1, 1, 0.5)
    assert (rows["cy"].passed, rows["cy"].failed, rows["cy"].skipped, rows["cy"].pass_rate) == (1, 0, 1, 1.0)
    # Pooled: 4 passed of 5 voted checks (cy's skip counts neither way).
    assert (monitor.attention.passed, monitor.attention.voted) == (4, 5)
    assert monitor.attention.pass_rate == pytest.approx(0.8, abs=1e-12)

    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert '<dd id="live-attention">80% (4 of 5)</dd>' in page
    assert "failed 1" in page


def test_the_report_leaves_the_checks_out(study):
    ada, bob = make_evaluator(study, "ada"), make_evaluator(study, "bob")
    for evaluator in (ada, bob):
        answer_all(evaluator, lambda pair: pair.question_a_id, start=START)
    report = alignment_report_compute(study=study, n_boot=50)
    assert (report.study.n_pairs, report.study.n_attention_checks) == (2, 2)
    assert (report.study.n_votes, report.study.n_skips) == (4, 0)  # 2 evaluators x 2 regular pairs
    assert {p.pair_id for p in report.pairs} == set(
        Pair.objects.filter(study=study, attention_check=False).values_list("pk", flat=True))
    assert all(e.n_votes == 2 for e in report.evaluators)
    assert report.to_json()["study"]["n_attention_checks"] == 2


def test_too_many_checks_are_refused_in_plain_words_with_the_share_that_fits():
    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, EIP)
    # 4 regular pairs at share 1/2: 4 checks wanted, fewer qualify once the regular pairs are drawn.
    with pytest.raises(ValueError) as caught:
        study_create(name="Too many checks", run=catalog.run, datasets=[catalog.dataset], n_pairs=4, seed=3,
                     attention_check_share=0.5)
    message = str(caught.value)
    assert "difficulty_rank" not in message
    found = re.fullmatch(r"4 attention checks wanted, but only (\d) same-subject pairs of questions are at least "
                         r"0.5 apart on the percentile scale of EIP difficulty \(0 = easiest, 1 = hardest\); "
                         r"lower the attention-check share \(at most (\d+)% with these pairs\)", message)
    assert found, message
    n_possible, share = int(found.group(1)), int(found.group(2))
    # seed 3's regular pairs leave one qualifying check; the largest whole percent s with
    # round(s * 4 / (1 - s)) <= 1: 0.27 -> round(1.479) = 1, 0.28 -> round(1.556) = 2
    assert (n_possible, share) == (1, 27)
