"""Reads behind the results pages: response sets and their runs, a run's
methods, the model leaderboard and the question list, and the tidy tables a
run downloads as (per-question difficulty, the leaderboard, the methods)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from django.core.paginator import Page, Paginator
from django.db.models import F, FloatField, Prefetch, Q, QuerySet
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotate.catalog import response_sets_visible
from annotate.core import Column, TidyTable, counted, csv_bytes, download_name, render_table
from annotate.models import (
    Dataset,
    MethodResult,
    ModelResult,
    QuestionResult,
    QuestionSortKey,
    ResponseSet,
    RunStatus,
    ScoringRun,
    Subject,
)
from scoring._irt_common import AT_BOUND_ATOL as irt_at_bound_atol
from scoring.diagnostics import DEFAULT_MIN_MODELS
from scoring.methods import (
    DifficultyMethod,
    at_bound_flags,
    get_method,
    iter_bounded_columns,
    iter_columns,
    method_keys,
    methods as registered_methods,
)

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ScoreColumn:
    """One stored column shown in a results table (from :mod:`scoring.methods`)."""

    column: str
    method: str
    header: str
    decimals: int
    note: str = ""
    unit: str = ""


@dataclass(frozen=True)
class ScoreCell:
    """A stored value (None = undefined), the decimals it is shown with, and
    ``bound``: "≥" (resp. "≤") when the value is an estimate stopped at the
    upper (lower) bound of its fit, "" otherwise."""

    value: float | None
    decimals: int
    bound: str = ""


#: How close to its bound an estimate counts as on it: the rule of the fit's own
#: ``difficulty_at_bound`` flags, so the list marks what the run page counts.
AT_BOUND_ATOL = irt_at_bound_atol


def run_estimation_bounds(*, run: ScoringRun) -> dict[str, tuple[float, float]]:
    """The box each bounded estimate of ``run`` was fitted in: question column -> (low, high).

    Every column a method declares bounded (``question_bounds`` of
    :mod:`scoring.methods`) whose box the run stored in that method's
    parameters: the joint-maximum-likelihood IRT difficulties (``bounds``,
    (-5, 5) logits by default), the marginal-maximum-likelihood ones
    (``difficulty_bounds``, (-6, 6) logits by default) and the 2PL
    discriminations (``discrimination_bounds``, (0.1, 5) by default).
    """
    params = {method: p for method, p in run.methods.values_list("method", "params") if isinstance(p, dict)}
    out = {}
    for m, column, key in iter_bounded_columns("question"):
        bounds = params.get(m.key, {}).get(key)
        if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
            out[column] = (float(bounds[0]), float(bounds[1]))
    return out


@dataclass(frozen=True)
class BoundNote:
    """One bounded column shown in the question list and the box its fit used."""

    header: str
    low: float
    high: float
    unit: str
    decimals: int  # as few as show both ends exactly: (-5, 5) -> 0, (0.1, 5) -> 1


def bound_notes(bounds: dict[str, tuple[float, float]]) -> list[BoundNote]:
    """The bounds of :func:`run_estimation_bounds`, one per shown column, in column order.

    Parameters
    ----------
    bounds : dict of str to (float, float)
        Column -> (low, high), as :func:`run_estimation_bounds` gives.

    Returns
    -------
    list of BoundNote
        Header of the column (as the list heads it), low and high end, the
        unit (``"logits"`` for a difficulty, ``"per logit"`` for a
        discrimination) and the decimals that show both ends as stored.
    """
    out = []
    for c in question_score_columns():
        if c.column in bounds:
            method = get_method(c.method)
            unit = "logits" if c.column == method.difficulty_column else "per logit"
            low, high = bounds[c.column]
            decimals = max(len(f"{x:g}".partition(".")[2]) for x in (low, high))
            out.append(BoundNote(c.header, low, high, unit, decimals))
    return out


def bound_side(value: float | None, bounds: tuple[float, float] | None) -> str:
    """"≥" when ``value`` is on the upper bound (within ``AT_BOUND_ATOL``), "≤" on the lower, else ""."""
    if value is None or bounds is None:
        return ""
    low, high = bounds
    if value >= high - AT_BOUND_ATOL:
        return "≥"
    if value <= low + AT_BOUND_ATOL:
        return "≤"
    return ""


def _cells(result: QuestionResult | ModelResult, columns: list[ScoreColumn],
           bounds: dict[str, tuple[float, float]] | None = None) -> tuple[ScoreCell, ...]:
    bounds = bounds or {}
    return tuple(ScoreCell(value, c.decimals, bound_side(value, bounds.get(c.column)))
                 for c in columns for value in (result.score(c.column),))


def question_score_columns() -> list[ScoreColumn]:
    """Every per-question column pages show, in registry order (replicate columns left out)."""
    return [ScoreColumn(c, m.key, m.column_label(c), m.decimals(c), unit=m.unit(c))
            for m in registered_methods() for c in m.shown_question_columns]


def model_score_columns() -> list[ScoreColumn]:
    """Every stored per-model column, in registry order; a method's competency
    column is headed by its competency label (with its footnote)."""
    out = []
    for m in registered_methods():
        for c in m.model_columns:
            competency = c == m.competency_column
            header = m.competency_header if competency and m.competency_label else m.column_label(c)
            out.append(ScoreColumn(c, m.key, header, m.decimals(c), m.competency_note if competency else "",
                                   unit=m.unit(c)))
    return out


@dataclass(frozen=True)
class ResponseSetRuns:
    response_set: ResponseSet
    runs: tuple[ScoringRun, ...]


def response_sets_with_runs() -> list[ResponseSetRuns]:
    """Every response set (by name, newest version first) with its runs, newest first."""
    runs = ScoringRun.objects.select_related("created_by").order_by("-created_at", "-pk")
    sets = response_sets_visible().order_by("name", "-version").prefetch_related(
        Prefetch("scoring_runs", queryset=runs))
    return [ResponseSetRuns(rs, tuple(rs.scoring_runs.all())) for rs in sets]


def runs_active(*, groups: Iterable[ResponseSetRuns]) -> bool:
    """Is any run queued or running (the list page then refreshes itself)?"""
    return any(run.status in (RunStatus.QUEUED, RunStatus.RUNNING) for g in groups for run in g.runs)


@dataclass(frozen=True)
class MethodRow:
    label: str
    result: MethodResult
    residual_label: str


def _method_or_none(key: str) -> DifficultyMethod | None:
    try:
        return get_method(key)
    except KeyError:  # a method stored by an older version and since removed
        return None


def run_methods(*, run: ScoringRun) -> list[MethodRow]:
    """The run's MethodResults in registry order (unknown methods last)."""
    order = {name: k for k, name in enumerate(method_keys())}
    results = sorted(MethodResult.objects.filter(run=run), key=lambda m: order.get(m.method, len(order)))
    rows = []
    for r in results:
        method = _method_or_none(r.method)
        rows.append(MethodRow(method.label if method else r.method, r, method.residual_label if method else ""))
    return rows


