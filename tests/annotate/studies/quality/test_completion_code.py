"""The completion code is earned: a participant sees it only after the work
the study asks for (answered pairs, attention checks passed, time on pairs).

Cast: ``owner`` (staff), evaluators ``ada`` (careful: answers everything,
passes both checks), ``sid`` (skips everything), ``fay`` (answers, fails one
check), ``zed`` (answers everything right but fast).
"""
from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Participation, Study
from annotate.studies.selectors.completion import (
    REASON_CHECKS,
    REASON_TIME,
    REASON_VOTES,
    CompletionTally,
    completion_rules_apply,
    completion_verdict,
    exact,
    study_completion_summary,
)
from annotate.studies.services.studies import study_create
from annotate.studies.services.study_quality import (
    ERR_MIN_CHECK_SHARE,
    ERR_MIN_SECONDS,
    ERR_MIN_VOTES,
    ERR_RESUME,
    study_quality_settings_update,
)
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_export import study_export
from tests.annotate.factories import make_catalog, make_evaluator, make_user
from tests.annotate.studies.quality.helpers import answer_all, set_eip

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
EIP = [0.1, 0.4, 0.2, 0.9, 0.5, 0.3, 0.8, 0.7]  # as in test_attention_checks: two checks, q0-3 and q1-2 harder
CROWD = {"speeder_seconds": 5.0, "participant_param": "PROLIFIC_PID", "study_param": "STUDY_ID",
         "session_param": "SESSION_ID", "completion_code": "C0DE-42", "completion_url": ""}


@pytest.fixture
def study() -> Study:
    catalog = make_catalog(per_subject=4)
    set_eip(catalog.questions, EIP)
    study = study_create(name="Paid", run=catalog.run, datasets=[catalog.dataset], n_pairs=2, seed=3,
                         attention_check_share=0.5)
    study_quality_settings_update(study=study, **CROWD, screened_out_url="https://app.prolific.com/return?cc=NOPE")
    return study


def careful(pair):
    return pair.expected_harder_id if pair.attention_check else pair.question_a_id


def fails_one(pair):  # right on the Mathematics check, wrong on the Physics one
    if pair.attention_check and pair.expected_harder.external_id == "q1-2":
        return pair.question_a_id if pair.expected_harder_id == pair.question_b_id else pair.question_b_id
    return careful(pair)


def done_page(participation: Participation) -> str:
    client = Client()
    client.force_login(participation.user)
    response = client.get(reverse("annotate:study_done", kwargs={"study_id": participation.study_id}))
    assert response.status_code == 200
    return response.content.decode()


def test_the_defaults_ask_for_one_answer_and_every_check_passed(study):
    assert (study.completion_min_votes, study.completion_min_check_share, study.completion_min_seconds) == (1, 1.0, 0)


def test_a_participant_who_skips_everything_gets_no_code_and_is_told_why(study):
    sid = make_evaluator(study, "sid")
    assert answer_all(sid, lambda pair: None, start=START) == 4  # 2 pairs + 2 checks, all skipped
    verdict = completion_verdict(participation=sid)
    assert not verdict.earned
    assert [s.reason for s in verdict.shortfalls] == [REASON_VOTES, REASON_CHECKS]
    assert (verdict.tally.votes, verdict.tally.checks_shown, verdict.tally.checks_passed) == (0, 2, 0)
    page = done_page(sid)
    assert "C0DE-42" not in page and "completion-code" not in page
    assert "You answered 0 pairs (skips do not count as answers); this study asks for at least 1." in page
    assert "You answered 0 of the 2 such pairs you were shown as expected; this study asks for every one" in page
    assert 'href="https://app.prolific.com/return?cc=NOPE" class="button" id="return-link"' in page


