"""Analysis runs over stored data (issue 6): each service result against the
pure function called directly on the same matrix, known answers on nested
matrices, status transitions, parameter checks and the files.

Matrices are built here from numbers (``load_matrix``), so the comparison
with :mod:`scoring.analyses` never goes through the selector under test.
"""
from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from django.test import override_settings

from annotate.analyses import services as service
from annotate.analyses.services import params as params_module, runs as runs_module
from annotate.core.downloads import product_version
from annotate.models import AnalysisRun, Dataset, LanguageModel, Question, ResponseSet, RunStatus, Subject
from scoring.analyses import (
    access_pools,
    accuracy_by_difficulty_tertile,
    case_study_rankings,
    case_study_recovery,
    difficulty_profiles,
    eip_vs_accuracy,
    leave_one_dataset_out,
    model_removal_robustness,
    pool_analysis,
    simulate_case_study,
    simulate_responses,
    size_pools,
)
from scoring.baselines import accuracy
from scoring.eip import eip
from tests.annotate.factories import write_responses

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
TOL = 1e-12


def guttman(n_models: int, thresholds) -> np.ndarray:
    """Perfectly nested: model m solves question q iff m >= thresholds[q]
    (see tests/scoring/test_analyses_robustness.py for why EIP's order is then
    forced: higher index = more competent, higher threshold = harder)."""
    m = np.arange(n_models)
    return (m[None, :] >= np.asarray(thresholds)[:, None]).astype(float)


def load_matrix(R, *, name: str, datasets, subjects=None, models=None, families=None, access=None, sizes=None,
                metadata=None) -> ResponseSet:
    """Store ``R`` (NaN = no row) as a response set: questions and models are
    created in row/column order, so the selector's ascending ids give back R."""
    R = np.asarray(R, dtype=float)
    n_q, n_m = R.shape
    models = models or [f"{name}-m{j}" for j in range(n_m)]
    rows = [LanguageModel.objects.create(
        name=models[j], family=(families or [""] * n_m)[j], access=(access or ["unknown"] * n_m)[j],
        parameters_b=(sizes or [None] * n_m)[j]) for j in range(n_m)]
    questions = []
    for i in range(n_q):
        dataset, _ = Dataset.objects.get_or_create(name=f"{name}-{datasets[i]}")
        subject = None if subjects is None else Subject.objects.get_or_create(name=f"{name}-{subjects[i]}")[0]
        questions.append(Question.objects.create(dataset=dataset, subject=subject, external_id=f"q{i}",
                                                 metadata=(metadata or [{}] * n_q)[i]))
    rs = ResponseSet.objects.create(name=name, file_name=f"{name}.csv", checksum=name.ljust(64, "0")[:64],
                                    file_format="wide", n_questions=n_q, n_models=n_m)
    write_responses(rs, [(questions[i], rows[j], R[i, j]) for i in range(n_q) for j in range(n_m)
                         if not np.isnan(R[i, j])])
    return rs


def executed(kind: str, response_set=None, **params) -> AnalysisRun:
    run = service.analysis_run_create(kind=kind, response_set=response_set, params=params)
    return service.analysis_run_execute(run=run)


# A random partial-credit matrix with missing cells, two datasets, two subjects
# cutting across them, families, access and sizes: the "same matrix" for the
# comparisons with the pure functions.
RNG = np.random.default_rng(20240417)
MIXED = np.round(RNG.random((60, 7)) * (RNG.random(7) + 0.3)[None, :], 1).clip(0, 1)
MIXED[RNG.random(MIXED.shape) < 0.08] = np.nan
MIXED_DATASETS = ["A"] * 35 + ["B"] * 25
MIXED_SUBJECTS = ["s1", "s2"] * 30
MIXED_FAMILIES = ["Fam1", "Fam1", "Fam2", "Fam2", "Fam2", "", "Fam3"]
MIXED_ACCESS = ["open_weight", "open_weight", "open_weight", "proprietary", "proprietary", "unknown", "open_weight"]
MIXED_SIZES = [7.0, 70.0, 8.0, None, None, 13.0, 34.0]


@pytest.fixture
def mixed() -> ResponseSet:
    return load_matrix(MIXED, name="mixed", datasets=MIXED_DATASETS, subjects=MIXED_SUBJECTS,
                       families=MIXED_FAMILIES, access=MIXED_ACCESS, sizes=MIXED_SIZES,
                       metadata=[{"part": "first" if i < 20 else "rest"} for i in range(60)])