@dataclass(frozen=True)
class LeaderboardRow:
    """One model: every method's competency, and its EIP and accuracy ranks.

    ``scores`` is aligned with :func:`model_score_columns` (None where
    undefined). Ranks are 1 = best, ties share the smaller rank
    ("competition" ranking). ``rank_change = accuracy_rank - eip_rank``:
    positive when EIP places the model higher than accuracy does.
    """

    model_id: int
    name: str
    family: str
    parameters_b: float | None
    access: str
    n_observed: int
    scores: tuple[ScoreCell, ...]
    eip_rank: int
    accuracy_rank: int
    rank_change: int


def _ranks(values: list[float | None]) -> np.ndarray:
    from scipy.stats import rankdata
    x = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return rankdata(-np.nan_to_num(x, nan=-np.inf), method="min").astype(int)


def _ranked_model_results(*, run: ScoringRun) -> tuple[list[ModelResult], np.ndarray, np.ndarray]:
    """A run's model results with their EIP and accuracy ranks (competition ranking, 1 = best)."""
    results = list(ModelResult.objects.filter(run=run).select_related("model"))
    eip_rank = _ranks([r.score(get_method("eip").competency_column) for r in results])
    accuracy_rank = _ranks([r.score(get_method("accuracy").competency_column) for r in results])
    return results, eip_rank, accuracy_rank


