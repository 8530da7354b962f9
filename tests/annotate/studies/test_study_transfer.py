"""Exporting a study to one JSON file and importing it elsewhere, losslessly.

Cast: a study "Transfer" of 6 pairs with evaluators ``evaluator-ada1`` (judged
every pair, one skip), ``evaluator-bob2`` (judged two, a third on screen) and
``evaluator-cy3`` (joined, not onboarded); staff ``owner`` created it.

The documented differences between two exports of the same study are the
``source`` block (export time and the exporting instance's database ids) and,
after ``--rename``, ``study.name``.
"""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotate.models import (
    AnalysisRun,
    Assignment,
    Dataset,
    Judgment,
    LanguageModel,
    MethodResult,
    Participation,
    Question,
    QuestionResult,
    ResponseSet,
    ScoringRun,
    Study,
    Subject,
)
from annotate.reports.services import study_alignment_report
from annotate.studies.selectors.study_monitor import study_monitor
from annotate.studies.services import study_transfer
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_format import MalformedExport
from tests.annotate.factories import make_catalog, make_evaluator, make_study

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 4, 9, 0, 0, 123456, tzinfo=UTC)
ADA = ["left", "right", "skip", "left", "left", "right"]
BOB = ["right", "left"]


def judge(participation: Participation, choices: list[str], start: datetime) -> list[tuple[int, str, int]]:
    """Judge the next pairs; (pair position, choice, left question id) of each."""
    done = []
    for k, choice in enumerate(choices):
        shown = start + timedelta(minutes=k)
        screen = judging_screen(participation=participation, now=shown)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice, client_seconds=None if k % 2 else 11.5 + k,
                        now=shown + timedelta(seconds=7.25 + k))
        done.append((screen.pair.position, choice, screen.left.pk))
    return done


@pytest.fixture
def transfer_study():
    catalog = make_catalog(per_subject=4)
    first = catalog.questions[0]
    first.text = "Ünïcode <b>question</b> with = and ; and a\nnew line"
    first.metadata = {"src": "ori_mmlu-physics", "levels": [1, 2.5, None], "nested": {"k": "v"}}
    first.save()
    MethodResult.objects.create(run=catalog.run, method="eip", params={"alpha": 0.85}, n_iter=7, converged=True,
                                residual=3.2e-11, duration_s=0.0125, notes={"dropped": 0})
    study = make_study(catalog, n_pairs=6, name="Transfer")
    ada = make_evaluator(study, "evaluator-ada1")
    bob = make_evaluator(study, "evaluator-bob2")
    make_evaluator(study, "evaluator-cy3", ready=False)
    ada.user.email = "ada.lovelace@example.org"
    ada.user.first_name = "Ada"
    ada.user.save()
    ada_done = judge(ada, ADA, T0)
    bob_done = judge(bob, BOB, T0 + timedelta(hours=1))
    judging_screen(participation=bob, now=T0 + timedelta(hours=2))  # a third pair on bob's screen
    return study, ada_done, bob_done


def export_to(path, study: Study) -> dict:
    call_command("export_study", study=study.name, out=str(path))
    return json.loads(path.read_text(encoding="utf-8"))


def without(document: dict, *keys: str) -> dict:
    return {k: v for k, v in document.items() if k not in keys}


def wipe_everything(study: Study) -> None:
    """A fresh database state: the study, its evaluators, its run, response set and questions all gone."""
    run = study.scoring_run
    users = [p.user for p in study.participations.all()]
    Judgment.objects.all().delete()
    Assignment.objects.all().delete()
    Participation.objects.all().delete()
    for user in users:
        user.delete()
    study.delete()
    run.delete()
    ResponseSet.objects.all().delete()
    Question.objects.all().delete()
    Dataset.objects.all().delete()
    Subject.objects.all().delete()