# --- known answers -----------------------------------------------------------------------


def test_it_gives_rho_one_when_leaving_out_a_duplicate_of_a_model_in_a_nested_set():
    # 5 nested models plus "dup", a copy of model 2: removing the copy keeps
    # every failing set and solved set nested in the same order, so both
    # rankings are unchanged; thresholds 1..4 keep 6 questions, 0 and 5 give
    # an all-solved and an all-failed question, and no question changes status.
    base = guttman(5, [0, 1, 2, 3, 4, 1, 3, 5])
    R = np.column_stack([base, base[:, 2]])
    rs = load_matrix(R, name="nested", datasets=["d"] * 8, models=["m0", "m1", "m2", "m3", "m4", "dup"])
    result = executed("model_robustness", rs, k_max=1, trials=2).result
    dup = next(t for t in result["leave_one_out"]["trials"] if t["model"] == "dup")
    assert dup["difficulty_rho"] == pytest.approx(1.0, abs=TOL)
    assert dup["competency_rho"] == pytest.approx(1.0, abs=TOL)
    assert dup["n_filter_changes"] == 0
    assert result["n_kept_full"] == 6
    assert [t["model"] for t in result["leave_one_out"]["trials"]] == ["m0", "m1", "m2", "m3", "m4", "dup"]


def test_it_gives_rho_one_when_leaving_out_either_dataset_of_a_nested_suite():
    # Both datasets are nested with the same model order, so either alone
    # still orders the 5 models strictly by index: rho 1 each, mean 1, std 0.
    R = np.vstack([guttman(5, [1, 2, 3, 4, 0]), guttman(5, [1, 1, 2, 3, 4, 4, 5])])
    rs = load_matrix(R, name="suite", datasets=["a"] * 5 + ["b"] * 7)
    result = executed("dataset_robustness", rs, group_by="dataset").result
    assert [r["label"] for r in result["removals"]] == ["suite-a", "suite-b"]
    assert [r["n_questions_removed"] for r in result["removals"]] == [5, 7]
    assert [r["competency_rho"]["value"] for r in result["removals"]] == pytest.approx([1.0, 1.0], abs=TOL)
    assert result["competency_rho"]["mean"] == pytest.approx(1.0, abs=TOL)
    assert result["competency_rho"]["std"] == pytest.approx(0.0, abs=TOL)


# --- stored result == the pure function on the same matrix --------------------------------


def test_model_robustness_equals_one_call_of_the_pure_function(mixed):
    # The service loops over k with one generator (to report progress); that
    # must draw exactly what a single call over all k draws.
    result = executed("model_robustness", mixed, k_max=3, trials=4, seed=11).result
    direct = model_removal_robustness(MIXED, ks=[1, 2, 3], n_trials=4, rng=11)
    assert [r["k"] for r in result["removal"]] == [1, 2, 3]
    for stored, s in zip(result["removal"], direct.summaries):
        assert stored["difficulty_rho_values"] == pytest.approx([t.difficulty_rho.value for t in s.trials], abs=TOL)
        assert stored["competency_rho"]["mean"] == pytest.approx(s.competency_rho.mean, abs=TOL)
        assert stored["filter_changes"]["max"] == s.filter_changes.max


def test_dataset_robustness_groups_by_subject_and_by_metadata(mixed):
    by_subject = executed("dataset_robustness", mixed, group_by="subject").result
    direct = leave_one_dataset_out(MIXED, MIXED_SUBJECTS)
    assert [r["competency_rho"]["value"] for r in by_subject["removals"]] == pytest.approx(
        [r.competency_rho.value for r in direct.removals], abs=TOL)
    by_part = executed("dataset_robustness", mixed, group_by="metadata:part").result
    direct = leave_one_dataset_out(MIXED, ["first"] * 20 + ["rest"] * 40)
    assert [r["label"] for r in by_part["removals"]] == ["first", "rest"]
    assert by_part["competency_rho"]["mean"] == pytest.approx(direct.competency_rho.mean, abs=TOL)


