"""The built-in demo response set (annotate/demo): files, questions, simulation.

Plain pytest, no database. The committed CSVs are read with the csv module, not
through the generator, so the checks on them do not trust the code that wrote
them.
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import spearmanr

from annotate.demo import generate

DEMO_DIR = Path(generate.__file__).resolve().parent
SUBJECTS = {"math", "physics", "biology", "computer science", "history"}


def _read(name: str) -> list[dict[str, str]]:
    with open(DEMO_DIR / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def questions() -> list[dict[str, str]]:
    return _read("questions.csv")


@pytest.fixture(scope="module")
def models() -> list[dict[str, str]]:
    return _read("models.csv")


@pytest.fixture(scope="module")
def responses() -> tuple[list[str], list[str], np.ndarray]:
    """(question ids, model names, float matrix (n_questions, n_models) with NaN = blank)."""
    with open(DEMO_DIR / "responses_binary.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    values = {"1": 1.0, "0": 0.0, "": math.nan}
    matrix = np.array([[values[c] for c in row[1:]] for row in body])
    return [row[0] for row in body], header[1:], matrix


@pytest.fixture(scope="module")
def question_accuracy(questions, responses) -> dict[str, float]:
    ids, _, matrix = responses
    assert ids == [q["question_id"] for q in questions]
    return dict(zip(ids, np.nanmean(matrix, axis=1)))


# --- files -----------------------------------------------------------------

def test_it_regenerates_the_committed_files_byte_for_byte():
    rendered = generate.render_files()
    for name in ("questions.csv", "responses_binary.csv", "models.csv"):
        assert rendered[name] == (DEMO_DIR / name).read_bytes(), (
            f"{name} is stale; run python -m annotate.demo.generate"
        )


def test_it_check_flag_passes_on_fresh_files_and_fails_on_a_changed_one(tmp_path, capsys):
    assert generate.main(["--dir", str(tmp_path)]) == 0
    assert generate.main(["--check", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "models.csv"
    path.write_bytes(path.read_bytes().replace(b"Lumen-Ultra", b"Lumen-Ultra2"))
    assert generate.main(["--check", "--dir", str(tmp_path)]) == 1
    assert "models.csv" in capsys.readouterr().err
    (tmp_path / "questions.csv").unlink()
    assert generate.main(["--check", "--dir", str(tmp_path)]) == 1


def test_it_writes_utf8_without_bom_and_with_lf_line_endings():
    for name in ("questions.csv", "responses_binary.csv", "models.csv"):
        raw = (DEMO_DIR / name).read_bytes()
        assert not raw.startswith(b"\xef\xbb\xbf")
        assert b"\r" not in raw
        assert raw.endswith(b"\n")
        raw.decode("utf-8")


def test_it_uses_the_column_names_of_the_mmlu_pro_folder(shared_data, questions, models):
    with open(shared_data / "mmlu-pro" / "questions.csv", encoding="utf-8", newline="") as fh:
        pro_questions = next(csv.reader(fh))
    with open(shared_data / "mmlu-pro" / "models.csv", encoding="utf-8", newline="") as fh:
        pro_models = next(csv.reader(fh))
    with open(shared_data / "mmlu-pro" / "responses_binary.csv", encoding="utf-8", newline="") as fh:
        pro_responses = next(csv.reader(fh))
    demo_only = set(questions[0]) - set(pro_questions)
    assert demo_only == {"level"}
    assert {"model", "params_b_from_name"} <= set(pro_models) & set(models[0])
    assert pro_responses[0] == "question_id"


# --- questions -------------------------------------------------------------

def test_it_has_120_questions_8_per_level_in_each_of_5_subjects(questions):
    assert len(questions) == 120
    assert len({q["question_id"] for q in questions}) == 120
    assert Counter(q["category"] for q in questions) == dict.fromkeys(SUBJECTS, 24)
    assert Counter((q["category"], q["level"]) for q in questions) == {
        (s, level): 8 for s in SUBJECTS for level in ("1", "2", "3")
    }
    assert {q["source_dataset"] for q in questions} == {"EIP-demo"}


def test_it_gives_every_question_four_distinct_options_and_a_matching_answer(questions):
    for q in questions:
        options = json.loads(q["options_json"])
        assert len(options) == 4 and len(set(options)) == 4, q["question_id"]
        assert all(isinstance(o, str) and o.strip() for o in options), q["question_id"]
        assert q["answer"] in "ABCD" and len(q["answer"]) == 1, q["question_id"]
        assert int(q["answer_index"]) == "ABCD".index(q["answer"]), q["question_id"]


def test_it_spreads_the_correct_letter_evenly(questions):
    # 120 questions / 4 letters = 30 each, so position gives nothing away.
    assert Counter(q["answer"] for q in questions) == {"A": 30, "B": 30, "C": 30, "D": 30}


def test_it_has_no_duplicate_question_text(questions):
    texts = [" ".join(q["question"].lower().split()) for q in questions]
    assert len(set(texts)) == len(texts)


@pytest.mark.parametrize(
    ("question_id", "correct"),
    [
        # Hand-worked answers, one per subject and level 3, checked against the file.
        ("117", "686"),        # 999 - (199 + 142 - 28) = 686
        ("118", "9"),          # 7^6 = -1 (mod 13), so 7^12 = 1; 7^100 = 7^4 = 2401 = 13*184 + 9
        ("224", "100 nm"),     # one phase flip (air/oil only): 2 n t = lambda/2 -> t = 600/(4*1.5)
        ("321", "−89 mV"),     # 26.7 mV * ln(5/140) = 26.7 * -3.33 = -89
        ("422", "22"),         # 32 - log2(16) - log2(64) = 32 - 4 - 6
        ("424", "7"),          # ceil(log2 5!) = ceil(6.9) = 7, reached by Ford-Johnson
    ],
)
def test_it_marks_the_hand_checked_answer_as_correct(questions, question_id, correct):
    q = next(q for q in questions if q["question_id"] == question_id)
    assert json.loads(q["options_json"])[int(q["answer_index"])] == correct


# --- models ----------------------------------------------------------------

def test_it_has_a_mixed_pool_of_24_models_in_the_response_column_order(models, responses):
    _, names, _ = responses
    assert [m["model"] for m in models] == names
    assert len(names) == 24
    sizes = [float(m["params_b_from_name"]) for m in models if m["params_b_from_name"]]
    assert min(sizes) == 0.5 and max(sizes) == 405
    assert {m["access"] for m in models} == {"open_weight", "proprietary"}
    assert any(m["access"] == "proprietary" and not m["params_b_from_name"] for m in models)
    family_sizes = Counter(m["family"] for m in models if m["params_b_from_name"])
    assert sum(3 <= n <= 4 for n in family_sizes.values()) >= 4


# --- the simulated responses ----------------------------------------------

def test_it_leaves_blank_only_the_skipping_models_10_percent(responses):
    _, names, matrix = responses
    blanks = np.isnan(matrix)
    assert blanks.sum() == 12  # 10% of 120
    assert blanks[:, names.index("Heron-180B")].sum() == 12


def test_accuracy_falls_with_human_level_within_every_subject(questions, question_accuracy):
    for subject in SUBJECTS:
        by_level = [
            np.mean([question_accuracy[q["question_id"]] for q in questions
                     if q["category"] == subject and q["level"] == level])
            for level in ("1", "2", "3")
        ]
        assert by_level[0] > by_level[1] > by_level[2], (subject, by_level)


def test_accuracy_rises_with_model_size(models, responses):
    _, names, matrix = responses
    accuracy = dict(zip(names, np.nanmean(matrix, axis=0)))
    sized = [m for m in models if m["params_b_from_name"]]
    rho = spearmanr([math.log10(float(m["params_b_from_name"])) for m in sized],
                    [accuracy[m["model"]] for m in sized]).statistic
    assert rho > 0.7
    for family in {m["family"] for m in sized}:
        members = [m for m in sized if m["family"] == family]
        if len(members) >= 2:
            rho = spearmanr([float(m["params_b_from_name"]) for m in members],
                            [accuracy[m["model"]] for m in members]).statistic
            assert rho > 0, family


def test_at_least_90_percent_of_questions_are_neither_all_solved_nor_all_failed(question_accuracy):
    acc = np.array(list(question_accuracy.values()))
    degenerate = (acc == 0) | (acc == 1)
    assert (~degenerate).sum() >= 108  # 90% of 120
    assert (acc == 1).any() and (acc == 0).any()
    # The pinned questions are degenerate whatever the draw.
    assert question_accuracy["303"] == 1 and question_accuracy["501"] == 1
    assert question_accuracy["217"] == 0


def test_it_follows_the_documented_recipe(responses):
    """An independent re-implementation of README.md's recipe, with the
    README's numbers typed in here, reproduces the committed matrix."""
    ids, names, matrix = responses
    rng = np.random.default_rng(20250603)
    offsets = {"Kestrel": 0.15, "Heron": 0.0, "Osprey": 0.30, "Quillon": -0.10, "Marrow": -0.50, "Tessera": 0.20}
    stated = {"Tessera-Pro": 1.2, "Tessera-Max": 1.9, "Lumen-Mini": 0.4, "Lumen-Plus": 1.3, "Lumen-Ultra": 2.3}
    sized = [n for n in names if n not in stated]
    noise = rng.normal(0, 0.15, size=len(sized))
    theta = []
    for name in names:
        if name in stated:
            theta.append(stated[name])
        else:
            family, size = name.rsplit("-", 1)
            theta.append(-1.3 + 1.3 * math.log10(float(size.rstrip("B"))) + offsets[family]
                         + noise[sized.index(name)])
    level_mean = {1: -1.2, 2: 0.3, 3: 1.6}
    subject_offset = [0.2, 0.2, -0.2, 0.0, -0.2]  # by id hundreds: math, physics, biology, CS, history
    level_of = [1 + (int(i) % 100 - 1) // 8 for i in ids]
    b = np.array([level_mean[lv] + subject_offset[int(i) // 100 - 1] for i, lv in zip(ids, level_of)])
    b += rng.normal(0, 0.5, size=len(ids))
    for pinned, value in (("303", -np.inf), ("501", -np.inf), ("217", np.inf)):
        b[ids.index(pinned)] = value
    a = rng.lognormal(0, 0.25, size=len(ids))
    with np.errstate(over="ignore"):
        p = expit(a[:, None] * (np.array(theta)[None, :] - b[:, None]))
    expected = (rng.random(p.shape) < p).astype(float)
    expected[rng.choice(len(ids), size=12, replace=False), names.index("Heron-180B")] = np.nan
    np.testing.assert_array_equal(matrix, expected)


def test_the_observed_accuracy_matches_the_model_probability():
    sim = generate.simulate()
    observed = ~np.isnan(sim.responses)
    p = sim.probability[observed]
    # The sum of independent Bernoulli(p) cells has variance sum p(1-p); allow 3 sd.
    tolerance = 3 * math.sqrt(np.sum(p * (1 - p)))
    assert abs(sim.responses[observed].sum() - p.sum()) < tolerance


def test_models_of_stated_ability_rank_by_it(responses):
    _, names, matrix = responses
    accuracy = dict(zip(names, np.nanmean(matrix, axis=0)))
    assert accuracy["Lumen-Mini"] < accuracy["Lumen-Plus"] < accuracy["Lumen-Ultra"]
    assert accuracy["Tessera-Pro"] < accuracy["Tessera-Max"]


def test_simulate_with_the_same_seed_repeats_and_another_seed_differs():
    first, again, other = generate.simulate(rng=7), generate.simulate(rng=7), generate.simulate(rng=8)
    np.testing.assert_array_equal(first.responses, again.responses)
    assert not np.array_equal(np.nan_to_num(first.responses, nan=-1), np.nan_to_num(other.responses, nan=-1))


@pytest.mark.parametrize("bad", [-1, 1.5, "seed", True])
def test_simulate_rejects_a_bad_rng(bad):
    with pytest.raises(ValueError, match="rng"):
        generate.simulate(rng=bad)


def test_the_readme_states_the_seed_the_generator_uses():
    readme = (DEMO_DIR / "README.md").read_text(encoding="utf-8")
    assert f"SEED = {generate.SEED}" in readme


def test_the_rendered_csv_round_trips_through_the_csv_module():
    text = generate.render_files()["questions.csv"].decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["question"] for r in rows] == [q.text for q in generate.QUESTIONS]