def test_it_round_trips_a_study_into_a_fresh_database(transfer_study, tmp_path):
    study, _, _ = transfer_study
    first = export_to(tmp_path / "first.json", study)
    coverage_before = study_monitor(study=study)
    wipe_everything(study)
    assert Question.objects.count() == 0 and Judgment.objects.count() == 0

    call_command("import_study", file=str(tmp_path / "first.json"))
    imported = Study.objects.get(name="Transfer")
    second = export_to(tmp_path / "second.json", imported)

    assert without(second, "source") == without(first, "source")
    assert second["source"]["study_id"] == imported.pk
    # The staff report counts the same votes and skips per evaluator and per pair.
    coverage_after = study_monitor(study=imported)
    assert [(e.username, e.judged, e.skipped, e.median_seconds) for e in coverage_after.evaluators] == \
        [(e.username, e.judged, e.skipped, e.median_seconds) for e in coverage_before.evaluators]
    assert [(p.position, p.votes_a, p.votes_b, p.skips, p.on_screen) for p in coverage_after.pairs] == \
        [(p.position, p.votes_a, p.votes_b, p.skips, p.on_screen) for p in coverage_before.pairs]


def test_a_renamed_copy_matches_except_the_name_and_source(transfer_study, tmp_path):
    study, _, _ = transfer_study
    first = export_to(tmp_path / "first.json", study)
    call_command("import_study", file=str(tmp_path / "first.json"), rename="Transfer copy", reuse_evaluators=True)
    copy = export_to(tmp_path / "copy.json", Study.objects.get(name="Transfer copy"))
    assert copy["study"].pop("name") == "Transfer copy"
    first["study"].pop("name")
    assert without(copy, "source") == without(first, "source")
    assert Study.objects.count() == 2


def test_a_version_1_export_with_one_field_per_method_still_imports(transfer_study, tmp_path):
    """Version 1 stored each method as its own field of a question result;
    importing it gives the same scores as the version 2 document."""
    study, _, _ = transfer_study
    current = export_to(tmp_path / "v2.json", study)
    old = json.loads(json.dumps(current))
    old["schema_version"] = 1
    for r in old["scoring_run"]["question_results"]:
        r.update(r.pop("scores"))
    assert "eip_scaled" in old["scoring_run"]["question_results"][0]
    study_import(document=old, rename="From v1", reuse_evaluators=True)
    again = export_to(tmp_path / "again.json", Study.objects.get(name="From v1"))
    assert again["scoring_run"]["question_results"] == current["scoring_run"]["question_results"]


def test_the_export_holds_what_was_judged(transfer_study, tmp_path):
    study, ada_done, _bob_done = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    assert document["schema_version"] == 4
    by_name = {e["pseudonym"]: e for e in document["evaluators"]}
    assert sorted(by_name) == ["evaluator-ada1", "evaluator-bob2", "evaluator-cy3"]
    keys = {q.pk: [q.dataset.name, q.external_id] for q in Question.objects.select_related("dataset")}
    # ada's answers, in pair-position order, exactly as submitted by the fixture
    expected = sorted((position, choice, keys[left]) for position, choice, left in ada_done)
    got = [(j["pair"], j["choice"], j["left_question"]) for j in by_name["evaluator-ada1"]["judgments"]]
    assert got == expected
    first = next(j for j in by_name["evaluator-ada1"]["judgments"] if j["pair"] == ada_done[0][0])
    assert first["shown_at"] == "2025-03-04T09:00:00.123456+00:00"
    assert first["submitted_at"] == "2025-03-04T09:00:07.373456+00:00"  # + 7.25 s
    assert first["seconds"] == 7.25 and first["client_seconds"] == 11.5
    assert len(by_name["evaluator-bob2"]["judgments"]) == 2
    assert len(by_name["evaluator-bob2"]["assignments"]) == 3  # two judged, one on screen
    assert by_name["evaluator-cy3"]["onboarded_at"] is None
    assert len(document["pairs"]) == 6 and len(document["questions"]) == 8
    assert document["scoring_run"]["methods"][0]["residual"] == 3.2e-11


def test_the_export_carries_pseudonyms_and_nothing_personal(transfer_study, tmp_path):
    study, _, _ = transfer_study
    call_command("export_study", study=study.name, out=str(tmp_path / "doc.json"))
    text = (tmp_path / "doc.json").read_text(encoding="utf-8")
    for secret in ("ada.lovelace@example.org", '"Ada"', "pbkdf2", "password", study.invitations.model.__name__):
        assert secret not in text
    evaluator = json.loads(text)["evaluators"][0]
    assert set(evaluator) == {
        "pseudonym", "seed", "field_of_study", "education_level", "qualified_subjects", "consented_at", "onboarded_at",
        "guidelines_accepted_at", "finished_at", "created_at", "assignments", "judgments",
        # version 4: the crowd platform's pseudonymous ids, and the researcher's exclusion (issue 14)
        "platform_participant_id", "platform_study_id", "platform_session_id", "excluded_at", "excluded_by",
        "exclusion_reason", "exclusion_events",
        # the evaluator's group (an imported study's group column; "" otherwise)
        "group",
    }


