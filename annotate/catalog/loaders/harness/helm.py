"""HELM (crfm-helm) run folders: ``benchmark_output/runs/<suite>/<run name>/``.

Each run folder holds (written by helm/benchmark/runner.py):

* ``run_spec.json``: ``name``, ``scenario_spec`` (``class_name``, ``args``),
  ``adapter_spec`` (``model``, ``model_deployment``, ``method``), and
  ``groups`` (the run groups it belongs to).
* ``per_instance_stats.json``: a list of PerInstanceStats
  (helm/benchmark/metrics/metric.py): ``instance_id``, ``perturbation``
  (a PerturbationDescription, absent for the original instance),
  ``train_trial_index`` (which replication of the in-context examples) and
  ``stats``, each Stat a ``name`` (MetricName: ``name``, ``split``,
  ``sub_split``, ``perturbation``) with ``count``, ``sum`` and ``mean``.
* ``instances.json`` (and ``scenario_state.json``): the instances, with
  ``input.text`` and ``references[].output.text`` and ``tags``.

The score is the run group's main metric: ``run_groups[].environment``
(``main_name``, ``main_split``) in the schema. ``helm-summarize`` writes the
schema it used as ``schema.json`` in the suite folder (presentation/summarize.py,
``write_schema``); it is looked up there and in the run folder. Without it
``exact_match`` is used when present, and the load summary says so.

Only the unperturbed instance of the first trial (``train_trial_index`` 0) is
the base response: perturbed copies and extra trials are skipped and counted.

One response is kept per (model, run, instance): an instance listed twice, or
the same run found in two suite folders, counts once when the scores agree
and is refused when they differ, unless the newest run is chosen. HELM logs
no time per run; a suite's ``summary.json`` (written by ``helm-summarize``)
gives its ``date``, which orders the suites. HELM marks no instance as
errored in ``per_instance_stats.json``.
"""
from __future__ import annotations

from datetime import datetime
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

FORMAT = "helm"
FALLBACK_METRIC = "exact_match"

NO_RUN_SPEC = "no run_spec.json beside per_instance_stats.json"
NO_MODEL = "no adapter_spec.model in run_spec.json"
NOT_A_LIST = "per_instance_stats.json must hold a list of instance statistics"
NO_MAIN_METRIC = (
    "no main metric: no schema.json names one for run groups {groups} and there is no {fallback!r} stat;"
    " pass metric= (stats logged: {available})"
)
NO_STAT = "instance {instance!r} has no {metric!r} stat (stats logged: {available})"
SEVERAL_STATS = (
    "instance {instance!r} has {n} {metric!r} stats (splits {splits}); cannot tell which is the base response"
)


def _main_metrics(run_dir: Path, collector: Collector, cache: dict) -> dict[str, tuple[str, str | None]]:
    """Run group -> (main_name, main_split) from the nearest schema.json."""
    for folder in (run_dir, run_dir.parent):
        path = folder / "schema.json"
        if path in cache:
            return cache[path]
        if path.is_file():
            schema = load_json(path, collector)
            mains = {}
            for group in (schema or {}).get("run_groups") or []:
                env = group.get("environment") or {} if isinstance(group, dict) else {}
                if env.get("main_name"):
                    mains[group.get("name")] = (env["main_name"], env.get("main_split"))
            cache[path] = mains
            return mains
    return {}


def _suite_date(run_dir: Path, collector: Collector, cache: dict) -> datetime | None:
    """The ``date`` of the suite's ``summary.json`` (beside the run folders), or None."""
    path = run_dir.parent / "summary.json"
    if path not in cache:
        summary = load_json(path, collector) if path.is_file() else None
        cache[path] = parse_time(summary.get("date")) if isinstance(summary, dict) else None
    return cache[path]


def _instances(run_dir: Path, collector: Collector) -> dict[str, dict]:
    """Unperturbed instances by id, from instances.json or scenario_state.json."""
    found: list[Any] = []
    path = run_dir / "instances.json"
    if path.is_file():
        found = load_json(path, collector) or []
    elif (run_dir / "scenario_state.json").is_file():
        state = load_json(run_dir / "scenario_state.json", collector) or {}
        found = [rs.get("instance") for rs in state.get("request_states") or [] if isinstance(rs, dict)]
    by_id: dict[str, dict] = {}
    for inst in found if isinstance(found, list) else []:
        if isinstance(inst, dict) and not inst.get("perturbation") and inst.get("id") is not None:
            by_id.setdefault(str(inst["id"]), inst)
    return by_id


def _stat_value(stat: dict) -> Any:
    if "mean" in stat:
        return stat["mean"]
    count = stat.get("count")
    if isinstance(count, (int, float)) and count and isinstance(stat.get("sum"), (int, float)):
        return stat["sum"] / count
    return None


