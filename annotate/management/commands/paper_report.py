"""``manage.py paper_report``: run the paper's analyses on a response set and
write each one's result.json, tables (one tidy CSV each), codebook.md,
plot.png and plot.svg to a folder, with an index.md of the headline numbers."""
from __future__ import annotations

import time
from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.analyses import (
    NEEDS_RESPONSE_SET,
    SCALING_GRIDS,
    analysis_headlines,
    analysis_run_create,
    analysis_run_execute,
    check_params,
    kind_label,
    pick_params,
    write_analysis_files,
)
from annotate.catalog import response_set_by_key, response_set_names_loaded
from annotate.core import ENCODING_NOTE
from annotate.management.progress import TqdmStream
from annotate.models import AnalysisKind, ResponseSet

ALL = tuple(AnalysisKind.values)
#: Run by default (the human-label analysis needs a label: ask for it with --analyses human_labels --label ...).
DEFAULT = tuple(k for k in ALL if k != AnalysisKind.HUMAN_LABELS)
UNKNOWN_ANALYSES = "--analyses takes a comma-separated subset of {known}; unknown: {unknown}"
NO_RESPONSE_SET = "no loaded response set is named {name!r}; loaded: {names}"
NOT_A_FOLDER = "--out {path} exists and is not a folder"
SOME_FAILED = "{n} of {total} analyses failed ({kinds}); the others are in {out} (see index.md)"



