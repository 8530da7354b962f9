"""The domain choices every view and command shares, as selectors: which study
a ``--study`` key names, the default response set of the analyses pages, the
newest finished run covering some datasets, and the small reads the commands
and the judging pages make."""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotate.catalog.selectors.catalog import (
    dataset_names,
    response_set_default,
    response_set_names_loaded,
    response_sets_loaded,
)
from annotate.models import Participation, QuestionResult, ResponseSet, ResponseSetStatus, RunStatus, ScoringRun
from annotate.runs.selectors.scoring import scoring_run_get, scoring_run_latest_covering
from annotate.studies.selectors.studies import (
    evaluator_get_active,
    study_get_by_key,
    user_get_by_username,
    users_of_participations,
)
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db


def response_set(name: str, version: int, n: int, *, status: str = ResponseSetStatus.LOADED) -> ResponseSet:
    return ResponseSet.objects.create(name=name, version=version, file_name="r.csv", checksum=f"{n:064d}",
                                      file_format="wide", status=status)


def run_on(rs: ResponseSet, status: str = RunStatus.DONE) -> ScoringRun:
    return ScoringRun.objects.create(response_set=rs, status=status)


def aged(obj, minutes: int):
    """Move ``obj.created_at`` ``minutes`` into the past (auto_now_add cannot be set on create)."""
    type(obj).objects.filter(pk=obj.pk).update(created_at=timezone.now() - timedelta(minutes=minutes))
    obj.refresh_from_db()
    return obj


# --- which study a --study key names ------------------------------------------------------


def test_a_study_is_found_by_name_first_then_by_id():
    catalog = make_catalog(per_subject=2)
    first = make_study(catalog, n_pairs=1, name="Pilot")
    assert study_get_by_key(key="Pilot") == first
    assert study_get_by_key(key=str(first.pk)) == first
    assert study_get_by_key(key="pilot") is None  # names are exact
    assert study_get_by_key(key="99999") is None


def test_a_study_named_like_another_studys_id_is_found_by_its_name():
    catalog = make_catalog(per_subject=2)
    first = make_study(catalog, n_pairs=1, name="Pilot")
    digits = make_study(catalog, n_pairs=1, name=str(first.pk))
    assert digits.pk != first.pk
    assert study_get_by_key(key=str(first.pk)) == digits
    assert study_get_by_key(key="Pilot") == first


@pytest.mark.parametrize("command", ["create_evaluator", "export_study", "alignment_report"])
def test_every_command_taking_study_uses_the_same_order(command, tmp_path):
    # create_evaluator looked ids up first before: a study named "<id of another>" now wins there too.
    catalog = make_catalog(per_subject=2)
    first = make_study(catalog, n_pairs=1, name="Pilot")
    digits = make_study(catalog, n_pairs=1, name=str(first.pk))
    args = {
        "create_evaluator": ["--username", "vera"],
        "export_study": ["--out", str(tmp_path / "s.json")],
        "alignment_report": ["--out", str(tmp_path), "--min-votes", "0"],  # refused after the study is found
    }[command]
    if command == "alignment_report":
        with pytest.raises(CommandError, match="min_votes must be an integer >= 1; got 0"):
            call_command(command, "--study", str(first.pk), *args, stdout=StringIO())
    else:
        summary = call_command(command, "--study", str(first.pk), *args, stdout=StringIO())
        assert repr(digits.name) in summary and "'Pilot'" not in summary
    with pytest.raises(CommandError, match=r"^no study named or numbered 'Nope'$"):
        call_command(command, "--study", "Nope", *args, stdout=StringIO())


# --- response sets --------------------------------------------------------------------------


def test_the_default_response_set_is_the_newest_loaded_one_with_a_finished_run():
    assert response_set_default() is None
    scored = aged(response_set("scored", 1, 1), 30)
    run_on(scored)
    newer = aged(response_set("newer", 1, 2), 20)
    run_on(newer, RunStatus.FAILED)
    aged(response_set("old", 1, 3, status=ResponseSetStatus.SUPERSEDED), 10)
    assert response_set_default() == scored
    assert list(response_sets_loaded()) == [newer, scored]
    assert response_set_names_loaded() == ["newer", "scored"]


def test_without_a_finished_run_the_default_is_the_newest_loaded_response_set():
    aged(response_set("a", 1, 1), 30)
    b = aged(response_set("b", 1, 2), 20)
    aged(response_set("c", 1, 3, status=ResponseSetStatus.SUPERSEDED), 10)
    assert response_set_default() == b


def test_the_analyses_page_offers_the_default_response_set(client):
    staff = make_user("staff", staff=True)
    client.force_login(staff)
    scored = aged(response_set("scored", 1, 1), 30)
    run_on(scored)
    aged(response_set("unscored", 1, 2), 20)
    page = client.get("/analyses/efficiency/")
    assert page.status_code == 200
    assert page.context["form"].initial["response_set"] == scored