def test_it_refuses_an_existing_name_and_writes_nothing(transfer_study, tmp_path):
    study, _, _ = transfer_study
    export_to(tmp_path / "doc.json", study)
    counts = (Study.objects.count(), get_user_model().objects.count(), ResponseSet.objects.count())
    with pytest.raises(CommandError, match="a study named 'Transfer' already exists; import it under another name"):
        call_command("import_study", file=str(tmp_path / "doc.json"))
    assert (Study.objects.count(), get_user_model().objects.count(), ResponseSet.objects.count()) == counts


def test_it_refuses_taken_pseudonyms_unless_told_to_reuse_them(transfer_study, tmp_path):
    study, _, _ = transfer_study
    export_to(tmp_path / "doc.json", study)
    with pytest.raises(CommandError, match=r"pseudonym\(s\) \['evaluator-ada1', 'evaluator-bob2', 'evaluator-cy3'\]"):
        call_command("import_study", file=str(tmp_path / "doc.json"), rename="Other")
    assert not Study.objects.filter(name="Other").exists()


def test_it_refuses_a_question_that_differs_from_the_stored_one(transfer_study, tmp_path):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    document["questions"][1]["text"] = "a different text"
    key = [document["questions"][1]["dataset"], document["questions"][1]["external_id"]]
    n_runs = ScoringRun.objects.count()
    expected = f"question {key} already exists here with a different text ("
    with pytest.raises(ValueError, match=re.escape(expected)):
        study_import(document=document, rename="Conflicting", reuse_evaluators=True)
    assert ScoringRun.objects.count() == n_runs and not Study.objects.filter(name="Conflicting").exists()


def test_it_is_all_or_nothing_when_a_write_fails_halfway(transfer_study, tmp_path, monkeypatch):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    wipe_everything(study)

    def fail(*args, **kwargs):
        raise RuntimeError("disk full")  # after the catalog, run and study were written

    monkeypatch.setattr(study_transfer, "_write_evaluators", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        study_import(document=document)
    assert (Study.objects.count(), Question.objects.count(), ScoringRun.objects.count(),
            ResponseSet.objects.count(), Dataset.objects.count()) == (0, 0, 0, 0, 0)


def test_imported_evaluators_are_records_not_logins(transfer_study, tmp_path):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    wipe_everything(study)
    result = study_import(document=document)
    assert (result.evaluators_created, result.evaluators_reused, result.judgments) == (3, 0, 8)
    for user in get_user_model().objects.filter(participations__study=result.study):
        assert not user.is_active and not user.has_usable_password()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(schema_version=5),
         r"schema_version 5 is not supported; this site reads versions \(1, 2, 3, 4\)"),
        (lambda d: d.update(kind="something"), "not a study export: 'kind' must be 'eip-study-export'"),
        (lambda d: d["evaluators"][0]["judgments"][0].update(choice="maybe"), "choice must be one of"),
        (lambda d: d["evaluators"][0]["judgments"][0].update(pair=99),
         "evaluator 'evaluator-ada1' refers to pair position 99"),
        (lambda d: d["pairs"][0].update(questions=[["nope", "q"], d["pairs"][0]["questions"][1]]),
         r"pair 0 refers to question \['nope', 'q'\], which is not in 'questions'"),
    ],
)
def test_it_refuses_a_malformed_document(transfer_study, tmp_path, change, message):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    change(document)
    with pytest.raises(MalformedExport, match=message):
        study_import(document=document, rename="Malformed", reuse_evaluators=True)
    assert not Study.objects.filter(name="Malformed").exists()


def test_a_judgment_whose_verdict_contradicts_its_choice_is_refused(transfer_study, tmp_path):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    judgment = next(j for j in document["evaluators"][0]["judgments"] if j["choice"] == "left")
    judgment["harder_question"] = next(q for p in document["pairs"] if p["position"] == judgment["pair"]
                                       for q in p["questions"] if q != judgment["left_question"])
    with pytest.raises(MalformedExport, match="harder_question does not match the choice"):
        study_import(document=document, rename="Contradiction", reuse_evaluators=True)