def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = (
        "Run the paper's analyses (efficiency, scaling, model-pool and dataset robustness, case study, "
        "EIP against accuracy, difficulty profiles, open-weight pools) on a response set and write "
        "each one's result.json, tables (one CSV each), codebook.md and plot (PNG, SVG) to a folder with an "
        "index.md."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--response-set", required=True,
                            help="response set name (newest version), 'NAME vN' (name and version) or id")
        parser.add_argument("--out", required=True, type=Path, help="folder to write (created if needed)")
        parser.add_argument("--analyses", default=",".join(DEFAULT), help=f"comma-separated subset of {', '.join(ALL)}")
        parser.add_argument("--trials", type=_positive, default=None,
                            help="random removals per k for model robustness (default 50)")
        parser.add_argument("--k-max", type=_positive, default=None,
                            help="remove k = 1..K models in model robustness (default 15)")
        parser.add_argument("--case-study-seeds", dest="n_seeds", type=_positive, default=None,
                            help="simulated draws for the case-study recovery (default 500)")
        parser.add_argument("--mirt-epochs", type=_positive, default=None, help="MIRT epochs (default 1000)")
        parser.add_argument("--skip-irt", action="store_true",
                            help="leave out 1PL, 2PL and MIRT (efficiency timing and case study)")
        parser.add_argument("--group-by", default=None,
                            help="dataset robustness and profiles: dataset (default), subject or metadata:<key>")
        parser.add_argument("--scaling-grid", dest="grid", choices=list(SCALING_GRIDS), default=None,
                            help="synthetic sizes for the scaling analysis (default paper: up to 1,000,000 x 2,000)")
        parser.add_argument("--repeats", type=_positive, default=None,
                            help="timed EIP runs per size / on the data (default 3)")
        parser.add_argument("--label", default=None,
                            help="human_labels: metadata:KEY (a question metadata column) or human:ID (a human "
                                 "response set)")
        parser.add_argument("--label-higher-is-easier", dest="label_higher_is_harder", action="store_const",
                            const=False, default=None,
                            help="human_labels: the metadata label grows with ease (e.g. a solve rate)")
        parser.add_argument("--margin", type=float, default=None,
                            help="human_labels: label margin besides 0 (default 0.2)")
        parser.add_argument("--n-boot", type=int, default=None, help="human_labels: bootstrap replicates (200)")
        parser.add_argument("--scoring-run", dest="run", type=int, default=None,
                            help="human_labels: scoring run id (default: the newest finished one)")
        parser.add_argument("--human-method", choices=["accuracy", "irt_1pl"], default=None,
                            help="human_labels with human:ID: solve rate (accuracy) or 1PL")
        parser.add_argument("--seed", type=int, default=None, help="seed of every random draw (default 0)")

    def handle(self, *args, **options) -> str:
        kinds = self._kinds(options["analyses"])
        response_set = self._response_set(options["response_set"])
        out = Path(options["out"])
        if out.exists() and not out.is_dir():
            raise CommandError(NOT_A_FOLDER.format(path=out))
        given = {key: options[key] for key in ("trials", "k_max", "n_seeds", "mirt_epochs", "group_by", "grid",
                                               "repeats", "seed", "label", "label_higher_is_harder", "margin",
                                               "n_boot", "run", "human_method")}
        given["skip_irt"] = options["skip_irt"]
        plans = []
        for kind in kinds:  # check every analysis's parameters before running any
            try:
                plans.append((kind, check_params(kind, pick_params(kind, given))))
            except ValueError as error:
                raise CommandError(f"{kind}: {error}") from error
        started = time.perf_counter()
        sections, failed = [], []
        for kind, params in plans:
            sections.append(self._run(kind, params, response_set, out, options["verbosity"], failed))
        self._write_index(out, response_set, sections)
        if failed:
            raise CommandError(SOME_FAILED.format(n=len(failed), total=len(plans), kinds=", ".join(failed), out=out))
        return (f"Wrote {len(plans)} analyses of {response_set} to {out} in {time.perf_counter() - started:.1f} s "
                f"(index.md)")

    @staticmethod
    def _kinds(text: str) -> list[str]:
        kinds = [k.strip() for k in text.split(",") if k.strip()]
        unknown = [k for k in kinds if k not in ALL]
        if unknown or not kinds:
            raise CommandError(UNKNOWN_ANALYSES.format(known=", ".join(ALL), unknown=", ".join(unknown) or "(none)"))
        return list(dict.fromkeys(kinds))

    @staticmethod
    def _response_set(name: str) -> ResponseSet:
        found = response_set_by_key(key=name)
        if found is None:
            names = response_set_names_loaded()
            raise CommandError(NO_RESPONSE_SET.format(name=name, names=", ".join(names) or "(none)"))
        return found

    def _run(self, kind: str, params: dict, response_set: ResponseSet, out: Path, verbosity: int,
             failed: list[str]) -> dict:
        run = analysis_run_create(kind=kind, response_set=response_set if kind in NEEDS_RESPONSE_SET else None,
                                  params=params)
        bar = tqdm(total=1000, desc=kind, file=TqdmStream(self.stderr), disable=verbosity < 1,
                   bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining} {postfix}")

        def progress(fraction: float, message: str) -> None:
            bar.n = int(1000 * fraction)
            bar.set_postfix_str(message[:60], refresh=False)
            bar.refresh()

        try:
            run = analysis_run_execute(run=run, progress=progress)
        except Exception as error:  # recorded on the run; the other analyses still run
            failed.append(kind)
            return {"kind": kind, "run": run, "error": f"{type(error).__name__}: {error}", "files": []}
        finally:
            bar.close()
        files = write_analysis_files(run=run, out_dir=out / kind)
        return {"kind": kind, "run": run, "error": None, "files": files,
                "headlines": analysis_headlines(kind=kind, result=run.result)}

    @staticmethod
    def _write_index(out: Path, response_set: ResponseSet, sections: list[dict]) -> None:
        lines = [f"# Paper analyses of {response_set}", "",
                 f"{response_set.n_questions:,} questions x {response_set.n_models} models loaded "
                 f"({response_set.n_responses:,} responses). Each folder holds result.json, one tidy CSV "
                 "per table (<table>.csv), codebook.md (columns, units, parameters), plot.png and plot.svg.", "",
                 ENCODING_NOTE, ""]
        for s in sections:
            run = s["run"]
            lines += [f"## {kind_label(s['kind'])}", "",
                      f"Folder `{s['kind']}/` · analysis run {run.pk} · "
                      + ", ".join(f"{k} = {v}" for k, v in run.params.items())
                      + (f" · {run.duration_s:.1f} s" if run.duration_s is not None else ""), ""]
            if s["error"]:
                lines += [f"**Failed:** {s['error']}", ""]
            else:
                lines += [f"- {h}" for h in s["headlines"]] + ["", f"![{s['kind']}]({s['kind']}/plot.svg)", ""]
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.md").write_text("\n".join(lines), encoding="utf-8")
