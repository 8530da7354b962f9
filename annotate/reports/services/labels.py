"""Human difficulty labels in question metadata, and the per-dataset difficulty
profile (paper figure 9).

A label is read from ``Question.metadata[label_key]``. Numbers (or numeric
strings) are used as they are, higher = harder (the demo set's ``level`` 1 < 2
< 3). MMLU level names are mapped to an order: elementary (1) < high_school (2)
< college (3) < professional (4); anything else (``other_mmlu``, blank, other
text) means "no label". A label that grows with ease (a human solve rate)
would need inverting first; that is not done here.
"""
from __future__ import annotations

import numpy as np

from annotate.core import MMLU_LEVELS, label_value
from annotate.reports.selectors.alignment import (
    REFERENCE_METHOD,
    StudyData,
    question_metadata_by_id,
    report_methods,
    run_dataset_scores,
    run_label_rows,
)
from annotate.reports.services._stats import agreement_of, correlation_of, kappa_agreement_of, method_verdicts
from annotate.reports.services.model import Correlation, LabelScope, LabelSection, ProfileGroup, ProfileSection
from scoring import (
    FIRST,
    SECOND,
    UNDEFINED,
    KappaResult,
    MethodAgreement,
    harder_of_pairs,
    merge_ties,
    method_agreement,
    pair_kappa,
)
from scoring.analyses import difficulty_profiles
from scoring.analyses._common import correlation
from scoring.human_labels import compare_with_label
from scoring.methods import get_method
from scoring.pairs import REASON_NO_PAIR_DECIDED_BY_BOTH

AUTO_KEYS = ("level", "mmlu_level")
PROFILE_BINS = 20

SCOPE_STUDY_PAIRS = "study_pairs"
SCOPE_ALL_PAIRS = "same_subject_pairs_of_study_questions"
SCOPE_TEXT = {
    SCOPE_STUDY_PAIRS: "the study's pairs whose two questions both carry a label and the labels differ",
    SCOPE_ALL_PAIRS: (
        "every same-subject pair of the study's questions (not only the sampled pairs) whose two "
        "questions both carry a label and the labels differ"
    ),
}
SPEARMAN_SCOPE = "labelled questions of the run in the study's datasets and subjects"
REASON_NO_AUTO_LABEL = "no question of the study has a 'level' or 'mmlu_level' label in its metadata"
REASON_NO_LABEL = "no question of the study has a usable {key!r} label in its metadata"
REASON_NO_LABEL_PAIR = "no pair in this scope has two labelled questions with different labels"
HIGHER_HARDER = "higher = harder"  # the human-label analysis's words (annotate.analyses.services.human_labels)
HIGHER_EASIER = "higher = easier"


def _labels_of(metadata: dict, key: str) -> float | None:
    return label_value(metadata.get(key)) if isinstance(metadata, dict) else None