def test_import_refuses_a_file_that_is_not_utf8_with_a_command_error(tmp_path):
    path = tmp_path / "binary.csv"
    path.write_bytes(b"{\"kind\": \"" + b"\xc5" * 8 + b"\"}")  # 0xc5 starts a 2-byte sequence; '\xc5' follows
    with pytest.raises(CommandError) as info:
        call_command("import_study", file=str(path))
    # the first bad byte is at offset 10 (after the 10 characters '{"kind": "')
    assert str(info.value) == (f"{path} is not UTF-8 JSON (byte 0xc5 at offset 10); "
                               "give the file export_study wrote")
    assert not Study.objects.exists()


# --- a backup restores the same alignment report (issue 12, point 4) -----------------------------

#: Report fields that name the instance's rows or the moment, so they must differ after an import:
#: ``generated_at`` and ``timing`` (when and how fast it was computed), ``study.id``, ``study.name`` (after
#: ``rename``), ``study.scoring_run`` and ``run.id`` (new database ids), ``run.response_set`` (the import's
#: placeholder response set) and ``pools.analysis_run`` (the id of the re-created pools analysis). Notes and
#: reasons that name the run ("run 7 has no irt_mirt value") have its id replaced by a placeholder.
DIFFERING = ("generated_at", "timing", "study.id", "study.name", "study.scoring_run", "run.id", "run.response_set",
             "pools.analysis_run", "parameters.study", "parameters.scoring_run", "labels.analysis.response_set",
             "labels.analysis.run")
#: In each row of ``pairs``, ``pair_id`` (checked to be the study's pair at that position, then dropped) and
#: the ``id`` of ``question_a`` and ``question_b`` (replaced by the question's [dataset, external id]); in each
#: row of ``evaluators``, ``id`` (the participation: checked to be the pseudonym's, then dropped).
PAIR_IDS = ("pair_id", "question_a.id", "question_b.id")
EVALUATOR_IDS = ("id",)


def normalised(report: dict, study: Study) -> dict:
    """``report`` without :data:`DIFFERING`, database ids of :data:`PAIR_IDS` and :data:`EVALUATOR_IDS`
    checked against or turned into natural keys.
    Read while ``study`` is in the database."""
    run_id = study.scoring_run_id
    report = json.loads(re.sub(rf"\brun {run_id}\b", "run <run>", json.dumps(report)))
    for path in DIFFERING:
        *parents, leaf = path.split(".")
        node = report
        for parent in parents:
            node = node[parent]
        assert leaf in node, path  # every field listed exists (the list stays honest)
        node.pop(leaf)
    keys = {q.pk: [q.dataset.name, q.external_id] for q in Question.objects.select_related("dataset")}
    positions = dict(study.pairs.values_list("pk", "position"))
    for row in report["pairs"]:
        assert positions[row.pop("pair_id")] == row["position"]
        for side in ("question_a", "question_b"):
            row[side]["id"] = keys[row[side]["id"]]
    pseudonyms = dict(study.participations.values_list("pk", "user__username"))
    for row in report["evaluators"]:
        assert pseudonyms[row.pop("id")] == row["pseudonym"]
    for row in report.get("human_scale", {}).get("questions", []):  # the same ids in the human scale section
        row["question"]["id"] = keys[row["question"]["id"]]
    for row in report.get("human_scale", {}).get("evaluators", []):
        assert pseudonyms[row.pop("id")] == row["pseudonym"]
    return report


