"""The crowd section's tables (judges weighted by reliability): evaluators'
reliabilities, each method unweighted and weighted, and the questions on both
scales. Shown and written only when the report has the section
(``crowd=True``); otherwise neither on the page nor in the download."""
from __future__ import annotations

from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.model_crowd import CrowdAgreement
from annotate.reports.services.scale import scale_fragmented_warning
from annotate.reports.services.table_cells import (
    ACCOUNT_NOTE,
    COUNT,
    FRACTION,
    KAPPA,
    Cell,
    Column,
    Table,
    count,
    dec,
    interval,
    pct,
    text,
)

LOGIT = "logit"
CORR = "correlation in [-1, 1]"
RELIABILITY = "probability in [0, 1]"
CROWD_NOTE = ("Judges weighted by reliability: a crowd Bradley-Terry model fits the difficulty scale together with "
              "one reliability per evaluator, the probability that they judge as the scale says rather than at "
              "random (1 = careful, near 0 = random clicks); an erratic judge's votes then count less. Intervals of "
              "a reliability: profile likelihood given the fitted scale.")
WEIGHTED_NOTE = ("Unweighted: the report's consensus and the plain Bradley-Terry scale of every vote. Weighted: the "
                 "consensus where each vote counts its evaluator's reliability (equal totals: no consensus) and the "
                 "crowd Bradley-Terry scale. Agreement counts a method's ties as misses (interval: percentile "
                 "bootstrap over pairs); Spearman's correlation is taken within each connected component of "
                 "3 or more questions and averaged weighted by questions (interval: percentile bootstrap over "
                 "questions).")


def _with_interval(cell: Cell, ci: tuple[Cell, Cell], digits: int, scale: float) -> Cell:
    """``cell`` whose page text also shows its interval (the CSV keeps the bare value; the ends are columns)."""
    if cell.undefined or ci[0].undefined:
        return cell
    low, high = (scale * float(c.value) for c in ci)  # type: ignore[arg-type]
    return Cell(cell.value, f"{cell.text} [{low:.{digits}f}, {high:.{digits}f}]", cell.reason)


def _cells(a: CrowdAgreement) -> dict[str, tuple[Cell, ...]]:
    """One side's cells by measure: pairs; agreement, its interval ends and kappa; Spearman and its ends."""
    reason = a.consensus_undefined_reason
    agreement_ci = interval(a.consensus_agreement_ci, reason or "no bootstrap")
    rho_ci = interval(a.scale_spearman_ci, a.scale_undefined_reason or "no bootstrap", scale=1.0, digits=3)
    return {
        "pairs": (count(a.n_pairs),),
        "agreement": (_with_interval(pct(a.consensus_agreement, reason), agreement_ci, 1, 100.0), *agreement_ci,
                      dec(a.consensus_kappa, reason)),
        "spearman": (_with_interval(dec(a.scale_spearman, a.scale_undefined_reason, 3), rho_ci, 3, 1.0), *rho_ci,
                     count(a.n_questions)),
    }


def _measure_columns(measure: str, suffix: str, label: str) -> tuple[Column, ...]:
    """The columns of one measure on one side; interval ends and kappa are CSV columns (the page shows the
    interval beside the value)."""
    return {
        "pairs": (Column(f"n_pairs_{suffix}", f"Pairs ({label})", COUNT,
                         f"pairs with a {label} consensus the method is compared on"),),
        "agreement": (
            Column(f"consensus_agreement_{suffix}", f"Agreement ({label}) [interval]", FRACTION,
                   f"share of those pairs the method orders as the {label} consensus (ties = misses)"),
            Column(f"consensus_agreement_{suffix}_low", "low", FRACTION, "bootstrap interval, lower end",
                   on_page=False),
            Column(f"consensus_agreement_{suffix}_high", "high", FRACTION, "bootstrap interval, upper end",
                   on_page=False),
            Column(f"consensus_kappa_{suffix}", f"κ ({label})", KAPPA, "orientation-free Cohen's kappa, 2 p_o - 1",
                   on_page=False),
        ),
        "spearman": (
            Column(f"scale_spearman_{suffix}", f"Spearman ({label} scale) [interval]", CORR,
                   f"Spearman's correlation of the method's difficulty with the {label} Bradley-Terry scale"),
            Column(f"scale_spearman_{suffix}_low", "low", CORR, "bootstrap interval, lower end", on_page=False),
            Column(f"scale_spearman_{suffix}_high", "high", CORR, "bootstrap interval, upper end", on_page=False),
            Column(f"scale_questions_{suffix}", f"Questions ({label} scale)", COUNT,
                   "judged questions the correlation was computed on (those in components of 3 or more)"),
        ),
    }[measure]


