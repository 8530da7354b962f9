"""``manage.py import_judgments``: pairwise judgments made elsewhere, as a study of origin "imported"."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.core import JUDGMENTS_AND_SKIPS, counted
from annotate.management.lookups import OWNER_HELP, owner_from_option, scoring_run_from_option
from annotate.studies import (
    JUDGMENT_FORMATS as FORMATS,
    judgment_import_file,
    judgments_import,
    study_evaluator_count,
    study_judgment_count,
)

ERR_GROUPS = "give one --group for every file, or one for all; got {groups} group(s) for {files} file(s)"


class Command(BaseCommand):
    help = ("Import pairwise 'which is harder' judgments made elsewhere (CSV or JSON Lines with evaluator, group, "
            "dataset_a, question_a, dataset_b, question_b, harder = a/b/skip, submitted_at, seconds; or a Label "
            "Studio pairwise export) as a closed study of origin 'imported'. "
            "See annotate/studies/services/judgment_import.py.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--file", action="append", type=Path, required=True,
                            help="a file to import (repeat for several; imported together)")
        parser.add_argument("--format", choices=FORMATS,
                            help="format of every file (default: by extension: .csv, .jsonl, .json = Label Studio)")
        parser.add_argument("--group", action="append", default=[],
                            help="group of the evaluators without a group column value: once for every file, or "
                                 "once per --file in the same order (e.g. two Label Studio exports, crowd and "
                                 "experts)")
        parser.add_argument("--owner", default=None, metavar="USERNAME", help=OWNER_HELP)
        parser.add_argument("--run", type=int, required=True, help="id of the scoring run whose methods to compare")
        parser.add_argument("--name", required=True, help="name of the new study")

    def handle(self, *args, **options) -> str:
        run = scoring_run_from_option(options["run"])
        owner = owner_from_option(options["owner"])
        paths, groups = options["file"], options["group"] or [""]
        if len(groups) not in (1, len(paths)):
            raise CommandError(ERR_GROUPS.format(groups=len(groups), files=len(paths)))
        groups = groups * len(paths) if len(groups) == 1 else groups
        files = []
        for path, group in zip(map(Path, paths), groups, strict=True):  # call_command() passes str
            try:
                files.append(judgment_import_file(name=path.name, size=path.stat().st_size, read=path.read_bytes,
                                                  format=options["format"], group=group))
            except OSError as error:
                raise CommandError(f"cannot read {path}: {error.strerror}") from None
            except ValueError as error:
                raise CommandError(str(error)) from None
        try:
            study = judgments_import(files=files, run=run, name=options["name"], created_by=owner)
        except ValueError as error:
            raise CommandError(str(error)) from error
        n_evaluators = study_evaluator_count(study=study)
        n_judgments = study_judgment_count(study=study)
        return (f"Imported study {study.name!r} (id {study.pk}): {counted(study.n_pairs, 'pair')}, "
                f"{counted(n_evaluators, 'evaluator')}, {counted(n_judgments, *JUDGMENTS_AND_SKIPS)}.")
