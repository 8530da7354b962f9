"""Delete response sets in the background, whatever their size.

The admin's own delete page lists every object it would remove (a million
responses: a page that never finishes). Instead the admin shows the counts of
:func:`annotate.catalog.selectors.deletion.response_set_delete_counts`, and on
confirmation :func:`response_set_delete_request` enqueues the task
``annotate.catalog.tasks.delete_response_set``, which calls
:func:`response_set_delete`.

Rules
-----
- A response set whose scoring runs a study uses is never deleted (the study
  PROTECTs its run): the request is refused naming the studies, and the task
  checks again before deleting anything.
- The set's question rows (which question is which row of its matrix) are
  deleted in batches of ``DELETE_BATCH`` rows, each batch in its own short
  transaction (SQLite's write lock is never held for long); the set itself,
  its model columns, runs and results go last, in one transaction, and its
  matrix store (:mod:`annotate.catalog.matrix_store`) is removed once that
  transaction commits. A set whose deletion stopped half-way keeps its row
  and can be deleted again.
- Questions and models are catalog rows shared by response sets: they stay.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from annotate.core import DELETE_RESPONSE_SET, task_enqueue, task_pending
from annotate.models import ResponseSet, ResponseSetQuestion, Study

DELETE_BATCH = 50_000
USED_BY_STUDIES = (
    "response set {response_set} cannot be deleted: the studies {studies} use its scoring runs; "
    "delete those studies first"
)
UNKNOWN_SET = "no response set with id {pk}"


@dataclass(frozen=True)
class DeleteOutcome:
    """What :func:`response_set_delete` removed."""

    response_set: str
    n_responses: int


def _refuse_if_used(response_set: ResponseSet) -> None:
    studies = list(Study.objects.filter(scoring_run__response_set=response_set).order_by("name")
                   .values_list("name", flat=True).distinct())
    if studies:
        raise ValueError(USED_BY_STUDIES.format(response_set=response_set, studies=", ".join(studies)))


def response_set_delete_request(*, response_sets: Iterable[ResponseSet]) -> list[int]:
    """Check, then enqueue the background deletion of each response set.

    Parameters
    ----------
    response_sets : iterable of ResponseSet

    Returns
    -------
    list of int
        The ids whose deletion is enqueued (all of them, or none): a set
        whose deletion is already queued or running (a double submit, two
        tabs) is not enqueued a second time.

    Raises
    ------
    ValueError
        ``USED_BY_STUDIES`` for the first set a study uses; nothing is
        enqueued.
    """
    chosen = list(response_sets)
    for response_set in chosen:
        _refuse_if_used(response_set)
    for response_set in chosen:
        if not task_pending(name=DELETE_RESPONSE_SET, first_arg=response_set.pk):
            task_enqueue(DELETE_RESPONSE_SET, response_set.pk)
    return [rs.pk for rs in chosen]


def response_set_delete(*, response_set_id: int, batch: int = DELETE_BATCH) -> DeleteOutcome:
    """Delete one response set, its responses, runs and results (the task's body).

    Parameters
    ----------
    response_set_id : int
    batch : int, default DELETE_BATCH
        Question rows deleted per transaction.

    Returns
    -------
    DeleteOutcome
        The set's label and how many responses (observed cells) it held.

    Raises
    ------
    ValueError
        ``UNKNOWN_SET`` (already deleted) or ``USED_BY_STUDIES`` (a study
        appeared since the request); nothing is deleted then.
    """
    response_set = ResponseSet.objects.filter(pk=response_set_id).first()
    if response_set is None:
        raise ValueError(UNKNOWN_SET.format(pk=response_set_id))
    _refuse_if_used(response_set)
    label, deleted = str(response_set), response_set.n_responses
    rows = ResponseSetQuestion.objects.filter(response_set_id=response_set_id)
    while True:
        with transaction.atomic():
            # the batch's highest id bounds the delete (no list of ids as SQL parameters)
            cut = list(rows.order_by("pk").values_list("pk", flat=True)[batch - 1:batch])
            (rows.filter(pk__lte=cut[0]) if cut else rows).delete()
            if not cut:
                break
    with transaction.atomic():
        response_set = ResponseSet.objects.select_for_update().filter(pk=response_set_id).first()
        if response_set is not None:
            _refuse_if_used(response_set)
            response_set.delete()
    return DeleteOutcome(response_set=label, n_responses=deleted)