def report_study():
    """The hand-built study of the report tests (4 pairs, 4 evaluators, skips, a 1-1 vote tie resolved by
    weight, simple-rank ties on pair 1) with the stored pools analysis of ``test_pools_stored``, and:

    * pair 3 stored reversed (``a`` has the larger id), so orientation matters;
    * a ``level`` label on every question (the labels section) that favours ``b`` on pairs 1 and 3;
    * the run scored two of its three models (the pools section notes the subset);
    * a dataset ``aaa-outside`` outside the study's scope with two scored questions created last: the
      profiles read the whole run and list datasets in id order (``aaa`` sorts first by name);
    * judgment times consistent with their seconds (submitted 3 s after shown).
    """
    from tests.annotate.reports.test_pools_stored import pool_study, store_pools

    study = pool_study()
    run = study.scoring_run
    analysis = store_pools(study)
    assert analysis.status == "done"
    reversed_pair = study.pairs.get(position=2)
    reversed_pair.question_a, reversed_pair.question_b = reversed_pair.question_b, reversed_pair.question_a
    reversed_pair.save()
    for k, question in enumerate(Question.objects.filter(dataset__in=study.datasets.all()).order_by("pk")):
        question.metadata = {**question.metadata, "level": [1, 3, 2, 2, 3, 1, 1, 2][k]}
        question.save()
    run.models_used.set(LanguageModel.objects.order_by("name")[:2])
    outside = Dataset.objects.create(name="aaa-outside")
    subject = Subject.objects.get_or_create(name="History")[0]
    for k in range(2):
        q = Question.objects.create(dataset=outside, subject=subject, external_id=f"x{k}", text=f"outside {k}",
                                    options=[], reference_answer="A", metadata={"level": 2})
        QuestionResult.objects.create(run=run, question=q, kept=True, n_observed=3,
                                      scores={"eip_scaled": 55.5 + k, "simple_rank": 0.25 * k})
    for j in Judgment.objects.filter(pair__study=study):
        j.submitted_at = j.shown_at + timedelta(seconds=3)
        j.save()
    return study


def test_a_backup_restores_the_same_report_in_a_fresh_database(tmp_path):
    study = report_study()
    before = study_alignment_report(study=study, n_boot=200, rng=7)
    old_run = study.scoring_run_id
    assert before["pools"]["status"] == "done" and before["labels"]["key"] == "level"
    assert before["labels"]["n_questions_labelled"] == 8
    assert [d["name"] for d in before["profiles"]["datasets"]] == [study.datasets.get().name, "aaa-outside"]
    assert any(p["consensus"]["method"] == "tie_resolved" for p in before["pairs"])
    assert before["study"]["n_skips"] == 2
    old = normalised(before, study)
    first = export_to(tmp_path / "first.json", study)
    assert first["pairs"][2]["questions"][0][1] > first["pairs"][2]["questions"][1][1]  # kept reversed
    wipe_everything(study)
    LanguageModel.objects.all().delete()
    assert (AnalysisRun.objects.count(), Question.objects.count()) == (0, 0)

    call_command("import_study", file=str(tmp_path / "first.json"))
    imported = Study.objects.get(name="Hand")
    after = study_alignment_report(study=imported, n_boot=200, rng=7)

    assert after["run"]["response_set"].startswith("imported: Hand")
    new = normalised(after, imported)
    assert sorted(old) == sorted(new)
    for section in old:  # field by field, so a failure names the section
        assert new[section] == old[section], section
    # the run's models came along: the note on the subset is there, naming the new run
    assert f"scoring run {old_run} scored 2 of its models." in before["pools"]["note"]
    assert after["pools"]["note"] == before["pools"]["note"].replace(f"run {old_run} ",
                                                                     f"run {imported.scoring_run_id} ")
    # each pool's stored difficulties were re-attached to the new question ids (scored against the consensus)
    whole = next(p for p in after["pools"]["pools"] if p["kind"] == "whole")
    assert whole["consensus"]["n_pairs"] == 4 and whole["consensus"]["n_undefined"] == 0
    second = export_to(tmp_path / "second.json", imported)
    assert without(second, "source") == without(first, "source")


def test_a_backup_imported_under_a_new_name_gives_the_same_report(tmp_path):
    study = report_study()
    before = study_alignment_report(study=study, n_boot=200, rng=3)
    export_to(tmp_path / "doc.json", study)
    call_command("import_study", file=str(tmp_path / "doc.json"), rename="Hand again", reuse_evaluators=True)
    copy = Study.objects.get(name="Hand again")
    after = study_alignment_report(study=copy, n_boot=200, rng=3)
    assert after["study"]["name"] == "Hand again"
    assert normalised(after, copy) == normalised(before, study)
    assert AnalysisRun.objects.filter(kind="pools").count() == 2


# --- the import checks everything before it writes -------------------------------------------------


def db_counts() -> tuple[int, ...]:
    return tuple(model.objects.count() for model in (
        Study, Question, Dataset, Subject, ScoringRun, ResponseSet, MethodResult, QuestionResult, Participation,
        Assignment, Judgment, AnalysisRun, LanguageModel, get_user_model()))


