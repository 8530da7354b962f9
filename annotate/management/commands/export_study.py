"""``manage.py export_study``: write a whole study to one JSON file (see annotate.studies.services.study_transfer)."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.management.lookups import study_from_option
from annotate.studies import dump_export, study_export


class Command(BaseCommand):
    help = (
        "Export a study (questions, scoring-run context, pairs, evaluators' pseudonyms and backgrounds, "
        "judgments) to one JSON file that import_study loads into another instance."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--study", required=True, help="study name or id (a name is looked up first)")
        parser.add_argument("--out", required=True, type=Path, help="JSON file to write ('-' for stdout)")

    def handle(self, *args, **options) -> str:
        study = study_from_option(options["study"])
        document = study_export(study=study)
        text = dump_export(document)
        out = Path(options["out"])
        if str(out) == "-":
            self.stdout.write(text, ending="")
            return ""
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"cannot write {out}: {error}") from None
        n_judgments = sum(len(e["judgments"]) for e in document["evaluators"])
        return (f"Exported study {study.name!r}: {len(document['pairs'])} pairs, "
                f"{len(document['evaluators'])} evaluators, {n_judgments} judgments and skips, "
                f"{len(document['questions'])} questions to {out}")
