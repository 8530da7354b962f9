"""Inspect AI evaluation logs: ``.json`` and ``.eval``.

* ``.json`` (inspect_ai/log/_recorders/json.py): one EvalLog object with
  ``version``, ``status``, ``eval`` (``model``, ``task``, ``scorers``,
  ``dataset``), ``results``, ``stats`` and ``samples``.
* ``.eval`` (inspect_ai/log/_recorders/eval.py): a zip holding
  ``header.json`` (the EvalLog without samples; ``_journal/start.json`` while
  a run is unfinished), one ``samples/<id>_epoch_<epoch>.json`` per sample and
  epoch, ``reductions.json`` and ``summaries.json``. Members are deflated, or
  Zstandard-compressed (zip method 93) when ``INSPECT_USE_ZSTD`` is set
  (https://github.com/UKGovernmentBEIS/inspect_ai/pull/3145; common unzip
  tools cannot read them,
  https://github.com/UKGovernmentBEIS/inspect_ai/issues/4553). Python's
  zipfile before 3.14 cannot either, so method-93 members are read here
  from the local file header and decompressed with ``zstandard``.

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

import contextlib
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

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
from annotate.catalog.loaders.limits import CHUNK_BYTES, max_member_bytes, max_unpacked_bytes, max_unpacked_total_bytes
from annotate.core import loads_bounded

FORMAT = "inspect"

class MemberTooLarge(ValueError):
    """A zip member decompresses to more than its limit (the message names member and limit)."""


ZIP_ZSTANDARD = 93  # PKWARE APPNOTE 4.4.5 compression method for Zstandard
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # APPNOTE 4.3.7, 30 bytes

NO_SCORES = "sample has no scores"
NO_SCORER = "sample has no score from scorer {scorer!r} (scorers: {available})"
NO_HEADER = "no header.json or _journal/start.json in this .eval file"
NO_SAMPLES = "this log holds no samples (was it written with --no-log-samples?)"
NO_MODEL = "no eval.model in this log"
BAD_ZIP = "not a readable .eval (zip) file: {error}"
BAD_MEMBER = "member {member!r} cannot be read: {error}"
MEMBER_TOO_LARGE = ("member {member!r} decompresses to more than {limit:,} bytes (EIP_UPLOAD_MAX_MEMBER_BYTES); "
                    "nothing was loaded")
ARCHIVE_TOO_LARGE = ("this .eval decompresses to more than {limit:,} bytes (EIP_UPLOAD_MAX_UNPACKED_BYTES); "
                     "nothing was loaded")
TOTAL_TOO_LARGE = ("the archives of this upload decompress to more than {limit:,} bytes in total "
                   "(EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES); nothing was loaded")
UNFINISHED = ("started", "cancelled", "error")  # EvalLog.status of a run that did not finish


class _Window:
    """``length`` bytes of an open file from ``start``, read in the caller's chunks."""

    def __init__(self, handle: BinaryIO, start: int, length: int) -> None:
        handle.seek(start)
        self._handle, self._left = handle, length

    def read(self, size: int = -1) -> bytes:
        size = self._left if size is None or size < 0 else min(size, self._left)
        block = self._handle.read(size)
        self._left -= len(block)
        return block


def _member_stream(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, stack: contextlib.ExitStack) -> BinaryIO:
    """A reader of the member's uncompressed bytes (zipfile's own, or Zstandard over the raw bytes)."""
    if info.compress_type != ZIP_ZSTANDARD:
        return stack.enter_context(zf.open(info))
    if info.flag_bits & 0x1:
        raise ValueError("encrypted members are not supported")
    fh = stack.enter_context(path.open("rb"))
    fh.seek(info.header_offset)
    header = fh.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise ValueError("truncated local file header")
    signature, *_, name_len, extra_len = _LOCAL_HEADER.unpack(header)
    if signature != b"PK\x03\x04":
        raise ValueError("bad local file header signature")
    window = _Window(fh, info.header_offset + _LOCAL_HEADER.size + name_len + extra_len, info.compress_size)
    # A frame written by a streaming compressor need not state its size, so
    # read it as a stream rather than with ZstdDecompressor.decompress.
    return stack.enter_context(zstandard.ZstdDecompressor().stream_reader(window, read_across_frames=True))


