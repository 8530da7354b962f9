"""Evaluators and their participation: roles, invitations, joining, onboarding, consent.

An invitation link (or a crowd platform's link with its participant, study
and session ids) makes a pseudonymous evaluator account and a participation;
staff create named evaluators; onboarding records the evaluator's background
and qualification, consent and the guidelines are accepted or declined. The
study itself (scope, settings, status) is :mod:`annotate.studies.services.studies`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from annotate.core import column_text, name_text_problem
from annotate.models import (
    ConsentDecline,
    EducationLevel,
    FieldOfStudy,
    Invitation,
    OnboardingQuestion,
    Participation,
    ResumeByParticipantId,
    Study,
    StudyStatus,
    Subject,
)
from annotate.studies.selectors.studies import (
    EVALUATOR_GROUP,
    RESEARCHER_GROUP,
    user_is_evaluator,
)

ERR_USERNAME_TAKEN = "username {username!r} is already taken"


ERR_USERNAME_EMPTY = "username must not be empty"


ERR_USERNAME_INVALID = (
    "username {username!r} is not allowed: use at most {limit} letters, digits and the characters @ . + - _ "
    "(no spaces)"
)


ERR_INVITATION_REVOKED = "this invitation link has been revoked"


ERR_STUDY_CLOSED = "study {name!r} is closed"


ERR_NOT_ASKED = "{name} is not one of the study's onboarding questions"


ERR_FIELD = "field_of_study must be one of {choices}; got {value!r}"


ERR_LEVEL = "education_level must be one of {choices}; got {value!r}"


ERR_QUALIFIED = "qualified_subjects must be subjects of the study; {names} are not"


class StudyClosedError(Exception):
    """The study does not accept new evaluators or judgments."""


class InvitationRevokedError(Exception):
    """The invitation link was revoked."""


def _group(name: str) -> Group:
    group, _ = Group.objects.get_or_create(name=name)
    return group


def ensure_role_groups() -> tuple[Group, Group]:
    """Create the "researcher" and "evaluator" groups if missing."""
    return _group(RESEARCHER_GROUP), _group(EVALUATOR_GROUP)


def _checked_note(note: str) -> str:
    return column_text(note, model=Invitation, field="note", label="Note")


def invitation_create(*, study: Study, note: str = "", created_by: AbstractBaseUser | None = None) -> Invitation:
    """A new invitation link (token from ``secrets.token_urlsafe(32)``).

    Raises
    ------
    ValueError
        When the note, stripped, is longer than the column holds (200
        characters): it is refused, never cut.
    """
    return Invitation.objects.create(study=study, note=_checked_note(note), created_by=created_by)


def invitation_save(*, entry: Invitation, fields: Sequence[str] | None) -> Invitation:
    """Save an invitation added or changed in the admin.

    ``fields``: ``None`` for a new invitation (a fresh token), else the
    changed model fields (the study and the note; the token never changes).
    A note longer than the column holds raises ``ValueError``, as
    :func:`invitation_create` does.
    """
    entry.note = _checked_note(entry.note or "")
    if fields is None or entry.pk is None:
        entry.save()
    elif fields:
        entry.save(update_fields=list(fields))
    return entry


def invitation_delete(*, entry: Invitation) -> None:
    """Delete an invitation link; the people who joined through it keep their participation."""
    entry.delete()


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    """Revoke a link: it stops admitting or resuming anyone. People who already
    joined keep their participation (and their login session)."""
    if invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def _new_pseudonym() -> str:
    User = get_user_model()
    for digits in (4, 4, 4, 6, 6, 8, 8, 12):
        candidate = f"evaluator-{secrets.token_hex(digits // 2)}"
        if not User.objects.filter(username=candidate).exists():
            return candidate
    raise RuntimeError("could not find a free evaluator pseudonym")  # ~impossible


def _create_pseudonymous_evaluator() -> AbstractBaseUser:
    User = get_user_model()
    for _ in range(5):
        try:
            with transaction.atomic():
                user = User(username=_new_pseudonym())
                user.set_unusable_password()
                user.save()
                user.groups.add(_group(EVALUATOR_GROUP))
                return user
        except IntegrityError:  # two visitors drew the same pseudonym at once
            continue
    raise RuntimeError("could not create a pseudonymous evaluator")


@dataclass(frozen=True)
class PlatformIds:
    """A crowd platform's ids of a visitor, read from the invitation URL's
    query parameters (names set per study; Prolific's by default). Blank when
    absent."""

    participant: str = ""
    study: str = ""
    session: str = ""


#: Longest platform id accepted (Prolific's are 24 characters).
PLATFORM_ID_MAX = 128


ERR_PLATFORM_ID = "the link's {param} is not a valid id: it holds {problem}"


ERR_PLATFORM_ID_LONG = "the link's {param} is not a valid id: it is longer than {limit} characters"


ERR_PLATFORM_PLACEHOLDER = (
    "the link still has its placeholder {value!r} where the platform puts your {param}: the platform fills it in "
    "when it sends you to the study, so a copied or test link cannot be used to take part"
)


#: An unfilled link template of a crowd platform: Prolific's ``{{%PROLIFIC_PID%}}``, the ``{{name}}`` and
#: ``{name}`` fields of survey tools and of MTurk-style external links, ``${name}`` (Qualtrics piped text) and
#: CloudResearch's and SONA's ``%name%``. No platform's real ids hold braces or a ``%NAME%``.
PLATFORM_PLACEHOLDER_RE = re.compile(r"[{}]|%[A-Za-z_][A-Za-z0-9_.]*%")


ERR_PARTICIPANT_ID_IN_USE = (
    "participant id {pid!r} has already joined this study; it continues only {where}"
)


class PlatformIdError(ValueError):
    """A platform id in the join link that cannot be stored (a 400; nothing is written)."""


class PlatformPlaceholderError(PlatformIdError):
    """A platform id in the join link that is still the platform's unfilled placeholder (a 400; nothing is written)."""


class ParticipantIdInUseError(Exception):
    """A known participant id that this study does not let continue from this browser (a 409; nothing is written)."""


def platform_ids_from_query(*, study: Study, query: Mapping[str, str]) -> PlatformIds:
    """The platform ids in ``query`` (a request's GET parameters) under the
    study's parameter names; a blank parameter name reads nothing.

    Raises
    ------
    PlatformIdError
        An id longer than :data:`PLATFORM_ID_MAX` characters, or holding a NUL,
        a lone surrogate, another control character or an invisible or
        direction-changing character (:func:`annotate.core.storable.name_text_problem`);
        :class:`PlatformPlaceholderError` for an id that is still a platform's
        unfilled placeholder (:data:`PLATFORM_PLACEHOLDER_RE`). The message
        names the parameter.
    """

    def read(name: str) -> str:
        if not name:
            return ""
        value = (query.get(name) or "").strip()
        if PLATFORM_PLACEHOLDER_RE.search(value):
            raise PlatformPlaceholderError(ERR_PLATFORM_PLACEHOLDER.format(value=value[:40], param=name))
        problem = name_text_problem(value)
        if problem is not None:
            raise PlatformIdError(ERR_PLATFORM_ID.format(param=name, problem=problem))
        if len(value) > PLATFORM_ID_MAX:
            raise PlatformIdError(ERR_PLATFORM_ID_LONG.format(param=name, limit=PLATFORM_ID_MAX))
        return value

    return PlatformIds(participant=read(study.participant_param), study=read(study.study_param),
                       session=read(study.session_param))


def visitor_key_hash(*, value: str) -> str:
    """A keyed hash (HMAC-SHA-256 with the site's secret) of a browser key or
    participant id, so that neither is stored as such; "" for a blank value."""
    if not value:
        return ""
    return hmac.new(settings.SECRET_KEY.encode(), f"visitor:{value}".encode(), hashlib.sha256).hexdigest()


@transaction.atomic
def invitation_accept(
    *, invitation: Invitation, user: AbstractBaseUser | None, platform: PlatformIds | None = None,
    browser_key: str = "",
) -> tuple[Participation, AbstractBaseUser, bool]:
    """Join the invitation's study.

    ``user`` is the visitor's account if they have one in this browser (logged
    in, or recognised by the resume cookie), else None: then a pseudonymous
    evaluator ("evaluator-7f3a", no email, no usable password) is created.
    Joining twice returns the existing participation.

    ``platform`` carries a crowd platform's ids from the join URL. A visitor
    whose participant id already has a participation in the study is that
    participant coming back (another browser, a lost cookie); whether they
    continue it depends on the study's ``resume_by_participant_id``
    (:class:`~annotate.models.ResumeByParticipantId`): "on" in any browser,
    "same_browser" only when ``browser_key`` (the browser's long-lived key) is
    the one they joined with, "off" never (the browser already signed in as
    them continues in every mode). The study and session ids of a new
    participation are stored with it; a returning participant's latest
    session id replaces the stored one.

    Concurrent joins with the same new participant id (a double click, two
    tabs) end with one participation: the join that loses the race on the
    unique constraint continues the winner's participation as a returning
    participant would.

    Returns
    -------
    (participation, user, created_user)

    Raises
    ------
    InvitationRevokedError, StudyClosedError
    ParticipantIdInUseError
        A known participant id the study's setting does not let continue here. Nothing is written.
    """
    invitation = Invitation.objects.select_related("study").get(pk=invitation.pk)
    if invitation.revoked_at is not None:
        raise InvitationRevokedError(ERR_INVITATION_REVOKED)
    study = invitation.study
    platform = platform or PlatformIds()
    if platform.participant:
        known = (Participation.objects.select_for_update().select_related("user")
                 .filter(study=study, platform_participant_id=platform.participant).first())
        if known is not None:
            resumed = _resume_known(known=known, user=user, platform=platform, browser_key=browser_key)
            if resumed is not None:
                return resumed
            platform = dataclasses.replace(platform, participant="")  # the id is someone else's: keep it with them
    if user is not None:
        existing = Participation.objects.filter(study=study, user=user).first()
        if existing is not None:
            return existing, user, False
    if study.status != StudyStatus.OPEN:
        raise StudyClosedError(ERR_STUDY_CLOSED.format(name=study.name))
    created_user = user is None
    try:
        with transaction.atomic():
            joined = user if user is not None else _create_pseudonymous_evaluator()
            participation, _ = Participation.objects.get_or_create(
                study=study, user=joined, defaults={
                    "invitation": invitation, "platform_participant_id": platform.participant,
                    "platform_study_id": platform.study, "platform_session_id": platform.session,
                    "browser_key_hash": visitor_key_hash(value=browser_key),
                }
            )
    except IntegrityError:
        # Another request joined with the same new participant id a moment ago: continue theirs.
        known = (Participation.objects.select_related("user")
                 .filter(study=study, platform_participant_id=platform.participant).first()
                 if platform.participant else None)
        if known is None:
            raise
        resumed = _resume_known(known=known, user=user, platform=platform, browser_key=browser_key, racing=True)
        if resumed is None:
            raise
        return resumed
    return participation, joined, created_user


def participant_id_may_continue(
    *, known: Participation, user: AbstractBaseUser | None, pid: str, browser_key: str, racing: bool = False,
) -> bool:
    """Whether a visitor whose link carries participant id ``pid`` continues
    ``known`` (the participation that id joined with). Reads only.

    Parameters
    ----------
    known : Participation
        The study's participation with ``platform_participant_id == pid``, with its user and study.
    user : user or None
        The account signed in (or recognised) on the visitor's browser, if any.
    pid : str
        The participant id, for the refusal's message.
    browser_key : str
        The browser's long-lived random key ("" if it has none).
    racing : bool, default False
        ``known`` was created a moment ago by the visitor's own concurrent join.

    Returns
    -------
    bool
        True: the visitor is that participant and continues. False: the id
        belongs to an account other than the signed-in one (or to one that
        is no longer an active evaluator); the visitor joins without it.

    Raises
    ------
    ParticipantIdInUseError
        Nobody is signed in and the study's ``resume_by_participant_id``
        does not let the id continue from this browser.
    """
    if not (known.user.is_active and user_is_evaluator(user=known.user)):
        return False
    if user is not None:
        return known.user_id == user.pk
    mode = known.study.resume_by_participant_id
    same_browser = bool(browser_key) and known.browser_key_hash == visitor_key_hash(value=browser_key)
    if mode == ResumeByParticipantId.OFF and not (racing and same_browser):
        raise ParticipantIdInUseError(ERR_PARTICIPANT_ID_IN_USE.format(
            pid=pid, where="in the browser already signed in as it"))
    if mode == ResumeByParticipantId.SAME_BROWSER and not same_browser:
        raise ParticipantIdInUseError(ERR_PARTICIPANT_ID_IN_USE.format(
            pid=pid, where="in the browser it joined with"))
    return True


def _resume_known(
    *, known: Participation, user: AbstractBaseUser | None, platform: PlatformIds, browser_key: str,
    racing: bool = False,
) -> tuple[Participation, AbstractBaseUser, bool] | None:
    """Continue ``known`` (the participation of the visitor's participant id)
    when the study's resume setting allows it; None when the id belongs to
    another account (the caller joins without it). ``racing``: the visitor's
    own concurrent join created ``known`` a moment ago (same browser key)."""
    if not participant_id_may_continue(known=known, user=user, pid=platform.participant, browser_key=browser_key,
                                       racing=racing):
        return None
    if platform.session and platform.session != known.platform_session_id:
        known.platform_session_id = platform.session
        known.save(update_fields=["platform_session_id"])
    return known, known.user, user is None


def username_check(*, username: str) -> str:
    """``username`` as the account will hold it: stripped, NFKC-normalised (as
    Django's own forms do), checked with Django's ``UnicodeUsernameValidator``
    (letters, digits and ``@.+-_``) and the username field's length.

    Raises
    ------
    ValueError
        ``ERR_USERNAME_EMPTY`` or ``ERR_USERNAME_INVALID`` (the name quoted, cut
        to 60 characters).
    """
    User = get_user_model()
    name = User.normalize_username((username or "").strip())
    if not name:
        raise ValueError(ERR_USERNAME_EMPTY)
    limit = User._meta.get_field(User.USERNAME_FIELD).max_length
    try:
        UnicodeUsernameValidator()(name)
        valid = len(name) <= limit
    except ValidationError:
        valid = False
    if not valid:
        shown = name if len(name) <= 60 else name[:60] + "…"
        raise ValueError(ERR_USERNAME_INVALID.format(username=shown, limit=limit))
    return name


def evaluator_create(*, username: str, study: Study) -> tuple[AbstractBaseUser, str]:
    """A named evaluator with a fresh random password, joined to ``study``.

    Returns
    -------
    (user, password)
        The password is not stored anywhere else; show it once.

    Raises
    ------
    ValueError
        A username that is empty, not allowed (:func:`username_check`) or taken.
    """
    username = username_check(username=username)
    User = get_user_model()
    password = secrets.token_urlsafe(12)
    with transaction.atomic():
        if User.objects.filter(username=username).exists():
            raise ValueError(ERR_USERNAME_TAKEN.format(username=username))
        user = User.objects.create_user(username=username, password=password)
        user.groups.add(_group(EVALUATOR_GROUP))
        Participation.objects.create(study=study, user=user)
    return user, password


@transaction.atomic
def participation_onboard(
    *,
    participation: Participation,
    field_of_study: str = "",
    education_level: str = "",
    qualified_subjects: Sequence[Subject] = (),
) -> Participation:
    """Record the evaluator's background (appendix H.3, table 13 categories) and
    the subjects they feel qualified to judge (recorded only: every pair is
    still shown, and the evaluator may skip).

    Only the study's ``onboarding_questions`` are asked: an asked field must
    hold one of its choices ("prefer not to say" is one), a field not asked
    must be empty (nothing is stored for it)."""
    asked = set(participation.study.onboarding_questions)
    if field_of_study not in FieldOfStudy.values and (OnboardingQuestion.FIELD_OF_STUDY in asked or field_of_study):
        raise ValueError(ERR_FIELD.format(choices=FieldOfStudy.values, value=field_of_study))
    if education_level not in EducationLevel.values and (
            OnboardingQuestion.EDUCATION_LEVEL in asked or education_level):
        raise ValueError(ERR_LEVEL.format(choices=EducationLevel.values, value=education_level))
    if qualified_subjects and OnboardingQuestion.QUALIFIED_SUBJECTS not in asked:
        raise ValueError(ERR_NOT_ASKED.format(name=OnboardingQuestion.QUALIFIED_SUBJECTS.value))
    allowed = set(participation.study.subjects.values_list("pk", flat=True))
    outside = sorted(s.name for s in qualified_subjects if s.pk not in allowed)
    if outside:
        raise ValueError(ERR_QUALIFIED.format(names=outside))
    participation.field_of_study = field_of_study
    participation.education_level = education_level
    if participation.onboarded_at is None:
        participation.onboarded_at = timezone.now()
    participation.save(update_fields=["field_of_study", "education_level", "onboarded_at"])
    participation.qualified_subjects.set(qualified_subjects)
    return participation


def participation_give_consent(*, participation: Participation) -> Participation:
    """Record when the evaluator agreed to the study's consent text (kept from
    the first time: agreeing again, from a second tab, changes nothing)."""
    if participation.consented_at is None:
        participation.consented_at = timezone.now()
        participation.save(update_fields=["consented_at"])
    return participation


def consent_decline(
    *, invitation: Invitation, browser_key: str = "", participant_id: str = ""
) -> tuple[ConsentDecline, bool]:
    """Count one visitor who declined the consent text of ``invitation``'s
    study, once per browser and once per participant id.

    Nothing about the visitor is stored as such: no account, no
    participation, no address or browser details; only the study, the link,
    the time, and keyed hashes (:func:`visitor_key_hash`) of the browser's
    random key and of the crowd participant id, which make a second decline
    from the same browser, or with the same participant id, count nothing.

    Returns
    -------
    (decline, created)
        ``created`` is False when this browser or participant id had declined
        before (that decline is returned; nothing is written).
    """
    browser = visitor_key_hash(value=browser_key)
    participant = visitor_key_hash(value=participant_id)
    keys = Q(pk__in=[])
    if browser:
        keys |= Q(browser_key=browser)
    if participant:
        keys |= Q(participant_key=participant)
    earlier = ConsentDecline.objects.filter(keys, study_id=invitation.study_id).first()
    if earlier is not None:
        return earlier, False
    try:
        with transaction.atomic():
            return ConsentDecline.objects.create(study_id=invitation.study_id, invitation=invitation,
                                                 browser_key=browser, participant_key=participant), True
    except IntegrityError:  # the same browser or id declined a moment ago, in another request
        earlier = ConsentDecline.objects.filter(keys, study_id=invitation.study_id).first()
        if earlier is None:
            raise
        return earlier, False


def participation_accept_guidelines(*, participation: Participation) -> Participation:
    if participation.guidelines_accepted_at is None:
        participation.guidelines_accepted_at = timezone.now()
        participation.save(update_fields=["guidelines_accepted_at"])
    return participation
