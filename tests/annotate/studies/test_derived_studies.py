"""Judgments derived from a human response set: the service, the command and the report.

Six questions in two subjects, five persons (the set of test_human_labels), and a
complete right/wrong model matrix scored with four methods.
"""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotate.api.services import api_token_create
from annotate.models import Choice, Judgment, Participation, ResponseSet, Study, StudyOrigin, StudyStatus
from annotate.reports.services import alignment_report_compute
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services.derived import ERR_NAME, ERR_NO_SHARED, derived_study_create, derived_study_preview
from tests.annotate.factories import make_researcher

pytestmark = pytest.mark.django_db

QUESTIONS = "question_id,category\nq1,bio\nq2,bio\nq3,bio\nq4,chem\nq5,chem\nq6,chem\n"
MODELS = ("question_id,m1,m2,m3,m4\n"
          "q1,1,1,1,1\nq2,1,1,0,1\nq3,0,1,0,0\nq4,1,1,1,0\nq5,0,0,1,0\nq6,1,0,0,0\n")
PEOPLE = ("question_id,p1,p2,p3,p4,p5\n"
          "q1,1,1,1,1,1\nq2,1,1,1,0,0\nq3,1,0,0,0,0\nq4,1,1,1,1,0\nq5,1,1,0,0,0\nq6,0,0,1,1,0\n")
# Per same-subject pair, persons answering one right and the other wrong (votes) and equal (no information):
# bio  (q1,q2): p4 p5 -> 2 votes (q2 harder), 3 equal; (q1,q3): p2-p5 -> 4, 1; (q2,q3): p2 p3 -> 2, 3
# chem (q4,q5): p3 p4 -> 2, 3; (q4,q6): p1 p2 -> 2, 3; (q5,q6): p1 p2 (q6 harder) p3 p4 (q5 harder) -> 4, 1
VOTES, NO_INFO = 16, 14
# the harder question of each vote, as (person, pair) -> harder
EXPECTED_HARDER = {
    ("p4", "q1q2"): "q2", ("p5", "q1q2"): "q2",
    ("p2", "q1q3"): "q3", ("p3", "q1q3"): "q3", ("p4", "q1q3"): "q3", ("p5", "q1q3"): "q3",
    ("p2", "q2q3"): "q3", ("p3", "q2q3"): "q3",
    ("p3", "q4q5"): "q5", ("p4", "q4q5"): "q5",
    ("p1", "q4q6"): "q6", ("p2", "q4q6"): "q6",
    ("p1", "q5q6"): "q6", ("p2", "q5q6"): "q6", ("p3", "q5q6"): "q5", ("p4", "q5q6"): "q5",
}


def _load(tmp_path, name: str, text: str, *extra: str) -> tuple[ResponseSet, str]:
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / f"{name}.csv").write_text(text, encoding="utf-8")
    out = StringIO()
    call_command("load_responses", "--responses", str(tmp_path / f"{name}.csv"), "--format", "wide", "--dataset",
                 "D", "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category", *extra,
                 stdout=out)
    return ResponseSet.objects.get(name=name), out.getvalue()


@pytest.fixture
def sets(tmp_path):
    models, _ = _load(tmp_path, "models", MODELS)
    people, printed = _load(tmp_path, "people", PEOPLE, "--human")
    run = scoring_run_create(response_set=models, params={"methods": ["eip", "simple_rank", "accuracy", "irt_1pl"]})
    scoring_run_execute(run=run)
    return models, people, run, printed


def test_load_responses_names_the_human_set_for_labels(sets):
    _, people, _, printed = sets
    assert printed.strip().endswith(f"Response set id {people.pk}; as a human difficulty label it is "
                                    f"human:{people.pk}.")
    assert " questions x 5 persons with a response); new: 0 questions, 5 persons, " in printed
    # every person answered every question (6 x 5 = 30 cells): the diagnostics speak of persons too
    assert ("0 of 30 person-question cells not observed; 0 questions observed by fewer than 3 persons; the "
            "person-question graph has 1 component.") in printed
    assert "model" not in printed.split("; new:")[1]


def test_the_preview_counts_every_pair_and_vote_and_writes_nothing(sets):
    _, people, run, _ = sets
    p = derived_study_preview(human_set_id=people.pk, run=run, n_pairs=50)
    assert (p.n_persons, p.n_questions_shared, p.n_subjects, p.n_possible_pairs, p.n_pairs) == (5, 6, 2, 6, 6)
    assert (p.n_votes, p.n_no_information, p.n_unanswered, p.n_persons_with_judgments) == (VOTES, NO_INFO, 0, 5)
    assert "wrong" in p.rule and Study.objects.count() == 0


def test_a_derived_study_stores_each_persons_votes_and_no_information_as_skips(sets):
    _, people, run, _ = sets
    study, _ = derived_study_create(human_set_id=people.pk, run=run, name="derived", n_pairs=50)
    assert (study.origin, study.status, study.derived_from_id) == (StudyOrigin.DERIVED, StudyStatus.CLOSED, people.pk)
    parts = Participation.objects.filter(study=study)
    assert parts.count() == 5 and not any(p.user.is_active for p in parts)
    got = {}
    for j in Judgment.objects.filter(pair__study=study).select_related(
            "participation", "pair__question_a", "pair__question_b", "harder_question"):
        if j.choice == Choice.SKIP:
            continue
        a, b = sorted([j.pair.question_a.external_id, j.pair.question_b.external_id])
        got[(j.participation.platform_participant_id, a + b)] = j.harder_question.external_id
    assert got == EXPECTED_HARDER
    assert Judgment.objects.filter(pair__study=study, choice=Choice.SKIP).count() == NO_INFO


