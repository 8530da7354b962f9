"""``manage.py paper_report``: every analysis into one folder, with index.md.

The fast tests use a small stored matrix; the slow one loads every 50th
question of the real MMLU-Pro files (written to a temporary folder, never into the
repository) with ``load_responses`` and runs every analysis on it.
"""
from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from annotate.models import AnalysisKind, AnalysisRun, RunStatus
from scoring.analyses import leave_one_dataset_out
from tests.annotate.analyses.test_runs import load_matrix

pytestmark = pytest.mark.django_db

FILES = ["codebook.md", "plot.png", "plot.svg", "result.json"]
#: One tidy CSV per table of each analysis, named by the table's key.
TABLES = {
    "efficiency": ["timing.csv"], "scaling": ["scaling.csv"],
    "model_robustness": ["leave_one_out.csv", "removal.csv"], "dataset_robustness": ["removals.csv"],
    "case_study": ["difficulty.csv", "rankings.csv", "recovery.csv"],
    "rank_changes": ["families.csv", "models.csv", "rank_changes.csv", "windows.csv"],
    "profiles": ["profiles.csv"], "pools": ["members.csv", "pools.csv"],
}
QUICK = ["--trials", "2", "--k-max", "2", "--case-study-seeds", "2", "--mirt-epochs", "10",
         "--scaling-grid", "tiny", "--repeats", "1", "--skip-irt"]
RNG = np.random.default_rng(7)
SMALL = (RNG.random((40, 5)) < np.linspace(0.2, 0.8, 5)[None, :]).astype(float)
DATASETS = ["A"] * 25 + ["B"] * 15


def run_command(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("paper_report", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def small():
    return load_matrix(SMALL, name="small", datasets=DATASETS,
                       access=["open_weight", "open_weight", "proprietary", "open_weight", "proprietary"])


def test_it_writes_every_analysis_and_an_index(small, tmp_path):
    out, err = run_command("--response-set", "small", "--out", str(tmp_path), *QUICK)
    assert out.startswith(f"Wrote 8 analyses of small v1 to {tmp_path} in ")
    # every analysis but human_labels, which needs a label (--analyses human_labels --label ...)
    default = [k for k in AnalysisKind.values if k != AnalysisKind.HUMAN_LABELS]
    assert sorted(TABLES) == sorted(default)
    for kind in default:
        assert sorted(p.name for p in (tmp_path / kind).iterdir()) == sorted(FILES + TABLES[kind]), kind
    assert AnalysisRun.objects.filter(status=RunStatus.DONE).count() == 8
    # a progress bar per analysis on stderr
    for kind in default:
        assert f"{kind}: 100%" in err
    index = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert index.startswith("# Paper analyses of small v1")
    assert index.count("\n## ") == 8 and "Failed" not in index
    # the default grouping is by dataset: the JSON holds leave_one_dataset_out's numbers
    stored = json.loads((tmp_path / "dataset_robustness" / "result.json").read_text(encoding="utf-8"))
    direct = leave_one_dataset_out(SMALL, DATASETS)
    assert stored["params"]["group_by"] == "dataset"
    assert [r["competency_rho"]["value"] for r in stored["result"]["removals"]] == pytest.approx(
        [r.competency_rho.value for r in direct.removals], abs=1e-12)
    # ... and so does its tidy CSV, read as is
    removals = pd.read_csv(tmp_path / "dataset_robustness" / "removals.csv")
    assert list(removals.columns) == ["dataset", "questions_removed", "competency_rho", "difficulty_rho", "error"]
    assert removals["questions_removed"].tolist() == [25, 15]
    assert removals["competency_rho"].tolist() == [r.competency_rho.value for r in direct.removals]
    assert f"competency rho {direct.competency_rho.mean:.4f} ± {direct.competency_rho.std:.4f}" in index


def test_it_runs_only_the_chosen_analyses_with_the_given_options(small, tmp_path):
    run_command("--response-set", "small", "--out", str(tmp_path), "--analyses", "profiles,case_study",
                "--group-by", "metadata:none", "--case-study-seeds", "3", "--skip-irt", "--seed", "5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case_study", "index.md", "profiles"]
    runs = {r.kind: r for r in AnalysisRun.objects.all()}
    assert runs["profiles"].params["group_by"] == "metadata:none"
    assert runs["case_study"].params == {"alpha": 0.85, "mirt_epochs": 1000, "n_seeds": 3, "seed": 5,
                                         "skip_irt": True}
    assert runs["case_study"].response_set is None


def test_a_failing_analysis_is_reported_and_the_others_are_written(small, tmp_path):
    # group by subject: the questions have none, so leave-one-out has 1 group
    with pytest.raises(CommandError) as info:
        run_command("--response-set", "small", "--out", str(tmp_path), "--analyses", "dataset_robustness,profiles",
                    "--group-by", "subject")
    assert str(info.value) == (
        f"1 of 2 analyses failed (dataset_robustness); the others are in {tmp_path} (see index.md)"
    )
    assert sorted(p.name for p in (tmp_path / "profiles").iterdir()) == sorted(FILES + TABLES["profiles"])
    assert not (tmp_path / "dataset_robustness").exists()
    index = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert "**Failed:** ValueError: groups must hold at least 2 distinct datasets" in index
    assert AnalysisRun.objects.get(kind="dataset_robustness").status == RunStatus.FAILED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--response-set", "nope"], "no loaded response set is named 'nope'; loaded: small"),
        (["--response-set", "small", "--analyses", "pools,magic"],
         "--analyses takes a comma-separated subset of " + ", ".join(AnalysisKind.values) + "; unknown: magic"),
        (["--response-set", "small", "--seed", "-1"],
         "efficiency: seed must be an integer >= 0 and <= 4294967295; got -1"),
        (["--response-set", "small", "--group-by", "topic"],
         "dataset_robustness: group_by must be 'dataset', 'subject' or 'metadata:<key>'; got 'topic'"),
    ],
)
def test_it_refuses_bad_options_before_running_anything(small, tmp_path, args, message):
    with pytest.raises(CommandError) as info:
        run_command("--out", str(tmp_path / "out"), *args)
    assert str(info.value) == message
    assert not AnalysisRun.objects.exists() and not (tmp_path / "out").exists()


