"""Create a named evaluator in a study and print their one-time password."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from annotate.management.lookups import study_from_option
from annotate.management.options import add_base_url_option, checked_base_url
from annotate.studies import evaluator_create


class Command(BaseCommand):
    help = "Create an evaluator account joined to a study; prints a password shown only once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--study", required=True, help="study name or id (a name is looked up first)")
        add_base_url_option(parser, purpose="the printed log-in link")

    def handle(self, *args, **options) -> str:
        base = checked_base_url(options["base_url"])
        study = study_from_option(options["study"])
        try:
            user, password = evaluator_create(username=options["username"], study=study)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        login = f"{base}{reverse('login')}?next={reverse('annotate:study_entry', kwargs={'study_id': study.pk})}"
        self.stdout.write(f"password (shown once): {password}")
        self.stdout.write(f"log in at: {login}")
        return f"evaluator {user.get_username()!r} joined study {study.pk} {study.name!r}"
