"""EleutherAI lm-evaluation-harness logs written with ``--log_samples``.

Layout (lm_eval/loggers/evaluation_tracker.py, ``save_results_aggregated`` and
``save_results_samples``, 0.4.3 and later): a folder per model
(``model_name_sanitized``) holding ``results_<date_id>.json`` and one
``samples_<task>_<date_id>.jsonl`` per task or subtask, where ``date_id`` is
``datetime.now().isoformat()`` with ":" replaced by "-".

* ``results_*.json`` holds ``model_name`` (0.4.3+), ``config.model_args``,
  ``configs[task].metric_list`` (the first entry is the task's primary
  metric), ``configs[task].filter_list`` and ``group_subtasks`` (group ->
  subtasks, possibly nested).
* Each sample line (lm_eval/evaluator.py, ``log_samples``) holds ``doc_id``,
  ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``,
  ``filter``, ``metrics`` (the metric names), the hashes, and one key per
  metric with that document's value. There is one line per document and
  filter; ``doc_id`` restarts at 0 in every task.

lm-eval marks no sample as errored: a request that failed stops the run. One
response is kept per (model, task, doc_id, filter): a line repeated within a
file, or the same task run twice (two timestamped samples files), counts once
when the scores agree and is refused when they differ, unless the newest run
is chosen (ordered by the ``date_id`` in the file names, else the results
file's ``date``).

Older 0.4.x (0.4.0-0.4.2, lm_eval/__main__.py) wrote ``results.json`` (or the
``--output_path`` file) and ``<model_args sanitized>_<task>.jsonl`` holding a
single indented JSON array, with no ``filter``/``metrics`` keys and no
``model_name``; the model name then comes from ``pretrained=``/``model=`` in
``config.model_args``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annotate.catalog.loaders.harness._common import (
    Collector,
    NotAScore,
    Run,
    as_text,
    load_json,
    parse_time,
    question_options,
    question_text,
    subject_for,
    to_credit,
)
from annotate.core import load_bounded, loads_bounded

FORMAT = "lm-eval"

_SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
_NOT_METRICS = {
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
    "metrics", "doc_hash", "prompt_hash", "target_hash",
}

NO_RESULTS_FILE = "no results_*.json beside this samples file; lm-eval writes the model name only there"
SEVERAL_RESULTS_FILES = "several results files beside this samples file and none has its timestamp: {names}"
NO_MODEL_NAME = "no model name: neither 'model_name' nor pretrained=/model= in config.model_args"
UNKNOWN_TASK = (
    "cannot tell the task from the file name; expected samples_<task>_<timestamp>.jsonl"
    " or <prefix>_<task>.jsonl with <task> in the results file's configs"
)
NO_DOC_ID = "no 'doc_id' in this sample"
NO_METRIC_KEY = "no key {metric!r} in this sample (metrics logged: {available})"
NO_PRIMARY_METRIC = (
    "cannot tell task {task!r}'s primary metric (no metric_list in the results file, no 'metrics' key);"
    " pass metric="
)
FILTER_NOT_LOGGED = "task {task!r} logged filters {logged}, not {wanted!r}"
FILTER_UNUSED = "filter {wanted!r} was logged by no task (filters logged: {logged})"
UNNAMED_FILTER = (
    "doc_id {doc_id!r} appears again and the lines carry no 'filter' key, so the filters cannot be told apart"
)
NOT_JSON_LINE = "not a JSON object: {error}"


@dataclass
class _Line:
    row: int | None
    doc_id: Any
    filter: str | None
    values: dict
    metrics: list[str]


@dataclass
class _TaskLog:
    file: Path
    model: str
    task: str
    results: dict
    run: Run
    lines: list[_Line] = field(default_factory=list)
    docs: dict = field(default_factory=dict)


def _model_name(results: dict) -> str | None:
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    args = (results.get("config") or {}).get("model_args")
    if isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model", "path", "engine") and value.strip():
                return value.strip()
    return None


def _parents(results: dict) -> dict[str, str]:
    """Subtask -> group, from ``group_subtasks`` (nested groups allowed)."""
    parent: dict[str, str] = {}
    for group, subtasks in (results.get("group_subtasks") or {}).items():
        for sub in subtasks or []:
            if sub != group:
                parent.setdefault(sub, group)
    return parent


def _root_group(task: str, parent: dict[str, str]) -> str:
    seen = {task}
    while task in parent and parent[task] not in seen:
        task = parent[task]
        seen.add(task)
    return task


def _primary_metric(task: str, results: dict, lines: list[_Line]) -> str | None:
    config = (results.get("configs") or {}).get(task) or {}
    for entry in config.get("metric_list") or []:
        if isinstance(entry, dict) and isinstance(entry.get("metric"), str):
            return entry["metric"]
    for line in lines:
        if line.metrics:
            return line.metrics[0]
    return None


def _started(path: Path, results: dict) -> datetime | None:
    """When the run of a samples file started: the ``date_id`` of its name
    (``datetime.now().isoformat()`` with ":" as "-"), else the results file's
    ``date`` (a Unix time, 0.4.3+), else None (the 0.4.0 layout)."""
    match = _SAMPLES_RE.match(path.name)
    if match:
        started = parse_time(match.group("date"), "%Y-%m-%dT%H-%M-%S.%f")
        if started is not None:
            return started
    date = results.get("date")
    if isinstance(date, (int, float)) and not isinstance(date, bool):
        return datetime.fromtimestamp(date, tz=UTC)
    return None


def _task_of(path: Path, results: dict) -> str | None:
    match = _SAMPLES_RE.match(path.name)
    if match:
        return match.group("task")
    stem = path.stem
    tasks = sorted((results.get("configs") or {}).keys(), key=len, reverse=True)
    for task in tasks:
        if stem == task or stem.endswith("_" + task) or stem == f"samples_{task}":
            return task
    return None


def _pair_results(samples: Path, results_files: dict[Path, dict]) -> Path | str | None:
    """The results file of a samples file: the one in its folder with the same
    timestamp, else the only one in its folder; None if there is none, or the
    candidates' names (a str) if several fit."""
    here = [p for p in results_files if p.parent == samples.parent]
    match = _SAMPLES_RE.match(samples.name)
    if match:
        # results_<date>.json, or <stem>_<date>.json when --output_path named a .json file
        for p in here:
            if p.stem.endswith("_" + match.group("date")):
                return p
    if len(here) == 1:
        return here[0]
    if not here:
        return None
    return ", ".join(sorted(p.name for p in here))


