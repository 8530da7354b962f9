"""The study export is written a block at a time (``study_export_chunks``,
``export_study``) and its text is byte for byte what the previous whole-document
writer produced.

The reference is a frozen copy of that writer (``_previous_export`` below: it
read every question and result of the run into one dict and sorted the results
in Python), kept here so the comparison never runs the code under test.
"""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.db.models import Q

from annotate.models import (
    Assignment,
    Dataset,
    ExclusionEvent,
    Judgment,
    LanguageModel,
    MethodResult,
    Pair,
    Participation,
    Question,
    QuestionResult,
    Subject,
)
from annotate.reports import pools_analysis_latest, run_alpha
from annotate.studies.services import transfer_export
from annotate.studies.services.transfer_export import ExportCounts, study_export, study_export_chunks
from annotate.studies.services.transfer_format import KIND, SCHEMA_VERSION, STUDY_SETTINGS
from tests.annotate.studies.quality.test_quality_transfer import study as quality_study  # noqa: F401
from tests.annotate.studies.test_study_transfer import report_study

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 5, 4, 3, 2, 1, tzinfo=UTC)

# --- the previous writer, frozen ------------------------------------------------------------------

_RESULT_FIELDS = ("kept", "n_observed", "scores")
_METHOD_FIELDS = ("method", "params", "n_iter", "converged", "residual", "duration_s", "notes")
_MODEL_FIELDS = ("name", "family", "parameters_b", "access")
_JUDGMENT_FIELDS = ("pair_id", "choice", "left_question_id", "harder_question_id", "shown_at", "submitted_at",
                    "seconds", "client_seconds")


def _t(value):
    return value.astimezone(UTC).isoformat() if value is not None else None


def _previous_pools(run, keys):
    analysis = pools_analysis_latest(response_set=run.response_set, alpha=run_alpha(run))
    if analysis is None:
        return None
    result = dict(analysis.result)
    if "question_ids" in result:
        ids = result.pop("question_ids")
        keep = [i for i, pk in enumerate(ids) if pk in keys]
        result["questions"] = [keys[ids[i]] for i in keep]
        result["pools"] = [{**p, "difficulty_scaled": None if p.get("difficulty_scaled") is None
                            else [p["difficulty_scaled"][i] for i in keep]} for p in result["pools"]]
    return {"params": analysis.params, "result": result, "created_at": _t(analysis.created_at),
            "started_at": _t(analysis.started_at), "finished_at": _t(analysis.finished_at),
            "duration_s": analysis.duration_s}


