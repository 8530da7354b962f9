"""The question list's sort keys (:class:`~annotate.models.QuestionSortKey`).

Sorting a million-question run by a value inside each row's ``scores`` JSON
made the database read and sort every row for each page (9.5 s). Instead,
when a run's results are stored, each sortable column's order is computed
once here (numpy, both directions) and written as one narrow row per
question and column: the question's position in the list sorted ascending
and descending. A page is then a range of a unique index on
``(run, column, position)``.

The order is the list's: defined values by value, undefined values (absent,
NaN or infinite: never stored) last whatever the direction, ties by
question id. The columns are those of
:func:`annotate.runs.selectors.results.question_sort_choices` except
``"question"`` (the results' own ``(run, question)`` index orders it);
a column undefined for every question of the run gets no rows.

Written by :func:`annotate.runs.services.scoring` as it stores a run, by
:func:`sort_keys_rebuild` for runs stored another way (imported studies),
and by migration ``0018_hsort_question_sort_keys`` for runs stored before.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
from django.db import models, transaction

from annotate.core import rows_insert, sort_keys_analyze
from annotate.models import QuestionResult, QuestionSortKey, ScoringRun
from annotate.runs.selectors.results import AT_BOUND_ATOL, question_sort_choices, run_estimation_bounds

#: The QuestionSortKey fields of a row of :func:`sort_key_rows`, in order.
SORT_KEY_FIELDS = ("run", "question", "column", "ascending", "descending")
#: The sort key that is a field of QuestionResult, not a stored score.
N_OBSERVED = "n_observed"
#: QuestionResult rows read per round trip by :func:`sort_key_arrays`.
READ_CHUNK = 20_000


def sort_key_columns() -> list[str]:
    """The columns that get sort keys: every sort choice of the question list but ``"question"``."""
    return [key for key, _ in question_sort_choices() if key != "question"]


def sort_positions(values: np.ndarray, question_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each question's position in the list sorted by ``values``, ascending and descending.

    Parameters
    ----------
    values : array-like of shape (n_questions,)
        The column's values; NaN or +-inf = undefined.
    question_ids : array-like of int of shape (n_questions,)
        Distinct question ids (the tie-break).

    Returns
    -------
    ascending, descending : ndarray of int64 of shape (n_questions,)
        0-based positions (a permutation of ``0 .. n_questions - 1`` each):
        defined values by value (ascending, resp. descending), then the
        undefined ones; ties, and the undefined values, by ascending question id.

    Examples
    --------
    >>> asc, desc = sort_positions(np.array([2.0, np.nan, 2.0, 1.0]), np.array([7, 5, 6, 8]))
    >>> asc.tolist(), desc.tolist()
    ([2, 3, 1, 0], [1, 3, 0, 2])
    """
    v = np.asarray(values, dtype=np.float64)
    q = np.asarray(question_ids, dtype=np.int64)
    undefined = ~np.isfinite(v)
    filled = np.where(undefined, 0.0, v)
    out = []
    for key in (filled, -filled):
        order = np.lexsort((q, key, undefined))  # last key sorts first
        position = np.empty(len(v), dtype=np.int64)
        position[order] = np.arange(len(v), dtype=np.int64)
        out.append(position)
    return out[0], out[1]


def sort_key_rows(*, run_id: int, question_ids: np.ndarray, columns: Mapping[str, np.ndarray],
                  bounds: Mapping[str, tuple[float, float]] | None = None,
                  ) -> Iterator[tuple[int, int, str, int, int]]:
    """The QuestionSortKey rows (:data:`SORT_KEY_FIELDS`) of one run.

    Parameters
    ----------
    run_id : int
    question_ids : array-like of int of shape (n_questions,)
    columns : mapping of str to array-like of shape (n_questions,)
        Column -> values (NaN or +-inf = undefined); columns outside
        :func:`sort_key_columns` are left out, and so is a column undefined
        for every question.
    bounds : mapping of str to (float, float), optional
        Column -> the box its estimates were fitted in
        (:func:`~annotate.runs.selectors.results.run_estimation_bounds`). An
        estimate on a bound only says the question is at least (at most) that
        hard, so all of them sort as one tie at the bound, by question id,
        whatever rounding noise separates their stored values.
    """
    q = np.asarray(question_ids, dtype=np.int64)
    wanted = set(sort_key_columns())
    bounds = bounds or {}
    for column, values in columns.items():
        v = np.asarray(values, dtype=np.float64)
        if column not in wanted or not np.isfinite(v).any():
            continue
        if column in bounds:
            low, high = bounds[column]
            v = np.where(v >= high - AT_BOUND_ATOL, high, np.where(v <= low + AT_BOUND_ATOL, low, v))
        ascending, descending = sort_positions(v, q)
        order = np.argsort(ascending)  # rows in list order: the position indexes grow at their ends
        yield from zip(itertools.repeat(run_id), q[order].tolist(), itertools.repeat(column),
                       ascending[order].tolist(), descending[order].tolist())


