"""Every table of the alignment report, built once from the typed report
(:class:`~annotate.reports.services.model.AlignmentReport`): the page shows
them, the tidy CSV files are written from them, the codebook describes them.

Each :class:`Cell` keeps the raw value (the CSV: fractions in [0, 1], ids as
integers, ``None`` = blank = missing), the text shown on the page (agreements
in percent, codes such as ``field_of_study`` as their labels) and, when the
value is undefined, the reason (a tooltip on the page; in the CSV the cell is
blank and report.json holds the reason). Each :class:`Column` has a
snake_case ``key`` (the CSV header), a page ``label``, a unit and a meaning
(the codebook). A table is shown on the page, written as a CSV, or both: the
page's wide tables 2 and kappa (methods x evaluators) are the long tidy
``agreement`` table in the CSV.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from annotate.core import CONSENSUS_LABELS, label
from annotate.models import EducationLevel, FieldOfStudy
from annotate.reports.services.headline import uncertainty_notes
from annotate.reports.services.model import AlignmentReport, Kappa, MethodInfo

UNDEFINED_TEXT = "undefined"
FRACTION = "fraction in [0, 1]"
COUNT = "count"
KAPPA = "Cohen's kappa in [-1, 1]"
#: The report's note on how kappa is computed on pairs.
KAPPA_NOTE = ("kappa on pairs is orientation-free: each pair counts in both orders, so chance agreement is 1/2 and "
              "kappa = 2 p_o - 1 (over the pairs both sides decided; method ties and undefined verdicts are left out "
              "of kappa and counted).")
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


# --- cells ----------------------------------------------------------------------------


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


# --- tables ----------------------------------------------------------------------------

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
            notes.append(f"{m.label}: the mean of {m.n_replicates} fits with different seeds; "
                         f"{m.unstable_verdicts} of {len(report.pairs)} pair verdicts are ties because the seeds "
                         f"disagree on the order (unstable).")
        if m.bound_verdicts:
            notes.append(f"{m.label}: {m.bound_verdicts} of {len(report.pairs)} pair verdicts involve a question "
                         f"whose value lies on the fit's bound (the bound, not an estimate; flagged per question "
                         f"in the run's downloads, *_at_bound).")
    return tuple(notes)


def table2(report: AlignmentReport) -> Table:
    """Paper table 2: rows = methods, columns = evaluators, their mean, the consensus, kappa."""
    evaluators = report.evaluators
    rows = []
    for m in report.available:
        mean = report.method_summary[m.key].agreement
        cons = report.consensus_agreement[m.key]
        rows.append((
            text(m.key), text(m.label),
            *(pct(e.methods[m.key].agreement, e.methods[m.key].undefined_reason) for e in evaluators),
            pct(mean.mean, mean.note),
            pct(cons.agreement, cons.undefined_reason),
            pct(cons.agreement_excluding_ties, cons.undefined_reason or EXCL_TIES),
            count(cons.n_ties),
            kappa(cons.kappa),
        ))
    notes = tuple(f"{m.label}: evaluator {report.method_summary[m.key].agreement.note}" for m in report.available)
    notes += (TIES_NOTE, KAPPA_NOTE)
    return Table(
        key="table2", title="Agreement with each evaluator and with the consensus (%)",
        columns=(_METHOD, _METHOD_LABEL,
                 *(Column(e.short.lower(), e.short, FRACTION, f"agreement with evaluator {e.short}", e.pseudonym)
                   for e in evaluators),
                 Column("evaluator_mean", "Evaluator mean", FRACTION, "mean over evaluators (defined values)"),
                 Column("consensus", "Consensus", FRACTION, "agreement with the consensus (ties as misses)",
                        "ties and undefined count as misses"),
                 Column("consensus_excluding_ties", "Consensus excl. ties", FRACTION,
                        "agreement with the consensus among the pairs the method decided",
                        "agreement among the pairs the method decided"),
                 Column("consensus_ties", "Ties (consensus)", COUNT, "method ties on the pairs with a consensus",
                        "pairs with a consensus where the method gives both questions the same value"),
                 Column("kappa_consensus", "κ (consensus)", KAPPA, "", "Cohen's kappa with the consensus")),
        rows=tuple(rows), notes=notes + _missing_notes(report), in_csv=False,
    )


def table2_excluding_ties(report: AlignmentReport) -> Table:
    """Table 2 with the method's ties left out: agreement among the pairs the method decided,
    with the tie counts (page only; the CSV has both figures in ``agreement.csv``)."""
    evaluators = report.evaluators
    rows = []
    for m in report.available:
        mean = report.method_summary[m.key].agreement_excluding_ties
        cons = report.consensus_agreement[m.key]
        mine = [e.methods[m.key] for e in evaluators]
        rows.append((
            text(m.key), text(m.label),
            *(pct(a.agreement_excluding_ties, a.undefined_reason or EXCL_TIES) for a in mine),
            pct(mean.mean, mean.note),
            count(sum(a.n_ties for a in mine)),
            pct(cons.agreement_excluding_ties, cons.undefined_reason or EXCL_TIES),
            count(cons.n_ties),
        ))
    notes = tuple(f"{m.label}: evaluator {report.method_summary[m.key].agreement_excluding_ties.note}"
                  for m in report.available)
    return Table(
        key="table2_excluding_ties", title="Agreement excluding the method's ties (%)",
        columns=(_METHOD, _METHOD_LABEL,
                 *(Column(e.short.lower(), e.short, FRACTION,
                          f"agreement with evaluator {e.short} among the pairs the method decided", e.pseudonym)
                   for e in evaluators),
                 Column("evaluator_mean", "Evaluator mean", FRACTION, "mean over evaluators (defined values)"),
                 Column("evaluator_ties", "Ties (evaluators)", COUNT,
                        "method ties summed over the evaluators' voted pairs",
                        "method ties summed over the evaluators' voted pairs"),
                 Column("consensus", "Consensus", FRACTION,
                        "agreement with the consensus among the pairs the method decided"),
                 Column("consensus_ties", "Ties (consensus)", COUNT, "method ties on the pairs with a consensus")),
        rows=tuple(rows), notes=(*notes, TIES_NOTE), in_csv=False,
    )


def kappa_table(report: AlignmentReport) -> Table:
    """Cohen's kappa of each evaluator with each method (rows = methods)."""
    evaluators = report.evaluators
    rows = []
    for m in report.available:
        mean = report.method_summary[m.key].kappa
        rows.append((text(m.key), text(m.label), *(kappa(e.methods[m.key].kappa) for e in evaluators),
                     dec(mean.mean, mean.note)))
    notes = tuple(f"{m.label}: kappa {report.method_summary[m.key].kappa.note}" for m in report.available)
    notes += (KAPPA_NOTE,)
    return Table(
        key="kappa", title="Cohen's kappa of each evaluator with each method",
        columns=(_METHOD, _METHOD_LABEL,
                 *(Column(e.short.lower(), e.short, KAPPA, "", e.pseudonym) for e in evaluators),
                 Column("evaluator_mean", "Evaluator mean", KAPPA)),
        rows=tuple(rows), notes=notes, in_csv=False,
    )


