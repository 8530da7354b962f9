"""Response sets move from one ``Response`` row per cell to a matrix store per set.

Forward: membership tables (question -> row, model -> column) are created;
each existing response set's Response rows are read (one set at a time,
streamed from the cursor) and written as its Zarr store
(:mod:`annotate.catalog.matrix_store`) with rows in ascending question id
and columns in ascending model id (the order ``response_matrix`` always
used), uint8 when every credit is 0/1, else float32; then the Response table
is dropped. Dropping it (rather than keeping it empty) leaves no second place
where cells could be written or read; the reverse migration recreates it
from the stores.
"""
from itertools import chain

import django.db.models.deletion
import numpy as np
from django.db import migrations, models

FETCH = 100_000


def _cells(schema_editor, table: str, response_set_id: int) -> np.ndarray:
    """(question id, model id, credit) of one set as a float64 array, streamed from the cursor."""
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {quote('question_id')}, {quote('model_id')}, {quote('credit')} FROM {quote(table)} "
            f"WHERE {quote('response_set_id')} = %s", [response_set_id])
        batches = iter(lambda: cursor.fetchmany(FETCH), [])
        flat = np.fromiter(chain.from_iterable(chain.from_iterable(batches)), dtype=np.float64)
    return flat.reshape(-1, 3)


def responses_to_store(apps, schema_editor):
    from annotate.catalog import matrix_store
    ResponseSet = apps.get_model("annotate", "ResponseSet")
    Response = apps.get_model("annotate", "Response")
    RowOf = apps.get_model("annotate", "ResponseSetQuestion")
    ColumnOf = apps.get_model("annotate", "ResponseSetModel")
    for pk in ResponseSet.objects.order_by("pk").values_list("pk", flat=True):
        cells = _cells(schema_editor, Response._meta.db_table, pk)
        question_ids, rows = np.unique(cells[:, 0].astype(np.int64), return_inverse=True)
        model_ids, columns = np.unique(cells[:, 1].astype(np.int64), return_inverse=True)
        temp = matrix_store.temp_store_path(pk)
        matrix_store.write_cells(temp, rows, columns, cells[:, 2], n_questions=question_ids.size,
                                 n_models=model_ids.size, response_set=pk)
        matrix_store.store_publish(temp, pk)
        RowOf.objects.bulk_create((RowOf(response_set_id=pk, question_id=int(q), row=i)
                                   for i, q in enumerate(question_ids.tolist())), batch_size=5000)
        ColumnOf.objects.bulk_create(ColumnOf(response_set_id=pk, model_id=int(m), column=j)
                                     for j, m in enumerate(model_ids.tolist()))
        ResponseSet.objects.filter(pk=pk).update(
            n_questions=question_ids.size, n_models=model_ids.size, n_responses=cells.shape[0])


def store_to_responses(apps, schema_editor):
    from annotate.catalog import matrix_store
    ResponseSet = apps.get_model("annotate", "ResponseSet")
    Response = apps.get_model("annotate", "Response")
    RowOf = apps.get_model("annotate", "ResponseSetQuestion")
    ColumnOf = apps.get_model("annotate", "ResponseSetModel")
    for pk in ResponseSet.objects.order_by("pk").values_list("pk", flat=True):
        path = matrix_store.store_path(pk)
        if not path.is_dir():
            continue
        question_of = dict(RowOf.objects.filter(response_set_id=pk).values_list("row", "question_id"))
        model_of = dict(ColumnOf.objects.filter(response_set_id=pk).values_list("column", "model_id"))
        dense = matrix_store.read_dense(path)
        rows, columns = np.nonzero(~np.isnan(dense))
        Response.objects.bulk_create(
            (Response(response_set_id=pk, question_id=question_of[i], model_id=model_of[j], credit=float(dense[i, j]))
             for i, j in zip(rows.tolist(), columns.tolist())), batch_size=5000)


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0016_adaptive_studies'),
    ]

    atomic = True

    operations = [
        migrations.AlterField(
            model_name='responseset',
            name='n_responses',
            field=models.PositiveBigIntegerField(default=0, help_text='observed cells of the matrix'),
        ),
        migrations.CreateModel(
            name='ResponseSetModel',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('column', models.PositiveIntegerField()),
                ('model', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='response_set_columns', to='annotate.languagemodel')),
                ('response_set', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='model_columns', to='annotate.responseset')),
            ],
        ),
        migrations.CreateModel(
            name='ResponseSetQuestion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('row', models.PositiveIntegerField()),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='response_set_rows', to='annotate.question')),
                ('response_set', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='question_rows', to='annotate.responseset')),
            ],
        ),
        migrations.AddConstraint(
            model_name='responsesetmodel',
            constraint=models.UniqueConstraint(fields=('response_set', 'model'), name='response_set_model_unique'),
        ),
        migrations.AddConstraint(
            model_name='responsesetmodel',
            constraint=models.UniqueConstraint(fields=('response_set', 'column'), name='response_set_column_unique'),
        ),
        migrations.AddConstraint(
            model_name='responsesetquestion',
            constraint=models.UniqueConstraint(fields=('response_set', 'question'), name='response_set_question_unique'),
        ),
        migrations.AddConstraint(
            model_name='responsesetquestion',
            constraint=models.UniqueConstraint(fields=('response_set', 'row'), name='response_set_row_unique'),
        ),
        migrations.RunPython(responses_to_store, store_to_responses),
        migrations.DeleteModel(
            name='Response',
        ),
    ]
