"""Writers of synthetic evaluation-harness logs for the parser tests.

Each ``write_*`` function draws per-sample scores from a seeded generator,
writes them in one harness's own layout under ``root``, and returns the
response matrix it built by hand from the drawn scores (never from a parser):
``expected[(dataset, external_id, model)] = credit``, with several samples of
one cell averaged. The layouts follow the harnesses' writers as cited in
``annotate/catalog/loaders/harness/*.py``.

The ``.eval`` zips with Zstandard members are written by :func:`write_zip`, a
minimal zip writer independent of Python's zipfile (which cannot write
method 93 before Python 3.14).
"""
from __future__ import annotations

import json
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import zstandard

Cell = tuple[str, str, str]  # (dataset, external_id, model)


@dataclass
class GeneratedLogs:
    """What a writer produced: the folder, the expected matrix and question texts."""

    root: Path
    expected: dict[Cell, float]
    texts: dict[tuple[str, str], str] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


def _dump(path: Path, obj, indent: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=indent), encoding="utf-8")


# --------------------------------------------------------------------------- zip

def write_zip(path: Path, members: list[tuple[str, bytes, int]]) -> None:
    """Write a zip of (name, data, method) members; method 0 stored, 8 deflate,
    93 Zstandard (PKWARE APPNOTE 4.3.7 local headers, 4.3.12 central directory,
    4.3.16 end record)."""
    out = bytearray()
    central = bytearray()
    for name, data, method in members:
        if method == 0:
            payload = data
        elif method == 8:
            co = zlib.compressobj(6, zlib.DEFLATED, -15)
            payload = co.compress(data) + co.flush()
        elif method == 93:
            # Streaming-style frame without a content size, as zipfile-zstd writes.
            payload = zstandard.ZstdCompressor(write_content_size=False).compress(data)
        else:
            raise ValueError(f"method {method} not supported by this writer")
        crc = zlib.crc32(data)
        raw = name.encode("utf-8")
        offset = len(out)
        version = 63 if method == 93 else 20
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", version, 0x800, method, 0, 0x21,
                           crc, len(payload), len(data), len(raw), 0)
        out += raw + payload
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", version, version, 0x800, method,
                               0, 0x21, crc, len(payload), len(data), len(raw), 0, 0, 0, 0, 0, offset)
        central += raw
    start = len(out)
    out += central
    out += struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members),
                       len(central), start, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))


# ----------------------------------------------------------------------- lm-eval

LM_MODELS = ("org/alpha-7b", "org/beta-13b")
LM_OLD_MODEL = "org/gamma-1b"  # written in the 0.4.0 layout
LM_TASKS = {
    # task: (group, n_docs, metrics (primary first), filters)
    "mmlu_mini_algebra": ("mmlu_mini", 4, ("acc", "acc_norm"), ("none",)),
    "mmlu_mini_biology": ("mmlu_mini", 3, ("acc", "acc_norm"), ("none",)),
    "gsm8k_mini": ("gsm8k_mini", 3, ("exact_match",), ("strict-match", "flexible-extract")),
}


def _lm_doc(task: str, doc_id: int) -> tuple[dict, str]:
    if task.startswith("mmlu"):
        doc = {"question": f"{task} question {doc_id}?", "subject": task.rsplit("_", 1)[1],
               "choices": [f"option {k}" for k in "ABCD"], "answer": doc_id % 4}
        return doc, str(doc_id % 4)
    doc = {"question": f"How many apples in basket {doc_id}?", "answer": f"Count them.\n#### {doc_id + 3}"}
    return doc, doc["answer"]


def _lm_results(tasks: list[str], model: str | None, model_args: str, *, old: bool = False) -> dict:
    results = {
        "results": {t: {"alias": t} for t in tasks},
        "group_subtasks": {"mmlu_mini": ["mmlu_mini_algebra", "mmlu_mini_biology"], "gsm8k_mini": []},
        "configs": {
            t: {
                "task": t,
                "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True}
                                for m in LM_TASKS[t][2]],
                **({"filter_list": [{"name": f, "filter": []} for f in LM_TASKS[t][3]]}
                   if LM_TASKS[t][3] != ("none",) else {}),
            }
            for t in tasks
        },
        "config": {"model": "hf", "model_args": model_args, "batch_size": 1},
    }
    if not old:
        results.update({"lm_eval_version": "0.4.9", "model_source": "hf", "model_name": model,
                        "model_name_sanitized": model.replace("/", "__")})
    return results