def test_rank_changes_equal_the_pure_functions(mixed):
    result = executed("rank_changes", mixed).result
    res = eip(MIXED)
    families = [f or "(unknown family)" for f in MIXED_FAMILIES]
    cmp = eip_vs_accuracy(res.competency, accuracy(MIXED), families=families)
    tert = accuracy_by_difficulty_tertile(MIXED, res.difficulty)
    assert result["kendall"]["value"] == pytest.approx(cmp.kendall.value, abs=TOL)
    by_name = {m["name"]: m for m in result["models"]}
    for j in range(7):
        m = by_name[f"mixed-m{j}"]
        assert m["rank_change"] == cmp.rank_change[j]
        assert m["family"] == families[j]
        assert [m["tertile_accuracy"][t] for t in ("easy", "medium", "hard")] == pytest.approx(
            tert.accuracy[j].tolist(), abs=TOL)
    # models come in accuracy order: accuracy ranks ascending
    assert [m["accuracy_rank"] for m in result["models"]] == sorted(cmp.accuracy_rank.tolist())
    assert [w["window"] for w in result["windows"]] == [1, 3, 5, 10]


def test_profiles_equal_the_pure_function(mixed):
    result = executed("profiles", mixed, group_by="dataset", bins=5).result
    direct = difficulty_profiles(eip(MIXED).difficulty_scaled, MIXED_DATASETS, bins=5)
    assert [g["label"] for g in result["groups"]] == ["mixed-A", "mixed-B"]
    for stored, label in zip(result["groups"], ("A", "B")):
        assert stored["counts"] == direct.groups[label].counts.tolist()
        assert stored["median"] == pytest.approx(direct.groups[label].median, abs=TOL)
    assert result["overall"]["n"] == direct.overall.n


def test_pools_equal_the_pure_function_with_the_models_access_and_sizes(mixed):
    result = executed("pools", mixed).result
    access = access_pools(["open-weight", "open-weight", "open-weight", "proprietary", "proprietary", None,
                           "open-weight"])
    sizes = size_pools(MIXED_SIZES, thresholds=(10, 70))
    masks = {**access.masks, **{f"size {k}": v for k, v in sizes.masks.items()}}
    direct = pool_analysis(MIXED, masks)
    stored = {p["name"]: p for p in result["pools"]}
    assert list(stored) == ["whole", "open-weight", "proprietary", "size small", "size medium", "size large"]
    assert stored["open-weight"]["models"] == ["mixed-m0", "mixed-m1", "mixed-m2", "mixed-m6"]
    assert stored["size large"]["models"] == ["mixed-m1"]  # 70B is large (>= 70), 34B medium
    assert stored["size large"]["undefined_reason"] == direct.pools["size large"].undefined_reason
    for name in ("open-weight", "proprietary"):
        for m in ("spearman", "pearson", "kendall"):
            assert stored[name]["correlations"][m]["value"] == pytest.approx(
                direct.pools[name].correlations[m].value, abs=TOL)
    assert result["unknown_access"] == ["mixed-m5"]
    assert result["unknown_size"] == ["mixed-m3", "mixed-m4"]


def test_efficiency_times_eip_and_skips_irt_when_asked(mixed):
    result = executed("efficiency", mixed, repeats=2, skip_irt=True).result
    rows = {r["method"]: r for r in result["methods"]}
    assert list(rows) == ["eip", "irt_1pl", "irt_2pl", "irt_mirt"]
    assert len(rows["eip"]["seconds"]) == 2 and rows["eip"]["median_seconds"] > 0
    assert rows["eip"]["n_iter"] == eip(MIXED).n_iter
    assert rows["irt_2pl"]["skipped"] == "not run (the IRT fits were switched off for this analysis)"
    assert rows["irt_2pl"]["seconds"] == []


def test_scaling_rows_match_matrices_drawn_with_the_same_generator():
    result = executed("scaling", grid="tiny", repeats=1, seed=3).result
    gen = np.random.default_rng(3)
    for row, (q, m) in zip(result["rows"], params_module.SCALING_GRIDS["tiny"]):
        R = simulate_responses(q, m, rng=gen).R
        assert (row["n_questions"], row["n_models"]) == (q, m)
        assert row["density"] == pytest.approx(float(R.mean()), abs=TOL)
        assert row["n_iter"] == eip(R).n_iter
        assert row["seconds_per_iter"] == pytest.approx(row["median_seconds"] / row["n_iter"], rel=1e-12)


