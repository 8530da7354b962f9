"""OpenCompass results with evaluation details: three detail layouts, replicas
as partial credit, and datasets whose details carry no correctness."""
from __future__ import annotations

import json

import numpy as np
import pytest

from annotate.loaders.base import LoadError, Problem
from annotate.loaders.harness import _common, opencompass, parse_harness_logs
from tests.annotate.harness_fixtures import OC_MODELS, matrix, write_opencompass_outputs


@pytest.fixture
def outputs(tmp_path):
    return write_opencompass_outputs(tmp_path, np.random.default_rng(11))


def test_it_round_trips_three_models_on_three_detail_layouts(outputs):
    parsed = parse_harness_logs(outputs.root)
    assert parsed.file_format == "opencompass"
    assert matrix(parsed) == pytest.approx(outputs.expected, abs=1e-12)
    assert sorted(parsed.models["name"]) == sorted(OC_MODELS)
    assert parsed.options["metrics_used"] == {"ceval-physics": "correct", "gsm8k": "correct", "math": "correct"}


def test_it_says_which_datasets_carry_no_correctness_instead_of_guessing(outputs):
    parsed = parse_harness_logs(outputs.root)
    assert not any(e.startswith(("triviaqa/", "nq/")) for e in parsed.responses["external_id"])
    no_correct = [n for n in parsed.notes if "triviaqa.json" in n]
    assert len(no_correct) == 3
    keys = "none of correct, is_correct, cascade_correct"
    assert no_correct[0].endswith(opencompass.NO_CORRECTNESS.format(keys=keys))
    assert any("nq.json" in n and n.endswith(opencompass.NO_DETAILS) for n in parsed.notes)


def test_it_averages_replicas_into_partial_credit(outputs):
    parsed = parse_harness_logs(outputs.root)
    math = parsed.responses[parsed.responses["dataset"] == "math"]
    assert sorted(math["external_id"].unique()) == ["math/math_0", "math/math_1", "math/math_2"]
    assert set(math["credit"]) <= {0.0, 0.5, 1.0}
    assert "9 of 30 responses had several samples (epochs or repeats, up to 2 per cell); " \
           "their mean was used as partial credit" in parsed.notes


def test_it_takes_the_last_human_turn_as_question_text(outputs):
    q = parse_harness_logs(outputs.root).questions.set_index("external_id")
    assert q.loc["ceval-physics/2", "text"] == "Physics question 2?"
    assert q.loc["ceval-physics/2", "subject"] == "ceval-physics"


def test_it_ignores_predictions_and_summaries_without_noise(outputs):
    parsed = parse_harness_logs(outputs.root)
    assert not any("ignored" in n for n in parsed.notes)
    assert all("/results/" in p.as_posix() for p in parsed.source_files)


def test_it_refuses_an_upload_where_no_dataset_carries_correctness(outputs):
    triviaqa = sorted(outputs.root.glob("results/*/triviaqa.json"))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(triviaqa)
    assert err.value.problems[0].message == _common.NO_SCORES
    assert "details carry no correctness" in err.value.problems[1].message


def test_it_refuses_bad_values_naming_the_detail_record(tmp_path):
    folder = tmp_path / "results" / "model-a"
    folder.mkdir(parents=True)
    details = [{"correct": True}, {"correct": None}, {"correct": [True, "yes"]}, {"correct": []}]
    (folder / "ds.json").write_text(json.dumps({"accuracy": 25.0, "details": details}))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(folder / "ds.json")
    assert err.value.problems == [
        Problem("ds.json", _common.NULL_NOT_A_SCORE, None, "details[1].correct"),
        Problem("ds.json", _common.STRING_NOT_A_SCORE.format(value="yes"), None, "details[2].correct"),
        Problem("ds.json", opencompass.EMPTY_REPLICAS, None, "details[3].correct"),
    ]


def test_it_reads_a_chosen_detail_key(tmp_path):
    folder = tmp_path / "results" / "model-a"
    folder.mkdir(parents=True)
    details = {"0": {"correct": True, "model_extract_correct": False},
               "1": {"correct": False, "model_extract_correct": True}}
    (folder / "ds.json").write_text(json.dumps({"accuracy": 50.0, "details": details}))
    parsed = parse_harness_logs(folder, metric="model_extract_correct")
    assert matrix(parsed) == {("ds", "ds/0", "model-a"): 0.0, ("ds", "ds/1", "model-a"): 1.0}