def _previous_export(study, now) -> str:
    run = study.scoring_run
    dataset_ids = list(study.datasets.values_list("pk", flat=True))
    pairs = list(Pair.objects.filter(study=study).order_by("position").values_list(
        "pk", "position", "question_a_id", "question_b_id", "stratum"))
    results = list(QuestionResult.objects.filter(run_id=run.pk).values("question_id", *_RESULT_FIELDS))
    question_ids = {r["question_id"] for r in results} | {q for p in pairs for q in (p[2], p[3])}
    questions = {q["pk"]: q for q in Question.objects.filter(pk__in=question_ids).order_by("pk").values(
        "pk", "dataset__name", "external_id", "subject__name", "text", "options", "reference_answer", "metadata")}
    datasets = list(Dataset.objects.filter(Q(pk__in=dataset_ids) | Q(questions__pk__in=question_ids))
                    .distinct().order_by("name").values_list("name", "description"))
    checks = dict(Pair.objects.filter(study=study, attention_check=True).values_list("pk", "expected_harder_id"))
    keys = {pk: [q["dataset__name"], q["external_id"]] for pk, q in questions.items()}
    position_of = {p[0]: p[1] for p in pairs}
    assignments: dict = {}
    for part_id, pair_id, left_id, shown_at in Assignment.objects.filter(participation__study=study).values_list(
            "participation_id", "pair_id", "left_question_id", "shown_at"):
        assignments.setdefault(part_id, []).append(
            {"pair": position_of[pair_id], "left_question": keys[left_id], "shown_at": _t(shown_at)})
    judgments: dict = {}
    for j in Judgment.objects.filter(participation__study=study).values("participation_id", *_JUDGMENT_FIELDS):
        judgments.setdefault(j["participation_id"], []).append({
            "pair": position_of[j["pair_id"]], "choice": j["choice"], "left_question": keys[j["left_question_id"]],
            "harder_question": keys[j["harder_question_id"]] if j["harder_question_id"] else None,
            "shown_at": _t(j["shown_at"]), "submitted_at": _t(j["submitted_at"]), "seconds": j["seconds"],
            "client_seconds": j["client_seconds"]})
    events: dict = {}
    for part_id, action, reason, by, at in ExclusionEvent.objects.filter(participation__study=study).order_by(
            "at", "pk").values_list("participation_id", "action", "reason", "by__username", "at"):
        events.setdefault(part_id, []).append({"action": action, "reason": reason, "by": by, "at": _t(at)})
    evaluators = [{
        "pseudonym": p.user.get_username(), "seed": p.seed, "field_of_study": p.field_of_study,
        "education_level": p.education_level,
        "qualified_subjects": sorted(s.name for s in p.qualified_subjects.all()),
        "consented_at": _t(p.consented_at), "onboarded_at": _t(p.onboarded_at),
        "guidelines_accepted_at": _t(p.guidelines_accepted_at), "finished_at": _t(p.finished_at),
        "created_at": _t(p.created_at),
        "assignments": sorted(assignments.get(p.pk, []), key=lambda a: a["pair"]),
        "judgments": sorted(judgments.get(p.pk, []), key=lambda j: j["pair"]),
        "platform_participant_id": p.platform_participant_id, "platform_study_id": p.platform_study_id,
        "platform_session_id": p.platform_session_id, "excluded_at": _t(p.excluded_at),
        "excluded_by": p.excluded_by.get_username() if p.excluded_by else None,
        "exclusion_reason": p.exclusion_reason, "exclusion_events": events.get(p.pk, []), "group": p.group,
    } for p in Participation.objects.filter(study=study).select_related("user", "excluded_by")
        .prefetch_related("qualified_subjects")]
    evaluators.sort(key=lambda e: e["pseudonym"])
    document = {
        "kind": KIND, "schema_version": SCHEMA_VERSION,
        "source": {"exported_at": _t(now), "study_id": study.pk, "scoring_run_id": run.pk,
                   "response_set": {"id": run.response_set_id, "name": run.response_set.name,
                                    "version": run.response_set.version, "checksum": run.response_set.checksum}},
        "study": {
            "name": study.name, "status": study.status, "origin": study.origin, "strategy": study.strategy,
            "seed": study.seed, "n_pairs": study.n_pairs, "include_unkept": study.include_unkept,
            "include_low_coverage": study.include_low_coverage,
            "target_judgments_per_pair": study.target_judgments_per_pair, "guidelines": study.guidelines,
            "pairs_per_subject": study.pairs_per_subject, "consent_text": study.consent_text,
            "onboarding_questions": list(study.onboarding_questions),
            "datasets": sorted(study.datasets.values_list("name", flat=True)),
            "subjects": sorted(study.subjects.values_list("name", flat=True)),
            "created_at": _t(study.created_at), "closed_at": _t(study.closed_at),
            **{f: getattr(study, f) for f in STUDY_SETTINGS},
            "adaptive_pool": sorted([*keys[q], block] for q, block in study.pool.values_list("question_id", "block")),
        },
        "datasets": [{"name": name, "description": description} for name, description in datasets],
        "questions": [{"dataset": q["dataset__name"], "external_id": q["external_id"], "subject": q["subject__name"],
                       "text": q["text"], "options": q["options"], "reference_answer": q["reference_answer"],
                       "metadata": q["metadata"]} for q in questions.values()],
        "scoring_run": {
            "status": run.status, "params": run.params, "error": run.error, "created_at": _t(run.created_at),
            "finished_at": _t(run.finished_at),
            "methods": [{f: m[f] for f in _METHOD_FIELDS} for m in MethodResult.objects.filter(run_id=run.pk)
                        .order_by("method").values(*_METHOD_FIELDS)],
            "models_used": list(LanguageModel.objects.filter(pk__in=run.models_used.values("pk")).order_by("name")
                                .values(*_MODEL_FIELDS)),
            "question_results": sorted(({"question": keys[r["question_id"]], **{f: r[f] for f in _RESULT_FIELDS}}
                                        for r in results), key=lambda r: r["question"]),
        },
        "pools_analysis": _previous_pools(run, keys),
        "pairs": [{"position": position, "questions": [keys[a], keys[b]], "stratum": stratum,
                   "attention_check": pk in checks, "expected_harder": keys[checks[pk]] if pk in checks else None}
                  for pk, position, a, b, stratum in pairs],
        "evaluators": evaluators,
    }
    return json.dumps(document, sort_keys=True, ensure_ascii=False, allow_nan=False, indent=1) + "\n"


# --- fixtures ------------------------------------------------------------------------------------

#: Names whose order differs between code points and a language's collation (case, accents, digits).
AWKWARD_IDS = ("a10", "a2", "B", "b", "é", "e", "Z", "ä1", "_x", "10", "9", "ß", "日本")


