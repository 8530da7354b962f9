"""Back up a whole study to one JSON document and load it into another instance.

The document (``schema_version`` 4; versions 1, which stored one field per
method, 2, which sorted each pair's questions and carried only the
results of the study's scope, and 3, before attention checks, exclusions and
crowd-platform ids, are still read) holds everything the study is
made of, and every input its alignment report reads, and nothing personal
beyond the pseudonyms:

* ``study``: name, status, strategy, seed, pair count (and pairs per subject),
  target, guidelines, consent text (older files without it: the default one), onboarding questions, datasets and
  subjects (names), ``created_at`` and ``closed_at``; since version 4 also
  the quality and crowd settings (``speeder_seconds``,
  ``attention_check_share``, ``participant_param``, ``study_param``,
  ``session_param``, ``completion_code``, ``completion_url``; absent in an
  older file: the defaults); for an adaptive study (strategy ``adaptive``)
  its settings ``adaptive_min_comparisons`` and ``adaptive_random_share`` and
  its pool ``adaptive_pool`` (``[dataset, external id, block]`` per question,
  by key; empty for other strategies; absent in an older file: the defaults
  and an empty pool);
* ``questions``: every question referenced (dataset, subject, external id,
  text, options, reference answer, metadata: the report's labels read it),
  by (dataset, external id), listed in the exporting instance's order (by
  id); the import creates new questions in that order, so the report's
  per-dataset profiles list the datasets in the same order;
* ``scoring_run``: the run the pairs came from: status, params, times, the
  per-method summaries, the names (family, size, access) of the models it
  scored (``models_used``, which the report's pool notes compare), and the
  ``QuestionResult`` rows of every question the run scored, whatever the
  study's scope: the report's pairs read any pair question's result, its
  profiles and label correlations read the whole run. Model-level results
  and the raw responses are not exported;
* ``pools_analysis``: the stored model-pools analysis the report's pool
  section reads (the newest finished one of the run's response set with the
  run's EIP damping), or null: its params, times and result, with the
  result's ``question_ids`` replaced by ``questions`` (question keys),
  restricted to the exported questions (each pool's ``difficulty_scaled``
  alike; the report only reads the pair questions' values);
* ``pairs``: position, the two questions as stored (``[a, b]``: which is
  "a" was drawn when the study was made and the report's verdicts keep it),
  stratum; since version 4 ``attention_check`` and, for a check, its
  ``expected_harder`` question (absent: a regular pair);
* ``evaluators``: pseudonym (the account's username), the seed of their pair
  order, field of study, education level, qualified subjects, the progress
  timestamps (consent, onboarding, guidelines, finish), every assignment (pair, question shown on the left, when) and
  every judgment or skip (pair, choice, left and harder question, shown and
  submitted times, server and browser seconds); since version 4 the crowd
  platform's participant, study and session ids (``platform_*``, blank when
  none), the current exclusion (``excluded_at``, ``excluded_by``, the
  researcher's username, ``exclusion_reason``) and the exclusion log
  (``exclusion_events``: action, reason, by, at). Never an email address, a
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
  Each refusal names the item (pair position, evaluator pseudonym, field).
* Pairs: a pair of a question with itself, a pair listed twice (in either
  order) and a pair whose questions are in different subjects are refused.
* Judgments: one submitted before it was shown, negative ``seconds`` or
  ``seconds`` that differ from ``submitted_at - shown_at`` by more than
  :data:`SECONDS_TOLERANCE`, and negative or non-finite ``client_seconds``
  are refused.
* A study name that exists is refused unless ``rename`` gives a new one.
* Datasets and subjects are matched by name and created when missing.
  Questions are matched by (dataset, external id); an existing question whose
  subject, text, options, reference answer or metadata differ is refused
  (existing rows are never changed), a missing one is created.
* The scoring run is re-created as a finished run attached to a placeholder
  response set ("imported: <study name>", format "study-export", no responses).
  Its models are matched by name (created, with the exported family, size
  and access, when missing; existing ones are never changed). A pools
  analysis is re-created on the placeholder response set with its stored
  result (question keys turned back into this instance's ids, ascending).
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

import math

from django.db import transaction

from annotate.core import SECONDS_MAX, column_name, name_text_problem, unstorable_in
from annotate.models import (
    Choice,
    ExclusionAction,
    ModelAccess,
    OnboardingQuestion,
    PairStrategy,
    Participation,
    Question,
    RunStatus,
    Study,
    StudyStatus,
)
from annotate.studies.selectors.studies import user_is_researcher
from annotate.studies.selectors.transfer import (
    questions_by_key,
    study_name_taken,
    users_by_username,
)
from annotate.studies.services.judging import pair_votes_recount
from annotate.studies.services.participation import username_check
from annotate.studies.services.studies import (
    COUNT_MAX,
    ERR_ADAPTIVE_MIN,
    ERR_ADAPTIVE_SHARE,
    ERR_ATTENTION_SHARE,
    ERR_COUNT_RANGE,
    ERR_NAME_LONG,
    ERR_SEED,
    ERR_SEED_RANGE,
    ERR_TARGET,
    NAME_MAX,
    SEED_MAX,
)
from annotate.studies.services.study_quality import (
    COMPLETION_CODE_MAX,
    ERR_COMPLETION_CODE,
    ERR_COMPLETION_URL,
    ERR_PARAM_NAME,
    ERR_SPEEDER_SECONDS,
    ERR_URL_LENGTH,
    REASON_MAX,
    URL_MAX,
    completion_rules_check,
)
from annotate.studies.services.transfer_format import (
    DETAIL_BEFORE_SHOWN,
    DETAIL_CLIENT_SECONDS,
    DETAIL_SECONDS_MISMATCH,
    DETAIL_SECONDS_NEGATIVE,
    ERR_EXPECTED,
    ERR_HARDER,
    ERR_KIND,
    ERR_MALFORMED,
    ERR_MODEL,
    ERR_NAME_EMPTY,
    ERR_NAME_TAKEN,
    ERR_NOT_EVALUATOR,
    ERR_PAIR_REPEATED,
    ERR_PAIR_SAME,
    ERR_PAIR_SUBJECTS,
    ERR_PLATFORM_REPEATED,
    ERR_POOLS,
    ERR_PSEUDONYM_TAKEN,
    ERR_QUESTION_CONFLICT,
    ERR_UNKNOWN_PAIR,
    ERR_UNKNOWN_QUESTION,
    ERR_VERSION,
    EVALUATOR_TEXT_FIELDS,
    KIND,
    QUESTION_FIELDS,
    READABLE_VERSIONS,
    SECONDS_TOLERANCE,
    STUDY_SETTINGS,
    ImportResult,
    MalformedExport,
    _choice,
    _get,
    _parse_time,
    _Plan,
)
from annotate.studies.services.transfer_writes import (
    _result_scores,
    _write_catalog,
    _write_evaluators,
    _write_run,
    _write_study,
)

# --- export ------------------------------------------------------------------------


# --- import ------------------------------------------------------------------------


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
    for name in names:
        username_check(username=name)  # a pseudonym becomes an account's username
    if len(set(names)) != len(names):
        raise MalformedExport(ERR_MALFORMED.format(detail="a pseudonym is listed twice"))
    existing = users_by_username(usernames=names)
    if existing and not reuse:
        raise ValueError(ERR_PSEUDONYM_TAKEN.format(names=sorted(existing)))
    for name, user in existing.items():
        if user.is_staff or user.is_superuser or user_is_researcher(user=user):
            raise ValueError(ERR_NOT_EVALUATOR.format(name=name))
    return existing


def _check_settings(exported: dict) -> None:
    """The version-4 quality and crowd settings, where present, have the right kinds and ranges."""
    for name, kind in STUDY_SETTINGS.items():
        if name in exported and (isinstance(exported[name], bool) or not isinstance(exported[name], kind)):
            raise MalformedExport(ERR_MALFORMED.format(detail=f"study.{name} has the wrong type"))
    _check_ranges(exported)


def _check_ranges(exported: dict) -> None:
    """Every study value in the range the study forms and services accept,
    refused with their messages (never the database's)."""
    seed, n_pairs, target = exported["seed"], exported["n_pairs"], exported["target_judgments_per_pair"]
    if seed < 0:
        raise ValueError(ERR_SEED.format(value=seed))
    if seed > SEED_MAX:
        raise ValueError(ERR_SEED_RANGE.format(limit=SEED_MAX, value=seed))
    for field, value in (("n_pairs", n_pairs), ("target_judgments_per_pair", target),
                         ("pairs_per_subject", exported.get("pairs_per_subject")),
                         ("adaptive_min_comparisons", exported.get("adaptive_min_comparisons"))):
        if isinstance(value, int) and value > COUNT_MAX:
            raise ValueError(ERR_COUNT_RANGE.format(field=field, limit=COUNT_MAX, value=value))
    if n_pairs < 1:
        raise ValueError(ERR_MALFORMED.format(detail=f"study.n_pairs must be an integer >= 1; got {n_pairs!r}"))
    if target < 1:
        raise ValueError(ERR_TARGET.format(value=target))
    share = exported.get("attention_check_share", 0.0)
    if not math.isfinite(share) or not 0 <= share <= 0.5:
        raise ValueError(ERR_ATTENTION_SHARE.format(value=share))
    minimum = exported.get("adaptive_min_comparisons", 0)
    if minimum < 0:
        raise ValueError(ERR_ADAPTIVE_MIN.format(value=minimum))
    random_share = exported.get("adaptive_random_share", 0.0)
    if not math.isfinite(random_share) or not 0 <= random_share <= 1:
        raise ValueError(ERR_ADAPTIVE_SHARE.format(value=random_share))
    speeder = exported.get("speeder_seconds", 0.0)
    if not math.isfinite(speeder) or not 0 <= speeder <= SECONDS_MAX:
        raise ValueError(ERR_SPEEDER_SECONDS.format(value=speeder))
    names = [exported.get(f, "") for f in ("participant_param", "study_param", "session_param")]
    for field, value in zip(("participant_param", "study_param", "session_param"), names, strict=True):
        if value.strip() != value or len(value) > 64 or not all(c.isascii() and (c.isalnum() or c in "_-")
                                                              for c in value):
            raise ValueError(ERR_PARAM_NAME.format(field=field, value=value))
    code = exported.get("completion_code", "")
    if len(code) > COMPLETION_CODE_MAX:
        raise ValueError(ERR_COMPLETION_CODE.format(limit=COMPLETION_CODE_MAX, length=len(code)))
    column_name(code, model=Study, field="completion_code", label="study.completion_code")
    url = exported.get("completion_url", "")
    if url and not url.lower().startswith(("https://", "http://")):
        raise ValueError(ERR_COMPLETION_URL.format(value=url))
    if len(url) > URL_MAX:
        raise ValueError(ERR_URL_LENGTH.format(field="completion_url", limit=URL_MAX, length=len(url)))
    completion_rules_check(**{
        name: exported.get(name, getattr(Study, name).field.default) for name in (
            "completion_min_votes", "completion_min_check_share", "completion_min_seconds", "screened_out_url",
            "resume_by_participant_id")})


def _check_evaluator_extras(evaluators: list[dict]) -> None:
    """Platform ids and exclusions (version 4): kinds, times, one participant id per evaluator."""
    seen: dict[str, str] = {}
    for e in evaluators:
        who = e["pseudonym"]
        for name in EVALUATOR_TEXT_FIELDS:
            if not isinstance(e.get(name, ""), str):
                raise MalformedExport(ERR_MALFORMED.format(detail=f"evaluator {who!r} {name} must be a string"))
            limit = Participation._meta.get_field(name).max_length
            if len(e.get(name, "")) > limit:
                raise MalformedExport(ERR_MALFORMED.format(
                    detail=f"evaluator {who!r} {name} is longer than {limit} characters"))
            problem = name_text_problem(e.get(name, "")) if name != "exclusion_reason" else None
            if problem is not None:
                raise MalformedExport(ERR_MALFORMED.format(detail=f"evaluator {who!r} {name} holds {problem}"))
        _parse_time(e.get("excluded_at"), f"evaluator {who!r} excluded_at")
        for event in _get(e, "exclusion_events", who, list) if "exclusion_events" in e else []:
            _choice(_get(event, "action", who), ExclusionAction.values, f"evaluator {who!r} exclusion action")
            _parse_time(_get(event, "at", who), f"evaluator {who!r} exclusion at")
            if len(event.get("reason") or "") > REASON_MAX:
                raise MalformedExport(ERR_MALFORMED.format(
                    detail=f"evaluator {who!r} exclusion reason is longer than {REASON_MAX} characters"))
        pid = e.get("platform_participant_id", "")
        if pid and pid in seen:
            raise MalformedExport(ERR_PLATFORM_REPEATED.format(a=seen[pid], b=who, pid=pid))
        if pid:
            seen[pid] = who


def _plan(document: object, rename: str | None, reuse_evaluators: bool) -> _Plan:
    """Every check of :func:`study_import`; raises before anything is written."""
    _check_header(document)
    unstorable = unstorable_in(document, ints=False)  # before any query reads a text of the document
    if unstorable is not None:
        raise MalformedExport(ERR_MALFORMED.format(detail=unstorable))
    exported = _get(document, "study", "document", dict)
    name = (rename if rename is not None else _get(exported, "name", "study", str)).strip()
    if not name:
        raise ValueError(ERR_NAME_EMPTY)
    if len(name) > NAME_MAX:
        raise ValueError(ERR_NAME_LONG.format(limit=NAME_MAX, length=len(name)))
    name = column_name(name, model=Study, field="name", label="study.name")
    if study_name_taken(name=name):
        raise ValueError(ERR_NAME_TAKEN.format(name=name))
    _choice(exported.get("status"), StudyStatus.values, "study.status")
    _choice(exported.get("strategy"), PairStrategy.values, "study.strategy")
    for field, kind in (("seed", int), ("n_pairs", int), ("include_unkept", bool),
                        ("target_judgments_per_pair", int), ("guidelines", str), ("datasets", list),
                        ("subjects", list)):
        _get(exported, field, "study", kind)
    if not isinstance(exported.get("include_low_coverage", False), bool):  # absent before schema 3's diagnostics
        raise MalformedExport(ERR_MALFORMED.format(detail="study.include_low_coverage must be true or false"))
    # Absent from older exports: no per-subject drawing, no consent step, every onboarding question.
    per_subject = exported.get("pairs_per_subject")
    if per_subject is not None and (not isinstance(per_subject, int) or isinstance(per_subject, bool)
                                    or per_subject < 1):
        raise MalformedExport(ERR_MALFORMED.format(detail="study.pairs_per_subject must be null or an integer >= 1"))
    if not isinstance(exported.get("consent_text", ""), str):
        raise MalformedExport(ERR_MALFORMED.format(detail="study.consent_text must be a string"))
    asked = exported.get("onboarding_questions", list(OnboardingQuestion.values))
    if not isinstance(asked, list) or any(q not in OnboardingQuestion.values for q in asked):
        raise MalformedExport(ERR_MALFORMED.format(
            detail=f"study.onboarding_questions must be a list of {list(OnboardingQuestion.values)}"))
    _check_settings(exported)
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
    checks: dict[int, Question] = {}
    for p in _get(document, "pairs", "document", list):
        position = _get(p, "position", "pair", int)
        refs = _get(p, "questions", f"pair {position}", list)
        if len(refs) != 2 or position in pairs:
            raise MalformedExport(ERR_MALFORMED.format(detail=f"pair {position} is listed twice or lacks a question"))
        pairs[position] = (question(refs[0], f"pair {position}"), question(refs[1], f"pair {position}"),
                           p.get("stratum"))
        if p.get("attention_check", False):  # absent before version 4: a regular pair
            expected = p.get("expected_harder")
            harder = None if expected is None else question(expected, f"pair {position}")
            if harder is None or harder not in pairs[position][:2]:
                raise MalformedExport(ERR_EXPECTED.format(position=position))
            checks[position] = harder
    _check_pairs(pairs, questions)
    pool = []
    for k, item in enumerate(_get(exported, "adaptive_pool", "study", list) if "adaptive_pool" in exported else []):
        if not isinstance(item, list) or len(item) != 3 or not isinstance(item[2], int) or isinstance(item[2], bool):
            raise MalformedExport(ERR_MALFORMED.format(
                detail=f"study.adaptive_pool item {k} must be [dataset, external id, block]"))
        pool.append((question(item[:2], f"study.adaptive_pool item {k}"), item[2]))
    if len({q.pk for q, _ in pool}) != len(pool):
        raise MalformedExport(ERR_MALFORMED.format(detail="study.adaptive_pool lists a question twice"))
    results = [(question(_get(r, "question", "question result"), "question result"),
                {"kept": _get(r, "kept", "question result"), "n_observed": _get(r, "n_observed", "question result"),
                 "scores": _result_scores(r)})
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
    _check_evaluator_extras(evaluators)
    unstorable = unstorable_in(document)  # after the range checks, which name a study setting's own limit
    if unstorable is not None:
        raise MalformedExport(ERR_MALFORMED.format(detail=unstorable))
    return _Plan(name=name, study=exported, run=run, questions=questions, questions_created=created,
                 questions_reused=reused, pairs=pairs, results=results, evaluators=evaluators,
                 reuse=_evaluator_accounts(evaluators, reuse_evaluators), models=_models(run),
                 pools=_pools(document.get("pools_analysis"), question), checks=checks, pool=pool)


def _check_pairs(pairs: dict[int, tuple[Question, Question, int | None]],
                 questions: dict[tuple[str, str], Question]) -> None:
    """No pair of a question with itself, no pair twice (in either order), none across subjects."""
    key_of = {id(q): list(k) for k, q in questions.items()}

    def subject(q: Question) -> str | None:
        return getattr(q, "_subject_name", None) if q.pk is None else (q.subject.name if q.subject else None)

    seen: dict[tuple[int, int], int] = {}
    for position, (a, b, _) in sorted(pairs.items()):
        ka, kb = key_of[id(a)], key_of[id(b)]
        if a is b:
            raise MalformedExport(ERR_PAIR_SAME.format(position=position, key=ka))
        for ref, how in (((id(a), id(b)), "the same questions"), ((id(b), id(a)), "reversed")):
            if ref in seen:
                raise MalformedExport(ERR_PAIR_REPEATED.format(position=position, other=seen[ref], how=how,
                                                               a=ka, b=kb))
        seen[(id(a), id(b))] = position
        if subject(a) != subject(b):
            raise MalformedExport(ERR_PAIR_SUBJECTS.format(position=position, a=ka, b=kb, subject_a=subject(a),
                                                           subject_b=subject(b)))


def _models(run: dict) -> list[dict]:
    """The run's ``models_used`` (absent before version 3: none)."""
    rows = run.get("models_used", [])
    if not isinstance(rows, list):
        raise MalformedExport(ERR_MODEL.format(detail="must be a list"))
    for m in rows:
        name = _get(m, "name", "scoring_run.models_used", str)
        size = m.get("parameters_b")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int | float) or not size > 0):
            raise MalformedExport(ERR_MODEL.format(detail=f"model {name!r}: parameters_b {size!r} is not positive"))
        _choice(m.get("access", ModelAccess.UNKNOWN), ModelAccess.values, f"model {name!r} access")
        if not isinstance(m.get("family", ""), str):
            raise MalformedExport(ERR_MODEL.format(detail=f"model {name!r}: family is not text"))
    return rows


