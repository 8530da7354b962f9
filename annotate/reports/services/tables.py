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

from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime

from annotate.core import CONSENSUS_LABELS, counted, label
from annotate.reports.services.headline import uncertainty_notes
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.table_cells import (
    _METHOD,
    _METHOD_LABEL,
    ACCOUNT_NOTE,
    CODE_LABELS,
    COUNT,
    EXCL_TIES,
    FRACTION,
    IRR_NOTE,
    KAPPA,
    KAPPA_NOTE,
    SKIPPED_BY_ONE_TITLE,
    TIES_NOTE,
    Cell,
    Column,
    Table,
    _bounded,
    _flag,
    _missing_notes,
    code,
    count,
    dec,
    interval,
    kappa,
    merged_notes,
    not_applicable,
    page_of,
    pct,
    pvalue,
    text,
    tie_notes,
)
from annotate.reports.services.tables_crowd import (
    crowd_evaluators_table,
    crowd_methods_table,
    crowd_questions_table,
)
from annotate.reports.services.tables_scale import (
    groups_methods_table,
    groups_table,
    human_scale_evaluators_table,
    human_scale_methods_table,
    human_scale_summary_table,
    human_scale_table,
)

# --- cells ----------------------------------------------------------------------------


# --- tables ----------------------------------------------------------------------------


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
            Column("pseudonym", "Account", "", ACCOUNT_NOTE + " (blank for the consensus)"),
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
            f"Intervals: percentile bootstrap over the scored pairs, {counted(report.params.n_boot, 'replicate')}, "
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
            count(e.id), text(e.short), text(e.pseudonym), Cell(int(e.simulated), "simulated" if e.simulated else ""),
            code(e.field_of_study, CODE_LABELS["field_of_study"]),
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
            Column("pseudonym", "Account", "", ACCOUNT_NOTE),
            Column("simulated", "Simulated", "", "1: a simulation made the votes (the demo's seeded evaluators), "
                   "not a person; 0: a person", on_page=any(e.simulated for e in report.evaluators)),
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
               KAPPA_NOTE, *uncertainty_notes(report).get("evaluators", ())),
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
                        f"of the run's {counted(analysis['n_questions_run'], 'question')} labelled; "
                        f"{counted(analysis['n_boot'], 'bootstrap replicate')}"
                        + (f"; read from the stored analysis {labels.analysis_run}" if labels.analysis_run else "")
                        + ".")
        if analysis.get("undefined_reason"):
            notes.append(f"No label analysis: {analysis['undefined_reason']}.")
    elif labels.undefined_reason:
        notes.append(f"No label analysis: {labels.undefined_reason}.")
    return Table(
        key="labels_analysis",
        title=(f"Against the human difficulty label {labels.key!r}: every labelled question of the run "
               "(not only this study's)" if labels.key
               else "Human difficulty label: every labelled question of the run (not only this study's)"),
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
    notes = [f"{label(name, 'scope')}: {scope.description} ({counted(scope.n_pairs, 'pair')})."
             for name, scope in scopes.items()]
    if labels.undefined_reason is None:
        cons = scopes["study_pairs"].consensus
        shown = "undefined" if cons is None or cons.agreement is None else f"{100 * cons.agreement:.1f}%"
        notes.append(f"Human consensus vs the label on the study pairs: {shown} over "
                     f"{counted(0 if cons is None else cons.n, 'pair')}.")
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
            Column("pseudonym", "Account", "", ACCOUNT_NOTE),
            Column("excluded_at", "Excluded at", "time", "when they were excluded (ISO 8601)"),
            Column("excluded_by", "Excluded by", "", "the researcher who excluded them"),
            Column("reason", "Reason", "", "the reason given"),
            Column("n_judgments", "Judgments kept", COUNT, "their votes and skips, kept but in no statistic"),
        ),
        rows=rows,
        notes=("Excluded evaluators' judgments are kept (judgments.csv lists them with evaluator_excluded = 1) but "
               "enter no number of this report.",),
    )


TABLES: tuple[Callable[[AlignmentReport], Table], ...] = (
    table2, table2_excluding_ties, kappa_table, agreement_table, consensus_table, evaluator_table, excluded_table,
    irr_table, pool_table, label_analysis_table, label_table, pairs_table, human_scale_summary_table,
    human_scale_methods_table, human_scale_table, human_scale_evaluators_table, groups_table, groups_methods_table,
    crowd_evaluators_table, crowd_methods_table, crowd_questions_table,
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
    "n_boot": ("bootstrap replicates of the intervals on pairs (agreement, kappa, consensus, groups)", COUNT),
    "bootstrap_seed": ("seed of the bootstrap", ""),
    "scale_n_boot": ("bootstrap replicates of the human scale's intervals and of its correlations with the methods "
                     "(human_scale*, crowd scale correlations): n_boot, at most 200, as each replicate refits the "
                     "scale; blank = no scale", COUNT),
    "label_n_boot": ("bootstrap replicates of the label analysis (labels_analysis): its own setting, the "
                     "human-label analysis's; blank = no label", COUNT),
}
PARAMETERS_NOTE = ("The last columns (study, scoring_run, min_votes, tie_rule, label_key, label_direction, n_boot, "
                   "bootstrap_seed, scale_n_boot, label_n_boot) repeat the parameters the report was computed with, "
                   "the same on every row and in every table of the download.")


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
