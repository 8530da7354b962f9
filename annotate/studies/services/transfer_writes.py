"""The writes of a study import, once every check has passed.

Catalog rows, the scoring run with its results, the stored pools analysis,
the study with its pairs, and the evaluators with their participations and
judgments.
"""
from __future__ import annotations

import hashlib
import math
import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotate.analyses import params_key
from annotate.catalog import response_set_latest
from annotate.models import (
    AdaptivePoolQuestion,
    AnalysisKind,
    AnalysisRun,
    Assignment,
    Dataset,
    EducationLevel,
    ExclusionEvent,
    FieldOfStudy,
    Judgment,
    LanguageModel,
    MethodResult,
    OnboardingQuestion,
    Pair,
    Participation,
    Question,
    QuestionResult,
    ResponseSet,
    ResponseSetStatus,
    RunStatus,
    ScoringRun,
    Study,
    StudyOrigin,
    Subject,
)
from annotate.models.studies import DEFAULT_CONSENT
from annotate.runs import sort_keys_rebuild
from annotate.studies.selectors.studies import EVALUATOR_GROUP
from annotate.studies.selectors.transfer import (
    METHOD_FIELDS,
    MODEL_FIELDS,
    models_by_name,
    users_by_username,
)
from annotate.studies.services.transfer_format import (
    ERR_MALFORMED,
    EVALUATOR_TEXT_FIELDS,
    IMPORT_FORMAT,
    STUDY_SETTINGS,
    V1_SCORE_FIELDS,
    MalformedExport,
    _choice,
    _get,
    _parse_time,
    _Plan,
)


def _write_catalog(plan: _Plan, document: dict) -> tuple[dict[str, Dataset], dict[str, Subject]]:
    descriptions = {d.get("name"): d.get("description", "") for d in document.get("datasets", [])
                    if isinstance(d, dict)}
    dataset_names = {key[0] for key in plan.questions} | set(plan.study["datasets"])
    datasets = {
        n: Dataset.objects.get_or_create(name=n, defaults={"description": descriptions.get(n, "")})[0]
        for n in sorted(dataset_names)
    }
    subject_names = {getattr(q, "_subject_name", None) for q in plan.questions.values()} - {None}
    subject_names |= set(plan.study["subjects"])
    subject_names |= {s for e in plan.evaluators for s in e.get("qualified_subjects", [])}
    subjects = {n: Subject.objects.get_or_create(name=n)[0] for n in sorted(subject_names)}
    new = []
    for (dataset_name, _), q in plan.questions.items():
        if q.pk is None:
            q.dataset = datasets[dataset_name]
            q.subject = subjects.get(q._subject_name)
            new.append(q)
    Question.objects.bulk_create(new, batch_size=2000)  # SQLite >= 3.35 and PostgreSQL return the ids
    return datasets, subjects


def _write_run(plan: _Plan, source: object) -> ScoringRun:
    label = f"imported: {plan.name}"[:200]
    latest = response_set_latest(name=label)
    response_set = ResponseSet.objects.create(
        name=label,
        version=(latest.version if latest is not None else 0) + 1,
        file_name="study export",
        checksum=hashlib.sha256(f"{IMPORT_FORMAT}:{plan.name}:{uuid.uuid4().hex}".encode()).hexdigest(),
        file_format=IMPORT_FORMAT,
        status=ResponseSetStatus.LOADED,
        n_questions=len(plan.results),
        summary={"imported_from": source, "notes": ["placeholder for an imported study; it holds no responses"]},
    )
    run = ScoringRun.objects.create(
        response_set=response_set,
        params=plan.run["params"],
        status=plan.run["status"],
        progress=1.0,
        error=plan.run.get("error", ""),
        finished_at=_parse_time(plan.run.get("finished_at"), "scoring_run.finished_at"),
    )
    ScoringRun.objects.filter(pk=run.pk).update(
        created_at=_parse_time(plan.run.get("created_at"), "scoring_run.created_at") or run.created_at)
    MethodResult.objects.bulk_create(
        MethodResult(run=run, **{f: _get(m, f, "method result") for f in METHOD_FIELDS})
        for m in _get(plan.run, "methods", "scoring_run", list)
    )
    QuestionResult.objects.bulk_create(
        (QuestionResult(run=run, question=q, **fields) for q, fields in plan.results),
        batch_size=2000,
    )
    sort_keys_rebuild(run=run)
    stored = models_by_name(names=[m["name"] for m in plan.models])
    run.models_used.set([
        stored.get(m["name"]) or LanguageModel.objects.create(**{f: m[f] for f in MODEL_FIELDS if f in m})
        for m in plan.models
    ])
    if plan.pools is not None:
        _write_pools(plan.pools, response_set)
    return run


