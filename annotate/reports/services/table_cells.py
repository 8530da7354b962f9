"""The report's table type and its cells, shared by every table builder.

A :class:`Table` (title, columns, rows of :class:`Cell`, notes) renders as an
HTML table on the page and as a tidy CSV; the cell helpers (``pct``, ``dec``,
``kappa``, ``interval``, ...) format a value once for both, an undefined
statistic shown with its reason, never as NaN.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from annotate.core import counted
from annotate.models import EducationLevel, FieldOfStudy
from annotate.reports.services.model import AlignmentReport, Kappa, MethodInfo

UNDEFINED_TEXT = "undefined"


FRACTION = "fraction in [0, 1]"


COUNT = "count"


KAPPA = "Cohen's kappa in [-1, 1]"


#: The report's note on how kappa is computed on pairs.
KAPPA_NOTE = ("kappa on pairs is orientation-free: each pair counts in both orders, so chance agreement is 1/2 and "
              "kappa = 2 p_o - 1 (over the pairs both sides decided; method ties and undefined verdicts are left out "
              "of kappa and counted).")


ACCOUNT_NOTE = ("the evaluator's account name: a random pseudonym for an evaluator who joined by link or was "
                "imported, the login name of an account made by hand")
IRR_NOTE = ("Krippendorff's alpha and Fleiss' kappa on pairs are orientation-free: each pair counts in both orders "
            "(pair counts below count each pair once).")


TIES_NOTE = ("Ties: agreement counts a method tie or undefined verdict on a scored pair as a miss; 'excl. ties' is the "
             "agreement among the pairs the method decided; 'Ties' counts the method's ties.")


EXCL_TIES = "the method decided no scored pair"


SKIPPED_BY_ONE_TITLE = "shared pairs left out because this evaluator or the others skipped"


#: Evaluator background codes -> labels shown on the page.
CODE_LABELS = {"field_of_study": dict(FieldOfStudy.choices), "education_level": dict(EducationLevel.choices)}


@dataclass(frozen=True)
class Cell:
    value: float | int | str | None
    text: str
    reason: str | None = None

    @property
    def undefined(self) -> bool:
        return self.reason is not None

    @property
    def numeric(self) -> bool:
        """Right-aligned on the page: a number, or an undefined number."""
        return self.undefined or (isinstance(self.value, (int, float)) and not isinstance(self.value, bool))


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    unit: str = ""
    description: str = ""
    title: str = ""
    on_page: bool = True


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    on_page: bool = True
    in_csv: bool = True
    #: A large table's CSV rows (raw values, every row) when ``rows`` holds one page only.
    raw_rows: Callable[[], Iterable[Sequence]] | None = None
    #: Rows in the whole table and where ``rows`` starts in it (``None``: ``rows`` is the whole table).
    total_rows: int | None = None
    offset: int = 0
    #: The page of a paginated page table (:func:`page_tables`); None = every row shown.
    page: Page | None = None

    @property
    def file_name(self) -> str:
        return f"{self.key}.csv"

    def _shown(self) -> list[int]:
        return [i for i, c in enumerate(self.columns) if c.on_page]

    @property
    def header(self) -> tuple[str, ...]:
        """Page headers."""
        return tuple(self.columns[i].label for i in self._shown())

    def page_columns(self) -> list[tuple[str, str]]:
        """``(label, tooltip)`` of each column shown on the page."""
        return [(self.columns[i].label, self.columns[i].title) for i in self._shown()]

    def page_header(self) -> list[tuple[str, str, bool]]:
        """``(label, tooltip, numeric)`` of each page column; numeric (right-aligned,
        as its cells) when any of its cells is a number."""
        shown = self._shown()
        return [(self.columns[i].label, self.columns[i].title, any(row[i].numeric for row in self.rows))
                for i in shown]

    def page_rows(self) -> list[tuple[Cell, ...]]:
        shown = self._shown()
        return [tuple(row[i] for i in shown) for row in self.rows]

    def csv_rows(self) -> Iterator[list]:
        """One header row of column keys, then the raw values (None = blank) of every row."""
        yield [c.key for c in self.columns]
        if self.raw_rows is not None:
            yield from (list(row) for row in self.raw_rows())
        else:
            yield from ([cell.value for cell in row] for row in self.rows)

    @property
    def n_rows(self) -> int:
        """Rows of the whole table (``rows`` may be one page of it)."""
        return len(self.rows) if self.total_rows is None else self.total_rows


@dataclass(frozen=True)
class Page:
    """One page of a paginated table: 1-based ``number`` of ``n_pages``, rows ``first``..``last`` (1-based)."""

    number: int
    n_pages: int
    first: int
    last: int
    total: int

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.n_pages else None


def page_of(total: int, number: int, per_page: int) -> Page:
    """Page ``number`` (clamped to 1..n_pages) of ``total`` rows, ``per_page`` a page."""
    n_pages = max(1, -(-total // per_page))
    number = min(max(1, number), n_pages)
    first = (number - 1) * per_page
    return Page(number=number, n_pages=n_pages, first=first + 1 if total else 0, last=min(total, first + per_page),
                total=total)


def text(value: str | None) -> Cell:
    return Cell(value or None, value or "")


def code(value: str, labels: dict[str, str]) -> Cell:
    """A TextChoices code: the code in the CSV, its label on the page."""
    return Cell(value or None, labels.get(value, value))


def not_applicable() -> Cell:
    return Cell(None, "—")


def count(value: int | None) -> Cell:
    return Cell(value, "–" if value is None else str(value))


def _undefined(reason: str | None) -> Cell:
    return Cell(None, UNDEFINED_TEXT, reason or "undefined")


def pct(value: float | None, reason: str | None = None, digits: int = 1) -> Cell:
    """A fraction (raw in the CSV) shown in percent; an undefined one as "undefined" with its reason."""
    if value is None:
        return _undefined(reason)
    return Cell(value, f"{100.0 * value:.{digits}f}")


def dec(value: float | None, reason: str | None = None, digits: int = 2) -> Cell:
    if value is None:
        return _undefined(reason)
    return Cell(value, f"{value:.{digits}f}")


def kappa(k: Kappa) -> Cell:
    return dec(k.value, k.undefined_reason)


def pvalue(value: float | None, reason: str | None = None) -> Cell:
    if value is None:
        return _undefined(reason)
    return Cell(value, f"{value:.3g}")


def interval(ci: tuple[float, ...] | None, reason: str | None, scale: float = 100.0,
             digits: int = 1) -> tuple[Cell, Cell]:
    if ci is None:
        return (_undefined(reason),) * 2
    return tuple(Cell(x, f"{scale * x:.{digits}f}") for x in ci)  # type: ignore[return-value]


def merged_notes(notes: tuple[str, ...]) -> tuple[str, ...]:
    """Each distinct note once: notes "<label>: <text>" that share their text
    become one "<label>, <label>: <text>" (first-seen order); exact repeats go."""
    merged: dict[str, list[str]] = {}
    for note in notes:
        label, sep, rest = note.partition(": ")
        key, who = (rest, label) if sep and label and len(label) <= 40 else (note, "")
        labels = merged.setdefault(key, [])
        if who and who not in labels:
            labels.append(who)
    return tuple(f"{', '.join(labels)}: {key}" if labels else key for key, labels in merged.items())


_METHOD = Column("method", "Method key", "", "difficulty method key (scoring.methods registry)", on_page=False)


_METHOD_LABEL = Column("method_label", "Method", "", "difficulty method display label")


def _missing_notes(report: AlignmentReport) -> tuple[str, ...]:
    return tuple(f"{m.label}: not scored ({m.undefined_reason})" for m in report.methods if not m.available)


def tie_notes(report: AlignmentReport) -> tuple[str, ...]:
    """How ties are called: each method's registry tolerance, and for a method
    fitted with several seeds how many verdicts are ties because the seeds disagree."""
    shown = ", ".join(f"{m.label} {m.tie_tolerance:g}" for m in report.available)
    notes = [f"A method calls a pair a tie when its two difficulties differ by at most its tie tolerance times "
             f"the spread (max - min) of its values over the study's questions ({shown}), so numerical noise "
             f"never decides a verdict."] if shown else []
    for m in report.available:
        if m.unstable_verdicts is not None:
            notes.append(f"{m.label}: the mean of {counted(m.n_replicates, 'fit')} with different seeds; "
                         f"{m.unstable_verdicts} of {counted(len(report.pairs), 'pair verdict')} "
                         f"{'is a tie' if m.unstable_verdicts == 1 else 'are ties'} because the seeds "
                         f"disagree on the order (unstable).")
        if m.bound_verdicts:
            notes.append(f"{m.label}: {m.bound_verdicts} of {len(report.pairs)} pair verdicts involve a question "
                         f"whose value lies on the fit's bound (the bound, not an estimate; flagged per question "
                         f"in the run's downloads, *_at_bound).")
    return tuple(notes)


def _bounded(report: AlignmentReport, keys: Iterable[str]) -> list[MethodInfo]:
    """The available methods, in report order, that have bound flags (``keys``: the flagged method keys)."""
    flagged = set(keys)
    return [m for m in report.available if m.key in flagged]


def _flag(value: int | None) -> Cell:
    """A 0/1 bound flag; blank when undefined."""
    return Cell(value, "–" if value is None else str(value), None if value is not None else "undefined")