def read_zip_member(
    path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, *, limit: int | None = None
) -> bytearray:
    """The uncompressed bytes of one zip member, Zstandard members included.

    Read in chunks of ``CHUNK_BYTES``, counting bytes: a member that
    decompresses to more than ``limit`` is refused as soon as it passes it
    (a zip or zstd bomb never reaches memory whole).

    Parameters
    ----------
    path : Path
        The archive (for Zstandard members, read from their local header).
    zf : zipfile.ZipFile
    info : zipfile.ZipInfo
    limit : int, optional
        Most bytes the member may decompress to; default
        ``EIP_UPLOAD_MAX_MEMBER_BYTES`` (:func:`annotate.catalog.loaders.limits.max_member_bytes`).

    Raises
    ------
    MemberTooLarge
        The member decompresses to more than ``limit`` bytes.
    ValueError
        If the member is encrypted, its local header is malformed, or its
        CRC-32 or size does not match the central directory.
    """
    limit = max_member_bytes() if limit is None else limit
    data = bytearray()
    crc = 0
    with contextlib.ExitStack() as stack:
        stream = _member_stream(path, zf, info, stack)
        while True:
            block = stream.read(CHUNK_BYTES)
            if not block:
                break
            if len(data) + len(block) > limit:
                raise MemberTooLarge(MEMBER_TOO_LARGE.format(member=info.filename, limit=limit))
            data += block
            crc = zlib.crc32(block, crc)
    if info.compress_type == ZIP_ZSTANDARD and (len(data) != info.file_size or crc != info.CRC):
        raise ValueError("size or CRC-32 does not match the zip directory")
    return data  # not bytes(data): that would hold the member twice


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
    archive_limit, total_limit = max_unpacked_bytes(), max_unpacked_total_bytes()
    archive_bytes = 0

    class _Refused(Exception):
        pass

    with zf:
        infos = {info.filename: info for info in zf.infolist()}

        def member_json(member: str) -> Any:
            nonlocal archive_bytes
            left = min(archive_limit - archive_bytes, total_limit - collector.unpacked_bytes)
            try:
                data = read_zip_member(path, zf, infos[member], limit=min(max_member_bytes(), max(left, 0)))
            except MemberTooLarge as exc:
                if left < max_member_bytes():  # the archive's or the upload's budget ran out, not the member's
                    total = total_limit - collector.unpacked_bytes < archive_limit - archive_bytes
                    message = (TOTAL_TOO_LARGE.format(limit=total_limit) if total
                               else ARCHIVE_TOO_LARGE.format(limit=archive_limit))
                    collector.problem(name, message)
                else:
                    collector.problem(f"{name}::{member}", str(exc))
                raise _Refused from None
            except (ValueError, OSError, zipfile.BadZipFile, zstandard.ZstdError, NotImplementedError) as exc:
                collector.problem(f"{name}::{member}", BAD_MEMBER.format(member=member, error=exc))
                return None
            archive_bytes += len(data)
            collector.unpacked_bytes += len(data)
            try:
                return loads_bounded(data)
            except ValueError as exc:
                collector.problem(f"{name}::{member}", BAD_MEMBER.format(member=member, error=exc))
                return None

        try:
            return _eval_members(infos, member_json, collector, name)
        except _Refused:
            return None, []


def _eval_members(infos: dict, member_json: Any, collector: Collector, name: str) -> tuple[dict | None, list]:
    """(header, [(member name, sample)]) read through ``member_json``."""
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
        The ``.eval`` and ``.json`` logs found by :func:`~annotate.catalog.loaders.harness.parse_harness_logs`.
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