def test_a_participant_who_fails_a_check_gets_no_code(study):
    fay = make_evaluator(study, "fay")
    answer_all(fay, fails_one, start=START)
    verdict = completion_verdict(participation=fay)
    assert [s.reason for s in verdict.shortfalls] == [REASON_CHECKS]
    assert (verdict.tally.votes, verdict.tally.checks_passed) == (4, 1)
    assert "C0DE-42" not in done_page(fay)


def test_a_careful_participant_gets_the_code(study):
    ada = make_evaluator(study, "ada")
    answer_all(ada, careful, start=START)
    assert completion_verdict(participation=ada).earned
    page = done_page(ada)
    assert '<code id="completion-code">C0DE-42</code>' in page and "return-link" not in page


def test_a_pass_share_below_one_forgives_one_failed_check(study):
    fay = make_evaluator(study, "fay")
    answer_all(fay, fails_one, start=START)
    study_quality_settings_update(study=study, **CROWD, completion_min_check_share=0.5)  # 1 of 2 = 0.5: enough
    study.refresh_from_db()
    assert completion_verdict(participation=fay).earned
    study_quality_settings_update(study=study, **CROWD, completion_min_check_share=0.5000001)
    study.refresh_from_db()
    assert not completion_verdict(participation=fay).earned


def test_the_time_rule_is_decided_exactly(study):
    # Answers of 10.1, 10.1, 10.1 and 1.0 s: 31.3 s exactly, though their float sum is 31.299999999999997.
    seconds = [10.1, 10.1, 10.1, 1.0]
    assert 10.1 + 10.1 + 10.1 + 1.0 < 31.3
    zed = make_evaluator(study, "zed")
    answer_all(zed, careful, start=START, seconds=seconds)
    assert sorted(zed.judgments.values_list("seconds", flat=True)) == sorted(seconds)
    assert completion_verdict(participation=zed).tally.seconds == Fraction(313, 10)
    study_quality_settings_update(study=study, **CROWD, completion_min_seconds=31.3)
    study.refresh_from_db()
    assert completion_verdict(participation=zed).earned
    study_quality_settings_update(study=study, **CROWD, completion_min_seconds=31.31)
    study.refresh_from_db()
    verdict = completion_verdict(participation=zed)
    assert [s.reason for s in verdict.shortfalls] == [REASON_TIME]
    assert "You spent 31 seconds on the pairs in total; this study asks for at least 31.31 seconds." in (
        done_page(zed))


def test_the_rules_on_hand_made_tallies():
    # 1 check passed of 10 meets a share of 0.1 (the decimal typed), though Fraction(0.1) > 1/10.
    assert Fraction(0.1) > Fraction(1, 10) and exact(0.1) == Fraction(1, 10)
    study = Study(completion_min_votes=3, completion_min_check_share=0.1, completion_min_seconds=60.0)
    tally = CompletionTally(votes=3, checks_shown=10, checks_passed=1, seconds=Fraction(60))
    assert completion_rules_apply(study=study, tally=tally) == ()
    tally = CompletionTally(votes=3, checks_shown=11, checks_passed=1, seconds=Fraction(60))  # 1/11 < 0.1
    assert [s.reason for s in completion_rules_apply(study=study, tally=tally)] == [REASON_CHECKS]
    short = completion_rules_apply(study=study, tally=CompletionTally(votes=2, checks_shown=0, checks_passed=0,
                                                                       seconds=Fraction(5999, 100)))
    assert [s.reason for s in short] == [REASON_VOTES, REASON_TIME]  # no check shown: that rule holds