def _slice(source: Path, target: Path, step: int) -> int:
    """Every ``step``-th question of MMLU-Pro (all 14 categories), its
    metadata rows, and models.csv whole; the number of questions."""
    target.mkdir()
    with open(source / "responses_binary.csv", newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    rows = rows[::step]
    ids = {row[0] for row in rows}
    with open(target / "responses_binary.csv", "w", newline="", encoding="utf-8") as g:
        csv.writer(g).writerows([header, *rows])
    with open(source / "questions.csv", newline="", encoding="utf-8") as f:
        header, *questions = list(csv.reader(f))
    with open(target / "questions.csv", "w", newline="", encoding="utf-8") as g:
        csv.writer(g).writerows([header, *(q for q in questions if q[0] in ids)])
    (target / "models.csv").write_bytes((source / "models.csv").read_bytes())
    return len(rows)


@pytest.mark.slow
def test_it_runs_end_to_end_on_a_slice_of_mmlu_pro(shared_data, tmp_path):
    folder = tmp_path / "mmlu-slice"
    n_questions = _slice(shared_data / "mmlu-pro", folder, 50)
    call_command("load_responses", folder=str(folder), dataset="MMLU-Pro", subject_column="category",
                 keep_columns="src,source_dataset,mmlu_subject,mmlu_level", stdout=StringIO(), stderr=StringIO())
    out, _ = run_command("--response-set", "mmlu-slice", "--out", str(tmp_path / "report"), "--group-by", "subject",
                         "--trials", "3", "--k-max", "3", "--case-study-seeds", "3", "--mirt-epochs", "20",
                         "--scaling-grid", "tiny", "--repeats", "1")
    assert out.startswith("Wrote 8 analyses of mmlu-slice v1")
    result = json.loads((tmp_path / "report" / "efficiency" / "result.json").read_text(encoding="utf-8"))["result"]
    assert (result["n_questions"], result["n_models"]) == (n_questions, 32) == (241, 32)
    assert [m["method"] for m in result["methods"] if m["median_seconds"] is not None] == [
        "eip", "irt_1pl", "irt_2pl", "irt_mirt"]
    subjects = json.loads((tmp_path / "report" / "dataset_robustness" / "result.json").read_text())["result"]
    assert (subjects["n_groups"], subjects["group_by"]) == (14, "subject")


def test_the_bundle_says_its_files_encoding_in_the_index_and_every_codebook(small, tmp_path):
    run_command("--response-set", "small", "--out", str(tmp_path), "--analyses", "dataset_robustness", *QUICK)
    note = ("Encoding: every text file of this download (CSV, JSON, Markdown, this codebook included) is UTF-8 "
            "without a byte-order mark")
    assert note in (tmp_path / "index.md").read_text(encoding="utf-8")
    assert note in (tmp_path / "dataset_robustness" / "codebook.md").read_text(encoding="utf-8")
    for path in tmp_path.rglob("*"):
        if path.suffix in (".csv", ".json", ".md"):
            data = path.read_bytes()
            assert not data.startswith(b"\xef\xbb\xbf"), path
            data.decode("utf-8", errors="strict")