def run_leaderboard(*, run: ScoringRun) -> list[LeaderboardRow]:
    """Models of a run, best EIP competency first (ties by name)."""
    results, eip_rank, accuracy_rank = _ranked_model_results(run=run)
    if not results:
        return []
    columns = model_score_columns()
    rows = [
        LeaderboardRow(
            model_id=r.model_id, name=r.model.name, family=r.model.family, parameters_b=r.model.parameters_b,
            access=r.model.get_access_display(), n_observed=r.n_observed,
            scores=_cells(r, columns),
            eip_rank=int(e), accuracy_rank=int(a), rank_change=int(a - e),
        )
        for r, e, a in zip(results, eip_rank, accuracy_rank)
    ]
    return sorted(rows, key=lambda row: (row.eip_rank, row.name))


def run_datasets_and_subjects(*, run: ScoringRun) -> tuple[QuerySet[Dataset], QuerySet[Subject]]:
    """Datasets and subjects of the questions a run scored (the filter choices)."""
    scored = QuestionResult.objects.filter(run=run)
    datasets = Dataset.objects.filter(pk__in=scored.values("question__dataset_id")).order_by("name")
    subjects = Subject.objects.filter(pk__in=scored.values("question__subject_id")).order_by("name")
    return datasets, subjects


#: Sort keys of the question list besides the registry's question columns.
FIXED_SORTS = (("question", "question (file order)"), ("n_observed", "models observed"))


def question_sort_choices() -> list[tuple[str, str]]:
    """Sort keys of the question list: every shown question column of the
    registry (default: EIP's difficulty first), then the question and the
    number of models that observed it."""
    default = get_method("eip").difficulty_column
    columns = sorted(question_score_columns(), key=lambda c: c.column != default)
    return [*((c.column, c.header) for c in columns), *FIXED_SORTS]


def run_min_models(*, run: ScoringRun) -> int:
    """The run's low-coverage threshold: a question observed by fewer models is flagged."""
    return int(run.diagnostics.get("min_models", run.params.get("min_models", DEFAULT_MIN_MODELS)))


def run_questions(
    *, run: ScoringRun, dataset: Dataset | None = None, subject: Subject | None = None, search: str = "",
    status: str = "", coverage: str = "", sort: str = "", direction: str = "",
) -> QuerySet[QuestionResult]:
    """A run's question results, searched, filtered and sorted.

    Parameters
    ----------
    run : ScoringRun
    dataset, subject : Dataset or Subject, optional
        Only questions of that dataset and/or subject.
    search : str, default ""
        Case-insensitive substring of the question's id (``external_id``)
        or text; blank = every question.
    status : {"", "kept", "excluded"}
        EIP kept the question, or excluded it (every observed model solved
        it, or failed it); blank = both.
    coverage : {"", "low", "ok"}
        "low": observed by fewer than :func:`run_min_models` models
        (flagged); "ok": the others; blank = both.
    sort : str, default ""
        A key of :func:`question_sort_choices`; blank = EIP's difficulty.
    direction : {"", "desc", "asc"}
        Blank = "desc" for a score or a count (hardest first: higher =
        harder for every method), "asc" for the question.

    Returns
    -------
    QuerySet of QuestionResult
        Undefined values last whatever the direction; ties by question id.
        A score column or ``n_observed`` is ordered by the run's
        :class:`~annotate.models.QuestionSortKey` positions (an index
        range: a page of a million questions needs no sort); a run stored
        without them by its stored values (:func:`order_by_stored_value`).
    """
    results = _run_results(run=run, dataset=dataset, subject=subject, search=search, status=status,
                           coverage=coverage)
    sort = sort or get_method("eip").difficulty_column
    descending = (direction or ("asc" if sort == "question" else "desc")) == "desc"
    if sort == "question":
        return results.order_by("-question_id" if descending else "question_id")
    firsts = QuestionSortKey.objects.filter(run=run, ascending=0)  # one lookup in a unique index per column
    if not firsts.filter(column=SORT_KEY_ALWAYS).exists():  # stored without sort keys: sort the stored values
        return order_by_stored_value(results, sort=sort, descending=descending)
    if not firsts.filter(column=sort).exists():  # undefined for every question: the question order
        return results.order_by("question_id")
    position = "descending" if descending else "ascending"
    return results.filter(question__sort_keys__run=run, question__sort_keys__column=sort).order_by(
        f"question__sort_keys__{position}")