def agreement_table(report: AlignmentReport) -> Table:
    """Tidy table 2 and kappa: one row per method and rater (each evaluator, then the consensus)."""
    rows = []
    for m in report.available:
        for e in report.evaluators:
            a = e.methods[m.key]
            rows.append((text(m.key), text(m.label), text(e.short), text(e.pseudonym),
                         pct(a.agreement, a.undefined_reason),
                         pct(a.agreement_excluding_ties, a.undefined_reason or EXCL_TIES),
                         count(a.n_pairs), count(a.n_agree), count(a.n_ties), count(a.n_undefined), kappa(a.kappa)))
        c = report.consensus_agreement[m.key]
        rows.append((text(m.key), text(m.label), text("consensus"), Cell(None, ""),
                     pct(c.agreement, c.undefined_reason),
                     pct(c.agreement_excluding_ties, c.undefined_reason or EXCL_TIES),
                     count(c.n_pairs), count(c.n_agree), count(c.n_ties), count(c.n_undefined), kappa(c.kappa)))
    return Table(
        key="agreement", title="Agreement of each method with each evaluator and with the consensus",
        columns=(
            _METHOD, _METHOD_LABEL,
            Column("rater", "Rater", "",
                   "evaluator short name (V1, V2, ... in order of joining; see evaluators.csv) or 'consensus'"),
            Column("pseudonym", "Pseudonym", "", "evaluator's pseudonym (blank for the consensus)"),
            Column("agreement", "Agreement", FRACTION,
                   "share of the rater's voted pairs on which the method names the same harder question; "
                   "a method tie or missing value counts as a miss; blank = undefined"),
            Column("agreement_excluding_ties", "Excl. ties", FRACTION,
                   "n_agree / (n_pairs - n_ties - n_undefined): agreement among the pairs the method decided; "
                   "blank = undefined"),
            Column("n_pairs", "Pairs", COUNT, "pairs with a human verdict"),
            Column("n_agree", "Agree", COUNT, "pairs where the method gives the human verdict"),
            Column("n_ties", "Ties", COUNT, "pairs where the method gives both questions the same value"),
            Column("n_undefined", "Undefined", COUNT, "pairs where the method has no value for a question"),
            Column("kappa", "κ", KAPPA,
                   "orientation-free Cohen's kappa of the method's verdicts with the rater's (2 p_o - 1 over the "
                   "pairs the method decided); blank = undefined"),
        ),
        rows=tuple(rows), on_page=False, notes=(TIES_NOTE, KAPPA_NOTE),
    )


def consensus_table(report: AlignmentReport) -> Table:
    """Each method against the consensus: counts, agreement and kappa with intervals, McNemar."""
    tests = {t.method_b: t for t in report.mcnemar}
    rows = []
    for m in report.available:
        c = report.consensus_agreement[m.key]
        ci = c.ci
        t = tests.get(m.key)
        mcnemar = (not_applicable(),) * 3 if t is None else (
            count(t.b), count(t.c), pvalue(t.p_value, t.undefined_reason))
        rows.append((
            text(m.key), text(m.label), count(c.n_pairs), count(c.n_agree), count(c.n_ties), count(c.n_undefined),
            pct(c.agreement, c.undefined_reason), *interval(ci.agreement, ci.undefined_reason),
            pct(c.agreement_excluding_ties, "the method decided no scored pair"),
            kappa(c.kappa), *interval(ci.kappa, ci.undefined_reason, scale=1.0, digits=2),
            *mcnemar,
        ))
    level = report.params.ci_level
    boot = "bootstrap percentile interval"
    return Table(
        key="consensus", title="Each method against the consensus",
        columns=(
            _METHOD, _METHOD_LABEL,
            Column("n_pairs", "Pairs", COUNT, "pairs with a consensus", "pairs with a consensus"),
            Column("n_agree", "Agree", COUNT, "pairs where the method gives the consensus verdict",
                   "pairs where the method gives the consensus verdict"),
            Column("n_ties", "Ties", COUNT, "pairs where the method gives both questions the same value",
                   "pairs where the method gives both questions the same value"),
            Column("n_undefined", "Undefined", COUNT, "pairs where the method has no value for a question",
                   "pairs where the method has no value for a question"),
            Column("agreement", "Agreement %", FRACTION, "agreement with the consensus; ties and undefined are misses",
                   "ties and undefined count as misses"),
            Column("agreement_ci_low", f"{level:.0%} CI low", FRACTION, f"{level:.0%} {boot}, lower end", boot),
            Column("agreement_ci_high", f"{level:.0%} CI high", FRACTION, f"{level:.0%} {boot}, upper end", boot),
            Column("agreement_excluding_ties", "Excl. ties %", FRACTION,
                   "agreement among the pairs the method decided", "agreement among the pairs the method decided"),
            Column("kappa", "κ", KAPPA, "Cohen's kappa with the consensus", "Cohen's kappa with the consensus"),
            Column("kappa_ci_low", "κ CI low", KAPPA, f"{level:.0%} {boot} of kappa, lower end", boot),
            Column("kappa_ci_high", "κ CI high", KAPPA, f"{level:.0%} {boot} of kappa, upper end", boot),
            Column("mcnemar_b", "McNemar b", COUNT, "pairs only EIP gets right (blank on the EIP row)",
                   "pairs only EIP gets right"),
            Column("mcnemar_c", "McNemar c", COUNT, "pairs only this method gets right (blank on the EIP row)",
                   "pairs only this method gets right"),
            Column("mcnemar_p", "McNemar p", "p-value", "exact two-sided McNemar test of EIP against this method",
                   "exact two-sided McNemar test of EIP against this method"),
        ),
        rows=tuple(rows),
        notes=(
            f"Intervals: percentile bootstrap over the scored pairs, {report.params.n_boot} replicates, "
            f"seed {report.params.bootstrap_seed}.",
            "A method tie or undefined verdict on a scored pair counts as a miss; "
            "'Agreement excl. ties' shows the other convention.",
            "McNemar: exact two-sided test of EIP against the method on the pairs with a consensus.",
            KAPPA_NOTE,
            *tie_notes(report),
            *uncertainty_notes(report).get("consensus", ()),
        ),
    )