def test_the_report_of_a_derived_study_works_like_any_study(sets):
    _, people, run, _ = sets
    study, _ = derived_study_create(human_set_id=people.pk, run=run, name="derived", n_pairs=50)
    report = alignment_report_compute(study=study, n_boot=20)
    assert len(report.evaluators) == 5
    assert sum(e.n_votes for e in report.evaluators) == VOTES
    assert sum(e.n_skips for e in report.evaluators) == NO_INFO
    hs = report.human_scale
    assert hs is not None and hs.available and hs.n_votes == VOTES


def test_the_human_scale_table_merges_method_ties_so_1pl_equals_simple_rank(sets):
    # On a complete right/wrong matrix 1PL orders questions exactly as the failure count does; equal counts
    # differ in 1PL only by rounding noise, which the registry's tie tolerance merges.
    _, people, run, _ = sets
    study, _ = derived_study_create(human_set_id=people.pk, run=run, name="derived", n_pairs=50)
    report = alignment_report_compute(study=study, n_boot=20)
    rows = {(m.method, m.scope): m for m in report.human_scale.methods}
    for scope in {s for _, s in rows}:
        one_pl, rank = rows[("irt_1pl", scope)], rows[("simple_rank", scope)]
        assert one_pl.spearman == rank.spearman and one_pl.kendall == rank.kendall, scope


def test_the_command_previews_then_creates(sets):
    _, people, run, _ = sets
    out = StringIO()
    call_command("derive_judgments", "--human-set", str(people.pk), "--run", str(run.pk), "--dry-run", stdout=out)
    assert out.getvalue().startswith("Dry run: 6 of 6 same-subject pairs (6 shared questions, 2 subjects); 5 of 5 "
                                     "persons; 16 votes, 14 no-information (skips), 0 not answered; nothing was "
                                     "written.")
    assert Study.objects.count() == 0
    out = StringIO()
    rosa = make_researcher("rosa")
    call_command("derive_judgments", "--human-set", str(people.pk), "--run", str(run.pk), "--name", "from people",
                 "--pairs", "4", "--owner", "rosa", stdout=out)
    study = Study.objects.get()
    assert study.created_by == rosa  # so the researcher sees it on the site
    assert out.getvalue().startswith(f"Created derived study 'from people' (id {study.pk}): 4 of 6 ")
    assert study.pairs.count() == 4
    with pytest.raises(CommandError, match=ERR_NAME.format(name="from people").replace("(", r"\(").replace(")", r"\)")):
        call_command("derive_judgments", "--human-set", str(people.pk), "--run", str(run.pk), "--name",
                     "from people", stdout=StringIO())
    with pytest.raises(CommandError, match="not a loaded response set marked as human"):
        call_command("derive_judgments", "--human-set", str(run.response_set_id), "--run", str(run.pk), "--name",
                     "x", stdout=StringIO())
    assert Study.objects.count() == 1


def test_no_shared_subject_pair_is_refused(sets, tmp_path):
    _, _, run, _ = sets
    (tmp_path / "q2.csv").write_text("question_id,category\nz1,x\nz2,y\n", encoding="utf-8")
    (tmp_path / "other.csv").write_text("question_id,p1\nz1,1\nz2,0\n", encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "other.csv"), "--format", "wide", "--dataset", "E",
                 "--questions", str(tmp_path / "q2.csv"), "--subject-column", "category", "--human",
                 stdout=StringIO())
    other = ResponseSet.objects.get(name="other")
    with pytest.raises(ValueError) as info:
        derived_study_preview(human_set_id=other.pk, run=run)
    assert str(info.value) == ERR_NO_SHARED.format(human=other, run=run.pk)


def test_the_api_previews_then_creates(sets, client):
    _, people, run, _ = sets
    user = make_researcher("rosa")
    _, key = api_token_create(user=user)
    auth = {"HTTP_AUTHORIZATION": f"Token {key}"}
    url = "/api/studies/derived/"
    answer = client.post(url, data={"human_response_set": people.pk, "run": run.pk, "dry_run": True},
                         content_type="application/json", **auth)
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["study"] is None and (body["n_pairs"], body["n_votes"], body["n_no_information"]) == (6, VOTES, NO_INFO)
    assert Study.objects.count() == 0
    answer = client.post(url, data={"human_response_set": people.pk, "run": run.pk, "name": "api derived"},
                         content_type="application/json", **auth)
    assert answer.status_code == 201, answer.content
    study = Study.objects.get(name="api derived")
    assert answer.json()["study"] == study.pk and answer["Location"].endswith(f"/studies/{study.pk}/report/")
    assert study.created_by == user
    bad = client.post(url, data={"human_response_set": run.response_set_id, "run": run.pk, "name": "x"},
                      content_type="application/json", **auth)
    assert bad.status_code == 400 and "not a loaded response set marked as human" in bad.json()["error"]
    assert Study.objects.count() == 1


def test_the_page_says_what_is_missing_and_where_to_get_it(tmp_path):
    from django.urls import reverse

    from tests.annotate.factories import client_for

    client = client_for(make_researcher("rita"))
    url = reverse("annotate:study_derive")
    page = client.get(url).content.decode()
    assert "No response set is marked as human yet." in page
    assert "load_responses --human" in page
    assert "No scoring run has finished yet." in page
    _load(tmp_path, "people", PEOPLE, "--human")
    page = client.get(url).content.decode()
    assert "No response set is marked as human yet." not in page
    assert "No scoring run has finished yet." in page
    models, _ = _load(tmp_path, "models", MODELS)
    scoring_run_execute(run=scoring_run_create(response_set=models, params={"methods": ["eip", "accuracy"]}))
    page = client.get(url).content.decode()
    assert 'id="derive-missing"' not in page
