"""The report as tables of cells, shared by the CSV download and the HTML page.

Each cell keeps the raw number (for the CSV), the text shown on the page and,
when the value is undefined, the reason (a tooltip on the page, a note in the
CSV). Agreements are shown in percent, kappas and p-values as decimals.
"""
from __future__ import annotations

from dataclasses import dataclass, field

UNDEFINED_TEXT = "undefined"


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
class Table:
    key: str
    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    header_titles: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def columns(self) -> list[tuple[str, str]]:
        """``(header, tooltip)`` per column (tooltip "" when none)."""
        titles = self.header_titles or ("",) * len(self.header)
        return list(zip(self.header, titles))


def text(value: str | None) -> Cell:
    return Cell(value or "", value or "")


def not_applicable() -> Cell:
    return Cell("", "—")


def count(value: int | None) -> Cell:
    return Cell(value, "–" if value is None else str(value))


def pct(value: float | None, reason: str | None = None, digits: int = 1) -> Cell:
    """A fraction shown in percent; an undefined one as "undefined" with its reason."""
    if value is None:
        return Cell(UNDEFINED_TEXT, UNDEFINED_TEXT, reason or "undefined")
    return Cell(round(100.0 * value, 2), f"{100.0 * value:.{digits}f}")


def dec(value: float | None, reason: str | None = None, digits: int = 2) -> Cell:
    if value is None:
        return Cell(UNDEFINED_TEXT, UNDEFINED_TEXT, reason or "undefined")
    return Cell(round(value, 4), f"{value:.{digits}f}")


def pvalue(value: float | None, reason: str | None = None) -> Cell:
    if value is None:
        return Cell(UNDEFINED_TEXT, UNDEFINED_TEXT, reason or "undefined")
    return Cell(float(f"{value:.4g}"), f"{value:.3g}")


def interval(ci: list | None, reason: str | None, scale: float = 100.0, digits: int = 1) -> tuple[Cell, Cell]:
    if ci is None:
        return (Cell(UNDEFINED_TEXT, UNDEFINED_TEXT, reason or "undefined"),) * 2
    return tuple(Cell(round(scale * x, 4), f"{scale * x:.{digits}f}") for x in ci)


def _labels(report: dict) -> dict[str, str]:
    return {m["key"]: m["label"] for m in report["methods"]}


def _available(report: dict) -> list[str]:
    return [m["key"] for m in report["methods"] if m["available"]]


def _missing_notes(report: dict) -> tuple[str, ...]:
    return tuple(f"{m['label']}: not scored ({m['undefined_reason']})" for m in report["methods"] if not m["available"])


def table2(report: dict) -> Table:
    """Paper table 2: rows = methods, columns = evaluators, their mean, the consensus, kappa."""
    evaluators = report["evaluators"]
    labels = _labels(report)
    rows = []
    for k in _available(report):
        mean = report["method_summary"][k]["agreement"]
        cons = report["consensus_agreement"][k]
        rows.append((
            text(labels[k]),
            *(pct(e["methods"][k]["agreement"], e["methods"][k]["undefined_reason"]) for e in evaluators),
            pct(mean["mean"], mean["note"]),
            pct(cons["agreement"], cons["undefined_reason"]),
            dec(cons["kappa"]["value"], cons["kappa"]["undefined_reason"]),
        ))
    notes = tuple(f"{labels[k]}: evaluator {report['method_summary'][k]['agreement']['note']}" for k in _available(report))
    return Table(
        key="table2", title="Agreement with each evaluator and with the consensus (%)",
        header=("Method", *(e["short"] for e in evaluators), "Evaluator mean", "Consensus", "κ (consensus)"),
        header_titles=("", *(e["pseudonym"] for e in evaluators), "", "", "Cohen's kappa with the consensus"),
        rows=tuple(rows), notes=notes + _missing_notes(report),
    )


def kappa_table(report: dict) -> Table:
    """Cohen's kappa of each evaluator with each method (rows = methods)."""
    evaluators = report["evaluators"]
    labels = _labels(report)
    rows = []
    for k in _available(report):
        mean = report["method_summary"][k]["kappa"]
        rows.append((
            text(labels[k]),
            *(dec(e["methods"][k]["kappa"]["value"], e["methods"][k]["kappa"]["undefined_reason"])
              for e in evaluators),
            dec(mean["mean"], mean["note"]),
        ))
    notes = tuple(f"{labels[k]}: kappa {report['method_summary'][k]['kappa']['note']}" for k in _available(report))
    return Table(
        key="kappa", title="Cohen's kappa of each evaluator with each method",
        header=("Method", *(e["short"] for e in evaluators), "Evaluator mean"),
        header_titles=("", *(e["pseudonym"] for e in evaluators), ""), rows=tuple(rows), notes=notes,
    )


