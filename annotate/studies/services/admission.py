"""Whom an invitation link admits, and how: returning participants come first.

The rules, in this order (:func:`invitation_admission`):

1. A visitor who already takes part in the study is recognised before the
   study's state is looked at, by any of

   * the account signed in on this browser (:data:`SIGNED_IN`; this also
     covers named evaluators, who log in);
   * the resume cookie of the browser that joined (:data:`REMEMBERED`);
   * the crowd participant id in the link, when the study's
     ``resume_by_participant_id`` lets that id continue from this browser
     (:data:`PARTICIPANT_ID`; any browser when it is "on").

   They continue their own participation whatever the study's state. Where
   it goes from there is :func:`annotate.studies.selectors.studies.participation_next_step`:
   in a study a stopping rule filled, whoever has a pair on screen finishes
   that pair and nothing more, then sees the done page (with the completion
   code when earned); in a closed study, whoever had finished sees the done
   page and anyone else the closed page with their progress.
2. A participant id that joined the study but may not continue from this
   browser is refused (:data:`REFUSED`), the message saying where it
   continues: that person is never told the study has nothing for them.
3. Anyone else is a newcomer: a study that is not open says it is closed
   (:data:`CLOSED`), a study a stopping rule filled says it is full
   (:data:`FULL`), an open one shows its consent text (:data:`NEWCOMER`).

Nothing here writes.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from annotate.models import Invitation, Participation, StudyStatus
from annotate.studies.selectors.stopping import study_is_full
from annotate.studies.services.participation import (
    ParticipantIdInUseError,
    PlatformIds,
    participant_id_may_continue,
)

#: Signed in on this browser as a participant of the study: on to their next step.
SIGNED_IN = "signed_in"
#: This browser's resume cookie names a participant of the study: "Continue as ...".
REMEMBERED = "remembered"
#: The link's participant id has a participation that may continue here: consent again, then continue it.
PARTICIPANT_ID = "participant_id"
#: The link's participant id has a participation that may not continue from this browser.
REFUSED = "refused"
#: A newcomer to a study that is not open.
CLOSED = "closed"
#: A newcomer to a study a stopping rule filled.
FULL = "full"
#: A newcomer to an open study: the consent text.
NEWCOMER = "newcomer"
#: The verdicts of a participant coming back.
RETURNING = (SIGNED_IN, REMEMBERED, PARTICIPANT_ID)


@dataclass(frozen=True)
class Admission:
    """What the invitation link does for a visitor.

    ``verdict`` is one of the module's constants; ``participation`` is the
    visitor's own (None for :data:`REFUSED` and newcomers); ``message`` the
    refusal's sentence (:data:`REFUSED` only)."""

    verdict: str
    participation: Participation | None = None
    message: str = ""

    @property
    def returning(self) -> bool:
        return self.verdict in RETURNING


def invitation_admission(
    *, invitation: Invitation, user: AbstractBaseUser | None, remembered: AbstractBaseUser | None,
    platform: PlatformIds, browser_key: str,
) -> Admission:
    """Decide what ``invitation``'s link does for a visitor (the rules of the module docstring).

    Parameters
    ----------
    invitation : Invitation
        An active invitation, with its study.
    user : user or None
        The account signed in on the visitor's browser, if any.
    remembered : user or None
        The evaluator the browser's resume cookie names for this study, if
        any (read only while nobody is signed in).
    platform : PlatformIds
        The crowd platform's ids in the link.
    browser_key : str
        The browser's long-lived random key ("" if it has none).

    Returns
    -------
    Admission
    """
    study = invitation.study
    for account, verdict in ((user, SIGNED_IN), (remembered, REMEMBERED)):
        if account is not None:
            mine = Participation.objects.filter(study=study, user=account).first()
            if mine is not None:
                return Admission(verdict, mine)
    if platform.participant:
        known = (Participation.objects.select_related("user", "study")
                 .filter(study=study, platform_participant_id=platform.participant).first())
        if known is not None:
            try:
                if participant_id_may_continue(known=known, user=user, pid=platform.participant,
                                               browser_key=browser_key):
                    return Admission(PARTICIPANT_ID, known)
            except ParticipantIdInUseError as error:
                return Admission(REFUSED, message=str(error))
    if study.status != StudyStatus.OPEN:
        return Admission(CLOSED)
    if study_is_full(study_id=study.pk):
        return Admission(FULL)
    return Admission(NEWCOMER)
