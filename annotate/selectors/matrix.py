"""Read a response set out of the database as the response matrix of :mod:`scoring`.

This is where database rows become numbers: everything in :mod:`scoring`
takes the ``(n_questions, n_models)`` float64 matrix built here.
"""
from __future__ import annotations

import reprlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from django.conf import settings
from django.db import connection

from annotate.models import Question, Response, ResponseSet

ERR_RESPONSE_SET = "response_set must be a saved ResponseSet; got {value!r}"
ERR_IDS = "{name} must be a sequence of integer ids or None; got {value}"
ERR_EMPTY_IDS = "{name} must name at least one id (use None for all); got an empty sequence"
ERR_TOO_MANY_IDS = "{name} lists {count:,} ids; the limit is {limit:,} (setting MAX_ID_LIST_LENGTH)"
ERR_NO_RESPONSES = (
    "response set {response_set!r} has no response for the chosen models and datasets "
    "(model_ids={model_ids}, dataset_ids={dataset_ids})"
)
#: Ids a message quotes before saying how many more there are.
IDS_SHOWN = 10

#: ``question_subjects`` entry of a question without a subject.
NO_SUBJECT = -1


@dataclass(frozen=True)
class ResponseMatrix:
    """A response set as a dense matrix, with the ids of its rows and columns.

    All arrays are read-only.

    Attributes
    ----------
    R : ndarray of float64, shape (n_questions, n_models)
        ``R[i, j]`` is the credit in [0, 1] model ``model_ids[j]`` got on
        question ``question_ids[i]``; NaN = not observed (no Response row).
    question_ids : ndarray of int64, shape (n_questions,)
        ``Question.id`` of each row, strictly ascending: every question with
        at least one response in the set (within the filters).
    model_ids : ndarray of int64, shape (n_models,)
        ``LanguageModel.id`` of each column, strictly ascending: every model
        with at least one response in the set (within the filters).
    question_datasets : ndarray of int64, shape (n_questions,)
        ``Dataset.id`` of each row's question.
    question_subjects : ndarray of int64, shape (n_questions,)
        ``Subject.id`` of each row's question; ``NO_SUBJECT`` (-1) when it
        has none.
    """

    R: np.ndarray
    question_ids: np.ndarray
    model_ids: np.ndarray
    question_datasets: np.ndarray
    question_subjects: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.R.shape


def ids_shown(ids: Sequence[int] | None) -> str:
    """Ids for a message: all of them up to ``IDS_SHOWN``, else the first
    ``IDS_SHOWN`` and how many more ("[1, 2, ...] and 9,990 more")."""
    if ids is None or len(ids) <= IDS_SHOWN:
        return repr(None if ids is None else list(ids))
    return f"{list(ids[:IDS_SHOWN])} and {len(ids) - IDS_SHOWN:,} more"


def check_ids(value: object, *, name: str) -> list[int] | None:
    """``value`` as sorted distinct ints, or None for None (= all).

    Raises
    ------
    ValueError
        If it is not a sequence of integers (``ERR_IDS``, the value quoted cut
        short by ``reprlib``: at most six items), is empty (``ERR_EMPTY_IDS``) or longer than
        the ``MAX_ID_LIST_LENGTH`` setting (``ERR_TOO_MANY_IDS``, with the count
        and the limit; the ids are not echoed). The limit keeps every
        ``id IN (...)`` query under SQLite's bound on SQL variables.
    """
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise ValueError(ERR_IDS.format(name=name, value=reprlib.repr(value)))
    limit = settings.MAX_ID_LIST_LENGTH
    if len(value) > limit:
        raise ValueError(ERR_TOO_MANY_IDS.format(name=name, count=len(value), limit=limit))
    ids = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | np.integer):
            raise ValueError(ERR_IDS.format(name=name, value=reprlib.repr(value)))
        ids.append(int(item))
    if not ids:
        raise ValueError(ERR_EMPTY_IDS.format(name=name))
    return sorted(set(ids))


