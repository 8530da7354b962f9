"""Tidy downloads of a scoring run: per-question difficulty and the model
leaderboard as CSV and Parquet, a codebook, and a zip of all of them.

Cast: ``rita`` (researcher), ``eve`` (evaluator), anonymous. Every value is
compared cell by cell with what the run stored (``QuestionResult.scores``,
``ModelResult.scores``).
"""
from __future__ import annotations

import csv
import io
import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

import annotate.demo
from annotate.catalog.loaders.tabular_files import parse_folder
from annotate.catalog.services.loading import response_set_load
from annotate.core import downloads
from annotate.models import (
    Dataset,
    LanguageModel,
    ModelResult,
    Question,
    QuestionResult,
    ResponseSet,
    ScoringRun,
    Subject,
)
from annotate.runs.selectors.results import run_leaderboard, run_models_frame, run_questions_frame
from annotate.runs.services import scoring as service
from annotate.studies.services.participation import ensure_role_groups
from scoring.methods import DifficultyMethod, iter_bounded_columns, iter_columns, register_method, unregister_method
from tests.annotate.factories import make_user, write_responses
from tests.annotate.runs.test_toy_method import TOY, _expected

pytestmark = pytest.mark.django_db

DEMO = Path(annotate.demo.__file__).parent
QUESTION_FIXED = ["scoring_run", "dataset", "question_id", "question_pk", "subject", "kept", "n_observed"]
MODEL_FIXED = ["scoring_run", "model_id", "name", "family", "parameters_b", "access", "n_observed"]
# credit of models (m1, m2, m3) per question; q1 is solved by all, q3 failed by all
CELLS = {
    ("q1", "algebra"): (1, 1, 1),
    ("q2", "algebra"): (1, 0, None),
    ("q3", "algebra"): (0, 0, 0),
    ("q4", None): (1, 1, 0),
    ("q5", "biology"): (0, 1, 0),
    ("q6", "biology"): (1, 0, 1),
}


@pytest.fixture
def small_run():
    """Every registered method on six questions (one without a subject, one
    unobserved cell) and three models (one without family and size)."""
    dataset = Dataset.objects.create(name="Bench")
    subjects = {name: Subject.objects.create(name=name) for name in ("algebra", "biology")}
    models = [LanguageModel.objects.create(name="m1", family="Fam", parameters_b=7.0, access="open_weight"),
              LanguageModel.objects.create(name="=m2", family="Fam", parameters_b=70.0, access="proprietary"),
              LanguageModel.objects.create(name="m3")]
    rs = ResponseSet.objects.create(name="Bench Set", file_name="b.csv", checksum="d" * 64, file_format="wide")
    cells = []
    for (external_id, subject), credits in CELLS.items():
        q = Question.objects.create(dataset=dataset, subject=subjects.get(subject), external_id=external_id)
        cells += [(q, m, c) for m, c in zip(models, credits) if c is not None]
    write_responses(rs, cells)
    run = service.scoring_run_create(response_set=rs, params={"mirt_epochs": 30})
    return service.scoring_run_execute(run=run)


@pytest.fixture
def toy():
    register_method(TOY)
    yield TOY
    unregister_method("toy")


@pytest.fixture
def toy_run(toy):
    parsed = parse_folder(DEMO, dataset="EIP-demo", subject_column="category", keep_columns=["level"])
    response_set = response_set_load(parsed=parsed, name="EIP-demo")
    run = service.scoring_run_create(response_set=response_set, params={"methods": ["eip", "accuracy", "toy"]})
    return service.scoring_run_execute(run=run)


@pytest.fixture
def rita() -> Client:
    user = make_user("rita")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _get(client: Client, name: str, run: ScoringRun):
    return client.get(reverse(f"annotate:{name}", kwargs={"run_id": run.pk}))


def _body(response) -> bytes:
    """A download's bytes, whether it was streamed or not."""
    return b"".join(response.streaming_content) if response.streaming else response.content


def _csv(client: Client, name: str, run: ScoringRun) -> pd.DataFrame:
    response = _get(client, name, run)
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    return pd.read_csv(io.BytesIO(_body(response)))


def _same(cell, stored) -> bool:
    """A CSV cell equals a stored value exactly; blank (NaN) where nothing is stored."""
    if stored is None:
        return isinstance(cell, float) and math.isnan(cell)
    return cell == stored


# --- the questions table ------------------------------------------------------------------


