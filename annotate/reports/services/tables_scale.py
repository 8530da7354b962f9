"""The report's tables of the human scale and of the evaluator groups.

The scale's summary (reliability, separation, components), its correlation
with each method (Spearman and Kendall with bootstrap intervals), the
questions on the scale with their misfit, the evaluators' misfit, and the
agreement of each evaluator group with each method.
"""
from __future__ import annotations

from annotate.reports.services.headline import uncertainty_notes
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.table_cells import (
    _METHOD,
    _METHOD_LABEL,
    ACCOUNT_NOTE,
    COUNT,
    FRACTION,
    KAPPA,
    Cell,
    Column,
    Table,
    _bounded,
    _flag,
    count,
    dec,
    interval,
    pct,
    text,
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
                 dec(hs.penalty), count(hs.n_splits), text(hs.reliability_note)),)
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
            Column("pseudonym", "Account", "", ACCOUNT_NOTE),
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
