"""Inspect AI evaluation logs: ``.json`` and ``.eval``.

* ``.json`` (inspect_ai/log/_recorders/json.py): one EvalLog object with
  ``version``, ``status``, ``eval`` (``model``, ``task``, ``scorers``,
  ``dataset``), ``results``, ``stats`` and ``samples``.
* ``.eval`` (inspect_ai/log/_recorders/eval.py): a zip holding
  ``header.json`` (the EvalLog without samples; ``_journal/start.json`` while
  a run is unfinished), one ``samples/<id>_epoch_<epoch>.json`` per sample and
  epoch, ``reductions.json`` and ``summaries.json``. Members are deflated, or
  Zstandard-compressed (zip method 93) when ``INSPECT_USE_ZSTD`` is set
  (inspect_ai pull request #3145; issue #4553 notes that common unzip tools
  cannot read them). Python's zipfile before 3.14 cannot either, so method-93
  members are read here from the local file header and decompressed with
  ``zstandard``.

Each sample (EvalSample) holds ``id``, ``epoch``, ``input`` (a string or chat
messages), ``choices``, ``target`` and ``scores``: scorer name -> Score, whose
``value`` is a letter C/I/P/N (inspect_ai/scorer/_metric.py: 1, 0, 0.5, 0), a
number or a bool. The distinct epochs of one sample are averaged by the
collector.

A sample whose ``error`` is set (EvalSample.error, an EvalError) errored and
never counts; nor does a sample without scores in a log whose ``status`` is
"cancelled" or "error", or in a ``.eval`` that holds only
``_journal/start.json`` (status "started": the run never finished). The finished samples of such a
log do count, once: ``inspect eval-retry`` copies them into the retried log,
so the same (sample, epoch) appears in both logs and is collapsed when the
scores agree (or refused when they differ, unless the newest run, ordered by
``eval.created``, is chosen).
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import zstandard

from annotate.jsonsafe import loads_bounded
from annotate.loaders.harness._common import (
    Collector,
    NotAScore,
    Run,
    as_text,
    load_json,
    parse_time,
    subject_for,
    to_credit,
)

FORMAT = "inspect"

ZIP_ZSTANDARD = 93  # PKWARE APPNOTE 4.4.5 compression method for Zstandard
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # APPNOTE 4.3.7, 30 bytes

NO_SCORES = "sample has no scores"
NO_SCORER = "sample has no score from scorer {scorer!r} (scorers: {available})"
NO_HEADER = "no header.json or _journal/start.json in this .eval file"
NO_SAMPLES = "this log holds no samples (was it written with --no-log-samples?)"
NO_MODEL = "no eval.model in this log"
BAD_ZIP = "not a readable .eval (zip) file: {error}"
BAD_MEMBER = "member {member!r} cannot be read: {error}"
UNFINISHED = ("started", "cancelled", "error")  # EvalLog.status of a run that did not finish


def read_zip_member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The uncompressed bytes of one zip member, Zstandard members included.

    Raises
    ------
    ValueError
        If the member is encrypted, its local header is malformed, or its
        CRC-32 or size does not match the central directory.
    """
    if info.compress_type != ZIP_ZSTANDARD:
        return zf.read(info)
    if info.flag_bits & 0x1:
        raise ValueError("encrypted members are not supported")
    with path.open("rb") as fh:
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size:
            raise ValueError("truncated local file header")
        signature, *_, name_len, extra_len = _LOCAL_HEADER.unpack(header)
        if signature != b"PK\x03\x04":
            raise ValueError("bad local file header signature")
        fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
        compressed = fh.read(info.compress_size)
    # A frame written by a streaming compressor need not state its size, so
    # read it as a stream rather than with ZstdDecompressor.decompress.
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(compressed), read_across_frames=True)
    data = reader.read()
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise ValueError("size or CRC-32 does not match the zip directory")
    return data


def _sample_order(sample: dict) -> tuple:
    sid = sample.get("id")
    key = (0, sid, "") if isinstance(sid, (int, float)) and not isinstance(sid, bool) else (1, 0, str(sid))
    return (*key, sample.get("epoch") or 0)


def _read_eval(path: Path, collector: Collector) -> tuple[dict | None, list[tuple[str, dict]]]:
    """(header, [(member name, sample)]) from a .eval zip."""
    name = collector.name(path)
    collector.read(path)
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        collector.problem(name, BAD_ZIP.format(error=exc))
        return None, []
    with zf:
        infos = {info.filename: info for info in zf.infolist()}

        def member_json(member: str) -> Any:
            try:
                return loads_bounded(read_zip_member(path, zf, infos[member]))
            except (ValueError, OSError, zipfile.BadZipFile, zstandard.ZstdError, NotImplementedError) as exc:
                collector.problem(f"{name}::{member}", BAD_MEMBER.format(member=member, error=exc))
                return None

        header_name = next((m for m in ("header.json", "_journal/start.json") if m in infos), None)
        if header_name is None:
            collector.problem(name, NO_HEADER)
            return None, []
        header = member_json(header_name)
        if header_name != "header.json" and isinstance(header, dict):
            # Only the journal's start record: the run never wrote its header, so it did not finish.
            header.setdefault("status", "started")
        samples = []
        for member in infos:
            if member.startswith("samples/") and member.endswith(".json"):
                sample = member_json(member)
                if isinstance(sample, dict):
                    samples.append((member, sample))
    samples.sort(key=lambda pair: _sample_order(pair[1]))
    return header if isinstance(header, dict) else None, samples