def evaluator_table(report: AlignmentReport) -> Table:
    """One row per evaluator (readable however many there are)."""
    methods = report.available
    rows = []
    for e in report.evaluators:
        o = e.vs_others
        rows.append((
            count(e.id), text(e.short), text(e.pseudonym), code(e.field_of_study, CODE_LABELS["field_of_study"]),
            code(e.education_level, CODE_LABELS["education_level"]), count(e.n_votes), count(e.n_skips),
            *(pct(e.methods[m.key].agreement, e.methods[m.key].undefined_reason) for m in methods),
            *(pct(e.methods[m.key].agreement_excluding_ties, e.methods[m.key].undefined_reason or EXCL_TIES)
              for m in methods),
            *(count(e.methods[m.key].n_ties) for m in methods),
            pct(o.agreement, o.undefined_reason), count(o.n), kappa(o.kappa), count(o.pairs_skipped_by_one),
        ))
    return Table(
        key="evaluators", title="Evaluators: agreement with each method and with the others (%)",
        columns=(
            Column("evaluator_id", "Id", "", "participation id", on_page=False),
            Column("evaluator", "", "", "short name: V1, V2, ... in order of joining"),
            Column("pseudonym", "Pseudonym", "", "the evaluator's pseudonym"),
            Column("field_of_study", "Field", "", "field of study (code)"),
            Column("education_level", "Education", "", "education level (code)"),
            Column("n_votes", "Votes", COUNT, "pairs voted on (not skipped)"),
            Column("n_skips", "Skips", COUNT, "pairs skipped"),
            *(Column(f"agreement_{m.key}", m.label, FRACTION, f"agreement with {m.label} over the voted pairs")
              for m in methods),
            *(Column(f"agreement_excluding_ties_{m.key}", f"{m.label} excl. ties", FRACTION,
                     f"agreement with {m.label} among the voted pairs it decided", on_page=False)
              for m in methods),
            *(Column(f"n_ties_{m.key}", f"{m.label} ties", COUNT, f"{m.label} ties on the voted pairs",
                     on_page=False)
              for m in methods),
            Column("agreement_others", "Others' consensus", FRACTION,
                   "agreement with the consensus of every other evaluator (this one left out)"),
            Column("n_pairs_others", "Pairs vs others", COUNT, "pairs in that comparison"),
            Column("kappa_others", "κ vs others", KAPPA, "Cohen's kappa with the others' consensus"),
            Column("pairs_skipped_by_one", "Left out by skips", COUNT,
                   "shared pairs left out of the comparison with the others because of skips: this evaluator "
                   "skipped while another voted, this evaluator voted while every other judgment of the pair is a "
                   "skip, or both sides skipped", SKIPPED_BY_ONE_TITLE),
        ),
        rows=tuple(rows),
        notes=("'Others' consensus' = the consensus of every other evaluator (this one left out).",
               "Agreement with each method counts its ties as misses; the CSV adds the agreement excluding ties "
               "and the tie count per method (the page shows them in 'Agreement excluding the method's ties').",
               "'Left out by skips' counts the shared pairs (judged by this evaluator and by another) left out of "
               "'Pairs vs others' because this evaluator skipped while another voted, this evaluator voted while "
               "the others only skipped, or everyone who judged the pair skipped it.",
               KAPPA_NOTE),
    )


def irr_table(report: AlignmentReport) -> Table:
    """Inter-rater reliability: one row per statistic (the page shows it as text)."""
    a, f = report.irr.krippendorff_alpha, report.irr.fleiss_kappa
    rows = (
        (text("krippendorff_alpha"), dec(a.value, a.undefined_reason, digits=3), count(a.n_units_pairable),
         count(report.irr.n_raters), text("every evaluator and pair, skips missing (nominal)")),
        (text("fleiss_kappa"), dec(f.value, f.undefined_reason, digits=3), count(f.n_items), count(f.n_raters),
         text(f.scope)),
    )
    return Table(
        key="irr", title="Inter-rater reliability",
        columns=(
            Column("statistic", "Statistic", "", "krippendorff_alpha or fleiss_kappa"),
            Column("value", "Value", "agreement beyond chance, at most 1",
                   "the statistic; blank = undefined (report.json gives the reason)"),
            Column("n_pairs", "Pairs", COUNT, "pairs the statistic uses"),
            Column("n_raters", "Raters", COUNT, "evaluators who voted"),
            Column("scope", "Scope", "", "which pairs and evaluators enter"),
        ),
        rows=rows, on_page=False, notes=(IRR_NOTE,),
    )


def pool_table(report: AlignmentReport) -> Table:
    pools = report.pools
    rows = []
    for p in pools.pools:
        reason = p.undefined_reason
        c = p.consensus
        no_obs = reason or "no observed question"
        rows.append((
            text(p.name), text(p.kind), count(p.n_models), pct(p.share_dead, no_obs),
            pct(p.share_all_solved, no_obs), pct(p.share_all_failed, no_obs),
            *(dec(p.correlations[m].value, p.correlations[m].undefined_reason)
              for m in ("spearman", "pearson", "kendall")),
            pct(None if c is None else c.agreement,
                reason or (c.undefined_reason if c is not None else "no stored per-question difficulty")),
            pct(None if c is None else c.agreement_excluding_ties,
                reason or ((c.undefined_reason or EXCL_TIES) if c is not None
                           else "no stored per-question difficulty")),
            count(None if c is None else c.n_ties),
            dec(None if c is None else c.kappa.value,
                reason or (c.kappa.undefined_reason if c is not None else "no stored per-question difficulty")),
        ))
    notes = []
    if pools.available:
        notes.append(f"From the stored model-pool analysis {pools.analysis_run} (EIP alpha {pools.alpha:g}"
                     + (f", computed {pools.computed_at[:19].replace('T', ' ')} UTC" if pools.computed_at else "")
                     + f"); correlations with the whole pool over {pools.correlation_scope}.")
    if pools.note:
        notes.append(pools.note)
    if pools.unknown_size_models:
        notes.append("In no size pool (size unknown): " + ", ".join(pools.unknown_size_models) + ".")
    if pools.unknown_access_models:
        notes.append("In no access pool (access unknown): " + ", ".join(pools.unknown_access_models) + ".")
    if not pools.available:
        notes.append(f"No stored model-pool analysis to show ({pools.status.replace('_', ' ')}).")
    return Table(
        key="pools", title="Model pools: EIP rerun on subsets of the models",
        columns=(
            Column("pool", "Pool", "", "model pool: whole, a size class, or an access class"),
            Column("kind", "Kind", "", "whole, size or access", on_page=False),
            Column("n_models", "Models", COUNT, "models in the pool"),
            Column("share_dead", "Dead nodes %", FRACTION,
                   "share of observed questions every model of the pool solved or failed"),
            Column("share_all_solved", "All solved %", FRACTION, "share solved by every model of the pool"),
            Column("share_all_failed", "All failed %", FRACTION, "share failed by every model of the pool"),
            *(Column(m, m.capitalize(), "correlation in [-1, 1]",
                     f"{m.capitalize()} correlation of the pool's EIP difficulty with the whole pool's")
              for m in ("spearman", "pearson", "kendall")),
            Column("consensus_agreement", "Consensus agreement %", FRACTION,
                   "agreement of the pool's EIP verdicts with the consensus on the study's pairs (ties as misses)"),
            Column("consensus_agreement_excluding_ties", "Excl. ties %", FRACTION,
                   "the same among the pairs the pool's EIP decided"),
            Column("consensus_n_ties", "Ties", COUNT, "pairs with a consensus the pool's EIP calls a tie"),
            Column("consensus_kappa", "κ (consensus)", KAPPA, "Cohen's kappa of those verdicts with the consensus"),
        ),
        rows=tuple(rows), notes=(*notes, KAPPA_NOTE),
    )


