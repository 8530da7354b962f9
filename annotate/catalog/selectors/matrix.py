"""Read a response set as the response matrix of :mod:`scoring`.

This is where stored responses become numbers: the cells come from the set's
matrix store (:mod:`annotate.catalog.matrix_store`), the ids of its rows and
columns from the membership rows (``ResponseSetQuestion``,
``ResponseSetModel``). Everything in :mod:`scoring` takes the
``(n_questions, n_models)`` float64 matrix of :func:`response_matrix`;
:func:`response_matrix_compact` gives the same matrix as uint8 (or float32
with NaN) for EIP on large sets.
"""
from __future__ import annotations

import reprlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

from annotate.models import ResponseSet, ResponseSetModel, ResponseSetQuestion
from scoring.fraction import FractionMatrix

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
        question ``question_ids[i]``; NaN = not observed.
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
    store : Path or None
        The set's matrix store (:mod:`annotate.catalog.matrix_store`).
    store_rows, store_columns : ndarray of int64 or None
        The store row of each row and the store column of each column (what
        a reader of the store, such as EIP on Dask, selects to get ``R``).
    """

    R: np.ndarray
    question_ids: np.ndarray
    model_ids: np.ndarray
    question_datasets: np.ndarray
    question_subjects: np.ndarray
    store: Path | None = None
    store_rows: np.ndarray | None = None
    store_columns: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.R.shape


@dataclass(frozen=True)
class CompactMatrix:
    """:class:`ResponseMatrix` without the float64 copy (see :func:`response_matrix_compact`).

    Attributes
    ----------
    R : ndarray of uint8 or float32, or FractionMatrix; shape (n_questions, n_models)
        uint8 0/1 when the selection is binary and fully observed; a
        :class:`scoring.FractionMatrix` when the set's credits are fractions
        k/n (n <= 255); otherwise float32 credit with NaN = not observed
        (float64 when the set's partial credits are not all exact in
        float32). ``scoring.eip`` takes any of them and streams it in blocks.
    question_ids, model_ids, question_datasets, question_subjects : ndarray of int64
        As in :class:`ResponseMatrix`.
    store, store_rows, store_columns
        As in :class:`ResponseMatrix`.
    """

    R: np.ndarray | FractionMatrix
    question_ids: np.ndarray
    model_ids: np.ndarray
    question_datasets: np.ndarray
    question_subjects: np.ndarray
    store: Path | None = None
    store_rows: np.ndarray | None = None
    store_columns: np.ndarray | None = None

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
    FileNotFoundError
        If the set's matrix store is missing (see
        :mod:`annotate.catalog.matrix_store`).

    Notes
    -----
    Two queries read the membership rows (row index, question id, dataset,
    subject; column index, model id); the selected rows and columns are then
    read from the matrix store (whole when nothing is filtered and the
    stored order is already ascending ids, which is the case for a file whose
    questions were new) and converted to float64 once. For a large binary
    set, :func:`response_matrix_compact` avoids that 8-bytes-per-cell copy.

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
    selection = _selection(response_set, model_ids, dataset_ids)
    stored = selection.read()
    R = stored.credit.astype(np.float64)
    if stored.denominator > 1:  # numerators k of k/n: k / n is the credit, bit for bit
        R /= stored.denominator
    if stored.observed is not None:
        R[~stored.observed] = np.nan
    return ResponseMatrix(*selection.finish(R, stored.observed))


def response_matrix_compact(
    *,
    response_set: ResponseSet,
    model_ids: Sequence[int] | None = None,
    dataset_ids: Sequence[int] | None = None,
) -> CompactMatrix:
    """The matrix of :func:`response_matrix` in its compact form (no float64 copy).

    Same parameters, ids, order and errors as :func:`response_matrix`; ``R``
    is the stored uint8 matrix when the selection is binary and fully
    observed (1 byte per cell: 2 GB for 1,000,000 x 2,000), otherwise float32
    (float64 when the stored credit is float64) with NaN = not observed (an integer matrix cannot say "missing"; see
    ``scoring.eip``, which treats NaN as not observed and streams either dtype
    in blocks). A set of fractions k/n (see :mod:`annotate.catalog.matrix_store`)
    gives a :class:`scoring.FractionMatrix`: uint8 numerators and the
    observed mask bit-packed (1 byte and 1 bit a cell), read by EIP and the
    accuracy baselines a block of rows at a time. ``np.asarray(compact.R,
    dtype=float)`` (``compact.R.to_dense()`` for fractions) equals
    ``response_matrix(...).R`` cell for cell.
    """
    selection = _selection(response_set, model_ids, dataset_ids)
    if selection.holds_fractions():
        return CompactMatrix(*selection.finish_fraction(selection.read_fraction()))
    stored = selection.read()
    R = stored.credit
    if stored.observed is not None:
        R = R.astype(np.result_type(R.dtype, np.float32))
        R[~stored.observed] = np.nan
    return CompactMatrix(*selection.finish(R, stored.observed))


@dataclass
class _Selection:
    """Which stored rows and columns a matrix reads, in ascending-id order."""

    path: Path
    rows: np.ndarray  # store row of each result row
    columns: np.ndarray
    question_ids: np.ndarray
    model_ids: np.ndarray
    datasets: np.ndarray
    subjects: np.ndarray
    n_rows: int
    n_columns: int
    message: str

    def read(self):
        from annotate.catalog.matrix_store import read_matrix
        rows = None if _is_identity(self.rows, self.n_rows) else self.rows
        columns = None if _is_identity(self.columns, self.n_columns) else self.columns
        return read_matrix(self.path, rows=rows, columns=columns)

    def holds_fractions(self) -> bool:
        from annotate.catalog.matrix_store import store_info
        return int(store_info(self.path).get("credit_denominator", 1)) > 1

    def read_fraction(self) -> FractionMatrix:
        from annotate.catalog.matrix_store import read_fraction
        rows = None if _is_identity(self.rows, self.n_rows) else self.rows
        columns = None if _is_identity(self.columns, self.n_columns) else self.columns
        return read_fraction(self.path, rows=rows, columns=columns)

    def finish_fraction(self, R: FractionMatrix) -> tuple:
        """:meth:`finish` for a fraction matrix: the unobserved rows and columns are found
        from the packed mask, a block of rows at a time."""
        question_ids, model_ids, datasets, subjects = self.question_ids, self.model_ids, self.datasets, self.subjects
        rows, columns = self.rows, self.columns
        if not R.fully_observed:
            keep_rows, keep_columns = R.row_has_observed(), R.column_counts() > 0
            if not keep_rows.all() or not keep_columns.all():
                R = R.take(rows=None if keep_rows.all() else np.flatnonzero(keep_rows),
                           columns=None if keep_columns.all() else np.flatnonzero(keep_columns))
                question_ids, datasets, subjects = question_ids[keep_rows], datasets[keep_rows], subjects[keep_rows]
                model_ids, rows, columns = model_ids[keep_columns], rows[keep_rows], columns[keep_columns]
        if R.size == 0:
            raise ValueError(self.message)
        arrays = (R.numerators, question_ids, model_ids, datasets, subjects, rows, columns)
        if R.observed_bits is not None:
            arrays = (*arrays, R.observed_bits)
        for array in arrays:
            array.setflags(write=False)
        return (R, question_ids, model_ids, datasets, subjects, self.path, rows, columns)

    def finish(self, R: np.ndarray, observed: np.ndarray | None) -> tuple:
        """The result's fields, rows and columns without an observed cell dropped, arrays read-only."""
        question_ids, model_ids, datasets, subjects = self.question_ids, self.model_ids, self.datasets, self.subjects
        rows, columns = self.rows, self.columns
        if observed is not None:
            keep_rows, keep_columns = observed.any(axis=1), observed.any(axis=0)
            if not keep_rows.all() or not keep_columns.all():
                R = R[np.ix_(keep_rows, keep_columns)]
                question_ids, datasets, subjects = question_ids[keep_rows], datasets[keep_rows], subjects[keep_rows]
                model_ids, rows, columns = model_ids[keep_columns], rows[keep_rows], columns[keep_columns]
        if R.size == 0:
            raise ValueError(self.message)
        arrays = (R, question_ids, model_ids, datasets, subjects)
        for array in (*arrays, rows, columns):  # read-only views, not copies: R can be large
            array.setflags(write=False)
        return (*arrays, self.path, rows, columns)