def _write_pools(pools: dict, response_set: ResponseSet) -> AnalysisRun:
    """The pools analysis on the placeholder response set, with ascending question ids."""
    result = dict(pools["result"])
    if pools["questions"] is not None:
        result.pop("questions")
        ids = [q.pk for q in pools["questions"]]
        order = sorted(range(len(ids)), key=ids.__getitem__)
        result["question_ids"] = [ids[i] for i in order]
        result["pools"] = [
            {**p, "difficulty_scaled": None if p["difficulty_scaled"] is None
             else [p["difficulty_scaled"][i] for i in order]}
            for p in result["pools"]
        ]
    exported = pools["exported"]
    analysis = AnalysisRun.objects.create(
        kind=AnalysisKind.POOLS, response_set=response_set, params=pools["params"],
        params_key=params_key(AnalysisKind.POOLS, response_set.pk, pools["params"]), status=RunStatus.DONE,
        progress=1.0, result=result, started_at=_parse_time(exported.get("started_at"), "pools_analysis"),
        finished_at=_parse_time(exported.get("finished_at"), "pools_analysis"),
        duration_s=exported.get("duration_s"), message="imported with a study",
    )
    created = _parse_time(exported.get("created_at"), "pools_analysis.created_at")
    if created is not None:
        AnalysisRun.objects.filter(pk=analysis.pk).update(created_at=created)
    return analysis


def _result_scores(result: dict) -> dict:
    """A question result's ``scores`` (version 2), or its per-method fields (version 1)."""
    if "scores" not in result:
        return {f: result[f] for f in V1_SCORE_FIELDS if result.get(f) is not None}
    scores = _get(result, "scores", "question result", dict)
    for column, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise MalformedExport(ERR_MALFORMED.format(detail=f"question result score {column!r} is not a number"))
    return scores


def _write_study(plan: _Plan, run: ScoringRun, datasets: dict, subjects: dict) -> tuple[Study, dict[int, Pair]]:
    exported = plan.study
    study = Study.objects.create(
        name=plan.name,
        scoring_run=run,
        strategy=exported["strategy"],
        seed=exported["seed"],
        n_pairs=exported["n_pairs"],
        include_unkept=exported["include_unkept"],
        include_low_coverage=exported.get("include_low_coverage", False),
        target_judgments_per_pair=exported["target_judgments_per_pair"],
        guidelines=exported["guidelines"],
        pairs_per_subject=exported.get("pairs_per_subject"),
        consent_text=exported.get("consent_text", DEFAULT_CONSENT),  # older files have none
        onboarding_questions=exported.get("onboarding_questions", list(OnboardingQuestion.values)),
        status=exported["status"],
        origin=_choice(exported.get("origin", StudyOrigin.JUDGED), StudyOrigin.values, "study.origin"),
        closed_at=_parse_time(exported.get("closed_at"), "study.closed_at"),
        **{name: exported[name] for name in STUDY_SETTINGS if name in exported},
    )
    Study.objects.filter(pk=study.pk).update(
        created_at=_parse_time(exported.get("created_at"), "study.created_at") or study.created_at)
    study.refresh_from_db()
    study.datasets.set([datasets[n] for n in exported["datasets"]])
    study.subjects.set([subjects[n] for n in exported["subjects"]])
    pairs = {}
    for position, (q1, q2, stratum) in sorted(plan.pairs.items()):
        # Keep the exported order: which question is "a" was drawn when the study was made.
        pairs[position] = Pair(study=study, position=position, question_a=q1, question_b=q2, stratum=stratum,
                               attention_check=position in plan.checks, expected_harder=plan.checks.get(position))
    Pair.objects.bulk_create(pairs.values())
    AdaptivePoolQuestion.objects.bulk_create(
        AdaptivePoolQuestion(study=study, question=q, block=block) for q, block in plan.pool)
    return study, pairs


