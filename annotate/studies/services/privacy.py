"""Evaluator privacy: delete a person's data, keep their judgments anonymous.

What the site keeps about an evaluator is what the study needs: a pseudonym
(the account's username: "evaluator-7f3a" for people who joined by an
invitation link; staff choose the username of a named evaluator and should
choose a pseudonym), field of study, education level and the subjects they
feel qualified to judge. No email address, real name or password is needed
(invited evaluators have an unusable password). Exports use the pseudonym.

:func:`evaluator_delete_personal_data` removes even that: the account (its
login, sessions, API tokens and group memberships) is deleted and every
participation of the person moves to a new, inactive, password-less account
"deleted-evaluator-<n>", with the background fields and qualified subjects
cleared and the link to the invitation dropped (an invitation's note may name
the person). Judgments, skips, assignments and their timestamps stay, so
reports still count them, as one anonymous evaluator.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from annotate.models import Judgment, Participation
from annotate.studies.selectors.studies import user_is_researcher

DELETED_PREFIX = "deleted-evaluator-"
ERR_NOT_EVALUATOR = (
    "user {username!r} is staff or a researcher; only evaluators' data is deleted this way "
    "(remove staff accounts in the admin)"
)
ERR_ALREADY_DELETED = "{username!r} is already an anonymous placeholder; there is nothing personal left"
ERR_UNKNOWN_PSEUDONYM = "no evaluator with the pseudonym {pseudonym!r}"
_DELETED = re.compile(rf"^{re.escape(DELETED_PREFIX)}(\d+)$")


@dataclass(frozen=True)
class DeletionResult:
    """What :func:`evaluator_delete_personal_data` did."""

    pseudonym: str  # the deleted account's username
    replacement: str  # the anonymous account now holding the participations
    participations: int
    judgments: int  # judgments and skips kept


def evaluator_by_pseudonym(*, pseudonym: str) -> AbstractBaseUser:
    """The account with this username.

    Raises
    ------
    LookupError
        If there is none.
    """
    user = get_user_model().objects.filter(username=pseudonym).first()
    if user is None:
        raise LookupError(ERR_UNKNOWN_PSEUDONYM.format(pseudonym=pseudonym))
    return user


def _next_placeholder_number() -> int:
    names = get_user_model().objects.filter(username__startswith=DELETED_PREFIX).values_list("username", flat=True)
    numbers = [int(m.group(1)) for m in map(_DELETED.match, names) if m]
    return max(numbers, default=0) + 1


def _create_placeholder() -> AbstractBaseUser:
    User = get_user_model()
    for _ in range(10):
        try:
            with transaction.atomic():
                placeholder = User(username=f"{DELETED_PREFIX}{_next_placeholder_number()}", is_active=False)
                placeholder.set_unusable_password()
                placeholder.save()
                return placeholder
        except IntegrityError:  # another deletion took the number at the same moment
            continue
    raise RuntimeError("could not create an anonymous placeholder account")


@transaction.atomic
def evaluator_delete_personal_data(*, user: AbstractBaseUser) -> DeletionResult:
    """Delete an evaluator's account and background; keep their judgments anonymous.

    Parameters
    ----------
    user : User
        An evaluator: not staff, not a superuser, not a researcher.

    Returns
    -------
    DeletionResult

    Raises
    ------
    ValueError
        If ``user`` is staff, a superuser or a researcher, or already an
        anonymous placeholder. Nothing is changed.
    """
    username = user.get_username()
    if user.is_staff or user.is_superuser or user_is_researcher(user=user):
        raise ValueError(ERR_NOT_EVALUATOR.format(username=username))
    if _DELETED.match(username) and not user.is_active:
        raise ValueError(ERR_ALREADY_DELETED.format(username=username))
    placeholder = _create_placeholder()
    participations = Participation.objects.filter(user=user)
    ids = list(participations.values_list("pk", flat=True))
    Participation.qualified_subjects.through.objects.filter(participation_id__in=ids).delete()
    participations.update(user=placeholder, field_of_study="", education_level="", invitation=None)
    kept = Judgment.objects.filter(participation_id__in=ids).count()
    user.delete()
    return DeletionResult(pseudonym=username, replacement=placeholder.get_username(), participations=len(ids),
                          judgments=kept)