def _is_identity(index: np.ndarray, n: int) -> bool:
    return index.size == n and bool(np.array_equal(index, np.arange(n)))


def _selection(response_set: ResponseSet, model_ids: Sequence[int] | None,
               dataset_ids: Sequence[int] | None) -> _Selection:
    from annotate.catalog.matrix_store import store_path
    if not isinstance(response_set, ResponseSet) or response_set.pk is None:
        raise ValueError(ERR_RESPONSE_SET.format(value=response_set))
    models = check_ids(model_ids, name="model_ids")
    datasets = check_ids(dataset_ids, name="dataset_ids")
    message = ERR_NO_RESPONSES.format(
        response_set=str(response_set), model_ids=ids_shown(models), dataset_ids=ids_shown(datasets))

    question_rows = ResponseSetQuestion.objects.filter(response_set_id=response_set.pk)
    n_rows = question_rows.count() if datasets is not None else None
    if datasets is not None:
        question_rows = question_rows.filter(question__dataset_id__in=datasets)
    table = np.array(
        [(q, row, d, NO_SUBJECT if s is None else s) for row, q, d, s in _fetch_rows(
            question_rows.order_by("question_id").values_list(
                "row", "question_id", "question__dataset_id", "question__subject_id"))],
        dtype=np.int64,
    ).reshape(-1, 4)
    model_columns = ResponseSetModel.objects.filter(response_set_id=response_set.pk)
    n_columns = model_columns.count() if models is not None else None
    if models is not None:
        model_columns = model_columns.filter(model_id__in=models)
    columns = np.array(_fetch_rows(model_columns.order_by("model_id").values_list("column", "model_id")),
                       dtype=np.int64).reshape(-1, 2)
    if table.shape[0] == 0 or columns.shape[0] == 0:
        raise ValueError(message)
    return _Selection(
        path=store_path(response_set.pk), rows=table[:, 1], columns=columns[:, 0],
        question_ids=table[:, 0], model_ids=columns[:, 1], datasets=table[:, 2], subjects=table[:, 3],
        n_rows=table.shape[0] if n_rows is None else n_rows,
        n_columns=columns.shape[0] if n_columns is None else n_columns, message=message,
    )


def _fetch_rows(queryset) -> list[tuple]:
    """Run a ``values_list`` queryset on the raw cursor. Skips Django's per-row
    conversion, which costs seconds per million rows."""
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
