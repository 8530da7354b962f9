"""The report's crowd section: judges weighted by their reliability.

Every vote of the study (skips are not votes; excluded evaluators and
attention-check pairs are already left out by
:func:`annotate.reports.selectors.alignment.study_alignment_data`) enters a
crowd Bradley-Terry model (:func:`scoring.crowd_bt.crowd_bradley_terry`): the
difficulty scale fitted together with one reliability per evaluator. Beside
it, unweighted: the plain penalised Bradley-Terry scale of the same votes
(:func:`scoring.human_scale.bradley_terry`, the human scale's point
estimate) and the report's consensus. Each available method is compared
with both sides: agreement with the consensus (the report's own rules) and
Spearman's correlation with the scale. Pure functions of
:class:`~annotate.reports.selectors.alignment.StudyData`; nothing is written.
"""
from __future__ import annotations

import math

import numpy as np

from annotate.reports.selectors.alignment import StudyData, index_of
from annotate.reports.services import human
from annotate.reports.services.model import MethodConsensus
from annotate.reports.services.model_crowd import (
    CrowdAgreement,
    CrowdEvaluator,
    CrowdMethod,
    CrowdQuestion,
    CrowdSection,
)
from annotate.reports.services.scale import MAX_BOOT, PENALTY, question_refs
from scoring import FIRST, SECOND, UNDEFINED
from scoring.human_scale import bradley_terry, oriented_judgments
from scoring.methods import get_method
from scoring.pairs import merge_ties
from scoring.scale_correlations import ScaleCorrelation, scale_correlations

MODEL = ("Crowd Bradley-Terry: each evaluator judges as the scale says with probability eta (the reliability) and "
         "at random otherwise; scale and reliabilities by penalised maximum likelihood (ridge penalty on the "
         "logits); reliability intervals by profile likelihood")
WEIGHTING = ("Weighted consensus: each vote counts its evaluator's reliability; the side with the larger total wins "
             "(decided exactly), equal totals give no consensus; a pair needs min_votes votes, as unweighted")
REASON_NO_VOTES = "no evaluator has voted yet (skips are not votes)"
REASON_NOT_FITTED = "the crowd model could not be fitted: {error}"
REASON_NO_CONSENSUS = "no pair has a consensus"


