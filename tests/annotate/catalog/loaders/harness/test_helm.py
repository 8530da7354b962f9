"""HELM run folders: main metric from schema.json, perturbations and extra
trials skipped, instance ids kept apart by scenario arguments."""
from __future__ import annotations

import json

import numpy as np
import pytest

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.harness import _common, helm, parse_harness_logs
from tests.annotate.harness_fixtures import HELM_MODELS, matrix, write_helm_run, write_helm_suite


@pytest.fixture
def suite(tmp_path):
    return write_helm_suite(tmp_path, np.random.default_rng(3))


def test_it_round_trips_two_models_on_three_runs(suite):
    parsed = parse_harness_logs(suite.root)
    assert parsed.file_format == "helm"
    assert matrix(parsed) == suite.expected
    assert sorted(parsed.models["name"]) == sorted(HELM_MODELS)


def test_it_reads_each_run_groups_main_metric_from_the_schema(suite):
    parsed = parse_harness_logs(suite.root)
    assert parsed.options["metrics_used"] == {
        "boolq": "quasi_exact_match",
        "mmlu:subject=anatomy": "exact_match",
        "mmlu:subject=philosophy": "exact_match",
    }


def test_it_skips_perturbed_rows_and_extra_trials_and_says_so(suite):
    parsed = parse_harness_logs(suite.root)
    # 2 models x 3 runs x 3 instances = 18 of each kind.
    assert ("HELM: 18 perturbed and 18 extra-trial (train_trial_index > 0) instance rows skipped; "
            "only the unperturbed first trial is the base response") in parsed.notes


def test_it_keeps_shared_instance_ids_of_two_subjects_apart(suite):
    q = parse_harness_logs(suite.root).questions
    mmlu = q[q["dataset"] == "mmlu"].set_index("external_id")
    assert sorted(mmlu.index) == [f"mmlu:subject={s}/id{i}" for s in ("anatomy", "philosophy") for i in (10, 11, 12)]
    assert mmlu.loc["mmlu:subject=anatomy/id11", "subject"] == "mmlu:subject=anatomy"
    # The unperturbed instance's text, not the perturbed copy's.
    assert mmlu.loc["mmlu:subject=anatomy/id11", "text"] == suite.texts[("mmlu", "mmlu:subject=anatomy/id11")]
    assert mmlu.loc["mmlu:subject=anatomy/id11", "options"] == ["yes", "no"]
    assert mmlu.loc["mmlu:subject=anatomy/id11", "reference_answer"] == "yes"
    boolq = q[q["dataset"] == "boolq"]
    assert set(boolq["subject"]) == {"boolq"}  # the run group is the scenario itself


def test_it_falls_back_to_exact_match_without_a_schema_and_says_so(tmp_path):
    gen = write_helm_suite(tmp_path, np.random.default_rng(3), with_schema=False)
    parsed = parse_harness_logs(gen.root)
    assert set(parsed.options["metrics_used"].values()) == {"exact_match"}
    mmlu = {k: v for k, v in matrix(parsed).items() if k[0] == "mmlu"}
    assert mmlu == {k: v for k, v in gen.expected.items() if k[0] == "mmlu"}
    assert any(n.startswith("HELM: no schema.json names the main metric for boolq, mmlu:subject=anatomy")
               for n in parsed.notes)


def test_it_reads_the_chosen_stat(suite):
    parsed = parse_harness_logs(suite.root, metric="quasi_exact_match")
    got = matrix(parsed)
    boolq = {k: v for k, v in got.items() if k[0] == "boolq"}
    assert boolq == {k: v for k, v in suite.expected.items() if k[0] == "boolq"}
    assert set(parsed.options["metrics_used"].values()) == {"quasi_exact_match"}


def test_it_refuses_a_stat_that_is_not_a_score(suite):
    with pytest.raises(LoadError) as err:
        parse_harness_logs(suite.root, metric="num_output_tokens")
    first = err.value.problems[0]
    assert first.message == _common.OUT_OF_RANGE.format(value=17.0)
    assert first.column == "[0].stats.num_output_tokens.mean"
    assert first.file.endswith("/per_instance_stats.json")


def test_it_refuses_a_run_folder_without_run_spec(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "per_instance_stats.json").write_text(json.dumps([]))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(run)
    assert err.value.problems[0] == Problem("per_instance_stats.json", helm.NO_RUN_SPEC)


