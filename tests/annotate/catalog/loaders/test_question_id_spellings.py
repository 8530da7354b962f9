"""A question id matched across the responses and questions files as it will be stored.

The loader stores every name and id cleaned (:mod:`annotate.catalog.loaders.names`: NFC, zero-width,
byte-order-mark, joiner and bidirectional characters removed, no-break spaces made spaces, outer
whitespace stripped). An id written with such a character in one file and cleanly in the other is the
same question, stored exactly as a clean upload would store it; the subject given in both files is
compared cleaned too. Two spellings of one id inside one file are refused, naming the file, the row of
the later spelling and the id column.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate.catalog.loaders import tabular as t
from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.names import clean_name
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.services.loading import response_set_load
from annotate.models import Question
from tests.annotate.factories import stored_responses

#: (id as the responses file writes it, id as the questions file writes it): one question each.
SPELLINGS = {
    "zero-width space in the responses file": ("q3\u200b", "q3"),
    "zero-width space in the questions file": ("q3", "q3\u200b"),
    "byte-order mark before the id": ("\ufeffq3", "q3"),
    "zero-width joiner inside the id": ("q\u200d3", "q3"),
    "right-to-left mark": ("\u200fq3", "q3"),
    "bidirectional embedding around the id": ("\u202aq3\u202c", "q3"),
    "word joiner in the questions file": ("q3", "q3\u2060"),
    "no-break space against a space": ("q\u00a03", "q 3"),
    "narrow no-break space against a space": ("q 3", "q\u202f3"),
    "trailing no-break space": ("q3\u00a0", "q3"),
    "marks in both files": ("q3\u200b", "\u200eq3"),
}
FORMATS = ("wide", "long", "jsonl")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def responses_file(folder: Path, file_format: str, qid: str, *, subject: str = "law") -> Path:
    """Responses of models m1 and m2 to q1 and ``qid`` (the long and JSON Lines forms repeat the subject)."""
    cells = [("q1", "m1", 1), ("q1", "m2", 0), (qid, "m1", 0), (qid, "m2", 1)]
    if file_format == "wide":
        return write(folder, "r.csv", f"question_id,m1,m2\nq1,1,0\n{qid},0,1\n")
    subjects = {"q1": "math", qid: subject}
    if file_format == "long":
        return write(folder, "r.csv", "question_id,model,credit,subject\n"
                     + "".join(f"{q},{m},{c},{subjects[q]}\n" for q, m, c in cells))
    return write(folder, "r.jsonl", "".join(
        json.dumps({"question_id": q, "model": m, "credit": c, "subject": subjects[q]}) + "\n" for q, m, c in cells))


def parse(folder: Path, file_format: str, in_responses: str, in_questions: str, *, subject: str = "law"):
    folder.mkdir(exist_ok=True)
    responses = responses_file(folder, file_format, in_responses, subject=subject)
    questions = write(folder, "q.csv", f"question_id,subject\nq1,math\n{in_questions},law\n")
    return parse_files(responses=responses, questions=questions, file_format=file_format, dataset="D")


def content(parsed) -> tuple[list, list]:
    """(questions as (dataset, id, subject), responses as (dataset, id, model, credit)), sorted."""
    questions = sorted(zip(parsed.questions["dataset"], parsed.questions["external_id"], parsed.questions["subject"]))
    r = parsed.responses
    return questions, sorted(zip(r["dataset"], r["external_id"], r["model"], r["credit"]))


@pytest.mark.parametrize("file_format", FORMATS)
@pytest.mark.parametrize(("in_responses", "in_questions"), SPELLINGS.values(), ids=SPELLINGS.keys())
def test_an_id_written_with_invisible_characters_in_one_file_matches_its_clean_spelling(
        tmp_path, file_format, in_responses, in_questions):
    clean = clean_name(in_questions)
    assert clean == clean_name(in_responses) and clean in ("q3", "q 3")  # the cast: one id, two spellings
    parsed = parse(tmp_path / "variant", file_format, in_responses, in_questions)
    clean_parse = parse(tmp_path / "clean", file_format, clean, clean)
    assert content(parsed) == content(clean_parse)
    assert sorted(parsed.questions["external_id"]) == sorted(["q1", clean])
    assert not any("with no responses in this upload" in note for note in parsed.notes), parsed.notes


@pytest.mark.parametrize("file_format", ["long", "jsonl"])
def test_a_subject_given_in_both_files_is_compared_as_it_will_be_stored(tmp_path, file_format):
    # "law" with a zero-width space in the responses file, "law" in the questions file: one subject
    parsed = parse(tmp_path, file_format, "q3\u200b", "q3", subject="\u200blaw\u00a0")
    assert sorted(parsed.questions["subject"]) == ["law", "math"]


@pytest.mark.django_db
@pytest.mark.parametrize("file_format", FORMATS)
def test_the_stored_question_is_the_one_a_clean_upload_stores(tmp_path, file_format):
    loaded = response_set_load(parsed=parse(tmp_path / "variant", file_format, "q3\u200b", "\ufeffq3"), name="variant")
    assert sorted(Question.objects.values_list("external_id", flat=True)) == ["q1", "q3"]
    again = response_set_load(parsed=parse(tmp_path / "clean", file_format, "q3", "q3"), name="clean")
    assert Question.objects.count() == 2  # the clean upload found the questions the first one stored
    assert stored_responses(loaded) == stored_responses(again)
    assert sorted(r for _, r in Question.objects.values_list("external_id", "subject__name")) == ["law", "math"]


def refused(**kwargs) -> list[Problem]:
    with pytest.raises(LoadError) as caught:
        parse_files(**kwargs)
    return caught.value.problems


def spelled(given: str, other: str, first: int) -> str:
    return t.ID_SPELLED_TWO_WAYS.format(given=given, other=other, first=first)


@pytest.mark.parametrize("file_format", ["wide", "long"])
def test_two_spellings_of_one_id_in_the_responses_file_are_refused_at_the_later_one(tmp_path, file_format):
    if file_format == "wide":
        text = "question_id,m1\nq3,1\nq4,0\nq3\u200b,1\n"
    else:  # q3 twice, then its other spelling on row 5 (and again on row 6: one problem a spelling)
        text = "question_id,model,credit\nq3,m1,1\nq3,m2,0\nq4,m1,0\nq3\u200b,m3,1\nq3\u200b,m4,0\n"
    problems = refused(responses=write(tmp_path, "r.csv", text), file_format=file_format, dataset="D")
    row = 4 if file_format == "wide" else 5
    assert problems == [Problem("r.csv", spelled("q3\u200b", "q3", 2), row=row, column="question_id")]


def test_two_spellings_of_one_id_in_a_json_lines_file_are_refused_at_the_later_line(tmp_path):
    lines = [{"question_id": q, "model": m, "credit": 1} for q, m in (("q 3", "m1"), ("q\u00a03", "m2"))]
    responses = write(tmp_path, "r.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
    problems = refused(responses=responses, file_format="jsonl", dataset="D")
    assert problems == [Problem("r.jsonl", spelled("q\u00a03", "q 3", 1), row=2, column="question_id")]


def test_two_spellings_of_one_id_in_the_questions_file_are_refused_naming_its_id_column(tmp_path):
    responses = write(tmp_path, "r.csv", "item,m1\nq3,1\n")
    questions = write(tmp_path, "q.csv", "item,subject\nq3,math\nq4,law\n\ufeffq3\u200d,law\n")
    problems = refused(responses=responses, questions=questions, file_format="wide", dataset="D", id_column="item")
    assert problems == [Problem("q.csv", spelled("\ufeffq3\u200d", "q3", 2), row=4, column="item")]


def test_the_same_id_in_two_datasets_is_not_two_spellings(tmp_path):
    responses = write(tmp_path, "r.csv", "dataset,question_id,model,credit\nA,q3,m1,1\nB,q3\u200b,m1,0\n")
    parsed = parse_files(responses=responses, file_format="long")
    assert sorted(zip(parsed.questions["dataset"], parsed.questions["external_id"])) == [("A", "q3"), ("B", "q3")]
