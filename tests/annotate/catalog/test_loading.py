"""The loading service: atomic writes, idempotence, versions, preview, the parser contract."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from annotate.catalog.loaders.base import MODEL_COLUMNS, QUESTION_COLUMNS, LoadError, ParsedResponseSet, Problem
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.services import load_plan as plan, loading
from annotate.catalog.services.loading import response_set_load, response_set_preview
from annotate.models import (
    Dataset,
    LanguageModel,
    Question,
    ResponseSet,
    ResponseSetQuestion,
    ResponseSetStatus,
    Subject,
)
from tests.annotate.factories import n_stored_responses, stored_responses

pytestmark = pytest.mark.django_db

TABLES = (Dataset, Subject, Question, LanguageModel, ResponseSet, ResponseSetQuestion)
WIDE = "question_id,m1,m2,m3\nq1,1,0,\nq2,0,1,1\nq3,,0.5,1\n"  # 7 non-blank cells
QUESTIONS = (
    "question_id,category,question,options_json,answer,level\n"
    'q1,math,1+1?,"[""1"", ""2""]",B,easy\n'
    "q2,math,2+2?,[],A,\n"
    "q3,law,Legal?,[],C,hard\n"
)


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TABLES}


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def parse_wide(tmp_path: Path, text: str = WIDE, name: str = "r.csv"):
    responses = write(tmp_path, name, text)
    questions = write(tmp_path, "q.csv", QUESTIONS)
    return parse_files(responses=responses, file_format="wide", dataset="D", questions=questions,
                       subject_column="category", keep_columns=["level"])


def test_it_stores_questions_models_and_credits_as_given(tmp_path):
    response_set = response_set_load(parsed=parse_wide(tmp_path), name="set")
    stored = stored_responses(response_set)
    assert stored == [("q1", "m1", 1.0), ("q1", "m2", 0.0), ("q2", "m1", 0.0), ("q2", "m2", 1.0), ("q2", "m3", 1.0),
                      ("q3", "m2", 0.5), ("q3", "m3", 1.0)]
    q1 = Question.objects.get(external_id="q1")
    assert (q1.dataset.name, q1.subject.name, q1.text, q1.options, q1.reference_answer, q1.metadata) == (
        "D", "math", "1+1?", ["1", "2"], "B", {"level": "easy"})
    assert Question.objects.get(external_id="q2").metadata == {"level": None}  # a blank kept column is None
    assert (response_set.version, response_set.status, response_set.file_format) == (
        1, ResponseSetStatus.LOADED, "wide")
    assert (response_set.n_questions, response_set.n_models, response_set.n_responses) == (3, 3, 7)
    assert response_set.file_name == "r.csv, q.csv"
    assert response_set.options["subject_column"] == "category"


def test_it_previews_counts_and_first_rows_without_writing(tmp_path):
    before = counts()
    preview = response_set_preview(parsed=parse_wide(tmp_path), name="set")
    assert counts() == before
    assert (preview.name, preview.version, preview.supersedes) == ("set", 1, None)
    assert (preview.n_responses, preview.n_questions, preview.n_models) == (7, 3, 3)
    assert (preview.datasets_new, preview.subjects_new, preview.questions_new, preview.models_new) == (1, 2, 3, 3)
    assert (preview.datasets_existing, preview.questions_existing, preview.models_existing) == (0, 0, 0)
    assert preview.new_subject_names == ("math", "law")
    first = [(r.question_id, r.subject, r.model, r.credit) for r in preview.first_rows]
    # file order: row by row, models left to right, blanks skipped
    assert first == [("q1", "math", "m1", 1.0), ("q1", "math", "m2", 0.0), ("q2", "math", "m1", 0.0),
                     ("q2", "math", "m2", 1.0), ("q2", "math", "m3", 1.0), ("q3", "law", "m2", 0.5),
                     ("q3", "law", "m3", 1.0)]


def test_it_counts_existing_rows_in_the_preview_of_a_second_set(tmp_path):
    response_set_load(parsed=parse_wide(tmp_path), name="set")
    parsed = parse_wide(tmp_path, "question_id,m1,m9\nq1,1,1\nq3,0,1\n", name="r2.csv")
    preview = response_set_preview(parsed=parsed, name="other")
    assert (preview.datasets_new, preview.datasets_existing) == (0, 1)
    assert (preview.subjects_new, preview.subjects_existing) == (0, 2)
    assert (preview.questions_new, preview.questions_existing) == (0, 3)  # the questions file lists q1..q3
    assert (preview.models_new, preview.models_existing, preview.new_model_names) == (1, 1, ("m9",))


def test_it_refuses_the_same_files_twice_and_names_the_existing_set(tmp_path):
    first = response_set_load(parsed=parse_wide(tmp_path), name="set")
    before = counts()
    with pytest.raises(LoadError) as info:
        response_set_load(parsed=parse_wide(tmp_path), name="set again")
    assert info.value.problems == [
        Problem("r.csv, q.csv", plan.ALREADY_LOADED.format(existing="set v1", pk=first.pk))
    ]
    assert counts() == before


def test_it_refuses_a_changed_file_under_an_existing_name_saying_how_to_make_a_new_version(tmp_path):
    response_set_load(parsed=parse_wide(tmp_path), name="set")
    before = counts()
    changed = parse_wide(tmp_path, WIDE.replace("q3,,0.5,1", "q3,1,0.5,1"), name="r2.csv")
    with pytest.raises(LoadError) as info:
        response_set_load(parsed=changed, name="set")
    assert info.value.problems == [
        Problem("r2.csv, q.csv", plan.NAME_EXISTS.format(name="set", version=1, next_version=2))
    ]
    assert counts() == before


def test_it_loads_a_new_version_and_supersedes_the_old_one_keeping_its_responses(tmp_path):
    v1 = response_set_load(parsed=parse_wide(tmp_path), name="set")
    changed = parse_wide(tmp_path, WIDE.replace("q3,,0.5,1", "q3,1,0.5,1"), name="r2.csv")
    v2 = response_set_load(parsed=changed, name="set", new_version=True)
    v1.refresh_from_db()
    assert (v2.version, v2.status, v2.n_responses) == (2, ResponseSetStatus.LOADED, 8)
    assert v1.status == ResponseSetStatus.SUPERSEDED
    assert n_stored_responses(v1) == 7 and n_stored_responses(v2) == 8
    assert v2.summary["supersedes"] == "set v1"
    # questions and models are shared, not duplicated
    assert (Question.objects.count(), LanguageModel.objects.count()) == (3, 3)


def test_it_refuses_a_new_version_of_a_name_that_does_not_exist(tmp_path):
    before = counts()
    with pytest.raises(LoadError) as info:
        response_set_load(parsed=parse_wide(tmp_path), name="fresh", new_version=True)
    assert info.value.problems == [Problem("r.csv, q.csv", plan.NO_EARLIER_VERSION.format(name="fresh"))]
    assert counts() == before


def test_a_failure_in_the_middle_of_writing_leaves_nothing_behind(tmp_path, monkeypatch, settings):
    seed = response_set_load(parsed=parse_wide(tmp_path, "question_id,m1\nq1,1\n", name="seed.csv"), name="seed")
    before = counts()
    calls = []
    original = loading._write_response_batch

    def fail_on_second_batch(*args):
        calls.append(args[3].size)  # cells of the batch's block
        if len(calls) == 2:
            raise RuntimeError("disk full")
        original(*args)

    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", 1)  # one question (3 cells) per batch
    monkeypatch.setattr(loading, "_write_response_batch", fail_on_second_batch)
    parsed = parse_wide(tmp_path, "question_id,m1,m2,n1\nq1,1,0,1\nq2,0,1,1\nq3,1,1,0\n", name="big.csv")
    with pytest.raises(RuntimeError, match="disk full"):
        response_set_load(parsed=parsed, name="big")
    assert calls == [3, 3]  # the first batch of 3 responses was written before the failure
    assert counts() == before
    assert not LanguageModel.objects.filter(name="n1").exists()
    # no store file of the failed load, temporary or final: only the seed's store is left
    assert sorted(str(p.relative_to(settings.EIP_STORE_DIR)) for p in settings.EIP_STORE_DIR.rglob("*.zarr")) == [
        f"response-set-{seed.pk}.zarr"]


def test_it_reports_progress_after_every_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", 1)  # one question per batch: q1, q2, q3 hold 2, 3, 2 cells
    seen = []
    response_set_load(parsed=parse_wide(tmp_path), name="set", progress=lambda done, total: seen.append((done, total)))
    assert seen == [(2, 7), (5, 7), (7, 7)]


def _contract(responses: list[tuple], questions: list[tuple] | None = None, models: list[str] | None = None):
    """A ParsedResponseSet built by hand, as a harness parser would (no source files)."""
    questions = questions or [("D", "q1"), ("D", "q2")]
    models = models or ["m1", "m2"]
    return ParsedResponseSet(
        questions=pd.DataFrame(
            [(d, q, None, "", [], "", {}) for d, q in questions], columns=QUESTION_COLUMNS
        ),
        models=pd.DataFrame([(m, "", np.nan, "unknown", {}) for m in models], columns=MODEL_COLUMNS),
        responses=pd.DataFrame(responses, columns=["dataset", "external_id", "model", "credit", "source"]),
        file_format="lm-eval",
    )


def test_it_loads_a_hand_built_parse_from_another_parser():
    parsed = _contract([("D", "q1", "m1", 1.0, "log.json:3"), ("D", "q2", "m2", 0.25, "log.json:4")])
    response_set = response_set_load(parsed=parsed, name="harness")
    assert stored_responses(response_set) == [
        ("q1", "m1", 1.0), ("q2", "m2", 0.25)]
    assert len(response_set.checksum) == 64


@pytest.mark.parametrize("credit", [1.5, -0.5, np.nan, np.inf])
def test_it_checks_credits_of_any_parser(credit):
    before = counts()
    parsed = _contract([("D", "q1", "m1", 1.0, "log.json:3"), ("D", "q2", "m1", credit, "log.json:9")])
    with pytest.raises(LoadError) as info:
        response_set_load(parsed=parsed, name="harness")
    assert info.value.problems == [
        Problem("log.json", plan.CREDIT_INVALID.format(value=credit), row=9, column="credit")]
    assert counts() == before


def test_it_checks_unknown_ids_and_duplicates_of_any_parser():
    parsed = _contract([
        ("D", "q1", "m1", 1.0, "log.json:3"),
        ("D", "q1", "m1", 0.0, "log.json:4"),
        ("D", "q7", "m1", 0.0, "log.json:5"),
        ("D", "q2", "mZ", 0.0, "log.json:6"),
    ])
    with pytest.raises(LoadError) as info:
        response_set_load(parsed=parsed, name="harness")
    assert info.value.problems == [
        Problem("log.json", plan.DUPLICATE_RESPONSE.format(question_id="q1", model="m1", first="log.json:3"), row=4),
        Problem("log.json", plan.UNKNOWN_QUESTION.format(question_id="q7", dataset="D"), row=5),
        Problem("log.json", plan.UNKNOWN_MODEL.format(model="mZ"), row=6, column="model"),
    ]


def test_it_rejects_a_blank_name_naming_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="name must be a non-blank string"):
        response_set_load(parsed=parse_wide(tmp_path), name="  ")


def test_it_rejects_a_parse_that_lacks_contract_columns():
    parsed = _contract([("D", "q1", "m1", 1.0, "log.json:3")])
    parsed.models = parsed.models.drop(columns=["access"])
    with pytest.raises(ValueError, match=r"parsed.models lacks column\(s\) \['access'\]"):
        response_set_preview(parsed=parsed)