def test_paper_report_takes_the_keys_score_responses_takes(tmp_path):
    v1 = response_set("demo", 1, 1, status=ResponseSetStatus.SUPERSEDED)
    response_set("demo", 2, 2)
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    # refused only after the response set was found, so these messages show each key was accepted
    for key in ("demo", "demo v1", str(v1.pk)):
        with pytest.raises(CommandError, match=r"^--out .* exists and is not a folder$"):
            call_command("paper_report", "--response-set", key, "--out", str(not_a_folder), stdout=StringIO())
    with pytest.raises(CommandError, match=r"^no loaded response set is named 'demo v3'; loaded: demo$"):
        call_command("paper_report", "--response-set", "demo v3", "--out", str(tmp_path), stdout=StringIO())


# --- runs -----------------------------------------------------------------------------------


def test_the_latest_covering_run_is_the_newest_finished_one_with_results_in_the_datasets():
    catalog = make_catalog(per_subject=2)
    other = make_catalog(per_subject=2)
    aged(catalog.run, 60)
    newer = aged(run_on(catalog.response_set), 30)
    QuestionResult.objects.create(run=newer, question=catalog.questions[0], kept=True, n_observed=3, scores={})
    failed = aged(run_on(catalog.response_set, RunStatus.FAILED), 10)
    QuestionResult.objects.create(run=failed, question=catalog.questions[0], kept=True, n_observed=3, scores={})
    aged(other.run, 5)  # newest, but on another dataset
    assert scoring_run_latest_covering(datasets=[catalog.dataset]) == newer
    assert scoring_run_latest_covering(datasets=[other.dataset]) == other.run
    assert scoring_run_latest_covering(datasets=[catalog.dataset, other.dataset]) == other.run
    assert scoring_run_latest_covering(datasets=[]) is None
    assert scoring_run_get(pk=newer.pk) == newer
    assert scoring_run_get(pk=999999) is None


def test_create_study_samples_from_the_latest_covering_run():
    catalog = make_catalog(per_subject=3)
    aged(catalog.run, 60)
    newer = aged(run_on(catalog.response_set), 30)
    QuestionResult.objects.bulk_create(
        QuestionResult(run=newer, question=q, kept=True, n_observed=3, scores=r.scores)
        for q, r in zip(catalog.questions, QuestionResult.objects.filter(run=catalog.run).order_by("question_id"),
                        strict=True))
    summary = call_command("create_study", "--name", "S", "--datasets", catalog.dataset.name, "--pairs", "2",
                           "--no-invitation", stdout=StringIO())
    assert summary.endswith(f"from run {newer.pk}")


# --- small reads ------------------------------------------------------------------------------


def test_users_and_evaluators_are_read_through_selectors():
    study = make_study(make_catalog(per_subject=2), n_pairs=1, name="S")
    ann, bob = make_evaluator(study, "ann"), make_evaluator(study, "bob")
    staff = make_user("staff", staff=True)
    assert user_get_by_username(username="ann") == ann.user
    assert user_get_by_username(username="nobody") is None
    assert evaluator_get_active(pk=ann.user.pk) == ann.user
    assert evaluator_get_active(pk=staff.pk) is None  # not an evaluator
    assert evaluator_get_active(pk=None) is None
    bob.user.is_active = False
    bob.user.save()
    assert evaluator_get_active(pk=bob.user.pk) is None
    both = Participation.objects.filter(study=study)
    assert users_of_participations(participations=both) == sorted([ann.user, bob.user], key=lambda u: u.pk)


def test_dataset_names_are_sorted():
    second, first = make_catalog(per_subject=1), make_catalog(per_subject=1)
    assert dataset_names() == sorted([first.dataset.name, second.dataset.name])


# --- study export rows ---------------------------------------------------------------------------


def test_the_export_rows_take_a_fixed_number_of_queries(django_assert_num_queries):
    from annotate.studies.selectors.transfer import study_export_rows

    study = make_study(make_catalog(per_subject=3), n_pairs=3, name="S")
    make_evaluator(study, "ann")
    # 12, plus the attention checks and the exclusion log; the questions and the
    # run's results are read apart, a block at a time (study_export_questions/_results)
    with django_assert_num_queries(14) as one:
        rows = study_export_rows(study=study)
    assert [p.user.get_username() for p in rows.participations] == ["ann"]
    assert [p[1] for p in rows.pairs] == sorted(p[1] for p in rows.pairs) and len(rows.pairs) == 3
    make_evaluator(study, "bob")
    make_evaluator(study, "cem")
    with django_assert_num_queries(len(one.captured_queries)):
        rows = study_export_rows(study=study)
    assert sorted(p.user.get_username() for p in rows.participations) == ["ann", "bob", "cem"]
    assert rows.study_datasets == [study.datasets.get().name]


def test_recent_analysis_runs_can_be_limited_to_a_kind():
    from annotate.analyses.selectors import analysis_runs_recent
    from annotate.analyses.services import analysis_run_create

    old = aged(analysis_run_create(kind="scaling", params={"grid": "small"}), 30)
    mid = aged(analysis_run_create(kind="case_study", params={}), 20)
    new = aged(analysis_run_create(kind="scaling", params={"grid": "small", "seed": 1}), 10)
    assert list(analysis_runs_recent()) == [new, mid, old]
    assert list(analysis_runs_recent(kind="scaling")) == [new, old]
    assert list(analysis_runs_recent(kind="scaling", limit=1)) == [new]
