"""A NUL character is placed at the row the loader's other messages use: the CSV record that holds it,
the header being row 1 and a quoted value that spans lines one row (a JSON Lines row is its line).
Each CSV case has a quoted value of three lines before the NUL, so the record and the line differ."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotate.catalog.loaders import _tabular_common as common, tabular as t
from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.tabular_files import parse_files

pytestmark = pytest.mark.django_db

MULTILINE = '"one\ntwo\nthree"'  # one value, three lines


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8"))
    return path


def refused(**kwargs) -> list[Problem]:
    with pytest.raises(LoadError) as caught:
        parse_files(**kwargs)
    return caught.value.problems


# (file the NUL is in, its text, the record row of the NUL: lines 1-2-3-4 are the header and record 2,
#  so the NUL's line is two more than its row)
LONG = f"question_id,model,credit,question\nq1,m1,1,{MULTILINE}\nq2,m1,0,plain\nq3\x00,m1,1,plain\n"
WIDE = f"question_id,m1\nq1,1\n{MULTILINE[:-1]},x\",0\nq\x00,1\n"
QUESTIONS = f"question_id,subject,question\nq1,math,{MULTILINE}\nq2,la\x00w,plain\n"
MODELS = f"model,family,note\nm1,fam,{MULTILINE}\nm2\x00,fam,plain\n"


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_a_nul_in_a_long_file_after_a_value_of_several_lines_is_at_its_record_row(tmp_path, monkeypatch, block):
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", block)  # the long reader checks the text a block at a time
    problems = refused(responses=write(tmp_path, "r.csv", LONG), file_format="long", dataset="D")
    assert problems == [Problem("r.csv", t.NUL_CHARACTER, row=4)]  # line 6 of the file


def test_a_nul_in_a_wide_file_after_a_value_of_several_lines_is_at_its_record_row(tmp_path):
    problems = refused(responses=write(tmp_path, "r.csv", WIDE), file_format="wide", dataset="D")
    assert problems == [Problem("r.csv", t.NUL_CHARACTER, row=4)]  # line 6 of the file


@pytest.mark.parametrize(("kind", "text", "row"), [("questions", QUESTIONS, 3), ("models", MODELS, 3)],
                         ids=["questions", "models"])
def test_a_nul_in_a_metadata_file_after_a_value_of_several_lines_is_at_its_record_row(tmp_path, kind, text, row):
    responses = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    problems = refused(responses=responses, file_format="wide", dataset="D", **{kind: write(tmp_path, "x.csv", text)})
    assert problems == [Problem("x.csv", t.NUL_CHARACTER, row=row)]  # line 5 of the file


def test_a_nul_row_is_the_same_row_a_bad_credit_after_the_same_value_is_reported_at(tmp_path):
    # the other messages' rows: a bad credit in the NUL's place is reported at the same row
    bad_credit = LONG.replace("q3\x00,m1,1", "q3,m1,7")
    problems = refused(responses=write(tmp_path, "r.csv", bad_credit), file_format="long", dataset="D")
    assert [(p.row, p.column) for p in problems] == [(4, "credit")]


def test_a_nul_in_json_lines_is_at_its_line(tmp_path):
    text = '{"question_id": "q1", "model": "m", "credit": 1}\n\n{"question_id": "q\x00", "model": "m", "credit": 1}\n'
    problems = refused(responses=write(tmp_path, "r.jsonl", text), file_format="jsonl", dataset="D")
    assert problems == [Problem("r.jsonl", t.NUL_CHARACTER, row=3)]
