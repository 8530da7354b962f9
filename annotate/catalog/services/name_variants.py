"""Names that differ only by case: refused naming both rows, or merged on request.

Called by the loading service (:func:`annotate.catalog.services.loading.response_set_plan`)
before any other check. The parsers have already cleaned every name
(:mod:`annotate.catalog.loaders.names`: NFC, no zero-width characters, no no-break
spaces), so "GPT-4" and "gpt-4" are the only look-alikes left: two spellings
whose ``str.casefold()`` is equal.

Rules
-----
- Datasets, subjects and models are compared with each other within the
  upload and with every stored name of their kind; question ids within their
  dataset (upload and stored questions).
- Refused by default: one problem per extra spelling, at its first row, naming
  the other spelling and where it is (its file and row, or "already stored").
- With ``merge_case_variants`` (``--merge-case-variants``, the admin checkbox,
  the API field) every spelling is rewritten to the stored one, or to the first
  one in the upload when none is stored; duplicate question and model rows
  then keep their first row, and a response given under both spellings is
  refused by the loading service as a second credit for the same cell. A note
  counts the merged spellings.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from annotate.catalog.loaders.base import LoadError, ParsedResponseSet, Problem
from annotate.catalog.selectors.catalog import catalog_names, question_ids_by_dataset
from annotate.core import ascii_int

if TYPE_CHECKING:
    import pandas as pd

    from annotate.catalog.loaders.dense import DenseCells

#: ``parsed.options`` key set by the upload service when variants are to be merged.
MERGE_OPTION = "merge_case_variants"
HOW_TO_MERGE = ("to load them as one, use --merge-case-variants (command), tick 'Merge names that differ only "
                "by case' (admin) or send merge_case_variants=true (API)")
CASE_VARIANT_IN_UPLOAD = "{kind} {given!r} differs only by case from {other!r} at {where}; " + HOW_TO_MERGE
CASE_VARIANT_STORED = "{kind} {given!r} differs only by case from the stored {kind} {other!r}; " + HOW_TO_MERGE
MERGED_NOTE = "{count} name(s) that differ only by case were merged into one spelling: {examples}"
_STORED = object()


def _place(source: object, label: str) -> tuple[str, int | None]:
    if not isinstance(source, str) or not source.strip():
        return label, None
    file, colon, row = source.rpartition(":")
    if colon and file and ascii_int(row) is not None:
        return file, int(row)
    return source, None


def _where(source: object, label: str) -> str:
    file, row = _place(source, label)
    return file if row is None else f"{file}, row {row}"


def _spellings(values: Sequence[object], source_of: Callable[[int], object], stored: Iterable[str]
               ) -> tuple[dict[str, str], list[tuple[str, object, str, object]]]:
    """(rewrite of each variant spelling to its canonical one, [(given, its source, canonical,
    canonical's source or _STORED)]); ``source_of(i)`` is the source of ``values[i]``, asked
    only for the spellings of a clash (an upload without one never builds its sources)."""
    canonical: dict[str, tuple[str, bool]] = {}  # casefolded -> (its canonical spelling, stored)
    for name in stored:
        canonical.setdefault(name.casefold(), (name, True))
    # Each spelling once, in the order of its first value (dict.fromkeys keeps the first); the position
    # of a spelling's first value is looked up only for a clash.
    try:
        distinct = list(dict.fromkeys(values))
    except TypeError:  # an unhashable value, which is no name
        distinct = list(dict.fromkeys(value for value in values if isinstance(value, str)))
    spellings = [value for value in distinct if isinstance(value, str) and value]
    folded = [value.casefold() for value in spellings]
    for value, key in zip(spellings, folded):
        canonical.setdefault(key, (value, False))
    rewrite, clashes = {}, []
    for value, key in zip(spellings, folded):
        name, is_stored = canonical[key]
        if name != value:
            rewrite[value] = name
            clashes.append((value, source_of(_first_position(values, value)), name,
                            _STORED if is_stored else source_of(_first_position(values, name))))
    return rewrite, clashes


def _first_position(values: Sequence[object], value: str) -> int:
    """The position of the first element of ``values`` that is ``value`` (as a dict key matches it)."""
    return next(i for i, v in enumerate(values) if v is value or (isinstance(v, str) and v == value))


def case_variants_resolve(*, parsed: ParsedResponseSet, label: str) -> None:
    """Refuse (default) or merge (``parsed.options["merge_case_variants"]``) case variants.

    Parameters
    ----------
    parsed : ParsedResponseSet
        Rewritten in place when merging (names, then duplicate question and
        model rows dropped, first kept; a note added).
    label : str
        File name used when a row has no source.

    Raises
    ------
    LoadError
        Without the merge option, one problem per variant spelling, naming
        both spellings and both places.
    """
    import pandas as pd
    merge = bool(parsed.options.get(MERGE_OPTION))
    questions, models = parsed.questions, parsed.models
    if not {"dataset", "external_id", "subject"} <= set(questions.columns) or "name" not in models.columns:
        return  # the loading service reports the broken parser contract
    # A row without its own source is placed at its first response (e.g. a model of a long file);
    # sources are built only when a clash names one.
    firsts: dict[str, tuple[dict[object, object], dict[object, object]]] = {}

    def first_of(kind: int) -> dict[object, object]:
        if not firsts:
            if parsed.cells is not None:
                firsts["all"] = _first_of_cells(parsed.cells)
            else:
                responses = parsed.responses
                r_source = (responses["source"] if "source" in responses.columns
                            else pd.Series(None, index=responses.index))
                firsts["all"] = (_first(responses, ["dataset", "external_id"], r_source),
                                 _first(responses, ["model"], r_source))
        return firsts["all"][kind]

    q_datasets, q_ids = _values(questions["dataset"]), _values(questions["external_id"])
    q_own = _own_sources(questions)
    m_names, m_own = _values(models["name"]), _own_sources(models)

    def q_source(i: int) -> object:
        own = q_own[i]
        return own if isinstance(own, str) and own.strip() else first_of(0).get((q_datasets[i], q_ids[i]))

    def m_source(i: int) -> object:
        own = m_own[i]
        return own if isinstance(own, str) and own.strip() else first_of(1).get(m_names[i])

    problems: list[Problem] = []
    merged: list[tuple[str, str]] = []

    def handle(kind: str, clashes: list[tuple[str, object, str, object]]) -> None:
        for given, source, other, other_source in clashes:
            if merge:
                merged.append((given, other))
                continue
            file, row = _place(source, label)
            message = (CASE_VARIANT_STORED.format(kind=kind, given=given, other=other) if other_source is _STORED
                       else CASE_VARIANT_IN_UPLOAD.format(kind=kind, given=given, other=other,
                                                          where=_where(other_source, label)))
            problems.append(Problem(file=file, row=row, message=message))

    datasets, clashes = _spellings(q_datasets, q_source, catalog_names(kind="dataset"))
    handle("dataset", clashes)
    subjects, clashes = _spellings(_values(questions["subject"]), q_source, catalog_names(kind="subject"))
    handle("subject", clashes)
    model_names, clashes = _spellings(m_names, m_source, catalog_names(kind="model"))
    handle("model", clashes)
    dataset_of = [datasets.get(d, d) if isinstance(d, str) else d for d in q_datasets] if datasets else q_datasets
    codes, groups = pd.factorize(np.asarray(dataset_of, dtype=object))  # a missing dataset is in no group
    stored_ids = question_ids_by_dataset(dataset_names=[d for d in groups.tolist() if isinstance(d, str)])
    question_ids: dict[tuple[object, str], str] = {}
    for code, dataset in enumerate(groups.tolist()):  # in the order of their first question
        if len(groups) == 1 and not (codes < 0).any():  # one dataset: every question is in the group
            rows, group_ids = range(len(q_ids)), q_ids
        else:
            rows = np.flatnonzero(codes == code).tolist()
            group_ids = [q_ids[i] for i in rows]

        def group_source(k: int, rows: Sequence[int] = rows) -> object:
            return q_source(rows[k])

        rewrite, clashes = _spellings(group_ids, group_source, stored_ids.get(dataset, []))
        handle(f"question id (dataset {dataset!r})", clashes)
        question_ids.update({(dataset, old): new for old, new in rewrite.items()})
    if problems:
        raise LoadError(problems)
    if not merged:
        return
    _rewrite(parsed, datasets=datasets, subjects=subjects, models=model_names, question_ids=question_ids)
    examples = ", ".join(f"{given!r} -> {other!r}" for given, other in merged[:5])
    parsed.notes.append(MERGED_NOTE.format(count=len(merged), examples=examples))


def _first(responses: pd.DataFrame, key: list[str], sources: pd.Series) -> dict[object, object]:
    """The source of the first response of each ``key`` value (a tuple for two columns):
    one hashed pass in pandas, then a dict of the distinct keys only."""
    first = ~responses.duplicated(key, keep="first").to_numpy()
    columns = [responses[c].to_numpy(dtype=object)[first] for c in key]
    keys = columns[0] if len(columns) == 1 else zip(*columns)
    return dict(zip(keys, sources.to_numpy(dtype=object)[first]))


def _first_of_cells(cells: DenseCells) -> tuple[dict[object, object], dict[object, object]]:
    """:func:`_first` of the questions and models of a wide or long file's compact form."""
    used = np.flatnonzero(cells.row_counts > 0)
    rows = cells.rows
    first_q = {(cells.datasets[i], cells.ids[i]): f"{cells.file}:{int(rows[i])}" for i in used.tolist()}
    first_m = {cells.models[j]: f"{cells.file}:{cells.model_row(j)}" for j in cells.model_order().tolist()}
    return first_q, first_m


def _own_sources(frame: pd.DataFrame) -> list[object]:
    """The ``source`` of each row of ``frame`` (None for every row without the column)."""
    return _values(frame["source"]) if "source" in frame.columns else [None] * len(frame)


def _values(series: pd.Series) -> list[object]:
    """The values of ``series`` as a list: what iterating it gives (NaN for a missing string),
    without iterating an Arrow string column one element at a time."""
    return series.to_numpy(dtype=object).tolist()


def _rename(series: pd.Series, mapping: dict[str, str]) -> pd.Series:
    return series.map(lambda v: mapping.get(v, v) if isinstance(v, str) else v) if mapping else series


def _rewrite(parsed: ParsedResponseSet, *, datasets: dict[str, str], subjects: dict[str, str],
             models: dict[str, str], question_ids: dict[tuple[object, str], str]) -> None:
    questions, responses, model_rows = parsed.questions.copy(), parsed.responses.copy(), parsed.models.copy()
    for frame in (questions, responses):
        frame["dataset"] = _rename(frame["dataset"], datasets)
        if question_ids:
            frame["external_id"] = [question_ids.get((d, e), e) for d, e in zip(frame["dataset"],
                                                                                  frame["external_id"])]
    questions["subject"] = _rename(questions["subject"], subjects)
    model_rows["name"] = _rename(model_rows["name"], models)
    responses["model"] = _rename(responses["model"], models)
    parsed.questions = questions.drop_duplicates(["dataset", "external_id"], keep="first").reset_index(drop=True)
    parsed.models = model_rows.drop_duplicates(["name"], keep="first").reset_index(drop=True)
    parsed.responses = responses