def _read_lines(path: Path, collector: Collector):
    """Yield (row, object) for each sample; row is the 1-based line number, or
    None for the older JSON-array files (then messages name the doc_id).
    JSON Lines files are streamed: sample files of real runs reach hundreds of MB."""
    name = collector.name(path)
    collector.read(path)
    with path.open(encoding="utf-8") as fh:
        first = fh.read(4096).lstrip()
        fh.seek(0)
        if first.startswith("["):
            try:
                items = load_bounded(fh)
            except json.JSONDecodeError as exc:
                collector.problem(name, NOT_JSON_LINE.format(error=exc))
                return
            for i, item in enumerate(items if isinstance(items, list) else []):
                if isinstance(item, dict):
                    yield None, item
                else:
                    collector.problem(name, f"element {i} of the JSON array is not an object")
            return
        for row, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                item = loads_bounded(raw)
            except json.JSONDecodeError as exc:
                collector.problem(name, NOT_JSON_LINE.format(error=exc), row)
                continue
            if not isinstance(item, dict):
                collector.problem(name, NOT_JSON_LINE.format(error="a JSON " + type(item).__name__), row)
                continue
            yield row, item


def parse(files: list[Path], collector: Collector, *, metric: str | None, filter: str | None,
          dataset: str | None) -> None:
    """Read lm-eval results and samples files into ``collector``.

    Parameters
    ----------
    files : list of Path
        The ``results*.json`` and ``*.jsonl`` files found by
        :func:`~annotate.catalog.loaders.harness.parse_harness_logs`.
    collector : Collector
        Receives questions, models, scores, problems and notes.
    metric : str or None
        Metric key; None for each task's primary metric (first of ``metric_list``).
    filter : str or None
        Filter for tasks that logged several; None for the first of the task's ``filter_list``.
    dataset : str or None
        Dataset name for every question; None for the root group in ``group_subtasks``.
    """
    results_files: dict[Path, dict] = {}
    samples_files: list[Path] = []
    for path in files:
        if path.suffix == ".jsonl":
            samples_files.append(path)
        else:
            data = load_json(path, collector)
            if isinstance(data, dict):
                results_files[path] = data

    # A samples file named on its own still needs its results file: look beside it.
    for folder in sorted({p.parent for p in samples_files} - {p.parent for p in results_files}):
        for path in sorted(folder.glob("results*.json")):
            data = load_json(path, collector)
            if isinstance(data, dict):
                results_files[path] = data

    logs: list[_TaskLog] = []
    for path in samples_files:
        name = collector.name(path)
        paired = _pair_results(path, results_files)
        if paired is None:
            collector.problem(name, NO_RESULTS_FILE)
            continue
        if isinstance(paired, str):
            collector.problem(name, SEVERAL_RESULTS_FILES.format(names=paired))
            continue
        results = results_files[paired]
        model = _model_name(results)
        if model is None:
            collector.problem(collector.name(paired), NO_MODEL_NAME)
            continue
        task = _task_of(path, results)
        if task is None:
            collector.problem(name, UNKNOWN_TASK)
            continue
        collector.add_model(model, {
            "harness": FORMAT,
            "lm_eval_version": results.get("lm_eval_version"),
            "model_source": results.get("model_source") or (results.get("config") or {}).get("model"),
            "model_args": (results.get("config") or {}).get("model_args"),
        }, source=collector.name(paired))
        log = _TaskLog(file=path, model=model, task=task, results=results,
                       run=Run(label=name, started=_started(path, results)))
        unnamed_seen: set = set()
        for row, item in _read_lines(path, collector):
            if "doc_id" not in item:
                collector.problem(name, NO_DOC_ID, row, "doc_id")
                continue
            doc_id = item["doc_id"]
            flt = item.get("filter")
            if flt is None:
                if doc_id in unnamed_seen:
                    collector.problem(name, UNNAMED_FILTER.format(doc_id=doc_id), row, "filter")
                    continue
                unnamed_seen.add(doc_id)
            metrics = item.get("metrics")
            if not isinstance(metrics, list):
                metrics = [k for k in item if k not in _NOT_METRICS]
            # Keep only the metric values: prompts and responses can be large.
            values = {k: v for k, v in item.items() if k not in _NOT_METRICS}
            log.lines.append(_Line(row, doc_id, flt, values, metrics))
            if doc_id not in log.docs:
                log.docs[doc_id] = (item.get("doc"), item.get("target"))
        logs.append(log)

    _emit(logs, collector, metric=metric, filter=filter, dataset=dataset)