def sort_keys_write(*, run_id: int, question_ids: np.ndarray, columns: Mapping[str, np.ndarray],
                    bounds: Mapping[str, tuple[float, float]] | None = None) -> None:
    """Insert the sort keys of one run (:func:`sort_key_rows`; COPY on PostgreSQL), in the caller's
    transaction; the table's planner statistics are refreshed once it commits."""
    rows_insert(model=QuestionSortKey, fields=SORT_KEY_FIELDS,
                rows=sort_key_rows(run_id=run_id, question_ids=question_ids, columns=columns, bounds=bounds))
    transaction.on_commit(sort_keys_analyze)


def sort_key_arrays(rows: Iterable[tuple[int, int, dict]], *, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Question ids and sortable columns from stored results ``(question_id, n_observed, scores)``.

    Parameters
    ----------
    rows : iterable of (int, int, dict)
        ``n`` QuestionResult rows of one run.
    n : int
        Their number.

    Returns
    -------
    question_ids : ndarray of int64 of shape (n,)
    columns : dict of str to ndarray of float64 of shape (n,)
        Every column of :func:`sort_key_columns`, NaN where ``scores``
        lacks it (or holds something that is not a finite number).
    """
    names = [c for c in sort_key_columns() if c != N_OBSERVED]
    question_ids = np.empty(n, dtype=np.int64)
    lists: dict[str, list[float]] = {c: [math.nan] * n for c in names}
    n_observed = np.empty(n, dtype=np.float64)
    for i, (question_id, observed, scores) in enumerate(rows):
        question_ids[i] = question_id
        n_observed[i] = observed
        for column in names:
            value = scores.get(column)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                lists[column][i] = float(value)
    columns = {c: np.array(values, dtype=np.float64) for c, values in lists.items()}
    return question_ids, {**columns, N_OBSERVED: n_observed}


def sort_keys_fill(*, run_id: int, result_model: type[models.Model], key_model: type[models.Model]) -> None:
    """Write the sort keys of one run from its stored results (no transaction of its own).

    Parameters
    ----------
    run_id : int
        The run; it must have no keys yet (the unique indexes refuse a second set).
    result_model, key_model : Django model classes
        QuestionResult and QuestionSortKey, or their historical versions
        inside a migration.

    Raises
    ------
    django.db.IntegrityError
        If the run already has keys.
    """
    results = result_model.objects.filter(run_id=run_id)  # type: ignore[attr-defined]
    n = results.count()
    rows = results.order_by().values_list("question_id", "n_observed", "scores").iterator(chunk_size=READ_CHUNK)
    question_ids, columns = sort_key_arrays(rows, n=n)
    rows_insert(model=key_model, fields=SORT_KEY_FIELDS,
                rows=sort_key_rows(run_id=run_id, question_ids=question_ids, columns=columns))


@transaction.atomic
def sort_keys_rebuild(*, run: ScoringRun) -> None:
    """Replace the sort keys of ``run`` by keys computed from its stored results, in one transaction.

    Parameters
    ----------
    run : ScoringRun
        A run whose results were written without keys (an imported study's
        run); :mod:`annotate.runs.services.scoring` writes them as it stores a run.
    """
    QuestionSortKey.objects.filter(run=run).delete()
    results = QuestionResult.objects.filter(run=run)
    rows = results.order_by().values_list("question_id", "n_observed", "scores").iterator(chunk_size=READ_CHUNK)
    question_ids, columns = sort_key_arrays(rows, n=results.count())
    sort_keys_write(run_id=run.pk, question_ids=question_ids, columns=columns, bounds=run_estimation_bounds(run=run))
