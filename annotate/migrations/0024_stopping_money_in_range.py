"""Drop a money rule (budget and pay) stored beyond its column's digits.

SQLite stores any number given to a ``DecimalField``; reading back a budget
beyond 12 digits (10 before the point) or a pay beyond 8 (6 before the point),
or an infinity, raises ``decimal.InvalidOperation``. Such rows were written
before the forms checked the digits. PostgreSQL's ``numeric(12, 2)`` refuses
them, so there this changes nothing. The comparison runs in SQL, so the bad
values are never read into Python.
"""
from django.db import migrations

BUDGET_LIMIT = 10**10  # 12 digits, 2 after the point
PAY_LIMIT = 10**6  # 8 digits, 2 after the point


def drop_unreadable_money_rules(apps, schema_editor) -> None:
    table = schema_editor.quote_name(apps.get_model("annotate", "StoppingRules")._meta.db_table)
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET budget = NULL, pay_per_judgment = NULL "  # noqa: S608 (a model's own table name)
            "WHERE budget >= %s OR budget <= %s OR pay_per_judgment >= %s OR pay_per_judgment <= %s",
            [BUDGET_LIMIT, -BUDGET_LIMIT, PAY_LIMIT, -PAY_LIMIT],
        )


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0023_participation_is_simulated"),
    ]

    operations = [
        migrations.RunPython(drop_unreadable_money_rules, migrations.RunPython.noop),
    ]