def test_case_study_equals_the_pure_functions():
    result = executed("case_study", seed=4, n_seeds=3, skip_irt=True).result
    draw = simulate_case_study(4)
    methods = ("accuracy", "weighted_accuracy", "eip")
    single = case_study_rankings(draw.R, draw.groups, draw.datasets, include_mirt=False, methods=methods, rng=4)
    assert [m["ranking"] for m in result["single"]["methods"]] == [
        [list(g) for g in single.methods[m].ranking] for m in methods]
    recovery = case_study_recovery(3, rng=4, include_mirt=False, methods=methods)
    for stored in result["recovery"]["methods"]:
        direct = recovery.methods[stored["method"]]
        assert stored["share_full_order"] == direct.share_full_order
        assert stored["share_pairs"]["M4>M5"] == direct.share_pairs[("M4", "M5")]
    assert result["skipped"] == ["irt_1pl", "irt_2pl", "irt_mirt"]
    # accuracy always ties M1/M2 and M4/M5 (equal totals by construction)
    assert result["single"]["methods"][0]["ranking"] == [["M1", "M2"], ["M4", "M5"], ["M3"]]


# --- status transitions ----------------------------------------------------------------------


def test_a_run_goes_queued_running_done(mixed):
    run = service.analysis_run_create(kind="profiles", response_set=mixed, params={"group_by": "subject"})
    assert (run.status, run.progress, run.result) == (RunStatus.QUEUED, 0.0, None)
    seen = []

    def progress(fraction, message):
        seen.append((AnalysisRun.objects.get(pk=run.pk).status, fraction, message))

    run = service.analysis_run_execute(run=run, progress=progress)
    assert seen[0][0] == RunStatus.RUNNING
    assert seen[-1][1:] == (1.0, "done")
    assert {s for s, _, _ in seen[:-1]} == {RunStatus.RUNNING}
    run.refresh_from_db()
    assert (run.status, run.progress, run.message, run.error) == (RunStatus.DONE, 1.0, "done", "")
    assert run.finished_at is not None and run.started_at <= run.finished_at and run.duration_s > 0
    assert run.result["group_by"] == "subject"


def test_a_failing_run_keeps_its_error_and_no_result():
    # One subject only: leave-one-subject-out needs at least 2 groups.
    rs = load_matrix(guttman(3, [1, 2, 1, 0]), name="onesubject", datasets=["d"] * 4, subjects=["s"] * 4)
    run = service.analysis_run_create(kind="dataset_robustness", response_set=rs, params={"group_by": "subject"})
    with pytest.raises(ValueError, match="groups must hold at least 2 distinct datasets"):
        service.analysis_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error.startswith(
        "The run stopped while computing the analysis: groups must hold at least 2 distinct datasets")
    assert run.result is None and run.finished_at is not None


def test_only_a_queued_run_can_be_executed(mixed):
    run = executed("profiles", mixed)
    with pytest.raises(ValueError) as info:
        service.analysis_run_execute(run=run)
    assert str(info.value) == runs_module.ERR_NOT_QUEUED.format(run_id=run.pk, status="done")


def test_enqueue_runs_it_with_the_immediate_backend(mixed):
    run = service.analysis_run_create(kind="rank_changes", response_set=mixed)
    with override_settings(TASKS=IMMEDIATE):
        result = service.analysis_run_enqueue(run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert result.return_value == {"analysis_id": run.pk, "status": "done"}


def test_start_reuses_a_queued_run_with_the_same_parameters(mixed):
    with override_settings(TASKS=DATABASE):
        first, created = service.analysis_run_start(kind="pools", response_set=mixed, params={"alpha": 0.85})
        again, created_again = service.analysis_run_start(kind="pools", response_set=mixed, params={})
        other, created_other = service.analysis_run_start(kind="pools", response_set=mixed, params={"alpha": 0.5})
    assert (created, created_again, created_other) == (True, False, True)
    assert again.pk == first.pk and other.pk != first.pk
    assert first.status == RunStatus.QUEUED


def test_latest_finds_the_done_run_with_the_same_parameters(mixed):
    old = executed("profiles", mixed, bins=10)
    new = executed("profiles", mixed, bins=10)
    executed("profiles", mixed, bins=12)
    found = service.analysis_run_latest(kind="profiles", response_set=mixed, params={"bins": 10, "alpha": 0.85})
    assert found.pk == new.pk != old.pk
    assert service.analysis_run_latest(kind="profiles", response_set=mixed, params={"bins": 11}) is None
    assert service.analysis_run_latest(kind="scaling") is None


# --- parameter checks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "nope"}, params_module.ERR_KIND.format(kinds=list(params_module.AnalysisKind.values),
                                                          value="nope")),
        ({"kind": "pools"}, runs_module.ERR_RESPONSE_SET_NEEDED.format(kind="pools", value=None)),
        ({"kind": "pools", "params": {"trials": 3}},
         runs_module.ERR_RESPONSE_SET_NEEDED.format(kind="pools", value=None)),
        ({"kind": "case_study", "params": {"trials": 3}},
         params_module.ERR_UNKNOWN.format(keys=["trials"], kind="case_study",
                                          known=["alpha", "mirt_epochs", "n_seeds", "seed", "skip_irt"])),
        ({"kind": "case_study", "params": {"n_seeds": 0}},
         params_module.ERR_INT.format(name="n_seeds", low=1, high=" and <= 100000", value=0)),
        ({"kind": "case_study", "params": {"alpha": 1.0}}, params_module.ERR_ALPHA.format(value=1.0)),
        ({"kind": "case_study", "params": {"skip_irt": "yes"}},
         params_module.ERR_BOOL.format(name="skip_irt", value="yes")),
        ({"kind": "scaling", "params": {"grid": "huge"}},
         params_module.ERR_CHOICE.format(name="grid", choices=["tiny", "small", "paper"], value="huge")),
        ({"kind": "scaling", "params": "x"}, params_module.ERR_PARAMS.format(value="x")),
    ],
)
def test_it_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError) as info:
        service.analysis_run_create(**kwargs)
    assert str(info.value) == message
    assert not AnalysisRun.objects.exists()