class _CountedPaginator(Paginator):
    """A Paginator told its count (the sort keys' join would make the database count through it)."""

    def __init__(self, object_list: QuerySet[QuestionResult], per_page: int, *, count: int) -> None:
        super().__init__(object_list, per_page)
        self._known_count = count

    @cached_property
    def count(self) -> int:
        return self._known_count


def run_questions_page(
    *, run: ScoringRun, page: object, per_page: int, dataset: Dataset | None = None,
    subject: Subject | None = None, search: str = "", status: str = "", coverage: str = "", sort: str = "",
    direction: str = "",
) -> Page:
    """One page of :func:`run_questions`.

    Parameters
    ----------
    run : ScoringRun
    page : str, int or None
        The page number, read as :meth:`django.core.paginator.Paginator.get_page`
        reads it (blank or invalid: the first page; past the end: the last).
    per_page : int
        Rows a page.
    dataset, subject, search, status, coverage, sort, direction
        As :func:`run_questions`.

    Returns
    -------
    django.core.paginator.Page
        Its ``object_list`` holds the page's QuestionResults in the list's
        order; ``paginator.count`` is the number of filtered results,
        counted without the join to the sort keys (every question of a run
        with keys has one for each column with keys, so the join changes no
        count, but made the database count through a million key rows).
    """
    filters = {"dataset": dataset, "subject": subject, "search": search, "status": status, "coverage": coverage}
    ordered = run_questions(run=run, sort=sort, direction=direction, **filters)
    return _CountedPaginator(ordered, per_page, count=_run_results(run=run, **filters).count()).get_page(page)


def _run_results(
    *, run: ScoringRun, dataset: Dataset | None, subject: Subject | None, search: str, status: str, coverage: str,
) -> QuerySet[QuestionResult]:
    """A run's question results with the filters of :func:`run_questions`, in no order."""
    results = QuestionResult.objects.filter(run=run).select_related("question__dataset", "question__subject")
    if dataset is not None:
        results = results.filter(question__dataset=dataset)
    if subject is not None:
        results = results.filter(question__subject=subject)
    if search:
        results = results.filter(Q(question__external_id__icontains=search) | Q(question__text__icontains=search))
    if status:
        results = results.filter(kept=status == "kept")
    if coverage == "low":
        results = results.filter(n_observed__lt=run_min_models(run=run))
    elif coverage == "ok":
        results = results.filter(n_observed__gte=run_min_models(run=run))
    return results


#: The sort key every run with questions has (:class:`~annotate.models.QuestionSortKey`).
SORT_KEY_ALWAYS = "n_observed"


def order_by_stored_value(
    results: QuerySet[QuestionResult], *, sort: str, descending: bool,
) -> QuerySet[QuestionResult]:
    """``results`` sorted by the stored value of ``sort`` (a score column or ``"n_observed"``) in the
    database: undefined last whatever the direction, ties by question id.

    The order of :func:`run_questions` for a run without sort keys; every
    row's JSON value is read and sorted, 9.5 s a page at a million questions.
    """
    key = F("n_observed") if sort == "n_observed" else Cast(KT(f"scores__{sort}"), FloatField())
    return results.order_by(key.desc(nulls_last=True) if descending else key.asc(nulls_last=True), "question_id")


@dataclass(frozen=True)
class QuestionRow:
    result: QuestionResult
    excluded: str  # "", "all solved" or "all failed"
    scores: tuple[ScoreCell, ...]  # aligned with question_score_columns()
    low_coverage: bool = False  # observed by fewer than the run's min_models models


def question_rows(*, results: Iterable[QuestionResult], min_models: int = 0,
                  bounds: dict[str, tuple[float, float]] | None = None) -> list[QuestionRow]:
    """Label excluded questions: EIP drops a question every observed model
    solved (display value 0) or failed (display value 100); flag those
    observed by fewer than ``min_models`` models (low coverage); mark values
    on their fit's bound (``bounds``: :func:`run_estimation_bounds`)."""
    columns = question_score_columns()
    scaled = get_method("eip").difficulty_column
    rows = []
    for r in results:
        label = "" if r.kept else ("all solved" if r.score(scaled) == 0 else "all failed")
        rows.append(QuestionRow(r, label, _cells(r, columns, bounds), r.n_observed < min_models))
    return rows