def _input_text(value: Any) -> str:
    """The question from ``sample.input``: the string, or the last user message."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return ""
    texts = []
    for message in value:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(c.get("text", "") for c in content
                                if isinstance(c, dict) and c.get("type") == "text")
        if isinstance(content, str):
            texts.append(content)
    return texts[-1] if texts else ""


def _task(header: dict, path: Path) -> str:
    return str((header.get("eval") or {}).get("task") or path.stem)


def parse(files: list[Path], collector: Collector, *, metric: str | None, filter: str | None,
          dataset: str | None) -> None:
    """Read Inspect ``.json`` and ``.eval`` logs into ``collector``.

    Parameters
    ----------
    files : list of Path
        The ``.eval`` and ``.json`` logs found by :func:`~annotate.loaders.harness.parse_harness_logs`.
    collector : Collector
        Receives questions, models, scores, problems and notes.
    metric : str or None
        Scorer name; None for each task's first scorer.
    filter : str or None
        Unused (lm-eval only); refused earlier by the entry point.
    dataset : str or None
        Dataset name for every question; None for the task (``eval.task``).
    """
    logs = []
    for path in files:
        name = collector.name(path)
        if path.suffix == ".eval":
            header, samples = _read_eval(path, collector)
            where = [(f"{name}::{member}", "") for member, _ in samples]
            samples = [s for _, s in samples]
        else:
            header = load_json(path, collector)
            if not isinstance(header, dict):
                continue
            samples = header.get("samples") or []
            if not isinstance(samples, list):
                collector.problem(name, "'samples' must be a list", column="samples")
                continue
            where = [(name, f"samples[{i}].") for i in range(len(samples))]
        if header is None:
            continue
        if not samples:
            collector.problem(name, NO_SAMPLES)
            continue
        logs.append((path, header, samples, where))

    # The default scorer is per task: the first of the task's eval.scorers
    # (then of the samples' score keys), since tasks differ in their scorers.
    scorers_by_task: dict[str, list[str]] = {}
    for path, header, samples, _ in logs:
        seen = scorers_by_task.setdefault(_task(header, path), [])
        for scorer in (header.get("eval") or {}).get("scorers") or []:
            if isinstance(scorer, dict) and isinstance(scorer.get("name"), str) and scorer["name"] not in seen:
                seen.append(scorer["name"])
        for sample in samples:
            for key in (sample.get("scores") or {}) if isinstance(sample, dict) else ():
                if key not in seen:
                    seen.append(key)
    used_by_task: dict[str, str | None] = {}
    for task, seen in scorers_by_task.items():
        used_by_task[task] = metric or (seen[0] if seen else None)
        if metric is None and len(seen) > 1:
            collector.notes.append(
                f"Inspect task {task!r} has several scorers ({', '.join(seen)}); used {seen[0]!r} "
                "(the task's first scorer); choose another with metric="
            )

    for path, header, samples, where in logs:
        name = collector.name(path)
        spec = header.get("eval") or {}
        model = spec.get("model")
        if not isinstance(model, str) or not model:
            collector.problem(name, NO_MODEL, column="eval.model")
            continue
        task = _task(header, path)
        used = used_by_task[task]
        group = dataset or task
        status = header.get("status")
        if status not in (None, "success"):
            collector.notes.append(f"{name} has status {status!r}: only the samples it holds were read")
        collector.add_model(model, {
            "harness": FORMAT,
            "inspect_ai": (spec.get("packages") or {}).get("inspect_ai"),
        }, source=name)
        source_dataset = (spec.get("dataset") or {}).get("name")
        run = Run(label=name, started=parse_time(spec.get("created")))
        for sample, (file, prefix) in zip(samples, where):
            if not isinstance(sample, dict) or "id" not in sample:
                collector.problem(file, "sample has no id", column=f"{prefix}id")
                continue
            sid = sample["id"]
            epoch = sample.get("epoch", 1)
            external_id = f"{task}/{sid}"
            source = f"{file}:sample {sid} epoch {epoch}"
            collector.add_question(
                dataset=group,
                external_id=external_id,
                subject=subject_for(task, group),
                text=_input_text(sample.get("input")),
                options=[c for c in sample.get("choices") or [] if isinstance(c, str)],
                reference_answer=as_text(sample.get("target")),
                metadata={"harness": FORMAT, "task": task, "sample_id": sid, "source_dataset": source_dataset},
                source=source,
            )
            scores = sample.get("scores")
            if sample.get("error"):
                collector.excluded["errored"] += 1
                continue
            if status in UNFINISHED and (not isinstance(scores, dict) or not scores):
                collector.excluded[f"unscored in a {status} log"] += 1
                continue
            if not isinstance(scores, dict) or not scores:
                collector.bad_value(NotAScore(NO_SCORES, "no score"), file, None, f"{prefix}scores")
                continue
            if used not in scores:
                collector.problem(file, NO_SCORER.format(scorer=used, available=sorted(scores)),
                                  column=f"{prefix}scores")
                continue
            score = scores[used]
            value = score.get("value") if isinstance(score, dict) else score
            try:
                credit = to_credit(value, letters=True)
            except NotAScore as exc:
                collector.bad_value(exc, file, None, f"{prefix}scores.{used}.value")
                continue
            collector.add_score(dataset=group, external_id=external_id, model=model, credit=credit,
                                file=file, column=prefix.rstrip(".") or None, source=source, epoch=epoch,
                                run=run)
    collector.options.update({"metric": metric, "dataset": dataset,
                              "metrics_used": dict(sorted(used_by_task.items()))})
