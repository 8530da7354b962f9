"""lm-evaluation-harness logs: the real gsm8k files, generated multi-model logs,
filters, metrics, the 0.4.0 layout and values that are not scores."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.harness import _common, lm_eval, parse_harness_logs
from tests.annotate.harness_fixtures import (
    LM_MODELS,
    LM_OLD_MODEL,
    lm_expected_for,
    matrix,
    write_lm_eval_logs,
    write_lm_eval_run,
)

IT = "gemma3:12b-it-q4_K_M"
U1 = "gemma3:12b-u1"


@pytest.fixture
def real_lm_eval(shared_data):
    return shared_data / "harness-formats" / "lm-eval"


@pytest.fixture
def generated(tmp_path):
    return write_lm_eval_logs(tmp_path, np.random.default_rng(8))


# ----------------------------------------------------------- the real gsm8k files

def test_it_reads_the_real_gsm8k_credits_for_both_models(real_lm_eval):
    parsed = parse_harness_logs(real_lm_eval)
    # Read from the files by hand: exact_match per line, strict-match filter.
    # it-q4_K_M: doc 16 -> 1.0, 17 -> 0.0, 18 -> 1.0; u1: 16 -> 1.0, 17 -> 0.0, 18 -> 0.0
    # i.e. the pairs (1,1), (0,0), (1,0) of the SOURCE.md.
    assert matrix(parsed) == {
        ("gsm8k", "gsm8k/16", IT): 1.0, ("gsm8k", "gsm8k/17", IT): 0.0, ("gsm8k", "gsm8k/18", IT): 1.0,
        ("gsm8k", "gsm8k/16", U1): 1.0, ("gsm8k", "gsm8k/17", U1): 0.0, ("gsm8k", "gsm8k/18", U1): 0.0,
    }
    assert parsed.file_format == "lm-eval"
    assert sorted(parsed.models["name"]) == [IT, U1]
    assert parsed.options["metrics_used"] == {"gsm8k": "exact_match"}
    assert parsed.options["filters_used"] == {"gsm8k": "strict-match"}
    assert len(parsed.source_files) == 4


def test_it_takes_question_text_and_answer_from_the_real_doc(real_lm_eval):
    parsed = parse_harness_logs(real_lm_eval)
    q = parsed.questions.set_index("external_id")
    assert list(q.index) == ["gsm8k/16", "gsm8k/17", "gsm8k/18"]
    assert q.loc["gsm8k/18", "text"] == (
        "Claire makes a 3 egg omelet every morning for breakfast.  How many dozens of eggs will she eat in 4 weeks?"
    )
    assert q.loc["gsm8k/17", "text"].startswith("Jill gets paid $20 per hour to teach")
    assert q.loc["gsm8k/18", "reference_answer"].endswith("#### 7")
    assert set(q["dataset"]) == {"gsm8k"}
    assert set(q["subject"]) == {"gsm8k"}  # a standalone task is its own dataset
    assert q.loc["gsm8k/16", "options"] == []
    assert q.loc["gsm8k/16", "metadata"] == {"harness": "lm-eval", "task": "gsm8k", "doc_id": 16}


def test_it_uses_the_given_dataset_name_and_makes_the_task_the_subject(real_lm_eval):
    parsed = parse_harness_logs(real_lm_eval, dataset="Grade-school math")
    assert set(parsed.questions["dataset"]) == {"Grade-school math"}
    assert set(parsed.questions["subject"]) == {"gsm8k"}
    assert set(parsed.responses["dataset"]) == {"Grade-school math"}


def test_it_refuses_a_filter_the_real_run_did_not_log(real_lm_eval):
    with pytest.raises(LoadError) as err:
        parse_harness_logs(real_lm_eval, filter="flexible-extract")
    assert err.value.problems[0].message == lm_eval.FILTER_UNUSED.format(
        wanted="flexible-extract", logged=["strict-match"])


# ------------------------------------------------------------ generated logs

def test_it_round_trips_three_models_three_tasks_and_two_layouts(generated):
    parsed = parse_harness_logs(generated.root)
    assert matrix(parsed) == pytest.approx(generated.expected, abs=1e-12)
    assert sorted(parsed.models["name"]) == sorted([*LM_MODELS, LM_OLD_MODEL])


def test_it_keeps_doc_ids_that_restart_in_every_subtask_apart(generated):
    parsed = parse_harness_logs(generated.root)
    q = parsed.questions
    mmlu = q[q["dataset"] == "mmlu_mini"]
    # algebra has docs 0-3 and biology 0-2: seven questions, not four.
    assert sorted(mmlu["external_id"]) == [
        "mmlu_mini_algebra/0", "mmlu_mini_algebra/1", "mmlu_mini_algebra/2", "mmlu_mini_algebra/3",
        "mmlu_mini_biology/0", "mmlu_mini_biology/1", "mmlu_mini_biology/2",
    ]
    assert set(mmlu["subject"]) == {"mmlu_mini_algebra", "mmlu_mini_biology"}
    row = mmlu.set_index("external_id").loc["mmlu_mini_biology/2"]
    assert row["text"] == generated.texts[("mmlu_mini", "mmlu_mini_biology/2")]
    assert row["options"] == ["option A", "option B", "option C", "option D"]


def test_it_counts_an_identical_rerun_of_a_task_once_and_says_so(generated):
    parsed = parse_harness_logs(generated.root)
    alpha = parsed.responses[(parsed.responses["model"] == LM_MODELS[0])
                             & parsed.responses["external_id"].str.startswith("mmlu_mini_algebra/")]
    assert len(alpha) == 4
    # One record per document: the first run's 0/1 verdicts, never an average.
    first = generated.extra["scores"][LM_MODELS[0]]
    assert list(alpha["credit"]) == [first[("mmlu_mini_algebra", d, "none", "acc")] for d in range(4)]
    assert ("4 records repeated a sample already read with the same score (a repeated line or a second run); "
            "each sample was counted once") in parsed.notes
    assert not any("several samples" in note for note in parsed.notes)


def test_it_leaves_a_doc_the_old_layout_never_logged_unobserved(generated):
    parsed = parse_harness_logs(generated.root)
    gamma = parsed.responses[parsed.responses["model"] == LM_OLD_MODEL]
    assert "mmlu_mini_algebra/3" not in set(gamma["external_id"])
    assert len(gamma) == 3 + 3  # algebra 0-2, biology 0-2; no gsm8k_mini


def test_it_defaults_to_the_first_listed_filter_and_notes_the_choice(generated):
    parsed = parse_harness_logs(generated.root)
    assert parsed.options["filters_used"]["gsm8k_mini"] == "strict-match"
    assert any("used 'strict-match'" in note and "gsm8k_mini" in note for note in parsed.notes)


def test_it_reads_the_chosen_filter_where_a_task_logged_several(generated):
    parsed = parse_harness_logs(generated.root, filter="flexible-extract")
    got = {k: v for k, v in matrix(parsed).items() if k[0] == "gsm8k_mini"}
    assert got == lm_expected_for(generated, task="gsm8k_mini", filter="flexible-extract", metric="exact_match")
    # Single-filter tasks keep their only filter.
    assert parsed.options["filters_used"]["mmlu_mini_biology"] == "none"


def test_it_reads_the_chosen_metric_instead_of_the_primary_one(generated):
    folders = [generated.root / m.replace("/", "__") for m in LM_MODELS]
    files = [p for folder in folders for p in folder.iterdir()
             if "mmlu_mini_biology" in p.name or p.name.startswith("results_2025-01")]
    parsed = parse_harness_logs(files, metric="acc_norm")
    assert matrix(parsed) == lm_expected_for(generated, task="mmlu_mini_biology", filter="none", metric="acc_norm")
    assert parsed.options["metrics_used"] == {"mmlu_mini_biology": "acc_norm"}


def test_it_names_file_line_and_key_when_the_chosen_metric_is_missing(generated):
    folder = generated.root / LM_MODELS[1].replace("/", "__")
    with pytest.raises(LoadError) as err:
        parse_harness_logs(folder, metric="acc_norm")
    first = err.value.problems[0]
    assert first.file == "samples_gsm8k_mini_2025-01-02T10-00-00.000001.jsonl"
    assert (first.row, first.column) == (1, "acc_norm")
    assert first.message == lm_eval.NO_METRIC_KEY.format(metric="acc_norm", available=["exact_match"])


# ------------------------------------------------------------ values that are not scores

def _write_bad_run(tmp_path, values):
    folder = tmp_path / "m"
    folder.mkdir()
    date = "2025-03-03T03-03-03.000003"
    results = {"results": {"t": {}}, "configs": {"t": {"metric_list": [{"metric": "exact_match"}]}},
               "config": {"model_args": "pretrained=x"}, "model_name": "org/m", "lm_eval_version": "0.4.9"}
    (folder / f"results_{date}.json").write_text(json.dumps(results))
    lines = [{"doc_id": i, "doc": {"question": f"q{i}"}, "target": "1", "filter": "none",
              "metrics": ["exact_match"], "exact_match": v} for i, v in enumerate(values)]
    (folder / f"samples_t_{date}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder, f"samples_t_{date}.jsonl"


def test_it_refuses_a_dict_a_pair_a_null_and_a_string_with_file_line_and_key(tmp_path):
    folder, name = _write_bad_run(tmp_path, [1.0, {"score": 1}, ["42", "41"], None, "yes", 0.0])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(folder)
    assert err.value.problems == [
        Problem(name, _common.DICT_NOT_A_SCORE.format(value='{"score": 1}'), 2, "exact_match"),
        Problem(name, _common.LIST_NOT_A_SCORE.format(value='["42", "41"]'), 3, "exact_match"),
        Problem(name, _common.NULL_NOT_A_SCORE, 4, "exact_match"),
        Problem(name, _common.STRING_NOT_A_SCORE.format(value="yes"), 5, "exact_match"),
    ]
    assert f"{name}, row 2, column 'exact_match'" in str(err.value)


def test_it_refuses_nan_and_credit_outside_the_unit_interval(tmp_path):
    folder, _name = _write_bad_run(tmp_path, [float("nan"), 1.5, -0.25])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(folder)
    assert [(p.row, p.message) for p in err.value.problems] == [
        (1, _common.NAN_NOT_A_SCORE),
        (2, _common.OUT_OF_RANGE.format(value=1.5)),
        (3, _common.OUT_OF_RANGE.format(value=-0.25)),
    ]


def test_it_reads_booleans_as_exact_match_verdicts(tmp_path):
    folder, _ = _write_bad_run(tmp_path, [True, False, 0.5])
    parsed = parse_harness_logs(folder)
    assert list(parsed.responses["credit"]) == [1.0, 0.0, 0.5]


def test_it_skips_and_counts_bad_values_when_asked(tmp_path):
    folder, _ = _write_bad_run(tmp_path, [1.0, None, {"a": 1}, None, 0.0])
    parsed = parse_harness_logs(folder, skip_invalid=True)
    assert list(parsed.responses["external_id"]) == ["t/0", "t/4"]
    assert "3 values that are not scores were skipped (dict: 1, null: 2)" in parsed.notes
    # The skipped questions are not in the question table either.
    assert list(parsed.questions["external_id"]) == ["t/0", "t/4"]


def test_it_refuses_samples_without_their_results_file(tmp_path):
    folder, name = _write_bad_run(tmp_path, [1.0])
    next(folder.glob("results_*.json")).unlink()
    with pytest.raises(LoadError) as err:
        parse_harness_logs(folder / name)
    assert err.value.problems == [Problem(name, lm_eval.NO_RESULTS_FILE)]


def test_it_refuses_old_lines_whose_filter_cannot_be_told_apart(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({
        "results": {"t": {}}, "configs": {"t": {"metric_list": [{"metric": "acc"}]}},
        "config": {"model_args": "pretrained=org/old"}}))
    lines = [{"doc_id": 0, "acc": 1.0}, {"doc_id": 0, "acc": 0.0}]
    (folder / "pretrained__org__old_t.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(folder)
    assert err.value.problems == [
        Problem("pretrained__org__old_t.jsonl", lm_eval.UNNAMED_FILTER.format(doc_id=0), 2, "filter")]


def test_it_names_the_model_from_model_args_in_old_results(generated):
    parsed = parse_harness_logs(generated.root / "gamma_run")
    assert list(parsed.models["name"]) == [LM_OLD_MODEL]
    assert parsed.models.loc[0, "metadata"]["model_args"] == "pretrained=org/gamma-1b,dtype=float"
    assert math.isnan(parsed.models.loc[0, "parameters_b"])
    assert parsed.models.loc[0, "access"] == "unknown"


def test_a_samples_file_named_alone_finds_its_results_file_beside_it(real_lm_eval):
    samples = next((real_lm_eval / "gemma3__12b-u1").glob("samples_gsm8k_*.jsonl"))
    parsed = parse_harness_logs(samples)
    assert matrix(parsed) == {("gsm8k", "gsm8k/16", U1): 1.0, ("gsm8k", "gsm8k/17", U1): 0.0,
                              ("gsm8k", "gsm8k/18", U1): 0.0}
    assert list(parsed.responses["source"]) == [f"{samples.name}:{row}" for row in (1, 2, 3)]
    assert {p.name for p in parsed.source_files} == {samples.name, "results_2025-09-09T13-31-53.431753.json"}


def test_it_pairs_a_results_file_named_by_output_path_through_its_timestamp(tmp_path):
    folder, _name = _write_bad_run(tmp_path, [1.0, 0.0])
    results = next(folder.glob("results_*.json"))
    results.rename(folder / results.name.replace("results_", "my_eval_"))
    (folder / "my_eval_2024-01-01T00-00-00.000000.json").write_text(json.dumps(
        {"results": {}, "configs": {}, "config": {"model_args": "pretrained=wrong/model"}}))
    parsed = parse_harness_logs(folder)
    assert list(parsed.models["name"]) == ["org/m"]
    assert list(parsed.responses["credit"]) == [1.0, 0.0]


# ------------------------------------------------------------ one record per (model, task, doc, filter)

JAN = "2025-01-01T10-00-00.000001"
FEB = "2025-02-01T09-30-00.000002"


def test_it_collapses_a_repeated_identical_line_into_one_response(tmp_path):
    write_lm_eval_run(tmp_path, model="org/m", task="t", date=JAN, lines=[(0, 1.0), (1, 0.0), (0, 1.0)])
    parsed = parse_harness_logs(tmp_path)
    # doc 0 twice with acc 1.0: one response of credit 1.0 (not two, not a mean of copies)
    assert matrix(parsed) == {("t", "t/0", "org/m"): 1.0, ("t", "t/1", "org/m"): 0.0}
    assert len(parsed.responses) == 2
    assert list(parsed.responses["source"]) == [f"samples_t_{JAN}.jsonl:1", f"samples_t_{JAN}.jsonl:2"]
    assert ("1 record repeated a sample already read with the same score (a repeated line or a second run); "
            "each sample was counted once") in parsed.notes


@pytest.mark.parametrize("duplicates", ["refuse", "newest"])
def test_it_refuses_a_repeated_line_with_another_score_naming_both_lines(tmp_path, duplicates):
    write_lm_eval_run(tmp_path, model="org/m", task="t", date=JAN, lines=[(0, 1.0), (1, 0.0), (0, 0.0)])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path, duplicates=duplicates)
    name = f"samples_t_{JAN}.jsonl"
    # Both lines belong to one run: the newest-run option cannot choose either.
    assert err.value.problems == [Problem(name, _common.CONFLICTING_IN_RUN.format(
        what="sample 't/0' of model 'org/m'", first_credit=1.0, first=f"{name}, row 1, column 'acc'",
        credit=0.0), 3, "acc")]
    assert "1 at samples_t_2025-01-01T10-00-00.000001.jsonl, row 1, column 'acc' and 0 here" in str(err.value)


def _two_runs(tmp_path):
    # The February rerun sits in a folder read first, so "newest" cannot mean "read last".
    write_lm_eval_run(tmp_path / "a_rerun", model="org/m", task="t", date=FEB, lines=[(0, 1.0), (1, 0.0), (2, 0.0)])
    write_lm_eval_run(tmp_path / "b_first", model="org/m", task="t", date=JAN, lines=[(0, 1.0), (1, 1.0), (2, 0.0)])


def test_it_refuses_two_runs_of_a_task_that_disagree_naming_both_files(tmp_path):
    _two_runs(tmp_path)
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    assert err.value.problems == [Problem(f"b_first/samples_t_{JAN}.jsonl", _common.CONFLICTING_RECORDS.format(
        what="sample 't/1' of model 'org/m'", first_credit=0.0,
        first=f"a_rerun/samples_t_{FEB}.jsonl, row 2, column 'acc'", credit=1.0), 2, "acc")]


def test_the_newest_run_option_keeps_the_later_runs_scores(tmp_path):
    _two_runs(tmp_path)
    parsed = parse_harness_logs(tmp_path, duplicates="newest")
    # Docs 0 and 2 agree (1, 0); doc 1 is 0 in February, 1 in January: February's 0.
    assert matrix(parsed) == {("t", "t/0", "org/m"): 1.0, ("t", "t/1", "org/m"): 0.0, ("t", "t/2", "org/m"): 0.0}
    assert parsed.options["duplicates"] == "newest"
    assert ("1 record of older runs conflicted with the newest run's and was replaced (duplicates='newest')"
            in parsed.notes)


def test_the_newest_run_option_replaces_every_document_of_a_conflicting_rerun(tmp_path):
    gen = write_lm_eval_logs(tmp_path, np.random.default_rng(8), rerun="conflicting")
    with pytest.raises(LoadError) as err:
        parse_harness_logs(gen.root)
    assert len(err.value.problems) == 4  # every algebra document of alpha's rerun differs
    assert {p.file for p in err.value.problems} == {f"org__alpha-7b/samples_mmlu_mini_algebra_{FEB}.jsonl"}
    assert all(f"org__alpha-7b/samples_mmlu_mini_algebra_{JAN}.jsonl, row {p.row}" in p.message
               for p in err.value.problems)
    parsed = parse_harness_logs(gen.root, duplicates="newest")
    assert matrix(parsed) == pytest.approx(gen.expected, abs=1e-12)


def test_it_refuses_an_unknown_duplicates_choice(tmp_path):
    write_lm_eval_run(tmp_path, model="org/m", task="t", date=JAN, lines=[(0, 1.0)])
    with pytest.raises(ValueError, match="duplicates must be one of refuse, newest; got 'latest'"):
        parse_harness_logs(tmp_path, duplicates="latest")