def test_the_questions_csv_reads_back_as_the_stored_scores(small_run, rita):
    frame = _csv(rita, "run_questions_csv", small_run)
    score_columns = [c for _, c in iter_columns("question")]
    flags = [f"{c}_at_bound" for _, c, _ in iter_bounded_columns("question")]
    assert list(frame.columns) == QUESTION_FIXED + score_columns + flags
    assert frame["question_pk"].dtype == np.int64 and frame["n_observed"].dtype == np.int64
    assert frame["kept"].dtype == bool
    assert frame["scoring_run"].tolist() == [small_run.pk] * len(frame)  # the run travels with the CSV
    results = {r.question_id: r for r in QuestionResult.objects.filter(run=small_run).select_related("question")}
    assert frame["question_pk"].tolist() == sorted(results)
    for row in frame.itertuples(index=False):
        stored = results[row.question_pk]
        assert (row.dataset, row.question_id, row.kept, row.n_observed) == (
            stored.question.dataset.name, stored.question.external_id, stored.kept, stored.n_observed)
        for column in score_columns:
            assert _same(getattr(row, column), stored.scores.get(column)), (row.question_pk, column)
    by_external = frame.set_index("question_id")
    assert by_external.loc["q2", "n_observed"] == 2
    assert math.isnan(by_external.loc["q4", "subject"]) and by_external.loc["q5", "subject"] == "biology"
    assert by_external.loc["q1", "eip_scaled"] == 0 and by_external.loc["q3", "eip_scaled"] == 100
    assert not by_external.loc["q1", "kept"] and by_external.loc["q5", "kept"]


def test_the_questions_parquet_gives_back_the_csv_frame(small_run, rita):
    from_csv = _csv(rita, "run_questions_csv", small_run)
    response = _get(rita, "run_questions_parquet", small_run)
    assert response["Content-Type"] == "application/vnd.apache.parquet"
    from_parquet = pd.read_parquet(io.BytesIO(_body(response)))
    pd.testing.assert_frame_equal(from_parquet, from_csv, check_exact=True)
    direct = run_questions_frame(run=small_run)
    pd.testing.assert_frame_equal(direct.drop(columns=["subject"]),
                                  from_parquet.drop(columns=["subject"]), check_dtype=False, check_exact=True)


# --- the models table ------------------------------------------------------------------------


def test_the_models_csv_reads_back_as_the_stored_leaderboard(small_run, rita):
    frame = _csv(rita, "run_models_csv", small_run)
    score_columns = [c for _, c in iter_columns("model")]
    flags = [f"{c}_at_bound" for _, c, _ in iter_bounded_columns("model")]
    assert list(frame.columns) == MODEL_FIXED + score_columns + flags + ["eip_rank", "accuracy_rank"]
    assert frame["scoring_run"].tolist() == [small_run.pk] * len(frame)
    for column in ("model_id", "n_observed", "eip_rank", "accuracy_rank"):
        assert frame[column].dtype == np.int64, column
    results = {r.model_id: r for r in ModelResult.objects.filter(run=small_run).select_related("model")}
    board = run_leaderboard(run=small_run)
    assert frame["model_id"].tolist() == [row.model_id for row in board]  # leaderboard order
    assert frame["eip_rank"].tolist() == [row.eip_rank for row in board]
    assert frame["accuracy_rank"].tolist() == [row.accuracy_rank for row in board]
    for row in frame.to_dict("records"):
        stored = results[row["model_id"]]
        assert row["n_observed"] == stored.n_observed and row["access"] == stored.model.access
        for column in score_columns:
            assert _same(row[column], stored.scores.get(column)), (row["model_id"], column)
    m3 = frame.set_index("name").loc["m3"]
    assert math.isnan(m3["family"]) and math.isnan(m3["parameters_b"]) and m3["access"] == "unknown"
    assert "'=m2" in frame["name"].tolist()  # the formula guard, in the CSV only


def test_the_models_parquet_keeps_the_text_and_carries_the_codebook(small_run, rita):
    body = _body(_get(rita, "run_models_parquet", small_run))
    from_parquet = pd.read_parquet(io.BytesIO(body))
    from_csv = _csv(rita, "run_models_csv", small_run)
    assert "=m2" in from_parquet["name"].tolist()
    from_csv["name"] = from_csv["name"].str.removeprefix("'")
    pd.testing.assert_frame_equal(from_parquet, from_csv, check_exact=True)
    meta = json.loads(pq.read_schema(io.BytesIO(body)).metadata[b"eip_annotate"])
    assert meta["table"] == "models" and meta["version"] == downloads.product_version()
    assert meta["parameters"]["run"] == small_run.params and small_run.params["mirt_epochs"] == 30
    assert [c["name"] for c in meta["columns"]] == list(from_parquet.columns)


# --- the toy method, the codebook and the zip -------------------------------------------------------