def _lm_lines(task: str, model_scores: dict, *, old: bool = False, skip: set[int] = frozenset()) -> list[dict]:
    _, n_docs, metrics, filters = LM_TASKS[task]
    lines = []
    for flt in filters:
        for doc_id in range(n_docs):
            if doc_id in skip:
                continue
            doc, target = _lm_doc(task, doc_id)
            line = {"doc_id": doc_id, "doc": doc, "target": target,
                    "arguments": {"gen_args_0": {"arg_0": f"Question: {doc['question']}\nAnswer:"}},
                    "resps": [["some text"]], "filtered_resps": ["x"]}
            if not old:
                line.update({"filter": flt, "metrics": list(metrics), "doc_hash": f"d{doc_id}",
                             "prompt_hash": "p", "target_hash": "t"})
            for m in metrics:
                line[m] = model_scores[(task, doc_id, flt, m)]
            lines.append(line)
    return lines


def _draw_lm(rng: np.random.Generator, tasks) -> dict:
    scores = {}
    for task in tasks:
        _, n_docs, metrics, filters = LM_TASKS[task]
        for flt in filters:
            for doc_id in range(n_docs):
                for m in metrics:
                    scores[(task, doc_id, flt, m)] = float(rng.integers(0, 2))
    return scores


def write_lm_eval_logs(root: Path, rng: np.random.Generator, *, rerun: str = "identical") -> GeneratedLogs:
    """Two models in the 0.4.3+ layout (three tasks, two filters on gsm8k_mini,
    alpha runs mmlu_mini_algebra twice) and one in the 0.4.0 layout (JSON array
    in ``.jsonl``, no filter/metrics keys, no model_name, doc 3 of algebra
    missing). Expected credit: primary metric, first filter (strict-match).

    ``rerun`` is alpha's second algebra run (2025-02-01, after the first of
    2025-01-01): "identical" logs the same scores again (one response each);
    "conflicting" logs 1 - the first run's score for every document and
    metric, and the expected credit is then the newest run's."""
    expected: dict[Cell, float] = {}
    texts: dict[tuple[str, str], str] = {}
    runs: dict[Cell, list[float]] = {}
    all_scores = {}

    def record(model, task, scores, skip=frozenset()):
        group, n_docs, metrics, filters = LM_TASKS[task]
        for doc_id in range(n_docs):
            if doc_id in skip:
                continue
            cell = (group, f"{task}/{doc_id}", model)
            runs.setdefault(cell, []).append(scores[(task, doc_id, filters[0], metrics[0])])
            texts[(group, f"{task}/{doc_id}")] = _lm_doc(task, doc_id)[0]["question"]

    for k, model in enumerate(LM_MODELS):
        folder = root / model.replace("/", "__")
        date = f"2025-01-0{k + 1}T10-00-00.000001"
        tasks = list(LM_TASKS)
        scores = _draw_lm(rng, tasks)
        all_scores[model] = scores
        _dump(folder / f"results_{date}.json", _lm_results(tasks, model, f"pretrained={model}"), indent=2)
        for task in tasks:
            lines = _lm_lines(task, scores)
            (folder / f"samples_{task}_{date}.jsonl").write_text(
                "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
            record(model, task, scores)
    # alpha's second run of one task, paired with its own results file by timestamp
    model = LM_MODELS[0]
    folder = root / model.replace("/", "__")
    date = "2025-02-01T09-30-00.000002"
    first = all_scores[model]
    scores = {k: (v if rerun == "identical" else 1.0 - v) for k, v in first.items() if k[0] == "mmlu_mini_algebra"}
    _dump(folder / f"results_{date}.json", _lm_results(["mmlu_mini_algebra"], model, f"pretrained={model}"))
    (folder / f"samples_mmlu_mini_algebra_{date}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in _lm_lines("mmlu_mini_algebra", scores)), encoding="utf-8")
    for doc_id in range(LM_TASKS["mmlu_mini_algebra"][1]):
        # one record per (model, task, doc, filter): the rerun replaces, never averages
        cell = ("mmlu_mini", f"mmlu_mini_algebra/{doc_id}", model)
        runs[cell] = [scores[("mmlu_mini_algebra", doc_id, "none", "acc")]]

    # 0.4.0 layout: results.json + <model_args sanitized>_<task>.jsonl holding a JSON array
    model_args = f"pretrained={LM_OLD_MODEL},dtype=float"
    folder = root / "gamma_run"
    tasks = ["mmlu_mini_algebra", "mmlu_mini_biology"]
    scores = _draw_lm(rng, tasks)
    _dump(folder / "results.json", _lm_results(tasks, None, model_args, old=True), indent=4)
    prefix = model_args.replace("/", "__").replace("=", "__")
    for task in tasks:
        skip = {3} if task == "mmlu_mini_algebra" else set()
        _dump(folder / f"{prefix}_{task}.jsonl", _lm_lines(task, scores, old=True, skip=skip), indent=2)
        record(LM_OLD_MODEL, task, scores, skip)

    for cell, values in runs.items():
        expected[cell] = sum(values) / len(values)
    return GeneratedLogs(root=root, expected=expected, texts=texts, extra={"scores": all_scores})


def lm_expected_for(gen: GeneratedLogs, *, task: str, filter: str, metric: str) -> dict[Cell, float]:
    """The hand-built cells of one new-layout task under another filter/metric."""
    group = LM_TASKS[task][0]
    return {(group, f"{task}/{d}", model): scores[(task, d, filter, metric)]
            for model, scores in gen.extra["scores"].items() for d in range(LM_TASKS[task][1])}


# ----------------------------------------------------------------------- Inspect

INSPECT_MODELS = ("openai/gpt-4o-mini", "anthropic/claude-3-haiku", "ollama/llama3:8b")
LETTER_CREDIT = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}  # Inspect's value_to_float


def _inspect_header(task: str, model: str, scorers: list[str]) -> dict:
    return {
        "version": 2,
        "status": "success",
        "eval": {"task": task, "model": model, "created": "2025-05-01T10:00:00+00:00",
                 "dataset": {"name": f"{task}_source", "samples": 10},
                 "scorers": [{"name": s, "options": {}, "metrics": []} for s in scorers],
                 "packages": {"inspect_ai": "0.3.140"}, "config": {"epochs": 3}},
        "plan": {"name": "plan", "steps": []},
        "results": {"scores": [{"name": scorers[0], "scorer": scorers[0], "metrics": {}}]},
        "stats": {"started_at": "", "completed_at": ""},
    }


def write_inspect_logs(root: Path, rng: np.random.Generator) -> GeneratedLogs:
    """Three models on two tasks: ``mini_arc`` (int ids 1-5, one epoch, scorer
    ``choice`` with letters C/I) and ``mini_math`` (str ids, three epochs, scorers
    ``match`` with letters C/I/P and ``judge`` with numbers). Model 0 writes
    deflated .eval files, model 1 .eval files with Zstandard members (header
    deflated, samples Zstandard), model 2 .json logs. ``extra["judge"]`` holds
    the mini_math matrix under ``metric="judge"``."""
    expected: dict[Cell, float] = {}
    judge: dict[Cell, float] = {}
    texts: dict[tuple[str, str], str] = {}
    for k, model in enumerate(INSPECT_MODELS):
        for task in ("mini_arc", "mini_math"):
            samples = []
            if task == "mini_arc":
                ids, epochs, scorers = [1, 2, 3, 4, 5], 1, ["choice"]
            else:
                ids, epochs, scorers = ["m-1", "m-2", "m-3", "m-4"], 3, ["match", "judge"]
            for sid in ids:
                question = f"{task} question {sid}: which one?"
                texts[(task, f"{task}/{sid}")] = question
                letters, judged = [], []
                for epoch in range(1, epochs + 1):
                    if task == "mini_arc":
                        letter = "CI"[int(rng.integers(0, 2))]
                        scores = {"choice": {"value": letter, "answer": "A", "explanation": "..."}}
                        sample_input = question
                    else:
                        letter = "CIP"[int(rng.integers(0, 3))]
                        number = float(rng.integers(0, 5)) / 4
                        judged.append(number)
                        scores = {"match": {"value": letter, "answer": "42"},
                                  "judge": {"value": number, "explanation": "graded"}}
                        sample_input = [{"role": "system", "content": "Be brief."},
                                        {"role": "user", "content": [{"type": "text", "text": question}]}]
                    letters.append(LETTER_CREDIT[letter])
                    samples.append({"id": sid, "epoch": epoch, "input": sample_input,
                                    "choices": ["alpha", "beta", "gamma"] if task == "mini_arc" else None,
                                    "target": "A" if task == "mini_arc" else ["42", "forty-two"],
                                    "messages": [], "output": {"model": model, "choices": []},
                                    "scores": scores, "metadata": {}})
                expected[(task, f"{task}/{sid}", model)] = sum(letters) / len(letters)
                if judged:
                    judge[(task, f"{task}/{sid}", model)] = sum(judged) / len(judged)
            header = _inspect_header(task, model, scorers)
            stem = f"2025-05-01T10-00-00_{task}_{model.replace('/', '-').replace(':', '-')}"
            if k == 0:
                with zipfile.ZipFile(root / f"{stem}.eval", "w", compression=zipfile.ZIP_DEFLATED) as zf:
                    zf.writestr("_journal/start.json", json.dumps({"version": 2, "eval": header["eval"],
                                                                   "plan": header["plan"]}))
                    for s in samples:
                        zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
                    zf.writestr("header.json", json.dumps(header))
            elif k == 1:
                members = [("header.json", json.dumps(header).encode(), 8)]
                members += [(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s).encode(), 93)
                            for s in samples]
                members += [("reductions.json", b"[]", 93)]
                write_zip(root / f"{stem}.eval", members)
            else:
                _dump(root / f"{stem}.json", {**header, "samples": samples}, indent=2)
    return GeneratedLogs(root=root, expected=expected, texts=texts, extra={"judge": judge})


