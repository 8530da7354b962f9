"""``manage.py score_responses``: run every difficulty method on a response set, inline."""
from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError

from annotate.catalog import (
    dataset_ids_by_name,
    diagnostics_line,
    model_ids_by_name,
    response_set_by_key,
    response_set_labels,
)
from annotate.management.progress import scoring_progress
from annotate.models import ResponseSet, RunStatus, ScoringRun
from annotate.runs import (
    DEFAULT_PARAMS,
    parse_methods,
    required_methods,
    run_method_results,
    scoring_run_execute,
    scoring_run_request,
)
from scoring.methods import method_keys

NO_RESPONSE_SET = "no response set named {name!r}{version}; known: {known}"
UNKNOWN_NAMES = "unknown {what} {names}"
ALREADY_RUNNING = "An identical scoring run ({run}) is already running; not started again."


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def run_summary(run: ScoringRun) -> str:
    """``run 7 on EIP-demo v1: done; eip 11 iter 0.01 s, ...``."""
    parts = []
    for m in run_method_results(run=run):
        iterations = f" {m.n_iter} iter" if m.n_iter is not None else ""
        parts.append(f"{m.method}{iterations} {m.duration_s:.2f} s")
    summary = f"run {run.pk} on {run.response_set}: {run.status}; " + ", ".join(parts)
    d = run.diagnostics
    if d.get("n_cells"):
        summary += ". " + diagnostics_line(
            n_cells=d["n_cells"], n_missing=d["n_missing"], n_low_coverage=d["n_low_coverage"],
            n_components=d["n_components"], min_models=d["min_models"],
        )
    return summary


class Command(BaseCommand):
    help = (
        "Score a response set with EIP and the baselines (simple rank, accuracy, dataset-weighted accuracy, "
        "1PL, 2PL, MIRT) and store the results; runs inline with a progress bar."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs):
        # --version here means the response set's version, not Django's.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--response-set", required=True,
                            help="response set name, 'NAME vN' (name and version) or id")
        parser.add_argument("--version", type=int, help="response set version (default: the latest)")
        parser.add_argument("--models", help="comma-separated model names (default: every model)")
        parser.add_argument("--datasets", help="comma-separated dataset names (default: every dataset)")
        parser.add_argument("--alpha", type=float, default=DEFAULT_PARAMS["alpha"],
                            help="EIP damping factor in (0, 1) (default 0.85)")
        parser.add_argument("--tol", type=float, default=DEFAULT_PARAMS["tol"], help="EIP L1 tolerance")
        parser.add_argument("--mirt-epochs", type=int, default=DEFAULT_PARAMS["mirt_epochs"],
                            help="MIRT Adam epochs (default 1000)")
        parser.add_argument("--mirt-seed", type=int, default=DEFAULT_PARAMS["mirt_seed"], help="MIRT seed (default 0)")
        parser.add_argument("--mirt-seeds", type=int, default=DEFAULT_PARAMS["mirt_seeds"],
                            help=f"MIRT fits, seeds mirt-seed + 0, 1, ...; their mean is stored "
                                 f"(default and most {DEFAULT_PARAMS['mirt_seeds']})")
        parser.add_argument("--min-models", type=int, default=DEFAULT_PARAMS["min_models"],
                            help="flag questions answered by fewer models as low-coverage (default 3)")
        keys, required = ",".join(method_keys()), " and ".join(required_methods())
        parser.add_argument("--methods", default=keys,
                            help=f"comma-separated subset of {keys} ({required} always run)")

    def handle(self, *args, **options) -> str:
        response_set = self._response_set(options["response_set"], options["version"])
        model_ids = self._ids(model_ids_by_name, _names(options["models"]), "models")
        dataset_ids = self._ids(dataset_ids_by_name, _names(options["datasets"]), "datasets")
        params = {
            "alpha": options["alpha"], "tol": options["tol"], "mirt_epochs": options["mirt_epochs"],
            "mirt_seed": options["mirt_seed"], "mirt_seeds": options["mirt_seeds"], "min_models": options["min_models"],
            "methods": parse_methods(options["methods"]),
        }
        try:
            outcome = scoring_run_request(response_set=response_set, model_ids=model_ids, dataset_ids=dataset_ids,
                                          params=params, enqueue=False)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        run = outcome.run
        if run.status == RunStatus.RUNNING:
            return ALREADY_RUNNING.format(run=run)
        try:
            with scoring_progress(self, options["verbosity"]) as progress:
                run = scoring_run_execute(run=run, progress=progress)
        except Exception as exc:
            raise CommandError(f"run {run.pk} failed: {type(exc).__name__}: {exc}") from exc
        return run_summary(run)

    @staticmethod
    def _response_set(name: str, version: int | None) -> ResponseSet:
        try:
            response_set = response_set_by_key(key=name, version=version)
        except ValueError as error:
            raise CommandError(str(error)) from None
        if response_set is None:
            known = response_set_labels()
            raise CommandError(NO_RESPONSE_SET.format(
                name=name, version=f" with version {version}" if version is not None else "", known=known))
        return response_set

    @staticmethod
    def _ids(ids_by_name: Callable[..., dict[str, int]], names: list[str] | None, what: str) -> list[int] | None:
        if names is None:
            return None
        found = ids_by_name(names=names)
        missing = [n for n in names if n not in found]
        if missing:
            raise CommandError(UNKNOWN_NAMES.format(what=what, names=missing))
        return [found[n] for n in names]