def test_a_registered_toy_method_is_a_column_of_both_tables(toy_run, rita):
    difficulty, competency = _expected(toy_run)
    questions = _csv(rita, "run_questions_csv", toy_run)
    assert [c for c in questions.columns if not c.endswith("_at_bound")][-1] == "toy_difficulty"
    assert questions["irt_2pl_at_bound"].isna().all()  # no fit, no bound: blank
    got = dict(zip(questions["question_pk"], questions["toy_difficulty"]))
    assert got.keys() == difficulty.keys()
    assert max(abs(got[q] - v) for q, v in difficulty.items()) <= 1e-12
    assert questions["irt_2pl"].isna().all()  # a method the run did not execute: blank
    assert questions["question_id"].dtype == np.int64  # the demo's ids are numbers; read as such
    models = _csv(rita, "run_models_csv", toy_run)
    assert [c for c in models.columns if not c.endswith("_at_bound")][-3:] == [
        "toy_competency", "eip_rank", "accuracy_rank"]
    got = dict(zip(models["model_id"], models["toy_competency"]))
    assert max(abs(got[m] - v) for m, v in competency.items()) <= 1e-12
    codebook = _get(rita, "run_codebook", toy_run).content.decode()
    assert "| `toy_difficulty` | number | Toy squared failures (difficulty): its difficulty, higher = harder" \
        in codebook


def test_the_codebook_names_every_column_the_parameters_and_the_version(small_run, rita):
    response = _get(rita, "run_codebook", small_run)
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="run-{small_run.pk}-bench-set-v1-codebook.md"'
    text = response.content.decode()
    assert text.startswith(f"# Codebook: scoring run {small_run.pk} of Bench Set v1\n")
    assert f"- product: eip-annotate {downloads.product_version()}" in text and "- generated: 20" in text
    assert f"- run: {json.dumps(small_run.params, sort_keys=True)}" in text and '"mirt_epochs": 30' in text
    assert '- eip: {"alpha": 0.85, "converged": true, "n_iter": ' in text
    for column in [*QUESTION_FIXED, *MODEL_FIXED, *(c for _, c in iter_columns("question")),
                   *(c for _, c in iter_columns("model")), "eip_rank", "accuracy_rank"]:
        assert f"| `{column}` |" in text, column
    assert "| `irt_1pl` | number | 1PL IRT: its difficulty, higher = harder; blank where undefined | " \
           "logits (questions: difficulty b; models: ability) |" in text
    assert "| `accuracy` | number | Accuracy: its competency, higher = better; blank where undefined | " \
           "mean credit over observed questions, in [0, 1] |" in text
    assert "## `questions.csv`, `questions.parquet`: Per-question difficulty" in text
    assert "## `methods.csv`: How each method's fit went" in text


def test_the_zip_holds_the_same_csvs_and_the_codebook(small_run, rita):
    response = _get(rita, "run_tables_zip", small_run)
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == f'attachment; filename="run-{small_run.pk}-bench-set-v1-tables.zip"'
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.namelist() == ["questions.csv", "models.csv", "methods.csv", "codebook.md"]
    assert archive.read("questions.csv") == _body(_get(rita, "run_questions_csv", small_run))
    assert archive.read("models.csv") == _body(_get(rita, "run_models_csv", small_run))
    methods = pd.read_csv(io.BytesIO(archive.read("methods.csv")))
    assert methods["method"].tolist() == ["eip", "simple_rank", "accuracy", "weighted_accuracy", "irt_1pl",
                                          "irt_2pl", "irt_1pl_mml", "irt_2pl_mml", "irt_mirt"]
    assert methods.loc[0, "converged"] == True  # noqa: E712 -- a numpy bool read from the CSV
    assert "## `methods.csv`: How each method's fit went" in archive.read("codebook.md").decode()


def test_file_names_carry_the_run_and_the_response_set(small_run, rita):
    for name, ext in (("run_questions_csv", "questions.csv"), ("run_models_parquet", "models.parquet")):
        response = _get(rita, name, small_run)
        assert response["Content-Disposition"] == f'attachment; filename="run-{small_run.pk}-bench-set-v1-{ext}"'


def test_the_run_pages_link_every_download(small_run, rita):
    for page in ("run_detail", "run_models", "run_questions"):
        html = _get(rita, page, small_run).content.decode()
        for name in ("run_questions_csv", "run_questions_parquet", "run_models_csv", "run_models_parquet",
                     "run_codebook", "run_tables_zip"):
            assert f'href="{reverse(f"annotate:{name}", kwargs={"run_id": small_run.pk})}"' in html, (page, name)


# --- who may download -------------------------------------------------------------------------------------


NAMES = ("run_questions_csv", "run_questions_parquet", "run_models_csv", "run_models_parquet", "run_codebook",
         "run_tables_zip")


def test_an_unknown_or_unfinished_run_is_not_found(small_run, rita):
    queued = service.scoring_run_create(response_set=small_run.response_set)
    for name in NAMES:
        assert rita.get(reverse(f"annotate:{name}", kwargs={"run_id": small_run.pk + 1000})).status_code == 404
        assert _get(rita, name, queued).status_code == 404


