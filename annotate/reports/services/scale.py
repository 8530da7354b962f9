"""The human difficulty scale of a study and every method against it.

Every vote of the study (skips are not votes; excluded evaluators and
attention-check pairs are already left out by
:func:`annotate.reports.selectors.alignment.study_alignment_data`) enters a
Bradley-Terry scale (:func:`scoring.human_scale.human_scale`); each registry
method's difficulty is then correlated with it (Spearman and Kendall, with
bootstrap intervals), overall and per subject
(:func:`scoring.scale_correlations.scale_correlations`). Pure functions of
:class:`~annotate.reports.selectors.alignment.StudyData`.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from annotate.models import PairStrategy
from annotate.reports.selectors.alignment import StudyData, index_of
from annotate.reports.services.model import (
    HumanScaleEvaluator,
    HumanScaleMethod,
    HumanScaleQuestion,
    HumanScaleSection,
    QuestionRef,
    ScaleCorrelationRow,
)
from scoring.human_scale import MISFIT_THRESHOLD, HumanScaleWarning, human_scale, oriented_judgments
from scoring.methods import get_method
from scoring.pairs import merge_ties
from scoring.scale_correlations import ScaleCorrelation, scale_correlations_by_scope

MODEL = "Bradley-Terry, penalised maximum likelihood (ridge penalty on the logits), sum to zero per component"
#: Bootstrap replicates of the scale (refits resampling evaluators) and of its correlations: the report's
#: n_boot, at most this many (each replicate refits the scale).
MAX_BOOT = 200
N_SPLITS = 100
PENALTY = 0.1
SCOPE_OVERALL = "overall"
REASON_NO_VOTES = "no evaluator has voted yet (skips are not votes)"
#: Said on the page, in the JSON and in the CSV of an adaptive study's human scale.
ADAPTIVE_SSR_NOTE = (
    "This study chose its pairs adaptively, which inflates SSR (Bramley & Vitello, 2019): trust split-half "
    "reliability, not SSR"
)
#: The same when split-half is undefined: neither reliability can be read.
ADAPTIVE_NO_SPLIT_NOTE = (
    "This study chose its pairs adaptively, which inflates SSR (Bramley & Vitello, 2019), and split-half "
    "reliability is undefined (too few evaluators judged the same questions): trust neither yet"
)


#: The scale is fragmented when its largest connected component holds fewer than this share of the judged
#: questions: its values are comparable only within a component, so a correlation with it rests on small pieces.
FRAGMENTED_SHARE = 0.5


def scale_fragmented(hs: HumanScaleSection) -> bool:
    """Whether the scale's largest connected component holds fewer than
    :data:`FRAGMENTED_SHARE` of its judged questions (False for an unavailable scale)."""
    return bool(hs.available and hs.n_questions and max(hs.component_sizes, default=0)
                < FRAGMENTED_SHARE * hs.n_questions)


def scale_fragmented_warning(hs: HumanScaleSection) -> str | None:
    """A sentence saying that correlations with a fragmented scale (:func:`scale_fragmented`) are not
    meaningful; None when the scale is not fragmented."""
    if not scale_fragmented(hs):
        return None
    largest = max(hs.component_sizes)
    return (f"The human scale is fragmented: its {hs.n_questions:,} judged questions fall into "
            f"{hs.n_components:,} connected components and the largest holds only {largest:,}. Values of different "
            "components are not comparable, so a correlation with the scale rests on a few small pieces and is "
            "not meaningful; more votes that link the pieces are needed.")


def correlation_basis(rows: list[ScaleCorrelationRow], hs: HumanScaleSection) -> str:
    """On how many of the scale's judged questions and components ``rows`` (correlations with it) were
    computed, e.g. "3 of the 139 judged questions, in 1 of 69 components" (a range when the rows differ).

    Examples
    --------
    >>> from types import SimpleNamespace as S
    >>> correlation_basis([S(n=3, n_components=1)], S(n_questions=139, n_components=69))
    '3 of the 139 judged questions, in 1 of 69 components'
    """
    def span(values: list[int]) -> str:
        low, high = min(values, default=0), max(values, default=0)
        return f"{low:,}" if low == high else f"{low:,}-{high:,}"

    return (f"{span([r.n for r in rows])} of the {hs.n_questions:,} judged questions, in "
            f"{span([r.n_components for r in rows])} of {hs.n_components:,} "
            f"component{'s' if hs.n_components != 1 else ''}")


def _value(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _row(c: ScaleCorrelation) -> ScaleCorrelationRow:
    ci = (c.ci_low, c.ci_high) if math.isfinite(c.ci_low) else None
    return ScaleCorrelationRow(value=_value(c.value), ci=ci, n=c.n, n_components=c.n_components,
                               undefined_reason=c.undefined_reason)


def question_refs(data: StudyData) -> tuple[list[QuestionRef | None], list[str]]:
    """Each of ``data.question_ids``'s reference and subject, read from the pairs.

    Parameters
    ----------
    data : StudyData

    Returns
    -------
    refs : list of QuestionRef or None, length n_questions
        In ``data.question_ids`` order (dataset and external id of each).
    subjects : list of str, length n_questions
        Each question's subject name.
    """
    n = data.question_ids.size
    refs: list[QuestionRef | None] = [None] * n
    subjects = [""] * n
    # each question from the last pair that holds it (as a pass over every pair would leave it): the pairs
    # in reverse, side b before side a, first occurrence of each question
    flat = np.asarray(data.pair_index, dtype=np.int64).reshape(-1, 2)[::-1, ::-1].ravel()
    questions, first = np.unique(flat, return_index=True)
    n_pairs = len(data.pairs)
    for q, k in zip(questions.tolist(), first.tolist(), strict=True):
        p = data.pairs[n_pairs - 1 - k // 2]
        if k % 2 == 0:  # side b
            refs[q] = QuestionRef(id=p.question_b_id, dataset=p.dataset_b, external_id=p.external_b)
        else:
            refs[q] = QuestionRef(id=p.question_a_id, dataset=p.dataset_a, external_id=p.external_a)
        subjects[q] = p.subject
    return refs, subjects


def human_scale_section(data: StudyData, *, available: list[str], n_boot: int, ci_level: float,
                        seed: int, at_bound: dict[str, np.ndarray] | None = None) -> HumanScaleSection:
    """The study's human scale, its reliability and misfit, and each available
    method against it (overall and per subject).

    Parameters
    ----------
    data : StudyData
    available : list of str
        Method keys the run has values for (registry order).
    n_boot : int
        The report's bootstrap replicates; the scale uses at most
        :data:`MAX_BOOT` of them.
    ci_level : float
    seed : int
        Seed of the scale's bootstrap and splits, and of every method's
        correlation bootstrap (the same for each method).
    at_bound : dict of str to ndarray of float64, shape (n_questions,), optional
        Per bounded method, whether each question's value is on the fit's
        bound (1/0, NaN = undefined; ``data.question_ids`` order:
        :func:`annotate.reports.services.human.question_bound_flags`).
        Each question row carries them.
    """
    n_boot = min(n_boot, MAX_BOOT)
    adaptive = getattr(data.study, "strategy", None) == PairStrategy.ADAPTIVE
    design = {"adaptive": adaptive, "reliability_note": ADAPTIVE_SSR_NOTE if adaptive else None}
    # Items in natural-key order (dataset, external id), so no figure or row order depends on database ids.
    refs_by_id, subjects_by_id = question_refs(data)
    def natural(i: int) -> tuple[str, str]:
        ref = refs_by_id[i]
        return ("", "") if ref is None else (ref.dataset, ref.external_id)

    order = sorted(range(data.question_ids.size), key=natural)
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    refs = [refs_by_id[i] for i in order]
    subjects = [subjects_by_id[i] for i in order]
    difficulty = {k: np.asarray(data.difficulty[k], dtype=np.float64)[order] for k in available}  # as stored
    flags = {k: np.asarray(v, dtype=np.float64)[order] for k, v in (at_bound or {}).items()}
    compared = {k: data.harder(k)[order] for k in available}  # higher = harder: what is correlated with the scale
    pair_ids = np.fromiter((p.pair_id for p in data.pairs), np.int64, len(data.pairs))
    part_ids = np.fromiter((e.participation_id for e in data.evaluators), np.int64, len(data.evaluators))
    pair_rows, who = (index_of(ids, column) for ids, column in ((pair_ids, data.judgment_array[:, 0]),
                                                                (part_ids, data.judgment_array[:, 1])))
    verdicts = data.judgment_array[:, 2]
    harder, other, kept = oriented_judgments(position[data.pair_index.reshape(-1, 2)], pair_rows, verdicts)
    common = {"model": MODEL, "penalty": PENALTY, "n_boot": n_boot, "n_splits": N_SPLITS, "ci_level": ci_level,
              "misfit_threshold": MISFIT_THRESHOLD, "n_votes": int(harder.size)}
    if harder.size == 0:
        return HumanScaleSection(
            available=False, undefined_reason=REASON_NO_VOTES, **common, n_questions=0, n_components=0,
            component_sizes=(), ssr=None, split_half=None, split_half_spearman=None, n_evaluators_flagged=0,
            n_questions_flagged=0, warnings=(), questions=(), evaluators=(), methods=(), **design,
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HumanScaleWarning)  # carried in scale.warnings, shown on the page
        scale = human_scale(harder, other, who[kept], n_items=data.question_ids.size,
                            n_evaluators=len(data.evaluators), penalty=PENALTY, n_boot=n_boot, n_splits=N_SPLITS,
                            ci_level=ci_level, rng=seed)
    judged = scale.component >= 0
    questions = tuple(
        HumanScaleQuestion(
            question=refs[i], subject=subjects[i], difficulty=_value(scale.difficulty[i]), se=_value(scale.se[i]),
            ci=(float(scale.ci_low[i]), float(scale.ci_high[i])) if math.isfinite(scale.ci_low[i]) else None,
            n_judgments=int(scale.n_judgments[i]), component=int(scale.component[i]),
            infit=_value(scale.item_infit[i]), outfit=_value(scale.item_outfit[i]),
            misfit=bool(scale.item_flagged[i]),
            methods={k: _value(difficulty[k][i]) for k in available},
            at_bound={k: None if math.isnan(v[i]) else int(v[i]) for k, v in flags.items()} or None,
        )
        for i in np.flatnonzero(judged) if refs[i] is not None
    )
    n_votes = np.bincount(who[kept], minlength=len(data.evaluators))
    evaluators = tuple(
        HumanScaleEvaluator(id=e.participation_id, short=e.short, pseudonym=e.pseudonym, n_votes=int(n_votes[i]),
                            infit=_value(scale.evaluator_infit[i]), outfit=_value(scale.evaluator_outfit[i]),
                            misfit=bool(scale.evaluator_flagged[i]))
        for i, e in enumerate(data.evaluators)
    )
    subject_of = np.array(subjects, dtype=object)
    scopes = [(SCOPE_OVERALL, np.ones(subject_of.size, dtype=bool))]
    scopes += [(s, subject_of == s) for s in sorted({subjects[i] for i in np.flatnonzero(judged)})]
    # every method and both kinds of a scope at once (the same figures as one scale_correlation each)
    # a subject's components are also the overall scope's: each is resampled and correlated once
    # each method's values within its registry tie tolerance are one value, as in every other table (so 1PL
    # equals simple rank on a complete right/wrong matrix, not up to 1e-16 noise)
    merged = [merge_ties(compared[k], tol=get_method(k).tie_tolerance) for k in available]
    by_scope = dict(zip((scope for scope, _ in scopes), scale_correlations_by_scope(
        scale.difficulty, merged, scale.component, [mask for _, mask in scopes],
        draws=scale.draws, n_boot=n_boot, ci_level=ci_level, seed=seed), strict=True))
    methods = [
        HumanScaleMethod(method=k, scope=scope,
                         **{kind: _row(by_scope[scope][j][kind]) for kind in ("spearman", "kendall")})
        for j, k in enumerate(available) for scope, _ in scopes
    ]
    if adaptive and not math.isfinite(scale.split_half):
        design["reliability_note"] = ADAPTIVE_NO_SPLIT_NOTE
    return HumanScaleSection(
        available=True, undefined_reason=None, **common, n_questions=int(judged.sum()),
        n_components=scale.n_components,
        component_sizes=tuple(int(x) for x in np.bincount(scale.component[judged])),
        ssr=_value(scale.ssr), split_half=_value(scale.split_half),
        split_half_spearman=_value(scale.split_half_spearman),
        n_evaluators_flagged=int(scale.evaluator_flagged.sum()), n_questions_flagged=int(scale.item_flagged.sum()),
        warnings=scale.warnings, questions=questions, evaluators=evaluators, methods=tuple(methods), **design,
    )