def consensus_table(report: dict) -> Table:
    """Each method against the consensus: counts, agreement and kappa with 95% intervals, McNemar."""
    labels = _labels(report)
    tests = {t["method_b"]: t for t in report["mcnemar"]}
    rows = []
    for k in _available(report):
        c = report["consensus_agreement"][k]
        ci = c["ci"]
        t = tests.get(k)
        mcnemar = (not_applicable(),) * 3 if t is None else (
            count(t["b"]), count(t["c"]), pvalue(t["p_value"], t["undefined_reason"]))
        rows.append((
            text(labels[k]), count(c["n_pairs"]), count(c["n_agree"]), count(c["n_ties"]), count(c["n_undefined"]),
            pct(c["agreement"], c["undefined_reason"]), *interval(ci["agreement"], ci["undefined_reason"]),
            pct(c["agreement_excluding_ties"], "the method decided no scored pair"),
            dec(c["kappa"]["value"], c["kappa"]["undefined_reason"]),
            *interval(ci["kappa"], ci["undefined_reason"], scale=1.0, digits=2),
            *mcnemar,
        ))
    level = report["params"]["ci_level"]
    return Table(
        key="consensus", title="Each method against the consensus",
        header=("Method", "Pairs", "Agree", "Ties", "Undefined", "Agreement %", f"{level:.0%} CI low",
                f"{level:.0%} CI high", "Excl. ties %", "κ", "κ CI low", "κ CI high", "McNemar b", "McNemar c",
                "McNemar p"),
        header_titles=("", "pairs with a consensus", "pairs where the method gives the consensus verdict",
                       "pairs where the method gives both questions the same value",
                       "pairs where the method has no value for a question", "ties and undefined count as misses",
                       "bootstrap percentile interval", "bootstrap percentile interval",
                       "agreement among the pairs the method decided", "Cohen's kappa with the consensus",
                       "bootstrap percentile interval", "bootstrap percentile interval",
                       "pairs only EIP gets right", "pairs only this method gets right",
                       "exact two-sided McNemar test of EIP against this method"),
        rows=tuple(rows),
        notes=(
            f"Intervals: percentile bootstrap over the scored pairs, {report['params']['n_boot']} replicates, "
            f"seed {report['params']['bootstrap_seed']}.",
            "A method tie or undefined verdict on a scored pair counts as a miss; "
            "'Agreement excl. ties' shows the other convention.",
            "McNemar: exact two-sided test of EIP against the method on the pairs with a consensus.",
        ),
    )


def evaluator_table(report: dict) -> Table:
    """One row per evaluator (readable however many there are)."""
    labels = _labels(report)
    keys = _available(report)
    rows = []
    for e in report["evaluators"]:
        o = e["vs_others"]
        rows.append((
            text(e["short"]), text(e["pseudonym"]), text(e["field_of_study"]), text(e["education_level"]),
            count(e["n_votes"]), count(e["n_skips"]),
            *(pct(e["methods"][k]["agreement"], e["methods"][k]["undefined_reason"]) for k in keys),
            pct(o["agreement"], o["undefined_reason"]), count(o["n"]),
            dec(o["kappa"]["value"], o["kappa"]["undefined_reason"]),
        ))
    return Table(
        key="evaluators", title="Evaluators: agreement with each method and with the others (%)",
        header=("", "Pseudonym", "Field", "Education", "Votes", "Skips", *(labels[k] for k in keys),
                "Others' consensus", "Pairs vs others", "κ vs others"),
        rows=tuple(rows),
        notes=("'Others' consensus' = the consensus of every other evaluator (this one left out).",),
    )