def add_awkward_results(study, dataset_name: str) -> None:
    """Scored questions outside the study's scope whose ids sort differently by code point and by
    a language's collation, with partial and missing scores and metadata of every JSON kind."""
    run = study.scoring_run
    dataset = Dataset.objects.create(name=dataset_name, description="ids that sort awkwardly")
    subject = Subject.objects.get_or_create(name="Ökonomie")[0]
    for k, external_id in enumerate(AWKWARD_IDS):
        q = Question.objects.create(dataset=dataset, subject=subject if k % 3 else None, external_id=external_id,
                                    text=f"Frage {k}: \"quoted\" \\ and\ttab\nline",
                                    options=["x", "y"] if k % 2 else [], reference_answer="x",
                                    metadata={"n": k, "f": k / 7, "none": None, "l": [k, "é"]})
        scores = {"eip_scaled": 10.0 + k / 3} if k % 4 else {"eip_scaled": None, "simple_rank": 1e-300 * k}
        QuestionResult.objects.create(run=run, question=q, kept=bool(k % 2), n_observed=k, scores=scores)


@pytest.fixture
def report_like_study():
    study = report_study()
    add_awkward_results(study, "Ärger")
    add_awkward_results(study, "ärger")
    return study


def _streamed(study, counts=None) -> str:
    return "".join(study_export_chunks(study=study, now=NOW, counts=counts))


# --- tests ---------------------------------------------------------------------------------------


def test_the_streamed_text_is_the_previous_writers_byte_for_byte(report_like_study):
    expected = _previous_export(report_like_study, NOW)
    document = json.loads(expected)
    assert document["pools_analysis"] is not None and len(document["scoring_run"]["question_results"]) > 26
    assert _streamed(report_like_study).encode() == expected.encode()


def test_the_same_with_attention_checks_exclusions_and_platform_ids(quality_study):  # noqa: F811
    add_awkward_results(quality_study, "Zeta")
    expected = _previous_export(quality_study, NOW)
    assert json.loads(expected)["pairs"][0]["attention_check"] in (True, False)
    assert _streamed(quality_study).encode() == expected.encode()


def test_the_whole_document_is_what_the_streamed_text_reads_as(report_like_study):
    assert study_export(study=report_like_study, now=NOW) == json.loads(_streamed(report_like_study))


def test_a_study_whose_run_scored_nothing_writes_empty_lists(report_like_study):
    QuestionResult.objects.filter(run=report_like_study.scoring_run).delete()
    text = _streamed(report_like_study)
    assert text.encode() == _previous_export(report_like_study, NOW).encode()
    assert json.loads(text)["scoring_run"]["question_results"] == []


def test_the_results_are_read_a_block_at_a_time_while_the_text_goes_out(report_like_study, monkeypatch):
    """The results are pulled from the database as the text is written: when the first block of
    them has gone out, no more than one block has been read (nothing is read whole first)."""
    monkeypatch.setattr(transfer_export, "STREAM_ITEMS", 5)
    pulled = {"results": 0, "questions": 0}
    real_results, real_questions = transfer_export.study_export_results, transfer_export.study_export_questions

    def counting(name, rows):
        for row in rows:
            pulled[name] += 1
            yield row

    monkeypatch.setattr(transfer_export, "study_export_results",
                        lambda **kw: counting("results", real_results(**kw, chunk_size=5)))
    monkeypatch.setattr(transfer_export, "study_export_questions",
                        lambda **kw: counting("questions", real_questions(**kw, chunk_size=5)))
    chunks = study_export_chunks(study=report_like_study, now=NOW)
    seen = []
    for chunk in chunks:
        seen.append((chunk, dict(pulled)))
        if pulled["results"]:
            break
    assert seen[-1][1]["results"] == 5 and seen[-1][1]["questions"] > 26
    rest = "".join(chunks)
    total = QuestionResult.objects.filter(run=report_like_study.scoring_run).count()
    assert pulled["results"] == total > 26
    assert "".join(c for c, _ in seen) + rest == _previous_export(report_like_study, NOW)


def test_the_command_writes_the_previous_bytes_and_counts(report_like_study, tmp_path):
    out = tmp_path / "study.json"
    call_command("export_study", study=report_like_study.name, out=str(out))
    written = out.read_bytes().decode("utf-8")
    exported_at = json.loads(written)["source"]["exported_at"]
    at = datetime.fromisoformat(exported_at)
    assert written.encode() == _previous_export(report_like_study, at).encode()
    assert re.search(r'"exported_at": "[^"]+"', written)
    counts = ExportCounts()
    _streamed(report_like_study, counts)
    document = json.loads(written)
    assert (counts.n_pairs, counts.n_evaluators, counts.n_questions, counts.n_question_results) == (
        len(document["pairs"]), len(document["evaluators"]), len(document["questions"]),
        len(document["scoring_run"]["question_results"]))
    assert counts.n_judgments == sum(len(e["judgments"]) for e in document["evaluators"])


def test_the_command_writes_the_same_text_to_standard_output(report_like_study):
    from io import StringIO

    out = StringIO()
    call_command("export_study", study=report_like_study.name, out="-", stdout=out)
    at = datetime.fromisoformat(json.loads(out.getvalue())["source"]["exported_at"])
    assert out.getvalue() == _previous_export(report_like_study, at)
