"""``manage.py delete_evaluator_data``: delete an evaluator's account and background, keep judgments anonymous."""
from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from annotate.core import JUDGMENTS_AND_SKIPS, counted
from annotate.studies import evaluator_by_pseudonym, evaluator_delete_personal_data


class Command(BaseCommand):
    help = (
        "Delete an evaluator's personal data (account, login, field of study, education level, qualified "
        "subjects); their judgments stay, attached to an anonymous 'deleted-evaluator-<n>'."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--pseudonym", required=True, help="the evaluator's pseudonym (username)")

    def handle(self, *args, **options) -> str:
        try:
            user = evaluator_by_pseudonym(pseudonym=options["pseudonym"])
            result = evaluator_delete_personal_data(user=user)
        except (LookupError, ValueError) as error:
            raise CommandError(str(error.args[0] if error.args else error)) from None
        return (f"Deleted the personal data of {result.pseudonym!r}: "
                f"{counted(result.judgments, *JUDGMENTS_AND_SKIPS)} in "
                f"{counted(result.participations, 'study', 'studies')} kept as {result.replacement!r}")