def ada_judgment(document: dict, choice: str | None = None) -> dict:
    ada = next(e for e in document["evaluators"] if e["pseudonym"] == "evaluator-ada1")
    return next(j for j in ada["judgments"] if choice is None or j["choice"] == choice)


def subject_of(document: dict, key: list[str]) -> str:
    return next(q["subject"] for q in document["questions"] if [q["dataset"], q["external_id"]] == key)


def other_subject_question(document: dict, key: list[str]) -> list[str]:
    subject = subject_of(document, key)
    return next([q["dataset"], q["external_id"]] for q in document["questions"] if q["subject"] != subject)


def refusal_cases():
    """(name, change to the document, the refusal it must give); the judgment of ada on her first pair by
    position shown at T0 + k minutes and submitted 7.25 + k seconds later (see ``judge``)."""

    def first_judgment(d):
        return ada_judgment(d)

    return [
        ("itself", lambda d: d["pairs"][0].update(questions=[d["pairs"][0]["questions"][0]] * 2),
         lambda d: f"pair 0 pairs question {d['pairs'][0]['questions'][0]} with itself"),
        ("repeated", lambda d: d["pairs"][3].update(questions=list(d["pairs"][1]["questions"])),
         lambda d: f"pair 3 repeats pair 1 (the same questions: {d['pairs'][1]['questions'][0]} and "
                   f"{d['pairs'][1]['questions'][1]})"),
        ("reversed", lambda d: d["pairs"][3].update(questions=d["pairs"][1]["questions"][::-1]),
         lambda d: f"pair 3 repeats pair 1 (reversed: {d['pairs'][1]['questions'][1]} and "
                   f"{d['pairs'][1]['questions'][0]})"),
        ("across subjects",
         lambda d: d["pairs"][2].update(questions=[d["pairs"][2]["questions"][0],
                                                   other_subject_question(d, d["pairs"][2]["questions"][0])]),
         lambda d: f"pair 2 crosses subjects: {d['pairs'][2]['questions'][0]} is in "
                   f"{subject_of(d, d['pairs'][2]['questions'][0])!r}, {d['pairs'][2]['questions'][1]} in "
                   f"{subject_of(d, d['pairs'][2]['questions'][1])!r}"),
        ("unknown question", lambda d: d["pairs"][0]["questions"].__setitem__(1, ["nope", "q9"]),
         lambda d: "pair 0 refers to question ['nope', 'q9'], which is not in 'questions'"),
        ("submitted before shown",
         lambda d: first_judgment(d).update(submitted_at="2025-03-04T08:59:59+00:00"),
         lambda d: f"evaluator 'evaluator-ada1', pair {first_judgment(d)['pair']}: submitted_at "
                   f"2025-03-04T08:59:59+00:00 is before shown_at {first_judgment(d)['shown_at']}"),
        ("negative seconds", lambda d: first_judgment(d).update(seconds=-1.5),
         lambda d: f"evaluator 'evaluator-ada1', pair {first_judgment(d)['pair']}: seconds -1.5 is negative"),
        ("inconsistent seconds", lambda d: first_judgment(d).update(seconds=first_judgment(d)["seconds"] + 5),
         lambda d: f"evaluator 'evaluator-ada1', pair {first_judgment(d)['pair']}: seconds "
                   f"{first_judgment(d)['seconds']!r} does not match submitted_at - shown_at = "
                   f"{first_judgment(d)['seconds'] - 5!r} (tolerance 0.001 s)"),
        ("negative client seconds", lambda d: first_judgment(d).update(client_seconds=-2.0),
         lambda d: f"evaluator 'evaluator-ada1', pair {first_judgment(d)['pair']}: client_seconds -2.0 is "
                   "negative or not a finite number"),
    ]


@pytest.mark.parametrize(("change", "message"), [case[1:] for case in refusal_cases()],
                         ids=[case[0] for case in refusal_cases()])
def test_the_import_refuses_a_bad_document_naming_the_item_and_writes_nothing(transfer_study, tmp_path, change,
                                                                               message):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    change(document)
    (tmp_path / "bad.json").write_text(json.dumps(document), encoding="utf-8")
    counts = db_counts()
    with pytest.raises(CommandError) as info:
        call_command("import_study", file=str(tmp_path / "bad.json"), rename="Bad", reuse_evaluators=True)
    assert str(info.value).startswith("nothing was imported: ")
    assert message(document) in str(info.value)
    assert db_counts() == counts