def response_matrix(
    *,
    response_set: ResponseSet,
    model_ids: Sequence[int] | None = None,
    dataset_ids: Sequence[int] | None = None,
) -> ResponseMatrix:
    """Build the response matrix of a response set.

    Parameters
    ----------
    response_set : ResponseSet
        A saved response set.
    model_ids : sequence of int, optional
        Keep only these ``LanguageModel`` ids (default: every model). Ids
        with no response in the set (or in the chosen datasets) do not appear
        in the result.
    dataset_ids : sequence of int, optional
        Keep only questions of these ``Dataset`` ids (default: every dataset).

    Returns
    -------
    ResponseMatrix
        ``R`` of shape ``(n_questions, n_models)``, float64, NaN = not
        observed; rows in ascending ``Question.id``, columns in ascending
        ``LanguageModel.id``, both restricted to ids with at least one
        response after filtering.

    Raises
    ------
    ValueError
        If ``response_set`` is not a saved ResponseSet, ``model_ids`` or
        ``dataset_ids`` is not a non-empty sequence of integers, or no
        response is left after filtering.

    Notes
    -----
    The responses come back in one query (question id, model id, credit),
    streamed from the database cursor into numpy: about a second for a
    million responses on SQLite. Row and column indices are ``np.unique`` inverses (a
    binary search into the sorted ids). A second, small query reads each
    question's dataset and subject.

    References
    ----------
    EIP paper, section 2.2 (the binary matrix ``A``) and section 2.4
    (partial credit ``A_c``); a missing cell is neither a success nor a
    failure.

    Examples
    --------
    >>> m = response_matrix(response_set=rs, model_ids=[3, 5])  # doctest: +SKIP
    >>> m.R.shape == (len(m.question_ids), len(m.model_ids))  # doctest: +SKIP
    True
    """
    if not isinstance(response_set, ResponseSet) or response_set.pk is None:
        raise ValueError(ERR_RESPONSE_SET.format(value=response_set))
    models = check_ids(model_ids, name="model_ids")
    datasets = check_ids(dataset_ids, name="dataset_ids")

    responses = Response.objects.filter(response_set_id=response_set.pk)
    if models is not None:
        responses = responses.filter(model_id__in=models)
    if datasets is not None:
        responses = responses.filter(question__dataset_id__in=datasets)
    rows = _fetch_float64(responses.values_list("question_id", "model_id", "credit"))
    if rows.shape[0] == 0:
        raise ValueError(ERR_NO_RESPONSES.format(
            response_set=str(response_set), model_ids=ids_shown(models), dataset_ids=ids_shown(datasets)))
    question_of = rows[:, 0].astype(np.int64)
    model_of = rows[:, 1].astype(np.int64)
    question_ids, row_index = np.unique(question_of, return_inverse=True)
    column_ids, column_index = np.unique(model_of, return_inverse=True)
    R = np.full((question_ids.size, column_ids.size), np.nan)
    R[row_index, column_index] = rows[:, 2]

    attributes = np.array(
        [
            (pk, dataset, NO_SUBJECT if subject is None else subject)
            for pk, dataset, subject in _fetch_rows(
                Question.objects.filter(pk__in=responses.values("question_id"))
                .order_by("pk")
                .values_list("pk", "dataset_id", "subject_id")
            )
        ],
        dtype=np.int64,
    )
    position = np.searchsorted(attributes[:, 0], question_ids)
    arrays = (R, question_ids, column_ids, attributes[position, 1], attributes[position, 2])
    for array in arrays:  # read-only views, not copies: R can be large
        array.setflags(write=False)
    return ResponseMatrix(*arrays)


def _fetch_float64(queryset) -> np.ndarray:
    """A ``values_list`` queryset of numbers as a float64 array (rows, columns),
    streamed from the raw cursor into numpy (ids are exact below 2**53).
    Skips Django's per-row conversion and the list of tuples."""
    sql, params = queryset.query.sql_with_params()
    n_columns = len(queryset.query.values_select)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        flat = np.fromiter(chain.from_iterable(cursor), dtype=np.float64)
    return flat.reshape(-1, n_columns)


def _fetch_rows(queryset) -> list[tuple]:
    """Run a ``values_list`` queryset on the raw cursor. Skips Django's per-row
    conversion, which costs seconds per million rows."""
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
