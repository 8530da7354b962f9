"""Migration 0017 writes each response set's Response rows into its matrix store,
then drops the table; the migrated sets give the same matrix and the same EIP scores."""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from scoring import eip

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("annotate", "0016_adaptive_studies")]
AFTER = [("annotate", "0017_response_store")]

# question x model credits; NaN = no Response row. Rows/columns are created out of id order on purpose.
BINARY = np.array([[1, 0, 1, 1], [0, 0, 1, np.nan], [1, 1, 1, 0], [0, np.nan, 0, 1], [1, 0, 0, 1]])
PARTIAL = np.array([[0.5, 0.1, 1.0], [1 / 3, np.nan, 0.0], [0.25, 0.75, 0.999999999]])


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _old_matrix(cells):
    """The matrix the old selector built: rows in ascending question id, columns in ascending model id."""
    questions = sorted({q for q, _, _ in cells})
    models = sorted({m for _, m, _ in cells})
    R = np.full((len(questions), len(models)), np.nan)
    for q, m, c in cells:
        R[questions.index(q), models.index(m)] = c
    return R, questions, models


def test_existing_response_sets_keep_every_cell_and_score_as_before(settings):
    apps = _migrate(BEFORE)
    try:
        Dataset = apps.get_model("annotate", "Dataset")
        Question = apps.get_model("annotate", "Question")
        LanguageModel = apps.get_model("annotate", "LanguageModel")
        ResponseSet = apps.get_model("annotate", "ResponseSet")
        Response = apps.get_model("annotate", "Response")
        dataset = Dataset.objects.create(name="D")
        questions = [Question.objects.create(dataset=dataset, external_id=f"q{i}") for i in range(5)]
        models = [LanguageModel.objects.create(name=f"m{j}") for j in range(4)]
        cells = {}
        for name, matrix, order in (("binary", BINARY, [4, 0, 3, 1, 2]), ("partial", PARTIAL, [2, 0, 1])):
            rs = ResponseSet.objects.create(name=name, file_name=f"{name}.csv", checksum=name.ljust(64, "0"),
                                            file_format="wide", n_questions=matrix.shape[0],
                                            n_models=matrix.shape[1], n_responses=int((~np.isnan(matrix)).sum()))
            rows = [(questions[order[i]].pk, models[j].pk, float(matrix[i, j]))
                    for i in range(matrix.shape[0]) for j in range(matrix.shape[1]) if not np.isnan(matrix[i, j])]
            Response.objects.bulk_create(Response(response_set_id=rs.pk, question_id=q, model_id=m, credit=c)
                                         for q, m, c in reversed(rows))
            cells[rs.pk] = rows
        expected = {pk: _old_matrix(rows) for pk, rows in cells.items()}

        _migrate(AFTER)
        from annotate.catalog.matrix_store import store_info, store_path
        from annotate.catalog.selectors.matrix import response_matrix, response_matrix_compact
        from annotate.models import ResponseSet as Current
        for pk, (R, question_ids, model_ids) in expected.items():
            rs = Current.objects.get(pk=pk)
            m = response_matrix(response_set=rs)
            np.testing.assert_array_equal(m.R, R)  # every cell bit-equal, NaN where there was no row
            assert m.question_ids.tolist() == question_ids and m.model_ids.tolist() == model_ids
            assert rs.n_responses == len(cells[pk])
            compact = response_matrix_compact(response_set=rs).R
            before, after = eip(R), eip(compact)
            np.testing.assert_array_equal(after.difficulty, before.difficulty)
            np.testing.assert_array_equal(after.competency, before.competency)
            assert after.n_iter == before.n_iter
            assert store_path(rs).parent == settings.EIP_STORE_DIR
        assert store_info(store_path(Current.objects.get(name="binary")))["credit_dtype"] == "uint8"
        assert store_info(store_path(Current.objects.get(name="partial")))["credit_dtype"] == "float64"
        assert "annotate_response" not in connection.introspection.table_names()

        apps = _migrate(BEFORE)  # and back: the Response rows are written again from the stores
        Response = apps.get_model("annotate", "Response")
        for pk, rows in cells.items():
            assert sorted(Response.objects.filter(response_set_id=pk).values_list(
                "question_id", "model_id", "credit")) == sorted(rows)
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
