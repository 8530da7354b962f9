"""Bounds on what a request or an upload may hold (issue 13): JSON nesting
(``JSON_MAX_DEPTH``), ids in one list (``MAX_ID_LIST_LENGTH``), question text
(``QUESTION_TEXT_MAX_CHARS``). Each refusal is a clear 400 or load error naming
the file and row; never a RecursionError, never "too many SQL variables".

Cast: ``owner`` (staff, API token).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.catalog.loaders import tabular as t
from annotate.catalog.loaders.base import LoadError, Problem
from annotate.catalog.loaders.harness import inspect_ai, lm_eval, parse_harness_logs
from annotate.catalog.loaders.tabular_files import parse_files
from annotate.catalog.selectors.matrix import ERR_IDS, ERR_TOO_MANY_IDS, check_ids
from annotate.catalog.services import load_plan as plan
from annotate.catalog.services.loading import response_set_load
from annotate.core.jsonsafe import ERR_TOO_DEEP, JsonTooDeepError, loads_bounded
from annotate.models import ResponseSet, ScoringRun
from tests.annotate.factories import make_catalog, make_user

DEEP = 100_000  # levels of nesting sent through each entry
TOO_DEEP = ERR_TOO_DEEP.format(max_depth=100)


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


# --- the helper ------------------------------------------------------------------------------


def test_it_parses_json_up_to_the_limit_and_refuses_one_level_more():
    assert loads_bounded(nested(3), max_depth=3) == [[[1]]]
    assert loads_bounded('{"a": {"b": [1]}}', max_depth=3) == {"a": {"b": [1]}}
    assert loads_bounded("7", max_depth=1) == 7  # a scalar is depth 0
    with pytest.raises(JsonTooDeepError, match="deeper than 3 levels"):
        loads_bounded(nested(4), max_depth=3)
    with pytest.raises(JsonTooDeepError):
        loads_bounded('{"a": {"b": {"c": {}}}}', max_depth=3)


def test_many_brackets_side_by_side_are_not_depth():
    flat = "[" + ",".join(["[]"] * 500) + "]"  # 501 brackets, depth 2
    assert len(loads_bounded(flat, max_depth=2)) == 500


def test_a_100k_deep_document_is_a_json_error_not_a_recursion_error():
    for text in (nested(DEEP), nested(DEEP).encode(), '{"a":' * DEEP + "1" + "}" * DEEP):
        with pytest.raises(json.JSONDecodeError) as caught:  # the subclass, caught where "not JSON" is
            loads_bounded(text)
        assert isinstance(caught.value, JsonTooDeepError)
        assert str(caught.value) == caught.value.msg == TOO_DEEP


def test_the_depth_is_a_setting(settings):
    settings.JSON_MAX_DEPTH = 2
    with pytest.raises(JsonTooDeepError, match="deeper than 2 levels"):
        loads_bounded(nested(3))


# --- through each entry ----------------------------------------------------------------------


@pytest.fixture
def owner_api():
    owner = make_user("owner", staff=True)
    return Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=owner)[1]}")


@pytest.mark.django_db
def test_an_api_body_100k_deep_is_a_400_saying_so(owner_api):
    for body in (nested(DEEP), '{"response_set": 1, "params": ' + nested(DEEP) + "}"):
        response = owner_api.post(reverse("annotate:api_scoring_runs"), body, content_type="application/json")
        assert response.status_code == 400
        assert response.json() == {"error": TOO_DEEP}
    assert ScoringRun.objects.count() == 0


@pytest.mark.django_db
def test_an_api_body_within_the_limit_goes_on_to_the_usual_checks(owner_api):
    body = json.dumps({"response_set": 10**9, "params": json.loads(nested(50))})
    response = owner_api.post(reverse("annotate:api_scoring_runs"), body, content_type="application/json")
    assert response.status_code == 400 and "deeper" not in response.json()["error"]


def test_a_jsonl_line_100k_deep_is_refused_naming_file_and_row(tmp_path: Path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"question_id": "q1", "model": "m1", "credit": 1}\n'
                    '{"question_id": "q2", "model": "m1", "credit": 0, "extra": ' + nested(DEEP) + "}\n")
    with pytest.raises(LoadError) as caught:
        parse_files(responses=path, file_format="jsonl", dataset="D")
    assert caught.value.problems == [Problem("r.jsonl", t.JSON_INVALID.format(detail=TOO_DEEP), row=3 - 1)]


def test_an_options_json_cell_100k_deep_is_refused_naming_file_row_and_column(tmp_path: Path):
    responses = tmp_path / "r.csv"
    responses.write_text("question_id,m1\nq1,1\nq2,0\n")
    questions = tmp_path / "q.csv"
    questions.write_text(f'question_id,question,options_json\nq1,One?,"[""a""]"\nq2,Two?,{nested(DEEP)}\n')
    with pytest.raises(LoadError) as caught:
        parse_files(responses=responses, file_format="wide", dataset="D", questions=questions)
    [problem] = caught.value.problems
    assert (problem.file, problem.row, problem.column) == ("q.csv", 3, "options_json")
    assert problem.message.endswith("is not a JSON list") and len(problem.message) < 200  # the value cut short


def test_an_inspect_json_log_100k_deep_is_refused_naming_the_file(tmp_path: Path):
    head = '{"version": 2, "status": "success", "eval": {"task": "t", "model": "m/x"}, "samples": '
    (tmp_path / "log.json").write_text(head + nested(DEEP) + "}")
    with pytest.raises(LoadError) as caught:
        parse_harness_logs(tmp_path / "log.json", format="inspect")
    assert [(p.file, p.message) for p in caught.value.problems] == [("log.json", f"not readable as JSON: {TOO_DEEP}")]


def test_an_inspect_eval_member_100k_deep_is_refused_naming_the_member(tmp_path: Path):
    from tests.annotate.harness_fixtures import write_zip

    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m/x", "scorers": [{"name": "s"}]}}
    write_zip(tmp_path / "run.eval", [("header.json", json.dumps(header).encode(), 8),
                                      ("samples/1_epoch_1.json", nested(DEEP).encode(), 8)])
    with pytest.raises(LoadError) as caught:
        parse_harness_logs(tmp_path / "run.eval")
    assert Problem("run.eval::samples/1_epoch_1.json",
                   inspect_ai.BAD_MEMBER.format(member="samples/1_epoch_1.json", error=TOO_DEEP)) in \
        caught.value.problems


def test_an_lm_eval_sample_line_100k_deep_is_refused_naming_file_and_row(tmp_path: Path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "results_2025-01-01T00-00-00.json").write_text(json.dumps({
        "results": {"t": {"acc,none": 1.0}}, "configs": {"t": {"metric_list": [{"metric": "acc"}]}},
        "config": {"model_args": "pretrained=m1"}, "model_name": "m1", "lm_eval_version": "0.4"}))
    (folder / "samples_t_2025-01-01T00-00-00.jsonl").write_text(
        json.dumps({"doc_id": 0, "doc": {"question": "q"}, "filter": "none", "acc": 1.0}) + "\n"
        + '{"doc_id": 1, "doc": ' + nested(DEEP) + "}\n")
    with pytest.raises(LoadError) as caught:
        parse_harness_logs(folder, format="lm-eval")
    assert Problem("samples_t_2025-01-01T00-00-00.jsonl", lm_eval.NOT_JSON_LINE.format(error=TOO_DEEP), 2) in [
        Problem(Path(p.file).name, p.message, p.row) for p in caught.value.problems]


@pytest.mark.django_db
def test_a_study_file_100k_deep_is_a_command_error(tmp_path: Path):
    path = tmp_path / "study.json"
    path.write_text('{"study": ' + nested(DEEP) + "}")
    with pytest.raises(CommandError, match="deeper than 100 levels"):
        call_command("import_study", "--file", str(path))


# --- id lists --------------------------------------------------------------------------------


def test_an_id_list_longer_than_the_limit_is_refused_with_count_and_limit_only(settings):
    settings.MAX_ID_LIST_LENGTH = 5
    assert check_ids([3, 1, 3, 2, 9], name="model_ids") == [1, 2, 3, 9]
    with pytest.raises(ValueError) as caught:
        check_ids([101, 102, 103, 104, 105, 106], name="model_ids")
    assert str(caught.value) == ERR_TOO_MANY_IDS.format(name="model_ids", count=6, limit=5)
    assert str(caught.value) == "model_ids lists 6 ids; the limit is 5 (setting MAX_ID_LIST_LENGTH)"


def test_a_bad_list_is_quoted_cut_short_not_whole():
    with pytest.raises(ValueError) as caught:
        check_ids([*range(1, 1000), "x"], name="model_ids")
    assert str(caught.value) == ERR_IDS.format(name="model_ids", value="[1, 2, 3, 4, 5, 6, ...]")


@pytest.mark.django_db
def test_300k_model_ids_through_the_api_are_a_400_that_does_not_echo_them(owner_api):
    catalog = make_catalog(per_subject=2)
    ids = list(range(1_000_001, 1_300_001))
    body = json.dumps({"response_set": catalog.response_set.pk, "model_ids": ids})
    response = owner_api.post(reverse("annotate:api_scoring_runs"), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"error": "model_ids lists 300,000 ids; the limit is 10,000 "
                                        "(setting MAX_ID_LIST_LENGTH)"}
    assert ScoringRun.objects.count() == 1  # the factory's run only


@pytest.mark.django_db
def test_ids_at_the_limit_run_the_query_and_name_only_the_first_missing(owner_api, settings):
    catalog = make_catalog(per_subject=2)
    ids = list(range(1_000_001, 1_010_001))  # 10,000 unknown ids: one query, no "too many SQL variables"
    body = json.dumps({"response_set": catalog.response_set.pk, "model_ids": ids})
    response = owner_api.post(reverse("annotate:api_scoring_runs"), body, content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error.startswith("model_ids [1000001, 1000002, 1000003, 1000004, 1000005, 1000006, 1000007, "
                            "1000008, 1000009, 1000010] and 9,990 more have no response")
    assert "1000011" not in error


# --- question text ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_question_text_over_the_limit_is_refused_naming_file_row_and_column(tmp_path: Path, settings):
    settings.QUESTION_TEXT_MAX_CHARS = 1000
    responses = tmp_path / "r.csv"
    responses.write_text("question_id,m1\nq1,1\nq2,0\nq3,1\n")
    questions = tmp_path / "q.csv"
    questions.write_text(f"question_id,question,answer\nq1,{'x' * 1000},A\nq2,{'y' * 1001},B\nq3,ok,{'z' * 1500}\n")
    with pytest.raises(LoadError) as caught:
        response_set_load(parsed=parse_files(responses=responses, file_format="wide", dataset="D",
                                             questions=questions), name="long")
    assert caught.value.problems == [
        Problem("q.csv", plan.TEXT_TOO_LONG.format(question_id="q2", column="text", length=1001, limit=1000),
                row=3, column="text"),
        Problem("q.csv", plan.TEXT_TOO_LONG.format(question_id="q3", column="reference_answer", length=1500,
                                                      limit=1000), row=4, column="reference_answer"),
    ]
    assert caught.value.problems[0].message == ("question 'q2': its text is 1,001 characters long; the limit is "
                                                "1,000 (setting QUESTION_TEXT_MAX_CHARS)")
    assert ResponseSet.objects.count() == 0


@pytest.mark.django_db
def test_question_text_is_measured_in_characters_not_bytes(tmp_path: Path, settings):
    settings.QUESTION_TEXT_MAX_CHARS = 10
    responses = tmp_path / "r.csv"
    responses.write_text("question_id,m1\nq1,1\nq2,0\nq3,1\nq4,1\n", encoding="utf-8")
    questions = tmp_path / "q.csv"
    # Characters are code points, as Python's len counts them: q1 has 10 astral ones (40 bytes), q2 five
    # letters each followed by a combining accent (10), both at the limit; q3 has 11 two-byte ones; q4 none.
    astral, decomposed, accented = "\U0001d501" * 10, "e\u0301" * 5, "\u00e9" * 11
    questions.write_text(f"question_id,question,answer\nq1,{astral},A\nq2,{decomposed},B\nq3,{accented},C\nq4,,D\n",
                         encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        response_set_load(parsed=parse_files(responses=responses, file_format="wide", dataset="D",
                                             questions=questions), name="chars")
    assert caught.value.problems == [
        Problem("q.csv", plan.TEXT_TOO_LONG.format(question_id="q3", column="text", length=11, limit=10),
                row=4, column="text"),
    ]


def test_the_default_question_text_limit_is_100_000_characters():
    from django.conf import settings

    assert settings.QUESTION_TEXT_MAX_CHARS == 100_000
    assert settings.MAX_ID_LIST_LENGTH == 10_000
    assert settings.JSON_MAX_DEPTH == 100


@pytest.mark.django_db
def test_a_100k_deep_metadata_edit_in_the_admin_is_a_form_error_not_a_500():
    from annotate.models import Question

    catalog = make_catalog(per_subject=1)
    question = catalog.questions[0]
    admin_user = make_user("admin", staff=True)
    admin_user.is_superuser = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    url = reverse("admin:annotate_question_change", args=[question.pk])
    form = {"dataset": catalog.dataset.pk, "subject": question.subject_id, "external_id": question.external_id,
            "text": question.text, "options": json.dumps(question.options), "reference_answer": "A",
            "metadata": nested(DEEP)}
    response = client.post(url, form)
    assert response.status_code == 400  # the form again, refused, with the error
    assert "Enter a valid JSON." in response.content.decode()
    assert Question.objects.get(pk=question.pk).metadata == {"secret_level": "college"}
    form["metadata"] = json.dumps({"level": [1, [2]]})
    assert client.post(url, form).status_code == 302  # the control: a normal edit saves
    assert Question.objects.get(pk=question.pk).metadata == {"level": [1, [2]]}


def test_messages_quote_at_most_ten_ids():
    from annotate.catalog.selectors.matrix import ids_shown

    assert ids_shown(None) == "None"
    assert ids_shown([3, 1]) == "[3, 1]"
    assert ids_shown(list(range(1, 11))) == "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    assert ids_shown(list(range(1, 10_002))) == "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] and 9,991 more"
