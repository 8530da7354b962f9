"""``manage.py load_responses --logs``: evaluation-harness logs into one response set.

Each round trip loads logs that tests/annotate/harness_fixtures.py generated and
compares the stored matrix (read back through the selector ``response_matrix``)
with the matrix the generator built by hand from the same draws.
"""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotate.catalog.loaders.harness import _common
from annotate.catalog.services import load_plan as load_plan_module, loading
from annotate.models import (
    Dataset,
    LanguageModel,
    Question,
    QuestionResult,
    ResponseSet,
    ResponseSetQuestion,
    RunStatus,
    Subject,
)
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.studies.services.studies import study_create
from tests.annotate.harness_fixtures import (
    assert_same_matrix,
    lm_expected_for,
    stored_cells,
    write_helm_suite,
    write_inspect_logs,
    write_lm_eval_logs,
    write_lm_eval_many,
    write_opencompass_outputs,
)

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet, ResponseSetQuestion)


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def load(*paths, name: str = "logs", **options) -> tuple[str, str]:
    """Run the command; return (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    args = ["--logs", *map(str, paths), "--name", name]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, str(value)]
    call_command("load_responses", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def rewrite_scores(path, changes: dict[int, object]) -> None:
    """Set the ``acc`` of the given doc_ids in an lm-eval samples file."""
    lines = [json.loads(raw) for raw in path.read_text().splitlines() if raw.strip()]
    for line in lines:
        if line["doc_id"] in changes:
            line["acc"] = changes[line["doc_id"]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


# -- round trips: one response set per format, several models each ---------------------------------


@pytest.mark.parametrize("writer", [write_lm_eval_logs, write_inspect_logs, write_helm_suite,
                                    write_opencompass_outputs], ids=["lm-eval", "inspect", "helm", "opencompass"])
def test_it_loads_generated_logs_of_several_models_into_one_matching_matrix(tmp_path, writer):
    generated = writer(tmp_path, np.random.default_rng(8))
    stdout, _ = load(generated.root, name="round trip")
    response_set = ResponseSet.objects.get()
    assert response_set.name == "round trip" and stdout.startswith("Loaded round trip v1:")
    assert len({m for _, _, m in generated.expected}) >= 2
    assert_same_matrix(stored_cells(response_set), generated.expected)
    assert response_set.n_responses == len(generated.expected)


def test_it_stores_the_question_text_and_the_subtask_as_subject(tmp_path):
    generated = write_lm_eval_logs(tmp_path, np.random.default_rng(3))
    load(generated.root)
    algebra = Question.objects.select_related("dataset", "subject").get(external_id="mmlu_mini_algebra/2")
    # written by harness_fixtures._lm_doc: f"{task} question {doc_id}?"; options "option A".."option D"
    assert (algebra.dataset.name, algebra.subject.name) == ("mmlu_mini", "mmlu_mini_algebra")
    assert algebra.text == "mmlu_mini_algebra question 2?"
    assert algebra.options == ["option A", "option B", "option C", "option D"]
    assert algebra.reference_answer == "2"
    # a standalone task is its own dataset and subject
    gsm = Question.objects.select_related("dataset", "subject").get(external_id="gsm8k_mini/1")
    assert (gsm.dataset.name, gsm.subject.name) == ("gsm8k_mini", "gsm8k_mini")
    assert gsm.text == "How many apples in basket 1?"


def test_the_chosen_filter_and_metric_are_read(tmp_path):
    generated = write_lm_eval_logs(tmp_path, np.random.default_rng(4))
    samples = sorted(generated.root.glob("org__*/samples_gsm8k_mini_*.jsonl"))
    assert len(samples) == 2  # alpha and beta; their results files are found beside them
    load(*samples, filter="flexible-extract", metric="exact_match", name="flexible")
    assert_same_matrix(stored_cells(ResponseSet.objects.get()),
                       lm_expected_for(generated, task="gsm8k_mini", filter="flexible-extract", metric="exact_match"))


# -- the real files in ../shared/data/harness-formats -----------------------------------------------


def test_it_loads_the_real_lm_eval_gsm8k_logs_of_two_models(shared_data):
    load(shared_data / "harness-formats" / "lm-eval", name="gsm8k real")
    cells = stored_cells(ResponseSet.objects.get())
    # exact_match (strict-match) read from the two samples files by hand:
    #   doc 16: it-q4_K_M 1, u1 1;  doc 17: 0, 0;  doc 18: 1, 0
    expected = {("gsm8k", f"gsm8k/{doc}", model): credit
                for doc, pair in ((16, (1.0, 1.0)), (17, (0.0, 0.0)), (18, (1.0, 0.0)))
                for model, credit in zip(("gemma3:12b-it-q4_K_M", "gemma3:12b-u1"), pair)}
    assert_same_matrix(cells, expected, atol=0.0)
    claire = Question.objects.select_related("subject").get(external_id="gsm8k/18")
    assert claire.text == ("Claire makes a 3 egg omelet every morning for breakfast.  "
                           "How many dozens of eggs will she eat in 4 weeks?")
    assert claire.subject.name == "gsm8k"
    assert not Question.objects.filter(text="").exists()


def test_it_loads_the_real_inspect_arc_easy_logs_of_two_models(shared_data):
    load(shared_data / "harness-formats" / "inspect", name="arc real")
    cells = stored_cells(ResponseSet.objects.get())
    # samples[].scores.choice.value read from the files by hand: qwen ran ids 1-3 (C, I, I),
    # sonnet ids 1-5 (all C); qwen never saw 4 and 5 (missing, not wrong)
    task = "inspect_evals/arc_easy"
    expected = {(task, f"{task}/{i}", "ollama/qwen2.5:0.5b"): c for i, c in ((1, 1.0), (2, 0.0), (3, 0.0))}
    expected |= {(task, f"{task}/{i}", "anthropic/claude-sonnet-4-0"): 1.0 for i in range(1, 6)}
    assert_same_matrix(cells, expected, atol=0.0)
    assert math.isnan(cells[(task, f"{task}/4", "ollama/qwen2.5:0.5b")])
    first = Question.objects.select_related("subject").get(external_id=f"{task}/1")
    assert first.text.startswith("Which statement best explains why photosynthesis is the foundation")
    assert first.subject.name == task
    assert Question.objects.filter(subject__name=task).count() == 5
    assert not Question.objects.filter(text="").exists()


# -- the loader's rules ----------------------------------------------------------------------------


def test_loading_the_same_logs_twice_is_refused(tmp_path):
    generated = write_inspect_logs(tmp_path, np.random.default_rng(5))
    load(generated.root, name="first")
    before = counts()
    first = ResponseSet.objects.get()
    with pytest.raises(CommandError) as error:
        load(generated.root, name="second")
    assert load_plan_module.ALREADY_LOADED.format(existing="first v1", pk=first.pk) in str(error.value)
    assert counts() == before


def test_a_bad_value_refuses_the_whole_load_naming_file_line_and_key(tmp_path):
    write_lm_eval_many(tmp_path, np.random.default_rng(6), models=("org/m-1b", "org/m-2b"), n_docs=8)
    samples = next((tmp_path / "org__m-2b").glob("samples_*.jsonl"))
    # org/m-2b skips doc 1 (doc_id % 7 == 1), so doc d sits on line d for d >= 2
    rewrite_scores(samples, {2: {"score": 1}, 4: None, 6: [1, 0]})
    with pytest.raises(CommandError) as error:
        load(tmp_path)
    text = str(error.value)
    name = f"org__m-2b/{samples.name}"
    assert f"{name}, row 2, column 'acc': " + _common.DICT_NOT_A_SCORE.format(value='{"score": 1}') in text
    assert f"{name}, row 4, column 'acc': " + _common.NULL_NOT_A_SCORE in text
    assert f"{name}, row 6, column 'acc': " + _common.LIST_NOT_A_SCORE.format(value="[1, 0]") in text
    assert counts() == dict.fromkeys(counts(), 0)


def test_skip_invalid_loads_the_rest_and_the_summary_counts_the_skips(tmp_path):
    generated = write_lm_eval_many(tmp_path, np.random.default_rng(6), models=("org/m-1b", "org/m-2b"), n_docs=8)
    samples = next((tmp_path / "org__m-2b").glob("samples_*.jsonl"))
    rewrite_scores(samples, {2: {"score": 1}, 4: None, 6: [1, 0]})
    _, stderr = load(tmp_path, skip_invalid=True)
    expected = {k: v for k, v in generated.expected.items()
                if not (k[2] == "org/m-2b" and k[1] in ("arith_big/2", "arith_big/4", "arith_big/6"))}
    response_set = ResponseSet.objects.get()
    assert_same_matrix(stored_cells(response_set), expected)
    note = "3 values that are not scores were skipped (dict: 1, list: 1, null: 1)"
    assert note in response_set.summary["notes"]
    assert f"note: {note}" in stderr
    # 8 + 7 observed cells written by the generator, minus the 3 skipped
    assert response_set.n_responses == 12


def test_epochs_become_partial_credit_and_the_summary_says_so(tmp_path):
    generated = write_inspect_logs(tmp_path, np.random.default_rng(7))
    _, stderr = load(generated.root)
    response_set = ResponseSet.objects.get()
    # mini_math: 4 samples x 3 epochs for each of 3 models = 12 cells averaged; mini_arc: 5 x 3 = 15 single
    note = ("12 of 27 responses had several samples (epochs or repeats, up to 3 per cell); "
            "their mean was used as partial credit")
    assert note in response_set.summary["notes"] and f"note: {note}" in stderr
    cells = stored_cells(response_set)
    averaged = [v for (d, _, _), v in cells.items() if d == "mini_math"]
    # a mean of three letters C/I/P (1, 0, 0.5) is a multiple of 1/6
    assert all(abs(v * 6 - round(v * 6)) < 1e-12 for v in averaged)
    assert_same_matrix(cells, generated.expected)


def test_a_study_can_be_made_from_harness_logs_alone(tmp_path):
    generated = write_lm_eval_logs(tmp_path, np.random.default_rng(9))
    load(generated.root)
    run = scoring_run_execute(run=scoring_run_create(response_set=ResponseSet.objects.get(),
                                                     params={"methods": ["eip", "accuracy"]}))
    assert run.status == RunStatus.DONE
    assert QuestionResult.objects.filter(run=run).count() == 10  # algebra 4 + biology 3 + gsm8k_mini 3
    datasets = list(Dataset.objects.filter(name__in=["mmlu_mini", "gsm8k_mini"]))
    # same-subject pairs available: algebra C(4,2)=6, biology C(3,2)=3, gsm8k_mini C(3,2)=3
    study = study_create(name="from logs", run=run, datasets=datasets, n_pairs=12, seed=0, include_unkept=True,
                         include_low_coverage=True)  # else those with < 3 models are left out
    pairs = list(study.pairs.select_related("question_a__subject", "question_b__subject"))
    assert len(pairs) == 12
    assert {p.question_a.subject.name for p in pairs} == {"mmlu_mini_algebra", "mmlu_mini_biology", "gsm8k_mini"}
    assert all(p.question_a.subject_id == p.question_b.subject_id for p in pairs)
    assert all(p.question_a.text and p.question_b.text for p in pairs)


def test_the_command_shows_a_progress_bar_on_stderr(tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", 1000)
    generated = write_lm_eval_many(tmp_path, np.random.default_rng(10), models=("org/a-1b", "org/b-1b"), n_docs=1500)
    # 1500 docs for the first model; the second skips doc_ids 1, 8, ..., 1499: (1499 - 1) / 7 + 1 = 215
    n = 1500 + 1500 - 215
    assert len(generated.expected) == n
    _, stderr = load(tmp_path, name="big")
    assert f"{n}/{n}" in stderr and "rows" in stderr and "100%" in stderr
    assert ResponseSet.objects.get().n_responses == n
