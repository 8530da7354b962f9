"""Writes for a study's quality control and crowd settings: exclude an
evaluator from analyses (and include them again), and change the settings
that may change at any time (speeder threshold, platform parameter names,
completion code and URL).

Excluding never deletes: the evaluator's judgments stay in the database and
in exports; the alignment report leaves them out of every statistic and lists
the evaluator as excluded, with the reason. Each exclusion and each reversal
is written to :class:`~annotate.models.ExclusionEvent` (who, when, why).
"""
from __future__ import annotations

import math

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotate.core import SECONDS_MAX, column_name, column_text
from annotate.models import ExclusionAction, ExclusionEvent, Participation, ResumeByParticipantId, Study

ERR_REASON_EMPTY = "a reason is required to exclude an evaluator"
ERR_ALREADY_EXCLUDED = "evaluator {name!r} is already excluded"
ERR_NOT_EXCLUDED = "evaluator {name!r} is not excluded"
ERR_SPEEDER_SECONDS = f"speeder_seconds must be a finite number from 0 to {SECONDS_MAX:,}; got {{value!r}}"
ERR_PARAM_NAME = "{field} must be letters, digits, '_' or '-' (at most 64); got {value!r}"
ERR_PARAM_REPEATED = "participant, study and session parameters must differ; {value!r} is used twice"
ERR_COMPLETION_URL = "completion_url must start with https:// or http://; got {value!r}"
ERR_MIN_VOTES = "completion_min_votes must be an integer from 0 to {limit}; got {value!r}"
ERR_MIN_CHECK_SHARE = "completion_min_check_share must be a number in [0, 1]; got {value!r}"
ERR_MIN_SECONDS = "completion_min_seconds must be a finite number from 0 to {limit:g}; got {value!r}"
ERR_SCREENED_OUT_URL = "screened_out_url must start with https:// or http://; got {value!r}"
ERR_RESUME = "resume_by_participant_id must be one of {choices}; got {value!r}"
ERR_COMPLETION_CODE = "completion_code must be at most {limit} characters; got {length}"
ERR_URL_LENGTH = "{field} must be at most {limit} characters; got {length}"
REASON_MAX = 500
#: Largest value of a positive integer column on every supported database.
POSITIVE_INT_MAX = 2**31 - 1
#: Longest minimum time a study may ask for (a week, in seconds).
MIN_SECONDS_MAX = float(SECONDS_MAX)
COMPLETION_CODE_MAX = 100
URL_MAX = 500


def _reason(reason: str) -> str:
    """An exclusion (or inclusion) reason, stripped; refused, never cut, when longer than :data:`REASON_MAX`."""
    return column_text(reason or "", model=ExclusionEvent, field="reason", label="reason")


@transaction.atomic
def participation_exclude(*, participation: Participation, reason: str, by: AbstractBaseUser | None) -> Participation:
    """Leave an evaluator out of the study's analyses from now on.

    Raises
    ------
    ValueError
        :data:`ERR_REASON_EMPTY` for a blank reason, a reason longer than
        :data:`REASON_MAX` characters (``ERR_TEXT_TOO_LONG``, never cut),
        :data:`ERR_ALREADY_EXCLUDED`.
    """
    participation = Participation.objects.select_for_update().select_related("user").get(pk=participation.pk)
    reason = _reason(reason)
    if not reason:
        raise ValueError(ERR_REASON_EMPTY)
    if participation.excluded_at is not None:
        raise ValueError(ERR_ALREADY_EXCLUDED.format(name=participation.user.get_username()))
    now = timezone.now()
    participation.excluded_at = now
    participation.excluded_by = by
    participation.exclusion_reason = reason
    participation.save(update_fields=["excluded_at", "excluded_by", "exclusion_reason"])
    ExclusionEvent.objects.create(participation=participation, action=ExclusionAction.EXCLUDE, reason=reason,
                                  by=by, at=now)
    return participation


@transaction.atomic
def participation_restore(
    *, participation: Participation, by: AbstractBaseUser | None, reason: str = ""
) -> Participation:
    """Include an excluded evaluator in the analyses again (the exclusion stays in the log).

    Raises
    ------
    ValueError
        :data:`ERR_NOT_EXCLUDED`; a reason longer than :data:`REASON_MAX` characters.
    """
    reason = _reason(reason)
    participation = Participation.objects.select_for_update().select_related("user").get(pk=participation.pk)
    if participation.excluded_at is None:
        raise ValueError(ERR_NOT_EXCLUDED.format(name=participation.user.get_username()))
    participation.excluded_at = None
    participation.excluded_by = None
    participation.exclusion_reason = ""
    participation.save(update_fields=["excluded_at", "excluded_by", "exclusion_reason"])
    ExclusionEvent.objects.create(participation=participation, action=ExclusionAction.RESTORE,
                                  reason=reason, by=by, at=timezone.now())
    return participation


def _param(value: str, field: str) -> str:
    value = (value or "").strip()
    if len(value) > 64 or not all(c.isascii() and (c.isalnum() or c in "_-") for c in value):
        raise ValueError(ERR_PARAM_NAME.format(field=field, value=value))
    return value


def _is_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _url(value: str, field: str, error: str) -> str:
    value = (value or "").strip()
    if value and not value.lower().startswith(("https://", "http://")):
        raise ValueError(error.format(value=value))
    if len(value) > URL_MAX:
        raise ValueError(ERR_URL_LENGTH.format(field=field, limit=URL_MAX, length=len(value)))
    return value