def test_it_refuses_an_instance_without_the_main_stat(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "run_spec.json").write_text(json.dumps({
        "name": "x:model=m", "scenario_spec": {"args": {}}, "adapter_spec": {"model": "m/one"}, "groups": ["x"]}))
    (run / "per_instance_stats.json").write_text(json.dumps([
        {"instance_id": "id1", "train_trial_index": 0,
         "stats": [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": 1.0, "mean": 1.0}]},
        {"instance_id": "id2", "train_trial_index": 0,
         "stats": [{"name": {"name": "f1", "split": "test"}, "count": 1, "sum": 0.5, "mean": 0.5}]},
    ]))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(run)
    assert err.value.problems == [Problem(
        "per_instance_stats.json",
        helm.NO_STAT.format(instance="id2", metric="exact_match", available=["exact_match", "f1"]),
        None, "[1].stats")]


# ------------------------------------------------------------ one record per (model, run, instance)

def test_it_collapses_an_instance_listed_twice_with_the_same_score(tmp_path):
    write_helm_run(tmp_path / "v1", model="m/one", scenario="quiz",
                   instances=[("id1", 1.0), ("id2", 0.0), ("id1", 1.0)])
    parsed = parse_harness_logs(tmp_path)
    assert matrix(parsed) == {("quiz", "quiz/id1", "m/one"): 1.0, ("quiz", "quiz/id2", "m/one"): 0.0}
    assert list(parsed.responses["source"]) == ["v1/quiz:model=m_one/per_instance_stats.json:[0]",
                                                "v1/quiz:model=m_one/per_instance_stats.json:[1]"]
    assert ("1 record repeated a sample already read with the same score (a repeated line or a second run); "
            "each sample was counted once") in parsed.notes


def test_it_refuses_an_instance_listed_twice_with_another_score(tmp_path):
    run = write_helm_run(tmp_path, model="m/one", scenario="quiz", instances=[("id1", 1.0), ("id1", 0.0)])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(run)
    assert err.value.problems == [Problem("per_instance_stats.json", _common.CONFLICTING_IN_RUN.format(
        what="sample 'quiz/id1' of model 'm/one'", first_credit=1.0, first="per_instance_stats.json, column '[0]'",
        credit=0.0), None, "[1]")]


def _two_suites(tmp_path):
    # The newer suite "rerun" (summarised 2025-03-01) is read before "v1" (2025-01-15).
    write_helm_run(tmp_path / "v1", model="m/one", scenario="quiz", date="2025-01-15",
                   instances=[("id1", 1.0), ("id2", 1.0), ("id3", 0.0)])
    write_helm_run(tmp_path / "rerun", model="m/one", scenario="quiz", date="2025-03-01",
                   instances=[("id1", 1.0), ("id2", 0.0), ("id3", 1.0)])


def test_it_refuses_one_run_in_two_suites_that_disagree_naming_both_files(tmp_path):
    _two_suites(tmp_path)
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    v1, rerun = "v1/quiz:model=m_one/per_instance_stats.json", "rerun/quiz:model=m_one/per_instance_stats.json"
    assert err.value.problems == [
        Problem(v1, _common.CONFLICTING_RECORDS.format(what="sample 'quiz/id2' of model 'm/one'", first_credit=0.0,
                                                       first=f"{rerun}, column '[1]'", credit=1.0), None, "[1]"),
        Problem(v1, _common.CONFLICTING_RECORDS.format(what="sample 'quiz/id3' of model 'm/one'", first_credit=1.0,
                                                       first=f"{rerun}, column '[2]'", credit=0.0), None, "[2]"),
    ]


def test_the_newest_run_option_keeps_the_later_suites_scores(tmp_path):
    _two_suites(tmp_path)
    parsed = parse_harness_logs(tmp_path, duplicates="newest")
    # id1 agrees (1); id2 and id3 are taken from the 2025-03-01 suite: 0 and 1.
    assert matrix(parsed) == {("quiz", "quiz/id1", "m/one"): 1.0, ("quiz", "quiz/id2", "m/one"): 0.0,
                              ("quiz", "quiz/id3", "m/one"): 1.0}
    # No "files ... were ignored" note: the suites' summary.json files belong to HELM.
    assert parsed.notes == [
        "HELM: no schema.json names the main metric for quiz; used 'exact_match'; choose another with metric=",
        "1 record repeated a sample already read with the same score (a repeated line or a second run); "
        "each sample was counted once",
        "2 records of older runs conflicted with the newest run's and were replaced (duplicates='newest')",
    ]
    assert {p.as_posix() for p in parsed.source_files} >= {(tmp_path / s / "summary.json").as_posix()
                                                          for s in ("v1", "rerun")}


def test_the_newest_run_option_refuses_two_suites_of_the_same_date(tmp_path):
    write_helm_run(tmp_path / "v1", model="m/one", scenario="quiz", date="2025-03-01", instances=[("id1", 1.0)])
    write_helm_run(tmp_path / "v2", model="m/one", scenario="quiz", date="2025-03-01", instances=[("id1", 0.0)])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path, duplicates="newest")
    assert err.value.problems == [Problem("v2/quiz:model=m_one/per_instance_stats.json", _common.NO_RUN_TIME.format(
        what="sample 'quiz/id1' of model 'm/one'", first_credit=1.0,
        first="v1/quiz:model=m_one/per_instance_stats.json, column '[0]'", credit=0.0), None, "[0]")]
