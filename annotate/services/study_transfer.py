"""Back up a whole study to one JSON document and load it into another instance.

The document (``schema_version`` 2; version 1 files, which stored one field
per method, are still read) holds everything the study is made of and
nothing personal beyond the pseudonyms:

* ``study``: name, status, strategy, seed, pair count, target, guidelines,
  datasets and subjects (names), ``created_at`` and ``closed_at``;
* ``questions``: every question referenced (dataset, subject, external id,
  text, options, reference answer, metadata), by (dataset, external id);
* ``scoring_run``: the run the pairs came from: status, params, times, the
  per-method summaries and the ``QuestionResult`` rows of the questions the
  sampler could draw from (the study's datasets and subjects), so the study's
  context (difficulties, ``kept`` flags) comes along. Model-level results and
  the raw responses are not part of a study and are not exported;
* ``pairs``: position, the two questions (sorted by key), stratum;
* ``evaluators``: pseudonym (the account's username), the seed of their pair
  order, field of study, education level, qualified subjects, the progress
  timestamps, every assignment (pair, question shown on the left, when) and
  every judgment or skip (pair, choice, left and harder question, shown and
  submitted times, server and browser seconds). Never an email address, a
  name, a password hash or an invitation token;
* ``source``: where the document came from (export time, and the database
  ids of the study, scoring run and response set on the exporting instance).

Questions, pairs and evaluators are identified by natural keys, never by
database ids, so export -> import -> export gives the same document except
for ``source`` (and ``study.name`` after ``rename``). Documents are written
with sorted keys, so equal documents are equal files.

Import rules
------------
* All or nothing: one transaction; every check runs before the first write.
* A study name that exists is refused unless ``rename`` gives a new one.
* Datasets and subjects are matched by name and created when missing.
  Questions are matched by (dataset, external id); an existing question whose
  subject, text, options, reference answer or metadata differ is refused
  (existing rows are never changed), a missing one is created.
* The scoring run is re-created as a finished run attached to a placeholder
  response set ("imported: <study name>", format "study-export", no responses).
* Evaluators become accounts named by their pseudonym, inactive and without a
  usable password (records, not logins: people cannot log in to an instance
  they never joined). A pseudonym that already names an account is refused,
  unless ``reuse_evaluators`` is set and that account is an evaluator (not
  staff, not a researcher): then the account is reused, which is right when a
  study is imported back into the instance that exported it.
* Invitations are not exported (their tokens are credentials); imported
  participations have no invitation.
"""
from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from annotate.models import (
    Assignment,
    Choice,
    Dataset,
    EducationLevel,
    FieldOfStudy,
    Judgment,
    MethodResult,
    Pair,
    PairStrategy,
    Participation,
    Question,
    QuestionResult,
    ResponseSet,
    ResponseSetStatus,
    RunStatus,
    ScoringRun,
    Study,
    StudyStatus,
    Subject,
)
from annotate.selectors.catalog import response_set_latest
from annotate.selectors.studies import EVALUATOR_GROUP, user_is_researcher
from annotate.selectors.transfer import (
    METHOD_FIELDS,
    RESULT_FIELDS,
    questions_by_key,
    study_export_rows,
    study_name_taken,
    users_by_username,
)

SCHEMA_VERSION = 2
#: Versions this site reads: 1 had one field per method in each question result.
READABLE_VERSIONS = (1, 2)
KIND = "eip-study-export"
IMPORT_FORMAT = "study-export"
#: Per-method fields of a version-1 question result (now keys of ``scores``).
V1_SCORE_FIELDS = (
    "eip", "eip_scaled", "simple_rank", "accuracy_difficulty", "irt_1pl", "irt_2pl", "irt_2pl_discrimination",
    "irt_mirt",
)
QUESTION_FIELDS = ("subject", "text", "options", "reference_answer", "metadata")

