"""``manage.py human_labels``: every method of a scoring run against a human difficulty label."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotate.analyses import analysis_headlines, analysis_run_create, analysis_run_execute, write_analysis_files
from annotate.api import response_set_get
from annotate.models import AnalysisKind

NO_SET = "no response set with id {value}"


class Command(BaseCommand):
    help = ("Compare every difficulty method of a scoring run with a human difficulty label: a question metadata "
            "column (metadata:KEY) or a response set of people's answers (human:ID). Prints one line per method; "
            "--out writes the tables, plot, JSON and codebook into a folder.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--response-set", type=int, required=True, help="id of the (model) response set scored")
        parser.add_argument("--label", required=True, help="metadata:KEY or human:ID")
        parser.add_argument("--label-direction", choices=("higher-is-harder", "higher-is-easier"),
                            default="higher-is-harder",
                            help="how a metadata label reads (higher-is-easier for a solve rate)")
        parser.add_argument("--margin", type=float, default=0.2, help="label margin besides 0 (default 0.2)")
        parser.add_argument("--n-boot", type=int, default=200, help="bootstrap replicates (default 200)")
        parser.add_argument("--run", type=int, default=0, help="scoring run id (default 0: the newest finished)")
        parser.add_argument("--human-method", choices=("accuracy", "irt_1pl"), default="accuracy",
                            help="human:ID labels: solve rate or 1PL on people's answers")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        parser.add_argument("--out", type=Path, default=None,
                            help="folder to write (result.json, one CSV per table, codebook.md, plot.png/svg)")

    def handle(self, *args, **options) -> str:
        response_set = response_set_get(response_set_id=options["response_set"])
        if response_set is None:
            raise CommandError(NO_SET.format(value=options["response_set"]))
        params = {"label": options["label"], "label_higher_is_harder": options["label_direction"] == "higher-is-harder",
                  "margin": options["margin"], "n_boot": options["n_boot"], "run": options["run"],
                  "human_method": options["human_method"], "seed": options["seed"]}
        try:
            run = analysis_run_create(kind=AnalysisKind.HUMAN_LABELS, response_set=response_set, params=params)
            result = analysis_run_execute(run=run).result
        except ValueError as error:
            raise CommandError(str(error)) from error
        for line in analysis_headlines(kind=AnalysisKind.HUMAN_LABELS, result=result):
            self.stdout.write(line)
        if options["out"] is not None:
            try:
                write_analysis_files(run=run, out_dir=options["out"])
            except OSError as error:
                raise CommandError(f"cannot write {options['out']}: {error.strerror}") from None
        return f"Human-label analysis {run.pk} of {response_set} against {options['label']} done."
