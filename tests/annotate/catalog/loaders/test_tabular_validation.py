"""Every validation rule of issue 3: the exact problem (file, row, column, message)
and nothing written (every catalog table keeps its count)."""
from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from annotate.catalog.loaders import tabular as t
from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.services import load_plan as plan
from annotate.catalog.services.loading import response_set_load
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject
from tests.annotate.factories import n_stored_responses, stored_responses

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet)


def counts() -> dict[str, int]:
    """Rows per table, and "Response": observed cells in the matrix stores."""
    return {**{model.__name__: model.objects.count() for model in TABLES}, "Response": n_stored_responses()}


def write(folder: Path, name: str, text: str, *, encoding: str = "utf-8", bom: bytes = b"") -> Path:
    path = folder / name
    path.write_bytes(bom + text.encode(encoding))
    return path


@pytest.fixture(autouse=True)
def stored(tmp_path: Path) -> dict[str, int]:
    """A response set already in the database, so 'nothing written' is checked against non-empty tables."""
    folder = tmp_path / "stored"
    folder.mkdir()
    responses = write(folder, "base.csv", "question_id,m1,m2\nq1,1,0\nq2,0,1\n")
    questions = write(folder, "base_q.csv", "question_id,subject,question\nq1,math,What is 1+1?\nq2,law,Is it legal?\n")
    response_set_load(parsed=parse_files(responses=responses, file_format="wide", dataset="D", questions=questions),
                      name="base")
    before = counts()
    assert before == {"Dataset": 1, "Subject": 2, "Question": 2, "LanguageModel": 2, "ResponseSet": 1, "Response": 4}
    return before


def refused(stored: dict[str, int], *, name: str = "attempt", new_version: bool = False, **kwargs) -> list[Problem]:
    """Parse and load; expect LoadError; check that no table changed."""
    with pytest.raises(LoadError) as info:
        response_set_load(parsed=parse_files(**kwargs), name=name, new_version=new_version)
    assert counts() == stored
    return info.value.problems


# --- credits ------------------------------------------------------------------------


def test_it_refuses_a_credit_that_is_not_a_number(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1,m2\nq1,1,abc\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.CREDIT_NOT_A_NUMBER.format(value="abc"), row=2, column="m2")]


@pytest.mark.parametrize("value", ["1.5", "-0.1", "2"])
def test_it_refuses_a_credit_outside_the_unit_interval(tmp_path, stored, value):
    path = write(tmp_path, "r.csv", f"question_id,m1\nq1,0\nq2,{value}\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.CREDIT_OUT_OF_RANGE.format(value=value), row=3, column="m1")]


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_it_refuses_a_nan_or_infinite_credit(tmp_path, stored, value):
    path = write(tmp_path, "r.csv", f"model,question_id,credit\nm1,q1,{value}\n")
    problems = refused(stored, responses=path, file_format="long", dataset="D")
    assert problems == [Problem("r.csv", t.CREDIT_NOT_FINITE.format(value=value), row=2, column="credit")]


def test_it_refuses_a_decimal_comma_in_a_tsv(tmp_path, stored):
    path = write(tmp_path, "r.tsv", "model\tquestion_id\tcredit\nm1\tq1\t0,5\n")
    problems = refused(stored, responses=path, file_format="long", dataset="D")
    assert problems == [Problem("r.tsv", t.CREDIT_DECIMAL_COMMA.format(value="0,5"), row=2, column="credit")]


def test_it_refuses_a_quoted_decimal_comma_in_a_csv(tmp_path, stored):
    path = write(tmp_path, "r.csv", 'question_id,m1\nq1,"0,25"\n')
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.CREDIT_DECIMAL_COMMA.format(value="0,25"), row=2, column="m1")]


def test_it_refuses_a_semicolon_separated_file(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id;m1;m2\nq1;1;0,5\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.SEMICOLON_SEPARATED, row=1)]


