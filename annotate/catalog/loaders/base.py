"""The common shape every parser produces, and the error it raises.

A parser (wide/long CSV, JSON Lines, harness logs, ...) returns a
:class:`ParsedResponseSet`; the loading service validates cross-file rules,
previews it and writes it in one transaction.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from annotate.catalog.loaders.dense import (
    RESPONSE_COLUMNS as RESPONSE_COLUMNS,  # the parsers' shared names
    DenseCells,
)

if TYPE_CHECKING:
    import pandas as pd


QUESTION_COLUMNS = ["dataset", "external_id", "subject", "text", "options", "reference_answer", "metadata"]
MODEL_COLUMNS = ["name", "family", "parameters_b", "access", "metadata"]
#: Optional column of ``questions``: each row's options cell as read (stripped) when it was decoded as
#: (strict) JSON into ``options``, else None. The loading service stores such a text as is when it is
#: exactly the JSON it would write for ``options`` (checked, :mod:`annotate.catalog.services.json_text`).
OPTIONS_TEXT = "options_text"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as the format allows.

    ``row`` is the 1-based line number in the file as a spreadsheet or editor
    shows it (the header is line 1 of a CSV); ``column`` is the header name or
    JSON key.
    """

    file: str
    message: str
    row: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f", row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        return f"{where}: {self.message}"


MORE_PROBLEMS = "... and {count:,} more problems not listed"


class LoadError(ValueError):
    """The input cannot be loaded; nothing was written. Carries the problems found
    (a parser lists up to a cap), each with file, row and column, and how many
    more it found but did not list (``n_unlisted``)."""

    def __init__(self, problems: list[Problem], *, n_unlisted: int = 0) -> None:
        self.problems = list(problems)
        self.n_unlisted = int(n_unlisted)
        head = "; ".join(str(p) for p in self.problems[:5])
        rest = self.n_problems - min(len(self.problems), 5)
        more = f" (and {rest:,} more)" if rest > 0 else ""
        super().__init__(head + more)

    @property
    def n_problems(self) -> int:
        """Every problem found, listed or not."""
        return len(self.problems) + self.n_unlisted

    def listed(self) -> list[Problem]:
        """The listed problems, then a line counting the unlisted ones (for display)."""
        if not self.n_unlisted or not self.problems:
            return list(self.problems)
        more = Problem(file=self.problems[-1].file, message=MORE_PROBLEMS.format(count=self.n_unlisted))
        return [*self.problems, more]


#: Problems :func:`problems_text` lists before counting the rest.
MAX_SHOWN_PROBLEMS = 20


def problems_text(error: LoadError, limit: int = MAX_SHOWN_PROBLEMS) -> str:
    """"Nothing was loaded:" and the first ``limit`` problems, one a line, and
    how many more there are (the text the commands show)."""
    lines = [f"  - {problem}" for problem in error.problems[:limit]]
    if error.n_problems > len(lines):
        lines.append(f"  ... and {error.n_problems - len(lines):,} more")
    return "Nothing was loaded:\n" + "\n".join(lines)


class ParsedResponseSet:
    """Everything one upload contains, in plain tables (no database ids).

    Attributes
    ----------
    questions : DataFrame with columns QUESTION_COLUMNS
        One row per (dataset, external_id). ``subject`` may be None;
        ``options`` a list of str; ``metadata`` a dict (kept optional columns).
        A questions file also gives ``source`` and :data:`OPTIONS_TEXT`.
    models : DataFrame with columns MODEL_COLUMNS
        One row per model name. ``parameters_b`` float or NaN; ``access`` one of
        "open_weight", "proprietary", "unknown".
    responses : DataFrame with columns RESPONSE_COLUMNS
        One row per observed (dataset, external_id, model) cell; ``credit`` float
        in [0, 1]; ``source`` "file:row" for error messages. Unobserved cells
        have no row (never a 0). A wide or long file (CSV, TSV, Parquet, JSON
        Lines) is parsed into ``cells`` instead,
        and this table is built from them on first access (then kept);
        setting it drops ``cells``.
    file_format : str
        "wide", "long", "jsonl", "lm-eval", "inspect", "helm", "opencompass", ...
    source_files : list of Path
        Every file read, for the checksum.
    notes : list of str
        Human-readable remarks for the load summary (e.g. "3 exact duplicate
        rows ignored", "epochs averaged into partial credit").
    options : dict
        Parser options to store with the response set (columns chosen, metric, ...).
    cells : DenseCells or None
        The compact form of a wide or long file (:mod:`annotate.catalog.loaders.dense`): the
        matrix in dense blocks on disk, question ids and model names once
        each. The loading service checks and writes from it without the long
        form. None: ``responses`` is the only form.
    """

    def __init__(
        self,
        questions: pd.DataFrame,
        models: pd.DataFrame,
        responses: pd.DataFrame | None = None,
        file_format: str = "",
        source_files: list[Path] | None = None,
        notes: list[str] | None = None,
        options: dict | None = None,
        cells: DenseCells | None = None,
    ) -> None:
        if responses is None and cells is None:
            raise ValueError("a ParsedResponseSet needs responses or cells, got neither")
        self.questions = questions
        self.models = models
        self._responses = responses
        self.cells = cells if responses is None else None
        self.file_format = file_format
        self.source_files = list(source_files or [])
        self.notes = list(notes or [])
        self.options = dict(options or {})

    def _get_responses(self) -> pd.DataFrame:
        if self._responses is None:
            if self.cells is None:  # pragma: no cover - excluded by __init__ and the setter
                raise AssertionError("no responses and no cells")
            self._responses = self.cells.long_form()
            self.cells = None
        return self._responses

    def _set_responses(self, value: pd.DataFrame) -> None:
        self._responses = value
        self.cells = None

    responses = property(_get_responses, _set_responses, doc="The long form (see the class notes).")

    def observed_counts(self) -> tuple[int, int, int]:
        """(observed cells, questions with one or more, models with one or more), from
        whichever form the set holds (never builds the long form)."""
        if self.cells is not None:
            cells = self.cells
            return (cells.n_observed, int((cells.row_counts > 0).sum()), int((cells.col_counts > 0).sum()))
        responses = self.responses
        return (len(responses), int(responses[["dataset", "external_id"]].drop_duplicates().shape[0]),
                int(responses["model"].nunique()))

    def __repr__(self) -> str:
        form = "cells" if self.cells is not None else f"{len(self.responses)} responses"
        return (f"ParsedResponseSet({self.file_format!r}, {len(self.questions)} questions, "
                f"{len(self.models)} models, {form})")
