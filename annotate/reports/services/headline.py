"""The report's answer on one screen, and plain notes on surprising uncertainty figures.

:func:`report_headline` reads a finished
:class:`~annotate.reports.services.model.AlignmentReport` (nothing is
recomputed but one exact McNemar test when the report holds none for the two
leading methods) and returns what the report page shows first: the values of
the forest plot (each method's agreement with people, with its interval: with
the consensus, with the human scale and with a difficulty label when one is
used) and one sentence naming the method that agrees best with the consensus
(every method counted on the same pairs, those with a consensus) and saying
whether its lead over the next one is significant, or, when no
method's agreement is above chance (:func:`above_chance`), saying so and
naming none.

:func:`uncertainty_notes` says in plain words why a figure that looks wrong
is what it is: a negative SSR, an estimate on (or beyond) an end of its
interval, an undefined split-half, a consensus that rests on one vote.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from annotate.core import counted
from annotate.reports.services._stats import verdict_name
from annotate.reports.services.model import AlignmentReport, MethodConsensus
from annotate.reports.services.scale import correlation_basis, scale_fragmented, scale_fragmented_warning
from scoring import UNDEFINED

#: The lead is called significant when the exact two-sided McNemar p-value is below this.
SIGNIFICANCE = Fraction(1, 20)
#: Agreement with the consensus that a coin toss reaches: a pair has two orders.
CHANCE = 0.5
PANEL_CONSENSUS = "consensus"
PANEL_SCALE = "human_scale"
PANEL_LABEL = "label"
REASON_NO_CONSENSUS = "no pair has a consensus yet"
#: A method's verdict name on a pair it cannot order (a question without its difficulty).
NO_VERDICT = verdict_name(UNDEFINED)


@dataclass(frozen=True)
class ForestRow:
    """One method in one panel: the estimate and its interval (None when undefined).

    Agreements are fractions in [0, 1]; correlations are in [-1, 1].
    """

    method: str
    label: str
    value: float | None
    low: float | None
    high: float | None
    n: int
    undefined_reason: str | None


@dataclass(frozen=True)
class ForestPanel:
    """One panel of the forest plot: a comparison with people and its rows (registry order)."""

    key: str
    title: str
    axis: str
    percent: bool
    rows: tuple[ForestRow, ...]
    note: str


@dataclass(frozen=True)
class Lead:
    """The best method against the consensus and its lead over the next one.

    ``best`` and ``runner_up`` are method keys (``runner_up`` None when at most one
    method has a defined agreement; both None when no method agrees with the
    consensus better than chance, :func:`above_chance`); ``b`` counts the pairs only ``best`` gets right,
    ``c`` those only ``runner_up`` gets right; ``p_value`` is the exact two-sided
    McNemar p-value of ``b`` in ``b + c``; ``significant`` is decided exactly from
    ``b`` and ``c`` against :data:`SIGNIFICANCE` (None without a runner-up).
    """

    best: str | None
    runner_up: str | None
    tied: bool
    b: int | None
    c: int | None
    p_value: float | None
    significant: bool | None
    sentence: str


@dataclass(frozen=True)
class Headline:
    panels: tuple[ForestPanel, ...]
    lead: Lead


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _consensus_panel(report: AlignmentReport) -> ForestPanel:
    rows = []
    for m in report.available:
        c = report.consensus_agreement[m.key]
        ci = c.ci.agreement
        rows.append(ForestRow(method=m.key, label=m.label, value=c.agreement, low=None if ci is None else ci[0],
                              high=None if ci is None else ci[1], n=c.n_pairs,
                              undefined_reason=c.undefined_reason))
    return ForestPanel(key=PANEL_CONSENSUS, title="With the consensus", axis="agreement with the consensus (%)",
                       percent=True, rows=tuple(rows),
                       note=f"pairs with a consensus; {report.params.ci_level:.0%} bootstrap interval; 50% = chance")


def _scale_panel(report: AlignmentReport) -> ForestPanel | None:
    hs = report.human_scale
    if hs is None or not hs.available:
        return None
    overall = {r.method: r.spearman for r in hs.methods if r.scope == "overall"}
    rows = []
    for m in report.available:
        s = overall.get(m.key)
        if s is None:
            continue
        rows.append(ForestRow(method=m.key, label=m.label, value=s.value, low=None if s.ci is None else s.ci[0],
                              high=None if s.ci is None else s.ci[1], n=s.n, undefined_reason=s.undefined_reason))
    basis = correlation_basis([overall[r.method] for r in rows], hs)
    fragmented = scale_fragmented(hs)
    axis = "Spearman ρ with the human scale" + ("\nfragmented scale: not meaningful" if fragmented else "")
    note = (f"Spearman ρ on {basis} (within components of 3 or more questions); bootstrap interval (evaluators "
            "resampled); 0 = no relation")
    if fragmented:
        note += (f"; the scale is fragmented (its largest component holds {max(hs.component_sizes):,} of the "
                 f"{hs.n_questions:,} judged questions), so these correlations are not meaningful")
    return ForestPanel(key=PANEL_SCALE, title="With the human scale", axis=axis, percent=False, rows=tuple(rows),
                       note=note)


def _label_panel(report: AlignmentReport) -> ForestPanel | None:
    labels = report.labels
    analysis = labels.analysis
    if not labels.key or not analysis or not analysis.get("methods"):
        return None
    known = {m.key: m.label for m in report.methods}
    rows = []
    for m in analysis["methods"]:
        first = m["pairs"][0] if m["pairs"] else None
        if first is None:
            continue
        ci = first["agreement_ci"]
        rows.append(ForestRow(method=m["method"], label=known.get(m["method"], m["method"]),
                              value=first["agreement"], low=None if not ci else ci[0], high=None if not ci else ci[1],
                              n=first["n_pairs"], undefined_reason=None if first["agreement"] is not None
                              else "no scored pair"))
    # run-wide (the human-label analysis of the run), so the same on every study of the run: said in the title
    return ForestPanel(key=PANEL_LABEL, title=f"With the label {labels.key!r} (whole run)",
                       axis=f"agreement with the label {labels.key!r} (%)\nevery labelled question of the run",
                       percent=True, rows=tuple(rows),
                       note=f"every labelled question of scoring run {report.run.id}, not only this study's, and no "
                            "judgment of this study: same-subject pairs whose labels differ; bootstrap interval")


def mcnemar_p_exact(b: int, c: int) -> Fraction:
    """Exact two-sided McNemar p-value as a fraction: ``min(1, 2 P(X <= min(b, c)))``
    with ``X ~ Binomial(b + c, 1/2)``; 1 when ``b + c == 0``.

    Parameters
    ----------
    b, c : int
        Discordant pair counts (each >= 0).

    Returns
    -------
    Fraction
        The p-value in [0, 1], exactly (as ``scipy.stats.binomtest`` computes it in floating point).

    Raises
    ------
    ValueError
        If ``b`` or ``c`` is negative.

    References
    ----------
    McNemar, Q. (1947). Psychometrika 12(2), 153-157; the report's McNemar
    column (:func:`scoring.mcnemar_exact`).
    """
    if b < 0 or c < 0:
        raise ValueError(f"b and c must be counts >= 0; got b={b!r}, c={c!r}")
    n = b + c
    if n == 0:
        return Fraction(1)
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def _discordant(report: AlignmentReport, first: str, second: str) -> tuple[int, int]:
    """Pairs with a consensus that only ``first`` gets right, and only ``second``."""
    for t in report.mcnemar:
        if (t.method_a, t.method_b) == (first, second) and t.b is not None and t.c is not None:
            return t.b, t.c
        if (t.method_a, t.method_b) == (second, first) and t.b is not None and t.c is not None:
            return t.c, t.b
    verdict = report.pairs.columns["verdict"]
    decided = (verdict == "a") | (verdict == "b")
    right_first = decided & (report.pairs.methods[first] == verdict)
    right_second = decided & (report.pairs.methods[second] == verdict)
    return int((right_first & ~right_second).sum()), int((right_second & ~right_first).sum())


def tie_subject(labels: list[str], n_ranked: int) -> str:
    """The subject of the lead sentence when methods share the highest agreement.

    Parameters
    ----------
    labels : list of str
        Labels of the methods level at the top, in the report's order (at least two).
    n_ranked : int
        Methods with a defined agreement with the consensus (at least ``len(labels)``).

    Returns
    -------
    str
        "A and B" for two; "All n methods" when every ranked method is level (three or more);
        else "A, B and C", every level method named.

    Raises
    ------
    ValueError
        If fewer than two labels are given or ``n_ranked`` is smaller than their number.

    Examples
    --------
    >>> tie_subject(["EIP", "Simple rank"], 8)
    'EIP and Simple rank'
    >>> tie_subject(["EIP", "Simple rank", "Accuracy"], 8)
    'EIP, Simple rank and Accuracy'
    >>> tie_subject(["EIP", "Simple rank", "Accuracy"], 3)
    'All 3 methods'
    """
    if len(labels) < 2 or n_ranked < len(labels):
        raise ValueError(f"a tie needs at least two labels and n_ranked >= their number; got {len(labels)} "
                         f"label(s), n_ranked={n_ranked}")
    if len(labels) == n_ranked and n_ranked > 2:
        return f"All {n_ranked} methods"
    return f"{', '.join(labels[:-1])} and {labels[-1]}"


def upper_tail_p_exact(k: int, n: int) -> Fraction:
    """Exact one-sided binomial p-value ``P(X >= k)`` with ``X ~ Binomial(n, 1/2)``; 1 when ``n == 0``.

    Parameters
    ----------
    k, n : int
        Successes and trials, ``0 <= k <= n``.

    Returns
    -------
    Fraction
        The p-value in [0, 1], exactly.

    Raises
    ------
    ValueError
        If not ``0 <= k <= n``.

    Examples
    --------
    >>> upper_tail_p_exact(5, 5)
    Fraction(1, 32)
    """
    if not 0 <= k <= n:
        raise ValueError(f"k and n must satisfy 0 <= k <= n; got k={k!r}, n={n!r}")
    return Fraction(sum(math.comb(n, j) for j in range(k, n + 1)), 2**n)


def above_chance(agreement: MethodConsensus) -> bool:
    """Whether a method agrees with the consensus better than chance (1/2).

    Decided by the report's own interval: the lower end of the agreement's
    bootstrap interval lies above 1/2. Without an interval, by the exact
    one-sided binomial test of ``n_agree`` in ``n_pairs`` against 1/2 at
    :data:`SIGNIFICANCE`. An undefined agreement is not above chance.
    """
    if agreement.agreement is None or not agreement.n_pairs:
        return False
    ci = agreement.ci.agreement
    if ci is not None:
        return ci[0] > CHANCE
    return upper_tail_p_exact(agreement.n_agree, agreement.n_pairs) < SIGNIFICANCE


def _none_above_chance(shares: list[Fraction], n: int) -> str:
    low, high = _pct(float(min(shares))), _pct(float(max(shares)))
    span = low if low == high else f"from {low} to {high}"
    return (f"No method agrees with people better than chance: agreement with the human consensus is {span} of "
            f"{counted(n, 'pair')} with a consensus, and no method's interval lies above the 50% chance line.")


@dataclass(frozen=True)
class _OnConsensus:
    """Every method on the same pairs: those with a consensus (``n``), which of them each method gets right
    (its verdict is the consensus) and on how many it has no verdict (a question without its difficulty)."""

    n: int
    right: dict[str, int]
    no_verdict: dict[str, int]


def _on_consensus(report: AlignmentReport) -> _OnConsensus:
    verdict = report.pairs.columns["verdict"]
    decided = (verdict == "a") | (verdict == "b")
    right, no_verdict = {}, {}
    for m in report.available:
        names = report.pairs.methods[m.key][decided]
        right[m.key] = int((names == verdict[decided]).sum())
        no_verdict[m.key] = int((names == NO_VERDICT).sum())
    return _OnConsensus(n=int(decided.sum()), right=right, no_verdict=no_verdict)


def _no_verdict_note(report: AlignmentReport, on: _OnConsensus, keys: list[str]) -> str:
    """Says which ranked methods have no verdict on some of the pairs, and that those pairs count as misses."""
    gaps = [f"{report.label(k)} on {on.no_verdict[k]:,}" for k in keys if on.no_verdict[k]]
    if not gaps:
        return ""
    listed = gaps[0] if len(gaps) == 1 else f"{', '.join(gaps[:-1])} and {gaps[-1]}"
    return (f" Every method is counted on the same {counted(on.n, 'pair')} with a consensus, a pair it has no "
            f"verdict on (a question without its difficulty) as a miss: {listed} of them.")


def _lead(report: AlignmentReport) -> Lead:
    on = _on_consensus(report)
    ranked = []
    for m in report.available:
        c = report.consensus_agreement[m.key]
        if c.agreement is not None and c.n_pairs and on.n:
            ranked.append((Fraction(on.right[m.key], on.n), m.key))
    if not ranked:
        return Lead(best=None, runner_up=None, tied=False, b=None, c=None, p_value=None, significant=None,
                    sentence=f"No method can be ranked yet: {REASON_NO_CONSENSUS}.")
    order = {m.key: i for i, m in enumerate(report.available)}
    ranked.sort(key=lambda t: (-t[0], order[t[1]]))
    note = _no_verdict_note(report, on, [key for _, key in ranked])
    if not any(above_chance(report.consensus_agreement[key]) for _, key in ranked):
        return Lead(best=None, runner_up=None, tied=False, b=None, c=None, p_value=None, significant=None,
                    sentence=_none_above_chance([share for share, _ in ranked], on.n) + note)
    best = ranked[0][1]
    where = f"{_pct(float(ranked[0][0]))} of {counted(on.n, 'pair')} with a consensus"
    if len(ranked) == 1:
        return Lead(best=best, runner_up=None, tied=False, b=None, c=None, p_value=None, significant=None,
                    sentence=f"{report.label(best)} is the only method with a defined agreement with the "
                             f"consensus ({where}).{note}")
    nxt = ranked[1][1]
    b, c = _discordant(report, best, nxt)
    p = mcnemar_p_exact(b, c)
    significant = p < SIGNIFICANCE
    test = (f"exact McNemar p = {float(p):.3g}: {b:,} pair{'s' if b != 1 else ''} only {report.label(best)} "
            f"gets right, {c:,} only {report.label(nxt)}")
    tied = ranked[0][0] == ranked[1][0]
    if tied:
        level = [report.label(key) for share, key in ranked if share == ranked[0][0]]
        sentence = (f"{tie_subject(level, len(ranked))} agree equally well with the human consensus "
                    f"({where}); no method leads ({test}).")
    else:
        verdict = "is significant" if significant else "is not significant at the 5% level"
        sentence = (f"{report.label(best)} agrees best with the human consensus ({where}); its lead over "
                    f"{report.label(nxt)} ({_pct(float(ranked[1][0]))}) {verdict} ({test}).")
    return Lead(best=best, runner_up=nxt, tied=tied, b=b, c=c, p_value=float(p), significant=significant,
                sentence=sentence + note)


def report_headline(report: AlignmentReport) -> Headline:
    """What the report page shows first: the forest plot's values and the lead sentence.

    Parameters
    ----------
    report : AlignmentReport
        A computed report (its JSON read back works the same).

    Returns
    -------
    Headline
        ``panels``: the consensus panel (agreement in [0, 1] with its percentile
        bootstrap interval, every available method), the human-scale panel
        (overall Spearman ρ with its bootstrap interval; left out while the
        study has no scale) and the label panel (agreement at margin 0 on
        every labelled question of the run; only with a label). ``lead``:
        when no method agrees with the consensus better than chance
        (:func:`above_chance`), no method (``best`` None) and a sentence that
        says so; else the method with the highest agreement with the consensus on the
        pairs with a consensus (ties among methods broken by registry order and
        said so), the next one, the exact McNemar test on the same pairs (the
        report's own test when it holds one for the two, else the same test
        counted from the pairs) and one sentence.

    Notes
    -----
    Every method is ranked on the same pairs, those with a consensus (the
    report's pairs table), as the McNemar test counts them: a method's share is
    the pairs it gets right over all of them, a tie or no verdict (a question
    without its difficulty) counting as a miss, as in the report's agreement.
    So the order and the test never disagree (``b - c`` is the difference of
    the two methods' right answers), and a method that orders only some pairs
    does not lead on fewer pairs than the others; the sentence then names the
    methods without a verdict on some pairs and on how many. Shares are
    compared as exact fractions and the significance as the exact binomial
    tail against 1/20, so no rounding decides either.

    References
    ----------
    EIP paper, section 3.3 and table 2 (agreement with the consensus).
    """
    panels = [_consensus_panel(report)]
    panels += [p for p in (_scale_panel(report), _label_panel(report)) if p is not None]
    return Headline(panels=tuple(panels), lead=_lead(report))


def _ssr_note(ssr: float | None) -> str | None:
    if ssr is None or ssr >= 0:
        return None
    return (f"SSR is negative ({ssr:.2f}): the questions' estimation error is larger than their spread, so the votes "
            "cannot yet tell the questions apart. SSR = (spread - error) / spread drops below 0 then; read it as no "
            "reliability, and collect more votes per question.")


def _edge_questions(report: AlignmentReport) -> list[str]:
    hs = report.human_scale
    out = []
    for q in hs.questions if hs is not None else ():
        if q.difficulty is None or q.ci is None:
            continue
        if q.difficulty <= q.ci[0] or q.difficulty >= q.ci[1]:
            out.append(f"{q.question.dataset} {q.question.external_id}")
    return out


def single_vote_pairs(report: AlignmentReport) -> int:
    """Pairs whose consensus rests on exactly one vote."""
    cols = report.pairs.columns
    decided = (cols["verdict"] == "a") | (cols["verdict"] == "b")
    return int((decided & (cols["votes_a"] + cols["votes_b"] == 1)).sum())


def uncertainty_notes(report: AlignmentReport) -> dict[str, tuple[str, ...]]:
    """Plain notes on the figures of ``report`` that can surprise a reader, by section.

    Parameters
    ----------
    report : AlignmentReport

    Returns
    -------
    dict of str to tuple of str
        ``"consensus"``: pairs whose consensus is a single vote;
        ``"human_scale"``: a negative SSR, a fragmented scale, an undefined split-half;
        ``"human_scale_questions"``: estimates on or beyond an end of their
        bootstrap interval; ``"evaluators"``: evaluators whose votes a
        simulation made. A key is present only when it has a note.
    """
    notes: dict[str, list[str]] = {}
    simulated = sum(e.simulated for e in report.evaluators)
    if simulated:
        n = len(report.evaluators)
        who = ("The one evaluator is" if n == 1 else f"All {n:,} evaluators are" if simulated == n
               else f"{simulated:,} of the {n:,} evaluators {'is' if simulated == 1 else 'are'}")
        notes.setdefault("evaluators", []).append(
            f"{who} simulated: a program made their votes (seeded, from a made-up difficulty), not a person. "
            "The figures show how the report reads, not what people think"
            + ("." if simulated == n else "; the evaluators table marks them."))
    single = single_vote_pairs(report)
    n_decided = report.consensus.n_decided
    if single:
        notes.setdefault("consensus", []).append(
            f"{single:,} of the {counted(n_decided, 'pair')} with a consensus {'has' if single == 1 else 'have'} "
            "a single vote: their consensus is one "
            "evaluator's verdict, not agreement between people (min. votes per pair: "
            f"{report.params.min_votes}). Raise the minimum to 2 to count only pairs several people judged.")
    hs = report.human_scale
    if hs is not None and hs.available:
        if (ssr := _ssr_note(hs.ssr)) is not None:
            notes.setdefault("human_scale", []).append(ssr)
        if (fragmented := scale_fragmented_warning(hs)) is not None:
            notes.setdefault("human_scale", []).append(fragmented)
        if hs.split_half is None:
            why = ("it needs random halves of the evaluators that each judged at least 3 of the same questions, "
                   f"and this study has {len(report.evaluators)} evaluator{'s' if len(report.evaluators) != 1 else ''}")
            notes.setdefault("human_scale", []).append(f"Split-half is undefined: {why}.")
        edge = _edge_questions(report)
        if edge:
            shown = ", ".join(edge[:5]) + (f" and {len(edge) - 5:,} more" if len(edge) > 5 else "")
            notes.setdefault("human_scale_questions", []).append(
                f"{len(edge):,} question{'s' if len(edge) != 1 else ''} ({shown}) "
                f"{'sits' if len(edge) == 1 else 'sit'} on or beyond an end of {'its' if len(edge) == 1 else 'their'} "
                "interval. The interval is a bootstrap over evaluators, not estimate ± 1.96 SE: with few votes the "
                "refitted scales pile up on one side of the estimate, and SE (from the observed information) can be "
                "wide while the interval is narrow. Such a question needs more votes.")
    return {k: tuple(v) for k, v in notes.items()}
