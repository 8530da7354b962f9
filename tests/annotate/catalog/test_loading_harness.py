"""The loading service with harness logs: where problems point, and model guesses."""
from __future__ import annotations

import math

import pytest

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.harness import parse_harness_logs
from annotate.catalog.services import load_plan as load_plan_module
from annotate.catalog.services.loading import response_set_load, response_set_preview
from annotate.models import Dataset, LanguageModel, Question, Subject
from tests.annotate.harness_fixtures import write_inspect_json

pytestmark = pytest.mark.django_db

LABEL = "upload"


@pytest.mark.parametrize(("source", "expected"), [
    ("scores.csv:12", ("scores.csv", 12)),  # tabular "file:row"
    ("org__m/samples_gsm8k_2025-01-01T10-00-00.1.jsonl:7", ("org__m/samples_gsm8k_2025-01-01T10-00-00.1.jsonl", 7)),
    ("a:b/log.jsonl:3", ("a:b/log.jsonl", 3)),  # only the part after the last ":" is the row
    # harness locations that are not a line: kept whole, no row
    ("data_arc_qwen.json:sample 3 epoch 1", ("data_arc_qwen.json:sample 3 epoch 1", None)),
    ("run.eval::samples/1_epoch_2.json:sample 1 epoch 2", ("run.eval::samples/1_epoch_2.json:sample 1 epoch 2", None)),
    ("runs/v1/mmlu:subject=anatomy,model=openai_gpt2/per_instance_stats.json:[12]",
     ("runs/v1/mmlu:subject=anatomy,model=openai_gpt2/per_instance_stats.json:[12]", None)),
    ("runs/v1/boolq:model=x/run_spec.json", ("runs/v1/boolq:model=x/run_spec.json", None)),
    ("gemma3__12b-u1/results_2025.json", ("gemma3__12b-u1/results_2025.json", None)),
    ("results/m/gsm8k.json:details['3']", ("results/m/gsm8k.json:details['3']", None)),
    (":12", (":12", None)),
    ("x.csv:²", ("x.csv:²", None)),  # a digit that int() refuses
    ("", (LABEL, None)),
    ("   ", (LABEL, None)),
    (None, (LABEL, None)),
    (float("nan"), (LABEL, None)),
])
def test_where_splits_only_a_numeric_row(source, expected):
    assert load_plan_module._where(source, LABEL) == expected


def test_a_conflict_in_an_inspect_log_names_the_sample_not_the_upload(tmp_path):
    write_inspect_json(tmp_path / "arc.json", model="ollama/qwen2.5:0.5b", task="arc",
                       samples=[(1, 1, "C", "Which gas do plants take in?"), (2, 1, "I", "Which rock floats?")])
    dataset = Dataset.objects.create(name="arc")
    Question.objects.create(dataset=dataset, subject=Subject.objects.create(name="arc"), external_id="arc/2",
                            text="Another text")
    with pytest.raises(LoadError) as error:
        response_set_preview(parsed=parse_harness_logs(tmp_path), name="arc")
    assert error.value.problems == [Problem(
        file="arc.json:sample 2 epoch 1", row=None, column="question",
        message=load_plan_module.QUESTION_CONFLICT.format(question_id="arc/2", dataset="arc", field="text",
                                                 stored="Another text", given="Which rock floats?"))]


# Guesses worked out by hand from the rules in annotate/catalog/loaders/model_names.py: the part after the
# last "/" is matched ("qwen" -> Qwen open weight, "claude" -> Claude proprietary, "gemma" -> Gemma
# open weight, "mixtral" -> Mixtral open weight); a "<number>b" token not preceded by a digit, "x"
# or "." is the size ("0.5b" after ":", "12b" after ":"), an "8x7b" token gives no size but a label.
# The inferred fields are listed in the tabular loaders' order: size, family, access.
GUESSES = {
    "ollama/qwen2.5:0.5b": ("Qwen", 0.5, "open_weight", ["parameters_b", "family", "access"], None),
    "anthropic/claude-sonnet-4-0": ("Claude", None, "proprietary", ["family", "access"], None),
    "gemma3:12b-u1": ("Gemma", 12.0, "open_weight", ["parameters_b", "family", "access"], None),
    "mistralai/mixtral-8x7b-instruct": ("Mixtral", None, "open_weight", ["parameters_label", "family", "access"],
                                        "8x7b"),
    "acme/zorblax-3b": ("zorblax", 3.0, "unknown", ["parameters_b", "family"], None),
}


def write_one_log_per_model(folder) -> None:
    for k, model in enumerate(GUESSES):
        write_inspect_json(folder / f"log{k}.json", model=model, task="arc",
                           samples=[(1, 1, "C", "Which gas do plants take in?")])


def test_harness_models_get_the_name_guesses_marked_as_inferred(tmp_path):
    write_one_log_per_model(tmp_path)
    response_set_load(parsed=parse_harness_logs(tmp_path), name="guesses")
    for name, (family, size, access, inferred, label) in GUESSES.items():
        model = LanguageModel.objects.get(name=name)
        assert (model.family, model.parameters_b, model.access) == (family, size, access), name
        assert model.metadata["inferred"] == inferred, name
        assert model.metadata.get("parameters_label") == label, name
        assert model.metadata["harness"] == "inspect"  # the parser's metadata is kept


def test_the_parser_itself_leaves_the_fields_blank(tmp_path):
    write_one_log_per_model(tmp_path)
    models = parse_harness_logs(tmp_path).models
    assert set(models["family"]) == {""} and set(models["access"]) == {"unknown"}
    assert all(math.isnan(p) for p in models["parameters_b"])


def test_a_guess_never_conflicts_with_nor_changes_a_stored_model(tmp_path):
    LanguageModel.objects.create(name="gemma3:12b-u1", family="Gemma 3 (fine-tuned)", parameters_b=12.2,
                                 access="open_weight")
    write_one_log_per_model(tmp_path)
    preview = response_set_preview(parsed=parse_harness_logs(tmp_path), name="guesses")
    assert (preview.models_new, preview.models_existing) == (4, 1)
    response_set_load(parsed=parse_harness_logs(tmp_path), name="guesses")
    stored = LanguageModel.objects.get(name="gemma3:12b-u1")
    assert (stored.family, stored.parameters_b, stored.metadata) == ("Gemma 3 (fine-tuned)", 12.2, {})
