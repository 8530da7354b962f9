"""The study export's format: its version, the settings and fields it carries,
the messages of a refused import, and the plan an import writes.

The format itself is described in :mod:`annotate.studies.services.study_transfer`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from annotate.models import (
    Question,
    Study,
)

SCHEMA_VERSION = 4


#: Versions this site reads: 1 had one field per method in each question result; 2 sorted each pair's
#: questions by key (losing which was "a") and carried only the results of the study's scope; 3 had no
#: attention checks, quality and crowd settings, platform ids or exclusions (read as none / the defaults).
READABLE_VERSIONS = (1, 2, 3, 4)


#: Largest difference (seconds) allowed between a judgment's ``seconds`` and ``submitted_at - shown_at``.
SECONDS_TOLERANCE = 1e-3


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


ERR_PAIR_SAME = "pair {position} pairs question {key} with itself"


ERR_PAIR_REPEATED = "pair {position} repeats pair {other} ({how}: {a} and {b})"


ERR_PAIR_SUBJECTS = "pair {position} crosses subjects: {a} is in {subject_a!r}, {b} in {subject_b!r}"


DETAIL_BEFORE_SHOWN = "submitted_at {submitted} is before shown_at {shown}"


DETAIL_SECONDS_NEGATIVE = "seconds {value!r} is negative or not a finite number"


DETAIL_SECONDS_MISMATCH = (
    "seconds {value!r} does not match submitted_at - shown_at = {expected!r} (tolerance {tolerance:g} s)"
)


DETAIL_CLIENT_SECONDS = "client_seconds {value!r} is negative or not a finite number"


ERR_MODEL = "scoring_run.models_used: {detail}"


ERR_EXPECTED = "pair {position}: an attention check needs expected_harder, one of its two questions"


ERR_PLATFORM_REPEATED = "evaluators {a!r} and {b!r} have the same platform_participant_id {pid!r}"


ERR_POOLS = "pools_analysis: {detail}"


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


#: Quality and crowd settings of a study an export carries (version 4), with their kinds and an older file's
#: default (the model's).
STUDY_SETTINGS = {
    "speeder_seconds": (int, float), "attention_check_share": (int, float), "participant_param": str,
    "study_param": str, "session_param": str, "completion_code": str, "completion_url": str,
    "adaptive_min_comparisons": int, "adaptive_random_share": (int, float),
    "completion_min_votes": int, "completion_min_check_share": (int, float), "completion_min_seconds": (int, float),
    "screened_out_url": str, "resume_by_participant_id": str,
}


#: Platform ids and exclusion of an evaluator an export carries (version 4); blank in an older file.
EVALUATOR_TEXT_FIELDS = ("platform_participant_id", "platform_study_id", "platform_session_id", "exclusion_reason",
                         "group")


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
    models: list[dict]
    pools: dict | None
    checks: dict[int, Question] = dataclasses.field(default_factory=dict)  # position -> expected harder question
    pool: list[tuple[Question, int]] = dataclasses.field(default_factory=list)  # an adaptive study's pool


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