def test_the_manage_page_counts_who_fell_short_and_why(study):
    ada, sid, fay = (make_evaluator(study, name) for name in ("ada", "sid", "fay"))
    answer_all(ada, careful, start=START)
    answer_all(sid, lambda pair: None, start=START)
    answer_all(fay, fails_one, start=START)
    make_evaluator(study, "new")  # not finished: not counted
    summary = study_completion_summary(study=study)
    assert (summary.n_finished, summary.n_earned, summary.n_short) == (3, 1, 2)
    assert {key: n for key, _, n in summary.by_reason} == {REASON_VOTES: 1, REASON_CHECKS: 2, REASON_TIME: 0}
    client = Client()
    client.force_login(make_user("owner", staff=True))
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    assert '<dd id="completion-finished">3</dd>' in page and '<dd id="completion-earned">1</dd>' in page
    assert '<dd id="completion-short">2</dd>' in page
    assert '<dd id="completion-short-votes">1</dd>' in page and '<dd id="completion-short-checks">2</dd>' in page
    assert '<dd id="completion-short-time">0</dd>' in page
    assert "Resume by participant id: <strong>on, in any browser</strong>" in page


def test_the_researcher_sets_the_rules_on_the_manage_page(study):
    client = Client()
    client.force_login(make_user("owner", staff=True))
    url = reverse("annotate:study_quality_settings", kwargs={"study_id": study.pk})
    form = {**CROWD, "completion_min_votes": "5", "completion_min_check_share": "0.75",
            "completion_min_seconds": "90", "screened_out_url": "https://example.org/back",
            "resume_by_participant_id": "same_browser"}
    assert client.post(url, form).status_code == 302
    study.refresh_from_db()
    assert (study.completion_min_votes, study.completion_min_check_share, study.completion_min_seconds,
            study.screened_out_url, study.resume_by_participant_id) == (
        5, 0.75, 90.0, "https://example.org/back", "same_browser")
    before = Study.objects.filter(pk=study.pk).values().get()
    client.post(url, {**form, "completion_min_check_share": "1.5"}, follow=True)
    client.post(url, {**form, "completion_min_votes": "99999999999999999999"}, follow=True)
    assert Study.objects.filter(pk=study.pk).values().get() == before


@pytest.mark.parametrize(("change", "message"), [
    ({"completion_min_votes": -1}, ERR_MIN_VOTES.format(limit=2**31 - 1, value=-1)),
    ({"completion_min_votes": 2**40}, ERR_MIN_VOTES.format(limit=2**31 - 1, value=2**40)),
    ({"completion_min_check_share": 1.01}, ERR_MIN_CHECK_SHARE.format(value=1.01)),
    ({"completion_min_seconds": float("nan")}, ERR_MIN_SECONDS.format(limit=7 * 24 * 3600.0, value=float("nan"))),
    ({"resume_by_participant_id": "maybe"}, ERR_RESUME.format(choices=["off", "on", "same_browser"], value="maybe")),
])
def test_out_of_range_rules_are_refused_and_change_nothing(study, change, message):
    with pytest.raises(ValueError) as error:
        study_quality_settings_update(study=study, **CROWD, **change)
    assert str(error.value) == message
    study.refresh_from_db()
    assert (study.completion_min_votes, study.completion_min_check_share) == (1, 1.0)


def test_the_rules_travel_with_the_study(study):
    study_quality_settings_update(study=study, **CROWD, completion_min_votes=2, completion_min_check_share=0.5,
                                  completion_min_seconds=45.5, resume_by_participant_id="off")
    study.refresh_from_db()
    document = study_export(study=study)
    assert {k: document["study"][k] for k in ("completion_min_votes", "completion_min_check_share",
                                               "completion_min_seconds", "screened_out_url",
                                               "resume_by_participant_id")} == {
        "completion_min_votes": 2, "completion_min_check_share": 0.5, "completion_min_seconds": 45.5,
        "screened_out_url": "https://app.prolific.com/return?cc=NOPE", "resume_by_participant_id": "off"}
    imported = study_import(document=document, rename="Paid again").study
    assert (imported.completion_min_votes, imported.completion_min_check_share, imported.completion_min_seconds,
            imported.screened_out_url, imported.resume_by_participant_id) == (
        2, 0.5, 45.5, "https://app.prolific.com/return?cc=NOPE", "off")