def completion_rules_check(
    *,
    completion_min_votes: object,
    completion_min_check_share: object,
    completion_min_seconds: object,
    screened_out_url: object,
    resume_by_participant_id: object,
) -> None:
    """Check a study's completion rules and resume setting (the forms, the
    services and the study import use this one check, with these messages).

    Parameters
    ----------
    completion_min_votes : int
        Answered (non-skip) pairs needed for the code, 0 to ``POSITIVE_INT_MAX``.
    completion_min_check_share : float
        Share of the attention checks shown that must be passed, in [0, 1].
    completion_min_seconds : float
        Seconds on pairs needed, 0 to ``MIN_SECONDS_MAX`` (a week).
    screened_out_url : str
        Blank, or an http(s) URL of at most 500 characters.
    resume_by_participant_id : str
        A :class:`~annotate.models.ResumeByParticipantId` value.

    Raises
    ------
    ValueError
        :data:`ERR_MIN_VOTES`, :data:`ERR_MIN_CHECK_SHARE`, :data:`ERR_MIN_SECONDS`,
        :data:`ERR_SCREENED_OUT_URL`, :data:`ERR_URL_LENGTH` or :data:`ERR_RESUME`.
    """
    votes = completion_min_votes
    if isinstance(votes, bool) or not isinstance(votes, int) or not 0 <= votes <= POSITIVE_INT_MAX:
        raise ValueError(ERR_MIN_VOTES.format(limit=POSITIVE_INT_MAX, value=votes))
    share = completion_min_check_share
    if not _is_number(share) or not 0 <= share <= 1:  # type: ignore[operator]
        raise ValueError(ERR_MIN_CHECK_SHARE.format(value=share))
    seconds = completion_min_seconds
    if not _is_number(seconds) or not 0 <= seconds <= MIN_SECONDS_MAX:  # type: ignore[operator]
        raise ValueError(ERR_MIN_SECONDS.format(limit=MIN_SECONDS_MAX, value=seconds))
    if not isinstance(screened_out_url, str):
        raise ValueError(ERR_SCREENED_OUT_URL.format(value=screened_out_url))
    _url(screened_out_url, "screened_out_url", ERR_SCREENED_OUT_URL)
    if resume_by_participant_id not in ResumeByParticipantId.values:
        raise ValueError(ERR_RESUME.format(choices=list(ResumeByParticipantId.values), value=resume_by_participant_id))


@transaction.atomic
def study_quality_settings_update(
    *,
    study: Study,
    speeder_seconds: float,
    participant_param: str,
    study_param: str,
    session_param: str,
    completion_code: str,
    completion_url: str,
    completion_min_votes: int | None = None,
    completion_min_check_share: float | None = None,
    completion_min_seconds: float | None = None,
    screened_out_url: str | None = None,
    resume_by_participant_id: str | None = None,
) -> Study:
    """Change a study's speeder threshold, platform parameter names,
    completion code and URL, the rules that earn the code
    (:mod:`annotate.studies.selectors.completion`), the link offered to those who do
    not earn it, and whether a participant id resumes. All may change at any
    time: none changes what an answer means. A blank parameter name reads
    nothing; a completion setting passed as None stays as it is.

    Raises
    ------
    ValueError
        A negative or non-finite threshold, a parameter name with other
        characters than letters, digits, ``_`` and ``-``, a name used twice,
        a completion URL that is not http(s), or a completion rule out of
        range (:func:`completion_rules_check`). Nothing changes.
    """
    rules = {
        "completion_min_votes": study.completion_min_votes if completion_min_votes is None else completion_min_votes,
        "completion_min_check_share": study.completion_min_check_share if completion_min_check_share is None
        else completion_min_check_share,
        "completion_min_seconds": study.completion_min_seconds if completion_min_seconds is None
        else completion_min_seconds,
        "screened_out_url": study.screened_out_url if screened_out_url is None else screened_out_url,
        "resume_by_participant_id": study.resume_by_participant_id if resume_by_participant_id is None
        else resume_by_participant_id,
    }
    completion_rules_check(**rules)
    if isinstance(speeder_seconds, bool) or not isinstance(speeder_seconds, int | float) \
            or not math.isfinite(speeder_seconds) or not 0 <= speeder_seconds <= SECONDS_MAX:
        raise ValueError(ERR_SPEEDER_SECONDS.format(value=speeder_seconds))
    names = [_param(participant_param, "participant_param"), _param(study_param, "study_param"),
             _param(session_param, "session_param")]
    used = [n for n in names if n]
    for n in used:
        if used.count(n) > 1:
            raise ValueError(ERR_PARAM_REPEATED.format(value=n))
    completion_url = _url(completion_url, "completion_url", ERR_COMPLETION_URL)
    completion_code = (completion_code or "").strip()
    if len(completion_code) > COMPLETION_CODE_MAX:
        raise ValueError(ERR_COMPLETION_CODE.format(limit=COMPLETION_CODE_MAX, length=len(completion_code)))
    completion_code = column_name(completion_code, model=Study, field="completion_code", label="completion_code")
    study.speeder_seconds = float(speeder_seconds)
    study.participant_param, study.study_param, study.session_param = names
    study.completion_code = completion_code
    study.completion_url = completion_url
    study.completion_min_votes = int(rules["completion_min_votes"])  # type: ignore[call-overload]
    study.completion_min_check_share = float(rules["completion_min_check_share"])  # type: ignore[arg-type]
    study.completion_min_seconds = float(rules["completion_min_seconds"])  # type: ignore[arg-type]
    study.screened_out_url = str(rules["screened_out_url"]).strip()
    study.resume_by_participant_id = str(rules["resume_by_participant_id"])
    study.save(update_fields=["speeder_seconds", "participant_param", "study_param", "session_param",
                              "completion_code", "completion_url", *rules])
    return study
