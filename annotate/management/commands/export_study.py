"""``manage.py export_study``: write a whole study to one JSON file (see annotate.studies.services.study_transfer)."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.core import JUDGMENTS_AND_SKIPS, counted
from annotate.management.lookups import study_from_option
from annotate.studies import ExportCounts, study_export_chunks


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
        counts = ExportCounts()
        chunks = study_export_chunks(study=study, counts=counts)
        out = Path(options["out"])
        if str(out) == "-":
            for chunk in chunks:
                self.stdout.write(chunk, ending="")
            return ""
        try:
            with out.open("w", encoding="utf-8") as file:
                file.writelines(chunks)
        except OSError as error:
            raise CommandError(f"cannot write {out}: {error}") from None
        return (f"Exported study {study.name!r}: {counted(counts.n_pairs, 'pair')}, "
                f"{counted(counts.n_evaluators, 'evaluator')}, {counted(counts.n_judgments, *JUDGMENTS_AND_SKIPS)}, "
                f"{counted(counts.n_questions, 'question')} to {out}")