MEASURES = ("pairs", "agreement", "spearman")


def _unavailable(report: AlignmentReport) -> str | None:
    section = report.crowd
    return None if section is None or section.available else section.undefined_reason


def crowd_evaluators_table(report: AlignmentReport) -> Table:
    """Each evaluator's reliability with its interval and votes."""
    section = report.crowd
    rows = tuple(
        (count(e.id), text(e.short), text(e.pseudonym), dec(e.reliability, "no vote", 3),
         *interval(e.reliability_ci, "no vote", scale=1.0, digits=3), count(e.n_judgments))
        for e in (section.evaluators if section is not None else ())
    )
    return Table(
        key="crowd_evaluators", title="Reliability of each evaluator (crowd Bradley-Terry)",
        columns=(
            Column("evaluator_id", "Id", "", "participation id", on_page=False),
            Column("rater", "Evaluator", "", "short name (V1, V2, ... in order of joining)"),
            Column("pseudonym", "Account", "", ACCOUNT_NOTE),
            Column("reliability", "Reliability", RELIABILITY,
                   "probability that the evaluator judges as the scale says rather than at random"),
            Column("reliability_low", "low", RELIABILITY, "profile-likelihood interval, lower end"),
            Column("reliability_high", "high", RELIABILITY, "profile-likelihood interval, upper end"),
            Column("n_judgments", "Votes", COUNT, "votes in the fit (skips are not votes)"),
        ),
        rows=rows, notes=(CROWD_NOTE, *([_unavailable(report)] if _unavailable(report) else [])),
        on_page=section is not None, in_csv=section is not None,
    )


def crowd_methods_table(report: AlignmentReport) -> Table:
    """Each method against the unweighted and the weighted consensus and scale, side by side."""
    section = report.crowd
    rows = []
    for m in (section.methods if section is not None else ()):
        unweighted, weighted = _cells(m.unweighted), _cells(m.weighted)
        rows.append((text(m.method), text(report.label(m.method)),
                     *(cell for measure in MEASURES for cell in (*unweighted[measure], *weighted[measure]))))
    return Table(
        key="crowd_methods", title="Each method against the unweighted and the weighted consensus and scale",
        columns=(
            Column("method", "Method key", "", "registry key", on_page=False),
            Column("method_label", "Method", "", "the method"),
            *(column for measure in MEASURES for suffix in ("unweighted", "weighted")
              for column in _measure_columns(measure, suffix, suffix)),
        ),
        rows=tuple(rows), notes=(WEIGHTED_NOTE, *_fragmented(report)), on_page=section is not None,
        in_csv=section is not None,
    )


def _fragmented(report: AlignmentReport) -> tuple[str, ...]:
    """The fragmented-scale warning (:func:`~annotate.reports.services.scale.scale_fragmented_warning`): both
    scales are fitted on the same votes, so they share the human scale's components."""
    hs = report.human_scale
    warning = None if hs is None else scale_fragmented_warning(hs)
    return () if warning is None else (warning,)


def crowd_questions_table(report: AlignmentReport) -> Table:
    """Every judged question on the unweighted and the weighted scale (CSV only)."""
    section = report.crowd
    rows = tuple(
        (count(q.id), text(q.dataset), text(q.external_id), text(q.subject), dec(q.difficulty_unweighted),
         dec(q.difficulty_weighted), dec(q.se_weighted), count(q.n_judgments))
        for q in (section.questions if section is not None else ())
    )
    return Table(
        key="crowd_questions", title="Each question on the unweighted and the weighted scale",
        columns=(
            Column("question_pk", "Question id", "", "the question's database id"),
            Column("dataset", "Dataset", "", "the question's dataset"),
            Column("question_id", "Question", "", "the question's id in its dataset"),
            Column("subject", "Subject", "", "the question's subject"),
            Column("difficulty_unweighted", "Unweighted", LOGIT,
                   "plain Bradley-Terry difficulty, higher = judged harder (sums to zero per component)"),
            Column("difficulty_weighted", "Weighted", LOGIT,
                   "crowd Bradley-Terry difficulty, higher = judged harder"),
            Column("se_weighted", "SE", LOGIT, "approximate standard error of the weighted difficulty"),
            Column("n_judgments", "Votes", COUNT, "votes on the question"),
        ),
        rows=rows, notes=(CROWD_NOTE,), on_page=False, in_csv=section is not None,
    )
