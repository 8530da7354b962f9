"""Reading and filling the judging form in view tests: the form carries the
evaluator's opaque tokens (annotate.studies.selectors.judging_tokens), which these
helpers turn into database ids and back."""
from __future__ import annotations

import re

from django.test import Client

from annotate.models import Participation
from annotate.studies.selectors.judging_tokens import PAIR, QUESTION, judging_token, judging_token_value

FORM_RE = re.compile(r'name="pair" value="([0-9a-f]{16})".*?name="left" value="([0-9a-f]{16})"', re.S)


def participation_of(client: Client, study, pair_id: int | None = None) -> Participation:
    """The participation in ``study`` of the evaluator signed in on ``client``;
    with nobody signed in (a session that expired), the one evaluator who has
    ``pair_id`` on screen."""
    user_id = client.session.get("_auth_user_id")
    if user_id is not None:
        return Participation.objects.get(study=study, user_id=int(user_id))
    return Participation.objects.get(study=study, assignments__pair_id=pair_id, assignments__pair__judgments=None)


def token_of(participation: Participation, pair_id: int) -> str:
    """The pair token ``participation``'s judging form and URLs carry for ``pair_id``."""
    return judging_token(participation=participation, value=pair_id, kind=PAIR)


def form_ids(client: Client, study, html: str) -> tuple[int, int]:
    """(pair id, left question id) of the judging page ``html`` shown to ``client``'s evaluator."""
    pair_token, left_token = FORM_RE.search(html).groups()
    participation = participation_of(client, study)
    return (judging_token_value(participation=participation, token=pair_token, kind=PAIR),
            judging_token_value(participation=participation, token=left_token, kind=QUESTION))


def form_data(client: Client, study, pair_id: int, left_id: int, choice: str, **extra) -> dict:
    """The POST of an answer on (pair id, left question id), as the page's form sends it."""
    participation = participation_of(client, study, pair_id if isinstance(pair_id, int) else None)

    def encode(value: object, kind: str) -> object:  # a value that is no id is sent as it is
        return judging_token(participation=participation, value=value, kind=kind) if isinstance(value, int) else value

    return {"pair": encode(pair_id, PAIR), "left": encode(left_id, QUESTION), "choice": choice, **extra}
