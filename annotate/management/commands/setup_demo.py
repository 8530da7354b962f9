"""``manage.py setup_demo``: a ready demo site (data, scores, study, logins, links)."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from annotate.catalog import LoadError, problems_text
from annotate.demo import N_SIMULATED, SIMULATED_PREFIX, demo_setup
from annotate.management.options import add_base_url_option, checked_base_url
from annotate.management.progress import scoring_progress
from annotate.runs import DEFAULT_PARAMS, parse_methods
from scoring.methods import method_keys


class Command(BaseCommand):
    help = (
        "Load the built-in demo response set (or --data FOLDER in the MMLU-Pro layout), score it, create a "
        "70-pair study judged by three simulated evaluators (seeded votes, so the report has numbers), an admin, "
        "a researcher and an evaluator login and an invitation link, and print them. "
        "Safe to run again: it reuses what exists and resets the three demo passwords."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--data", type=Path, help="folder in the MMLU-Pro layout (default: the built-in demo)")
        parser.add_argument("--dataset", help="dataset name (default: EIP-demo, or the folder name)")
        parser.add_argument("--password", help="password for all three demo logins (default: random, printed)")
        add_base_url_option(parser, purpose="the printed links")
        parser.add_argument("--pairs", type=int, default=70, help="pairs in the demo study (default 70)")
        parser.add_argument("--seed", type=int, default=1,
                            help="seed of the pair sampler and of the simulated evaluators' votes (default 1)")
        parser.add_argument("--mirt-epochs", type=int, default=DEFAULT_PARAMS["mirt_epochs"],
                            help="MIRT epochs of the scoring run (default 1000)")
        parser.add_argument("--methods", default=",".join(method_keys()),
                            help=f"scoring methods, comma-separated subset of {','.join(method_keys())} "
                                 "(eip and accuracy always run; default: all)")

    def handle(self, *args, **options) -> str:
        base = checked_base_url(options["base_url"])
        try:
            with scoring_progress(self, options["verbosity"]) as progress:
                demo = demo_setup(
                    folder=options["data"], dataset=options["dataset"], password=options["password"],
                    n_pairs=options["pairs"], seed=options["seed"], params=self._params(options),
                    stage=lambda text: self.stderr.write(text), progress=progress,
                )
        except LoadError as error:
            raise CommandError(problems_text(error)) from error
        except ValueError as error:
            raise CommandError(str(error)) from error
        self._print(demo, base)
        rs = demo.response_set
        return (
            f"demo ready: {rs} ({rs.n_questions:,} questions x {rs.n_models} models) "
            f"{'loaded' if demo.response_set_created else 'reused'}, run {demo.run.pk} "
            f"{'scored' if demo.run_created else 'reused'}, study {demo.study.name!r} "
            f"({demo.study.n_pairs} pairs) {'created' if demo.study_created else 'reused'}, "
            f"{demo.simulated_votes} simulated votes, 3 logins"
        )

    @staticmethod
    def _params(options: dict) -> dict:
        return {"mirt_epochs": options["mirt_epochs"], "methods": parse_methods(options["methods"])}

    def _print(self, demo, base: str) -> None:
        write = self.stdout.write
        write("Logins (demo only; the passwords are reset every time setup_demo runs):")
        for login in demo.logins:
            write(f"  {login.role:<26} username {login.username:<11} password {login.password}")
        urls = (
            ("site", reverse("annotate:home")),
            ("log in", reverse("login")),
            ("admin", reverse("admin:index")),
            ("results", reverse("annotate:results")),
            ("study (staff view)", reverse("annotate:study_manage", kwargs={"study_id": demo.study.pk})),
            ("study report", reverse("annotate:study_report", kwargs={"study_id": demo.study.pk})),
            ("study invitation", reverse("annotate:study_join", kwargs={"token": demo.invitation.token})),
        )
        write(f"Simulated evaluators: {SIMULATED_PREFIX}1 to {SIMULATED_PREFIX}{N_SIMULATED} judged every pair "
              f"with seeded votes ({demo.simulated_votes} cast now) so that the report has numbers; they are not "
              "people and cannot log in. Exclude them on the study's page before real evaluators start.")
        write("URLs:")
        for label, path in urls:
            write(f"  {label:<19} {base}{path}")
