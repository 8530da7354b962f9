"""How a participant comes back to a study, said from the rules that decide it.

One sentence for the consent and guidelines pages, read from the study's
``resume_by_participant_id`` as :func:`annotate.studies.services.participation.participant_id_may_continue`
applies it, and from how the participant joined: with a crowd platform's
participant id in the link, by a plain invitation link (the browser's resume
cookie), or as a named evaluator who signs in. Reads nothing from the database.
"""
from __future__ import annotations

from annotate.models import ResumeByParticipantId, Study

RESUME_SIGN_IN = ("You can stop at any time and come back later: sign in with your username and password, and you "
                  "continue where you left off.")
RESUME_ANY_BROWSER = ("You can stop at any time and come back later: open the study again from the platform (the "
                      "link with your participant id), in this or any other browser, and you continue where you left "
                      "off.")
RESUME_SAME_BROWSER = ("You can stop at any time and come back later: open the study again from the platform in this "
                       "browser, and you continue where you left off. In another browser your participant id is "
                       "refused.")
RESUME_ID_OFF = ("You can stop at any time and come back later: open the study link again in this browser, and you "
                 "continue where you left off. In another browser your participant id is refused.")
RESUME_THIS_BROWSER = ("You can stop at any time and come back later: open the invitation link again in this browser, "
                       "and you continue where you left off. In another browser, or after signing out, the link "
                       "starts afresh under a new pseudonym.")


def resume_note(*, study: Study, participant_id: str, by_invitation: bool = True) -> str:
    """The sentence that tells a participant of ``study`` how they come back.

    Parameters
    ----------
    study : Study
        Its ``resume_by_participant_id`` decides what a participant id does.
    participant_id : str
        The crowd platform's participant id they joined (or are joining) with; "" for none.
    by_invitation : bool, default True
        False for a named evaluator, who has a password and signs in.

    Returns
    -------
    str
    """
    if not by_invitation:
        return RESUME_SIGN_IN
    if not participant_id:
        return RESUME_THIS_BROWSER
    mode = study.resume_by_participant_id
    if mode == ResumeByParticipantId.ON:
        return RESUME_ANY_BROWSER
    if mode == ResumeByParticipantId.SAME_BROWSER:
        return RESUME_SAME_BROWSER
    return RESUME_ID_OFF


__all__ = ["resume_note"]
