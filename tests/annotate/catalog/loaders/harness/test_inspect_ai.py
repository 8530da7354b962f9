"""Inspect AI logs: the real arc_easy .json logs, generated .eval zips (deflate
and Zstandard members) and .json logs with epochs, scorers and bad values."""
from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.harness import _common, inspect_ai, parse_harness_logs
from tests.annotate.harness_fixtures import (
    INSPECT_MODELS,
    matrix,
    write_inspect_logs,
    write_inspect_run,
    write_zip,
)

QWEN = "ollama/qwen2.5:0.5b"
SONNET = "anthropic/claude-sonnet-4-0"
ARC = "inspect_evals/arc_easy"


@pytest.fixture
def real_inspect(shared_data):
    return shared_data / "harness-formats" / "inspect"


@pytest.fixture
def generated(tmp_path):
    return write_inspect_logs(tmp_path, np.random.default_rng(20))


# ------------------------------------------------------------ the real arc_easy logs

def test_it_reads_the_real_arc_easy_verdicts_of_both_models(real_inspect):
    parsed = parse_harness_logs(real_inspect)
    # samples[i].scores.choice.value read by hand: qwen C, I, I (ids 1-3);
    # sonnet C, C, C, C, C (ids 1-5). C -> 1, I -> 0.
    assert matrix(parsed) == {
        (ARC, f"{ARC}/1", QWEN): 1.0, (ARC, f"{ARC}/2", QWEN): 0.0, (ARC, f"{ARC}/3", QWEN): 0.0,
        **{(ARC, f"{ARC}/{i}", SONNET): 1.0 for i in range(1, 6)},
    }
    assert parsed.file_format == "inspect"
    assert list(parsed.models["name"]) == [QWEN, SONNET]
    assert parsed.options["metrics_used"] == {ARC: "choice"}
    assert parsed.notes == []


def test_it_takes_question_text_choices_and_target_from_the_real_samples(real_inspect):
    q = parse_harness_logs(real_inspect).questions.set_index("external_id")
    assert list(q.index) == [f"{ARC}/{i}" for i in range(1, 6)]
    assert q.loc[f"{ARC}/2", "text"] == (
        "Which piece of safety equipment is used to keep mold spores from entering the respiratory system?")
    assert q.loc[f"{ARC}/2", "options"] == ["safety goggles", "breathing mask", "rubber gloves", "lead apron"]
    assert q.loc[f"{ARC}/2", "reference_answer"] == "B"
    assert q.loc[f"{ARC}/4", "text"] == "Which characteristic describes the texture of a kitten's fur?"
    assert q.loc[f"{ARC}/4", "reference_answer"] == "D"
    assert q.loc[f"{ARC}/1", "metadata"]["source_dataset"] == "allenai/ai2_arc"


# ------------------------------------------------------------ generated logs

def test_it_round_trips_eval_zips_with_and_without_zstd_and_json_logs(generated):
    parsed = parse_harness_logs(generated.root)
    assert matrix(parsed) == pytest.approx(generated.expected, abs=1e-12)
    assert sorted(parsed.models["name"]) == sorted(INSPECT_MODELS)
    kinds = sorted(p.suffix for p in parsed.source_files)
    assert kinds == [".eval"] * 4 + [".json"] * 2


def test_the_zstd_logs_really_hold_members_python_zipfile_cannot_read(generated):
    zstd_log = next(p for p in generated.root.glob("*.eval") if "claude" in p.name)
    with zipfile.ZipFile(zstd_log) as zf:
        sample = next(i for i in zf.infolist() if i.filename.startswith("samples/"))
        assert sample.compress_type == inspect_ai.ZIP_ZSTANDARD
        with pytest.raises(NotImplementedError):
            zf.read(sample)
        assert json.loads(inspect_ai.read_zip_member(zstd_log, zf, sample))["epoch"] >= 1