def _value(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def weighted_consensus(human_matrix: np.ndarray, weights: np.ndarray, *, min_votes: int) -> np.ndarray:
    """Each pair's consensus when every vote counts its evaluator's weight.

    Parameters
    ----------
    human_matrix : ndarray of int8, shape (n_evaluators, n_pairs)
        ``FIRST``/``SECOND`` votes; anything else (a skip, no judgment) is no vote.
    weights : ndarray of float64, shape (n_evaluators,)
        Finite weights >= 0 of the evaluators who voted (here: reliabilities in [0, 1]).
    min_votes : int
        Fewest votes a pair needs for a consensus.

    Returns
    -------
    ndarray of int8, shape (n_pairs,)
        ``FIRST`` or ``SECOND`` where that side's total weight is larger,
        ``UNDEFINED`` on equal totals (all-zero weights included) or too few votes.

    Notes
    -----
    The comparison is exact: the sign of ``math.fsum`` (the correctly rounded
    sum) of the first side's weights and the second side's negated weights is
    the sign of the exact sum, since a non-zero sum of floats is at least the
    smallest subnormal and rounds to a non-zero float of its sign.
    """
    votes = np.isin(human_matrix, (FIRST, SECOND))
    out = np.full(human_matrix.shape[1], UNDEFINED, dtype=np.int8)
    n_votes = votes.sum(axis=0)
    for p in np.flatnonzero(n_votes >= min_votes):
        column = human_matrix[:, p]
        voters = np.flatnonzero(votes[:, p])
        signed = [float(weights[e]) if column[e] == FIRST else -float(weights[e]) for e in voters]
        total = math.fsum(signed)
        if total > 0:
            out[p] = FIRST
        elif total < 0:
            out[p] = SECOND
    return out


def _components(harder: np.ndarray, other: np.ndarray, n: int) -> np.ndarray:
    """Connected component of each question in the votes' graph; -1 when unjudged."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(harder.size), (harder, other)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    judged = np.zeros(n, dtype=bool)
    judged[harder] = judged[other] = True
    return np.where(judged, labels, -1).astype(np.int64)


def _agreement(consensus: MethodConsensus, correlation: ScaleCorrelation) -> CrowdAgreement:
    ci = consensus.ci.agreement if consensus.ci is not None else None
    return CrowdAgreement(
        consensus_agreement=consensus.agreement, consensus_agreement_ci=tuple(ci) if ci else None,
        consensus_kappa=consensus.kappa.value, n_pairs=consensus.n_pairs, n_agree=consensus.n_agree,
        n_ties=consensus.n_ties, consensus_undefined_reason=consensus.undefined_reason,
        scale_spearman=_value(correlation.value),
        scale_spearman_ci=(correlation.ci_low, correlation.ci_high) if math.isfinite(correlation.ci_low) else None,
        n_questions=correlation.n, scale_undefined_reason=correlation.undefined_reason,
    )


def crowd_section(data: StudyData, *, available: list[str], verdicts: dict[str, np.ndarray],
                  consensus: np.ndarray, unweighted: dict[str, MethodConsensus], min_votes: int, n_boot: int,
                  ci_level: float, seed: int) -> CrowdSection:
    """The crowd Bradley-Terry fit, the weighted consensus, and each method under both weightings.

    Parameters
    ----------
    data : StudyData
    available : list of str
        Method keys the run has values for (registry order).
    verdicts : dict of str to ndarray of int8, shape (n_pairs,)
        Each available method's verdict per pair (:func:`annotate.reports.services._stats.method_verdicts`).
    consensus : ndarray of int8, shape (n_pairs,)
        The report's (unweighted) consensus verdict per pair.
    unweighted : dict of str to MethodConsensus
        The report's agreement of each method with that consensus (shown as is).
    min_votes : int
        Fewest votes a pair needs for a consensus (weighted too).
    n_boot : int
        Bootstrap replicates of the weighted agreements (as the report's); the
        scale correlations use at most :data:`~annotate.reports.services.scale.MAX_BOOT`.
    ci_level : float
        Level of every interval, in (0, 1).
    seed : int
        Seed of every bootstrap (the same for each method and both sides).

    Returns
    -------
    CrowdSection
        Evaluators in ``data.evaluators`` order (reliability ``None`` without a
        vote); questions in ``data.question_ids`` order, judged ones only.
    """
    from scoring.crowd_bt import crowd_bradley_terry
    from scoring.exceptions import ConvergenceError

    n_items, n_eval = data.question_ids.size, len(data.evaluators)
    pair_ids = np.fromiter((p.pair_id for p in data.pairs), np.int64, len(data.pairs))
    part_ids = np.fromiter((e.participation_id for e in data.evaluators), np.int64, n_eval)
    rows, who = (index_of(ids, column) for ids, column in ((pair_ids, data.judgment_array[:, 0]),
                                                           (part_ids, data.judgment_array[:, 1])))
    harder, other, kept = oriented_judgments(data.pair_index, rows, data.judgment_array[:, 2])
    common = {"model": MODEL, "weighting": WEIGHTING, "penalty": PENALTY, "ci_level": ci_level, "n_boot": n_boot,
              "n_votes": int(harder.size),
              "n_pairs_consensus_unweighted": int(np.isin(consensus, (FIRST, SECOND)).sum())}
    empty = {"n_iter": 0, "converged": False, "n_pairs_consensus_weighted": 0, "n_pairs_changed": 0,
             "evaluators": (), "methods": (), "questions": ()}
    if harder.size == 0:
        return CrowdSection(available=False, undefined_reason=REASON_NO_VOTES, **common, **empty)
    try:
        fit = crowd_bradley_terry(harder, other, who[kept], n_items=n_items, n_evaluators=n_eval, penalty=PENALTY,
                                  ci_level=ci_level)
        plain, _ = bradley_terry(harder, other, n_items=n_items, penalty=PENALTY)
    except ConvergenceError as error:
        return CrowdSection(available=False, undefined_reason=REASON_NOT_FITTED.format(error=error), **common,
                            **empty)
    weighted_cons = weighted_consensus(data.human, np.nan_to_num(fit.reliability, nan=0.0), min_votes=min_votes)
    weighted, _ = human.consensus_methods(verdicts, weighted_cons, n_boot=n_boot, seed=seed)
    component = _components(harder, other, n_items)
    merged = [merge_ties(data.harder(k), tol=get_method(k).tie_tolerance) for k in available]
    boot = {"n_boot": min(n_boot, MAX_BOOT), "ci_level": ci_level, "seed": seed}
    plain_r = scale_correlations(plain, merged, component, **boot) if merged else []
    crowd_r = scale_correlations(fit.difficulty, merged, component, **boot) if merged else []
    methods = tuple(
        CrowdMethod(method=k, unweighted=_agreement(unweighted[k], plain_r[j]["spearman"]),
                    weighted=_agreement(weighted[k], crowd_r[j]["spearman"]))
        for j, k in enumerate(available)
    )
    evaluators = tuple(
        CrowdEvaluator(
            id=e.participation_id, short=e.short, pseudonym=e.pseudonym, reliability=_value(fit.reliability[i]),
            reliability_ci=(float(fit.reliability_low[i]), float(fit.reliability_high[i]))
            if math.isfinite(fit.reliability_low[i]) else None,
            n_judgments=int(fit.n_judgments[i]))
        for i, e in enumerate(data.evaluators)
    )
    refs, subjects = question_refs(data)
    n_judged = np.bincount(np.concatenate([harder, other]), minlength=n_items)
    questions = tuple(
        CrowdQuestion(id=refs[i].id, dataset=refs[i].dataset, external_id=refs[i].external_id, subject=subjects[i],
                      difficulty_unweighted=_value(plain[i]), difficulty_weighted=_value(fit.difficulty[i]),
                      se_weighted=_value(fit.se[i]), n_judgments=int(n_judged[i]))
        for i in np.flatnonzero(component >= 0) if refs[i] is not None
    )
    decided = np.isin(weighted_cons, (FIRST, SECOND)) | np.isin(consensus, (FIRST, SECOND))
    return CrowdSection(
        available=True, undefined_reason=None, **common, n_iter=fit.n_iter, converged=fit.converged,
        n_pairs_consensus_weighted=int(np.isin(weighted_cons, (FIRST, SECOND)).sum()),
        n_pairs_changed=int((decided & (weighted_cons != consensus)).sum()),
        evaluators=evaluators, methods=methods, questions=questions,
    )
