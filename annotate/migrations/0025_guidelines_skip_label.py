"""The default guidelines quote the skip button as it reads and leave how to
come back to the guidelines page (which says it from the study's resume
setting); studies that still hold the old default text get the new one.
The texts are copied here, as they were when this migration was written."""

from django.db import migrations, models

OLD_DEFAULT = 'You will see two questions from the same subject, side by side.\nDecide which of the two is harder to answer correctly for a well-prepared\nstudent of the subject, and press the matching button.\n\n- Judge the question, not how long it is or how it is worded.\n- You do not need to solve the questions; a careful reading is enough.\n- If you do not know the subject well enough to judge, press "Skip - not\n  qualified". A skip is not a vote; the pair goes to other evaluators.\n- Your answers are final: once you submit a pair you cannot change it.\n  Take your time before you press a button.\n- You can stop at any time and come back later with the same browser: you\n  will continue where you left off.\n'
NEW_DEFAULT = 'You will see two questions from the same subject, side by side.\nDecide which of the two is harder to answer correctly for a well-prepared\nstudent of the subject, and press the matching button.\n\n- Judge the question, not how long it is or how it is worded.\n- You do not need to solve the questions; a careful reading is enough.\n- If you do not know the subject well enough to judge, press "Skip — not qualified".\n  A skip is not a vote (and not an answer towards a completion code); the pair\n  goes to other evaluators.\n- Your answers are final: once you submit a pair you cannot change it.\n  Take your time before you press a button.\n- You can stop at any time; how to come back is said below.\n'


def forwards(apps, schema_editor):
    apps.get_model("annotate", "Study").objects.filter(guidelines=OLD_DEFAULT).update(guidelines=NEW_DEFAULT)


def backwards(apps, schema_editor):
    apps.get_model("annotate", "Study").objects.filter(guidelines=NEW_DEFAULT).update(guidelines=OLD_DEFAULT)


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0024_stopping_money_in_range"),
    ]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="guidelines",
            field=models.TextField(default=NEW_DEFAULT, help_text="Markdown"),
        ),
        migrations.RunPython(forwards, backwards),
    ]