def test_it_averages_epochs_into_partial_credit_and_says_so(generated):
    parsed = parse_harness_logs(generated.root)
    math_cells = {k: v for k, v in matrix(parsed).items() if k[0] == "mini_math"}
    assert len(math_cells) == 4 * 3
    # Each cell is the mean of three letters from {C, I, P}: a multiple of 1/6.
    assert all(abs(v * 6 - round(v * 6)) < 1e-9 for v in math_cells.values())
    assert "12 of 27 responses had several samples (epochs or repeats, up to 3 per cell); " \
           "their mean was used as partial credit" in parsed.notes


def test_it_uses_each_tasks_first_scorer_and_notes_the_choice(generated):
    parsed = parse_harness_logs(generated.root)
    assert parsed.options["metrics_used"] == {"mini_arc": "choice", "mini_math": "match"}
    assert any("'mini_math' has several scorers (match, judge); used 'match'" in n for n in parsed.notes)


def test_it_reads_the_chosen_scorer(generated):
    math_logs = sorted(generated.root.glob("*mini_math*"))
    parsed = parse_harness_logs(math_logs, metric="judge")
    assert matrix(parsed) == pytest.approx(generated.extra["judge"], abs=1e-12)


def test_it_takes_the_last_user_message_as_the_question(generated):
    q = parse_harness_logs(generated.root).questions.set_index("external_id")
    assert q.loc["mini_math/m-3", "text"] == generated.texts[("mini_math", "mini_math/m-3")]
    assert q.loc["mini_math/m-3", "reference_answer"] == "42 | forty-two"
    assert q.loc["mini_arc/5", "options"] == ["alpha", "beta", "gamma"]


def test_it_refuses_a_scorer_a_task_does_not_have(generated):
    with pytest.raises(LoadError) as err:
        parse_harness_logs(generated.root, metric="judge")
    first = err.value.problems[0]
    assert first.message == inspect_ai.NO_SCORER.format(scorer="judge", available=["choice"])


# ------------------------------------------------------------ values that are not scores

def _log(samples, model="m/x", task="t"):
    return {"version": 2, "status": "success", "eval": {"task": task, "model": model, "scorers": [{"name": "s"}]},
            "samples": samples}


def _sample(sid, value):
    return {"id": sid, "epoch": 1, "input": f"q{sid}", "target": "A", "scores": {"s": {"value": value}}}


def test_it_refuses_bad_values_naming_the_file_and_json_path(tmp_path):
    values = ["C", "X", {"a": 1}, [1, 0], None, "P", 2]
    (tmp_path / "log.json").write_text(json.dumps(_log([_sample(i, v) for i, v in enumerate(values)])))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path / "log.json")
    assert err.value.problems == [
        Problem("log.json", _common.LETTER_NOT_A_SCORE.format(value="X"), None, "samples[1].scores.s.value"),
        Problem("log.json", _common.DICT_NOT_A_SCORE.format(value='{"a": 1}'), None, "samples[2].scores.s.value"),
        Problem("log.json", _common.LIST_NOT_A_SCORE.format(value="[1, 0]"), None, "samples[3].scores.s.value"),
        Problem("log.json", _common.NULL_NOT_A_SCORE, None, "samples[4].scores.s.value"),
        Problem("log.json", _common.OUT_OF_RANGE.format(value=2), None, "samples[6].scores.s.value"),
    ]


def test_it_names_the_zip_member_of_a_bad_value_in_an_eval_log(tmp_path):
    header = {k: v for k, v in _log([]).items() if k != "samples"}
    write_zip(tmp_path / "run.eval", [
        ("header.json", json.dumps(header).encode(), 8),
        ("samples/1_epoch_1.json", json.dumps(_sample(1, "N")).encode(), 93),
        ("samples/2_epoch_1.json", json.dumps(_sample(2, "maybe")).encode(), 93),
    ])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path / "run.eval")
    assert err.value.problems == [Problem("run.eval::samples/2_epoch_1.json",
                                          _common.LETTER_NOT_A_SCORE.format(value="maybe"), None, "scores.s.value")]


