"""Migration 0007 moves one column per method into ``scores`` and back."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotate", "0006_run_heartbeat")]
AFTER = [("annotate", "0007_result_scores")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_existing_results_keep_every_value_in_scores():
    apps = _migrate(BEFORE)
    try:
        Dataset = apps.get_model("annotate", "Dataset")
        Question = apps.get_model("annotate", "Question")
        LanguageModel = apps.get_model("annotate", "LanguageModel")
        ResponseSet = apps.get_model("annotate", "ResponseSet")
        ScoringRun = apps.get_model("annotate", "ScoringRun")
        dataset = Dataset.objects.create(name="D")
        q1 = Question.objects.create(dataset=dataset, external_id="1")
        q2 = Question.objects.create(dataset=dataset, external_id="2")
        model = LanguageModel.objects.create(name="m")
        rs = ResponseSet.objects.create(name="rs", file_name="f.csv", checksum="c" * 64, file_format="wide")
        run = ScoringRun.objects.create(response_set=rs, status="done")
        apps.get_model("annotate", "QuestionResult").objects.create(
            run=run, question=q1, kept=True, n_observed=3, eip=0.25, eip_scaled=41.5, simple_rank=0.5,
            accuracy_difficulty=0.4, irt_1pl=-1.25, irt_2pl=None, irt_2pl_discrimination=None, irt_mirt=2.5)
        apps.get_model("annotate", "QuestionResult").objects.create(
            run=run, question=q2, kept=False, n_observed=3, eip=None, eip_scaled=100.0, simple_rank=1.0,
            accuracy_difficulty=1.0)
        apps.get_model("annotate", "ModelResult").objects.create(
            run=run, model=model, n_observed=2, eip=1.0, eip_scaled=100.0, accuracy=0.5, weighted_accuracy=0.625)

        apps = _migrate(AFTER)
        QuestionResult = apps.get_model("annotate", "QuestionResult")
        assert QuestionResult.objects.get(question__external_id="1").scores == {
            "eip": 0.25, "eip_scaled": 41.5, "simple_rank": 0.5, "accuracy_difficulty": 0.4, "irt_1pl": -1.25,
            "irt_mirt": 2.5}
        assert QuestionResult.objects.get(question__external_id="2").scores == {
            "eip_scaled": 100.0, "simple_rank": 1.0, "accuracy_difficulty": 1.0}
        assert apps.get_model("annotate", "ModelResult").objects.get().scores == {
            "eip": 1.0, "eip_scaled": 100.0, "accuracy": 0.5, "weighted_accuracy": 0.625}

        apps = _migrate(BEFORE)  # and back: the columns are filled again
        row = apps.get_model("annotate", "QuestionResult").objects.get(question__external_id="1")
        assert (row.eip, row.eip_scaled, row.irt_2pl, row.irt_mirt) == (0.25, 41.5, None, 2.5)
        assert apps.get_model("annotate", "ModelResult").objects.get().weighted_accuracy == 0.625
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
