"""OpenCompass results with evaluation details: three detail layouts, replicas
as partial credit, and datasets whose details carry no correctness."""
from __future__ import annotations

import json

import numpy as np
import pytest

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.harness import _common, opencompass, parse_harness_logs
from tests.annotate.harness_fixtures import (
    OC_MODELS,
    matrix,
    write_opencompass_outputs,
    write_opencompass_result,
)


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


# ------------------------------------------------------------ one record per (model, dataset, question, replica)

def _two_work_folders(tmp_path):
    # Two `opencompass` runs in one upload, each in its own timestamped work folder; written newest first.
    write_opencompass_result(tmp_path / "20250301_090000", model="m-7b", dataset="ds", details=[
        {"example_abbr": "q0", "correct": [True, False]},
        {"example_abbr": "q1", "correct": [True, True]},
    ])
    write_opencompass_result(tmp_path / "20250101_120000", model="m-7b", dataset="ds", details=[
        {"example_abbr": "q0", "correct": [True, False]},
        {"example_abbr": "q1", "correct": [False, True]},
    ])


def test_it_refuses_two_runs_that_disagree_on_a_replica_naming_both_files(tmp_path):
    _two_work_folders(tmp_path)
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    old, new = "20250101_120000/results/m-7b/ds.json", "20250301_090000/results/m-7b/ds.json"
    # Replica 0 of q1: False in January (read first), True in March.
    assert err.value.problems == [Problem(new, _common.CONFLICTING_RECORDS.format(
        what="sample 'ds/q1' of model 'm-7b' (epoch 0)", first_credit=0.0,
        first=f"{old}, column 'details[1].correct[0]'", credit=1.0), None, "details[1].correct[0]")]


def test_the_newest_run_option_keeps_the_later_work_folders_replicas(tmp_path):
    _two_work_folders(tmp_path)
    parsed = parse_harness_logs(tmp_path, duplicates="newest")
    # q0: replicas (1, 0) in both runs -> 0.5; q1: March's (1, 1) -> 1.0 (January's (0, 1) would give 0.5,
    # and all four replicas 0.75).
    assert matrix(parsed) == {("ds", "ds/q0", "m-7b"): 0.5, ("ds", "ds/q1", "m-7b"): 1.0}
    assert ("3 records repeated a sample already read with the same score (a repeated line or a second run); "
            "each sample was counted once") in parsed.notes
    assert ("1 record of older runs conflicted with the newest run's and was replaced (duplicates='newest')"
            in parsed.notes)


def test_it_collapses_a_repeated_identical_record_and_refuses_a_conflicting_one(tmp_path):
    work = tmp_path / "20250101_120000"
    path = write_opencompass_result(work, model="m-7b", dataset="ds", details=[
        {"example_abbr": "q0", "correct": True}, {"example_abbr": "q1", "correct": False},
        {"example_abbr": "q0", "correct": True},
    ])
    parsed = parse_harness_logs(path)
    assert matrix(parsed) == {("ds", "ds/q0", "m-7b"): 1.0, ("ds", "ds/q1", "m-7b"): 0.0}
    assert len(parsed.responses) == 2

    write_opencompass_result(work, model="m-7b", dataset="ds", details=[
        {"example_abbr": "q0", "correct": True}, {"example_abbr": "q0", "correct": False},
    ])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(path, duplicates="newest")  # one run: the option cannot choose
    assert err.value.problems == [Problem("ds.json", _common.CONFLICTING_IN_RUN.format(
        what="sample 'ds/q0' of model 'm-7b'", first_credit=1.0, first="ds.json, column 'details[0].correct'",
        credit=0.0), None, "details[1].correct")]
