"""``manage.py alignment_report``: write a study's alignment report bundle to a folder
(the files of the page's report.zip, the zip itself, and the plots)."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.core import counted
from annotate.management.lookups import scoring_run_from_option, study_from_option
from annotate.reports import alignment_report_compute, study_judgment_rows, write_bundle


class Command(BaseCommand):
    help = (
        "Compute a study's alignment report and write one tidy CSV per table, judgments.csv, report.json, "
        "codebook.md, report.zip holding them, and the plots (PNG and SVG) to a folder. The model pools are read "
        "from a stored pools analysis (manage.py paper_report --analyses pools computes one)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study name or id (a name is looked up first)")
        parser.add_argument("--out", required=True, type=Path, help="folder to write (created if missing)")
        parser.add_argument("--run", type=int, default=None, metavar="RUN_ID",
                            help="scoring run id (default: the run the study's pairs came from)")
        parser.add_argument("--min-votes", type=int, default=1, help="fewest votes for a consensus (default 1)")
        parser.add_argument("--tie-rule", choices=("evaluator_weight", "none"), default="evaluator_weight")
        parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap replicates (default 2000)")
        parser.add_argument("--label-key", default=None, help="question metadata key of a human difficulty label")
        parser.add_argument("--label-direction", choices=("higher-is-harder", "higher-is-easier"),
                            default="higher-is-harder",
                            help="how the label reads: higher-is-easier for a solve rate (default higher-is-harder)")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")

    def handle(self, *args, **options) -> str:
        study = study_from_option(options["study"])
        run = None if options["run"] is None else scoring_run_from_option(options["run"])
        try:
            report = alignment_report_compute(
                study=study, run=run, min_votes=options["min_votes"], tie_rule=options["tie_rule"],
                n_boot=options["n_boot"], label_key=options["label_key"], rng=options["seed"],
                label_higher_is_harder=options["label_direction"] == "higher-is-harder",
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        written = write_bundle(report, study_judgment_rows(study=study), options["out"])
        eip = report.consensus_agreement.get("eip")
        headline = "EIP: not scored"
        if eip is not None and eip.agreement is not None:
            kappa = eip.kappa.value
            headline = (f"EIP agrees with the consensus on {100 * eip.agreement:.1f}% of "
                        f"{counted(eip.n_pairs, 'pair')} "
                        f"(kappa {'undefined' if kappa is None else f'{kappa:.2f}'})")
        pools = "" if report.pools.available else "; model pools not computed yet"
        return (f"study {study.name!r}: {counted(report.study.n_pairs, 'pair')}, "
                f"{counted(report.study.n_evaluators, 'evaluator')}; {headline}{pools}; "
                f"wrote {counted(len(written), 'file')} to {options['out']}")
