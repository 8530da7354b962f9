"""The entry point: argument checks, format detection, mixed uploads, and the
shape of the result every format shares."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.loaders.base import MODEL_COLUMNS, QUESTION_COLUMNS, RESPONSE_COLUMNS, LoadError
from annotate.catalog.loaders.harness import _common, detect_format, parse_harness_logs
from tests.annotate.harness_fixtures import (
    write_helm_suite,
    write_inspect_logs,
    write_lm_eval_logs,
    write_opencompass_outputs,
)

WRITERS = {
    "lm-eval": write_lm_eval_logs,
    "inspect": write_inspect_logs,
    "helm": write_helm_suite,
    "opencompass": write_opencompass_outputs,
}


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_it_detects_each_format_and_returns_the_contract_shape(tmp_path, fmt):
    gen = WRITERS[fmt](tmp_path, np.random.default_rng(1))
    parsed = parse_harness_logs(gen.root)
    assert parsed.file_format == fmt
    assert parsed.options["format"] == fmt
    # The contract's columns, plus "source" ("file:where", as the tabular loaders add it).
    assert list(parsed.questions.columns) == [*QUESTION_COLUMNS, "source"]
    assert list(parsed.models.columns) == [*MODEL_COLUMNS, "source"]
    assert list(parsed.responses.columns) == RESPONSE_COLUMNS
    assert parsed.questions["source"].str.len().gt(0).all()
    assert parsed.models["source"].str.len().gt(0).all()
    assert parsed.responses["credit"].dtype == np.float64
    assert parsed.responses["credit"].between(0, 1).all()
    assert not parsed.questions.duplicated(["dataset", "external_id"]).any()
    assert not parsed.responses.duplicated(["dataset", "external_id", "model"]).any()
    # Every response's question is in the question table, and no question is without one.
    asked = set(zip(parsed.responses["dataset"], parsed.responses["external_id"]))
    assert asked == set(zip(parsed.questions["dataset"], parsed.questions["external_id"]))
    assert all(isinstance(o, list) for o in parsed.questions["options"])
    assert all(isinstance(m, dict) for m in parsed.questions["metadata"])
    assert parsed.models["access"].eq("unknown").all()
    assert parsed.models["parameters_b"].map(math.isnan).all()
    assert all(isinstance(p, Path) and p.is_file() for p in parsed.source_files)


def test_it_refuses_a_folder_holding_two_formats(shared_data):
    with pytest.raises(LoadError) as err:
        parse_harness_logs(shared_data / "harness-formats")
    assert err.value.problems[0].message == (
        "logs of several formats found (inspect: 2 files, lm-eval: 4 files); pass format= to choose one")


def test_it_reads_one_format_of_a_mixed_folder_when_told_and_lists_the_rest(shared_data):
    parsed = parse_harness_logs(shared_data / "harness-formats", format="inspect")
    assert set(parsed.models["name"]) == {"ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0"}
    assert parsed.notes == [
        "4 files that are not inspect logs were ignored: lm-eval/gemma3__12b-it-q4_K_M/results_2025-09-09T13-42-42"
        ".857006.json, lm-eval/gemma3__12b-it-q4_K_M/samples_gsm8k_2025-09-09T13-42-42.857006.jsonl, "
        "lm-eval/gemma3__12b-u1/results_2025-09-09T13-31-53.431753.json, "
        "lm-eval/gemma3__12b-u1/samples_gsm8k_2025-09-09T13-31-53.431753.jsonl"
    ]


def test_it_refuses_a_named_file_of_another_format(shared_data):
    inspect_log = shared_data / "harness-formats" / "inspect" / "data_arc_qwen.json"
    with pytest.raises(LoadError) as err:
        parse_harness_logs([inspect_log], format="lm-eval")
    assert err.value.problems[0].message == "not a lm-eval log"


def test_it_says_when_no_logs_are_found(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    assert err.value.problems[0].message == "no evaluation-harness logs found (looked at 2 files)"


def test_it_refuses_an_upload_with_no_score_at_all(tmp_path):
    folder = tmp_path / "results" / "m"
    folder.mkdir(parents=True)
    (folder / "d.json").write_text('{"accuracy": 1.0}')
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    assert err.value.problems[0].message == _common.NO_SCORES


def test_detect_format_reads_names_and_contents(tmp_path, shared_data):
    real = shared_data / "harness-formats"
    assert detect_format(real / "inspect" / "data_arc_sonnet.json") == "inspect"
    assert detect_format(next((real / "lm-eval" / "gemma3__12b-u1").glob("results_*.json"))) == "lm-eval"
    assert detect_format(next((real / "lm-eval" / "gemma3__12b-u1").glob("samples_*.jsonl"))) == "lm-eval"
    assert detect_format(real / "lm-eval" / "SOURCE.md") is None
    (tmp_path / "x.eval").write_bytes(b"")
    assert detect_format(tmp_path / "x.eval") == "inspect"
    (tmp_path / "broken.json").write_text("{not json")
    assert detect_format(tmp_path / "broken.json") is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"format": "csv"}, "format must be one of lm-eval, inspect, helm, opencompass or None; got 'csv'"),
        ({"metric": ""}, "metric must be a non-empty string or None; got ''"),
        ({"filter": 3}, "filter must be a non-empty string or None; got 3"),
        ({"dataset": "  "}, "dataset must be a non-empty string or None; got '  '"),
        ({"skip_invalid": "yes"}, "skip_invalid must be a bool; got 'yes'"),
    ],
)
def test_it_rejects_malformed_arguments_naming_them(shared_data, kwargs, message):
    with pytest.raises(ValueError) as err:
        parse_harness_logs(shared_data / "harness-formats" / "inspect", **kwargs)
    assert str(err.value) == message
    assert not isinstance(err.value, LoadError)


def test_it_rejects_paths_that_do_not_exist_or_are_empty(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(ValueError, match=r"^paths: '.*nope' does not exist$"):
        parse_harness_logs(missing)
    with pytest.raises(ValueError, match=r"^paths is empty"):
        parse_harness_logs([])


def test_it_rejects_a_filter_for_a_format_without_filters(shared_data):
    with pytest.raises(ValueError) as err:
        parse_harness_logs(shared_data / "harness-formats" / "inspect", filter="strict-match")
    assert str(err.value) == "filter applies only to lm-eval logs; got filter='strict-match' for inspect logs"


def test_it_merges_one_model_across_files_and_formats_of_its_logs(tmp_path):
    gen = write_inspect_logs(tmp_path, np.random.default_rng(5))
    parsed = parse_harness_logs(gen.root)
    # Each model wrote two logs (one per task) and appears once.
    assert parsed.models["name"].is_unique
    per_model = parsed.responses.groupby("model")["dataset"].nunique()
    assert (per_model == 2).all()


def test_the_response_table_pivots_into_a_matrix_with_unobserved_cells_missing(tmp_path):
    gen = write_lm_eval_logs(tmp_path, np.random.default_rng(2))
    parsed = parse_harness_logs(gen.root)
    R = parsed.responses.pivot(index=["dataset", "external_id"], columns="model", values="credit")
    assert R.shape == (10, 3)
    # gamma ran neither gsm8k_mini (3 docs) nor algebra doc 3: four NaN cells.
    assert int(R.isna().sum().sum()) == 4
    assert isinstance(R, pd.DataFrame)
