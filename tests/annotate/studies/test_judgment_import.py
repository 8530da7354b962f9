"""Judgments made elsewhere: CSV, JSON Lines and Label Studio imports, their checks, and the
report's comparison of evaluator groups (agreement worked out by hand below)."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotate.api.services import api_token_create
from annotate.models import Choice, Judgment, Participation, ResponseSet, Study, StudyOrigin
from annotate.reports.services import alignment_report_compute
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services.judgment_import import (
    ERR_SAME_BYTES,
    ImportFile,
    JudgmentImportError,
    judgments_import,
)
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_export import dump_export, study_export
from tests.annotate.factories import make_researcher

pytestmark = pytest.mark.django_db

QUESTIONS = "question_id,category\nq1,bio\nq2,bio\nq3,bio\nq4,chem\nq5,chem\nq6,chem\n"
MODELS = ("question_id,m1,m2,m3,m4\n"
          "q1,1,1,1,1\nq2,1,1,0,1\nq3,0,1,0,0\nq4,1,1,1,0\nq5,0,0,1,0\nq6,1,0,0,0\n")
# P1 (q1, q2), P2 (q1, q3), P3 (q4, q5), P4 (q5, q6); "a" = the first question named
VOTES = {  # evaluator -> group, verdict per pair
    "c1": ("crowd", "b", "b", "a", "a"),
    "c2": ("crowd", "b", "b", "b", "a"),
    "c3": ("crowd", "a", "b", "b", "skip"),
    "e1": ("experts", "b", "b", "a", "a"),
    "e2": ("experts", "b", "a", "a", "a"),
}
PAIRS = (("q1", "q2"), ("q1", "q3"), ("q4", "q5"), ("q5", "q6"))
# Majorities: crowd b, b, b, a; experts b, tie (1-1), a, a.
# crowd vs experts on the pairs both decided (P1, P3, P4): agree, disagree, agree -> 2/3, kappa 1/3.
# Simple rank (models failing: q1 0, q2 1, q3 3, q4 1, q5 3, q6 3): b, b, b, tie.
# crowd vs simple rank: P1-P3 agree, P4 a method tie (a miss) -> 3/4; kappa over both decided (P1-P3) 1.
# experts vs simple rank: decided P1 (agree), P3 (disagree), P4 (method tie) -> 1/3; kappa over P1, P3: 0.


def _rows():
    for who, (group, *verdicts) in VOTES.items():
        for (a, b), harder in zip(PAIRS, verdicts, strict=True):
            yield {"evaluator": who, "group": group, "dataset_a": "D", "question_a": a, "dataset_b": "D",
                   "question_b": b, "harder": harder, "seconds": 4.5, "submitted_at": "2026-11-01T10:00:00Z"}


def _csv() -> bytes:
    header = "evaluator,group,dataset_a,question_a,dataset_b,question_b,harder,seconds,submitted_at\n"
    return (header + "".join(",".join(str(r[k]) for k in header.strip().split(",")) + "\n" for r in _rows())).encode()


def _jsonl() -> bytes:
    return "".join(json.dumps(r) + "\n" for r in _rows()).encode()


def _label_studio() -> bytes:
    by_pair: dict[tuple[str, str], list] = {}
    users = {who: k + 1 for k, who in enumerate(VOTES)}
    for r in _rows():
        annotation = {"completed_by": users[r["evaluator"]], "lead_time": 4.5, "created_at": r["submitted_at"],
                      "was_cancelled": r["harder"] == "skip",
                      "result": [] if r["harder"] == "skip" else [
                          {"from_name": "pw", "to_name": ["left", "right"], "type": "pairwise",
                           "value": {"selected": "left" if r["harder"] == "a" else "right"}}]}
        by_pair.setdefault((r["question_a"], r["question_b"]), []).append(annotation)
    tasks = [{"id": 10 + k, "data": {"dataset_a": "D", "question_a": a, "dataset_b": "D", "question_b": b,
                                     "left": f"text of {a}", "right": f"text of {b}"},
              "annotations": anns} for k, ((a, b), anns) in enumerate(by_pair.items())]
    return json.dumps(tasks).encode()


@pytest.fixture
def run(tmp_path):
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / "models.csv").write_text(MODELS, encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "models.csv"), "--format", "wide", "--dataset", "D",
                 "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category", stdout=StringIO())
    run = scoring_run_create(response_set=ResponseSet.objects.get(),
                             params={"methods": ["eip", "simple_rank", "accuracy"]})
    scoring_run_execute(run=run)
    return run


def _check_study(study: Study, *, with_groups: bool = True) -> None:
    assert study.origin == StudyOrigin.IMPORTED and study.n_pairs == 4
    parts = Participation.objects.filter(study=study)
    assert parts.count() == 5
    if with_groups:
        assert sorted(parts.values_list("group", flat=True)) == ["crowd"] * 3 + ["experts"] * 2
    assert Judgment.objects.filter(pair__study=study, choice=Choice.SKIP).count() == 1
    assert Judgment.objects.filter(pair__study=study).exclude(choice=Choice.SKIP).count() == 19


@pytest.mark.parametrize(("fmt", "make"), [("csv", _csv), ("jsonl", _jsonl)])
def test_csv_and_json_lines_import_with_groups_compared_by_hand(run, fmt, make):
    study = judgments_import(files=[ImportFile(f"judgments.{fmt}", make(), fmt)], run=run, name="imported")
    _check_study(study)
    j = Judgment.objects.filter(pair__study=study, participation__platform_participant_id="c3",
                                pair__question_a__external_id="q1", pair__question_b__external_id="q2").get()
    assert j.harder_question.external_id == "q1" and j.seconds == 4.5
    report = alignment_report_compute(study=study, n_boot=200)
    groups = report.groups
    assert [(g.name, g.n_evaluators, g.n_votes, g.n_pairs_decided) for g in groups.groups] == [
        ("crowd", 3, 11, 4), ("experts", 2, 8, 3)]
    (pair,) = groups.pairs
    assert (pair.group_x, pair.group_y, pair.n) == ("crowd", "experts", 3)
    assert pair.agreement == pytest.approx(2 / 3, abs=1e-12) and pair.kappa == pytest.approx(1 / 3, abs=1e-12)
    assert pair.agreement_ci[0] <= 2 / 3 <= pair.agreement_ci[1]
    by = {(r.group, r.method): r for r in groups.methods}
    crowd, experts = by[("crowd", "simple_rank")], by[("experts", "simple_rank")]
    assert (crowd.n, crowd.agreement, crowd.kappa) == (4, pytest.approx(0.75, abs=1e-12), pytest.approx(1.0))
    assert (experts.n, experts.agreement, experts.kappa) == (3, pytest.approx(1 / 3, abs=1e-12),
                                                             pytest.approx(0.0, abs=1e-12))
    document = report.to_json()
    assert document["groups"]["pairs"][0]["n"] == 3


def test_a_label_studio_export_imports_with_a_group_per_file(run):
    study = judgments_import(files=[ImportFile("export.json", _label_studio(), "label-studio", group="crowd")],
                             run=run, name="from label studio")
    _check_study(study, with_groups=False)
    assert set(Participation.objects.filter(study=study).values_list("group", flat=True)) == {"crowd"}
    assert set(Participation.objects.filter(study=study).values_list("platform_participant_id", flat=True)) == {
        "1", "2", "3", "4", "5"}
    j = Judgment.objects.get(pair__study=study, participation__platform_participant_id="2",
                             pair__question_a__external_id="q4")
    assert j.harder_question.external_id == "q5"  # c2 said b on (q4, q5): "right"


def test_a_malformed_csv_row_is_named_by_file_row_and_column_and_nothing_is_written(run):
    rows = [line.split(",") for line in _csv().decode().splitlines()]
    rows[3][6] = "c"  # row 4 of the file: harder = c
    rows[5][5] = "q9"  # row 6: an unknown question_b
    rows = [",".join(r) for r in rows]
    with pytest.raises(JudgmentImportError) as info:
        judgments_import(files=[ImportFile("judgments.csv", ("\n".join(rows) + "\n").encode(), "csv")], run=run,
                         name="broken")
    assert info.value.problems == [
        "judgments.csv, row 4, column harder: 'c' is not a, b or skip",
        "judgments.csv, row 6, column question_b: no question 'q9' in dataset 'D'",
    ]
    assert Study.objects.count() == 0 and Participation.objects.count() == 0


def test_a_second_judgment_of_a_pair_and_bad_label_studio_results_are_named(run):
    text = _csv() + b"c1,crowd,D,q2,D,q1,a,1,\n"
    with pytest.raises(JudgmentImportError) as info:
        judgments_import(files=[ImportFile("j.csv", text, "csv")], run=run, name="twice")
    assert info.value.problems == ["j.csv, row 22, column evaluator: evaluator 'c1' already judged this pair at row 2"]
    tasks = json.loads(_label_studio())
    tasks[1]["annotations"][0]["result"][0]["value"]["selected"] = "middle"
    with pytest.raises(JudgmentImportError) as info:
        judgments_import(files=[ImportFile("export.json", json.dumps(tasks).encode(), "label-studio")], run=run,
                         name="bad ls")
    assert info.value.problems == ["export.json, row task 2 (id 11), annotation 1, column result.value.selected: "
                                   "'middle' is not left or right"]
    assert Study.objects.count() == 0


def test_the_same_bytes_are_not_imported_twice(run):
    first = judgments_import(files=[ImportFile("a.csv", _csv(), "csv")], run=run, name="first")
    with pytest.raises(ValueError) as info:
        judgments_import(files=[ImportFile("renamed.csv", _csv(), "csv")], run=run, name="second")
    assert str(info.value) == ERR_SAME_BYTES.format(study="first", pk=first.pk)
    assert Study.objects.count() == 1


def test_the_command_imports_and_reports_problems(run, tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(_jsonl())
    out = StringIO()
    call_command("import_judgments", "--file", str(path), "--run", str(run.pk), "--name", "cmd", stdout=out)
    study = Study.objects.get(name="cmd")
    assert out.getvalue().startswith(f"Imported study 'cmd' (id {study.pk}): 4 pairs, 5 evaluators, 20 judgments")
    bad = tmp_path / "bad.csv"
    bad.write_text("evaluator,harder\nx,a\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad.csv, row 1, column dataset_a, question_a, dataset_b, question_b: "
                                           r"missing column"):
        call_command("import_judgments", "--file", str(bad), "--run", str(run.pk), "--name", "bad", stdout=StringIO())
    assert Study.objects.count() == 1


def test_the_api_imports_a_file_and_names_problems(run, client):
    user = make_researcher("rosa")
    _, key = api_token_create(user=user)
    auth = {"HTTP_AUTHORIZATION": f"Token {key}"}
    upload = SimpleUploadedFile("judgments.csv", _csv(), content_type="text/csv")
    answer = client.post("/api/studies/imported/", data={"run": run.pk, "name": "api", "format": "csv",
                                                         "files": [upload]}, **auth)
    assert answer.status_code == 201, answer.content
    study = Study.objects.get(name="api")
    assert answer.json() == {"study": study.pk, "n_pairs": 4, "n_evaluators": 5, "n_judgments": 20}
    assert study.created_by == user
    bad = SimpleUploadedFile("bad.jsonl", b'{"evaluator": "x"}\n', content_type="application/json")
    answer = client.post("/api/studies/imported/", data={"run": run.pk, "name": "bad", "format": "jsonl",
                                                         "files": [bad]}, **auth)
    assert answer.status_code == 400
    assert "bad.jsonl, row 1, column dataset_a: blank; a value is required" in answer.json()["error"]
    assert Study.objects.count() == 1


def test_an_exported_imported_study_keeps_its_origin_and_groups(run):
    study = judgments_import(files=[ImportFile("j.csv", _csv(), "csv")], run=run, name="original")
    document = json.loads(dump_export(study_export(study=study)))
    copy = study_import(document=document, rename="copy", reuse_evaluators=True).study
    assert copy.origin == StudyOrigin.IMPORTED
    assert sorted(Participation.objects.filter(study=copy).values_list("group", flat=True)) == \
        ["crowd"] * 3 + ["experts"] * 2


# --- two Label Studio exports, one per group, from the browser page and the command ------------------------------

def _label_studio_of(evaluators: tuple[str, ...], tasks: slice = slice(None)) -> bytes:
    """A Label Studio export holding only the annotations of ``evaluators`` (user ids as in :func:`_label_studio`)
    on the ``tasks`` slice of the four pairs."""
    users = {who: k + 1 for k, who in enumerate(VOTES)}
    keep = {users[who] for who in evaluators}
    tasks = json.loads(_label_studio())[tasks]
    for task in tasks:
        task["annotations"] = [a for a in task["annotations"] if a["completed_by"] in keep]
    return json.dumps(tasks).encode()


def _check_groups_by_hand(study: Study) -> None:
    """Crowd (c1-c3) and experts (e1, e2): the agreement worked out at the top of this file."""
    assert sorted(Participation.objects.filter(study=study).values_list("group", flat=True)) == \
        ["crowd"] * 3 + ["experts"] * 2
    groups = alignment_report_compute(study=study, n_boot=200).groups
    assert [(g.name, g.n_evaluators, g.n_votes, g.n_pairs_decided) for g in groups.groups] == [
        ("crowd", 3, 11, 4), ("experts", 2, 8, 3)]
    (pair,) = groups.pairs
    assert (pair.group_x, pair.group_y, pair.n) == ("crowd", "experts", 3)
    assert pair.agreement == pytest.approx(2 / 3, abs=1e-12) and pair.kappa == pytest.approx(1 / 3, abs=1e-12)
    by = {(r.group, r.method): r for r in groups.methods}
    assert (by[("crowd", "simple_rank")].n, by[("crowd", "simple_rank")].agreement) == (4, pytest.approx(0.75))
    assert (by[("experts", "simple_rank")].n, by[("experts", "simple_rank")].kappa) == (
        3, pytest.approx(0.0, abs=1e-12))


def test_two_label_studio_exports_from_the_page_are_two_groups_compared_by_hand(run, client):
    client.force_login(make_researcher("rosa"))
    page = client.get(f"/studies/new/imported/?run={run.pk}")
    assert page.status_code == 200
    assert f'<option value="{run.pk}" selected>' in page.content.decode()
    answer = client.post("/studies/new/imported/", data={
        "run": run.pk, "name": "two groups", "format": "",
        "file_1": SimpleUploadedFile("crowd.json", _label_studio_of(("c1", "c2", "c3"))), "group_1": "crowd",
        "file_2": SimpleUploadedFile("experts.json", _label_studio_of(("e1", "e2"))), "group_2": "experts",
    }, follow=True)
    study = Study.objects.get(name="two groups")
    assert answer.redirect_chain[-1][0] == f"/studies/{study.pk}/report/"
    assert [str(m) for m in answer.context["messages"]] == [
        "Imported study 'two groups': 4 pairs, 5 evaluators in groups crowd (3), experts (2), "
        "20 judgments and skips."]
    assert study.created_by.username == "rosa" and study.origin == StudyOrigin.IMPORTED
    _check_groups_by_hand(study)


def test_the_command_takes_a_group_per_file(run, tmp_path):
    crowd, experts = tmp_path / "crowd.json", tmp_path / "experts.json"
    crowd.write_bytes(_label_studio_of(("c1", "c2", "c3")))
    experts.write_bytes(_label_studio_of(("e1", "e2")))
    with pytest.raises(CommandError, match=r"one --group for every file, or one for all; got 3 group\(s\) for 2"):
        call_command("import_judgments", "--file", str(crowd), "--file", str(experts), "--group", "a", "--group",
                     "b", "--group", "c", "--run", str(run.pk), "--name", "x", stdout=StringIO())
    call_command("import_judgments", "--file", str(crowd), "--file", str(experts), "--group", "crowd",
                 "--group", "experts", "--run", str(run.pk), "--name", "cmd groups", stdout=StringIO())
    _check_groups_by_hand(Study.objects.get(name="cmd groups"))


def test_an_evaluator_in_two_groups_is_a_problem(run):
    one = ImportFile("crowd.json", _label_studio_of(("c1", "c2"), slice(0, 2)), "label-studio", group="crowd")
    two = ImportFile("experts.json", _label_studio_of(("c2", "e1"), slice(2, 4)), "label-studio", group="experts")
    with pytest.raises(JudgmentImportError) as info:
        judgments_import(files=[one, two], run=run, name="mixed")
    assert info.value.problems == [
        f"experts.json, row task {t} (id {10 + t + 1}), annotation 1, column group: evaluator '2' is in group "
        "'experts' here but in group 'crowd' at crowd.json, row task 1 (id 10), annotation 2; an evaluator belongs "
        "to one group" for t in (1, 2)]
    assert Study.objects.count() == 0


def test_the_page_lists_every_problem_and_writes_nothing(run, client):
    client.force_login(make_researcher("rosa"))
    rows = [line.split(",") for line in _csv().decode().splitlines()]
    rows[3][6] = "c"
    rows[5][5] = "q9"
    broken = ("\n".join(",".join(r) for r in rows) + "\n").encode()
    answer = client.post("/studies/new/imported/", data={
        "run": run.pk, "name": "broken", "format": "",
        "file_1": SimpleUploadedFile("judgments.csv", broken)})
    assert answer.status_code == 400
    body = answer.content.decode()
    assert "2 problems; nothing was imported." in body
    assert "<li>judgments.csv, row 4, column harder: &#x27;c&#x27; is not a, b or skip</li>" in body
    assert ("<li>judgments.csv, row 6, column question_b: no question &#x27;q9&#x27; in dataset "
            "&#x27;D&#x27;</li>") in body
    assert Study.objects.count() == 0 and Participation.objects.count() == 0 and Judgment.objects.count() == 0


def test_the_page_refuses_the_same_bytes_an_unknown_extension_and_no_file(run, client):
    client.force_login(make_researcher("rosa"))
    first = judgments_import(files=[ImportFile("a.csv", _csv(), "csv")], run=run, name="first")
    answer = client.post("/studies/new/imported/", data={
        "run": run.pk, "name": "again", "file_1": SimpleUploadedFile("b.csv", _csv())})
    # The service's message, as a sentence.
    assert (f"These bytes were already imported as study &#x27;first&#x27; (id {first.pk}); nothing was "
            "written") in answer.content.decode()
    answer = client.post("/studies/new/imported/", data={
        "run": run.pk, "name": "txt", "file_1": SimpleUploadedFile("b.txt", _csv())})
    assert "Cannot tell the format of b.txt from its extension" in answer.content.decode()
    answer = client.post("/studies/new/imported/", data={"run": run.pk, "name": "none", "group_2": "crowd"})
    assert "A group is given here but no file." in answer.content.decode()
    answer = client.post("/studies/new/imported/", data={"run": run.pk, "name": "none"})
    assert "Choose at least one file." in answer.content.decode()
    assert list(Study.objects.values_list("name", flat=True)) == ["first"]


def test_the_commands_give_the_study_an_owner(run, tmp_path):
    path = tmp_path / "judgments.csv"
    path.write_bytes(_csv())
    rosa = make_researcher("rosa")
    with pytest.raises(CommandError, match=r"--owner must name an existing user; no user 'nobody'"):
        call_command("import_judgments", "--file", str(path), "--run", str(run.pk), "--name", "x", "--owner",
                     "nobody", stdout=StringIO())
    assert Study.objects.count() == 0
    call_command("import_judgments", "--file", str(path), "--run", str(run.pk), "--name", "owned", "--owner",
                 "rosa", stdout=StringIO())
    assert Study.objects.get(name="owned").created_by == rosa


@pytest.mark.parametrize("value", ["\x00", "x" * 10_000, "99999999999999999999"])
def test_hostile_values_on_the_import_and_label_pages_are_4xx_or_refused_and_write_nothing(run, client, value):
    client.force_login(make_researcher("rosa"))
    assert client.get("/studies/new/imported/", {"run": value}).status_code == 200
    assert client.get("/analyses/human_labels/", {"response_set": value}).status_code == 200
    answer = client.post("/studies/new/imported/", data={
        "run": value, "name": value, "group_1": value, "format": value,
        "file_1": SimpleUploadedFile("judgments.csv", _csv())})
    assert answer.status_code == 400 and b"errorlist" in answer.content
    assert Study.objects.count() == 0 and Participation.objects.count() == 0
    answer = client.post("/studies/new/imported/", data={
        "run": run.pk, "name": value, "group_1": value, "file_1": SimpleUploadedFile("judgments.csv", _csv())})
    if value.isdigit():  # a plain name and group: imported
        assert answer.status_code == 302 and Study.objects.get().name == value
    else:
        assert answer.status_code == 400 and b"errorlist" in answer.content
        assert Study.objects.count() == 0 and Participation.objects.count() == 0


def test_the_page_the_api_and_the_command_refuse_an_unknown_extension_with_one_message(run, tmp_path):
    """Format and size are checked in one service function; each way in shows its message."""
    from annotate.studies.services.judgment_import import (
        ERR_FILE_EXTENSION,
        ERR_FILE_SIZE,
        MAX_IMPORT_BYTES,
        import_file_read as read_file,
    )

    reads = []
    with pytest.raises(ValueError) as refused:
        read_file(name="b.txt", size=10, read=lambda: reads.append(1) or b"")
    assert str(refused.value) == ERR_FILE_EXTENSION.format(name="b.txt", formats="csv, jsonl, label-studio")
    with pytest.raises(ValueError) as refused:
        read_file(name="b.csv", size=MAX_IMPORT_BYTES + 1, read=lambda: reads.append(1) or b"")
    assert str(refused.value) == ERR_FILE_SIZE.format(name="b.csv", size=MAX_IMPORT_BYTES + 1, limit=MAX_IMPORT_BYTES)
    assert reads == []  # neither file was read
    # an unknown size is checked once the bytes are in
    with pytest.raises(ValueError, match="at most 52,428,800 are accepted"):
        read_file(name="b.csv", size=None, read=lambda: b"x" * (MAX_IMPORT_BYTES + 1))
    chosen = read_file(name="b.txt", size=3, read=lambda: b"abc", format="csv", group="crowd")
    assert (chosen.name, chosen.data, chosen.format, chosen.group) == ("b.txt", b"abc", "csv", "crowd")
    (tmp_path / "b.txt").write_bytes(b"evaluator\n")
    with pytest.raises(CommandError) as command:
        call_command("import_judgments", file=[str(tmp_path / "b.txt")], run=run.pk, name="x")
    assert str(command.value) == ERR_FILE_EXTENSION.format(name="b.txt", formats="csv, jsonl, label-studio")
