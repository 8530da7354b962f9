"""Mark scoring and analysis runs, and upload jobs, whose worker died as failed."""
from __future__ import annotations

from argparse import ArgumentParser
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from annotate.runs import runs_reap_stale


class Command(BaseCommand):
    help = (
        "Mark running scoring and analysis runs and parsing or loading upload jobs with no progress for --minutes "
        "(default 60) as failed, so work whose worker was killed does not show 'running' forever."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--minutes", type=float, default=60.0, help="silence after which a run is stale")

    def handle(self, *args, **options) -> str:
        try:
            result = runs_reap_stale(older_than=timedelta(minutes=options["minutes"]))
        except ValueError as error:
            raise CommandError(str(error)) from error
        cancelled = f"; cancelled {result.queries_cancelled} database query(ies)" if result.queries_cancelled else ""
        return (
            f"Marked {result.total} stale run(s) failed: scoring {result.scoring_runs or 'none'}, "
            f"analysis {result.analysis_runs or 'none'}, upload jobs {result.upload_jobs or 'none'}{cancelled}"
        )
