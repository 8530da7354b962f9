"""The human side of the report: consensus, each evaluator against each method
and against the others, each method against the consensus (with bootstrap
intervals and McNemar tests), and inter-rater reliability.

Pure functions of :class:`~annotate.reports.selectors.alignment.StudyData` and
verdict arrays; every statistic comes from :mod:`scoring`.
"""
from __future__ import annotations

from operator import itemgetter

import numpy as np

from annotate.core import counted
from annotate.reports.selectors.alignment import REFERENCE_METHOD, PairInfo, StudyData, report_methods
from annotate.reports.services._stats import (
    REASON_NO_SCORED_PAIR,
    agreement_fields,
    agreement_of,
    average,
    interval_of,
    kappa_agreement_of,
    mcnemar_of,
    unstable_pairs,
    verdict_name,
)
from annotate.reports.services.model import (
    Comparison,
    ConsensusCounts,
    EvaluatorRow,
    FleissKappa,
    InterRater,
    KrippendorffAlpha,
    McNemar,
    MethodConsensus,
    MethodInfo,
    MethodSummary,
    OthersAgreement,
    PairRows,
    TieWeight,
)
from scoring import (
    FIRST,
    SECOND,
    SKIP,
    UNDEFINED,
    ConsensusResult,
    consensus,
    fleiss_kappa,
    krippendorff_alpha,
    leave_one_out_verdicts,
    mcnemar_exact,
    method_agreement,
    pair_kappa,
    with_reversed_pairs,
)
from scoring.methods import at_bound_flags
from scoring.pair_inference import paired_bootstrap_agreement_cis

REASON_NOT_JUDGED = "no judgment yet"
REASON_NO_OTHERS = "no pair this evaluator voted on has a consensus of the other evaluators"
REASON_FEW_RATERS = "fewer than 2 evaluators have voted"
REASON_NO_COMPLETE = "no pair was voted on (not skipped) by all {evaluators}"
REASON_NO_VOTES = "no evaluator has voted yet"
REASON_METHOD_MISSING = "run {run_id} has no {column} value for any question of this study"


def _votes_only(v: np.ndarray) -> list:
    """Verdict codes with anything but FIRST/SECOND as None (for kappa and alpha)."""
    return np.where(np.isin(v, (FIRST, SECOND)), v.astype(object), None).tolist()


def study_consensus(data: StudyData, *, min_votes: int, tie_rule: str) -> tuple[ConsensusResult, np.ndarray]:
    """The consensus and its verdict per study pair (``UNDEFINED`` when none)."""
    result = consensus(data.judgment_array, min_votes=min_votes,
                       tie_rule=tie_rule)
    judged = {p.pair_id for p in result.pairs}
    verdicts = np.array(
        [int(result[p.pair_id].verdict) if p.pair_id in judged else int(UNDEFINED) for p in data.pairs],
        dtype=np.int8,
    )
    return result, verdicts


def question_bound_flags(data: StudyData, keys: list[str]) -> dict[str, np.ndarray]:
    """Per method of ``keys`` whose fit confines its difficulty to a box (registry
    ``question_bounds``), float64 of shape (n_questions,) in ``data.question_ids``
    order: 1.0 where the question's value is on the bound, 0.0 where not, NaN
    where undefined (no value, or no box stored: the method did not run).
    One rule with the run's downloads: :func:`scoring.methods.at_bound_flags`."""
    bounded = {m.key for m in report_methods() if m.bounds_param}
    return {k: at_bound_flags(data.difficulty[k], data.bounds.get(k)) for k in keys if k in bounded}


def pair_bound_flags(flags: np.ndarray, pair_index: np.ndarray) -> np.ndarray:
    """Per pair (rows of ``pair_index``, shape (n_pairs, 2)), 1.0 when either
    question's flag in ``flags`` (:func:`question_bound_flags`) is 1, else NaN
    when either is undefined, else 0.0: the pairs :attr:`MethodInfo.bound_verdicts` counts."""
    pair_index = np.asarray(pair_index, dtype=np.int64).reshape(-1, 2)
    both = flags[pair_index]
    out = np.where(np.isnan(both).any(axis=1), np.nan, 0.0)
    out[(both == 1.0).any(axis=1)] = 1.0
    return out


