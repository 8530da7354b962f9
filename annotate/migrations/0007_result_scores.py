"""Method values of QuestionResult/ModelResult move from one column per method
into ``scores`` (stored column -> value), so a method is one registry entry in
:mod:`scoring.methods` and needs no migration of its own."""
import math

from django.db import migrations, models

QUESTION_COLUMNS = (
    "eip", "eip_scaled", "simple_rank", "accuracy_difficulty", "irt_1pl", "irt_2pl", "irt_2pl_discrimination",
    "irt_mirt",
)
MODEL_COLUMNS = ("eip", "eip_scaled", "accuracy", "weighted_accuracy", "irt_1pl", "irt_2pl", "irt_mirt")


def _scores(row, columns):
    return {c: getattr(row, c) for c in columns if getattr(row, c) is not None and math.isfinite(getattr(row, c))}


def _columns_to_scores(apps, schema_editor):
    for name, columns in (("QuestionResult", QUESTION_COLUMNS), ("ModelResult", MODEL_COLUMNS)):
        model = apps.get_model("annotate", name)
        batch = []
        for row in model.objects.all().only("pk", *columns).iterator(chunk_size=5000):
            row.scores = _scores(row, columns)
            batch.append(row)
            if len(batch) >= 5000:
                model.objects.bulk_update(batch, ["scores"])
                batch = []
        if batch:
            model.objects.bulk_update(batch, ["scores"])


def _scores_to_columns(apps, schema_editor):
    for name, columns in (("QuestionResult", QUESTION_COLUMNS), ("ModelResult", MODEL_COLUMNS)):
        model = apps.get_model("annotate", name)
        for row in model.objects.all().iterator(chunk_size=5000):
            for c in columns:
                setattr(row, c, row.scores.get(c, 0.0 if (name, c) in _NOT_NULL else None))
            row.save(update_fields=list(columns))


_NOT_NULL = {("ModelResult", "eip"), ("ModelResult", "eip_scaled"), ("ModelResult", "accuracy")}


class Migration(migrations.Migration):
    dependencies = [("annotate", "0006_run_heartbeat")]

    operations = [
        migrations.AddField(
            model_name="questionresult", name="scores",
            field=models.JSONField(blank=True, default=dict, help_text="stored column -> value (see scoring.methods)"),
        ),
        migrations.AddField(
            model_name="modelresult", name="scores",
            field=models.JSONField(blank=True, default=dict, help_text="stored column -> value (see scoring.methods)"),
        ),
        # Nullable first, so that going back re-adds them as nullable columns and fills them.
        migrations.AlterField(model_name="modelresult", name="eip", field=models.FloatField(null=True)),
        migrations.AlterField(model_name="modelresult", name="eip_scaled", field=models.FloatField(null=True)),
        migrations.AlterField(model_name="modelresult", name="accuracy", field=models.FloatField(null=True)),
        migrations.RunPython(_columns_to_scores, _scores_to_columns),
        *[migrations.RemoveField(model_name="questionresult", name=c) for c in QUESTION_COLUMNS],
        *[migrations.RemoveField(model_name="modelresult", name=c) for c in MODEL_COLUMNS],
    ]