ERR_KIND = "not a study export: 'kind' must be {kind!r}"
ERR_VERSION = "schema_version {value!r} is not supported; this site reads versions {supported}"
ERR_MALFORMED = "malformed study export: {detail}"
ERR_NAME_TAKEN = "a study named {name!r} already exists; import it under another name with --rename"
ERR_NAME_EMPTY = "rename must not be empty"
ERR_QUESTION_CONFLICT = (
    "question {key} already exists here with a different {field} ({stored!r}, the file has {given!r}); "
    "existing questions are never changed by an import"
)
ERR_PSEUDONYM_TAKEN = (
    "pseudonym(s) {names} already name accounts here; if they are the same evaluators (importing back into "
    "the instance that exported the study), use --reuse-evaluators"
)
ERR_NOT_EVALUATOR = "pseudonym {name!r} names a staff or researcher account here; it cannot hold judgments"
ERR_UNKNOWN_QUESTION = "{where} refers to question {key}, which is not in 'questions'"
ERR_UNKNOWN_PAIR = "evaluator {name!r} refers to pair position {position}, which is not in 'pairs'"
ERR_HARDER = "evaluator {name!r}, pair {position}: {detail}"


class MalformedExport(ValueError):
    """The document is not a valid study export (nothing was written)."""


@dataclass(frozen=True)
class ImportResult:
    """What :func:`study_import` wrote."""

    study: Study
    questions_created: int
    questions_reused: int
    evaluators_created: int
    evaluators_reused: int
    judgments: int


# --- export ------------------------------------------------------------------------


