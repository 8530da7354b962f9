"""Migration 0018 gives every stored run the question list's sort keys: the
migrated runs list their questions in the order of their stored values."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotate", "0017_response_store")]
AFTER = [("annotate", "0018_hsort_question_sort_keys")]

# per run: external id -> (n_observed, scores); ties (2.5 twice, n_observed 4 three times) and gaps
RUNS = {
    "first": {"a": (4, {"eip_scaled": 2.5, "irt_1pl": -1.0}), "b": (2, {"eip_scaled": 7.0}),
              "c": (4, {"eip_scaled": 2.5, "irt_1pl": 3.0}), "d": (4, {}), "e": (1, {"eip_scaled": -0.5})},
    "second": {"a": (3, {"eip_scaled": 1.0}), "c": (5, {"eip_scaled": 0.0}), "e": (3, {"eip_scaled": 9.0})},
}


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_stored_runs_get_keys_in_the_order_of_their_values():
    apps = _migrate(BEFORE)
    try:
        Dataset = apps.get_model("annotate", "Dataset")
        Question = apps.get_model("annotate", "Question")
        ResponseSet = apps.get_model("annotate", "ResponseSet")
        ScoringRun = apps.get_model("annotate", "ScoringRun")
        QuestionResult = apps.get_model("annotate", "QuestionResult")
        dataset = Dataset.objects.create(name="D")
        # created e, d, c, b, a: ids run against the names
        questions = {name: Question.objects.create(dataset=dataset, external_id=name) for name in "edcba"}
        rs = ResponseSet.objects.create(name="s", file_name="s.csv", checksum="s" * 64, file_format="wide")
        runs = {}
        for label, rows in RUNS.items():
            runs[label] = ScoringRun.objects.create(response_set=rs, status="done").pk
            for name, (n, scores) in rows.items():
                QuestionResult.objects.create(run_id=runs[label], question=questions[name], kept=True,
                                              n_observed=n, scores=scores)
        empty = ScoringRun.objects.create(response_set=rs, status="failed").pk
        q = {name: question.pk for name, question in questions.items()}  # a has the largest id

        _migrate(AFTER)
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # the later, additive ones: current models
        from annotate.models import QuestionSortKey, ScoringRun as Current
        from annotate.runs.selectors.results import run_questions

        def listed(label, sort, direction):
            return [r.question.external_id for r in run_questions(run=Current.objects.get(pk=runs[label]),
                                                                  sort=sort, direction=direction)]

        # first run, eip_scaled: b 7.0 > {a, c} 2.5 (c has the smaller id) > e -0.5; d undefined
        assert listed("first", "eip_scaled", "desc") == ["b", "c", "a", "e", "d"]
        assert listed("first", "eip_scaled", "asc") == ["e", "c", "a", "b", "d"]
        # irt_1pl: c 3.0 > a -1.0, then undefined by id: e, d, b
        assert listed("first", "irt_1pl", "desc") == ["c", "a", "e", "d", "b"]
        assert listed("first", "irt_1pl", "asc") == ["a", "c", "e", "d", "b"]
        # n_observed: {d, c, a} 4 by id, b 2, e 1
        assert listed("first", "n_observed", "desc") == ["d", "c", "a", "b", "e"]
        assert listed("first", "n_observed", "asc") == ["e", "b", "d", "c", "a"]
        assert listed("second", "eip_scaled", "desc") == ["e", "a", "c"]
        assert listed("second", "n_observed", "asc") == ["e", "a", "c"]  # 3, 3 (e has the smaller id), 5
        keys = QuestionSortKey.objects.filter(run_id=runs["first"])
        assert sorted(keys.values_list("column", flat=True).distinct()) == ["eip_scaled", "irt_1pl", "n_observed"]
        assert keys.get(column="eip_scaled", question_id=q["d"]).ascending == 4  # undefined: last
        assert not QuestionSortKey.objects.filter(run_id=empty).exists()
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
