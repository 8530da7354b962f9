"""Import errors that name the real cause: an unknown dataset name (with the
stored name it likely meant), a ';'-separated file, items of a Label Studio
file that are not tasks, a file's name as uploaded, and a CSV parser's
complaint in the site's words with the file's line (the same sentence from
the judgment import and the response uploads)."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotate.catalog.loaders import tabular as t
from annotate.catalog.loaders.base import LoadError
from annotate.core.csv_text import SEMICOLON_SEPARATED, UNCLOSED_QUOTE, csv_record_line
from annotate.core.service_errors import sentence_start
from annotate.management.lookups import datasets_from_option, subjects_from_option
from annotate.models import Judgment, ResponseSet, Study
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services import judgment_import as ji
from annotate.studies.services.judgment_import import ImportFile, JudgmentImportError, judgments_import
from tests.annotate.factories import make_researcher

pytestmark = pytest.mark.django_db

HEADER = "evaluator,group,dataset_a,question_a,dataset_b,question_b,harder\n"


@pytest.fixture
def run(tmp_path):
    (tmp_path / "questions.csv").write_text("question_id,category\n892,law\n893,law\n894,law\n", encoding="utf-8")
    (tmp_path / "models.csv").write_text("question_id,m1,m2,m3\n892,1,1,0\n893,1,0,0\n894,0,0,1\n",
                                         encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "models.csv"), "--format", "wide", "--dataset",
                 "mmlu-pro", "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category",
                 stdout=StringIO())
    run = scoring_run_create(response_set=ResponseSet.objects.get(), params={"methods": ["eip", "accuracy"]})
    scoring_run_execute(run=run)
    return run


def _problems(run, name: str, data: bytes, fmt: str = "csv") -> list[str]:
    with pytest.raises(JudgmentImportError) as refused:
        judgments_import(files=[ImportFile(name, data, fmt)], run=run, name="x")
    assert Study.objects.count() == 0 and Judgment.objects.count() == 0
    return refused.value.problems


def test_an_unknown_dataset_is_said_with_the_name_it_likely_meant(run):
    data = (HEADER + "r1,,MMLU-Pro,892,mmlu-pro,893,a\nr1,,Other,892,mmlu-pro,894,b\n").encode()
    assert _problems(run, "j.csv", data) == [
        "j.csv, row 2, column dataset_a: no dataset 'MMLU-Pro'; did you mean 'mmlu-pro'?",
        "j.csv, row 3, column dataset_a: no dataset 'Other'; known: 'mmlu-pro'",
    ]


def test_an_unknown_question_of_a_known_dataset_is_still_the_question(run):
    data = (HEADER + "r1,,mmlu-pro,999,mmlu-pro,893,a\n").encode()
    assert _problems(run, "j.csv", data) == [
        "j.csv, row 2, column question_a: no question '999' in dataset 'mmlu-pro'"]


def test_a_semicolon_file_is_said_to_be_separated_by_semicolons_as_the_response_upload_says(run, tmp_path):
    data = HEADER.replace(",", ";").encode() + b"r1;;mmlu-pro;892;mmlu-pro;893;a\n"
    assert _problems(run, "j.csv", data) == [f"j.csv, row 1, column -: {SEMICOLON_SEPARATED}"]
    path = tmp_path / "scores.csv"
    path.write_bytes(b"question_id;m1;m2\nq1;1;0\n")
    with pytest.raises(LoadError) as refused:
        t.parse_wide(path, dataset="D")
    assert [str(p) for p in refused.value.problems] == [f"scores.csv, row 1: {SEMICOLON_SEPARATED}"]


def test_items_of_a_label_studio_file_that_are_not_tasks_are_named_by_position(run):
    data = b'[1, "a", null, {"data": null}, {"data": {}, "annotations": 5}]'
    expected_found = ["1", '"a"', "null", "data null", "annotations 5"]
    columns = ["-", "-", "-", "data", "annotations"]
    assert _problems(run, "ls.json", data, "label-studio") == [
        f"ls.json, row task {k}, column {c}: " + ji.ERR_LS_NOT_TASK.format(found=f)
        for k, (c, f) in enumerate(zip(columns, expected_found, strict=True), start=1)]


def test_an_unclosed_quote_is_said_with_its_line_by_every_csv_reader(run, tmp_path):
    # line 4 opens a quote that never closes; pandas calls it "row 3" (records from 0)
    data = (HEADER + 'r1,,mmlu-pro,892,mmlu-pro,893,a\nr2,,mmlu-pro,892,mmlu-pro,893,b\n'
            'r3,"crowd,mmlu-pro,892,mmlu-pro,894,a\nr4,,mmlu-pro,893,mmlu-pro,894,a\n').encode()
    unclosed = UNCLOSED_QUOTE.format(line=4)
    assert _problems(run, "j.csv", data) == [f"j.csv, row 4, column -: {unclosed}"]
    wide, long, questions = tmp_path / "wide.csv", tmp_path / "long.csv", tmp_path / "questions.csv"
    wide.write_text('question_id,m1,m2\nq1,1,0\nq2,0,1\n"q3,1,0\nq4,1,1\n', encoding="utf-8")
    long.write_text('question_id,model,credit\nq1,m1,1\nq2,m1,0\n"q3,m1,1\nq4,m1,1\n', encoding="utf-8")
    questions.write_text('question_id,category\nq1,law\nq2,law\n"q3,law\nq4,law\n', encoding="utf-8")
    good = tmp_path / "good.csv"
    good.write_text("question_id,m1\nq1,1\n", encoding="utf-8")
    for file, parse in (("wide.csv", lambda: t.parse_wide(wide, dataset="D")),
                        ("long.csv", lambda: t.parse_long(long, dataset="D")),
                        ("questions.csv", lambda: t.parse_wide(good, dataset="D", questions=questions,
                                                               subject_column="category"))):
        with pytest.raises(LoadError) as refused:
            parse()
        assert [str(p) for p in refused.value.problems] == [f"{file}, row 4: {unclosed}"]
        assert "C error" not in str(refused.value)


def test_a_record_spanning_lines_moves_the_line_not_the_row():
    text = 'a,b\n"x\ny",1\n"open,2\n'  # record 2 (row 3) starts on line 4
    assert [csv_record_line(text, r) for r in range(4)] == [1, 2, 4, 5]


@pytest.mark.parametrize(("message", "expected"), [
    ("big.csv is 60,000,073 bytes", "big.csv is 60,000,073 bytes"),
    ("mmlu-pro has no question", "mmlu-pro has no question"),
    ("n_pairs must be 1", "n_pairs must be 1"),
    ("éclair.json is too big", "éclair.json is too big"),
    ("cannot tell the format of big.csv", "Cannot tell the format of big.csv"),
    ("these bytes were already imported", "These bytes were already imported"),
])
def test_a_sentence_starting_with_an_echoed_name_keeps_its_case(message, expected):
    assert sentence_start(message) == expected


def test_the_import_page_echoes_file_names_as_uploaded(run, client, monkeypatch):
    client.force_login(make_researcher("rosa"))
    monkeypatch.setattr(ji, "MAX_IMPORT_BYTES", 10)
    answer = client.post("/studies/new/imported/", data={
        "run": run.pk, "name": "big", "file_1": SimpleUploadedFile("big.csv", b"x" * 20),
        "file_2": SimpleUploadedFile("notes.txt", b"x")})
    body = answer.content.decode()
    assert answer.status_code == 400
    assert "big.csv is 20 bytes; at most 10 are accepted." in body
    assert "Big.csv" not in body
    assert "Cannot tell the format of notes.txt from its extension" in body


def test_the_import_page_example_names_a_loaded_dataset(run, client):
    client.force_login(make_researcher("rosa"))
    body = client.get("/studies/new/imported/").content.decode()
    assert "rater-07,experts,mmlu-pro,892,mmlu-pro,893,b,12.5" in body
    assert "MMLU-Pro" not in body


def test_commands_say_an_unknown_dataset_or_subject_name_with_the_name_it_likely_meant(run):
    with pytest.raises(CommandError) as refused:
        datasets_from_option(["MMLU-Pro"])
    assert str(refused.value) == "no dataset 'MMLU-Pro'; did you mean 'mmlu-pro'?"
    with pytest.raises(CommandError) as refused:
        subjects_from_option(["law", "LAW ", "physics"])
    assert str(refused.value) == "no subject 'LAW '; did you mean 'law'? | no subject 'physics'; known: 'law'"