def _time(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _key(dataset: str, external_id: str) -> list[str]:
    return [dataset, external_id]


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
    for p in rows.participations:
        evaluators.append({
            "pseudonym": p.user.get_username(),
            "seed": p.seed,
            "field_of_study": p.field_of_study,
            "education_level": p.education_level,
            "qualified_subjects": sorted(s.name for s in p.qualified_subjects.all()),
            "onboarded_at": _time(p.onboarded_at),
            "guidelines_accepted_at": _time(p.guidelines_accepted_at),
            "finished_at": _time(p.finished_at),
            "created_at": _time(p.created_at),
            "assignments": sorted(assignments.get(p.pk, []), key=lambda a: a["pair"]),
            "judgments": sorted(judgments.get(p.pk, []), key=lambda j: j["pair"]),
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
            "strategy": study.strategy,
            "seed": study.seed,
            "n_pairs": study.n_pairs,
            "include_unkept": study.include_unkept,
            "target_judgments_per_pair": study.target_judgments_per_pair,
            "guidelines": study.guidelines,
            "datasets": rows.study_datasets,
            "subjects": rows.study_subjects,
            "created_at": _time(study.created_at),
            "closed_at": _time(study.closed_at),
        },
        "datasets": [
            {"name": name, "description": description}
            for name, description in rows.datasets
        ],
        "questions": sorted(
            (
                {"dataset": q["dataset__name"], "external_id": q["external_id"], "subject": q["subject__name"],
                 "text": q["text"], "options": q["options"], "reference_answer": q["reference_answer"],
                 "metadata": q["metadata"]}
                for q in questions.values()
            ),
            key=lambda q: (q["dataset"], q["external_id"]),
        ),
        "scoring_run": {
            "status": run.status,
            "params": run.params,
            "error": run.error,
            "created_at": _time(run.created_at),
            "finished_at": _time(run.finished_at),
            "methods": [{field: m[field] for field in METHOD_FIELDS} for m in rows.methods],
            "question_results": sorted(
                ({"question": keys[r["question_id"]], **{f: r[f] for f in RESULT_FIELDS}} for r in results),
                key=lambda r: r["question"],
            ),
        },
        "pairs": [
            {"position": position, "questions": sorted([keys[a], keys[b]]), "stratum": stratum}
            for _, position, a, b, stratum in pairs
        ],
        "evaluators": evaluators,
    }


def dump_export(document: dict) -> str:
    """The document as JSON text: sorted keys, UTF-8 characters, no NaN."""
    return json.dumps(document, sort_keys=True, ensure_ascii=False, allow_nan=False, indent=1) + "\n"


# --- import ------------------------------------------------------------------------


def _get(mapping: object, key: str, where: str, kind: type | tuple[type, ...] | None = None):
    if not isinstance(mapping, dict) or key not in mapping:
        raise MalformedExport(ERR_MALFORMED.format(detail=f"{where} lacks {key!r}"))
    value = mapping[key]
    if kind is not None and not isinstance(value, kind):
        raise MalformedExport(ERR_MALFORMED.format(detail=f"{where}.{key} has the wrong type"))
    return value


def _parse_time(value: object, where: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise MalformedExport(ERR_MALFORMED.format(detail=f"{where} is not an ISO 8601 time: {value!r}")) from None
    if parsed.tzinfo is None:
        raise MalformedExport(ERR_MALFORMED.format(detail=f"{where} has no time zone: {value!r}"))
    return parsed


def _choice(value: object, allowed: Iterable[str], where: str, blank: bool = False) -> str:
    allowed = list(allowed)
    if not (isinstance(value, str) and (value in allowed or (blank and value == ""))):
        raise MalformedExport(ERR_MALFORMED.format(detail=f"{where} must be one of {allowed}; got {value!r}"))
    return value


def _question_key(value: object, where: str) -> tuple[str, str]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise MalformedExport(ERR_MALFORMED.format(detail=f"{where} must be [dataset, external_id]; got {value!r}"))
    return value[0], value[1]


def _check_header(document: object) -> None:
    if not isinstance(document, dict) or document.get("kind") != KIND:
        raise MalformedExport(ERR_KIND.format(kind=KIND))
    if document.get("schema_version") not in READABLE_VERSIONS:
        raise MalformedExport(ERR_VERSION.format(value=document.get("schema_version"), supported=READABLE_VERSIONS))


def _questions(document: dict) -> tuple[dict[tuple[str, str], Question], int, int]:
    """Existing or new (unsaved: pk None) questions by key; refuses conflicts."""
    rows = _get(document, "questions", "document", list)
    names = {_get(q, "dataset", "question", str) for q in rows}
    stored = questions_by_key(dataset_names=names)
    result: dict[tuple[str, str], Question] = {}
    reused = created = 0
    for row in rows:
        key = (_get(row, "dataset", "question", str), _get(row, "external_id", "question", str))
        if key in result:
            raise MalformedExport(ERR_MALFORMED.format(detail=f"question {list(key)} is listed twice"))
        given = {field: _get(row, field, f"question {list(key)}") for field in QUESTION_FIELDS}
        existing = stored.get(key)
        if existing is not None:
            have = {"subject": existing.subject.name if existing.subject else None, "text": existing.text,
                    "options": existing.options, "reference_answer": existing.reference_answer,
                    "metadata": existing.metadata}
            for field in QUESTION_FIELDS:
                if have[field] != given[field]:
                    raise ValueError(ERR_QUESTION_CONFLICT.format(
                        key=list(key), field=field, stored=have[field], given=given[field]))
            result[key] = existing
            reused += 1
        else:
            result[key] = Question(external_id=key[1], **{f: given[f] for f in QUESTION_FIELDS if f != "subject"})
            result[key]._subject_name = given["subject"]
            created += 1
    return result, created, reused


def _evaluator_accounts(evaluators: list[dict], reuse: bool) -> dict[str, object]:
    """Existing accounts to reuse, by pseudonym; refuses taken pseudonyms unless ``reuse``."""
    names = [_get(e, "pseudonym", "evaluator", str) for e in evaluators]
    if len(set(names)) != len(names):
        raise MalformedExport(ERR_MALFORMED.format(detail="a pseudonym is listed twice"))
    existing = users_by_username(usernames=names)
    if existing and not reuse:
        raise ValueError(ERR_PSEUDONYM_TAKEN.format(names=sorted(existing)))
    for name, user in existing.items():
        if user.is_staff or user.is_superuser or user_is_researcher(user=user):
            raise ValueError(ERR_NOT_EVALUATOR.format(name=name))
    return existing


@dataclass(frozen=True)
class _Plan:
    """A checked document: every reference resolved, nothing written yet."""

    name: str
    study: dict
    run: dict
    questions: dict[tuple[str, str], Question]
    questions_created: int
    questions_reused: int
    pairs: dict[int, tuple[Question, Question, int | None]]
    results: list[tuple[Question, dict]]
    evaluators: list[dict]
    reuse: dict[str, object]


def _plan(document: object, rename: str | None, reuse_evaluators: bool) -> _Plan:
    """Every check of :func:`study_import`; raises before anything is written."""
    _check_header(document)
    exported = _get(document, "study", "document", dict)
    name = (rename if rename is not None else _get(exported, "name", "study", str)).strip()
    if not name:
        raise ValueError(ERR_NAME_EMPTY)
    if study_name_taken(name=name):
        raise ValueError(ERR_NAME_TAKEN.format(name=name))
    _choice(exported.get("status"), StudyStatus.values, "study.status")
    _choice(exported.get("strategy"), PairStrategy.values, "study.strategy")
    for field, kind in (("seed", int), ("n_pairs", int), ("include_unkept", bool),
                        ("target_judgments_per_pair", int), ("guidelines", str), ("datasets", list),
                        ("subjects", list)):
        _get(exported, field, "study", kind)
    run = _get(document, "scoring_run", "document", dict)
    _choice(run.get("status"), RunStatus.values, "scoring_run.status")
    _get(run, "params", "scoring_run", dict)
    questions, created, reused = _questions(document)

    def question(value: object, where: str) -> Question:
        key = _question_key(value, where)
        if key not in questions:
            raise MalformedExport(ERR_UNKNOWN_QUESTION.format(where=where, key=list(key)))
        return questions[key]

    pairs: dict[int, tuple[Question, Question, int | None]] = {}
    for p in _get(document, "pairs", "document", list):
        position = _get(p, "position", "pair", int)
        refs = _get(p, "questions", f"pair {position}", list)
        if len(refs) != 2 or position in pairs:
            raise MalformedExport(ERR_MALFORMED.format(detail=f"pair {position} is listed twice or lacks a question"))
        pairs[position] = (question(refs[0], f"pair {position}"), question(refs[1], f"pair {position}"),
                           p.get("stratum"))
    results = [(question(_get(r, "question", "question result"), "question result"), r)
               for r in _get(run, "question_results", "scoring_run", list)]
    evaluators = _get(document, "evaluators", "document", list)
    for e in evaluators:
        who = _get(e, "pseudonym", "evaluator", str)
        for part in ("assignments", "judgments"):
            seen = set()
            for item in _get(e, part, who, list):
                position = _get(item, "pair", who, int)
                if position not in pairs:
                    raise MalformedExport(ERR_UNKNOWN_PAIR.format(name=who, position=position))
                if position in seen:
                    raise MalformedExport(ERR_HARDER.format(name=who, position=position, detail=f"two {part}"))
                seen.add(position)
                _check_item(item, pairs[position][:2], question, who, position)
    return _Plan(name=name, study=exported, run=run, questions=questions, questions_created=created,
                 questions_reused=reused, pairs=pairs, results=results, evaluators=evaluators,
                 reuse=_evaluator_accounts(evaluators, reuse_evaluators))


def _check_item(item: dict, shown: tuple[Question, Question], question, who: str, position: int) -> None:
    """An assignment or judgment: its left question is in the pair; a judgment's
    harder question is what its choice says."""
    left = question(_get(item, "left_question", who), f"evaluator {who!r}")
    if left not in shown:
        raise MalformedExport(
            ERR_HARDER.format(name=who, position=position, detail="the left question is not in the pair")
        )
    _parse_time(_get(item, "shown_at", who), f"evaluator {who!r} shown_at")
    if "choice" not in item:
        return
    choice = _choice(item["choice"], Choice.values, f"evaluator {who!r} choice")
    harder_key = _get(item, "harder_question", who)
    harder = None if harder_key is None else question(harder_key, f"evaluator {who!r}")
    right = shown[1] if left is shown[0] else shown[0]
    if harder is not {Choice.LEFT: left, Choice.RIGHT: right}.get(choice):
        raise MalformedExport(ERR_HARDER.format(name=who, position=position,
                                                detail="harder_question does not match the choice"))
    _parse_time(_get(item, "submitted_at", who), f"evaluator {who!r} submitted_at")
    _get(item, "seconds", who, (int, float))


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
        (QuestionResult(run=run, question=q, kept=_get(r, "kept", "question result"),
                        n_observed=_get(r, "n_observed", "question result"), scores=_result_scores(r))
         for q, r in plan.results),
        batch_size=2000,
    )
    return run


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
        target_judgments_per_pair=exported["target_judgments_per_pair"],
        guidelines=exported["guidelines"],
        status=exported["status"],
        closed_at=_parse_time(exported.get("closed_at"), "study.closed_at"),
    )
    Study.objects.filter(pk=study.pk).update(
        created_at=_parse_time(exported.get("created_at"), "study.created_at") or study.created_at)
    study.refresh_from_db()
    study.datasets.set([datasets[n] for n in exported["datasets"]])
    study.subjects.set([subjects[n] for n in exported["subjects"]])
    pairs = {}
    for position, (q1, q2, stratum) in sorted(plan.pairs.items()):
        # Keep the exported order: which question is "a" was drawn when the study was made.
        pairs[position] = Pair(study=study, position=position, question_a=q1, question_b=q2, stratum=stratum)
    Pair.objects.bulk_create(pairs.values())
    return study, pairs


