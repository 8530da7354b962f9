"""Create a named evaluator in a study and print their one-time password."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from annotate.models import Study
from annotate.services.studies import evaluator_create


class Command(BaseCommand):
    help = "Create an evaluator account joined to a study; prints a password shown only once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--study", required=True, help="study name or id")

    def handle(self, *args, **options) -> str:
        key = options["study"]
        study = Study.objects.filter(pk=int(key)).first() if key.isdigit() else None
        study = study or Study.objects.filter(name=key).first()
        if study is None:
            raise CommandError(f"no study named or numbered {key!r}")
        try:
            user, password = evaluator_create(username=options["username"], study=study)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        login = f"{reverse('login')}?next={reverse('study_entry', kwargs={'study_id': study.pk})}"
        self.stdout.write(f"password (shown once): {password}")
        self.stdout.write(f"log in at: {login}")
        return f"evaluator {user.get_username()!r} joined study {study.pk} {study.name!r}"
