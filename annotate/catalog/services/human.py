"""Response sets of people's answers: the ``is_human`` flag.

A human response set holds one "model" per person. It is never scored as a
set of LLMs (:func:`annotate.runs.services.scoring.scoring_run_create` refuses
it), so its persons never reach a leaderboard; its difficulty is a human
label of the human-label analysis (``label="human:<id>"``).
"""
from __future__ import annotations

from django.db import transaction

from annotate.models import ResponseSet, RunStatus, ScoringRun

ERR_NOT_SAVED = "response_set must be a saved ResponseSet; got {value!r}"
ERR_HAS_RUNS = ("response set {value} has {n} scoring run(s): its persons are already scored as models; "
                "delete the runs before marking it as human")


@transaction.atomic
def response_set_mark_human(*, response_set: ResponseSet, is_human: bool = True) -> ResponseSet:
    """Mark ``response_set`` as people's answers (or clear the mark).

    Raises
    ------
    ValueError
        ``ERR_NOT_SAVED``; ``ERR_HAS_RUNS`` when marking a set that already
        has scoring runs (nothing is changed).
    """
    if not isinstance(response_set, ResponseSet) or response_set.pk is None:
        raise ValueError(ERR_NOT_SAVED.format(value=response_set))
    if is_human:
        n = ScoringRun.objects.filter(response_set=response_set).exclude(status=RunStatus.FAILED).count()
        if n:
            raise ValueError(ERR_HAS_RUNS.format(value=response_set, n=n))
    ResponseSet.objects.filter(pk=response_set.pk).update(is_human=is_human)
    response_set.is_human = is_human
    return response_set
