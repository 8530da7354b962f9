"""Each dataset says how its question text is written: plain text with math
(the default, shown character for character) or Markdown with math.
Additive; existing datasets become plain text, which never hides a character."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0020_earned_completion'),
    ]

    operations = [
        migrations.AddField(
            model_name='dataset',
            name='text_format',
            field=models.CharField(choices=[('plain', 'plain text with math'), ('markdown', 'Markdown with math')], default='plain', help_text='how its questions are written: plain text is shown as written (only delimited math is typeset); Markdown is formatted, its syntax characters hidden', max_length=20),
        ),
    ]
