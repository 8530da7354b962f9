"""A study written out as one JSON document: settings, questions, pairs, evaluators, judgments.

:func:`study_export` builds the document (format
:data:`~annotate.studies.services.transfer_format.SCHEMA_VERSION`, described in
:mod:`annotate.studies.services.study_transfer`), :func:`dump_export` writes it;
:func:`study_export_chunks` writes the same text a block at a time, never
holding the run's questions and results (they grow with the run).
"""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from django.utils import timezone

from annotate.models import Study
from annotate.reports import pools_analysis_latest, run_alpha
from annotate.studies.selectors.transfer import (
    METHOD_FIELDS,
    RESULT_FIELDS,
    StudyExportRows,
    study_export_keys,
    study_export_questions,
    study_export_results,
    study_export_rows,
)
from annotate.studies.services.transfer_format import (
    KIND,
    SCHEMA_VERSION,
    STUDY_SETTINGS,
)


def _time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _pools_export(study: Study) -> dict | None:
    """The stored pools analysis the report of the study's run reads, its
    question ids turned into keys (only the exported questions), or None."""
    run = study.scoring_run
    analysis = pools_analysis_latest(response_set=run.response_set, alpha=run_alpha(run))
    if analysis is None:
        return None
    result = dict(analysis.result)
    if "question_ids" in result:
        ids = result.pop("question_ids")
        keys = study_export_keys(study=study, question_ids=ids)
        keep = [i for i, pk in enumerate(ids) if pk in keys]
        result["questions"] = [list(keys[ids[i]]) for i in keep]
        result["pools"] = [
            {**p, "difficulty_scaled": None if p.get("difficulty_scaled") is None
             else [p["difficulty_scaled"][i] for i in keep]}
            for p in result["pools"]
        ]
    return {"params": analysis.params, "result": result, "created_at": _time(analysis.created_at),
            "started_at": _time(analysis.started_at), "finished_at": _time(analysis.finished_at),
            "duration_s": analysis.duration_s}


def _questions(study: Study) -> Iterator[dict]:
    """The document's ``questions``, in id order (the import creates new questions in this order)."""
    for q in study_export_questions(study=study):
        yield {"dataset": q["dataset__name"], "external_id": q["external_id"], "subject": q["subject__name"],
               "text": q["text"], "options": q["options"], "reference_answer": q["reference_answer"],
               "metadata": q["metadata"]}


def _question_results(study: Study) -> Iterator[dict]:
    """The document's ``scoring_run.question_results``, by question key."""
    for r in study_export_results(study=study):
        yield {"question": [r["question__dataset__name"], r["question__external_id"]],
               **{f: r[f] for f in RESULT_FIELDS}}


def _evaluators(rows: StudyExportRows) -> list[dict]:
    keys = {pk: list(key) for pk, key in rows.keys.items()}
    position_of = {p[0]: p[1] for p in rows.pairs}
    assignments: dict[int, list] = {}
    for part_id, pair_id, left_id, shown_at in rows.assignments:
        assignments.setdefault(part_id, []).append(
            {"pair": position_of[pair_id], "left_question": keys[left_id], "shown_at": _time(shown_at)})
    judgments: dict[int, list] = {}
    for j in rows.judgments:
        judgments.setdefault(j["participation_id"], []).append({
            "pair": position_of[j["pair_id"]],
            "choice": j["choice"],
            "left_question": keys[j["left_question_id"]],
            "harder_question": keys[j["harder_question_id"]] if j["harder_question_id"] else None,
            "shown_at": _time(j["shown_at"]),
            "submitted_at": _time(j["submitted_at"]),
            "seconds": j["seconds"],
            "client_seconds": j["client_seconds"],
        })
    events: dict[int, list] = {}
    for part_id, action, reason, by, at in rows.exclusion_events:
        events.setdefault(part_id, []).append({"action": action, "reason": reason, "by": by, "at": _time(at)})
    evaluators = []
    for p in rows.participations:
        evaluators.append({
            "pseudonym": p.user.get_username(),
            "seed": p.seed,
            "field_of_study": p.field_of_study,
            "education_level": p.education_level,
            "qualified_subjects": sorted(s.name for s in p.qualified_subjects.all()),
            "consented_at": _time(p.consented_at),
            "onboarded_at": _time(p.onboarded_at),
            "guidelines_accepted_at": _time(p.guidelines_accepted_at),
            "finished_at": _time(p.finished_at),
            "created_at": _time(p.created_at),
            "assignments": sorted(assignments.get(p.pk, []), key=lambda a: a["pair"]),
            "judgments": sorted(judgments.get(p.pk, []), key=lambda j: j["pair"]),
            "platform_participant_id": p.platform_participant_id,
            "platform_study_id": p.platform_study_id,
            "platform_session_id": p.platform_session_id,
            "excluded_at": _time(p.excluded_at),
            "excluded_by": p.excluded_by.get_username() if p.excluded_by else None,
            "exclusion_reason": p.exclusion_reason,
            "exclusion_events": events.get(p.pk, []),
            "group": p.group,
        })
    evaluators.sort(key=lambda e: e["pseudonym"])
    return evaluators