# -------------------------------------------------------------------------- HELM

HELM_MODELS = ("openai/gpt2", "meta/llama-7b")
HELM_RUNS = {
    # (scenario, args, group, main metric, main split, instance ids)
    "mmlu_anatomy": ("mmlu", {"subject": "anatomy"}, "mmlu", "exact_match", "test", ["id10", "id11", "id12"]),
    "mmlu_philosophy": ("mmlu", {"subject": "philosophy"}, "mmlu", "exact_match", "test", ["id10", "id11", "id12"]),
    "boolq": ("boolq", {}, "boolq", "quasi_exact_match", "valid", ["id1", "id2", "id3"]),
}
_TYPOS = {"name": "typos", "robustness": True, "fairness": False, "computed_on": "perturbed", "prob": 0.1}


def _stat(name: str, split: str, value: float, perturbation: dict | None = None) -> dict:
    metric_name = {"name": name, "split": split}
    if perturbation:
        metric_name["perturbation"] = perturbation
    return {"name": metric_name, "count": 1, "sum": value, "sum_squared": value * value,
            "min": value, "max": value, "mean": value, "variance": 0.0, "stddev": 0.0}


def write_helm_suite(root: Path, rng: np.random.Generator, *, with_schema: bool = True) -> GeneratedLogs:
    """A suite folder ``runs/v1`` with two models x three runs (two MMLU subjects
    sharing instance ids, and BoolQ whose main metric is quasi_exact_match on
    the valid split). Every instance also has a perturbed row and a second
    trial with other values, and a ``num_output_tokens`` stat outside [0, 1];
    none of those may be read. ``schema.json`` names the main metrics."""
    suite = root / "runs" / "v1"
    expected: dict[Cell, float] = {}
    texts: dict[tuple[str, str], str] = {}
    if with_schema:
        _dump(suite / "schema.json", {
            "metrics": [{"name": "exact_match"}, {"name": "quasi_exact_match"}],
            "run_groups": [
                {"name": "core_scenarios", "subgroups": ["mmlu", "boolq"]},
                {"name": "mmlu", "environment": {"main_name": "exact_match", "main_split": "test"}},
                {"name": "boolq", "environment": {"main_name": "quasi_exact_match", "main_split": "valid"}},
            ],
        }, indent=2)
    for model in HELM_MODELS:
        for scenario, args, group, main, split, ids in HELM_RUNS.values():
            arg_text = "".join(f"{k}={v}," for k, v in args.items())
            run_name = f"{scenario}:{arg_text}method=multiple_choice_joint,model={model.replace('/', '_')}"
            task = scenario + (":" + ",".join(f"{k}={v}" for k, v in sorted(args.items())) if args else "")
            run_dir = suite / run_name
            _dump(run_dir / "run_spec.json", {
                "name": run_name,
                "scenario_spec": {"class_name": f"helm.benchmark.scenarios.{scenario}_scenario.Scenario",
                                  "args": args},
                "adapter_spec": {"method": "multiple_choice_joint", "model": model,
                                 "model_deployment": f"huggingface/{model.split('/')[1]}"},
                "metric_specs": [{"class_name": "helm.benchmark.metrics.basic_metrics.BasicMetric", "args": {}}],
                "groups": [group],
            }, indent=2)
            entries, instances = [], []
            for iid in ids:
                main_value = float(rng.integers(0, 2))
                other_value = float(rng.integers(0, 2))
                values = {main: main_value,
                          ("quasi_exact_match" if main == "exact_match" else "exact_match"): other_value}
                entries.append({"instance_id": iid, "train_trial_index": 0,
                                "stats": [_stat(n, split, v) for n, v in values.items()]
                                + [_stat("num_output_tokens", split, 17.0)]})
                entries.append({"instance_id": iid, "perturbation": _TYPOS, "train_trial_index": 0,
                                "stats": [_stat(n, split, 1.0 - v, _TYPOS) for n, v in values.items()]})
                entries.append({"instance_id": iid, "train_trial_index": 1,
                                "stats": [_stat(n, split, 1.0 - v) for n, v in values.items()]})
                expected[(group, f"{task}/{iid}", model)] = main_value
                question = f"{task} instance {iid}: is it so?"
                texts[(group, f"{task}/{iid}")] = question
                refs = [{"output": {"text": "yes"}, "tags": ["correct"]}, {"output": {"text": "no"}, "tags": []}]
                instances.append({"input": {"text": question}, "references": refs, "split": split, "id": iid})
                instances.append({"input": {"text": question.upper()}, "references": refs, "split": split,
                                  "id": iid, "perturbation": _TYPOS})
            _dump(run_dir / "per_instance_stats.json", entries, indent=2)
            _dump(run_dir / "instances.json", instances, indent=2)
            _dump(run_dir / "stats.json", [_stat("exact_match", split, 0.5)], indent=2)
            _dump(run_dir / "scenario.json", {"name": scenario}, indent=2)
    return GeneratedLogs(root=suite, expected=expected, texts=texts)