def _write_evaluators(plan: _Plan, study: Study, pairs: dict[int, Pair], subjects: dict) -> int:
    group, _ = Group.objects.get_or_create(name=EVALUATOR_GROUP)
    User = get_user_model()
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
            onboarded_at=_parse_time(e.get("onboarded_at"), f"{who} onboarded_at"),
            guidelines_accepted_at=_parse_time(e.get("guidelines_accepted_at"), f"{who} guidelines_accepted_at"),
            finished_at=_parse_time(e.get("finished_at"), f"{who} finished_at"),
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


@transaction.atomic
def study_import(*, document: dict, rename: str | None = None, reuse_evaluators: bool = False) -> ImportResult:
    """Create a study (with its questions, run context, pairs, evaluators and
    judgments) from a document made by :func:`study_export`.

    Parameters
    ----------
    document : dict
        A parsed export (``schema_version`` 1).
    rename : str, optional
        Import under this name instead of the exported one.
    reuse_evaluators : bool, default False
        Attach participations to existing evaluator accounts of the same
        pseudonym instead of refusing them.

    Returns
    -------
    ImportResult

    Raises
    ------
    MalformedExport
        The document is not a valid export (a subclass of ValueError).
    ValueError
        The name is taken, a question conflicts with a stored one, or a
        pseudonym is taken. Nothing is written in any case.
    """
    plan = _plan(document, rename, reuse_evaluators)
    datasets, subjects = _write_catalog(plan, document)
    run = _write_run(plan, document.get("source", {}))
    study, pairs = _write_study(plan, run, datasets, subjects)
    n_judgments = _write_evaluators(plan, study, pairs, subjects)
    return ImportResult(
        study=study,
        questions_created=plan.questions_created,
        questions_reused=plan.questions_reused,
        evaluators_created=len(plan.evaluators) - len(plan.reuse),
        evaluators_reused=len(plan.reuse),
        judgments=n_judgments,
    )
