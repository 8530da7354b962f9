"""Stored JSON on the admin's read-only pages reads as "key: value" rows, never as a raw JSON box.

Cast: ``boss`` (superuser) on the change page of every admin whose model has a
JSON field, each with one stored row; the catalog's editable question and
model metadata are the two JSON fields still typed as JSON (listed below).
"""
from __future__ import annotations

import json

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import models
from django.urls import reverse

from annotate.core.admin import json_html
from annotate.models import (
    AnalysisRun,
    MethodResult,
    ModelResult,
    QuestionResult,
    ResponseSet,
    ScoringRun,
    Study,
)
from tests.annotate.factories import client_for, make_catalog

pytestmark = pytest.mark.django_db

#: JSON fields an admin still edits as JSON text (free-form, nested question and model metadata; options).
TYPED_AS_JSON = {("question", "options"), ("question", "metadata"), ("languagemodel", "metadata")}


def test_json_html_renders_mappings_lists_and_scalars_as_text():
    assert str(json_html({"alpha": 0.85, "methods": ["eip", "irt_1pl"], "seed": None, "ok": True})) == (
        '<dl class="json"><dt>alpha</dt><dd>0.85</dd><dt>methods</dt><dd>eip, irt_1pl</dd>'
        "<dt>seed</dt><dd>–</dd><dt>ok</dt><dd>yes</dd></dl>")
    assert str(json_html([{"file": "a.csv", "row": 3}, [1, 2]])) == (
        '<ol class="json"><li><dl class="json"><dt>file</dt><dd>a.csv</dd><dt>row</dt><dd>3</dd></dl></li>'
        "<li>1, 2</li></ol>")
    assert str(json_html({})) == str(json_html([])) == "–"
    assert str(json_html({"<b>": "<script>x</script>"})) == (
        '<dl class="json"><dt>&lt;b&gt;</dt><dd>&lt;script&gt;x&lt;/script&gt;</dd></dl>')


@pytest.fixture
def rows() -> dict[type[models.Model], models.Model]:
    """One stored row with non-empty JSON of every model an admin page shows."""
    catalog = make_catalog(per_subject=1)
    rs = catalog.response_set
    ResponseSet.objects.filter(pk=rs.pk).update(options={"metric": "credit", "columns": ["model", "score"]},
                                                summary={"warnings": ["row 3: blank"], "n_rows": 12})
    run = catalog.run
    ScoringRun.objects.filter(pk=run.pk).update(params={"alpha": 0.85, "tol": 1e-10},
                                                diagnostics={"eip": {"n_iter": 12}})
    MethodResult.objects.create(run=run, method="eip", n_iter=12, converged=True, residual=1e-11, duration_s=0.5,
                                notes={"dropped": 2})
    analysis = AnalysisRun.objects.create(kind="rank_changes", response_set=rs, params={"alpha": 0.85},
                                          params_key="k" * 64)
    study = Study.objects.create(name="Main", scoring_run=run, seed=1, n_pairs=1)
    return {ResponseSet: rs, ScoringRun: run, AnalysisRun: analysis, QuestionResult: run.question_results.first(),
            ModelResult: run.model_results.first(), Study: study}


def _json_fields(model: type[models.Model]) -> list[str]:
    return [f.name for f in model._meta.get_fields() if isinstance(f, models.JSONField)]


def test_every_admin_page_of_a_model_with_json_shows_it_formatted(rows):
    boss = get_user_model().objects.create_superuser(username="boss", password=None)
    client = client_for(boss)
    checked = set()
    for model in admin.site._registry:
        fields = [f for f in _json_fields(model) if (model._meta.model_name, f) not in TYPED_AS_JSON]
        if not fields or model not in rows:
            continue
        obj = model.objects.get(pk=rows[model].pk)
        page = client.get(reverse(f"admin:annotate_{model._meta.model_name}_change", args=[obj.pk])).content.decode()
        for name in fields:
            value = getattr(obj, name)
            assert f'<textarea name="{name}"' not in page, (model, name)
            if value and model is not Study:  # the study's onboarding questions are tick boxes
                assert json.dumps(value) not in page and str(json_html(value)) in page, (model, name)
            checked.add((model._meta.model_name, name))
        if model is ScoringRun:  # the method results' notes, in the run page's inline
            assert str(json_html({"dropped": 2})) in page and '{"dropped": 2}' not in page
    assert checked >= {("responseset", "options"), ("responseset", "summary"), ("scoringrun", "params"),
                       ("scoringrun", "diagnostics"), ("analysisrun", "params"), ("questionresult", "scores"),
                       ("modelresult", "scores"), ("study", "onboarding_questions")}
    every = {(m._meta.model_name, f) for m in admin.site._registry if m._meta.app_label == "annotate"
             for f in _json_fields(m)}
    assert every - checked - TYPED_AS_JSON <= {("analysisrun", "result"), ("uploadjob", "files"),
                                               ("uploadjob", "options"), ("uploadjob", "problems")}


def test_the_json_boxes_left_say_what_they_hold_with_an_example_and_show_the_stored_value_formatted():
    catalog = make_catalog(per_subject=1)
    question, model = catalog.questions[0], catalog.models[0]
    model.metadata = {"inferred": ["family"]}
    model.save()
    client = client_for(get_user_model().objects.create_superuser(username="boss", password=None))
    page = client.get(reverse("admin:annotate_question_change", args=[question.pk])).content.decode()
    assert 'The answer options in order, as a JSON list of texts, e.g. ["Paris", "Lyon", "Nice", "Lille"].' in page
    assert 'Extra columns as a JSON object of name: value, e.g. {"level": 2, "source": "exam"}.' in page
    assert str(json_html(question.options)) == "option a of 0-0, option b of 0-0, option c of 0-0, option d of 0-0"
    assert f"<div class=\"readonly\">{json_html(question.options)}</div>" in page
    assert '<div class="readonly"><dl class="json"><dt>secret_level</dt><dd>college</dd></dl></div>' in page
    page = client.get(reverse("admin:annotate_languagemodel_change", args=[model.pk])).content.decode()
    assert '<div class="readonly"><dl class="json"><dt>inferred</dt><dd>family</dd></dl></div>' in page