# ------------------------------------------------------------------- OpenCompass

OC_MODELS = ("internlm2-7b-hf", "qwen2-7b-hf", "llama3-8b-hf")


def write_opencompass_outputs(root: Path, rng: np.random.Generator) -> GeneratedLogs:
    """``<ts>/results/<model>/<dataset>.json`` for three models:

    * ``gsm8k``: an evaluator's list of {pred, answer, correct: bool};
    * ``math``: BaseEvaluator's list with ``example_abbr`` and ``correct`` over
      n=2 replicas (partial credit = their mean);
    * ``ceval-physics``: format_details' dict "0", "1", ... with ``correct``;
    * ``triviaqa``: format_details without correctness (must be reported, not loaded);
    * ``nq`` (first model only): metrics without details.

    A ``predictions/`` folder and ``summary/`` CSV sit beside, as OpenCompass writes them.
    """
    work = root / "20250101_120000"
    expected: dict[Cell, float] = {}
    texts: dict[tuple[str, str], str] = {}
    for k, model in enumerate(OC_MODELS):
        results = work / "results" / model
        details = []
        for i in range(4):
            ok = bool(rng.integers(0, 2))
            details.append({"pred": [str(i)], "answer": str(i) if ok else "x", "correct": ok})
            expected[("gsm8k", f"gsm8k/{i}", model)] = 1.0 if ok else 0.0
        _dump(results / "gsm8k.json", {"accuracy": 50.0, "details": details}, indent=4)

        details = []
        for i in range(3):
            reps = [bool(rng.integers(0, 2)), bool(rng.integers(0, 2))]
            details.append({"example_abbr": f"math_{i}", "pred": ["1", "2"], "answer": ["1", "1"],
                            "correct": reps, "G-Pass@2_0.5": 0.5})
            expected[("math", f"math/math_{i}", model)] = sum(reps) / 2
        _dump(results / "math.json", {"accuracy (2 runs average)": 40.0, "details": details}, indent=4)

        details = {}
        for i in range(3):
            ok = bool(rng.integers(0, 2))
            prompt = [{"role": "HUMAN", "prompt": f"Physics question {i}?"}, {"role": "BOT", "prompt": ""}]
            details[str(i)] = {"prompt": prompt, "origin_prediction": "B", "predictions": "B",
                               "references": "B" if ok else "C", "correct": ok}
            expected[("ceval-physics", f"ceval-physics/{i}", model)] = 1.0 if ok else 0.0
            texts[("ceval-physics", f"ceval-physics/{i}")] = f"Physics question {i}?"
        _dump(results / "ceval-physics.json", {"accuracy": 66.7, "details": details, "type": "GEN"}, indent=4)

        details = {str(i): {"prompt": f"Who wrote {i}?", "origin_prediction": "Someone",
                            "predictions": "Someone", "references": "['Author']"} for i in range(3)}
        _dump(results / "triviaqa.json", {"score": 33.3, "details": details, "type": "GEN"}, indent=4)
        if k == 0:
            _dump(results / "nq.json", {"score": 30.0}, indent=4)

        _dump(work / "predictions" / model / "gsm8k.json",
              {str(i): {"origin_prompt": f"q{i}", "prediction": "1", "gold": "1"} for i in range(4)}, indent=4)
    (work / "summary").mkdir(parents=True, exist_ok=True)
    (work / "summary" / "summary_20250101_120000.csv").write_text("dataset,version,metric,mode\n")
    return GeneratedLogs(root=work, expected=expected, texts=texts)