def test_it_refuses_a_response_set_for_a_simulation_and_a_bad_group_by(mixed):
    with pytest.raises(ValueError) as info:
        service.analysis_run_create(kind="scaling", response_set=mixed)
    assert str(info.value) == runs_module.ERR_RESPONSE_SET_UNUSED.format(kind="scaling", value=mixed)
    with pytest.raises(ValueError) as info:
        service.analysis_run_create(kind="profiles", response_set=mixed, params={"group_by": "metadata:"})
    assert str(info.value) == params_module.ERR_GROUP_BY.format(value="metadata:")


def test_it_stores_every_parameter_with_defaults_and_a_key_that_ignores_their_order(mixed):
    a = service.analysis_run_create(kind="model_robustness", response_set=mixed, params={"trials": 5})
    b = service.analysis_run_create(kind="model_robustness", response_set=mixed,
                                    params={"seed": 0, "k_max": 15, "trials": 5, "alpha": 0.85})
    assert a.params == {"alpha": 0.85, "k_max": 15, "seed": 0, "trials": 5}
    assert a.params_key == b.params_key


# --- files --------------------------------------------------------------------------------------


def _read(content: bytes) -> pd.DataFrame:
    """A downloaded CSV, read as is."""
    return pd.read_csv(io.BytesIO(content))


def test_each_table_is_a_tidy_csv_and_the_json_parses_back(mixed):
    run = executed("model_robustness", mixed, k_max=2, trials=3)
    removal = _read(service.analysis_csv(kind=run.kind, result=run.result))  # the main table
    assert list(removal.columns) == ["removal", "k", "trials", "difficulty_rho_mean", "difficulty_rho_std",
                                     "competency_rho_mean", "competency_rho_std", "filter_changes_mean",
                                     "filter_changes_max", "seconds_mean", "failed"]
    assert removal["removal"].tolist() == ["random", "random", "leave one out"]
    assert removal["k"].dtype == np.int64 and removal["k"].tolist() == [1, 2, 1]
    expected = [x["difficulty_rho"]["mean"] for x in run.result["removal"]]
    expected.append(run.result["leave_one_out"]["difficulty_rho"]["mean"])
    assert removal["difficulty_rho_mean"].tolist() == expected
    loo = _read(service.analysis_csv(kind=run.kind, result=run.result, table="leave_one_out"))
    assert list(loo.columns) == ["removed_model", "difficulty_rho", "competency_rho", "filter_changes", "error"]
    assert loo["removed_model"].tolist() == [t["model"] for t in run.result["leave_one_out"]["trials"]]
    assert loo["filter_changes"].tolist() == [t["n_filter_changes"] for t in run.result["leave_one_out"]["trials"]]
    assert loo["error"].isna().all()
    with pytest.raises(KeyError, match=r"analysis 'model_robustness' has no table 'nope'; its tables: "
                                       r"\['removal', 'leave_one_out'\]"):
        service.analysis_csv(kind=run.kind, result=run.result, table="nope")
    document = json.loads(service.analysis_json(kind=run.kind, params=run.params, result=run.result,
                                                response_set=str(mixed)))
    assert document == {"kind": "model_robustness", "response_set": "mixed v1", "params": run.params,
                        "result": run.result}


