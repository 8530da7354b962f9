"""Parsers for evaluation-harness logs: lm-evaluation-harness, Inspect AI,
HELM and OpenCompass.

One entry point, :func:`parse_harness_logs`, finds the logs among the given
files and folders, detects their format (or takes the one named), and returns
the common :class:`~annotate.catalog.loaders.base.ParsedResponseSet`. It never touches
the database.

Conventions shared by every format
----------------------------------
* Question identity is stable across models: ``external_id`` is
  ``f"{task}/{harness id}"`` (lm-eval ``doc_id``, Inspect sample ``id``, HELM
  ``instance_id``, OpenCompass detail index or ``example_abbr``), because the
  harness ids restart in every task. ``dataset`` is the ``dataset`` argument
  or, failing that, the task group (lm-eval ``group_subtasks`` root, HELM run
  group) or the task itself; ``subject`` is the task (subtask) name, also
  when the task is the whole dataset (so a study, which pairs questions of
  one subject, can be made from the logs alone).
* One record per (model, task, sample, epoch[, filter]). The same record
  logged more than once (a repeated line, two timestamped runs of one task, a
  retried log that copies the finished samples of a cancelled one) counts
  once when the copies agree and is refused when they conflict, naming both
  places, unless ``duplicates="newest"`` keeps the newest run's record (runs
  are ordered by the time the log itself gives; without one, a conflict is
  still refused).
* The distinct epochs of one (question, model) cell (Inspect epochs,
  OpenCompass replicas) are averaged into partial credit; the load summary
  (``notes``) says how many. Errored or unfinished samples (Inspect samples
  with ``error`` set, or without scores in a cancelled or errored log) never
  count.
* Credit must be a number in [0, 1] or a boolean (True -> 1, False -> 0, the
  exact-match reading); Inspect letters C/I/P/N count 1/0/0.5/0. Null, NaN,
  lists (pairs), dicts and other strings are refused with the file, line (or
  JSON path) and key, or skipped and counted when ``skip_invalid=True``;
  never coerced.
* Models merge by name across files.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from annotate.catalog.loaders.base import LoadError, ParsedResponseSet, Problem
from annotate.catalog.loaders.harness import helm, inspect_ai, lm_eval, opencompass
from annotate.catalog.loaders.harness._common import DUPLICATES, Collector
from annotate.core import counted, load_bounded

__all__ = ["DUPLICATES", "FORMATS", "parse_harness_logs", "detect_format"]

FORMATS = ("lm-eval", "inspect", "helm", "opencompass")
_PARSERS = {
    "lm-eval": lm_eval.parse,
    "inspect": inspect_ai.parse,
    "helm": helm.parse,
    "opencompass": opencompass.parse,
}
_LOG_SUFFIXES = {".json", ".jsonl", ".eval"}
# Inspect's JSON writer puts these keys first (EvalLog field order).
_INSPECT_HEAD = re.compile(r'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')

NO_LOGS = "no evaluation-harness logs found (looked at {files})"
SEVERAL_FORMATS = "logs of several formats found ({found}); pass format= to choose one"
NOT_THIS_FORMAT = "not a {format} log"


def _aux_of(path: Path) -> str | None:
    """Files a format reads beside its logs, or writes but does not need."""
    if path.name == "schema.json" or (path.parent / "per_instance_stats.json").is_file():
        return "helm"
    if path.name == "summary.json" and any(p.is_file() for p in path.parent.glob("*/per_instance_stats.json")):
        return "helm"  # helm-summarize's ExecutiveSummary of the suite (its date orders suites)
    if path.parent.parent.name == "predictions":
        return "opencompass"
    return None


def detect_format(path: Path) -> str | None:
    """The harness format of one file: one of :data:`FORMATS`, or None.

    By name: ``*.eval`` is Inspect, ``per_instance_stats.json`` HELM,
    ``*.jsonl`` lm-eval samples. Other ``.json`` files by content: an Inspect
    log starts ``{"version": N, "status": ...`` and has ``eval.model``; an
    lm-eval results file has ``lm_eval_version`` or ``results`` with
    ``configs``/``config``; an OpenCompass results file has ``details`` or
    lives in ``results/<model>/``.

    Parameters
    ----------
    path : Path
        One file.

    Returns
    -------
    str or None
        One of :data:`FORMATS`; None for files that are not harness logs,
        including the files a format keeps beside its logs (HELM's
        ``run_spec.json``, ``instances.json``, ``schema.json``, the suite's
        ``summary.json``; OpenCompass's
        ``predictions/``), which the parsers read on their own.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".eval":
        return "inspect"
    if path.name == "per_instance_stats.json":
        return "helm"
    if suffix == ".jsonl":
        return "lm-eval"
    if suffix != ".json" or _aux_of(path):
        return None
    try:
        with path.open(encoding="utf-8") as fh:
            head = fh.read(4096)
            if _INSPECT_HEAD.match(head):
                return "inspect"
            fh.seek(0)
            data = load_bounded(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    if "lm_eval_version" in data or ("results" in data and ("configs" in data or "config" in data)):
        return "lm-eval"
    if isinstance(data.get("eval"), dict) and "model" in data["eval"]:
        return "inspect"
    if "details" in data or path.parent.parent.name == "results":
        return "opencompass"
    return None


def _check_name(param: str, value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{param} must be a non-empty string or None; got {value!r}")


def _as_paths(paths: object) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, Iterable):
        raise ValueError(f"paths must be a path or an iterable of paths; got {paths!r}")
    out = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise ValueError(f"paths must hold str or Path items; got {p!r}")
        path = Path(p)
        if not path.exists():
            raise ValueError(f"paths: {str(path)!r} does not exist")
        out.append(path.resolve())
    if not out:
        raise ValueError("paths is empty; give at least one log file or folder")
    return out


def _expand(paths: list[Path]) -> tuple[list[Path], set[Path]]:
    """Every file under ``paths`` (sorted, hidden ones skipped) and the set of
    files named explicitly."""
    files: list[Path] = []
    explicit: set[Path] = set()
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path).parts
                if child.is_file() and not any(part.startswith(".") for part in rel):
                    files.append(child)
        else:
            files.append(path)
            explicit.add(path)
    return list(dict.fromkeys(files)), explicit


def parse_harness_logs(
    paths,
    *,
    format: str | None = None,
    metric: str | None = None,
    filter: str | None = None,
    dataset: str | None = None,
    skip_invalid: bool = False,
    duplicates: str = "refuse",
) -> ParsedResponseSet:
    """Parse evaluation-harness logs into questions, models and per-sample credit.

    Parameters
    ----------
    paths : str, Path, or iterable of them
        Log files and/or folders (searched recursively; hidden entries are
        skipped). lm-eval: the model folders holding ``results_*.json`` and
        ``samples_*.jsonl``; Inspect: ``.eval``/``.json`` logs; HELM: run
        folders (or the suite folder, whose ``schema.json`` names each run
        group's main metric); OpenCompass: the ``results/`` folder.
    format : {"lm-eval", "inspect", "helm", "opencompass"} or None, default None
        None detects the format from the files (see :func:`detect_format`);
        logs of two formats at once are refused.
    metric : str or None, default None
        Which score to read when a log has several: the lm-eval metric key
        (default: the task's primary metric, the first of its
        ``metric_list``), the Inspect scorer name (default: the task's first
        scorer), the HELM stat name (default: the run group's ``main_name``,
        else ``exact_match``), the OpenCompass detail key (default:
        ``correct``, ``is_correct`` or ``cascade_correct``).
    filter : str or None, default None
        lm-eval only: the filter to read for tasks that logged several
        (e.g. ``"strict-match"`` or ``"flexible-extract"``); default the
        first in the task's ``filter_list``. Tasks that logged a single
        filter use it.
    dataset : str or None, default None
        Dataset name for every question; default the task group or task.
        The task (subtask) is always the question's subject.
    skip_invalid : bool, default False
        Skip values that are not scores (and samples without a score),
        counting them in ``notes``, instead of refusing the upload.
    duplicates : {"refuse", "newest"}, default "refuse"
        A sample logged more than once with different scores (two runs of
        one task, a conflicting repeated line): "refuse" names both places
        in a :class:`LoadError`; "newest" keeps the record of the newest run
        (lm-eval: the samples file's timestamp; Inspect: ``eval.created``;
        HELM: the suite's ``summary.json`` date; OpenCompass: the
        ``YYYYMMDD_HHMMSS`` work folder), and still refuses when the runs
        give no time or the newest run conflicts with itself. Identical
        copies always count once.

    Returns
    -------
    ParsedResponseSet
        ``questions`` one row per (dataset, external_id); ``models`` one row
        per model name (``family`` "", ``parameters_b`` NaN, ``access``
        "unknown", guessed from the name by the loading service only;
        harness details in ``metadata``); ``responses`` one row
        per observed (dataset, external_id, model) with ``credit`` float in
        [0, 1] (the mean over the distinct epochs) and ``source`` "file:where";
        ``file_format`` the format; ``source_files`` every file read;
        ``notes`` the load summary; ``options`` the choices made (metric,
        filter, dataset, and the metric/filter used per task).

    Raises
    ------
    ValueError
        If an argument is malformed: a path that does not exist, an unknown
        ``format``, an empty ``metric``/``filter``/``dataset``, or ``filter``
        with a format other than lm-eval, ``duplicates`` not one of
        :data:`DUPLICATES`.
    LoadError
        If the files cannot be loaded: no logs, several formats, unreadable
        files, values that are not scores, a chosen metric or filter that was
        not logged, a sample logged twice with different scores. It carries every problem found (up to 50), each with
        file, row (line) and column (key or JSON path).

    Notes
    -----
    Unobserved cells have no row: a model that never saw a question is
    missing, not wrong. Pivoting ``responses`` gives the response matrix R of
    shape (n_questions, n_models) that the scoring methods take.

    References
    ----------
    The EIP paper (``eip-paper.txt``): section 2.2, the competency matrix
    A in {0,1}^(Q x M) (1 if model j answered question i correctly), and
    section 2.4, its continuous analogue A_c in [0,1]^(Q x M) for partial
    credit, which the averaged epochs and repeats fill.

    Examples
    --------
    >>> parsed = parse_harness_logs("outputs/", format="lm-eval", filter="strict-match")  # doctest: +SKIP
    >>> parsed.responses.pivot(index="external_id", columns="model", values="credit")  # doctest: +SKIP
    """
    resolved = _as_paths(paths)
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} or None; got {format!r}")
    _check_name("metric", metric)
    _check_name("filter", filter)
    _check_name("dataset", dataset)
    if not isinstance(skip_invalid, bool):
        raise ValueError(f"skip_invalid must be a bool; got {skip_invalid!r}")
    if duplicates not in DUPLICATES:
        raise ValueError(f"duplicates must be one of {', '.join(DUPLICATES)}; got {duplicates!r}")

    files, explicit = _expand(resolved)
    root = Path(os.path.commonpath([p if p.is_dir() else p.parent for p in resolved]))
    detected = {f: detect_format(f) for f in files}

    chosen = format
    if chosen is None:
        found = sorted({fmt for fmt in detected.values() if fmt})
        if not found:
            message = NO_LOGS.format(files=counted(len(files), "file"))
            raise LoadError([Problem(file=root.name or str(root), message=message)])
        if len(found) > 1:
            counts = ", ".join(f"{fmt}: {counted(sum(1 for v in detected.values() if v == fmt), 'file')}"
                               for fmt in found)
            raise LoadError([Problem(file=root.name or str(root), message=SEVERAL_FORMATS.format(found=counts))])
        chosen = found[0]
    if filter is not None and chosen != "lm-eval":
        raise ValueError(f"filter applies only to lm-eval logs; got filter={filter!r} for {chosen} logs")

    collector = Collector(file_format=chosen, root=root, skip_invalid=skip_invalid, duplicates=duplicates)
    mine = [f for f in files if detected[f] == chosen]
    wrong = [f for f in sorted(explicit) if detected[f] != chosen and _aux_of(f) != chosen]
    if wrong:
        raise LoadError([Problem(file=collector.name(f), message=NOT_THIS_FORMAT.format(format=chosen))
                         for f in wrong])
    ignored = [f for f in files if detected[f] != chosen and f.suffix.lower() in _LOG_SUFFIXES
               and _aux_of(f) != chosen]

    _PARSERS[chosen](mine, collector, metric=metric, filter=filter, dataset=dataset)
    collector.options["format"] = chosen
    collector.options["duplicates"] = duplicates
    if ignored:
        shown = ", ".join(collector.name(f) for f in ignored[:5])
        more = f" and {len(ignored) - 5} more" if len(ignored) > 5 else ""
        collector.notes.append(f"{counted(len(ignored), 'file')} that {'is' if len(ignored) == 1 else 'are'} not "
                               f"{chosen} logs {'was' if len(ignored) == 1 else 'were'} ignored: {shown}{more}")
    return collector.finish()
