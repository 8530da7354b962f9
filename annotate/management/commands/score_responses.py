"""``manage.py score_responses``: run every difficulty method on a response set, inline."""
from __future__ import annotations

import re
from argparse import ArgumentParser
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.management.progress import TqdmStream
from annotate.models import Dataset, LanguageModel, MethodResult, ResponseSet
from annotate.services.scoring import DEFAULT_PARAMS, required_methods, scoring_run_create, scoring_run_execute
from scoring.methods import method_keys

NO_RESPONSE_SET = "no response set named {name!r}{version}; known: {known}"
VERSION_CLASH = "--response-set {name!r} names version {named} but --version says {version}"
_NAME_VERSION = re.compile(r"^(?P<name>.+) v(?P<version>\d+)$")
UNKNOWN_NAMES = "unknown {what} {names}"


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_methods(text: str) -> list[str]:
    """Comma-separated method names, plus the ones every run executes."""
    given = [part.strip() for part in text.split(",") if part.strip()]
    required = required_methods()
    return [*required, *[m for m in given if m not in required]]



@contextmanager
def scoring_progress(command: BaseCommand, verbosity: int) -> Iterator[Callable[[float, str], None]]:
    """A ``progress(fraction, label)`` callback drawing a tqdm bar on the
    command's stderr from its first call on (nothing at verbosity 0)."""
    bars: list[tqdm] = []

    def progress(fraction: float, label: str) -> None:
        if not bars:
            bars.append(tqdm(total=100, unit="%", file=TqdmStream(command.stderr), disable=verbosity == 0,
                             bar_format="{desc:<28}{percentage:3.0f}%|{bar:30}| {elapsed}"))
        bars[0].set_description_str(f"scoring: {label}", refresh=False)
        bars[0].update(round(100 * fraction) - bars[0].n)

    try:
        yield progress
    finally:
        for bar in bars:
            bar.close()


def run_summary(run) -> str:
    """``run 7 on EIP-demo v1: done; eip 11 iter 0.01 s, ...``."""
    parts = []
    for m in MethodResult.objects.filter(run=run).order_by("pk"):
        iterations = f" {m.n_iter} iter" if m.n_iter is not None else ""
        parts.append(f"{m.method}{iterations} {m.duration_s:.2f} s")
    return f"run {run.pk} on {run.response_set}: {run.status}; " + ", ".join(parts)


def response_set_by_key(key: str, version: int | None = None) -> ResponseSet | None:
    """The response set ``key`` names: a name (the latest version, or ``version``),
    ``"NAME vN"`` as ``str(response_set)`` prints it, or an id; None if there is none.

    A name that exists is taken as a name first, so a set named ``"7"`` or
    ``"demo v2"`` is still found by its name.

    Raises
    ------
    CommandError
        If ``key`` is ``"NAME vN"`` and ``version`` is given and differs from N.
    """
    by_name = ResponseSet.objects.filter(name=key)
    if by_name.exists():
        by_name = by_name.filter(version=version) if version is not None else by_name.order_by("-version")
        return by_name.first()
    match = _NAME_VERSION.match(key)
    if match:
        named = int(match["version"])
        if version is not None and version != named:
            raise CommandError(VERSION_CLASH.format(name=key, named=named, version=version))
        return ResponseSet.objects.filter(name=match["name"], version=named).first()
    if key.isdigit():
        found = ResponseSet.objects.filter(pk=int(key))
        return (found.filter(version=version) if version is not None else found).first()
    return None


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
        keys, required = ",".join(method_keys()), " and ".join(required_methods())
        parser.add_argument("--methods", default=keys,
                            help=f"comma-separated subset of {keys} ({required} always run)")

    def handle(self, *args, **options) -> str:
        response_set = self._response_set(options["response_set"], options["version"])
        model_ids = self._ids(LanguageModel, _names(options["models"]), "models")
        dataset_ids = self._ids(Dataset, _names(options["datasets"]), "datasets")
        params = {
            "alpha": options["alpha"], "tol": options["tol"], "mirt_epochs": options["mirt_epochs"],
            "mirt_seed": options["mirt_seed"], "methods": parse_methods(options["methods"]),
        }
        try:
            run = scoring_run_create(response_set=response_set, model_ids=model_ids, dataset_ids=dataset_ids,
                                     params=params)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        try:
            with scoring_progress(self, options["verbosity"]) as progress:
                run = scoring_run_execute(run=run, progress=progress)
        except Exception as exc:
            raise CommandError(f"run {run.pk} failed: {type(exc).__name__}: {exc}") from exc
        return run_summary(run)

    @staticmethod
    def _response_set(name: str, version: int | None) -> ResponseSet:
        response_set = response_set_by_key(name, version)
        if response_set is None:
            known = sorted({str(r) for r in ResponseSet.objects.all()})
            raise CommandError(NO_RESPONSE_SET.format(
                name=name, version=f" with version {version}" if version is not None else "", known=known))
        return response_set

    @staticmethod
    def _ids(model, names: list[str] | None, what: str) -> list[int] | None:
        if names is None:
            return None
        found = dict(model.objects.filter(name__in=names).values_list("name", "pk"))
        missing = [n for n in names if n not in found]
        if missing:
            raise CommandError(UNKNOWN_NAMES.format(what=what, names=missing))
        return [found[n] for n in names]