def test_it_reports_every_bad_credit_with_its_own_row_and_column(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,a,b\nq1,1,x\nq2,7,\nq3,,0\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [
        Problem("r.csv", t.CREDIT_NOT_A_NUMBER.format(value="x"), row=2, column="b"),
        Problem("r.csv", t.CREDIT_OUT_OF_RANGE.format(value="7"), row=3, column="a"),
    ]


def test_it_refuses_a_json_credit_that_is_a_string_or_boolean(tmp_path, stored):
    path = write(tmp_path, "r.jsonl", '{"model": "m1", "question_id": "q1", "credit": "0.5"}\n'
                                      '{"model": "m1", "question_id": "q2", "credit": true}\n')
    problems = refused(stored, responses=path, file_format="jsonl", dataset="D")
    assert problems == [
        Problem("r.jsonl", t.CREDIT_NOT_A_NUMBER.format(value="0.5"), row=1, column="credit"),
        Problem("r.jsonl", t.CREDIT_NOT_A_NUMBER.format(value="true"), row=2, column="credit"),
    ]


def test_it_refuses_a_json_nan_credit(tmp_path, stored):
    path = write(tmp_path, "r.jsonl", '{"model": "m1", "question_id": "q1", "credit": NaN}\n')
    problems = refused(stored, responses=path, file_format="jsonl", dataset="D")
    assert problems == [Problem("r.jsonl", t.CREDIT_NOT_FINITE.format(value="nan"), row=1, column="credit")]


# --- headers, encodings, shape ----------------------------------------------------------


def test_it_refuses_a_wide_file_whose_first_column_is_not_the_id(tmp_path, stored):
    path = write(tmp_path, "r.csv", "qid,m1,m2\nq1,1,0\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    message = t.WRONG_FIRST_COLUMN.format(expected="question_id", found="'qid', 'm1', 'm2'")
    assert problems == [Problem("r.csv", message, row=1, column="qid")]


def test_it_refuses_a_wide_file_without_model_columns(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id\nq1\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    message = t.NO_MODEL_COLUMNS.format(expected="question_id", found="'question_id'")
    assert problems == [Problem("r.csv", message, row=1)]


def test_it_refuses_a_long_file_with_missing_columns_saying_what_it_expected(tmp_path, stored):
    path = write(tmp_path, "r.csv", "model,question,score\nm1,q1,1\n")
    problems = refused(stored, responses=path, file_format="long", dataset="D")
    expected = ("'question_id', 'model', 'credit' (optional: 'dataset', 'subject', 'question', "
                "'options_json', 'answer')")
    message = t.MISSING_COLUMNS.format(missing="'question_id', 'credit'", expected=expected,
                                       found="'model', 'question', 'score'")
    assert problems == [Problem("r.csv", message, row=1)]


def test_it_refuses_a_named_subject_column_that_is_absent(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    questions = write(tmp_path, "q.csv", "question_id,subject\nq1,math\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D",
                       subject_column="category")
    expected = ("'question_id', 'category' (optional: 'dataset', 'subject', 'question', 'options_json', 'answer')")
    message = t.MISSING_COLUMNS.format(missing="'category'", expected=expected, found="'question_id', 'subject'")
    assert problems == [Problem("q.csv", message, row=1)]


def test_it_refuses_a_duplicated_column_name(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1,m2,m1\nq1,1,0,1\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.DUPLICATE_COLUMN.format(name="m1", positions="2, 4"), row=1, column="m1")]


def test_it_refuses_a_blank_column_name(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1,\nq1,1,0\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.BLANK_COLUMN_NAME.format(position=3), row=1)]


def test_it_loads_a_utf8_file_with_a_byte_order_mark_transparently(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1\nq9,1\n", bom=codecs.BOM_UTF8)
    parsed = parse_files(responses=path, file_format="wide", dataset="D")
    response_set = response_set_load(parsed=parsed, name="bom")
    # the BOM did not end up in the first column's name: question q9 got its credit
    stored = stored_responses(response_set)
    assert stored == [("q9", "m1", 1.0)]


@pytest.mark.parametrize(("encoding", "bom", "label"), [
    ("utf-16-le", codecs.BOM_UTF16_LE, "UTF-16"),
    ("utf-16-be", codecs.BOM_UTF16_BE, "UTF-16"),
    ("utf-32-le", codecs.BOM_UTF32_LE, "UTF-32"),
])
def test_it_refuses_a_utf16_or_utf32_file_clearly(tmp_path, stored, encoding, bom, label):
    path = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n", encoding=encoding, bom=bom)
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.UTF16_BOM.format(encoding=label))]


def test_it_refuses_bytes_that_are_not_utf8(tmp_path, stored):
    path = tmp_path / "r.csv"
    path.write_bytes("question_id,m1\ncafé,1\n".encode("latin-1"))
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    # "question_id,m1\ncaf" is 18 bytes, so the Latin-1 "é" (0xe9) sits at offset 18
    assert problems == [Problem("r.csv", t.NOT_UTF8.format(byte=0xE9, offset=18))]


def test_it_refuses_an_empty_file(tmp_path, stored):
    path = write(tmp_path, "r.csv", "\n\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.EMPTY_FILE)]


def test_it_refuses_a_row_longer_than_the_header(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1\nq1,1\nq2,0,1\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.MALFORMED_ROW.format(found=3, expected=2), row=3)]


def test_it_refuses_a_first_data_row_longer_than_the_header(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1\nq1,1,0\nq2,0\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.LONGER_THAN_HEADER, row=2)]