def parse(files: list[Path], collector: Collector, *, metric: str | None, filter: str | None,
          dataset: str | None) -> None:
    """Read HELM run folders (anchored on ``per_instance_stats.json``) into ``collector``.

    Parameters
    ----------
    files : list of Path
        The ``per_instance_stats.json`` files found by
        :func:`~annotate.catalog.loaders.harness.parse_harness_logs` (their sibling
        files are read from their folders).
    collector : Collector
        Receives questions, models, scores, problems and notes.
    metric : str or None
        Stat name; None for the run group's ``main_name`` from ``schema.json``, else ``exact_match``.
    filter : str or None
        Unused (lm-eval only); refused earlier by the entry point.
    dataset : str or None
        Dataset name for every question; None for the run's first run group.
    """
    schema_cache: dict = {}
    dates: dict = {}
    skipped = {"perturbed": 0, "trial": 0, "split": 0}
    metrics_used: dict[str, str] = {}
    fallbacks: list[str] = []
    for path in files:
        if path.name != "per_instance_stats.json":
            continue
        run_dir = path.parent
        name = collector.name(path)
        if not (run_dir / "run_spec.json").is_file():
            collector.problem(name, NO_RUN_SPEC)
            continue
        spec = load_json(run_dir / "run_spec.json", collector)
        if not isinstance(spec, dict):
            continue
        adapter = spec.get("adapter_spec") or {}
        model = adapter.get("model")
        if not isinstance(model, str) or not model:
            collector.problem(collector.name(run_dir / "run_spec.json"), NO_MODEL, column="adapter_spec.model")
            continue
        scenario = str(spec.get("name") or run_dir.name).split(":")[0]
        args = (spec.get("scenario_spec") or {}).get("args") or {}
        task = scenario + (":" + ",".join(f"{k}={v}" for k, v in sorted(args.items())) if args else "")
        groups = [g for g in spec.get("groups") or [] if isinstance(g, str)]
        group = dataset or (groups[0] if groups else scenario)

        entries = load_json(path, collector)
        if not isinstance(entries, list):
            if entries is not None:
                collector.problem(name, NOT_A_LIST)
            continue
        mains = _main_metrics(run_dir, collector, schema_cache)
        main_split = None
        used = metric
        if used is None:
            for g in groups:
                if g in mains:
                    used, main_split = mains[g]
                    break
        else:
            main_split = next((mains[g][1] for g in groups if g in mains), None)
        available = sorted({s.get("name", {}).get("name") for e in entries if isinstance(e, dict)
                            for s in e.get("stats") or [] if isinstance(s, dict)} - {None})
        if used is None:
            if FALLBACK_METRIC not in available:
                collector.problem(name, NO_MAIN_METRIC.format(groups=groups, fallback=FALLBACK_METRIC,
                                                              available=available))
                continue
            used = FALLBACK_METRIC
            fallbacks.append(task)
        metrics_used[task] = used

        collector.add_model(model, {"harness": FORMAT, "model_deployment": adapter.get("model_deployment")},
                            source=collector.name(run_dir / "run_spec.json"))
        instances = _instances(run_dir, collector)
        run = Run(label=collector.name(run_dir), started=_suite_date(run_dir, collector, dates))
        multiple_choice = str(adapter.get("method") or "").startswith("multiple_choice")
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                collector.problem(name, "not an object", column=f"[{i}]")
                continue
            if entry.get("perturbation"):
                skipped["perturbed"] += 1
                continue
            if entry.get("train_trial_index", 0) != 0:
                skipped["trial"] += 1
                continue
            instance_id = str(entry.get("instance_id"))
            stats = [s for s in entry.get("stats") or [] if isinstance(s, dict)
                     and (s.get("name") or {}).get("name") == used
                     and not (s.get("name") or {}).get("perturbation")]
            if main_split is not None:
                in_split = [s for s in stats if s["name"].get("split") == main_split]
                if stats and not in_split:
                    skipped["split"] += 1
                    continue
                stats = in_split
            if not stats:
                collector.problem(name, NO_STAT.format(instance=instance_id, metric=used, available=available),
                                  column=f"[{i}].stats")
                continue
            if len(stats) > 1:
                splits = [s["name"].get("split") for s in stats]
                collector.problem(name, SEVERAL_STATS.format(instance=instance_id, n=len(stats), metric=used,
                                                             splits=splits), column=f"[{i}].stats")
                continue
            external_id = f"{task}/{instance_id}"
            inst = instances.get(instance_id, {})
            references = [r for r in inst.get("references") or [] if isinstance(r, dict)]
            ref_texts = [str((r.get("output") or {}).get("text", "")) for r in references]
            correct = [t for r, t in zip(references, ref_texts) if "correct" in (r.get("tags") or [])]
            collector.add_question(
                dataset=group,
                external_id=external_id,
                subject=subject_for(task, group),
                text=str((inst.get("input") or {}).get("text") or ""),
                options=ref_texts if multiple_choice else [],
                reference_answer=as_text(correct) if correct else "",
                metadata={"harness": FORMAT, "task": task, "instance_id": instance_id,
                          "split": inst.get("split")},
                source=f"{name}:[{i}]",
            )
            try:
                credit = to_credit(_stat_value(stats[0]))
            except NotAScore as exc:
                collector.bad_value(exc, name, None, f"[{i}].stats.{used}.mean")
                continue
            collector.add_score(dataset=group, external_id=external_id, model=model, credit=credit,
                                file=name, column=f"[{i}]", source=f"{name}:[{i}]", run=run)
    if skipped["perturbed"] or skipped["trial"]:
        collector.notes.append(
            f"HELM: {skipped['perturbed']} perturbed and {skipped['trial']} extra-trial (train_trial_index > 0) "
            "instance rows skipped; only the unperturbed first trial is the base response"
        )
    if skipped["split"]:
        collector.notes.append(f"HELM: {skipped['split']} instance rows outside the run group's main split skipped")
    if fallbacks:
        collector.notes.append(
            f"HELM: no schema.json names the main metric for {', '.join(sorted(set(fallbacks)))}; "
            f"used {FALLBACK_METRIC!r}; choose another with metric="
        )
    collector.options.update({"metric": metric, "dataset": dataset, "metrics_used": dict(sorted(metrics_used.items()))})