LABEL_ANALYSIS_NOTE = ("Every same-subject pair of labelled questions of the run whose labels differ by more than the "
                       "margin (not only the study's questions); label ties: same-subject pairs left out because their "
                       "labels differ by at most the margin. Agreement counts method ties and undefined verdicts as "
                       "misses; excl. ties is over the pairs the method decided; kappa = 2 p_o - 1. Intervals: "
                       "percentile bootstrap resampling questions.")


def label_analysis_table(report: AlignmentReport) -> Table:
    """The label section's headline figures: the human-label analysis over every labelled
    question of the run, one row per method and margin (:func:`~annotate.reports.services.labels.label_analysis`)."""
    labels = report.labels
    analysis = labels.analysis
    rows = []
    known = {m.key: m.label for m in report.methods}
    for m in (analysis or {}).get("methods", ()):
        rho = m["spearman"]
        no_rho = rho.get("undefined_reason") or "undefined"
        for p in m["pairs"]:
            excl = p["agreement_excluding_ties"]
            rows.append((
                text(m["method"]), text(known.get(m["method"], m["method"])), dec(p["margin"]), count(p["n_pairs"]),
                count(p["n_label_ties"]), count(p["n_agree"]), count(p["n_disagree"]), count(p["n_method_ties"]),
                count(p["n_undefined"]), pct(p["agreement"], "no scored pair"),
                *interval(p["agreement_ci"], "no bootstrap"),
                pct(excl, EXCL_TIES), *interval(p["agreement_excluding_ties_ci"], "no bootstrap"),
                dec(p["kappa"], EXCL_TIES), *interval(p["kappa_ci"], "no bootstrap", scale=1.0, digits=2),
                dec(rho["value"], no_rho), *interval(m["spearman_ci"], "no bootstrap", scale=1.0, digits=2),
                count(m["n_questions"]),
            ))
    notes = [LABEL_ANALYSIS_NOTE]
    if analysis is not None:
        notes.insert(0, f"Label {labels.key!r} ({analysis['label_direction']}): {analysis['n_questions_labelled']:,} "
                        f"of the run's {analysis['n_questions_run']:,} questions labelled; "
                        f"{analysis['n_boot']} bootstrap replicates"
                        + (f"; read from the stored analysis {labels.analysis_run}" if labels.analysis_run else "")
                        + ".")
        if analysis.get("undefined_reason"):
            notes.append(f"No label analysis: {analysis['undefined_reason']}.")
    elif labels.undefined_reason:
        notes.append(f"No label analysis: {labels.undefined_reason}.")
    return Table(
        key="labels_analysis",
        title=(f"Against the human difficulty label {labels.key!r}: every labelled question" if labels.key
               else "Human difficulty label: every labelled question"),
        columns=(
            _METHOD, _METHOD_LABEL,
            Column("margin", "Margin", "label units", "a pair counts when its labels differ by more than this"),
            Column("n_pairs", "Pairs", COUNT, "same-subject pairs of labelled questions scored at this margin"),
            Column("n_label_ties", "Label ties", COUNT, "same-subject labelled pairs within the margin (left out)"),
            Column("n_agree", "Agree", COUNT, "pairs the method orders as the label does"),
            Column("n_disagree", "Disagree", COUNT, "pairs the method orders the other way"),
            Column("n_method_ties", "Method ties", COUNT, "pairs within the method's tie tolerance"),
            Column("n_undefined", "Undefined", COUNT, "pairs with a question the method has no value for"),
            Column("agreement", "Agreement %", FRACTION, "n_agree / pairs (ties as misses)"),
            Column("agreement_ci_low", "low", FRACTION, "bootstrap interval, low end"),
            Column("agreement_ci_high", "high", FRACTION, "bootstrap interval, high end"),
            Column("agreement_excluding_ties", "Excl. ties %", FRACTION, "n_agree / (n_agree + n_disagree)"),
            Column("agreement_excluding_ties_ci_low", "low", FRACTION, "bootstrap interval, low end"),
            Column("agreement_excluding_ties_ci_high", "high", FRACTION, "bootstrap interval, high end"),
            Column("kappa", "κ", KAPPA, "2 * agreement excluding ties - 1"),
            Column("kappa_ci_low", "κ low", KAPPA, "bootstrap interval, low end", on_page=False),
            Column("kappa_ci_high", "κ high", KAPPA, "bootstrap interval, high end", on_page=False),
            Column("spearman", "Spearman ρ", "correlation in [-1, 1]",
                   "Spearman correlation of the method with the label over the labelled questions"),
            Column("spearman_ci_low", "ρ low", "correlation in [-1, 1]", "bootstrap interval, low end",
                   on_page=False),
            Column("spearman_ci_high", "ρ high", "correlation in [-1, 1]", "bootstrap interval, high end",
                   on_page=False),
            Column("n_questions", "Questions", COUNT, "labelled questions of the run"),
        ),
        rows=tuple(rows), notes=tuple(notes),
    )