def _document(study: Study, rows: StudyExportRows, *, now: datetime | None, questions: object,
              question_results: object) -> dict:
    """The document with ``questions`` and ``question_results`` as given (lists, or
    the placeholders :func:`study_export_chunks` streams in their place)."""
    run = study.scoring_run
    keys = {pk: list(key) for pk, key in rows.keys.items()}
    return {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "source": {
            "exported_at": _time(now or timezone.now()),
            "study_id": study.pk,
            "scoring_run_id": run.pk,
            "response_set": {"id": run.response_set_id, "name": run.response_set.name,
                             "version": run.response_set.version, "checksum": run.response_set.checksum},
        },
        "study": {
            "name": study.name,
            "status": study.status,
            "origin": study.origin,
            "strategy": study.strategy,
            "seed": study.seed,
            "n_pairs": study.n_pairs,
            "include_unkept": study.include_unkept,
            "include_low_coverage": study.include_low_coverage,
            "target_judgments_per_pair": study.target_judgments_per_pair,
            "guidelines": study.guidelines,
            "pairs_per_subject": study.pairs_per_subject,
            "consent_text": study.consent_text,
            "onboarding_questions": list(study.onboarding_questions),
            "datasets": rows.study_datasets,
            "subjects": rows.study_subjects,
            "created_at": _time(study.created_at),
            "closed_at": _time(study.closed_at),
            **{f: getattr(study, f) for f in STUDY_SETTINGS},
            "adaptive_pool": sorted([*keys[q], block] for q, block in rows.pool),
        },
        "datasets": [
            {"name": name, "description": description}
            for name, description in rows.datasets
        ],
        "questions": questions,
        "scoring_run": {
            "status": run.status,
            "params": run.params,
            "error": run.error,
            "created_at": _time(run.created_at),
            "finished_at": _time(run.finished_at),
            "methods": [{field: m[field] for field in METHOD_FIELDS} for m in rows.methods],
            "models_used": rows.models_used,
            "question_results": question_results,
        },
        "pools_analysis": _pools_export(study),
        "pairs": [
            {"position": position, "questions": [keys[a], keys[b]], "stratum": stratum,
             "attention_check": pk in rows.attention_checks,
             "expected_harder": keys[rows.attention_checks[pk]] if pk in rows.attention_checks else None}
            for pk, position, a, b, stratum in rows.pairs
        ],
        "evaluators": _evaluators(rows),
    }


def study_export(*, study: Study, now: datetime | None = None) -> dict:
    """The study as a JSON-ready dict (see the module docstring).

    Parameters
    ----------
    study : Study
    now : datetime, optional
        Export time written to ``source.exported_at`` (default now).

    Returns
    -------
    dict
        ``json.dumps`` works on it (no NaN; times are ISO 8601 strings in UTC).
        It holds every question and result of the run: for a large run,
        :func:`study_export_chunks` writes the same text without holding them.
    """
    return _document(study, study_export_rows(study=study), now=now, questions=list(_questions(study)),
                     question_results=list(_question_results(study)))


def dump_export(document: dict) -> str:
    """The document as JSON text: sorted keys, UTF-8 characters, no NaN."""
    return json.dumps(document, **_JSON) + "\n"


#: Items of a streamed list per yielded piece.
STREAM_ITEMS = 500
_JSON = {"sort_keys": True, "ensure_ascii": False, "allow_nan": False, "indent": 1}


@dataclass
class ExportCounts:
    """What a streamed export held, known once its last chunk is out.

    Attributes
    ----------
    n_pairs, n_evaluators, n_judgments, n_questions, n_question_results : int
    """

    n_pairs: int = 0
    n_evaluators: int = 0
    n_judgments: int = 0
    n_questions: int = 0
    n_question_results: int = 0


def _streamed_list(items: Iterable[dict], depth: int, counter: list[int]) -> Iterator[str]:
    """``items`` as :func:`dump_export` writes a list whose key sits ``depth``
    spaces in: one item a line block, ``STREAM_ITEMS`` items per chunk."""
    pad = "\n" + " " * (depth + 1)
    block: list[str] = []
    for item in items:
        block.append(("," if counter[0] else "[") + pad + json.dumps(item, **_JSON).replace("\n", pad))
        counter[0] += 1
        if len(block) == STREAM_ITEMS:
            yield "".join(block)
            block = []
    if counter[0] == 0:
        block.append("[]")
    else:
        block.append("\n" + " " * depth + "]")
    yield "".join(block)


def study_export_chunks(*, study: Study, now: datetime | None = None,
                        counts: ExportCounts | None = None) -> Iterator[str]:
    """The text of ``dump_export(study_export(study=study, now=now))``, a block at a time.

    The questions and the run's results (the parts that grow with the run) are
    read ``EXPORT_CHUNK`` rows per query and written as they come; the rest is
    small and built whole.

    Parameters
    ----------
    study : Study
    now : datetime, optional
        As in :func:`study_export`.
    counts : ExportCounts, optional
        Filled in as the text is produced (complete after the last chunk).

    Yields
    ------
    str
        Pieces whose concatenation is the document's JSON text.
    """
    rows = study_export_rows(study=study)
    marks = {name: f"\x00{uuid.uuid4().hex}\x00" for name in ("questions", "question_results")}
    text = dump_export(_document(study, rows, now=now, questions=marks["questions"],
                                 question_results=marks["question_results"]))
    streams = {"questions": _questions(study), "question_results": _question_results(study)}
    tallies = {name: [0] for name in marks}
    encoded = {json.dumps(mark): name for name, mark in marks.items()}
    at = 0
    for mark in sorted(encoded, key=text.index):
        where = text.index(mark)
        line_start = text.rindex("\n", 0, where) + 1
        depth = len(text[line_start:]) - len(text[line_start:].lstrip(" "))
        yield text[at:where]
        name = encoded[mark]
        yield from _streamed_list(streams[name], depth, tallies[name])
        at = where + len(mark)
    yield text[at:]
    if counts is not None:
        counts.n_pairs = len(rows.pairs)
        counts.n_evaluators = len(rows.participations)
        counts.n_judgments = len(rows.judgments)
        counts.n_questions = tallies["questions"][0]
        counts.n_question_results = tallies["question_results"][0]