def _write_evaluators(plan: _Plan, study: Study, pairs: dict[int, Pair], subjects: dict) -> int:
    group, _ = Group.objects.get_or_create(name=EVALUATOR_GROUP)
    User = get_user_model()
    # Who excluded an evaluator: that researcher's account here, if one has the same username (else none).
    researchers = users_by_username(usernames={
        name for e in plan.evaluators
        for name in (e.get("excluded_by"), *(ev.get("by") for ev in e.get("exclusion_events", [])))
        if isinstance(name, str) and name
    })
    questions = plan.questions
    n_judgments = 0
    for e in plan.evaluators:
        who = e["pseudonym"]
        user = plan.reuse.get(who)
        if user is None:
            user = User(username=who, is_active=False)
            user.set_unusable_password()
            user.save()
            user.groups.add(group)
        participation = Participation.objects.create(
            study=study, user=user, seed=_get(e, "seed", who, int),
            field_of_study=_choice(e.get("field_of_study"), FieldOfStudy.values, f"{who} field_of_study", blank=True),
            education_level=_choice(e.get("education_level"), EducationLevel.values, f"{who} education_level",
                                    blank=True),
            consented_at=_parse_time(e.get("consented_at"), f"{who} consented_at"),
            onboarded_at=_parse_time(e.get("onboarded_at"), f"{who} onboarded_at"),
            guidelines_accepted_at=_parse_time(e.get("guidelines_accepted_at"), f"{who} guidelines_accepted_at"),
            finished_at=_parse_time(e.get("finished_at"), f"{who} finished_at"),
            **{name: e.get(name, "") for name in EVALUATOR_TEXT_FIELDS},
            excluded_at=_parse_time(e.get("excluded_at"), f"{who} excluded_at"),
            excluded_by=researchers.get(e.get("excluded_by") or ""),
        )
        ExclusionEvent.objects.bulk_create(
            ExclusionEvent(participation=participation, action=ev["action"], reason=ev.get("reason") or "",
                           by=researchers.get(ev.get("by") or ""), at=_parse_time(ev["at"], who))
            for ev in e.get("exclusion_events", [])
        )
        Participation.objects.filter(pk=participation.pk).update(
            created_at=_parse_time(e.get("created_at"), f"{who} created_at") or participation.created_at)
        participation.qualified_subjects.set([subjects[s] for s in e.get("qualified_subjects", [])])
        Assignment.objects.bulk_create(
            Assignment(participation=participation, pair=pairs[a["pair"]],
                       left_question=questions[tuple(a["left_question"])], shown_at=_parse_time(a["shown_at"], who))
            for a in e["assignments"]
        )
        judgments = [
            Judgment(participation=participation, pair=pairs[j["pair"]], choice=j["choice"],
                     left_question=questions[tuple(j["left_question"])],
                     harder_question=None if j["harder_question"] is None else questions[tuple(j["harder_question"])],
                     shown_at=_parse_time(j["shown_at"], who), submitted_at=_parse_time(j["submitted_at"], who),
                     seconds=float(j["seconds"]), client_seconds=j.get("client_seconds"))
            for j in e["judgments"]
        ]
        Judgment.objects.bulk_create(judgments)
        n_judgments += len(judgments)
    return n_judgments