def test_the_zip_holds_every_table_the_codebook_and_the_result(mixed):
    run = executed("rank_changes", mixed)
    about = {"kind": run.kind, "params": run.params, "result": run.result, "response_set": str(mixed)}
    archive = zipfile.ZipFile(io.BytesIO(service.analysis_zip(**about, run_id=run.pk)))
    assert archive.namelist() == ["models.csv", "rank_changes.csv", "windows.csv", "families.csv", "codebook.md",
                                  "result.json"]
    assert json.loads(archive.read("result.json"))["result"] == run.result
    models = _read(archive.read("models.csv"))
    assert models["model"].tolist() == [m["name"] for m in run.result["models"]]
    assert models["accuracy"].tolist() == [m["accuracy"] for m in run.result["models"]]
    assert models["rank_change_eip_higher"].tolist() == [m["rank_change"] for m in run.result["models"]]
    windows = _read(archive.read("windows.csv"))
    blocks = [(w["window"], b) for w in run.result["windows"] for b in w["blocks"]]
    assert windows["first_accuracy_rank"].dtype == np.int64
    assert windows[["window", "first_accuracy_rank", "last_accuracy_rank"]].values.tolist() == [
        [w, b["first"], b["last"]] for w, b in blocks]
    for name in archive.namelist():
        if name.endswith(".csv"):
            assert b"note:" not in archive.read(name) and not archive.read(name).startswith(b"\xef\xbb\xbf")
    codebook = archive.read("codebook.md").decode()
    assert codebook.startswith(f"# Codebook: {service.kind_label(run.kind)}, analysis run {run.pk}\n")
    assert f"- product: eip-annotate {product_version()}" in codebook and "- response set: mixed v1" in codebook
    for key, value in run.params.items():
        assert f"- {key}: {value}" in codebook
    assert "## `windows.csv`: Displacement within accuracy windows (figure 13)" in codebook
    assert "| `first_accuracy_rank` | integer | first accuracy rank |  |" in codebook
    assert "| `accuracy` | number | accuracy | fraction, in [0, 1] |" in codebook
    assert "- Kendall tau (EIP vs accuracy) " in codebook  # a note: in the codebook, not in the CSV


def test_the_pool_members_are_one_row_per_pool_and_model(mixed):
    run = executed("pools", mixed)
    members = _read(service.analysis_csv(kind=run.kind, result=run.result, table="members"))
    assert list(members.columns) == ["pool", "model"]
    assert members.values.tolist() == [[p["name"], m] for p in run.result["pools"] for m in p["models"]]


def test_the_plots_render_as_png_and_svg_for_every_kind(mixed, tmp_path):
    runs = [executed(k, mixed) for k in ("rank_changes", "profiles", "pools", "dataset_robustness")]
    runs.append(executed("case_study", n_seeds=2, skip_irt=True))
    runs.append(executed("scaling", grid="tiny", repeats=1))
    runs.append(executed("efficiency", mixed, repeats=1, skip_irt=True))
    runs.append(executed("model_robustness", mixed, k_max=2, trials=2))
    # human_labels compares a scoring run with a label: tests/annotate/test_human_labels.py writes its files
    assert sorted(r.kind for r in runs) == sorted(k for k in params_module.AnalysisKind.values if k != "human_labels")
    for run in runs:
        files = service.write_analysis_files(run=run, out_dir=tmp_path / run.kind)
        tables = [f"{t.key}.csv" for t in service.analysis_tables(kind=run.kind, result=run.result)]
        assert [f.name for f in files] == ["result.json", *tables, "codebook.md", "plot.png", "plot.svg"]
        assert files[-2].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        assert b"<svg" in files[-1].read_bytes()[:2000]
        for path in files[1:-3]:  # every table reads back with one header row of snake_case names
            frame = pd.read_csv(path)
            assert all(re.fullmatch(r"[a-z0-9_]+", c) for c in frame.columns), (run.kind, path.name)
        assert service.analysis_headlines(kind=run.kind, result=run.result)


def test_it_refuses_an_unknown_plot_format(mixed):
    run = executed("profiles", mixed)
    with pytest.raises(ValueError, match=r"fmt must be one of \['png', 'svg'\]; got 'gif'"):
        service.analysis_plot(kind=run.kind, result=run.result, fmt="gif")
