"""Inspect AI logs: the real arc_easy .json logs, generated .eval zips (deflate
and Zstandard members) and .json logs with epochs, scorers and bad values."""
from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from annotate.loaders.base import LoadError, Problem
from annotate.loaders.harness import _common, inspect_ai, parse_harness_logs
from tests.annotate.harness_fixtures import (
    INSPECT_MODELS,
    matrix,
    write_inspect_logs,
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
