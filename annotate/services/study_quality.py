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

from annotate.models import ExclusionAction, ExclusionEvent, Participation, Study

ERR_REASON_EMPTY = "a reason is required to exclude an evaluator"
ERR_ALREADY_EXCLUDED = "evaluator {name!r} is already excluded"
ERR_NOT_EXCLUDED = "evaluator {name!r} is not excluded"
ERR_SPEEDER_SECONDS = "speeder_seconds must be a finite number >= 0; got {value!r}"
ERR_PARAM_NAME = "{field} must be letters, digits, '_' or '-' (at most 64); got {value!r}"
ERR_PARAM_REPEATED = "participant, study and session parameters must differ; {value!r} is used twice"
ERR_COMPLETION_URL = "completion_url must start with https:// or http://; got {value!r}"
REASON_MAX = 500


@transaction.atomic
def participation_exclude(*, participation: Participation, reason: str, by: AbstractBaseUser | None) -> Participation:
    """Leave an evaluator out of the study's analyses from now on.

    Raises
    ------
    ValueError
        :data:`ERR_REASON_EMPTY` for a blank reason, :data:`ERR_ALREADY_EXCLUDED`.
    """
    participation = Participation.objects.select_for_update().select_related("user").get(pk=participation.pk)
    reason = (reason or "").strip()[:REASON_MAX]
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
        :data:`ERR_NOT_EXCLUDED`.
    """
    participation = Participation.objects.select_for_update().select_related("user").get(pk=participation.pk)
    if participation.excluded_at is None:
        raise ValueError(ERR_NOT_EXCLUDED.format(name=participation.user.get_username()))
    participation.excluded_at = None
    participation.excluded_by = None
    participation.exclusion_reason = ""
    participation.save(update_fields=["excluded_at", "excluded_by", "exclusion_reason"])
    ExclusionEvent.objects.create(participation=participation, action=ExclusionAction.RESTORE,
                                  reason=(reason or "").strip()[:REASON_MAX], by=by, at=timezone.now())
    return participation


def _param(value: str, field: str) -> str:
    value = (value or "").strip()
    if len(value) > 64 or not all(c.isascii() and (c.isalnum() or c in "_-") for c in value):
        raise ValueError(ERR_PARAM_NAME.format(field=field, value=value))
    return value


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
) -> Study:
    """Change a study's speeder threshold, platform parameter names and
    completion code and URL. All may change at any time: none changes what
    an answer means. A blank parameter name reads nothing.

    Raises
    ------
    ValueError
        A negative or non-finite threshold, a parameter name with other
        characters than letters, digits, ``_`` and ``-``, a name used twice,
        or a completion URL that is not http(s). Nothing changes.
    """
    if isinstance(speeder_seconds, bool) or not isinstance(speeder_seconds, int | float) \
            or not math.isfinite(speeder_seconds) or speeder_seconds < 0:
        raise ValueError(ERR_SPEEDER_SECONDS.format(value=speeder_seconds))
    names = [_param(participant_param, "participant_param"), _param(study_param, "study_param"),
             _param(session_param, "session_param")]
    used = [n for n in names if n]
    for n in used:
        if used.count(n) > 1:
            raise ValueError(ERR_PARAM_REPEATED.format(value=n))
    completion_url = (completion_url or "").strip()
    if completion_url and not completion_url.lower().startswith(("https://", "http://")):
        raise ValueError(ERR_COMPLETION_URL.format(value=completion_url))
    study.speeder_seconds = float(speeder_seconds)
    study.participant_param, study.study_param, study.session_param = names
    study.completion_code = (completion_code or "").strip()[:100]
    study.completion_url = completion_url[:500]
    study.save(update_fields=["speeder_seconds", "participant_param", "study_param", "session_param",
                              "completion_code", "completion_url"])
    return study