def test_it_counts_letters_n_and_p_as_zero_and_a_half(tmp_path):
    header = {k: v for k, v in _log([]).items() if k != "samples"}
    write_zip(tmp_path / "run.eval", [
        ("header.json", json.dumps(header).encode(), 0),
        *[(f"samples/{i}_epoch_1.json", json.dumps(_sample(i, v)).encode(), 93)
          for i, v in enumerate(["N", "P", "I", "C", 0.25, True])],
    ])
    parsed = parse_harness_logs(tmp_path / "run.eval")
    assert list(parsed.responses["credit"]) == [0.0, 0.5, 0.0, 1.0, 0.25, 1.0]


def test_it_refuses_a_zstd_member_whose_crc_does_not_match(tmp_path):
    header = {k: v for k, v in _log([]).items() if k != "samples"}
    path = tmp_path / "run.eval"
    write_zip(path, [("header.json", json.dumps(header).encode(), 8),
                     ("samples/1_epoch_1.json", json.dumps(_sample(1, "C")).encode(), 93)])
    raw = bytearray(path.read_bytes())
    # Corrupt the CRC-32 (offset 16) of the second central directory entry, the sample's.
    cd = raw.index(b"PK\x01\x02", raw.index(b"PK\x01\x02") + 1)
    raw[cd + 16] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(path)
    assert err.value.problems[0].file == "run.eval::samples/1_epoch_1.json"
    assert "CRC-32" in err.value.problems[0].message


def test_it_skips_unscored_samples_when_asked(tmp_path):
    samples = [_sample(1, "C"), {"id": 2, "epoch": 1, "input": "q2", "scores": {}}, _sample(3, None)]
    (tmp_path / "log.json").write_text(json.dumps(_log(samples)))
    parsed = parse_harness_logs(tmp_path, skip_invalid=True)
    assert matrix(parsed) == {("t", "t/1", "m/x"): 1.0}
    assert "2 values that are not scores were skipped (no score: 1, null: 1)" in parsed.notes


# ------------------------------------------------------------ one record per (model, task, sample, epoch)

def test_a_retried_log_counts_copied_samples_once_and_errored_or_unfinished_ones_never(tmp_path):
    # The cancelled run finished 1/e1, 1/e2 and 2/e1; 2/e2 never got a score.
    write_inspect_run(tmp_path / "a_cancelled.json", model="m/x", task="t", status="cancelled",
                      created="2025-05-01T10:00:00+00:00",
                      samples=[(1, 1, "C", None), (1, 2, "I", None), (2, 1, "C", None), (2, 2, None, None)])
    # `inspect eval-retry` copies the finished samples and runs the rest; 3/e1 errors.
    write_inspect_run(tmp_path / "b_retry.json", model="m/x", task="t", created="2025-05-01T11:00:00+00:00",
                      samples=[(1, 1, "C", None), (1, 2, "I", None), (2, 1, "C", None), (2, 2, "P", None),
                               (3, 1, "C", "RuntimeError: sandbox died"), (3, 2, "I", None)])
    parsed = parse_harness_logs(tmp_path)
    # Sample 1: epochs C, I -> (1 + 0) / 2 = 0.5.
    # Sample 2: epochs C, P -> (1 + 0.5) / 2 = 0.75 (counting the copy of epoch 1 would give 2.5 / 3).
    # Sample 3: epoch 1 errored, so only epoch 2's I counts: 0.0 (not (1 + 0) / 2 = 0.5).
    assert matrix(parsed) == {("t", "t/1", "m/x"): 0.5, ("t", "t/2", "m/x"): 0.75, ("t", "t/3", "m/x"): 0.0}
    assert ("3 records repeated a sample already read with the same score (a repeated line or a second run); "
            "each sample was counted once") in parsed.notes
    assert ("2 samples that did not finish were not counted (errored: 1, unscored in a cancelled log: 1)"
            in parsed.notes)
    assert "2 of 3 responses had several samples (epochs or repeats, up to 2 per cell); " \
           "their mean was used as partial credit" in parsed.notes


