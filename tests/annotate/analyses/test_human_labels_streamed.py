"""The human-label analysis reads its run's questions a block at a time into
arrays (``run_questions``) and its result is, byte for byte, what the previous
whole-list read gave.

The reference is a frozen copy of the previous read and of the loop that used
it (``_previous_result``), kept here so the comparison never runs the code
under test.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from annotate.analyses.services import analysis_csv, analysis_run_create, analysis_run_execute, human_labels as service
from annotate.core import MMLU_LEVELS, label_value
from annotate.models import AnalysisKind, QuestionResult
from annotate.reports import run_questions, scoring_run_for_labels
from scoring.human_labels import compare_with_label
from scoring.methods import difficulty_methods
from tests.annotate.analyses.test_human_labels import sets  # noqa: F401
from tests.annotate.factories import make_catalog

pytestmark = pytest.mark.django_db

LEVELS = [1, 2.5, "high school", None, "college", 3, "elementary", "2", True, 0.5, "", 4]


def _previous_result(response_set, params: dict) -> dict:
    run = scoring_run_for_labels(response_set=response_set, run_id=params["run"])
    source, _, key = params["label"].partition(":")
    fields = ["question_id", "question__dataset__name", "question__subject__name", "scores"]
    if source == "metadata":
        fields.append(f"question__metadata__{key}")
    rows = list(QuestionResult.objects.filter(run=run).order_by("question_id").values_list(*fields))
    question_ids = np.array([r[0] for r in rows], dtype=np.int64)
    subjects = np.array([f"{r[1]} / {r[2]}" if r[2] else str(r[1]) for r in rows], dtype=object)
    scores = [r[3] for r in rows]
    human = None
    if source == "metadata":
        labels = np.array([label_value(r[4]) for r in rows], dtype=np.float64).reshape(-1)
        higher_is_harder = params["label_higher_is_harder"]
    else:
        labels, human = service._human_label(params, question_ids, lambda *a: None)
        higher_is_harder = True
    n_labelled = int(np.isfinite(labels).sum())
    margins = sorted({0.0, float(params["margin"])})
    out = {"response_set": str(response_set), "run": run.pk, "label": params["label"],
           "label_source": source, "label_key": key if source == "metadata" else None,
           "label_direction": service.HIGHER_HARDER if higher_is_harder else service.HIGHER_EASIER,
           "label_order": dict(MMLU_LEVELS) if key == "mmlu_level" else None,
           "n_questions_run": int(question_ids.size), "n_questions_labelled": n_labelled, "margins": margins,
           "n_boot": params["n_boot"], "human": human, "methods": [], "undefined_reason": None}
    if n_labelled == 0:
        out["undefined_reason"] = service.REASON_NO_LABEL.format(run=run.pk, label=params["label"])
        return out
    for m in [m for m in difficulty_methods() if any(m.difficulty_column in s for s in scores)]:
        values = m.as_harder(np.array([s.get(m.difficulty_column, np.nan) for s in scores],
                                      dtype=np.float64).reshape(-1))
        c = compare_with_label(values, labels, subjects, margins=margins,
                               label_higher_is_harder=higher_is_harder, tie_tolerance=m.tie_tolerance,
                               n_boot=params["n_boot"], rng=params["seed"])
        out["methods"].append(service.comparison_dict(m.key, c))
    return out


def _as_text(result: dict) -> bytes:
    return json.dumps(result, sort_keys=True, allow_nan=True).encode()


@pytest.fixture
def labelled_run():
    """A run of 3 subjects x 8 questions (one subject missing): labels of every kind
    (numbers, level names, a number as text, missing), stored values missing, null or partial."""
    catalog = make_catalog(subjects=("Mathematics", "Physics", "Ökonomie"), per_subject=8)
    results = {r.question_id: r for r in QuestionResult.objects.filter(run=catalog.run)}
    for k, q in enumerate(catalog.questions):
        if k % 5 != 4:
            q.metadata = {**q.metadata, "level": LEVELS[k % len(LEVELS)]}
        if k % 7 == 3:
            q.subject = None
        q.save()
        r = results[q.pk]
        if k % 6 == 1:
            r.scores = {c: v for c, v in r.scores.items() if c != "eip_scaled"}
        if k % 6 == 2:
            r.scores = {**r.scores, "irt_1pl": None}
        r.save()
    return catalog


PARAMS = {"label_higher_is_harder": True, "margin": 0.5, "n_boot": 20, "run": 0, "human_method": "accuracy",
          "seed": 3}


@pytest.mark.parametrize("higher_is_harder", [True, False])
def test_a_metadata_label_gives_the_previous_result_byte_for_byte(labelled_run, higher_is_harder):
    params = {**PARAMS, "label": "metadata:level", "label_higher_is_harder": higher_is_harder}
    expected = _previous_result(labelled_run.response_set, params)
    assert len(expected["methods"]) >= 4 and expected["n_questions_labelled"] > 10
    run = analysis_run_create(kind=AnalysisKind.HUMAN_LABELS, response_set=labelled_run.response_set,
                              params=params)
    result = analysis_run_execute(run=run).result
    assert _as_text(result) == _as_text(json.loads(json.dumps(expected)))
    for table in ("spearman", "pairs"):
        assert analysis_csv(kind=AnalysisKind.HUMAN_LABELS, result=result, table=table) == analysis_csv(
            kind=AnalysisKind.HUMAN_LABELS, result=json.loads(json.dumps(expected)), table=table)


def test_a_human_set_label_gives_the_previous_result_byte_for_byte(sets):  # noqa: F811
    models, people, _ = sets
    params = {**PARAMS, "label": f"human:{people.pk}", "margin": 0.3}
    expected = _previous_result(models, params)
    result = service.human_labels(models, params, lambda *a: None)
    assert _as_text(result) == _as_text(expected)


def test_the_read_keeps_no_row_only_arrays_and_shared_strings(labelled_run):
    run = labelled_run.run
    rq = run_questions(run=run, metadata_key="level", columns=("eip_scaled", "irt_1pl", "absent_column"),
                       chunk_size=5)
    n = QuestionResult.objects.filter(run=run).count()
    assert rq.question_ids.tolist() == sorted(QuestionResult.objects.filter(run=run).values_list(
        "question_id", flat=True))
    assert sorted(rq.scores) == ["eip_scaled", "irt_1pl"]  # a column no row holds is left out
    assert all(v.dtype == np.float64 and v.shape == (n,) for v in rq.scores.values())
    assert np.isnan(rq.scores["eip_scaled"][1]) and np.isnan(rq.scores["irt_1pl"][2])
    firsts = {}
    for s in rq.subjects:
        assert firsts.setdefault(s, s) is s  # equal subject strings are one object
    assert len(firsts) == 4  # "dataset / subject" for the three subjects, "dataset" alone without one
    assert run_questions(run=run, metadata_key=None).scores == {}


def test_the_rows_are_read_a_block_at_a_time(labelled_run, monkeypatch):
    """``run_questions`` asks the database for its rows ``chunk_size`` at a time
    (a server-side cursor on PostgreSQL), never for the whole list."""
    from django.db.models.query import QuerySet

    asked = []
    real = QuerySet.iterator

    def spy(self, chunk_size=None):
        asked.append(chunk_size)
        return real(self, chunk_size=chunk_size)

    monkeypatch.setattr(QuerySet, "iterator", spy)
    run_questions(run=labelled_run.run, metadata_key="level", columns=("eip_scaled",), chunk_size=7)
    assert asked == [7]