def test_the_first_judgment_times_are_what_the_refusals_assume(transfer_study, tmp_path):
    """The refusal cases edit ada's first judgment by pair position: shown at T0, 7.25 s (plus k) later."""
    study, ada_done, _ = transfer_study
    judgment = ada_judgment(export_to(tmp_path / "doc.json", study))
    k = [position for position, _, _ in ada_done].index(judgment["pair"])
    assert judgment["shown_at"] == (T0 + timedelta(minutes=k)).isoformat()
    assert judgment["seconds"] == 7.25 + k


def test_a_database_refusal_the_checks_missed_is_a_command_error(transfer_study, tmp_path, monkeypatch):
    """Belt and braces: should a row pass the checks and break a constraint, the command still ends in a
    CommandError and the transaction leaves nothing behind."""
    study, _, _ = transfer_study
    export_to(tmp_path / "doc.json", study)
    monkeypatch.setattr(study_transfer, "_check_pairs", lambda pairs, questions: None)
    document = json.loads((tmp_path / "doc.json").read_text(encoding="utf-8"))
    document["pairs"][0]["questions"] = [document["pairs"][0]["questions"][0]] * 2
    (tmp_path / "doc.json").write_text(json.dumps(document), encoding="utf-8")
    counts = db_counts()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_study", file=str(tmp_path / "doc.json"), rename="Bad", reuse_evaluators=True)
    assert db_counts() == counts


def test_a_version_2_export_without_models_or_pools_still_imports(transfer_study, tmp_path):
    """Version 2 had neither ``models_used`` nor ``pools_analysis`` and sorted each pair's questions;
    its pairs are imported in the order the file gives."""
    study, _, _ = transfer_study
    document = export_to(tmp_path / "v3.json", study)
    document["schema_version"] = 2
    document["scoring_run"].pop("models_used")
    document.pop("pools_analysis")
    for pair in document["pairs"]:
        pair["questions"].sort()
    result = study_import(document=document, rename="From v2", reuse_evaluators=True)
    again = export_to(tmp_path / "again.json", result.study)
    assert [p["questions"] for p in again["pairs"]] == [p["questions"] for p in document["pairs"]]
    assert again["scoring_run"]["models_used"] == [] and again["pools_analysis"] is None
    assert result.judgments == 8


def test_the_low_coverage_choice_travels_with_the_study(transfer_study, tmp_path):
    study, _, _ = transfer_study
    Study.objects.filter(pk=study.pk).update(include_low_coverage=True)
    document = export_to(tmp_path / "doc.json", Study.objects.get(pk=study.pk))
    assert document["study"]["include_low_coverage"] is True
    study_import(document=document, rename="Low coverage copy", reuse_evaluators=True)
    assert Study.objects.get(name="Low coverage copy").include_low_coverage is True


def test_it_refuses_a_pseudonym_that_is_not_a_valid_username(transfer_study, tmp_path):
    study, _, _ = transfer_study
    document = export_to(tmp_path / "doc.json", study)
    document["evaluators"][0]["pseudonym"] = "evaluator <ada>"
    users = get_user_model().objects.count()
    with pytest.raises(ValueError, match=re.escape("username 'evaluator <ada>' is not allowed")):
        study_import(document=document, rename="Bad names", reuse_evaluators=True)
    assert get_user_model().objects.count() == users and not Study.objects.filter(name="Bad names").exists()


def test_the_imported_run_gets_sort_keys_in_the_order_of_its_stored_values(transfer_study, tmp_path):
    from annotate.models import QuestionSortKey
    from annotate.runs.selectors.results import run_questions

    study, _, _ = transfer_study
    export_to(tmp_path / "first.json", study)
    wipe_everything(study)
    call_command("import_study", file=str(tmp_path / "first.json"))
    run = Study.objects.get(name="Transfer").scoring_run
    assert QuestionSortKey.objects.filter(run=run, column="n_observed").exists()
    stored = list(QuestionResult.objects.filter(run=run))
    for sort in ("eip_scaled", "n_observed"):
        values = {r.question_id: r.n_observed if sort == "n_observed" else r.scores.get(sort) for r in stored}
        defined = sorted((q for q in values if values[q] is not None), key=lambda q: (-values[q], q))
        undefined = sorted(q for q in values if values[q] is None)
        assert [r.question_id for r in run_questions(run=run, sort=sort)] == defined + undefined