def _conflicting_retry(tmp_path, *, created=("2025-05-01T10:00:00+00:00", "2025-05-01T11:00:00+00:00")):
    # The older log is named so that it is read last.
    write_inspect_run(tmp_path / "b_first.json", model="m/x", task="t", status="error", created=created[0],
                      samples=[(1, 1, "C", None), (2, 1, "I", None)])
    write_inspect_run(tmp_path / "a_retry.json", model="m/x", task="t", created=created[1],
                      samples=[(1, 1, "C", None), (2, 1, "C", None), (2, 2, "C", None)])


def test_it_refuses_a_sample_epoch_logged_twice_with_another_score_naming_both(tmp_path):
    _conflicting_retry(tmp_path)
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    assert err.value.problems == [Problem("b_first.json", _common.CONFLICTING_RECORDS.format(
        what="sample 't/2' of model 'm/x' (epoch 1)", first_credit=1.0, first="a_retry.json, column 'samples[1]'",
        credit=0.0), None, "samples[1]")]


def test_the_newest_run_option_keeps_the_later_logs_epoch(tmp_path):
    _conflicting_retry(tmp_path)
    parsed = parse_harness_logs(tmp_path, duplicates="newest")
    # Sample 2: epoch 1 from the retry (C, replacing I) and epoch 2 (C): (1 + 1) / 2 = 1.0.
    assert matrix(parsed) == {("t", "t/1", "m/x"): 1.0, ("t", "t/2", "m/x"): 1.0}


def test_the_newest_run_option_refuses_logs_that_give_no_time(tmp_path):
    _conflicting_retry(tmp_path, created=(None, None))
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path, duplicates="newest")
    assert [p.message for p in err.value.problems] == [_common.NO_RUN_TIME.format(
        what="sample 't/2' of model 'm/x' (epoch 1)", first_credit=1.0, first="a_retry.json, column 'samples[1]'",
        credit=0.0)]


def test_it_names_the_zip_members_of_a_sample_repeated_across_eval_logs(tmp_path):
    write_inspect_run(tmp_path / "a.eval", model="m/x", task="t", samples=[(7, 1, "C", None), (7, 2, "C", None)])
    write_inspect_run(tmp_path / "b.eval", model="m/x", task="t", samples=[(7, 2, "I", None)])
    with pytest.raises(LoadError) as err:
        parse_harness_logs(tmp_path)
    assert err.value.problems == [Problem("b.eval::samples/7_epoch_2.json", _common.CONFLICTING_RECORDS.format(
        what="sample 't/7' of model 'm/x' (epoch 2)", first_credit=1.0, first="a.eval::samples/7_epoch_2.json",
        credit=0.0))]


def test_an_unfinished_eval_without_header_counts_only_its_scored_samples(tmp_path):
    start = {"version": 2, "eval": {"task": "t", "model": "m/x", "scorers": [{"name": "s"}],
                                    "created": "2025-05-01T10:00:00+00:00"}}
    unscored = {"id": 2, "epoch": 1, "input": "q2", "target": "A"}
    write_zip(tmp_path / "run.eval", [
        ("_journal/start.json", json.dumps(start).encode(), 8),
        ("samples/1_epoch_1.json", json.dumps(_sample(1, "P")).encode(), 8),
        ("samples/2_epoch_1.json", json.dumps(unscored).encode(), 8),
    ])
    parsed = parse_harness_logs(tmp_path / "run.eval")
    assert matrix(parsed) == {("t", "t/1", "m/x"): 0.5}
    assert parsed.notes == [
        "run.eval has status 'started': only the samples it holds were read",
        "1 sample that did not finish was not counted (unscored in a started log: 1)",
    ]