def _label_verdicts(labels: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """FIRST/SECOND by the larger label; UNDEFINED when equal or missing."""
    v = harder_of_pairs(labels, pairs)
    return np.where(np.isin(v, (FIRST, SECOND)), v, UNDEFINED).astype(np.int8)


def _scope(data: StudyData, labels: np.ndarray, pairs: np.ndarray, available: list[str],
           cons: np.ndarray | None, *, description: str) -> LabelScope:
    truth = _label_verdicts(labels, pairs)
    n = int(np.isin(truth, (FIRST, SECOND)).sum())
    consensus = None
    if cons is not None:
        k = pair_kappa(cons, truth)
        consensus = kappa_agreement_of(k, REASON_NO_LABEL_PAIR)
    verdicts = method_verdicts(data, pairs, available)
    return LabelScope(
        description=description, n_pairs=n, undefined_reason=None if n else REASON_NO_LABEL_PAIR,
        methods={k: agreement_of(method_agreement(verdicts[k], truth)) for k in available},
        consensus=consensus,
    )


def _row_subjects(data: StudyData) -> np.ndarray:
    """The subject of each row of ``data.question_ids`` (from the study's pairs)."""
    subject = {}
    for p in data.pairs:
        subject[p.question_a_id] = subject[p.question_b_id] = p.subject
    return np.array([subject[int(q)] for q in data.question_ids], dtype=object)


def _all_pairs_scope(data: StudyData, labels: np.ndarray, available: list[str]) -> LabelScope:
    """Every same-subject pair of the study's questions, counted by the streaming
    kernel of the human-label analysis (:func:`scoring.human_labels.compare_with_label`)
    for a method without replicate fits; a stochastic method (replicates: a
    pair where its fits disagree is a tie) is judged on the enumerated pairs."""
    subjects = _row_subjects(data)
    specs = {m.key: m for m in report_methods()}
    replicated = [k for k in available if data.replicates.get(k) is not None]
    scope = _scope(data, labels, _same_subject_pairs(data), replicated, None,
                   description=SCOPE_TEXT[SCOPE_ALL_PAIRS]) if replicated else None
    methods = {}
    n = 0
    for k in available:
        if k in replicated:
            methods[k] = scope.methods[k]
            continue
        m = compare_with_label(data.harder(k), labels, subjects, tie_tolerance=specs[k].tie_tolerance,
                               n_boot=0).margins[0]
        n = m.n_pairs
        decided = m.n_agree + m.n_disagree
        p_o = m.agreement_excluding_ties
        kappa = KappaResult(kappa=(2 * m.n_agree - decided) / decided, p_o=p_o, p_e=0.5, n=decided) if decided \
            else KappaResult(kappa=None, p_o=None, p_e=None, n=0, undefined_reason=REASON_NO_PAIR_DECIDED_BY_BOTH)
        n_unlabelled = _unlabelled_pairs(labels, subjects)
        methods[k] = agreement_of(MethodAgreement(
            n_pairs=m.n_pairs, n_agree=m.n_agree, n_ties=m.n_method_ties, n_undefined=m.n_undefined,
            n_human_excluded=m.n_label_ties + n_unlabelled, agreement=m.agreement,
            agreement_excluding_ties=p_o, kappa=kappa))
    if scope is not None:
        n = scope.n_pairs
    return LabelScope(description=SCOPE_TEXT[SCOPE_ALL_PAIRS], n_pairs=n,
                      undefined_reason=None if n else REASON_NO_LABEL_PAIR, methods=methods, consensus=None)


def _unlabelled_pairs(labels: np.ndarray, subjects: np.ndarray) -> int:
    """Same-subject pairs with at least one unlabelled question."""
    out = 0
    for name in set(subjects.tolist()):
        rows = subjects == name
        total, labelled = int(rows.sum()), int((rows & np.isfinite(labels)).sum())
        out += total * (total - 1) // 2 - labelled * (labelled - 1) // 2
    return out


def _same_subject_pairs(data: StudyData) -> np.ndarray:
    """Every pair ``(i, j)``, ``i < j``, of rows of ``data.question_ids`` with one subject."""
    names = _row_subjects(data)
    blocks = []
    for name in sorted(set(names.tolist())):
        rows = np.flatnonzero(names == name)
        i, j = np.triu_indices(rows.size, k=1)
        blocks.append(np.column_stack([rows[i], rows[j]]))
    return np.concatenate(blocks).astype(np.int64) if blocks else np.empty((0, 2), dtype=np.int64)


#: Bootstrap replicates of the label analysis (the human-label analysis kind's default).
LABEL_N_BOOT = 200


def label_analysis(data: StudyData, *, key: str, higher_is_harder: bool, margin: float,
                   seed: int) -> tuple[dict, int | None]:
    """The human-label analysis (:func:`annotate.analyses.services.human_labels.human_labels`) of
    metadata column ``key`` on the report's run: every labelled question of the run, the given
    direction, margins 0 and ``margin``, tie counts and bootstrap intervals. A stored finished
    analysis with exactly these parameters is read; otherwise the same function computes it.
    Returns ``(result document, stored analysis run id or None)``."""
    from annotate.analyses import analysis_run_by_params_key, check_params, human_labels, params_key
    from annotate.models import AnalysisKind

    params = check_params(AnalysisKind.HUMAN_LABELS, {
        "label": f"metadata:{key}", "label_higher_is_harder": higher_is_harder, "margin": margin,
        "n_boot": LABEL_N_BOOT, "run": data.run.pk, "seed": seed % 2**32,
    })
    response_set = data.run.response_set
    stored = analysis_run_by_params_key(
        params_key=params_key(AnalysisKind.HUMAN_LABELS, response_set.pk, params))
    if stored is not None and isinstance(stored.result, dict) and stored.result.get("methods") is not None:
        return stored.result, stored.pk
    return human_labels(response_set, params, lambda fraction, message: None), None


def label_section(
    data: StudyData, cons: np.ndarray, *, label_key: str | None, available: list[str],
    higher_is_harder: bool = True, margin: float = 0.2, seed: int = 0,
) -> LabelSection:
    """Each method (and the consensus) against a human difficulty label.

    Parameters
    ----------
    data : StudyData
    cons : ndarray of int8, shape (n_pairs,)
        Consensus verdict per study pair.
    label_key : str or None
        Metadata key; None = the first of ``level``, ``mmlu_level`` that some
        study question carries.
    available : list of str
        Method keys to score.
    higher_is_harder : bool, default True
        The label's direction; False for a label that grows with ease (a
        solve rate): the study-question scopes and Spearman read it negated.
    margin : float, default 0.2
        The analysis's second label margin (besides 0).
    seed : int, default 0
        Bootstrap seed of the analysis (taken modulo 2**32).

    Returns
    -------
    LabelSection
        The report's ``labels`` section. Its headline figures are the
        human-label analysis (``analysis``: every labelled question of the
        run, both margins, tie counts, intervals; the same document as the
        analysis kind ``human_labels``). Kept beside it, on the study's own
        questions: agreement and kappa per method on two scopes
        (:data:`SCOPE_TEXT`), the consensus against the label on the study
        pairs, and Spearman's rho of each method with the label.
    """
    metadata = question_metadata_by_id(question_ids=data.question_ids.tolist())
    key = label_key
    if key is None:
        key = next((k for k in AUTO_KEYS if any(_labels_of(metadata.get(int(q)), k) is not None
                                                 for q in data.question_ids)), None)
    base = {"key": key, "autodetected": label_key is None and key is not None,
            "order": dict(MMLU_LEVELS) if key == "mmlu_level" else None, "n_questions_labelled": 0,
            "scopes": {}, "spearman": {}, "spearman_scope": SPEARMAN_SCOPE}
    if key is None:
        return LabelSection(**base, undefined_reason=REASON_NO_AUTO_LABEL)
    base["direction"] = HIGHER_HARDER if higher_is_harder else HIGHER_EASIER
    sign = 1.0 if higher_is_harder else -1.0
    labels = sign * np.array([_labels_of(metadata.get(int(q)), key) for q in data.question_ids], dtype=np.float64)
    if not np.isfinite(labels).any():
        return LabelSection(**base, undefined_reason=REASON_NO_LABEL.format(key=key))
    base["n_questions_labelled"] = int(np.isfinite(labels).sum())
    base["scopes"] = {
        SCOPE_STUDY_PAIRS: _scope(data, labels, data.pair_index, available, cons,
                                  description=SCOPE_TEXT[SCOPE_STUDY_PAIRS]),
        SCOPE_ALL_PAIRS: _all_pairs_scope(data, labels, available),
    }
    base["spearman"] = _spearman(data, key, available, sign=sign)
    base["analysis"], base["analysis_run"] = label_analysis(data, key=key, higher_is_harder=higher_is_harder,
                                                            margin=margin, seed=seed)
    return LabelSection(**base, undefined_reason=None)


def _spearman(data: StudyData, key: str, available: list[str], *, sign: float = 1.0) -> dict[str, Correlation]:
    rows = run_label_rows(run=data.run, study=data.study)
    labels = sign * np.array([_labels_of(r[0], key) for r in rows], dtype=np.float64)
    out = {}
    for m in (m for m in report_methods() if m.key in available):
        # values within the method's tie tolerance rank as ties (noise never orders them)
        values = merge_ties(m.as_harder(np.array([scores.get(m.column, np.nan) for _, scores in rows],
                                                 dtype=np.float64)), tol=m.tie_tolerance)
        out[m.key] = correlation_of(correlation(values, labels, method="spearman")) if rows else Correlation(
            value=None, p_value=None, n=0, undefined_reason="no labelled question in the run")
    return out


def profile_section(data: StudyData) -> ProfileSection:
    """Histogram of the run's EIP difficulty (0-100) per dataset (figure 9)."""
    column = get_method(REFERENCE_METHOD).difficulty_column
    rows = run_dataset_scores(run=data.run)
    if not rows:
        return ProfileSection(bin_edges=(), datasets=(), overall=None,
                              undefined_reason=f"run {data.run.pk} has no question results")
    values = np.array([scores.get(column, np.nan) for _, scores in rows], dtype=np.float64)
    result = difficulty_profiles(values, [d for d, _ in rows], bins=PROFILE_BINS)

    def group(g) -> ProfileGroup:
        return ProfileGroup(
            name=str(g.label), n=g.n, n_missing=g.n_missing, counts=tuple(int(c) for c in g.counts.tolist()),
            mean=g.mean, median=g.median, q1=g.q1, q3=g.q3,
            tertile_shares=None if g.tertile_shares is None else tuple(g.tertile_shares),
            share_at_0=g.share_at_0, share_at_100=g.share_at_100)

    return ProfileSection(bin_edges=tuple(result.bin_edges.tolist()),
                          datasets=tuple(group(g) for g in result.groups.values()),
                          overall=group(result.overall), undefined_reason=None)
