"""Change a study's datasets, subjects or number of pairs before its first judgment."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.core import counted
from annotate.management.lookups import datasets_from_option, study_from_option, subjects_from_option
from annotate.studies import study_scope_update, study_subject_count


class Command(BaseCommand):
    help = (
        "Change a study's datasets, subjects or number of pairs and draw its pairs again (same run, seed and "
        "strategy). Refused once the study has a judgment: a different scope is then a new study (create_study)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study name (or id)")
        parser.add_argument("--datasets", nargs="+", required=True, metavar="DATASET", help="dataset names")
        parser.add_argument("--subjects", nargs="*", default=None, metavar="SUBJECT",
                            help="subject names (default: every subject of the datasets)")
        parser.add_argument("--pairs", type=int, default=None, help="number of pairs (default: unchanged)")

    def handle(self, *args, **options) -> str:
        study = study_from_option(options["study"])
        datasets = datasets_from_option(options["datasets"])
        subjects = None if options["subjects"] is None else subjects_from_option(options["subjects"])
        try:
            study = study_scope_update(study=study, datasets=datasets, subjects=subjects, n_pairs=options["pairs"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        return (f"study {study.pk} {study.name!r}: {counted(study.n_pairs, 'pair')} drawn again from "
                f"{len(datasets)} dataset(s), {study_subject_count(study=study)} subject(s)")