def pair_rows(
    data: StudyData, result: ConsensusResult, method_verdicts: dict[str, np.ndarray],
    at_bound: dict[str, np.ndarray] | None = None,
) -> PairRows:
    """One record per study pair (column-wise): questions, consensus with vote counts, method verdicts and,
    per bounded method in ``at_bound`` (:func:`question_bound_flags`), whether a question of the pair is on
    the bound (:func:`pair_bound_flags`)."""
    n = len(data.pairs)
    names = {e.participation_id: e.pseudonym for e in data.evaluators}
    columns: dict[str, list] = {k: [] for k in (*PairRows.INT, *PairRows.TEXT, *PairRows.FLOAT)}
    # PairInfo is a named tuple: a field is a column by itemgetter (faster than attribute access or zip(*pairs))
    fields = {name: list(map(itemgetter(k), data.pairs)) for k, name in enumerate(PairInfo._fields)}
    for k, attr in (("pair_id", "pair_id"), ("position", "position"), ("question_a", "question_a_id"),
                    ("question_b", "question_b_id"), ("subject", "subject"), ("dataset_a", "dataset_a"),
                    ("external_a", "external_a"), ("dataset_b", "dataset_b"), ("external_b", "external_b")):
        columns[k] = fields[attr]
    votes_a, votes_b, skips = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    verdict = np.full(n, None, dtype=object)
    method = np.full(n, "no_consensus", dtype=object)
    reason = np.full(n, REASON_NOT_JUDGED, dtype=object)
    weight_a, weight_b = np.full(n, np.nan), np.full(n, np.nan)
    ties = {}
    col_of = {p.pair_id: j for j, p in enumerate(data.pairs)}
    for c in result.pairs:
        j = col_of[c.pair_id]
        votes_a[j], votes_b[j], skips[j] = c.votes_first, c.votes_second, c.n_skips
        verdict[j] = None if c.winner is None else verdict_name(c.winner)
        method[j], reason[j] = c.method, c.reason
        if c.weight_first is not None:
            weight_a[j] = c.weight_first
        if c.weight_second is not None:
            weight_b[j] = c.weight_second
        if c.tie_weights:
            ties[j] = tuple(TieWeight(evaluator=names[e], vote=verdict_name(v), weight=w) for e, v, w in c.tie_weights)
    columns.update(votes_a=votes_a, votes_b=votes_b, n_skips=skips, verdict=verdict, method=method, reason=reason,
                   weight_a=weight_a, weight_b=weight_b)
    methods = {k: _names(v) for k, v in method_verdicts.items()}
    bounds = {k: pair_bound_flags(v, data.pair_index) for k, v in (at_bound or {}).items()}
    return PairRows(columns=columns, tie_weights=ties, methods=methods, at_bound=bounds)


