"""The report's crowd section as typed structure: judges weighted by reliability.

Filled by :func:`annotate.reports.services.crowd.crowd_section` when a report
asks for it (``crowd=True``); a field of
:class:`annotate.reports.services.model.AlignmentReport`, left out of the
JSON otherwise. Reliabilities are in [0, 1]; agreements are fractions in
[0, 1]; an undefined value is ``None`` next to an ``undefined_reason``.
"""
from __future__ import annotations

from dataclasses import dataclass

from annotate.reports.services.model_base import _Json


@dataclass(frozen=True)
class CrowdEvaluator(_Json):
    """One evaluator's reliability ``eta`` (the probability of judging as the scale says rather than at random),
    with its profile-likelihood interval ``reliability_ci`` (low, high); ``n_judgments`` counts votes."""

    id: int
    short: str
    pseudonym: str
    reliability: float | None
    reliability_ci: tuple[float, ...] | None
    n_judgments: int


@dataclass(frozen=True)
class CrowdAgreement(_Json):
    """A method against one human side (unweighted or weighted by reliability): agreement with the consensus
    (percentile bootstrap interval over pairs) and Spearman's correlation with the Bradley-Terry scale (within
    connected components; percentile bootstrap interval over questions)."""

    consensus_agreement: float | None
    consensus_agreement_ci: tuple[float, ...] | None
    consensus_kappa: float | None
    n_pairs: int
    n_agree: int
    n_ties: int
    consensus_undefined_reason: str | None
    scale_spearman: float | None
    scale_spearman_ci: tuple[float, ...] | None
    n_questions: int
    scale_undefined_reason: str | None


@dataclass(frozen=True)
class CrowdMethod(_Json):
    method: str
    unweighted: CrowdAgreement
    weighted: CrowdAgreement


@dataclass(frozen=True)
class CrowdQuestion(_Json):
    """A judged question on both scales (logits, higher = judged harder)."""

    id: int
    dataset: str
    external_id: str
    subject: str
    difficulty_unweighted: float | None
    difficulty_weighted: float | None
    se_weighted: float | None
    n_judgments: int


@dataclass(frozen=True)
class CrowdSection(_Json):
    """Crowd Bradley-Terry (:func:`scoring.crowd_bt.crowd_bradley_terry`): the scale fitted together with one
    reliability per evaluator, the consensus weighted by those reliabilities, and every method under both."""

    available: bool
    undefined_reason: str | None
    model: str
    weighting: str
    penalty: float
    ci_level: float
    n_boot: int
    n_votes: int
    n_iter: int
    converged: bool
    n_pairs_consensus_unweighted: int
    n_pairs_consensus_weighted: int
    n_pairs_changed: int
    evaluators: tuple[CrowdEvaluator, ...]
    methods: tuple[CrowdMethod, ...]
    questions: tuple[CrowdQuestion, ...]