def label_table(report: AlignmentReport) -> Table:
    labels = report.labels
    scopes = labels.scopes
    rows = []
    for m in report.available if labels.undefined_reason is None else ():
        row = [text(m.key), text(m.label)]
        for scope in scopes.values():
            a = scope.methods[m.key]
            row += [pct(a.agreement, a.undefined_reason),
                    pct(a.agreement_excluding_ties, a.undefined_reason or EXCL_TIES),
                    count(a.n_ties), kappa(a.kappa)]
        s = labels.spearman[m.key]
        rows.append((*row, dec(s.value, s.undefined_reason), count(s.n)))
    notes = [f"{label(name, 'scope')}: {scope.description} ({scope.n_pairs:,} pairs)."
             for name, scope in scopes.items()]
    if labels.undefined_reason is None:
        cons = scopes["study_pairs"].consensus
        shown = "undefined" if cons is None or cons.agreement is None else f"{100 * cons.agreement:.1f}%"
        notes.append(f"Human consensus vs the label on the study pairs: {shown} over {0 if cons is None else cons.n} "
                     "pairs.")
        notes.append(f"Spearman over the {labels.spearman_scope}.")
        notes.append(TIES_NOTE)
        notes.append(KAPPA_NOTE)
    else:
        notes.append(f"No label analysis: {labels.undefined_reason}.")
    return Table(
        key="labels",
        title=(f"Against the human difficulty label {labels.key!r}: the study's own questions" if labels.key
               else "Human difficulty label: the study's own questions"),
        columns=(
            _METHOD, _METHOD_LABEL,
            Column("agreement_study_pairs", "Study pairs %", FRACTION,
                   "agreement with the label on the study's pairs with two different labels (ties as misses)"),
            Column("agreement_excluding_ties_study_pairs", "Excl. ties %", FRACTION,
                   "the same among those pairs the method decided"),
            Column("n_ties_study_pairs", "Ties", COUNT, "method ties on those pairs"),
            Column("kappa_study_pairs", "κ", KAPPA, "Cohen's kappa with the label on those pairs"),
            Column("agreement_same_subject_pairs", "All same-subject pairs %", FRACTION,
                   "agreement with the label on every same-subject pair of the study's questions (ties as misses)"),
            Column("agreement_excluding_ties_same_subject_pairs", "Excl. ties %", FRACTION,
                   "the same among those pairs the method decided"),
            Column("n_ties_same_subject_pairs", "Ties", COUNT, "method ties on those pairs"),
            Column("kappa_same_subject_pairs", "κ", KAPPA, "Cohen's kappa with the label on those pairs"),
            Column("spearman", "Spearman ρ", "correlation in [-1, 1]",
                   "Spearman correlation of the method's difficulty with the label"),
            Column("n_questions", "Questions", COUNT, "labelled questions in that correlation"),
        ),
        rows=tuple(rows), notes=tuple(notes),
    )


def pairs_table(report: AlignmentReport, offset: int = 0, limit: int | None = None) -> Table:
    """One row per pair: votes, skips, the consensus and how it was reached, each method's verdict.

    ``rows`` holds pairs ``offset`` to ``offset + limit`` (the page's cells);
    the CSV (``raw_rows``) has every pair, written from the report's columns."""
    methods = report.available
    bounded = _bounded(report, report.pairs.at_bound)
    rows = []
    stop = len(report.pairs) if limit is None else min(len(report.pairs), offset + limit)
    for p in report.pairs[offset:stop]:
        c = p.consensus
        weights = (not_applicable(),) * 2 if c.weight_a is None else (dec(c.weight_a), dec(c.weight_b))
        rows.append((
            count(p.pair_id), count(p.position + 1), text(p.subject),
            text(p.question_a.dataset), text(p.question_a.external_id), count(p.question_a.id),
            text(p.question_b.dataset), text(p.question_b.external_id), count(p.question_b.id),
            count(c.votes_a), count(c.votes_b), count(c.n_skips),
            Cell(c.verdict, c.verdict or "–", c.reason if c.verdict is None else None),
            code(c.method, CONSENSUS_LABELS), *weights,
            *(text(p.methods[m.key]) for m in methods),
            *(_flag((p.at_bound or {}).get(m.key)) for m in bounded),
        ))
    verdict = "'a' = question a is harder, 'b' = question b, 'tie', or 'undefined'"
    several = len(report.study.datasets) != 1  # one dataset: its name is in the notes, not on every row
    return Table(
        key="pairs", title="Pairs: votes, consensus and each method's verdict",
        columns=(
            Column("pair_id", "Pair id", "", "pair id", on_page=False),
            Column("position", "#", "", "position of the pair in the study (1 = first)"),
            Column("subject", "Subject", "", "subject of the pair's questions"),
            Column("dataset_a", "Dataset a", "", "dataset of question a", on_page=several),
            Column("question_a", "Question a", "", "external id of question a in dataset_a"),
            Column("question_a_pk", "Question a key", "", "database key of question a on this site", on_page=False),
            Column("dataset_b", "Dataset b", "", "dataset of question b", on_page=several),
            Column("question_b", "Question b", "", "external id of question b in dataset_b"),
            Column("question_b_pk", "Question b key", "", "database key of question b on this site", on_page=False),
            Column("votes_a", "Votes a", COUNT, "votes calling question a harder"),
            Column("votes_b", "Votes b", COUNT, "votes calling question b harder"),
            Column("n_skips", "Skips", COUNT, "skips"),
            Column("consensus", "Consensus", "", "consensus verdict: 'a' or 'b'; blank = no consensus"),
            Column("how", "How", "", "majority, tie_resolved or no_consensus"),
            Column("weight_a", "Weight a", "weight", "summed evaluator weights for 'a' (vote ties only)"),
            Column("weight_b", "Weight b", "weight", "summed evaluator weights for 'b' (vote ties only)"),
            *(Column(f"verdict_{m.key}", m.label, "", f"{m.label}'s verdict: {verdict}") for m in methods),
            *(Column(f"at_bound_{m.key}", f"{m.label} at bound", "0/1",
                     f"1 when a question of the pair has its {m.label} value on a bound of the fit (the bound, "
                     "not an estimate), so the verdict rests on it; blank = undefined")
              for m in bounded),
        ),
        rows=tuple(rows), raw_rows=lambda: _pair_csv_rows(report), total_rows=len(report.pairs), offset=offset,
        notes=(*(() if several else (f"Every question is from the dataset {report.study.datasets[0]!r} (the CSV "
                                     "names it on every row).",)),
               "A question is named by its dataset and external id (two datasets may share external ids).",
               "'a' = question a is harder. A vote tie is resolved by evaluator weights (agreement with the "
               "others' majority on their other pairs); 'Weight a/b' are the summed weights of each side.",),
    )


def _pair_csv_rows(report: AlignmentReport) -> Iterator[list]:
    """The pairs table's raw values, every pair, from the report's columns (no cells built)."""
    c = report.pairs.columns
    keys = ("pair_id", "position", "subject", "dataset_a", "external_a", "question_a", "dataset_b", "external_b",
            "question_b", "votes_a", "votes_b", "n_skips", "verdict", "method", "weight_a", "weight_b")
    columns = [c[k].tolist() for k in keys]
    columns[1] = [x + 1 for x in columns[1]]
    for k in (2, 3, 4, 6, 7, 12, 13):  # text cells: blank = None, as ``text`` and ``code`` write them
        columns[k] = [x or None for x in columns[k]]
    for k in (14, 15):
        columns[k] = [None if w != w else w for w in columns[k]]
    columns += [[x or None for x in report.pairs.methods[m.key].tolist()] for m in report.available]
    columns += [[None if x != x else int(x) for x in report.pairs.at_bound[m.key].tolist()]
                for m in _bounded(report, report.pairs.at_bound)]
    yield from zip(*columns, strict=True)