def pool_table(report: dict) -> Table:
    pools = report["pools"]
    rows = []
    for p in pools["pools"]:
        c = p["consensus"] or {}
        reason = p["undefined_reason"]
        rows.append((
            text(p["name"]), count(p["n_models"]), pct(p["share_dead"], reason or "no observed question"),
            pct(p["share_all_solved"], reason or "no observed question"),
            pct(p["share_all_failed"], reason or "no observed question"),
            *(dec(p["correlations"][m]["value"], p["correlations"][m]["undefined_reason"])
              for m in ("spearman", "pearson", "kendall")),
            pct(c.get("agreement"), reason or c.get("undefined_reason")),
            dec((c.get("kappa") or {}).get("value"), reason or (c.get("kappa") or {}).get("undefined_reason")),
        ))
    notes = [f"Correlations with the whole pool over {pools['correlation_scope']}."]
    if pools["unknown_size_models"]:
        notes.append("In no size pool (size unknown): " + ", ".join(pools["unknown_size_models"]) + ".")
    if pools["unknown_access_models"]:
        notes.append("In no access pool (access unknown): " + ", ".join(pools["unknown_access_models"]) + ".")
    if not pools["available"]:
        notes.append(f"Pool analysis undefined: {pools['undefined_reason']}.")
    return Table(
        key="pools", title="Model pools: EIP rerun on subsets of the models",
        header=("Pool", "Models", "Dead nodes %", "All solved %", "All failed %", "Spearman", "Pearson",
                "Kendall", "Consensus agreement %", "κ (consensus)"),
        rows=tuple(rows), notes=tuple(notes),
    )


def label_table(report: dict) -> Table:
    labels = report["labels"]
    names = _labels(report)
    scopes = labels["scopes"]
    rows = []
    for k in _available(report) if labels["undefined_reason"] is None else ():
        row = [text(names[k])]
        for scope in scopes.values():
            a = scope["methods"][k]
            row += [pct(a["agreement"], a["undefined_reason"]), dec(a["kappa"]["value"], a["kappa"]["undefined_reason"])]
        s = labels["spearman"][k]
        rows.append((*row, dec(s["value"], s["undefined_reason"]), count(s["n"])))
    notes = [f"{name}: {scope['description']} ({scope['n_pairs']} pairs)." for name, scope in scopes.items()]
    if labels["undefined_reason"] is None:
        cons = scopes["study_pairs"]["consensus"]
        shown = "undefined" if cons["agreement"] is None else f"{100 * cons['agreement']:.1f}%"
        notes.append(f"Human consensus vs the label on the study pairs: {shown} over {cons['n']} pairs.")
        notes.append(f"Spearman over the {labels['spearman_scope']}.")
    else:
        notes.append(f"No label analysis: {labels['undefined_reason']}.")
    return Table(
        key="labels", title=f"Against the human difficulty label {labels['key']!r}" if labels["key"] else "Human difficulty label",
        header=("Method", "Study pairs %", "κ", "All same-subject pairs %", "κ", "Spearman ρ", "Questions"),
        rows=tuple(rows), notes=tuple(notes),
    )


def pairs_table(report: dict) -> Table:
    """One row per pair: votes, skips, the consensus and how it was reached, each method's verdict."""
    keys = _available(report)
    labels = _labels(report)
    rows = []
    for p in report["pairs"]:
        c = p["consensus"]
        weights = (not_applicable(),) * 2 if c["weight_a"] is None else (dec(c["weight_a"]), dec(c["weight_b"]))
        rows.append((
            count(p["position"] + 1), text(p["subject"]), text(p["question_a"]["external_id"]),
            text(p["question_b"]["external_id"]), count(c["votes_a"]), count(c["votes_b"]), count(c["n_skips"]),
            Cell(c["verdict"] or UNDEFINED_TEXT, c["verdict"] or "–", c["reason"]), text(c["method"]), *weights,
            *(text(p["methods"][k]) for k in keys),
        ))
    return Table(
        key="pairs", title="Pairs: votes, consensus and each method's verdict",
        header=("#", "Subject", "Question a", "Question b", "Votes a", "Votes b", "Skips", "Consensus", "How",
                "Weight a", "Weight b", *(labels[k] for k in keys)),
        rows=tuple(rows),
        notes=("'a' = question a is harder. A vote tie is resolved by evaluator weights (agreement with the "
               "others' majority on their other pairs); 'Weight a/b' are the summed weights of each side.",),
    )


def report_tables(report: dict) -> list[Table]:
    """Every table of the report, in page order."""
    return [table2(report), kappa_table(report), consensus_table(report), evaluator_table(report),
            pool_table(report), label_table(report), pairs_table(report)]