# --- downloads: tidy tables of a run ---------------------------------------------------

ERR_COLUMN_CLASH = "method column {column!r} clashes with a fixed column of the {table} table"
#: Fixed columns of the questions table, before the registry's question columns.
QUESTION_COLUMNS = (
    Column("scoring_run", "integer", "the scoring run the values come from (its parameters are in the codebook)"),
    Column("dataset", "text", "dataset name; a question is named by dataset and question_id (two datasets may "
           "share question ids)"),
    Column("question_id", "text", "the question's id in its dataset, as in the loaded files (numeric-looking ids "
           "may read as numbers; pass dtype={'question_id': str})"),
    Column("question_pk", "integer", "the question's database key on this site (not an id of the dataset)"),
    Column("subject", "text", "subject name; blank when the question has none"),
    Column("kept", "boolean", "EIP could rank the question: False when every observed model solved it "
           "(eip_scaled 0) or failed it (eip_scaled 100)"),
    Column("n_observed", "integer", "models with a response to the question in this run", "count"),
)
#: Fixed columns of the models table; the registry's model columns follow, then the ranks.
MODEL_COLUMNS = (
    Column("scoring_run", "integer", "the scoring run the values come from (its parameters are in the codebook)"),
    Column("model_id", "integer", "the model's id on this site"),
    Column("name", "text", "model name"),
    Column("family", "text", "model family; blank when unknown"),
    Column("parameters_b", "number", "parameter count; blank when unknown", "billions"),
    Column("access", "text", "open_weight, proprietary or unknown"),
    Column("n_observed", "integer", "questions the model answered in this run", "count"),
)
MODEL_RANK_COLUMNS = (
    Column("eip_rank", "integer", "rank by EIP competency (column eip), 1 = best; ties share the best rank "
           "of their group (competition ranking); an undefined value ranks last"),
    Column("accuracy_rank", "integer", "rank by accuracy, as eip_rank"),
)
METHOD_COLUMNS = (
    Column("method", "text", "method key (the registry's; the prefix of its columns)"),
    Column("label", "text", "display label"),
    Column("n_iter", "number", "iterations until the fit stopped (a whole number); blank when the method "
           "does not iterate"),
    Column("converged", "boolean", "did the fit converge; blank when the method does not iterate"),
    Column("residual", "number", "the method's final residual (see residual_label); blank when none"),
    Column("residual_label", "text", "what residual measures"),
    Column("seconds", "number", "wall time of the fit", "seconds"),
)


def _method_column(method: DifficultyMethod, column: str, *, kind: str) -> Column:
    if kind == "question":
        role = "its difficulty, " + ("higher = harder" if method.higher_is_harder else "higher = easier") \
            if column == method.difficulty_column else "a per-question value"
        header = method.column_label(column)
    else:
        role = "its competency, higher = better" if column == method.competency_column else "a per-model value"
        header = method.competency_header if column == method.competency_column and method.competency_label \
            else method.column_label(column)
    note = f" ({method.competency_note})" if kind == "model" and column == method.competency_column \
        and method.competency_note else ""
    return Column(column, "number", f"{header}: {role}; blank where undefined{note}",
                  method.unit(column))


def _bound_column(method: DifficultyMethod, column: str, params_key: str, *, kind: str) -> Column:
    header = method.competency_header if kind == "model" and column == method.competency_column \
        and method.competency_label else method.column_label(column)
    return Column(f"{column}_at_bound", "number",
                  f"{header}: 1 where the value lies on a bound of the fit (within 1e-6 of either end of the "
                  f"method parameter {params_key}, as the run page counts them), else 0; blank where undefined: "
                  "the value there is the bound, not an estimate", "flag (0 or 1)")


def run_question_codebook() -> tuple[Column, ...]:
    """The columns of :func:`run_questions_frame`, each described (registry order)."""
    return (*QUESTION_COLUMNS, *(_method_column(m, c, kind="question") for m, c in iter_columns("question")),
            *(_bound_column(m, c, k, kind="question") for m, c, k in iter_bounded_columns("question")))