def _bounded(report: AlignmentReport, keys: Iterable[str]) -> list[MethodInfo]:
    """The available methods, in report order, that have bound flags (``keys``: the flagged method keys)."""
    flagged = set(keys)
    return [m for m in report.available if m.key in flagged]


def _flag(value: int | None) -> Cell:
    """A 0/1 bound flag; blank when undefined."""
    return Cell(value, "–" if value is None else str(value), None if value is not None else "undefined")


def _utc_time(iso: str) -> Cell:
    """An ISO 8601 time: as is in the CSV, to the minute in UTC on the page."""
    return Cell(iso, datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"))


def excluded_table(report: AlignmentReport) -> Table:
    """Evaluators excluded from analyses, with who excluded them, when and why."""
    rows = tuple(
        (count(e.id), text(e.pseudonym), _utc_time(e.excluded_at), text(e.excluded_by), text(e.reason),
         count(e.n_judgments))
        for e in report.excluded_evaluators
    )
    return Table(
        key="excluded_evaluators", title="Evaluators excluded from the analyses",
        columns=(
            Column("evaluator_id", "Id", "", "participation id", on_page=False),
            Column("pseudonym", "Pseudonym", "", "the evaluator's pseudonym"),
            Column("excluded_at", "Excluded at", "time", "when they were excluded (ISO 8601)"),
            Column("excluded_by", "Excluded by", "", "the researcher who excluded them"),
            Column("reason", "Reason", "", "the reason given"),
            Column("n_judgments", "Judgments kept", COUNT, "their votes and skips, kept but in no statistic"),
        ),
        rows=rows,
        notes=("Excluded evaluators' judgments are kept (judgments.csv lists them with evaluator_excluded = 1) but "
               "enter no number of this report.",),
    )


HUMAN_SCALE_NOTE = ("Human scale: a Bradley-Terry model fitted to every vote of the study (skips are not votes), in "
                    "logits, higher = judged harder; each connected component of the comparison graph sums to zero, "
                    "so values of different components are not comparable. SSR (scale separation reliability) = "
                    "(observed variance - mean SE²) / observed variance; split-half: evaluators split at random into "
                    "halves, each half's scale fitted, correlated and Spearman-Brown corrected, averaged over the "
                    "splits. About 10 comparisons per question usually suffice and SSR should reach 0.8 (Kinnear, "
                    "Jones & Davies 2025).")
SCALE_CORRELATION_NOTE = ("Correlations with the human scale are computed within each connected component with 3 or "
                          "more questions and averaged weighted by questions; the interval resamples questions within "
                          "components and takes the scale from its evaluator bootstrap.")
LOGIT = "logit"
MISFIT_DEFAULT = 1.3
CORR = "correlation in [-1, 1]"


def _scale_missing(report: AlignmentReport) -> str | None:
    hs = report.human_scale
    if hs is None:
        return "this report was computed before the human scale existed"
    return hs.undefined_reason


def human_scale_summary_table(report: AlignmentReport) -> Table:
    """The human scale in one row: size, connectivity, reliability, misfit counts."""
    hs = report.human_scale
    reason = _scale_missing(report)
    rows = ()
    if hs is not None and hs.available:
        rows = ((count(hs.n_questions), count(hs.n_votes), count(hs.n_components),
                 text(" ".join(str(x) for x in hs.component_sizes)),
                 dec(hs.ssr, "fewer than 2 questions in components of 2 or more"),
                 dec(hs.split_half, "no split had 3 questions judged in both halves with varying values"),
                 dec(hs.split_half_spearman, "no split had 3 questions judged in both halves with varying values"),
                 count(hs.n_evaluators_flagged), count(hs.n_questions_flagged), dec(hs.misfit_threshold),
                 dec(hs.penalty), count(hs.n_boot), count(hs.n_splits), text(hs.reliability_note)),)
    notes = [HUMAN_SCALE_NOTE, *(hs.warnings if hs is not None else ())]
    if hs is not None and hs.reliability_note:
        notes.append(f"{hs.reliability_note}.")
    notes += uncertainty_notes(report).get("human_scale", ())
    if reason:
        notes.append(f"No human scale: {reason}.")
    return Table(
        key="human_scale_summary", title="Human difficulty scale (Bradley-Terry on the votes)",
        columns=(
            Column("n_questions", "Questions", COUNT, "questions in at least one vote"),
            Column("n_votes", "Votes", COUNT, "votes (skips excluded)"),
            Column("n_components", "Components", COUNT,
                   "connected components of the comparison graph (more than one: fitted per component)"),
            Column("component_sizes", "Component sizes", "", "questions per component, largest first"),
            Column("ssr", "SSR", "reliability", "scale separation reliability"),
            Column("split_half", "Split-half", "reliability",
                   "mean Spearman-Brown corrected Pearson correlation between random evaluator halves"),
            Column("split_half_spearman", "Split-half (Spearman)", "reliability", "the same with Spearman"),
            Column("n_evaluators_flagged", "Evaluators flagged", COUNT, "evaluators with infit above the threshold"),
            Column("n_questions_flagged", "Questions flagged", COUNT, "questions with infit above the threshold"),
            Column("misfit_threshold", "Misfit threshold", "mean square",
                   "infit mean square above which a flag is set"),
            Column("penalty", "Penalty", "", "ridge penalty on the logits"),
            Column("scale_n_boot", "Bootstrap", COUNT,
                   "bootstrap replicates of the scale (evaluators resampled, scale refitted; at most 200)"),
            Column("n_splits", "Splits", COUNT, "random evaluator halves behind split-half"),
            Column("reliability_note", "Reliability note", "",
                   "which reliability to trust (adaptive studies: split-half, as adaptivity inflates SSR); "
                   "blank otherwise"),
        ),
        rows=rows, notes=tuple(notes),
    )


def human_scale_methods_table(report: AlignmentReport) -> Table:
    """Each method against the human scale, overall and per subject, beside its consensus agreement."""
    hs = report.human_scale
    rows = []
    for r in hs.methods if hs is not None else ():
        cons = report.consensus_agreement.get(r.method)
        agreement = (pct(cons.agreement, cons.undefined_reason) if cons is not None and r.scope == "overall"
                     else Cell(None, ""))
        sp, kd = r.spearman, r.kendall
        rows.append((text(r.method), text(report.label(r.method)), text(r.scope), count(sp.n),
                     count(sp.n_components), dec(sp.value, sp.undefined_reason),
                     *interval(sp.ci, sp.undefined_reason or "no bootstrap", scale=1.0, digits=2),
                     dec(kd.value, kd.undefined_reason),
                     *interval(kd.ci, kd.undefined_reason or "no bootstrap", scale=1.0, digits=2), agreement))
    return Table(
        key="human_scale_methods", title="Each method against the human scale",
        columns=(
            _METHOD, _METHOD_LABEL,
            Column("scope", "Scope", "", "'overall' or a subject"),
            Column("n_questions", "Questions", COUNT, "questions in the correlation"),
            Column("n_components", "Components", COUNT, "components the correlation was computed in"),
            Column("spearman", "Spearman ρ", CORR, "Spearman correlation of the method's difficulty with the scale"),
            Column("spearman_ci_low", "ρ low", CORR, "bootstrap interval, low end"),
            Column("spearman_ci_high", "ρ high", CORR, "bootstrap interval, high end"),
            Column("kendall", "Kendall τ", CORR, "Kendall's tau-b of the method's difficulty with the scale"),
            Column("kendall_ci_low", "τ low", CORR, "bootstrap interval, low end"),
            Column("kendall_ci_high", "τ high", CORR, "bootstrap interval, high end"),
            Column("consensus_agreement", "Consensus agreement %", FRACTION,
                   "the method's agreement with the consensus on the study pairs (overall rows only)"),
        ),
        rows=tuple(rows), notes=(SCALE_CORRELATION_NOTE,),
    )


def human_scale_table(report: AlignmentReport) -> Table:
    """One row per judged question: its place on the human scale, uncertainty and misfit."""
    hs = report.human_scale
    methods = list(report.available)
    questions = hs.questions if hs is not None else ()
    bounded = _bounded(report, {k for q in questions for k in (q.at_bound or {})})
    rows = []
    for q in questions:
        rows.append((
            count(q.question.id), text(q.question.dataset), text(q.question.external_id), text(q.subject),
            dec(q.difficulty, "not judged"), dec(q.se, "alone in its component"),
            *interval(q.ci, "no bootstrap replicate judged it", scale=1.0, digits=2),
            count(q.n_judgments), count(q.component), dec(q.infit, "no judgment"), dec(q.outfit, "no judgment"),
            count(int(q.misfit)),
            *(dec(q.methods.get(m.key), "the run has no value") for m in methods),
            *(_flag((q.at_bound or {}).get(m.key)) for m in bounded),
        ))
    return Table(
        key="human_scale", title="Questions on the human scale",
        columns=(
            Column("question_pk", "Question key", "", "database key of the question on this site", on_page=False),
            Column("dataset", "Dataset", "", "dataset of the question"),
            Column("question", "Question", "", "external id of the question in its dataset"),
            Column("subject", "Subject", "", "subject of the question"),
            Column("difficulty", "Human scale", LOGIT, "Bradley-Terry difficulty, higher = judged harder"),
            Column("se", "SE", LOGIT, "standard error from the observed information"),
            Column("ci_low", "CI low", LOGIT, "bootstrap interval (evaluators resampled), low end"),
            Column("ci_high", "CI high", LOGIT, "bootstrap interval, high end"),
            Column("n_judgments", "Votes", COUNT, "votes the question took part in"),
            Column("component", "Component", "", "connected component (0 = the largest)"),
            Column("infit", "Infit", "mean square", "information-weighted mean square of its votes (1 expected)"),
            Column("outfit", "Outfit", "mean square", "unweighted mean square of its votes (1 expected)"),
            Column("misfit", "Misfit", "0/1", "1 when infit exceeds the misfit threshold"),
            *(Column(f"difficulty_{m.key}", m.label, "", f"{m.label}'s difficulty (higher = harder)")
              for m in methods),
            *(Column(f"at_bound_{m.key}", f"{m.label} at bound", "0/1",
                     f"1 when the question's {m.label} value lies on a bound of the fit (the bound, not an "
                     "estimate; the run's download column *_at_bound); blank = undefined")
              for m in bounded),
        ),
        rows=tuple(rows), notes=(HUMAN_SCALE_NOTE, *uncertainty_notes(report).get("human_scale_questions", ())),
    )


def human_scale_evaluators_table(report: AlignmentReport) -> Table:
    """Evaluator misfit against the human scale."""
    hs = report.human_scale
    rows = tuple(
        (count(e.id), text(e.short), text(e.pseudonym), count(e.n_votes), dec(e.infit, "no vote"),
         dec(e.outfit, "no vote"), count(int(e.misfit)))
        for e in (hs.evaluators if hs is not None else ())
    )
    threshold = MISFIT_DEFAULT if hs is None else hs.misfit_threshold
    return Table(
        key="human_scale_evaluators", title="Evaluator misfit on the human scale",
        columns=(
            Column("evaluator_id", "Id", "", "participation id", on_page=False),
            Column("rater", "Evaluator", "", "short name (V1, V2, ... in order of joining)"),
            Column("pseudonym", "Pseudonym", "", "the evaluator's pseudonym"),
            Column("n_votes", "Votes", COUNT, "votes (skips excluded)"),
            Column("infit", "Infit", "mean square", "information-weighted mean square of their votes (1 expected)"),
            Column("outfit", "Outfit", "mean square", "unweighted mean square of their votes (1 expected)"),
            Column("misfit", "Misfit", "0/1", "1 when infit exceeds the misfit threshold"),
        ),
        rows=rows,
        notes=(f"Misfit: an infit mean square above {threshold:g} (the upper end of the 0.7-1.3 range commonly used "
               "for Rasch-family fit statistics) flags votes that disagree with the scale more than the model "
               "expects, e.g. random or reversed voting.",),
    )


GROUPS_NOTE = ("Groups: each group's verdict on a pair is the majority of its members' votes (skips are not votes; "
               "equal votes are a tie); two groups are compared on the pairs both decided, kappa = 2 agreement - 1 "
               "(orientation-free); a group against a method counts the method's ties as misses. Intervals: "
               "percentile bootstrap over the compared pairs.")


def _ci_cells(ci: tuple[float, ...] | None, reason: str | None, scale: float, digits: int) -> tuple[Cell, Cell]:
    return interval(ci, reason or "no bootstrap", scale=scale, digits=digits)


def groups_table(report: AlignmentReport) -> Table:
    """Evaluator groups against each other: agreement and kappa with intervals."""
    section = report.groups
    info = {g.name: g for g in section.groups} if section else {}
    rows = tuple(
        (text(r.group_x), text(r.group_y), count(info[r.group_x].n_evaluators), count(info[r.group_y].n_evaluators),
         count(r.n), pct(r.agreement, r.undefined_reason), *_ci_cells(r.agreement_ci, r.undefined_reason, 100.0, 1),
         dec(r.kappa, r.undefined_reason), *_ci_cells(r.kappa_ci, r.undefined_reason, 1.0, 2))
        for r in (section.pairs if section else ())
    )
    return Table(
        key="groups", title="Evaluator groups against each other",
        columns=(
            Column("group_x", "Group", "", "first group"), Column("group_y", "Other group", "", "second group"),
            Column("n_evaluators_x", "Evaluators", COUNT, "evaluators in the first group"),
            Column("n_evaluators_y", "Evaluators (other)", COUNT, "evaluators in the second group"),
            Column("n_pairs", "Pairs both decided", COUNT, "pairs both groups' majorities decided"),
            Column("agreement", "Agreement", FRACTION, "share of those pairs on which the majorities agree"),
            Column("agreement_low", "low", FRACTION, "bootstrap interval, lower end"),
            Column("agreement_high", "high", FRACTION, "bootstrap interval, upper end"),
            Column("kappa", "κ", KAPPA, "orientation-free Cohen's kappa, 2 agreement - 1"),
            Column("kappa_low", "κ low", KAPPA, "bootstrap interval, lower end"),
            Column("kappa_high", "κ high", KAPPA, "bootstrap interval, upper end"),
        ),
        rows=rows, notes=(GROUPS_NOTE,), on_page=section is not None, in_csv=section is not None,
    )


def groups_methods_table(report: AlignmentReport) -> Table:
    """Each evaluator group's majority against every method."""
    section = report.groups
    rows = tuple(
        (text(r.group), text(r.method), text(report.label(r.method)), count(r.n), pct(r.agreement),
         *_ci_cells(r.agreement_ci, None, 100.0, 1), dec(r.kappa), *_ci_cells(r.kappa_ci, None, 1.0, 2))
        for r in (section.methods if section else ())
    )
    return Table(
        key="groups_methods", title="Each evaluator group against each method",
        columns=(
            Column("group", "Group", "", "evaluator group"),
            Column("method", "Method key", "", "registry key", on_page=False),
            Column("method_label", "Method", "", "the method"),
            Column("n_pairs", "Pairs decided", COUNT, "pairs the group's majority decided"),
            Column("agreement", "Agreement", FRACTION, "share of them the method orders the same way (ties = misses)"),
            Column("agreement_low", "low", FRACTION, "bootstrap interval, lower end"),
            Column("agreement_high", "high", FRACTION, "bootstrap interval, upper end"),
            Column("kappa", "κ", KAPPA, "orientation-free Cohen's kappa over the pairs both decided"),
            Column("kappa_low", "κ low", KAPPA, "bootstrap interval, lower end"),
            Column("kappa_high", "κ high", KAPPA, "bootstrap interval, upper end"),
        ),
        rows=rows, notes=(GROUPS_NOTE,), on_page=section is not None, in_csv=section is not None,
    )


TABLES: tuple[Callable[[AlignmentReport], Table], ...] = (
    table2, table2_excluding_ties, kappa_table, agreement_table, consensus_table, evaluator_table, excluded_table,
    irr_table, pool_table, label_analysis_table, label_table, pairs_table, human_scale_summary_table,
    human_scale_methods_table, human_scale_table, human_scale_evaluators_table, groups_table, groups_methods_table,
)


def report_tables(report: AlignmentReport, *, pairs_offset: int = 0, pairs_limit: int | None = None) -> list[Table]:
    """Every table of the report, in page order (page-only and CSV-only ones included); the
    pairs table's cells for pairs ``pairs_offset`` to ``pairs_offset + pairs_limit`` only (its
    CSV has every pair)."""
    return [pairs_table(report, pairs_offset, pairs_limit) if build is pairs_table else build(report)
            for build in TABLES]


#: Rows a page of a paginated table shows, by table key (the page is server-side: only
#: these rows are built and sent).
PER_PAGE = {"pairs": 100, "evaluators": 50}


def page_tables(report: AlignmentReport, *, pages: dict[str, int] | None = None) -> dict[str, Table]:
    """The tables the page shows, by key, with their notes merged; the tables of
    :data:`PER_PAGE` show page ``pages[key]`` (1-based, clamped; default 1)."""
    pages = pages or {}
    per = PER_PAGE["pairs"]
    pairs_page = page_of(len(report.pairs), pages.get("pairs", 1), per)
    out = {}
    for t in report_tables(report, pairs_offset=(pairs_page.number - 1) * per, pairs_limit=per):
        if not t.on_page:
            continue
        if t.key == "pairs":
            t = replace(t, page=pairs_page)
        elif t.key in PER_PAGE:
            page = page_of(len(t.rows), pages.get(t.key, 1), PER_PAGE[t.key])
            start = (page.number - 1) * PER_PAGE[t.key]
            t = replace(t, rows=t.rows[start:start + PER_PAGE[t.key]], total_rows=len(t.rows), offset=start,
                        page=page)
        out[t.key] = replace(t, notes=merged_notes(t.notes))
    return out


#: Meaning of each report parameter (:meth:`AlignmentReport.parameters`), for the codebook.
PARAMETER_COLUMNS = {
    "study": ("study id", ""),
    "scoring_run": ("scoring run whose difficulties are compared", ""),
    "min_votes": ("fewest votes (skips excluded) a pair needs for a consensus", COUNT),
    "tie_rule": ("how an exact vote tie is resolved: evaluator_weight or none", ""),
    "label_key": ("question metadata key of the human difficulty label; blank = no label", ""),
    "label_direction": ("how the label is read: higher_is_harder or higher_is_easier; blank = no label", ""),
    "n_boot": ("bootstrap replicates of the intervals", COUNT),
    "bootstrap_seed": ("seed of the bootstrap", ""),
}
PARAMETERS_NOTE = ("The last columns (study, scoring_run, min_votes, tie_rule, label_key, label_direction, n_boot, "
                   "bootstrap_seed) repeat the parameters the report was computed with, the same on every row.")


def with_parameters(table: Table, parameters: dict) -> Table:
    """``table`` with one constant column per report parameter appended (tidy:
    the parameters travel with the CSV, no note lines inside)."""
    columns = tuple(Column(key, key, PARAMETER_COLUMNS[key][1], PARAMETER_COLUMNS[key][0], on_page=False)
                    for key in parameters)
    cells = tuple(Cell(value, "" if value is None else str(value)) for value in parameters.values())
    raw = table.raw_rows
    values = tuple(parameters.values())
    return replace(table, columns=(*table.columns, *columns), rows=tuple((*row, *cells) for row in table.rows),
                   notes=(*table.notes, PARAMETERS_NOTE),
                   raw_rows=None if raw is None else (lambda: ((*row, *values) for row in raw())))


def csv_tables(report: AlignmentReport) -> list[Table]:
    """The tables written as tidy CSV files (``<key>.csv``), each ending with the
    report's parameters as constant columns (:func:`with_parameters`)."""
    parameters = report.parameters()
    return [with_parameters(t, parameters) for t in report_tables(report, pairs_limit=0) if t.in_csv]
