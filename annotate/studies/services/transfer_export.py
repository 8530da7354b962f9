"""A study written out as one JSON document: settings, questions, pairs, evaluators, judgments.

:func:`study_export` builds the document (format
:data:`~annotate.studies.services.transfer_format.SCHEMA_VERSION`, described in
:mod:`annotate.studies.services.study_transfer`), :func:`dump_export` writes it.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime

from django.utils import timezone

from annotate.models import (
    ScoringRun,
    Study,
)
from annotate.reports import pools_analysis_latest, run_alpha
from annotate.studies.selectors.transfer import (
    METHOD_FIELDS,
    RESULT_FIELDS,
    study_export_rows,
)
from annotate.studies.services.transfer_format import (
    KIND,
    SCHEMA_VERSION,
    STUDY_SETTINGS,
)


def _time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _key(dataset: str, external_id: str) -> list[str]:
    return [dataset, external_id]


def _pools_export(run: ScoringRun, keys: dict[int, list[str]]) -> dict | None:
    """The stored pools analysis the report of ``run`` reads, its question ids
    turned into keys (only the exported questions), or None."""
    analysis = pools_analysis_latest(response_set=run.response_set, alpha=run_alpha(run))
    if analysis is None:
        return None
    result = dict(analysis.result)
    if "question_ids" in result:
        ids = result.pop("question_ids")
        keep = [i for i, pk in enumerate(ids) if pk in keys]
        result["questions"] = [keys[ids[i]] for i in keep]
        result["pools"] = [
            {**p, "difficulty_scaled": None if p.get("difficulty_scaled") is None
             else [p["difficulty_scaled"][i] for i in keep]}
            for p in result["pools"]
        ]
    return {"params": analysis.params, "result": result, "created_at": _time(analysis.created_at),
            "started_at": _time(analysis.started_at), "finished_at": _time(analysis.finished_at),
            "duration_s": analysis.duration_s}


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
    """
    run = study.scoring_run
    rows = study_export_rows(study=study)
    pairs, results, questions = rows.pairs, rows.question_results, rows.questions
    keys = {pk: _key(q["dataset__name"], q["external_id"]) for pk, q in questions.items()}
    position_of = {p[0]: p[1] for p in pairs}

    evaluators = []
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
            "adaptive_pool": sorted(
                [*keys[q], block] for q, block in study.pool.values_list("question_id", "block")),
        },
        "datasets": [
            {"name": name, "description": description}
            for name, description in rows.datasets
        ],
        "questions": [  # in id order: the import creates new questions in this order
            {"dataset": q["dataset__name"], "external_id": q["external_id"], "subject": q["subject__name"],
             "text": q["text"], "options": q["options"], "reference_answer": q["reference_answer"],
             "metadata": q["metadata"]}
            for q in questions.values()
        ],
        "scoring_run": {
            "status": run.status,
            "params": run.params,
            "error": run.error,
            "created_at": _time(run.created_at),
            "finished_at": _time(run.finished_at),
            "methods": [{field: m[field] for field in METHOD_FIELDS} for m in rows.methods],
            "models_used": rows.models_used,
            "question_results": sorted(
                ({"question": keys[r["question_id"]], **{f: r[f] for f in RESULT_FIELDS}} for r in results),
                key=lambda r: r["question"],
            ),
        },
        "pools_analysis": _pools_export(run, keys),
        "pairs": [
            {"position": position, "questions": [keys[a], keys[b]], "stratum": stratum,
             "attention_check": pk in rows.attention_checks,
             "expected_harder": keys[rows.attention_checks[pk]] if pk in rows.attention_checks else None}
            for pk, position, a, b, stratum in pairs
        ],
        "evaluators": evaluators,
    }


def dump_export(document: dict) -> str:
    """The document as JSON text: sorted keys, UTF-8 characters, no NaN."""
    return json.dumps(document, sort_keys=True, ensure_ascii=False, allow_nan=False, indent=1) + "\n"