def _names(codes: np.ndarray) -> np.ndarray:
    """Verdict names of an array of verdict codes (``verdict_name`` element-wise)."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.empty(codes.size, dtype=object)
    for code in np.unique(codes).tolist():
        out[codes == code] = verdict_name(code)
    return out


def consensus_counts(rows: PairRows) -> ConsensusCounts:
    counts = {"majority": 0, "tie_resolved": 0, "no_consensus": 0}
    names, n = np.unique(rows.columns["method"].astype(str), return_counts=True)
    for name, k in zip(names.tolist(), n.tolist(), strict=True):
        counts[name] += k
    return ConsensusCounts(**counts, n_pairs=len(rows), n_decided=counts["majority"] + counts["tie_resolved"])


def evaluator_rows(
    data: StudyData, method_verdicts: dict[str, np.ndarray], *, min_votes: int, tie_rule: str
) -> tuple[EvaluatorRow, ...]:
    """Per evaluator: counts, agreement and kappa with each method over their
    voted pairs, and agreement and kappa with the consensus of the others."""
    rows = []
    others = leave_one_out_verdicts(data.human, min_votes=min_votes, tie_rule=tie_rule) if data.evaluators else None
    for i, e in enumerate(data.evaluators):
        mine = data.human[i]
        rows.append(EvaluatorRow(
            id=e.participation_id, short=e.short, pseudonym=e.pseudonym,
            field_of_study=e.field_of_study, education_level=e.education_level,
            n_votes=int(np.isin(mine, (FIRST, SECOND)).sum()),
            n_skips=int((mine == SKIP).sum()),
            methods={k: agreement_of(method_agreement(v, mine)) for k, v in method_verdicts.items()},
            vs_others=_vs_others(data, i, others[i]),
            simulated=e.simulated,
        ))
    return tuple(rows)


def skipped_by_one(human: np.ndarray, i: int) -> tuple[int, int, int]:
    """Shared pairs of evaluator ``i`` and the others left out because of skips.

    A pair is shared when evaluator ``i`` and at least one other evaluator
    judged it (vote or skip). Returns ``(by_evaluator, by_others, by_both)``:
    shared pairs evaluator ``i`` skipped while another evaluator voted,
    shared pairs evaluator ``i`` voted on while every other judgment is a
    skip, and shared pairs that evaluator ``i`` and every other judge of it
    skipped.
    """
    mine = human[i]
    others = np.delete(human, i, axis=0)
    others_voted = np.isin(others, (FIRST, SECOND)).any(axis=0)
    others_judged = (others != UNDEFINED).any(axis=0)
    by_evaluator = int(((mine == SKIP) & others_voted).sum())
    by_others = int((np.isin(mine, (FIRST, SECOND)) & others_judged & ~others_voted).sum())
    by_both = int(((mine == SKIP) & others_judged & ~others_voted).sum())
    return by_evaluator, by_others, by_both


def _vs_others(data: StudyData, i: int, theirs: np.ndarray) -> OthersAgreement:
    """Evaluator ``i`` against ``theirs``, the consensus of the others (one row of
    :func:`scoring.consensus.leave_one_out_verdicts`)."""
    k = pair_kappa(data.human[i], theirs)
    by_evaluator, by_others, by_both = skipped_by_one(data.human, i)
    return OthersAgreement(**vars(kappa_agreement_of(k, REASON_NO_OTHERS)),
                           pairs_skipped_by_one=by_evaluator + by_others + by_both,
                           n_skipped_by_evaluator=by_evaluator, n_skipped_by_others=by_others,
                           n_skipped_by_both=by_both)


def method_summaries(evaluators: tuple[EvaluatorRow, ...], available: list[str]) -> dict[str, MethodSummary]:
    """Per method, the mean evaluator agreement (ties as misses and excluding ties) and kappa
    (defined values only, with a note)."""
    return {
        k: MethodSummary(
            agreement=average([e.methods[k].agreement for e in evaluators]),
            agreement_excluding_ties=average([e.methods[k].agreement_excluding_ties for e in evaluators]),
            kappa=average([e.methods[k].kappa.value for e in evaluators]),
        )
        for k in available
    }


def reference_vs_baselines(evaluators: tuple[EvaluatorRow, ...], available: list[str]) -> tuple[Comparison, ...]:
    """Paper: "EIP beats Simple Rank for 18 of 20 evaluators, mean margin +9.3%"."""
    out = []
    for k in available:
        if k == REFERENCE_METHOD:
            continue
        pairs = [(e.methods[REFERENCE_METHOD].agreement, e.methods[k].agreement) for e in evaluators]
        defined = [(a, b) for a, b in pairs if a is not None and b is not None]
        margin = average([None if a is None or b is None else a - b for a, b in pairs])
        out.append(Comparison(
            method_a=REFERENCE_METHOD, method_b=k,
            n_a_higher=sum(a > b for a, b in defined), n_equal=sum(a == b for a, b in defined),
            n_b_higher=sum(a < b for a, b in defined), mean_margin=margin,
        ))
    return tuple(out)


def consensus_methods(
    method_verdicts: dict[str, np.ndarray], cons: np.ndarray, *, n_boot: int, seed: int
) -> tuple[dict[str, MethodConsensus], tuple[McNemar, ...]]:
    """Each method against the consensus (agreement, kappa, bootstrap CIs), and
    exact McNemar tests of the reference method against each baseline.

    Every method is bootstrapped with the same seed, so the replicates
    resample the same pairs for every method (a paired bootstrap).
    """
    per_method = {}
    agreements = {k: method_agreement(v, cons) for k, v in method_verdicts.items()}
    scored = [k for k, a in agreements.items() if a.n_pairs]
    # one draw of resampled pairs for every method (the same as one bootstrap per method with this seed)
    cis = dict(zip(scored, paired_bootstrap_agreement_cis([method_verdicts[k] for k in scored], cons,
                                                          n_boot=n_boot, seed=seed), strict=True))
    for k, a in agreements.items():
        per_method[k] = MethodConsensus(**agreement_fields(a), ci=interval_of(cis.get(k), REASON_NO_SCORED_PAIR))
    tests = []
    decided = np.isin(cons, (FIRST, SECOND))
    if REFERENCE_METHOD in method_verdicts:
        ref_correct = (method_verdicts[REFERENCE_METHOD] == cons)[decided]
        for k, v in method_verdicts.items():
            if k == REFERENCE_METHOD:
                continue
            if not decided.any():
                tests.append(mcnemar_of(REFERENCE_METHOD, k, None, REASON_NO_SCORED_PAIR))
                continue
            r = mcnemar_exact(ref_correct.astype(int), (v == cons)[decided].astype(int))
            tests.append(mcnemar_of(REFERENCE_METHOD, k, r))
    return per_method, tuple(tests)


def inter_rater(data: StudyData) -> InterRater:
    """Krippendorff's alpha (evaluators x pairs, skips and gaps missing) and
    Fleiss' kappa on the pairs every voting evaluator voted on.

    Both are orientation-free: every pair is counted a second time stored the
    other way round (:func:`scoring.with_reversed_pairs`), so which question
    is "a" changes neither. ``n_pairable``, ``n_units_pairable`` and
    ``n_items`` count the pairs once.
    """
    voted = np.isin(data.human, (FIRST, SECOND))
    raters = voted.any(axis=1)
    n_raters = int(raters.sum())
    scope = ("pairs voted on (not skipped) by the one evaluator who voted" if n_raters == 1
             else f"pairs voted on (not skipped) by every one of the {n_raters} evaluators who voted")
    if n_raters == 0:
        alpha = KrippendorffAlpha(value=None, d_o=None, d_e=None, n_pairable=0, n_units_pairable=0,
                                  level="nominal", undefined_reason=REASON_NO_VOTES)
    else:
        # a pair with fewer than two votes is no pairable unit: leaving it out changes no sum (a study of 364k
        # pairs with 6,000 judged ones hands alpha 6,000 units, not 364k)
        units = voted[raters].sum(axis=0) >= 2
        if not units.any():
            units[:] = True  # nothing is pairable: alpha says why from the whole matrix
        r = krippendorff_alpha([_votes_only(row) for row in with_reversed_pairs(data.human[raters][:, units], axis=1)])
        alpha = KrippendorffAlpha(value=r.alpha, d_o=r.d_o, d_e=r.d_e, n_pairable=r.n_pairable // 2,
                                  n_units_pairable=r.n_units_pairable // 2, level=r.level,
                                  undefined_reason=r.undefined_reason)
    complete = voted[raters].all(axis=0) if n_raters else np.zeros(len(data.pairs), dtype=bool)
    empty = {"value": None, "p_o": None, "p_e": None, "n_items": int(complete.sum()), "n_raters": n_raters,
             "scope": scope}
    if n_raters < 2:
        fleiss = FleissKappa(**empty, undefined_reason=REASON_FEW_RATERS)
    elif not complete.any():
        fleiss = FleissKappa(**empty, undefined_reason=REASON_NO_COMPLETE.format(
            evaluators=counted(n_raters, "evaluator")))
    else:
        f = fleiss_kappa(with_reversed_pairs(data.human[raters][:, complete].T, axis=0))
        fleiss = FleissKappa(value=f.kappa, p_o=f.p_o, p_e=f.p_e, n_items=f.n_items // 2, n_raters=f.n_raters,
                             scope=scope, undefined_reason=f.undefined_reason)
    return InterRater(n_raters=n_raters, krippendorff_alpha=alpha, fleiss_kappa=fleiss)


def method_availability(data: StudyData) -> tuple[MethodInfo, ...]:
    """Each method with whether the run has any value for the study's
    questions, its tie tolerance and, for a method with replicate fits (MIRT
    seeds) stored by the run, how many study pairs the fits disagree on; for
    a method whose fit confines its difficulty to a box, how many study pairs
    have a question on the bound (:func:`scoring.methods.at_bound_flags`)."""
    out = []
    for m in report_methods():
        has = bool(np.isfinite(data.difficulty[m.key]).any())
        replicates = data.replicates.get(m.key)
        n_replicates = None if replicates is None else int(np.isfinite(replicates).any(axis=0).sum())
        unstable = None
        if has and n_replicates:
            unstable = int(unstable_pairs(data, data.pair_index, m.key).sum())
        on_bound = None
        if has and m.key in data.bounds:
            flags = at_bound_flags(data.difficulty[m.key], data.bounds[m.key])
            on_bound = int((pair_bound_flags(flags, data.pair_index) == 1.0).sum())
        out.append(MethodInfo(
            key=m.key, label=m.label, column=m.column, available=has,
            undefined_reason=None if has else REASON_METHOD_MISSING.format(run_id=data.run.pk, column=m.column),
            tie_tolerance=m.tie_tolerance, unstable_verdicts=unstable, n_replicates=n_replicates if has else None,
            bound_verdicts=on_bound,
        ))
    return tuple(out)
