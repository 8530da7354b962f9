"""``manage.py derive_judgments``: a study whose judgments come from a human response set."""
from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from annotate.core import counted
from annotate.management.lookups import OWNER_HELP, owner_from_option, scoring_run_from_option
from annotate.studies import DEFAULT_N_PAIRS, DerivedPreview, derived_study_create, derived_study_preview


def _counts(p: DerivedPreview) -> str:
    return (f"{p.n_pairs:,} of {counted(p.n_possible_pairs, 'same-subject pair')} "
            f"({counted(p.n_questions_shared, 'shared question')}, {counted(p.n_subjects, 'subject')}); "
            f"{p.n_persons_with_judgments} of {counted(p.n_persons, 'person', 'persons')}; "
            f"{counted(p.n_votes, 'vote')}, {p.n_no_information:,} no-information (skips), "
            f"{p.n_unanswered:,} not answered")


class Command(BaseCommand):
    help = ("Derive pairwise judgments from a human response set (per person, of two same-subject questions the "
            "one answered wrong is harder than the one answered right) and store them as a closed study of "
            "origin 'derived', compared with the methods of a scoring run.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--human-set", type=int, required=True, help="id of a response set marked as human")
        parser.add_argument("--owner", default=None, metavar="USERNAME", help=OWNER_HELP)
        parser.add_argument("--run", type=int, required=True, help="id of a finished scoring run of a model set")
        parser.add_argument("--name", default="", help="name of the new study (required unless --dry-run)")
        parser.add_argument("--pairs", type=int, default=DEFAULT_N_PAIRS,
                            help=f"pairs to draw (default {DEFAULT_N_PAIRS}; fewer when fewer exist)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the pair draw (default 0)")
        parser.add_argument("--dry-run", action="store_true", help="count and print; write nothing")

    def handle(self, *args, **options) -> str:
        run = scoring_run_from_option(options["run"])
        owner = owner_from_option(options["owner"])
        try:
            if options["dry_run"]:
                preview = derived_study_preview(human_set_id=options["human_set"], run=run,
                                                n_pairs=options["pairs"], seed=options["seed"])
                return f"Dry run: {_counts(preview)}; nothing was written. {preview.rule}"
            study, preview = derived_study_create(human_set_id=options["human_set"], run=run,
                                                  name=options["name"], n_pairs=options["pairs"],
                                                  seed=options["seed"], created_by=owner)
        except ValueError as error:
            raise CommandError(str(error)) from error
        return f"Created derived study {study.name!r} (id {study.pk}): {_counts(preview)}."
