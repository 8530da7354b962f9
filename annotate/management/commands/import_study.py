"""``manage.py import_study``: load a study exported by export_study, in one transaction."""
from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from annotate.core import JUDGMENTS_AND_SKIPS, counted, loads_bounded
from annotate.studies import study_import

DATABASE_REFUSED = "nothing was imported: the database refused a row the checks let through ({error})"
NOT_UTF8 = "{path} is not UTF-8 JSON (byte 0x{byte:02x} at offset {offset}); give the file export_study wrote"


class Command(BaseCommand):
    help = "Import a study from a JSON file written by export_study (all or nothing)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--file", required=True, type=Path, help="JSON file written by export_study")
        parser.add_argument("--rename", help="import under this study name (needed when the name exists)")
        parser.add_argument("--reuse-evaluators", action="store_true",
                            help="attach judgments to existing evaluator accounts of the same pseudonym "
                                 "(when importing back into the instance that exported the study)")

    def handle(self, *args, **options) -> str:
        path = Path(options["file"])
        try:
            document = loads_bounded(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error}") from None
        except UnicodeDecodeError as error:
            raise CommandError(NOT_UTF8.format(path=path, byte=error.object[error.start], offset=error.start)) from None
        except json.JSONDecodeError as error:
            raise CommandError(f"{path} is not JSON: {error}") from None
        try:
            result = study_import(document=document, rename=options["rename"],
                                  reuse_evaluators=options["reuse_evaluators"])
        except ValueError as error:
            raise CommandError(f"nothing was imported: {error}") from None
        except DatabaseError as error:  # the import is one transaction: it was rolled back
            raise CommandError(DATABASE_REFUSED.format(error=error)) from None
        return (f"Imported study {result.study.name!r} (id {result.study.pk}): "
                f"{counted(result.judgments, *JUDGMENTS_AND_SKIPS)}; "
                f"evaluators {result.evaluators_created} new, {result.evaluators_reused} reused; questions "
                f"{result.questions_created} new, {result.questions_reused} already here")