def test_it_refuses_a_file_with_only_blank_credits_rather_than_loading_zero_rows(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1,m2\nq1,,\nq2, ,\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.NO_RESPONSES)]


def test_it_refuses_a_blank_question_id_and_a_blank_model(tmp_path, stored):
    path = write(tmp_path, "r.csv", "model,question_id,credit\nm1,,1\n,q2,0\n")
    problems = refused(stored, responses=path, file_format="long", dataset="D")
    assert problems == [
        Problem("r.csv", t.BLANK_QUESTION_ID, row=2, column="question_id"),
        Problem("r.csv", t.BLANK_MODEL, row=3, column="model"),
    ]


def test_it_refuses_a_long_row_without_dataset_when_no_default_is_given(tmp_path, stored):
    path = write(tmp_path, "r.csv", "dataset,model,question_id,credit\nD,m1,q1,1\n,m1,q2,0\n")
    problems = refused(stored, responses=path, file_format="long")
    assert problems == [Problem("r.csv", t.BLANK_DATASET, row=3, column="dataset")]


def test_it_refuses_invalid_json_lines_with_their_line_numbers(tmp_path, stored):
    path = write(tmp_path, "r.jsonl", '{"model": "m1", "question_id": "q1", "credit": 1}\n\n{"model": \n[1, 2]\n'
                                      '{"model": "m1", "credit": 1}\n')
    problems = refused(stored, responses=path, file_format="jsonl", dataset="D")
    assert problems == [
        Problem("r.jsonl", t.JSON_INVALID.format(detail="Expecting value"), row=3),
        Problem("r.jsonl", t.JSON_NOT_OBJECT.format(kind="list"), row=4),
        Problem("r.jsonl", t.JSON_MISSING_KEY.format(key="question_id", expected="'question_id', 'model', 'credit'"),
                row=5, column="question_id"),
    ]


# --- duplicates ---------------------------------------------------------------------------


def test_it_ignores_exact_duplicate_rows_and_reports_them(tmp_path, stored):
    path = write(tmp_path, "r.csv", "model,question_id,credit\nm1,q7,1\nm2,q7,0\nm1,q7,1\nm1,q8,0.5\n")
    parsed = parse_files(responses=path, file_format="long", dataset="D")
    assert t.EXACT_DUPLICATES_NOTE.format(file="r.csv", count=1, examples="row 4 repeats row 2") in parsed.notes
    response_set = response_set_load(parsed=parsed, name="dups")
    # 4 data rows, one an exact repeat -> 3 responses
    assert n_stored_responses(response_set) == 3
    assert counts()["Response"] == stored["Response"] + 3