def test_evaluators_are_refused_and_anonymous_visitors_sent_to_log_in(small_run):
    evaluator = make_user("eve")
    evaluator.groups.add(ensure_role_groups()[1])
    eve = Client()
    eve.force_login(evaluator)
    for name in NAMES:
        assert _get(eve, name, small_run).status_code == 403
        response = _get(Client(), name, small_run)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


# --- the shared rendering ------------------------------------------------------------------------------------


def test_snake_case_headers_and_their_clashes():
    assert downloads.snake_case("rank change (+ = EIP higher)") == "rank_change_eip_higher"
    assert downloads.snake_case("share [67, 100]") == "share_67_100"
    assert downloads.snake_case("1PL θ") == "c_1pl"
    with pytest.raises(ValueError, match=r"^column names must be unique after snake_case; \['a_b'\] repeat$"):
        downloads.tidy_frame(pd.DataFrame({"a b": [1], "A-B": [2]}))


def test_the_csv_guards_formulas_but_not_numbers_and_writes_blanks():
    frame = pd.DataFrame({"id": [1, 2, 3], "text": ["=1+1", "-0.5", None], "x": [-0.25, np.nan, 1 / 3]})
    text = downloads.csv_bytes(frame).decode("utf-8")
    assert text == "id,text,x\r\n1,'=1+1,-0.25\r\n2,-0.5,\r\n3,,0.3333333333333333\r\n"


def test_a_line_break_inside_a_text_cell_reads_back_whole():
    frame = pd.DataFrame({"id": [1, 2], "text": ["two\rlines", "three\nlines\r\nhere"]})
    back = pd.read_csv(io.BytesIO(downloads.csv_bytes(frame)))
    assert back["text"].tolist() == ["two\rlines", "three\nlines\r\nhere"]
    rows = downloads.rows_csv_bytes([["id", "text"], [1, "a\rb"]])
    assert list(csv.reader(io.StringIO(rows.decode("utf-8"), newline=""))) == [["id", "text"], ["1", "a\rb"]]


def test_a_table_renders_only_as_csv_or_parquet(small_run):
    table = downloads.TidyTable("t", "T", pd.DataFrame({"a": [1]}), (downloads.Column("a", "integer", "one"),))
    with pytest.raises(ValueError, match=r"^fmt must be one of \['csv', 'parquet'\]; got 'xlsx'$"):
        downloads.render_table(table, fmt="xlsx")
    with pytest.raises(ValueError, match=r"the codebook describes \['b'\], the frame has \['a'\]"):
        downloads.TidyTable("t", "T", pd.DataFrame({"a": [1]}), (downloads.Column("b", "integer", "one"),))
    frame = run_models_frame(run=small_run)
    assert frame["model_id"].dtype == np.int64 and len(frame) == 3


def test_a_method_column_named_like_a_fixed_column_is_refused(small_run):
    clash = DifficultyMethod(key="clash", label="Clash", runner=TOY.runner, question_columns=("kept",),
                             model_columns=("eip_rank",))
    register_method(clash)
    try:
        with pytest.raises(ValueError, match=r"^method column 'kept' clashes with a fixed column of the "
                                             r"questions table$"):
            run_questions_frame(run=small_run)
        with pytest.raises(ValueError, match=r"^method column 'eip_rank' clashes with a fixed column of the "
                                             r"models table$"):
            run_models_frame(run=small_run)
    finally:
        unregister_method("clash")


@pytest.mark.parametrize("chunk_rows", [1, 4, 6, 100_000])
def test_the_streamed_questions_csv_is_the_whole_tables_bytes(small_run, chunk_rows):
    from annotate.core.downloads import render_table
    from annotate.runs.selectors.results import run_questions_csv_chunks, run_questions_table

    whole = render_table(run_questions_table(run=small_run), fmt="csv")
    chunks = list(run_questions_csv_chunks(run=small_run, chunk_rows=chunk_rows))
    assert b"".join(chunks) == whole
    n_rows = whole.count(b"\r\n") - 1
    assert n_rows == 6 and len(chunks) == -(-n_rows // chunk_rows)  # 6, 2, 1 and 1 chunks


def test_the_run_codebook_says_the_files_encoding_and_the_files_keep_it(small_run, rita):
    archive = zipfile.ZipFile(io.BytesIO(_get(rita, "run_tables_zip", small_run).content))
    for name in archive.namelist():
        data = archive.read(name)
        assert not data.startswith(b"\xef\xbb\xbf"), name
        data.decode("utf-8", errors="strict")
    assert ("Encoding: every text file of this download (CSV, JSON, Markdown, this codebook included) is UTF-8 "
            "without a byte-order mark") in archive.read("codebook.md").decode("utf-8")
