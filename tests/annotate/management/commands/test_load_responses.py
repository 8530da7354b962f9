"""``manage.py load_responses``: summary line, CommandError with located problems, real data."""
from __future__ import annotations

import csv
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotate.catalog.loaders import tabular as t
from annotate.management.commands import load_responses as command
from annotate.models import (
    Dataset,
    LanguageModel,
    Question,
    ResponseSet,
    ResponseSetQuestion,
    ResponseSetStatus,
    Subject,
)
from tests.annotate.factories import all_stored_responses, n_stored_responses

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet, ResponseSetQuestion)
DEMO = Path(__file__).resolve().parents[4] / "annotate" / "demo"


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def run(*args: str) -> str:
    out, err = StringIO(), StringIO()
    call_command("load_responses", *args, stdout=out, stderr=err)
    return out.getvalue()


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_it_loads_explicit_files_and_prints_a_one_line_summary(tmp_path):
    responses = write(tmp_path, "scores.csv", "model,question_id,credit\nm1,q1,1\nm2,q1,0.5\nm1,q2,\n")
    output = run("--responses", str(responses), "--dataset", "D")
    # q2 has only a blank credit: a question without responses, created all the same
    assert output.startswith("Loaded scores v1: 2 responses (1 question x 2 models with a response); "
                             "new: 2 questions, 2 models, 0 subjects in ")
    assert output.count("\n") == 1
    # 1 question x 2 models, both observed; q1 answered by 2 < 3 models
    set_id = ResponseSet.objects.get().pk
    assert output.endswith(" s. 0 of 2 model-question cells not observed; 1 question observed by fewer than 3 "
                           f"models; the model-question graph has 1 component. Response set id {set_id}.\n")
    assert ResponseSet.objects.get().summary["n_missing"] == 0
    assert ResponseSet.objects.get().name == "scores"


def test_a_dry_run_writes_nothing(tmp_path):
    responses = write(tmp_path, "scores.csv", "question_id,m1\nq1,1\n")
    before = counts()
    output = run("--responses", str(responses), "--format", "wide", "--dataset", "D", "--dry-run")
    assert output == ("Dry run: 1 response (1 question x 1 model with a response); "
                      "new: 1 question, 1 model, 0 subjects; nothing was written. "
                      "0 of 1 model-question cell not observed; 1 question observed by fewer than 3 models; "
                      "the model-question graph has 1 component.\n")
    assert counts() == before


def test_it_shows_located_problems_and_writes_nothing(tmp_path):
    responses = write(tmp_path, "scores.csv", "question_id,m1,m2\nq1,1,2\nq2,x,0\n")
    before = counts()
    with pytest.raises(CommandError) as info:
        run("--responses", str(responses), "--format", "wide", "--dataset", "D")
    assert str(info.value) == (
        "Nothing was loaded:\n"
        f"  - scores.csv, row 2, column 'm2': {t.CREDIT_OUT_OF_RANGE.format(value='2')}\n"
        f"  - scores.csv, row 3, column 'm1': {t.CREDIT_NOT_A_NUMBER.format(value='x')}"
    )
    assert counts() == before


def test_it_shows_at_most_twenty_problems_and_how_many_more(tmp_path):
    rows = "".join(f"q{i},bad\n" for i in range(25))
    responses = write(tmp_path, "scores.csv", "question_id,m1\n" + rows)
    with pytest.raises(CommandError) as info:
        run("--responses", str(responses), "--format", "wide", "--dataset", "D")
    lines = str(info.value).splitlines()
    assert len(lines) == 1 + 20 + 1 and lines[-1] == "  ... and 5 more"


def test_it_requires_exactly_one_of_folder_and_responses(tmp_path):
    with pytest.raises(CommandError, match=re.escape(command.FOLDER_OR_RESPONSES)):
        run("--dataset", "D")


