"""The question list's sort keys (issue 16): each question's position in a run's
list sorted by each column, both directions (:class:`annotate.models.QuestionSortKey`).

Forward: the table is created, then every stored run gets its keys computed
from its stored results (one run at a time, by
:func:`annotate.runs.services.sort_keys.sort_keys_fill`, the function new runs use;
COPY on PostgreSQL). Reverse: the table is dropped (the results are untouched).
"""
import django.db.models.deletion
from django.db import migrations, models


def fill_sort_keys(apps, schema_editor):
    from annotate.runs.services.sort_keys import sort_keys_fill

    result_model = apps.get_model("annotate", "QuestionResult")
    key_model = apps.get_model("annotate", "QuestionSortKey")
    for run_id in apps.get_model("annotate", "ScoringRun").objects.order_by("pk").values_list("pk", flat=True):
        sort_keys_fill(run_id=run_id, result_model=result_model, key_model=key_model)


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0017_response_store'),
    ]

    operations = [
        migrations.CreateModel(
            name='QuestionSortKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('column', models.CharField(max_length=40)),
                ('ascending', models.PositiveIntegerField(help_text='position in the list sorted ascending (0 = first)')),
                ('descending', models.PositiveIntegerField(help_text='position in the list sorted descending (0 = first)')),
                ('question', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='sort_keys', to='annotate.question')),
                ('run', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotate.scoringrun')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('run', 'column', 'ascending'), name='question_sort_key_ascending'), models.UniqueConstraint(fields=('run', 'column', 'descending'), name='question_sort_key_descending')],
            },
        ),
        migrations.RunPython(fill_sort_keys, migrations.RunPython.noop),
    ]