def run_model_codebook() -> tuple[Column, ...]:
    """The columns of :func:`run_models_frame`, each described (registry order)."""
    return (*MODEL_COLUMNS, *(_method_column(m, c, kind="model") for m, c in iter_columns("model")),
            *(_bound_column(m, c, k, kind="model") for m, c, k in iter_bounded_columns("model")),
            *MODEL_RANK_COLUMNS)


def _bound_flags(run: ScoringRun, kind: str, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``<column>_at_bound`` for every bounded column of ``kind``, from the bounds the run's fit stored."""
    params = dict(MethodResult.objects.filter(run=run).values_list("method", "params"))
    return {f"{column}_at_bound": at_bound_flags(values[column], (params.get(m.key) or {}).get(key))
            for m, column, key in iter_bounded_columns(kind)}


def _score_names(kind: str, fixed: tuple[Column, ...]) -> list[str]:
    names = [c for _, c in iter_columns(kind)]
    for column in set(names) & {c.name for c in fixed}:
        raise ValueError(ERR_COLUMN_CLASH.format(column=column, table=f"{kind}s"))
    return names


def _score_array(values: list[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def run_questions_frame(*, run: ScoringRun, chunk_size: int = 2000) -> pd.DataFrame:
    """Per-question difficulty of a run, one row per scored question.

    Parameters
    ----------
    run : ScoringRun
    chunk_size : int, default 2000
        Rows fetched per database round trip (the rows are read as tuples,
        never as model instances).

    Returns
    -------
    pandas.DataFrame of shape (n_questions, 7 + n_question_columns)
        Ordered by ``question_pk``. Columns: ``scoring_run`` (int64, the
        run's id on every row), ``dataset``, ``question_id`` (the question's
        external id in its dataset: a question is named by the two),
        ``question_pk`` (int64, the database key), ``subject`` (text,
        missing when none), ``kept`` (bool), ``n_observed`` (int64), then
        every question column of :mod:`scoring.methods` in registry order
        (float64, NaN where the stored ``scores`` lack it), then
        ``<column>_at_bound`` for each bounded column of the registry
        (float64 1/0, NaN where undefined: :func:`scoring.methods.at_bound_flags`).
        See :func:`run_question_codebook`.

    Raises
    ------
    ValueError
        If a registered method's column has the name of a fixed column.
    """
    names = _score_names("question", QUESTION_COLUMNS)
    rows = _question_rows(run, chunk_size)
    return _questions_frame(run, names, rows)


def run_questions_frames(*, run: ScoringRun, chunk_rows: int = 20_000) -> Iterator[pd.DataFrame]:
    """:func:`run_questions_frame` a block of ``chunk_rows`` rows at a time (same columns and dtypes).

    At least one frame (an empty one for a run without questions); memory
    beyond the database cursor is one block, so a million-question run's
    download never holds every row.
    """
    from itertools import islice
    names = _score_names("question", QUESTION_COLUMNS)
    rows = _question_rows(run, chunk_rows)
    first = True
    while True:
        block = list(islice(rows, chunk_rows))
        if block or first:
            yield _questions_frame(run, names, block)
        first = False
        if len(block) < chunk_rows:
            return


def run_questions_csv_chunks(*, run: ScoringRun, chunk_rows: int = 20_000) -> Iterator[bytes]:
    """The run's ``questions.csv`` streamed: the bytes of ``render_table(run_questions_table(run), fmt="csv")``,
    ``chunk_rows`` rows at a time (the header with the first)."""
    for k, frame in enumerate(run_questions_frames(run=run, chunk_rows=chunk_rows)):
        yield csv_bytes(frame, header=k == 0)


def _question_rows(run: ScoringRun, chunk_size: int) -> Iterator[tuple]:
    return (QuestionResult.objects.filter(run=run).order_by("question_id")
            .values_list("question__dataset__name", "question__external_id", "question_id",
                         "question__subject__name", "kept", "n_observed", "scores")
            .iterator(chunk_size=chunk_size))


def _questions_frame(run: ScoringRun, names: list[str], rows: Iterable[tuple]) -> pd.DataFrame:
    import pandas as pd
    fixed: dict[str, list] = {c.name: [] for c in QUESTION_COLUMNS if c.name != "scoring_run"}
    scores: dict[str, list[float | None]] = {name: [] for name in names}
    for *values, stored in rows:
        for column, value in zip(fixed.values(), values):
            column.append(value)
        for name in names:
            scores[name].append(stored.get(name))
    arrays = {name: _score_array(values) for name, values in scores.items()}
    frame = pd.DataFrame({
        "scoring_run": np.full(len(fixed["question_pk"]), run.pk, dtype=np.int64),
        "dataset": pd.Series(fixed["dataset"], dtype=object),
        "question_id": pd.Series(fixed["question_id"], dtype=object),
        "question_pk": np.array(fixed["question_pk"], dtype=np.int64),
        "subject": pd.Series(fixed["subject"], dtype=object),
        "kept": np.array(fixed["kept"], dtype=bool),
        "n_observed": np.array(fixed["n_observed"], dtype=np.int64),
        **arrays,
        **_bound_flags(run, "question", arrays),
    })
    return frame


def run_models_frame(*, run: ScoringRun) -> pd.DataFrame:
    """The model leaderboard of a run as a table, best EIP competency first
    (ties by name), as on the leaderboard page.

    Returns
    -------
    pandas.DataFrame of shape (n_models, 9 + n_model_columns)
        Columns: ``scoring_run`` (int64, the run's id on every row),
        ``model_id`` (int64), ``name``, ``family`` (text, missing when
        blank), ``parameters_b`` (float64, NaN when unknown), ``access``
        (the stored code), ``n_observed`` (int64), every model
        column of :mod:`scoring.methods` in registry order (float64, NaN
        where undefined), ``<column>_at_bound`` for each bounded model
        column (1/0, NaN where undefined), ``eip_rank`` and ``accuracy_rank`` (int64). See
        :func:`run_model_codebook`.

    Raises
    ------
    ValueError
        If a registered method's column has the name of a fixed column.
    """
    import pandas as pd
    names = _score_names("model", (*MODEL_COLUMNS, *MODEL_RANK_COLUMNS))
    results, eip_rank, accuracy_rank = _ranked_model_results(run=run)
    order = sorted(range(len(results)), key=lambda i: (eip_rank[i], results[i].model.name))
    results = [results[i] for i in order]
    models = [r.model for r in results]
    arrays = {name: _score_array([r.score(name) for r in results]) for name in names}
    return pd.DataFrame({
        "scoring_run": np.full(len(models), run.pk, dtype=np.int64),
        "model_id": np.array([m.pk for m in models], dtype=np.int64),
        "name": pd.Series([m.name for m in models], dtype=object),
        "family": pd.Series([m.family or None for m in models], dtype=object),
        "parameters_b": _score_array([m.parameters_b for m in models]),
        "access": pd.Series([m.access for m in models], dtype=object),
        "n_observed": np.array([r.n_observed for r in results], dtype=np.int64),
        **arrays,
        **_bound_flags(run, "model", arrays),
        "eip_rank": np.array([eip_rank[i] for i in order], dtype=np.int64),
        "accuracy_rank": np.array([accuracy_rank[i] for i in order], dtype=np.int64),
    })


def run_methods_frame(*, run: ScoringRun) -> pd.DataFrame:
    """How each method's fit went in a run (registry order), one row per method."""
    import pandas as pd
    rows = run_methods(run=run)
    return pd.DataFrame({
        "method": pd.Series([r.result.method for r in rows], dtype=object),
        "label": pd.Series([r.label for r in rows], dtype=object),
        "n_iter": pd.array([r.result.n_iter for r in rows], dtype="Int64"),
        "converged": pd.Series([r.result.converged for r in rows], dtype=object),
        "residual": _score_array([r.result.residual for r in rows]),
        "residual_label": pd.Series([r.residual_label or None for r in rows], dtype=object),
        "seconds": _score_array([r.result.duration_s for r in rows]),
    })


def run_questions_table(*, run: ScoringRun) -> TidyTable:
    """:func:`run_questions_frame` with its codebook entries."""
    return TidyTable("questions", "Per-question difficulty of every method", run_questions_frame(run=run),
                     run_question_codebook())


def run_models_table(*, run: ScoringRun) -> TidyTable:
    """:func:`run_models_frame` with its codebook entries."""
    return TidyTable("models", "Model leaderboard: every method's competency and the ranks",
                     run_models_frame(run=run), run_model_codebook())


def run_methods_table(*, run: ScoringRun) -> TidyTable:
    """:func:`run_methods_frame` with its codebook entries."""
    return TidyTable("methods", "How each method's fit went (its parameters are listed above)",
                     run_methods_frame(run=run), METHOD_COLUMNS)


@dataclass(frozen=True)
class RunProvenance:
    """Where a run's downloads come from, for their codebook.

    ``provenance``: the run, its response set, its datasets and models;
    ``parameters``: the run's parameters, then each method's (with its
    iterations, convergence and residual).
    """

    title: str
    file_stem: tuple[str, ...]
    provenance: dict
    parameters: dict


def run_provenance(*, run: ScoringRun) -> RunProvenance:
    """The codebook header of a run's downloads (see :class:`RunProvenance`)."""
    response_set = run.response_set
    datasets = list(run.datasets_used.order_by("name").values_list("name", flat=True))
    models = list(run.models_used.order_by("name").values_list("name", flat=True))
    provenance = {
        "source": f"scoring run {run.pk} ({run.get_status_display()}, finished "
                  f"{run.finished_at.isoformat(timespec='seconds') if run.finished_at else 'never'})",
        "response set": f"{response_set} (id {response_set.pk}; {counted(response_set.n_questions, 'question')} x "
                        f"{counted(response_set.n_models, 'model')}, {counted(response_set.n_responses, 'response')})",
        "datasets used": ", ".join(datasets) if datasets else "all",
        "models used": ", ".join(models) if models else "all",
    }
    parameters: dict = {"run": run.params}
    for row in run_methods(run=run):
        r = row.result
        parameters[r.method] = {**r.params, "n_iter": r.n_iter, "converged": r.converged, "residual": r.residual}
    return RunProvenance(
        title=f"scoring run {run.pk} of {response_set}", file_stem=("run", str(run.pk), str(response_set)),
        provenance=provenance, parameters=parameters,
    )


#: The tables of a run that download one by one (``questions``, ``models``), as CSV or Parquet.
RUN_TABLES = {"questions": run_questions_table, "models": run_models_table}


def run_table_file(*, run: ScoringRun, table: str, fmt: str) -> tuple[bytes, str]:
    """One of :data:`RUN_TABLES` of a finished run as a file: (content, file name).

    ``fmt`` is "csv" (tidy CSV) or "parquet" (with the codebook and the run's
    provenance and parameters in its metadata). Used by the results pages and
    the API alike.

    Raises
    ------
    KeyError
        For a table not in :data:`RUN_TABLES`.
    ValueError
        For an unknown ``fmt``.
    """
    tidy, about = RUN_TABLES[table](run=run), run_provenance(run=run)
    content = render_table(tidy, fmt=fmt, provenance={**about.provenance, "parameters": about.parameters})
    return content, download_name(*about.file_stem, table, ext=fmt)


def run_models_used(*, run: ScoringRun) -> QuerySet:
    """The models a run scored, by name."""
    return run.models_used.order_by("name")


def run_datasets_used(*, run: ScoringRun) -> QuerySet[Dataset]:
    """The datasets a run scored, by name."""
    return run.datasets_used.order_by("name")


def run_table_chunks(*, run: ScoringRun, table: str, fmt: str) -> tuple[Iterable[bytes], str]:
    """:func:`run_table_file` as chunks to stream: (chunks, file name), the same bytes joined.

    The questions table as CSV is read and written a block of rows at a time
    (:func:`run_questions_csv_chunks`: a million-question run never sits in
    memory whole); the other tables and formats come whole, as one chunk.

    Raises
    ------
    KeyError, ValueError
        As :func:`run_table_file`.
    """
    if table == "questions" and fmt == "csv":
        about = run_provenance(run=run)
        return run_questions_csv_chunks(run=run), download_name(*about.file_stem, table, ext=fmt)
    content, file_name = run_table_file(run=run, table=table, fmt=fmt)
    return [content], file_name