def matrix(parsed) -> dict[Cell, float]:
    """The parsed responses as {(dataset, external_id, model): credit}."""
    r = parsed.responses
    return {(d, e, m): c for d, e, m, c in zip(r["dataset"], r["external_id"], r["model"], r["credit"])}


# ------------------------------------------------------------ for the load tests

def write_inspect_json(path: Path, *, model: str, task: str, samples: list[tuple]) -> dict[Cell, float]:
    """One Inspect ``.json`` log of ``samples`` = [(id, epoch, score value, input text)]
    scored by a single scorer ``choice``; the value is written as given (a letter,
    a number, or anything else for the bad-value tests). Returns the hand-built
    cells of the letter and number values: the mean over epochs (letters
    C/I/P/N -> 1/0/0.5/0)."""
    header = _inspect_header(task, model, ["choice"])
    rows = [{"id": sid, "epoch": epoch, "input": text, "target": "A", "messages": [],
             "output": {"model": model, "choices": []},
             "scores": {"choice": {"value": value, "answer": "A"}}, "metadata": {}}
            for sid, epoch, value, text in samples]
    _dump(path, {**header, "samples": rows}, indent=2)
    credits: dict[Cell, list[float]] = {}
    for sid, _, value, _ in samples:
        if isinstance(value, str) and value in LETTER_CREDIT:
            credits.setdefault((task, f"{task}/{sid}", model), []).append(LETTER_CREDIT[value])
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            credits.setdefault((task, f"{task}/{sid}", model), []).append(float(value))
    return {cell: sum(v) / len(v) for cell, v in credits.items()}


