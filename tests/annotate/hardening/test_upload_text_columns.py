"""Every text read from an uploaded file is checked against the column it lands in: a NUL or
control character, or more characters than the column holds, is a problem named by file, row
and column, and nothing is written."""
from __future__ import annotations

import csv
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Participation, ResponseSet, Study
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services.judgment_import import (
    REQUIRED,
    TEXT_COLUMNS,
    ImportFile,
    JudgmentImportError,
    judgments_import,
)
from tests.annotate.studies.test_judgment_import import MODELS, QUESTIONS

pytestmark = pytest.mark.django_db

GOOD = {"evaluator": "e1", "group": "crowd", "dataset_a": "D", "question_a": "q1", "dataset_b": "D",
        "question_b": "q2", "harder": "a"}
HEADER = [*list(REQUIRED), "group"]


@pytest.fixture
def run(tmp_path):
    (tmp_path / "questions.csv").write_text(QUESTIONS, encoding="utf-8")
    (tmp_path / "models.csv").write_text(MODELS, encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "models.csv"), "--format", "wide", "--dataset", "D",
                 "--questions", str(tmp_path / "questions.csv"), "--subject-column", "category", stdout=StringIO())
    run = scoring_run_create(response_set=ResponseSet.objects.get(), params={"methods": ["eip", "accuracy"]})
    scoring_run_execute(run=run)
    return run


def _csv(rows: list[dict]) -> bytes:
    out = StringIO()
    writer = csv.DictWriter(out, fieldnames=HEADER)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _import(run, data: bytes, fmt: str) -> list[str]:
    with pytest.raises(JudgmentImportError) as caught:
        judgments_import(files=[ImportFile(name=f"votes.{fmt}", data=data, format=fmt)], run=run, name="S")
    assert Study.objects.count() == 0 and Participation.objects.count() == 0
    return caught.value.problems


def _too_long(column: str) -> str:
    model, field = TEXT_COLUMNS[column]
    return "x" * (model._meta.get_field(field).max_length + 1)


@pytest.mark.parametrize(("fmt", "make"), [("csv", _csv), ("jsonl", _jsonl)])
@pytest.mark.parametrize("column", list(TEXT_COLUMNS))
def test_every_text_column_of_a_judgment_import_refuses_nul_controls_and_overlong_values(run, fmt, make, column):
    limit = TEXT_COLUMNS[column][0]._meta.get_field(TEXT_COLUMNS[column][1]).max_length
    rows = [{**GOOD, column: "a\x00b"}, {**GOOD, "evaluator": "e2", column: "a\x07b"},
            {**GOOD, "evaluator": "e3", column: _too_long(column)}]
    problems = _import(run, make(rows), fmt)
    first = 2 if fmt == "csv" else 1
    mine = [p for p in problems if f", column {column}:" in p]
    assert mine == [
        f"votes.{fmt}, row {first}, column {column}: the value holds a NUL character, which cannot be stored",
        f"votes.{fmt}, row {first + 1}, column {column}: the value holds a control character, which cannot be stored",
        f"votes.{fmt}, row {first + 2}, column {column}: the value is {limit + 1:,} characters long; "
        f"at most {limit:,} are stored",
    ]


def test_two_evaluators_alike_in_their_first_128_characters_are_refused_not_a_server_error(run):
    rows = [{**GOOD, "evaluator": "p" * 128 + "A"}, {**GOOD, "evaluator": "p" * 128 + "B"}]
    problems = _import(run, _csv(rows), "csv")
    assert problems == [f"votes.csv, row {r}, column evaluator: the value is 129 characters long; at most 128 are "
                        "stored" for r in (2, 3)]


def test_a_label_studio_annotator_and_a_files_group_are_checked_alike(run):
    task = {"id": 1, "data": {"dataset_a": "D", "question_a": "q1", "dataset_b": "D", "question_b": "q2"},
            "annotations": [{"completed_by": {"email": "a\x00b"}, "was_cancelled": True}]}
    with pytest.raises(JudgmentImportError) as caught:
        judgments_import(files=[ImportFile(name="ls.json", data=json.dumps([task]).encode(), format="label-studio",
                                           group="g" * 101)], run=run, name="S")
    assert caught.value.problems == [
        "ls.json, row task 1 (id 1), annotation 1, column evaluator: the value holds a NUL character, which cannot "
        "be stored",
        "ls.json, row task 1 (id 1), annotation 1, column group: the value is 101 characters long; at most 100 are "
        "stored",
    ]


@pytest.mark.parametrize(("model_name", "expected"), [
    ("m\x00x", "NUL character"), ("m" * 201, "longer than 200 characters")])
def test_a_response_set_upload_refuses_nul_and_overlong_names_too(tmp_path, model_name, expected):
    (tmp_path / "r.csv").write_text(f"question_id,{model_name}\nq1,1\n", encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        call_command("load_responses", "--responses", str(tmp_path / "r.csv"), "--format", "wide", "--dataset", "D",
                     stdout=StringIO())
    assert expected in str(caught.value)
    assert ResponseSet.objects.count() == 0