def test_it_ignores_an_exact_duplicate_row_of_a_wide_file(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1,m2\nq7,1,0\nq8,0,\nq7,1,0\n")
    parsed = parse_files(responses=path, file_format="wide", dataset="D")
    assert parsed.notes == [t.EXACT_DUPLICATES_NOTE.format(file="r.csv", count=1, examples="row 4 repeats row 2"),
                            t.NO_SUBJECT_NOTE.format(file="r.csv")]
    assert len(parsed.responses) == 3  # q7 x 2 models + q8 x m1


def test_it_refuses_conflicting_duplicates_in_a_long_file_giving_both_rows(tmp_path, stored):
    path = write(tmp_path, "r.csv", "model,question_id,credit\nm1,q1,1\nm2,q1,0\nm1,q1,0\n")
    problems = refused(stored, responses=path, file_format="long", dataset="D")
    message = t.CONFLICTING_DUPLICATE.format(first=2, key="question id and model", column="credit", a=1.0, b=0.0)
    assert problems == [Problem("r.csv", message, row=4, column="credit")]


def test_it_refuses_conflicting_duplicate_question_rows_in_a_wide_file(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1,m2\nq1,1,0\nq2,1,1\nq1,1,1\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    message = t.CONFLICTING_DUPLICATE.format(first=2, key="question id", column="m2", a="0", b="1")
    assert problems == [Problem("r.csv", message, row=4, column="m2")]


def test_it_refuses_a_question_given_two_subjects_in_a_long_file(tmp_path, stored):
    path = write(tmp_path, "r.csv", "model,question_id,credit,category\nm1,q1,1,math\nm2,q1,0,physics\n")
    problems = refused(stored, responses=path, file_format="long", dataset="D", subject_column="category")
    message = t.TWO_SUBJECTS.format(question_id="q1", a="math", b="physics", first=2, row=3)
    assert problems == [Problem("r.csv", message, row=3, column="category")]


def test_it_refuses_a_question_given_two_subjects_in_the_questions_file(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    questions = write(tmp_path, "q.csv", "question_id,category,question\nq1,math,Hi\nq1,law,Hi\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D",
                       subject_column="category")
    message = t.TWO_SUBJECTS.format(question_id="q1", a="math", b="law", first=2, row=3)
    assert problems == [Problem("q.csv", message, row=3, column="category")]


def test_it_refuses_a_long_file_whose_subject_disagrees_with_the_questions_file(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "model,question_id,credit,subject\nm1,q1,1,math\nm1,q2,1,law\n")
    questions = write(tmp_path, "q.csv", "question_id,subject\nq1,math\nq2,history\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="long", dataset="D")
    message = t.QUESTIONS_FILE_CONFLICT.format(question_id="q2", column="subject", a="law", b="history",
                                               other_file="q.csv", other_row="3")
    assert problems == [Problem("r.csv", message, row=3, column="subject")]


def test_it_refuses_conflicting_duplicates_in_the_models_file(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    models = write(tmp_path, "m.csv", "model,parameters_b\nm1,7\nm1,8\n")
    problems = refused(stored, responses=responses, models=models, file_format="wide", dataset="D")
    message = t.CONFLICTING_DUPLICATE.format(first=2, key="model", column="parameters_b", a="7", b="8")
    assert problems == [Problem("m.csv", message, row=3, column="parameters_b")]


# --- unknown ids and bad metadata ----------------------------------------------------------


def test_it_refuses_a_question_id_missing_from_the_questions_file(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\nq404,0\n")
    questions = write(tmp_path, "q.csv", "question_id,subject\nq1,math\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D")
    message = t.UNKNOWN_QUESTION.format(question_id="q404", other_file="q.csv")
    assert problems == [Problem("r.csv", message, row=3, column="question_id")]


def test_it_refuses_a_wide_model_column_missing_from_the_models_file(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1,m2\nq1,1,0\n")
    models = write(tmp_path, "m.csv", "model,parameters_b\nm1,7\n")
    problems = refused(stored, responses=responses, models=models, file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.UNKNOWN_MODEL.format(model="m2", other_file="m.csv"), row=1, column="m2")]


def test_a_model_named_with_invisible_characters_matches_its_clean_spelling_in_the_models_file(tmp_path):
    # Both files' names are cleaned before storing (names.py), so they are matched as cleaned: a zero-width
    # space and a direction mark in the wide header, another mark in the models file, one model "m-b".
    responses = write(tmp_path, "r.csv", "question_id,m-a,m\u200b-b\u202e\nq1,1,0\nq2,0,1\n")
    models = write(tmp_path, "m.csv", "model,parameters_b\nm-a,7\nm-b\u2066,13\n")
    parsed = parse_files(responses=responses, models=models, file_format="wide", dataset="D")
    assert parsed.models["name"].tolist() == ["m-a", "m-b"]
    assert parsed.models["parameters_b"].tolist() == [7.0, 13.0]
    assert sorted(zip(parsed.responses["external_id"], parsed.responses["model"], parsed.responses["credit"])) == [
        ("q1", "m-a", 1.0), ("q1", "m-b", 0.0), ("q2", "m-a", 0.0), ("q2", "m-b", 1.0)]
    assert not any("with no responses in this upload" in note for note in parsed.notes), parsed.notes


def test_it_refuses_a_long_model_missing_from_the_models_file_at_its_first_row(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "model,question_id,credit\nm1,q1,1\nmX,q1,0\nmX,q2,1\n")
    models = write(tmp_path, "m.csv", "model\nm1\n")
    problems = refused(stored, responses=responses, models=models, file_format="long", dataset="D")
    assert problems == [Problem("r.csv", t.UNKNOWN_MODEL.format(model="mX", other_file="m.csv"), row=3, column="model")]


def test_it_refuses_bad_access_and_parameter_values_in_the_models_file(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1,m2\nq1,1,0\n")
    models = write(tmp_path, "m.csv", "model,parameters_b,access\nm1,-3,open_weight\nm2,7,open-source\n")
    problems = refused(stored, responses=responses, models=models, file_format="wide", dataset="D")
    assert problems == [
        Problem("m.csv", t.BAD_PARAMETERS.format(value="-3"), row=2, column="parameters_b"),
        Problem("m.csv", t.BAD_ACCESS.format(value="open-source"), row=3, column="access"),
    ]


def test_it_refuses_options_that_are_not_a_json_list(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    questions = write(tmp_path, "q.csv", 'question_id,options_json\nq1,"{""a"": 1}"\n')
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D")
    assert problems == [Problem("q.csv", t.BAD_OPTIONS.format(value='{"a": 1}'), row=2, column="options_json")]


def test_it_refuses_a_missing_file_by_name(tmp_path, stored):
    problems = refused(stored, responses=tmp_path / "nope.csv", file_format="wide", dataset="D")
    assert problems == [Problem("nope.csv", t.FILE_NOT_FOUND.format(path=tmp_path / "nope.csv"))]


# --- rules against what is already stored ---------------------------------------------------


def test_it_refuses_an_existing_question_with_another_subject(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    questions = write(tmp_path, "q.csv", "question_id,subject\nq1,physics\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D")
    message = plan.QUESTION_CONFLICT.format(
        question_id="q1", dataset="D", field="subject", stored="math", given="physics")
    assert problems == [Problem("q.csv", message, row=2, column="subject")]


def test_it_refuses_an_existing_question_with_another_text(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq2,1\n")
    questions = write(tmp_path, "q.csv", "question_id,question\nq2,Is it allowed?\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D")
    message = plan.QUESTION_CONFLICT.format(question_id="q2", dataset="D", field="text", stored="Is it legal?",
                                         given="Is it allowed?")
    assert problems == [Problem("q.csv", message, row=2, column="question")]


def test_it_refuses_an_existing_model_with_another_explicit_size(tmp_path, stored):
    first = write(tmp_path, "m.csv", "model,parameters_b\nbig,70\n")
    responses = write(tmp_path, "r.csv", "question_id,big\nq1,1\n")
    response_set_load(parsed=parse_files(responses=responses, models=first, file_format="wide", dataset="D"),
                      name="big")
    now = counts()
    second = write(tmp_path, "m2.csv", "model,parameters_b\nbig,7\n")
    responses2 = write(tmp_path, "r2.csv", "question_id,big\nq2,1\n")
    problems = refused(now, responses=responses2, models=second, file_format="wide", dataset="D")
    message = plan.MODEL_CONFLICT.format(model="big", field="parameters_b", stored=70.0, given=7.0)
    assert problems == [Problem("m2.csv", message, row=2, column="parameters_b")]


def test_it_accepts_an_existing_question_when_the_file_repeats_it_exactly(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m3\nq1,0.25\n")
    questions = write(tmp_path, "q.csv", "question_id,subject,question\nq1,math,What is 1+1?\n")
    parsed = parse_files(responses=responses, questions=questions, file_format="wide", dataset="D")
    response_set_load(parsed=parsed, name="reuse")
    after = counts()
    # one new model (m3), one new response set with one response; q1, D and math reused
    assert after == {**stored, "LanguageModel": 3, "ResponseSet": 2, "Response": 5}


# --- oversized and malformed input (tester's report) ------------------------------------


def test_it_refuses_a_header_field_longer_than_the_csv_limit_naming_its_position(tmp_path, stored):
    # Python's csv module holds at most 131,072 characters in one field; column 2 has 200,000.
    path = write(tmp_path, "r.csv", "question_id," + "m" * 200_000 + "\nq1,1\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem(
        "r.csv", "field 2 of the header is 200,000 characters long; a CSV field may hold at most 131,072 characters",
        row=1,
    )]


def test_it_refuses_a_quoted_header_field_longer_than_the_csv_limit(tmp_path, stored):
    # The quoted field spans a line break, so it cannot be located on the first line.
    path = write(tmp_path, "r.csv", 'question_id,"m\n' + "m" * 200_000 + '"\nq1,1\n')
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    assert problems == [Problem(
        "r.csv", "a field of the header is longer than 131,072 characters, the most a CSV field may hold", row=1,
    )]


def test_it_turns_any_other_csv_error_in_the_header_into_a_problem(tmp_path, stored):
    # A bare carriage return inside an unquoted header field is a csv.Error.
    path = write(tmp_path, "r.csv", "question_id,m\r1\nq1,1\n")
    problems = refused(stored, responses=path, file_format="wide", dataset="D")
    detail = "new-line character seen in unquoted field - do you need to open the file in universal-newline mode?"
    assert problems == [Problem("r.csv", "cannot read the file as CSV: " + detail, row=1)]


def test_it_cuts_a_long_quoted_value_in_a_parser_message_to_80_characters(tmp_path, stored):
    text = "q" * 300_000
    path = write(tmp_path, "r.csv", f"dataset,question_id,model,credit,question\nD,1,m1,1,{text}\nD,1,m2,0,x\n")
    problems = refused(stored, responses=path, file_format="long")
    shown = "'" + "q" * 80 + "…' (300,000 characters)"
    assert problems == [Problem(
        "r.csv", f"question '1' has question {shown} in row 2 and 'x' in row 3", row=3, column="question",
    )]


def test_it_cuts_a_long_quoted_value_in_a_service_message_to_80_characters(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq2,1\n")
    questions = write(tmp_path, "q.csv", "question_id,question\nq2," + "z" * 300 + "\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="wide", dataset="D")
    message = ("question 'q2' of dataset 'D' already exists with text 'Is it legal?', but this file gives '"
               + "z" * 80 + "…' (300 characters); existing questions are never changed by a load")
    assert problems == [Problem("q.csv", message, row=2, column="question")]


@pytest.mark.parametrize(("message", "expected"), [
    ("short 'abc' stays", "short 'abc' stays"),
    ("exactly 80 " + repr("a" * 80), "exactly 80 " + repr("a" * 80)),
    ("81 " + repr("a" * 81) + " end", "81 '" + "a" * 80 + "…' (81 characters) end"),
    # repr switches to double quotes around an apostrophe; the value counts 85 characters, not its escapes
    ("x " + repr("it's" + "b" * 81), "x " + repr("it's" + "b" * 76 + "…") + " (85 characters)"),
    ("an apostrophe's own 'word' " + "c" * 100, "an apostrophe's own 'word' " + "c" * 100),
])
def test_shorten_quoted_cuts_only_long_string_literals(message, expected):
    assert t.shorten_quoted(message) == expected
    assert t.shorten_quoted(expected) == expected  # shortening twice changes nothing


def test_it_reports_a_missing_dataset_column_once_rather_than_per_row(tmp_path, stored):
    path = write(tmp_path, "r.csv", "model,question_id,credit\n" + "".join(f"m1,q{i},1\n" for i in range(500)))
    problems = refused(stored, responses=path, file_format="long")
    assert problems == [Problem("r.csv", t.NO_DATASET, column="dataset")]
    assert "pass --dataset" in t.NO_DATASET and "no default dataset was given" in t.NO_DATASET


def test_it_reports_a_missing_dataset_key_in_json_lines_once(tmp_path, stored):
    path = write(tmp_path, "r.jsonl", '{"model": "m1", "question_id": "q1", "credit": 1}\n'
                                      '{"model": "m1", "question_id": "q2", "credit": 0}\n')
    problems = refused(stored, responses=path, file_format="jsonl")
    assert problems == [Problem("r.jsonl", t.NO_DATASET, column="dataset")]


def test_it_reports_a_missing_dataset_column_of_a_questions_file_once(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "model,question_id,credit\nm1,q1,1\nm1,q2,0\n")
    questions = write(tmp_path, "q.csv", "question_id,subject\nq1,math\nq2,law\n")
    problems = refused(stored, responses=responses, questions=questions, file_format="long")
    # neither file has a dataset column: one problem per file, none per row
    assert problems == [Problem("q.csv", t.NO_DATASET, column="dataset"),
                        Problem("r.csv", t.NO_DATASET, column="dataset")]


def test_the_count_of_problems_not_listed_is_the_true_count(tmp_path, stored):
    # 250 bad credits: 200 listed (MAX_PROBLEMS), the other 250 - 200 = 50 counted.
    path = write(tmp_path, "r.csv", "question_id,m1\n" + "".join(f"q{i},2\n" for i in range(250)))
    with pytest.raises(LoadError) as info:
        parse_files(responses=path, file_format="wide", dataset="D")
    error = info.value
    assert (len(error.problems), error.n_unlisted, error.n_problems) == (200, 50, 250)
    assert error.listed()[-1] == Problem("r.csv", "... and 50 more problems not listed")
    assert counts() == stored


def test_it_notes_that_questions_without_a_subject_cannot_make_a_study(tmp_path, stored):
    path = write(tmp_path, "r.csv", "question_id,m1\nq9,1\n")
    parsed = parse_files(responses=path, file_format="wide", dataset="D")
    assert parsed.notes == [(
        "r.csv: no subject column: questions have no subject, so no study can be made from them until subjects are "
        "loaded (give --questions with --subject-column, or a questions file and the subject column in the admin)"
    )]


def test_it_does_not_note_missing_subjects_when_the_questions_file_has_them(tmp_path, stored):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq9,1\n")
    questions = write(tmp_path, "q.csv", "question_id,subject\nq9,math\n")
    parsed = parse_files(responses=responses, questions=questions, file_format="wide", dataset="D")
    assert parsed.notes == []


def test_it_lists_at_most_50_ignored_columns_in_a_note_with_the_true_rest(tmp_path, stored):
    extra = [f"x{i}" for i in range(120)]
    path = write(tmp_path, "r.csv", "dataset,question_id,model,credit,subject," + ",".join(extra) + "\n"
                 "D,q9,m1,1,math" + "," * 120 + "\n")
    parsed = parse_files(responses=path, file_format="long")
    # 120 ignored columns: x0..x49 shown, 120 - 50 = 70 more
    assert parsed.notes == [t.IGNORED_COLUMNS_NOTE.format(
        file="r.csv", columns=", ".join(extra[:50]) + " and 70 more")]
