"""The label a human-label page preselects: a column named like a difficulty,
never an answer position, an option or an id; none when no name says difficulty."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotate.analyses.services.human_labels import LabelKey, label_key_default
from annotate.models import ResponseSet

MODELS = "question_id,m1,m2\nq1,1,0\nq2,0,1\nq3,1,1\n"


def _keys(*names: str, n: int = 3) -> list[LabelKey]:
    return [LabelKey(key=name, n_questions=3, n_labelled=n, kind="numeric") for name in names]


@pytest.mark.parametrize(("names", "expected"), [
    (("answer_index", "mmlu_level"), "metadata:mmlu_level"),
    (("answer_index",), None),
    (("answer", "option_count", "question_id", "idx", "correct_option"), None),
    (("level_id", "answer_level", "option_difficulty"), None),
    (("DifficultyLevel",), "metadata:DifficultyLevel"),
    (("grade-band", "year"), "metadata:grade-band"),
    (("hardness",), "metadata:hardness"),
    (("src", "mmlu_subject", "category"), None),
])
def test_only_a_column_named_like_a_difficulty_is_preselected(names, expected):
    assert label_key_default(_keys(*names)) == expected


def test_of_several_difficulty_columns_the_best_covered_is_preselected():
    keys = [*_keys("level", n=2), *_keys("difficulty", n=3)]
    assert label_key_default(keys) == "metadata:difficulty"
    assert label_key_default([*_keys("level", n=3), *_keys("difficulty", n=3)]) == "metadata:difficulty"  # by name


def _load(tmp_path, questions: str, keep: str) -> ResponseSet:
    (tmp_path / "questions.csv").write_text(questions, encoding="utf-8")
    (tmp_path / "models.csv").write_text(MODELS, encoding="utf-8")
    call_command("load_responses", "--responses", str(tmp_path / "models.csv"), "--format", "wide", "--dataset",
                 "D", "--questions", str(tmp_path / "questions.csv"), "--keep-columns", keep, verbosity=0,
                 stdout=StringIO())
    return ResponseSet.objects.get(name="models")


def _page(client, django_user_model) -> str:
    staff = django_user_model.objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(staff)
    page = client.get(reverse("annotate:analysis_kind", kwargs={"kind": "human_labels"}))
    assert page.status_code == 200
    return page.content.decode()


@pytest.mark.django_db
def test_the_page_preselects_the_level_column_not_the_answer_position(tmp_path, client, django_user_model):
    _load(tmp_path, "question_id,answer_index,mmlu_level\nq1,3,college\nq2,0,high_school\nq3,9,other_mmlu\n",
          "answer_index,mmlu_level")
    shown = _page(client, django_user_model)
    assert '<option value="metadata:mmlu_level" selected>' in shown
    assert '<option value="metadata:answer_index">' in shown


@pytest.mark.django_db
def test_the_page_preselects_nothing_when_no_column_says_difficulty(tmp_path, client, django_user_model):
    _load(tmp_path, "question_id,answer_index\nq1,3\nq2,0\nq3,9\n", "answer_index")
    shown = _page(client, django_user_model)
    assert '<option value="" selected>choose a label</option>' in shown
    assert '<option value="metadata:answer_index">' in shown
    assert 'value="metadata:answer_index" selected' not in shown
