"""Parsers: what each format produces, and model facts guessed from names (no database)."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from annotate.catalog.loaders import tabular as t
from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.model_names import infer_from_model_name
from annotate.catalog.loaders.tabular import read_models_file, read_questions_file
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.models import ModelAccess


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def triples(parsed) -> list[tuple[str, str, float]]:
    return list(zip(parsed.responses["external_id"], parsed.responses["model"], parsed.responses["credit"]))


def test_a_blank_wide_cell_is_not_observed_and_a_short_row_is_padded_with_blanks(tmp_path):
    path = write(tmp_path, "r.csv", "question_id,m1,m2,m3\nq1,1,,0\nq2,0.5\n")
    parsed = parse_files(responses=path, file_format="wide", dataset="D")
    assert triples(parsed) == [("q1", "m1", 1.0), ("q1", "m3", 0.0), ("q2", "m1", 0.5)]
    assert list(parsed.responses["source"]) == ["r.csv:2", "r.csv:2", "r.csv:3"]


def test_it_numbers_rows_as_records_when_a_quoted_field_spans_lines(tmp_path):
    path = write(tmp_path, "q.csv", 'question_id,question\nq1,"two\nlines"\nq2,bad\n')
    frame, _ = read_questions_file(path, dataset="D")
    assert list(frame["source"]) == ["q.csv:2", "q.csv:3"]
    assert frame["text"].iloc[0] == "two\nlines"


def test_it_skips_blank_lines_but_keeps_row_numbers(tmp_path):
    path = write(tmp_path, "r.csv", "question_id,m1\n\nq1,1\n\nq2,x\n")
    with pytest.raises(LoadError) as info:
        parse_files(responses=path, file_format="wide", dataset="D")
    assert info.value.problems == [Problem("r.csv", t.CREDIT_NOT_A_NUMBER.format(value="x"), row=5, column="m1")]


def test_a_long_tsv_gives_credits_subjects_and_kept_columns(tmp_path):
    path = write(tmp_path, "r.tsv", "dataset\tmodel\tquestion_id\tcredit\tsubject\tlevel\n"
                                    "A\tm1\tq1\t1\tmath\thard\nA\tm2\tq1\t\tmath\thard\nB\tm1\tq1\t0.25\tlaw\t\n")
    parsed = parse_files(responses=path, file_format="long", keep_columns=["level"])
    assert triples(parsed) == [("q1", "m1", 1.0), ("q1", "m1", 0.25)]
    assert list(parsed.responses["dataset"]) == ["A", "B"]
    questions = parsed.questions.set_index(["dataset", "external_id"])
    assert questions.loc[("A", "q1"), "subject"] == "math"
    assert questions.loc[("B", "q1"), "subject"] == "law"
    assert questions.loc[("A", "q1"), "metadata"] == {"level": "hard"}
    assert questions.loc[("B", "q1"), "metadata"] == {"level": None}
    assert list(parsed.models["name"]) == ["m1", "m2"]  # m2 has only a blank credit but is still a model


def test_json_lines_accept_integer_ids_and_null_credits(tmp_path):
    path = write(tmp_path, "r.jsonl", '{"model": "m1", "question_id": 7, "credit": 1, "subject": "math"}\n'
                                      '{"model": "m2", "question_id": 7, "credit": null}\n'
                                      '{"model": "m2", "question_id": "8", "credit": 0.75, "extra": 1}\n')
    parsed = parse_files(responses=path, dataset="D")
    assert parsed.file_format == "jsonl"
    assert triples(parsed) == [("7", "m1", 1.0), ("8", "m2", 0.75)]
    assert list(parsed.responses["source"]) == ["r.jsonl:1", "r.jsonl:3"]
    assert parsed.questions.set_index("external_id").loc["7", "subject"] == "math"
    assert t.IGNORED_COLUMNS_NOTE.format(file="r.jsonl", columns="extra") in parsed.notes


@pytest.mark.parametrize(("text", "expected"), [
    ("question_id,m1\nq1,1\n", "wide"),
    ("model,question_id,credit\nm1,q1,1\n", "long"),
    ("question_id\tmodel\tcredit\nq1\tm1\t1\n", "long"),
])
def test_auto_detection_picks_the_format_from_the_header_and_says_so(tmp_path, text, expected):
    path = write(tmp_path, "r.csv", text)
    parsed = parse_files(responses=path, dataset="D")
    assert parsed.file_format == expected
    assert parsed.notes[0].startswith(f"r.csv: format detected as {expected!r}")
    assert triples(parsed) == [("q1", "m1", 1.0)]


def test_a_models_file_keeps_explicit_values_and_marks_guessed_ones(tmp_path):
    path = write(tmp_path, "m.csv", "model,params_b_from_name,family,access,note\n"
                                    "Llama-2-7b-hf,7,,,base\nMixtral-8x7B-v0.1,8x7B (MoE),,,\n"
                                    "house-model,,House,proprietary,\ngpt-4o,,,,\n")
    models, notes = read_models_file(path)
    rows = {r.name: r for r in models.itertuples(index=False)}
    llama = rows["Llama-2-7b-hf"]
    assert (llama.family, llama.parameters_b, llama.access) == ("Llama", 7.0, "open_weight")
    assert llama.metadata == {"note": "base", "inferred": ["family", "access"]}
    mixtral = rows["Mixtral-8x7B-v0.1"]
    assert math.isnan(mixtral.parameters_b)
    assert mixtral.metadata == {"parameters_label": "8x7B (MoE)", "inferred": ["family", "access"]}
    house = rows["house-model"]
    assert (house.family, house.access, house.metadata) == ("House", "proprietary", {})
    gpt = rows["gpt-4o"]
    assert (gpt.family, gpt.access, gpt.metadata) == ("GPT", "proprietary", {"inferred": ["family", "access"]})
    assert notes == [t.PARAMETERS_LABEL_NOTE.format(file="m.csv", labels="Mixtral-8x7B-v0.1: '8x7B (MoE)'")]


def test_models_without_a_models_file_are_guessed_from_their_names_including_size(tmp_path):
    path = write(tmp_path, "r.csv", "question_id,Qwen1.5-7B-Chat,mystery\nq1,1,0\n")
    parsed = parse_files(responses=path, file_format="wide", dataset="D")
    rows = {r.name: r for r in parsed.models.itertuples(index=False)}
    qwen = rows["Qwen1.5-7B-Chat"]
    assert (qwen.family, qwen.parameters_b, qwen.access) == ("Qwen", 7.0, "open_weight")
    assert qwen.metadata == {"inferred": ["parameters_b", "family", "access"]}
    mystery = rows["mystery"]
    # an unknown family: leading token as family, access unknown (not marked as guessed)
    assert (mystery.family, mystery.access, mystery.metadata) == ("mystery", "unknown", {"inferred": ["family"]})


def test_the_access_values_match_the_database_choices():
    assert set(t.ACCESS_VALUES) == {choice.value for choice in ModelAccess}


# Written by hand from the model cards (who released the weights), not from the code.
MMLU_PRO_EXPECTED = {
    "DeepSeek-Coder-V2": ("DeepSeek", "open_weight", None),
    "Llama-2-13b-hf": ("Llama", "open_weight", 13.0),
    "Llama-2-70b-hf": ("Llama", "open_weight", 70.0),
    "Llama-2-7b-hf": ("Llama", "open_weight", 7.0),
    "Meta-Llama-3-70B": ("Llama", "open_weight", 70.0),
    "Meta-Llama-3-8B": ("Llama", "open_weight", 8.0),
    "Meta-Llama-3_1-70B-Instruct": ("Llama", "open_weight", 70.0),
    "Meta-Llama-3_1-70B": ("Llama", "open_weight", 70.0),
    "Meta-Llama-3_1-8B-Instruct": ("Llama", "open_weight", 8.0),
    "Meta-Llama-3_1-8B": ("Llama", "open_weight", 8.0),
    "Mistral-7B-Instruct-v0.1": ("Mistral", "open_weight", 7.0),
    "Mistral-7B-Instruct-v0.2": ("Mistral", "open_weight", 7.0),
    "Mistral-7B-v0.1": ("Mistral", "open_weight", 7.0),
    "Mistral-7B-v0.2-hf": ("Mistral", "open_weight", 7.0),
    "Mixtral-8x7B-Instruct-v0.1": ("Mixtral", "open_weight", None),
    "Mixtral-8x7B-v0.1": ("Mixtral", "open_weight", None),
    "Phi-3-mini-4k-instruct": ("Phi", "open_weight", None),
    "Qwen1.5-110B": ("Qwen", "open_weight", 110.0),
    "Qwen1.5-72B-Chat": ("Qwen", "open_weight", 72.0),
    "Qwen1.5-7B-Chat": ("Qwen", "open_weight", 7.0),
    "Yi-34B": ("Yi", "open_weight", 34.0),
    "Yi-6B": ("Yi", "open_weight", 6.0),
    "Yi-6b-Chat": ("Yi", "open_weight", 6.0),
    "c4ai-command-r-v01": ("Command R", "open_weight", None),
    "gemini-1.5-flash-002": ("Gemini", "proprietary", None),
    "gemini-1.5-pro-002": ("Gemini", "proprietary", None),
    "gemma-7b": ("Gemma", "open_weight", 7.0),
    "jamba-1.5-large": ("Jamba", "open_weight", None),
    "mathstral-7B": ("Mathstral", "open_weight", 7.0),
    "gpt-4o(2024-05)": ("GPT", "proprietary", None),
    "deepseek-v2-chat(likely)": ("DeepSeek", "open_weight", None),
    "gemini-3.1-pro(likely)": ("Gemini", "proprietary", None),
}


def test_it_guesses_family_and_access_of_the_32_mmlu_pro_models(shared_data):
    with open(shared_data / "mmlu-pro" / "models.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    names = [row["model"] for row in rows]
    assert len(names) == 32 and set(names) == set(MMLU_PRO_EXPECTED)
    for row in rows:
        guess = infer_from_model_name(row["model"])
        family, access, size = MMLU_PRO_EXPECTED[row["model"]]
        assert (guess.family, guess.access, guess.parameters_b) == (family, access, size), row["model"]
        # where the file gives a plain number, the name gives the same one
        if row["params_b_from_name"].replace(".", "").isdigit():
            assert guess.parameters_b == pytest.approx(float(row["params_b_from_name"]), abs=0)


@pytest.mark.parametrize(("name", "family", "access", "size", "label"), [
    ("meta-llama/Llama-3.1-405B-Instruct", "Llama", "open_weight", 405.0, None),
    ("Qwen2.5-0.5B", "Qwen", "open_weight", 0.5, None),
    ("claude-3-5-sonnet-20241022", "Claude", "proprietary", None, None),
    ("o1-mini", "GPT", "proprietary", None, None),
    ("gpt-oss-20b", "GPT-OSS", "open_weight", 20.0, None),
    ("Mixtral-8x22B-v0.1", "Mixtral", "open_weight", None, "8x22B"),
    # An organisation-like prefix followed by a version number is the family itself.
    ("Qwen-1.5-72B-Chat", "Qwen", "open_weight", 72.0, None),
    ("Mistral-Large", "Mistral", "proprietary", None, None),
])
def test_it_guesses_other_common_names(name, family, access, size, label):
    guess = infer_from_model_name(name)
    assert (guess.family, guess.access, guess.parameters_b, guess.parameters_label) == (family, access, size, label)


def test_it_rejects_a_blank_model_name_naming_the_parameter():
    with pytest.raises(ValueError, match="name must be a non-blank string"):
        infer_from_model_name(" ")


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"file_format": "xlsx"}, "file_format must be one of"),
    ({"file_format": "wide", "dataset": None}, "dataset must be given for a wide file"),
    ({"file_format": "wide", "dataset": "D", "keep_columns": "src"}, "keep_columns must be a sequence"),
    ({"file_format": "wide", "dataset": "D", "keep_columns": ["question_id"]}, "keep_columns must not repeat"),
])
def test_it_rejects_bad_arguments_naming_the_parameter(tmp_path, kwargs, pattern):
    path = write(tmp_path, "r.csv", "question_id,m1\nq1,1\n")
    with pytest.raises(ValueError, match=pattern):
        parse_files(responses=path, **kwargs)
