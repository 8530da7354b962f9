"""OpenCompass evaluation results with details: ``results/<model abbr>/<dataset abbr>.json``.

The path comes from ``get_infer_output_path(model_cfg, dataset_cfg,
<work_dir>/results)`` (opencompass/tasks/openicl_eval.py); the file holds the
dataset's metrics and, when the run used ``--dump-eval-details``, a
``details`` entry with one record per question:

* from the evaluator (icl_base_evaluator.py, ``BaseEvaluator.evaluate``): a
  list of records, each with ``example_abbr`` and the evaluator's fields
  flattened into lists over the ``n`` replicas, e.g. ``"correct": [true,
  false]``; older evaluators give a list (or an index-keyed dict) of
  ``{"pred", "answer", "correct"}``;
* otherwise from ``OpenICLEvalTask.format_details``: a dict keyed "0", "1",
  ... with ``prompt``, ``origin_prediction``, ``predictions``,
  ``references`` and, only when the evaluator gave one, ``correct``.

Correctness is read from ``correct``, ``is_correct`` or ``cascade_correct``
(the keys BaseEvaluator itself counts); a list over replicas becomes partial
credit (their mean). When a dataset's details carry none of these keys, the
load summary says so and nothing is guessed from predictions and references.

One response is kept per (model, dataset, question, replica): the same
question found twice (a repeated ``example_abbr``, or two timestamped work
folders ``<YYYYMMDD_HHMMSS>/results/`` of one upload) counts once when the
scores agree and is refused when they differ, unless the newest run (by the
work folder's timestamp) is chosen. OpenCompass marks no detail record as
errored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotate.catalog.loaders.harness._common import (
    Collector,
    NotAScore,
    Run,
    as_text,
    load_json,
    parse_time,
    subject_for,
    to_credit,
)

FORMAT = "opencompass"
CORRECTNESS_KEYS = ("correct", "is_correct", "cascade_correct")

NO_DETAILS = "no 'details' (run OpenCompass with --dump-eval-details to keep per-question results)"
NO_CORRECTNESS = "details carry no correctness ({keys}); nothing is guessed from predictions"
NOT_A_DICT = "an OpenCompass results file must hold a JSON object"
EMPTY_REPLICAS = "an empty list is not a score"
WORK_FOLDER_TIME = "%Y%m%d_%H%M%S"  # opencompass/cli/main.py: datetime.now().strftime('%Y%m%d_%H%M%S')


def _prompt_text(value: Any) -> str:
    """The prompt as text: a string, or the last HUMAN turn of a chat prompt."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        turns = [t.get("prompt") for t in value if isinstance(t, dict) and t.get("role") == "HUMAN"]
        turns = [t for t in turns if isinstance(t, str)]
        if turns:
            return turns[-1]
    return ""


def _records(details: Any) -> list[tuple[str, str, Any]]:
    """(question id, location, record) for each detail record."""
    if isinstance(details, dict):
        items = [(str(k), f"details[{k!r}]", v) for k, v in details.items()]
    elif isinstance(details, list):
        items = [(str(i), f"details[{i}]", v) for i, v in enumerate(details)]
    else:
        return []
    out = []
    for key, where, record in items:
        qid = key
        if isinstance(record, dict) and isinstance(record.get("example_abbr"), str):
            qid = record["example_abbr"]
        out.append((qid, where, record))
    return out


def _run_of(path: Path, collector: Collector) -> Run:
    """The run a results file belongs to: its work folder
    ``<YYYYMMDD_HHMMSS>/results/<model>/<dataset>.json`` and the time in its
    name; the file itself, with no time, when it lies elsewhere."""
    if path.parent.parent.name != "results":
        return Run(label=collector.name(path))
    work = path.parent.parent.parent
    return Run(label=collector.name(work), started=parse_time(work.name, WORK_FOLDER_TIME))


def parse(files: list[Path], collector: Collector, *, metric: str | None, filter: str | None,
          dataset: str | None) -> None:
    """Read OpenCompass results files (with details) into ``collector``.

    Parameters
    ----------
    files : list of Path
        The ``results/<model>/<dataset>.json`` files found by
        :func:`~annotate.catalog.loaders.harness.parse_harness_logs`.
    collector : Collector
        Receives questions, models, scores, problems and notes.
    metric : str or None
        Detail key holding correctness; None for the first of ``correct``, ``is_correct``, ``cascade_correct``.
    filter : str or None
        Unused (lm-eval only); refused earlier by the entry point.
    dataset : str or None
        Dataset name for every question; None for the dataset abbr (file stem).
    """
    without: list[str] = []
    used_keys: dict[str, str] = {}
    for path in files:
        name = collector.name(path)
        data = load_json(path, collector)
        if data is None:
            continue
        if not isinstance(data, dict):
            collector.problem(name, NOT_A_DICT)
            continue
        model = path.parent.name
        task = path.stem
        group = dataset or task
        if "details" not in data:
            without.append(f"{name}: {NO_DETAILS}")
            continue
        records = _records(data["details"])
        present = [k for k in CORRECTNESS_KEYS if any(isinstance(r, dict) and k in r for _, _, r in records)]
        key = metric if metric is not None else (present[0] if present else None)
        if key is None or not any(isinstance(r, dict) and key in r for _, _, r in records):
            wanted = repr(key) if key is not None else "none of " + ", ".join(CORRECTNESS_KEYS)
            without.append(f"{name}: {NO_CORRECTNESS.format(keys=wanted)}")
            continue
        used_keys[task] = key
        collector.add_model(model, {"harness": FORMAT}, source=name)
        run = _run_of(path, collector)
        for qid, where, record in records:
            if not isinstance(record, dict):
                collector.problem(name, "a detail record must be an object", column=where)
                continue
            external_id = f"{task}/{qid}"
            collector.add_question(
                dataset=group,
                external_id=external_id,
                subject=subject_for(task, group),
                text=_prompt_text(record.get("prompt", record.get("origin_prompt"))),
                reference_answer=as_text(record.get("references", record.get("answer", record.get("gold")))),
                metadata={"harness": FORMAT, "task": task, "index": qid},
                source=f"{name}:{where}",
            )
            column = f"{where}.{key}"
            if key not in record:
                collector.problem(name, f"no {key!r} in this detail record", column=column)
                continue
            value = record[key]
            # A list here is the evaluator's n replicas of one question, not a pair.
            values = value if isinstance(value, list) else [value]
            try:
                if not values:
                    raise NotAScore(EMPTY_REPLICAS, "list")
                credits = [to_credit(v) for v in values]
            except NotAScore as exc:
                collector.bad_value(exc, name, None, column)
                continue
            for j, credit in enumerate(credits):
                replica = isinstance(value, list) and len(values) > 1
                suffix = f"[{j}]" if replica else ""
                collector.add_score(dataset=group, external_id=external_id, model=model, credit=credit,
                                    file=name, column=f"{column}{suffix}", source=f"{name}:{where}{suffix}",
                                    epoch=j if replica else None, run=run)
    for line in without:
        collector.notes.append(f"OpenCompass, not loaded: {line}")
    collector.options.update({"metric": metric, "dataset": dataset, "metrics_used": dict(sorted(used_keys.items()))})