def _emit(logs: list[_TaskLog], collector: Collector, *, metric: str | None, filter: str | None,
          dataset: str | None) -> None:
    filters_by_task: dict[str, list[str]] = {}
    for log in logs:
        seen = filters_by_task.setdefault(log.task, [])
        for line in log.lines:
            if line.filter is not None and line.filter not in seen:
                seen.append(line.filter)
    if filter is not None and logs and not any(filter in f for f in filters_by_task.values()):
        logged = sorted({f for fs in filters_by_task.values() for f in fs})
        collector.problem(collector.root_name, FILTER_UNUSED.format(wanted=filter, logged=logged))
        return

    chosen_filter: dict[str, str | None] = {}
    defaulted: dict[tuple, list[str]] = {}
    for task, logged in filters_by_task.items():
        if len(logged) <= 1:
            chosen_filter[task] = logged[0] if logged else None
        elif filter is not None:
            if filter not in logged:
                log = next(lg for lg in logs if lg.task == task)
                collector.problem(collector.name(log.file),
                                  FILTER_NOT_LOGGED.format(task=task, logged=logged, wanted=filter))
            chosen_filter[task] = filter
        else:
            results = next(lg.results for lg in logs if lg.task == task)
            config = (results.get("configs") or {}).get(task) or {}
            listed = [f.get("name") for f in config.get("filter_list") or [] if isinstance(f, dict)]
            default = next((f for f in listed if f in logged), logged[0])
            chosen_filter[task] = default
            defaulted.setdefault((tuple(logged), default), []).append(task)
    for (logged, default), tasks in defaulted.items():
        collector.notes.append(
            f"lm-eval logged filters {', '.join(logged)} for {', '.join(tasks)}; used {default!r} "
            f"(the first in the task's filter_list); choose another with filter="
        )

    chosen_metric: dict[str, str] = {}
    for log in logs:
        name = collector.name(log.file)
        if log.task not in chosen_metric:
            primary = metric or _primary_metric(log.task, log.results, log.lines)
            if primary is None:
                collector.problem(name, NO_PRIMARY_METRIC.format(task=log.task))
                continue
            chosen_metric[log.task] = primary
        use = chosen_metric[log.task]
        group = dataset or _root_group(log.task, _parents(log.results))
        subject = subject_for(log.task, group)
        for line in log.lines:
            # Lines without a 'filter' key (older lm-eval) belong to the only filter logged.
            if line.filter is not None and line.filter != chosen_filter.get(log.task):
                continue
            external_id = f"{log.task}/{line.doc_id}"
            doc, target = log.docs.get(line.doc_id, (None, None))
            # The older JSON-array files have no line per sample: name the doc_id instead.
            where = str(line.row) if line.row is not None else f"doc_id {line.doc_id}"
            column = use if line.row is not None else f"{use} (doc_id {line.doc_id})"
            collector.add_question(
                dataset=group,
                external_id=external_id,
                subject=subject,
                text=question_text(doc),
                options=question_options(doc),
                reference_answer=as_text(target),
                metadata={"harness": FORMAT, "task": log.task, "doc_id": line.doc_id},
                source=f"{name}:{where}",
            )
            if use not in line.values:
                collector.problem(name, NO_METRIC_KEY.format(metric=use, available=line.metrics), line.row, column)
                continue
            try:
                credit = to_credit(line.values[use])
            except NotAScore as exc:
                collector.bad_value(exc, name, line.row, column)
                continue
            collector.add_score(dataset=group, external_id=external_id, model=log.model, credit=credit,
                                file=name, row=line.row, column=column, source=f"{name}:{where}",
                                run=log.run)
    collector.options.update({
        "metric": metric,
        "filter": filter,
        "dataset": dataset,
        "metrics_used": dict(sorted(chosen_metric.items())),
        "filters_used": dict(sorted(chosen_filter.items())),
    })