def write_lm_eval_many(root: Path, rng: np.random.Generator, *, models: tuple[str, ...],
                       n_docs: int, task: str = "arith_big") -> GeneratedLogs:
    """One standalone task of ``n_docs`` documents per model in the 0.4.3+
    layout (one filter, metric ``acc``; each model skips every 7th document
    after the first model, so some cells are unobserved). Expected credit: the
    drawn ``acc``."""
    expected: dict[Cell, float] = {}
    for k, model in enumerate(models):
        folder = root / model.replace("/", "__")
        date = f"2025-03-0{k + 1}T08-00-00.000001"
        results = {
            "results": {task: {"alias": task}}, "group_subtasks": {task: []},
            "configs": {task: {"task": task, "metric_list": [{"metric": "acc", "aggregation": "mean"}]}},
            "config": {"model": "hf", "model_args": f"pretrained={model}"},
            "lm_eval_version": "0.4.9", "model_name": model, "model_name_sanitized": model.replace("/", "__"),
        }
        _dump(folder / f"results_{date}.json", results)
        draws = rng.integers(0, 2, size=n_docs)
        lines = []
        for doc_id in range(n_docs):
            if k > 0 and doc_id % 7 == k:
                continue
            lines.append(json.dumps({"doc_id": doc_id, "doc": {"question": f"What is {doc_id} + 1?"},
                                     "target": str(doc_id), "filter": "none", "metrics": ["acc"],
                                     "acc": float(draws[doc_id])}))
            expected[(task, f"{task}/{doc_id}", model)] = float(draws[doc_id])
        (folder / f"samples_{task}_{date}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return GeneratedLogs(root=root, expected=expected)


def zip_folder(folder: Path, archive: Path, *, prefix: str = "") -> Path:
    """A .zip of every file under ``folder`` (names relative to it, under ``prefix``)."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


def stored_cells(response_set) -> dict[Cell, float]:
    """A loaded response set read back through the selector ``response_matrix``,
    rows mapped by (Dataset.name, Question.external_id) and columns by
    LanguageModel.name: {(dataset, external_id, model): credit} over the whole
    (n_questions, n_models) grid, NaN where no response was stored."""
    from annotate.catalog.selectors.matrix import response_matrix
    from annotate.models import LanguageModel, Question

    m = response_matrix(response_set=response_set)
    rows = {pk: (d, e) for pk, d, e in Question.objects.filter(pk__in=m.question_ids.tolist())
            .values_list("pk", "dataset__name", "external_id")}
    cols = dict(LanguageModel.objects.filter(pk__in=m.model_ids.tolist()).values_list("pk", "name"))
    return {(*rows[q], cols[j]): float(m.R[a, b])
            for a, q in enumerate(m.question_ids.tolist()) for b, j in enumerate(m.model_ids.tolist())}


def assert_same_matrix(stored: dict[Cell, float], expected: dict[Cell, float], *, atol: float = 1e-12) -> None:
    """``stored`` (a full grid with NaN) equals ``expected`` (observed cells only):
    the same questions and models, NaN exactly where ``expected`` has no cell,
    values to ``atol``."""
    assert {(d, e) for d, e, _ in stored} == {(d, e) for d, e, _ in expected}
    assert {m for _, _, m in stored} == {m for _, _, m in expected}
    keys = sorted(stored)
    got = np.array([stored[k] for k in keys])
    want = np.array([expected.get(k, np.nan) for k in keys])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)


# --------------------------------------------- one record per sample: small logs

def write_lm_eval_run(folder: Path, *, model: str, task: str, date: str,
                      lines: list[tuple[int, float]]) -> Path:
    """One lm-eval 0.4.3+ run of a standalone ``task``: ``results_<date>.json`` and
    ``samples_<task>_<date>.jsonl`` with one line per (doc_id, acc) of ``lines``,
    in that order (a doc_id may repeat), filter "none", metric ``acc``.
    ``date`` is lm-eval's ``date_id`` (e.g. "2025-01-01T10-00-00.000001").
    Returns the samples file."""
    results = {
        "results": {task: {"alias": task}}, "group_subtasks": {task: []},
        "configs": {task: {"task": task, "metric_list": [{"metric": "acc", "aggregation": "mean"}]}},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "lm_eval_version": "0.4.9", "model_name": model, "model_name_sanitized": model.replace("/", "__"),
    }
    _dump(folder / f"results_{date}.json", results, indent=2)
    path = folder / f"samples_{task}_{date}.jsonl"
    path.write_text("".join(json.dumps({"doc_id": d, "doc": {"question": f"{task} question {d}?"}, "target": "1",
                                        "arguments": {}, "resps": [["1"]], "filtered_resps": ["1"],
                                        "filter": "none", "metrics": ["acc"], "doc_hash": f"h{d}",
                                        "prompt_hash": "p", "target_hash": "t", "acc": value}) + "\n"
                            for d, value in lines), encoding="utf-8")
    return path


def write_inspect_run(path: Path, *, model: str, task: str, samples: list[tuple], status: str = "success",
                      created: str | None = "2025-05-01T10:00:00+00:00") -> Path:
    """One Inspect log of ``samples`` = [(id, epoch, value, error)] scored by a single
    scorer ``choice``, as a ``.json`` log or a ``.eval`` zip (by ``path``'s suffix).
    ``value`` None writes a sample without scores (one that did not finish);
    ``error`` a string sets the sample's ``error`` (an EvalError) and keeps the
    value. ``status`` is the log's ("success", "cancelled", "error");
    ``created`` its ``eval.created`` (None: left out)."""
    header = _inspect_header(task, model, ["choice"])
    header["status"] = status
    if created is None:
        del header["eval"]["created"]
    else:
        header["eval"]["created"] = created
    if status != "success":
        header["error"] = {"message": "interrupted", "traceback": "", "traceback_ansi": ""}
    rows = []
    for sid, epoch, value, error in samples:
        row = {"id": sid, "epoch": epoch, "input": f"{task} question {sid}?", "target": "A", "messages": [],
               "output": {"model": model, "choices": []}, "metadata": {}}
        if value is not None:
            row["scores"] = {"choice": {"value": value, "answer": "A"}}
        if error is not None:
            row["error"] = {"message": error, "traceback": "", "traceback_ansi": ""}
        rows.append(row)
    if path.suffix == ".eval":
        members = [("header.json", json.dumps(header).encode(), 8)]
        members += [(f"samples/{r['id']}_epoch_{r['epoch']}.json", json.dumps(r).encode(), 8) for r in rows]
        write_zip(path, members)
    else:
        _dump(path, {**header, "samples": rows}, indent=2)
    return path


def write_helm_run(suite: Path, *, model: str, scenario: str, instances: list[tuple[str, float]],
                   date: str | None = None) -> Path:
    """One HELM run folder ``<suite>/<scenario>:model=<model>`` with ``run_spec.json``
    and ``per_instance_stats.json`` holding one unperturbed first-trial entry per
    (instance_id, exact_match) of ``instances``, in that order (an id may repeat).
    ``date`` writes the suite's ``summary.json`` (``helm-summarize``'s
    ExecutiveSummary: release, suites, suite, date). Returns the run folder."""
    run_name = f"{scenario}:model={model.replace('/', '_')}"
    run_dir = suite / run_name
    _dump(run_dir / "run_spec.json", {
        "name": run_name, "scenario_spec": {"class_name": f"helm.{scenario}.Scenario", "args": {}},
        "adapter_spec": {"method": "generation", "model": model, "model_deployment": model},
        "metric_specs": [], "groups": [scenario],
    }, indent=2)
    _dump(run_dir / "per_instance_stats.json",
          [{"instance_id": iid, "train_trial_index": 0, "stats": [_stat("exact_match", "test", value)]}
           for iid, value in instances], indent=2)
    if date is not None:
        _dump(suite / "summary.json", {"release": None, "suites": [suite.name], "suite": suite.name,
                                       "date": date}, indent=2)
    return run_dir


def write_opencompass_result(work: Path, *, model: str, dataset: str, details: list[dict]) -> Path:
    """``<work>/results/<model>/<dataset>.json`` holding ``details`` (BaseEvaluator's
    list of records); ``work`` is OpenCompass's ``<YYYYMMDD_HHMMSS>`` folder."""
    path = work / "results" / model / f"{dataset}.json"
    _dump(path, {"accuracy": 50.0, "details": details}, indent=4)
    return path