def test_it_turns_a_missing_dataset_into_a_command_error(tmp_path):
    responses = write(tmp_path, "scores.csv", "question_id,m1\nq1,1\n")
    with pytest.raises(CommandError, match="dataset must be given for a wide file"):
        run("--responses", str(responses), "--format", "wide")


def test_it_refuses_a_second_load_and_accepts_an_explicit_new_version(tmp_path):
    responses = write(tmp_path, "scores.csv", "question_id,m1\nq1,1\n")
    run("--responses", str(responses), "--dataset", "D", "--format", "wide")
    with pytest.raises(CommandError, match="already loaded as response set 'scores v1'"):
        run("--responses", str(responses), "--dataset", "D", "--format", "wide")
    responses.write_text("question_id,m1\nq1,0\n", encoding="utf-8")
    with pytest.raises(CommandError, match="use --new-version"):
        run("--responses", str(responses), "--dataset", "D", "--format", "wide")
    output = run("--responses", str(responses), "--dataset", "D", "--format", "wide", "--new-version")
    assert output.startswith("Loaded scores v2:")
    assert list(ResponseSet.objects.order_by("version").values_list("version", "status")) == [
        (1, ResponseSetStatus.SUPERSEDED), (2, ResponseSetStatus.LOADED)]


def test_it_loads_the_project_demo_folder_with_family_and_access_columns():
    if not (DEMO / "responses_binary.csv").is_file():
        pytest.skip("annotate/demo is not there yet")
    with open(DEMO / "responses_binary.csv", newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        cells = sum(1 for row in reader for cell in row[1:] if cell.strip())
    with open(DEMO / "models.csv", newline="", encoding="utf-8") as handle:
        declared = {row["model"]: (row.get("family", ""), row.get("access", "")) for row in csv.DictReader(handle)}
    run("--folder", str(DEMO), "--dataset", "Demo", "--subject-column", "category")
    assert n_stored_responses() == cells
    assert LanguageModel.objects.count() == len(header) - 1
    for model in LanguageModel.objects.all():
        family, access = declared[model.name]
        if family:
            assert model.family == family
        if access:
            assert model.access == access


@pytest.mark.slow
def test_it_loads_mmlu_pro_through_the_command(shared_data):
    folder = shared_data / "mmlu-pro"
    with open(folder / "responses_binary.csv", newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        models = next(reader)[1:]
        matrix = list(reader)
    observed = sum(1 for row in matrix for cell in row[1:] if cell.strip() != "")
    # how long it takes is measured by `make bench` (bench/bench_load.py), not here
    output = run("--folder", str(folder), "--dataset", "MMLU-Pro", "--subject-column", "category",
                 "--keep-columns", "src,source_dataset,mmlu_subject,mmlu_level")
    assert output.startswith(f"Loaded mmlu-pro v1: {observed:,} responses (12,032 questions x 32 models with a "
                             "response); new: 12,032 questions, 32 models, 14 subjects in ")
    assert Question.objects.count() == 12_032
    assert Subject.objects.count() == 14
    assert LanguageModel.objects.count() == 32
    assert n_stored_responses() == observed
    response_set = ResponseSet.objects.get()
    assert (response_set.n_questions, response_set.n_models, response_set.n_responses) == (12_032, 32, observed)
    # every 1,000th cell of the file, blank or not, against the database
    stored = {
        (q, m): c for q, m, c in all_stored_responses()
    }
    sample = 0
    for i in range(0, len(matrix) * len(models), 1000):
        row, column = divmod(i, len(models))
        cell = matrix[row][column + 1].strip()
        key = (matrix[row][0], models[column])
        if cell == "":
            assert key not in stored
        else:
            assert stored[key] == float(cell)
        sample += 1
    assert sample >= 385
    llama = LanguageModel.objects.get(name="Llama-2-7b-hf")
    assert (llama.family, llama.access, llama.parameters_b) == ("Llama", "open_weight", 7.0)
    assert llama.metadata["inferred"] == ["family", "access"]
    question = Question.objects.select_related("subject").get(external_id="70")
    assert question.subject.name == "business"
    assert question.metadata["mmlu_level"] == "other_mmlu"
    assert question.reference_answer == "I"


def test_it_loads_evaluation_harness_logs(shared_data):
    logs = shared_data / "harness-formats" / "lm-eval"
    output = run("--logs", str(logs), "--dataset", "GSM8K", "--name", "gsm8k-pair")
    # SOURCE.md: 3 gsm8k docs x 2 models, exact_match per (doc, model) = (1,1), (0,0), (1,0)
    assert output.startswith("Loaded gsm8k-pair v1: 6 responses (3 questions x 2 models with a response); ")
    assert set(LanguageModel.objects.values_list("name", flat=True)) == {"gemma3:12b-u1", "gemma3:12b-it-q4_K_M"}
    assert sum(c for _, _, c in all_stored_responses()) == 3.0
    assert ResponseSet.objects.get().file_format == "lm-eval"


@pytest.mark.parametrize(("args", "message"), [
    (["--logs", "x", "--keep-columns", "src"], command.NOT_FOR_LOGS.format(option="keep-columns")),
    (["--logs", "x", "--format", "wide"], command.WRONG_FORMAT.format(value="wide", kind="tabular", source="--logs")),
    (["--responses", "x.csv", "--metric", "acc"], command.LOGS_ONLY_OPTION.format(option="metric")),
    (["--responses", "x.csv", "--format", "helm"],
     command.WRONG_FORMAT.format(value="helm", kind="harness-log", source="--responses")),
    (["--folder", "x", "--models", "m.csv"], command.FOLDER_ONLY_OPTION.format(option="models")),
    (["--folder", "x", "--responses", "r.csv"], command.FOLDER_OR_RESPONSES),
])
def test_it_refuses_options_that_do_not_fit_the_source(args, message):
    with pytest.raises(CommandError) as info:
        run(*args)
    assert str(info.value) == message


# --- tester's report ----------------------------------------------------------------------


def test_a_header_field_over_the_csv_limit_is_a_command_error_not_a_traceback(tmp_path):
    responses = write(tmp_path, "long_colname.csv", "question_id," + "m" * 200_000 + "\nq1,1\n")
    before = counts()
    with pytest.raises(CommandError) as info:
        run("--responses", str(responses), "--dataset", "T", "--dry-run")
    assert str(info.value) == (
        "Nothing was loaded:\n  - long_colname.csv, row 1: field 2 of the header is 200,000 characters long; "
        "a CSV field may hold at most 131,072 characters"
    )
    assert counts() == before


def test_a_long_file_without_dataset_gives_one_problem_saying_to_pass_dataset(tmp_path):
    rows = "".join(f"m{i % 3},q{i},1\n" for i in range(600))
    responses = write(tmp_path, "big.csv", "model,question_id,credit\n" + rows)
    with pytest.raises(CommandError) as info:
        run("--responses", str(responses))
    assert str(info.value) == f"Nothing was loaded:\n  - big.csv, column 'dataset': {t.NO_DATASET}"


def test_the_command_notes_that_questions_without_subjects_cannot_make_a_study(tmp_path):
    responses = write(tmp_path, "wide.csv", "question_id,m1\nq1,1\n")
    err = StringIO()
    call_command("load_responses", "--responses", str(responses), "--dataset", "D", "--dry-run",
                 stdout=StringIO(), stderr=err)
    assert f"note: {t.NO_SUBJECT_NOTE.format(file='wide.csv')}" in err.getvalue()


def test_the_count_of_problems_not_shown_is_the_true_count(tmp_path):
    # 250 bad credits: the parser lists 200 and counts 50 more; the command shows 20, so 230 are not shown
    rows = "".join(f"q{i},bad\n" for i in range(250))
    responses = write(tmp_path, "scores.csv", "question_id,m1\n" + rows)
    with pytest.raises(CommandError) as info:
        run("--responses", str(responses), "--format", "wide", "--dataset", "D")
    assert str(info.value).splitlines()[-1] == "  ... and 230 more"