def _pools(exported: object, question) -> dict | None:
    """The stored pools analysis, its question keys turned into this instance's
    questions and the values ordered by ascending id at write time."""
    if exported is None:
        return None
    params = _get(exported, "params", "pools_analysis", dict)
    result = _get(exported, "result", "pools_analysis", dict)
    pools = _get(result, "pools", "pools_analysis.result", list)
    refs = None
    if "questions" in result:
        refs = [question(k, "pools_analysis") for k in _get(result, "questions", "pools_analysis.result", list)]
        for p in pools:
            values = _get(p, "difficulty_scaled", "pools_analysis pool")
            if values is not None and (not isinstance(values, list) or len(values) != len(refs)):
                raise MalformedExport(ERR_POOLS.format(
                    detail=f"pool {p.get('name')!r}: difficulty_scaled must have one value per question"))
    for field in ("created_at", "started_at", "finished_at"):
        _parse_time(exported.get(field), f"pools_analysis.{field}")
    return {"params": params, "result": result, "questions": refs, "exported": exported}


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
    shown_at = _parse_time(_get(item, "shown_at", who), f"evaluator {who!r} shown_at")
    submitted_at = _parse_time(_get(item, "submitted_at", who), f"evaluator {who!r} submitted_at")

    def refuse(detail: str) -> MalformedExport:
        return MalformedExport(ERR_HARDER.format(name=who, position=position, detail=detail))

    if shown_at is None or submitted_at is None:
        raise refuse("a judgment needs shown_at and submitted_at")
    if submitted_at < shown_at:
        raise refuse(DETAIL_BEFORE_SHOWN.format(submitted=submitted_at.isoformat(), shown=shown_at.isoformat()))
    seconds = _get(item, "seconds", who, (int, float))
    if isinstance(seconds, bool) or not math.isfinite(seconds) or seconds < 0:
        raise refuse(DETAIL_SECONDS_NEGATIVE.format(value=seconds))
    expected = (submitted_at - shown_at).total_seconds()
    if abs(seconds - expected) > SECONDS_TOLERANCE:
        raise refuse(DETAIL_SECONDS_MISMATCH.format(value=seconds, expected=expected, tolerance=SECONDS_TOLERANCE))
    client = item.get("client_seconds")
    if client is not None and (isinstance(client, bool) or not isinstance(client, int | float)
                               or not math.isfinite(client) or client < 0):
        raise refuse(DETAIL_CLIENT_SECONDS.format(value=client))


@transaction.atomic
def study_import(*, document: dict, rename: str | None = None, reuse_evaluators: bool = False) -> ImportResult:
    """Create a study (with its questions, run context, pairs, evaluators and
    judgments) from a document made by :func:`study_export`.

    Parameters
    ----------
    document : dict
        A parsed export (``schema_version`` 1, 2, 3 or 4).
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
    pair_votes_recount(study_id=study.pk)
    return ImportResult(
        study=study,
        questions_created=plan.questions_created,
        questions_reused=plan.questions_reused,
        evaluators_created=len(plan.evaluators) - len(plan.reuse),
        evaluators_reused=len(plan.reuse),
        judgments=n_judgments,
    )
