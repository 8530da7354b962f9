"""The alignment report as one typed structure (issue 11, point 4).

:func:`annotate.services.alignment.report.alignment_report_compute` fills an
:class:`AlignmentReport` once; the page, the CSV tables and the JSON are
renderings of it (:mod:`.tables` builds every table, ``to_json`` the JSON of
``annotate/report_schema.json``). Every class is a frozen dataclass whose
field names are the JSON keys, so ``to_json``/``from_json`` are one generic
walk. Agreements are fractions in [0, 1]; an undefined statistic is ``None``
next to an ``undefined_reason``.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

#: How a human difficulty label is read (annotate.services.alignment.labels): higher = harder.
LABEL_DIRECTION = "higher_is_harder"
#: Field metadata: leave the key out of the JSON when the value is None.
OMIT_NONE = {"omit_none": True}


class _Json:
    """``to_json``/``from_json`` for a dataclass whose fields are the JSON keys."""

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.metadata.get("omit_none"):
                continue
            out[f.name] = _plain(value)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]):
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        kwargs = {f.name: _build(hints[f.name], data.get(f.name)) for f in fields
                  if f.name in data or not f.metadata.get("omit_none")}
        return cls(**kwargs)


def _plain(value: Any) -> Any:
    if isinstance(value, _Json):
        return value.to_json()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _build(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _build(options[0], value) if len(options) == 1 else value
    if isinstance(hint, type) and issubclass(hint, _Json):
        return hint.from_json(value)
    if origin is tuple:
        args = typing.get_args(hint)
        return tuple(_build(args[0], v) for v in value) if len(args) == 2 and args[1] is Ellipsis else tuple(value)
    if origin is dict:
        args = typing.get_args(hint)
        return {k: _build(args[1], v) for k, v in value.items()} if args else dict(value)
    return value


# --- statistics ----------------------------------------------------------------------


@dataclass(frozen=True)
class Kappa(_Json):
    """Orientation-free Cohen's kappa on pair verdicts (``value`` = 2 ``p_o`` - 1, ``p_e`` = 1/2) over
    the ``n`` pairs both raters decided (:func:`scoring.pair_kappa`)."""

    value: float | None
    p_o: float | None
    p_e: float | None
    n: int
    undefined_reason: str | None


@dataclass(frozen=True)
class Agreement(_Json):
    """A method's verdicts against human verdicts (:class:`scoring.MethodAgreement`)."""

    agreement: float | None
    agreement_excluding_ties: float | None
    n_pairs: int
    n_agree: int
    n_ties: int
    n_undefined: int
    n_human_excluded: int
    kappa: Kappa
    undefined_reason: str | None


@dataclass(frozen=True)
class Interval(_Json):
    """Percentile bootstrap intervals ``(low, high)`` of an agreement and its kappa."""

    agreement: tuple[float, ...] | None
    kappa: tuple[float, ...] | None
    level: float | None
    n_boot: int | None
    n_kappa_undefined: int | None
    undefined_reason: str | None


@dataclass(frozen=True)
class MethodConsensus(Agreement):
    """A method against the consensus, with bootstrap intervals."""

    ci: Interval


@dataclass(frozen=True)
class McNemar(_Json):
    method_a: str
    method_b: str
    b: int | None
    c: int | None
    n_discordant: int | None
    n: int | None
    statistic: float | None
    p_value: float | None
    undefined_reason: str | None


@dataclass(frozen=True)
class Correlation(_Json):
    value: float | None
    p_value: float | None
    n: int
    undefined_reason: str | None


@dataclass(frozen=True)
class Average(_Json):
    """Mean of the defined values; ``note`` says how many were left out."""

    mean: float | None
    n_defined: int
    n_total: int
    note: str


@dataclass(frozen=True)
class KappaAgreement(_Json):
    """Agreement (``p_o``) and kappa of two raters over ``n`` pairs both voted on."""

    agreement: float | None
    n: int
    kappa: Kappa
    undefined_reason: str | None


@dataclass(frozen=True)
class OthersAgreement(KappaAgreement):
    """An evaluator against the consensus of the other evaluators, with the
    shared pairs left out because one side skipped: ``n_skipped_by_evaluator``
    (this evaluator skipped, another voted), ``n_skipped_by_others`` (this
    evaluator voted, every other judgment of the pair is a skip) and their sum
    ``pairs_skipped_by_one``."""

    pairs_skipped_by_one: int = 0
    n_skipped_by_evaluator: int = 0
    n_skipped_by_others: int = 0


# --- sections ----------------------------------------------------------------------


@dataclass(frozen=True)
class StudyInfo(_Json):
    id: int
    name: str
    status: str
    strategy: str
    seed: int | None
    n_pairs: int
    n_evaluators: int
    n_judgments: int
    n_votes: int
    n_skips: int
    scoring_run: int | None
    datasets: tuple[str, ...]
    subjects: tuple[str, ...]
    n_attention_checks: int = 0


@dataclass(frozen=True)
class ExcludedEvaluatorRow(_Json):
    """An evaluator excluded from analyses (judgments kept, in no statistic)."""

    id: int
    pseudonym: str
    excluded_at: str
    excluded_by: str
    reason: str
    n_judgments: int


@dataclass(frozen=True)
class RunInfo(_Json):
    id: int
    response_set: str
    is_study_run: bool
    created_at: str
    params: dict


@dataclass(frozen=True)
class Parameters(_Json):
    """What the report was computed with."""

    min_votes: int
    tie_rule: str
    n_boot: int
    ci_level: float
    bootstrap_seed: int
    size_thresholds: tuple[float, ...]
    label_key: str | None
    method_tie_rule: str


@dataclass(frozen=True)
class MethodInfo(_Json):
    """A method of the report; ``unstable_verdicts``: for a stochastic method
    (MIRT, fitted with several seeds), how many study pairs' verdicts are a
    tie because the seeds disagree on their order (None for other methods)."""

    key: str
    label: str
    column: str
    available: bool
    undefined_reason: str | None
    tie_tolerance: float = 0.0
    unstable_verdicts: int | None = field(default=None, metadata=OMIT_NONE)
    n_replicates: int | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class QuestionRef(_Json):
    """A question by its dataset and external id (two datasets may share
    external ids); ``id`` is its database key on this site."""

    id: int
    dataset: str
    external_id: str


@dataclass(frozen=True)
class TieWeight(_Json):
    evaluator: str
    vote: str
    weight: float


@dataclass(frozen=True)
class PairConsensus(_Json):
    verdict: str | None
    method: str
    votes_a: int
    votes_b: int
    n_skips: int
    reason: str | None
    weight_a: float | None
    weight_b: float | None
    tie_weights: tuple[TieWeight, ...]


@dataclass(frozen=True)
class PairRow(_Json):
    pair_id: int
    position: int
    subject: str
    question_a: QuestionRef
    question_b: QuestionRef
    consensus: PairConsensus
    methods: dict[str, str]


@dataclass(frozen=True)
class ConsensusCounts(_Json):
    majority: int
    tie_resolved: int
    no_consensus: int
    n_pairs: int
    n_decided: int


@dataclass(frozen=True)
class EvaluatorRow(_Json):
    id: int
    short: str
    pseudonym: str
    field_of_study: str
    education_level: str
    n_votes: int
    n_skips: int
    methods: dict[str, Agreement]
    vs_others: OthersAgreement


@dataclass(frozen=True)
class MethodSummary(_Json):
    """Means over evaluators: agreement (ties as misses), agreement excluding ties, kappa."""

    agreement: Average
    agreement_excluding_ties: Average
    kappa: Average


@dataclass(frozen=True)
class Comparison(_Json):
    """The reference method against a baseline, evaluator by evaluator."""

    method_a: str
    method_b: str
    n_a_higher: int
    n_equal: int
    n_b_higher: int
    mean_margin: Average


@dataclass(frozen=True)
class KrippendorffAlpha(_Json):
    value: float | None
    d_o: float | None
    d_e: float | None
    n_pairable: int
    n_units_pairable: int
    level: str
    undefined_reason: str | None


@dataclass(frozen=True)
class FleissKappa(_Json):
    value: float | None
    p_o: float | None
    p_e: float | None
    n_items: int
    n_raters: int
    scope: str
    undefined_reason: str | None


@dataclass(frozen=True)
class InterRater(_Json):
    n_raters: int
    krippendorff_alpha: KrippendorffAlpha
    fleiss_kappa: FleissKappa


@dataclass(frozen=True)
class Pool(_Json):
    name: str
    kind: str
    n_models: int
    models: tuple[str, ...]
    n_observed: int
    n_all_solved: int
    n_all_failed: int
    share_all_solved: float | None
    share_all_failed: float | None
    share_dead: float | None
    correlations: dict[str, Correlation]
    consensus: Agreement | None
    undefined_reason: str | None


@dataclass(frozen=True)
class PoolSection(_Json):
    """EIP per model pool, read from a stored pools analysis (``status`` "done"),
    or why there is none ("not_computed", "queued", "running", "failed")."""

    available: bool
    undefined_reason: str | None
    size_thresholds: tuple[float, ...]
    alpha: float | None
    reference: str
    correlation_scope: str
    unknown_size_models: tuple[str, ...]
    unknown_access_models: tuple[str, ...]
    pools: tuple[Pool, ...]
    status: str = "done"
    analysis_run: int | None = None
    computed_at: str | None = None
    note: str | None = None
    n_questions: int | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class LabelScope(_Json):
    description: str
    n_pairs: int
    undefined_reason: str | None
    methods: dict[str, Agreement]
    consensus: KappaAgreement | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class LabelSection(_Json):
    key: str | None
    autodetected: bool
    order: dict | None
    n_questions_labelled: int
    scopes: dict[str, LabelScope]
    spearman: dict[str, Correlation]
    spearman_scope: str
    undefined_reason: str | None


@dataclass(frozen=True)
class ProfileGroup(_Json):
    name: str
    n: int
    n_missing: int
    counts: tuple[int, ...]
    mean: float | None
    median: float | None
    q1: float | None
    q3: float | None
    tertile_shares: tuple[float, ...] | None
    share_at_0: float | None
    share_at_100: float | None


@dataclass(frozen=True)
class ProfileSection(_Json):
    bin_edges: tuple[float, ...]
    datasets: tuple[ProfileGroup, ...]
    overall: ProfileGroup | None
    undefined_reason: str | None


@dataclass(frozen=True)
class ScaleCorrelationRow(_Json):
    """A coefficient of a method's difficulty with the human scale, with its
    percentile bootstrap interval ``ci`` (low, high)."""

    value: float | None
    ci: tuple[float, ...] | None
    n: int
    n_components: int
    undefined_reason: str | None


@dataclass(frozen=True)
class HumanScaleMethod(_Json):
    """One method against the human scale in one scope ("overall" or a subject)."""

    method: str
    scope: str
    spearman: ScaleCorrelationRow
    kendall: ScaleCorrelationRow


@dataclass(frozen=True)
class HumanScaleQuestion(_Json):
    """A question on the human scale (logits, higher = judged harder), with each
    method's difficulty for the scatter plots (None: the run has no value)."""

    question: QuestionRef
    subject: str
    difficulty: float | None
    se: float | None
    ci: tuple[float, ...] | None
    n_judgments: int
    component: int
    infit: float | None
    outfit: float | None
    misfit: bool
    methods: dict[str, float | None]


@dataclass(frozen=True)
class HumanScaleEvaluator(_Json):
    id: int
    short: str
    pseudonym: str
    n_votes: int
    infit: float | None
    outfit: float | None
    misfit: bool


@dataclass(frozen=True)
class HumanScaleSection(_Json):
    """The human difficulty scale (Bradley-Terry on every vote of the study;
    :func:`scoring.human_scale.human_scale`) and every method against it."""

    available: bool
    undefined_reason: str | None
    model: str
    penalty: float
    n_boot: int
    n_splits: int
    ci_level: float
    misfit_threshold: float
    n_questions: int
    n_votes: int
    n_components: int
    component_sizes: tuple[int, ...]
    ssr: float | None
    split_half: float | None
    split_half_spearman: float | None
    n_evaluators_flagged: int
    n_questions_flagged: int
    warnings: tuple[str, ...]
    questions: tuple[HumanScaleQuestion, ...]
    evaluators: tuple[HumanScaleEvaluator, ...]
    methods: tuple[HumanScaleMethod, ...]
    #: The study chose its pairs adaptively (``PairStrategy.ADAPTIVE``): SSR is then optimistic.
    #: (Absent from reports stored before it: then None, and left out of the JSON.)
    adaptive: bool | None = field(default=False, metadata=OMIT_NONE)
    #: Which reliability to trust, when the design calls for a warning (adaptive studies), else None.
    reliability_note: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Timing(_Json):
    human_s: float
    pools_s: float
    total_s: float


@dataclass(frozen=True)
class AlignmentReport(_Json):
    """A study's alignment report: every section, computed once.

    ``to_json()`` is the document of ``annotate/report_schema.json``;
    :func:`annotate.services.alignment.tables.report_tables` its tables (page
    and CSV). Per-method maps hold the available methods only, in registry
    order (:attr:`methods` lists every method, available or not).
    """

    schema_version: int
    generated_at: str
    study: StudyInfo
    run: RunInfo
    params: Parameters
    methods: tuple[MethodInfo, ...]
    pairs: tuple[PairRow, ...]
    consensus: ConsensusCounts
    evaluators: tuple[EvaluatorRow, ...]
    method_summary: dict[str, MethodSummary]
    reference_vs_baselines: tuple[Comparison, ...]
    consensus_agreement: dict[str, MethodConsensus]
    mcnemar: tuple[McNemar, ...]
    irr: InterRater
    pools: PoolSection
    labels: LabelSection
    profiles: ProfileSection
    timing: Timing
    excluded_evaluators: tuple[ExcludedEvaluatorRow, ...] = ()
    human_scale: HumanScaleSection | None = field(default=None, metadata=OMIT_NONE)

    @property
    def available(self) -> tuple[MethodInfo, ...]:
        """The methods the run has values for, in registry order."""
        return tuple(m for m in self.methods if m.available)

    def label(self, key: str) -> str:
        """Display label of method ``key``."""
        return next(m.label for m in self.methods if m.key == key)

    def parameters(self) -> dict[str, Any]:
        """What the report was computed with, flat (issue 12, point 9): every
        rendering carries it (JSON ``parameters``, a constant column per
        parameter in every CSV table, the page's parameters line, the
        download's file name).

        Keys: ``study``, ``scoring_run``, ``min_votes``, ``tie_rule``,
        ``label_key`` (the label used, given or autodetected; None when none),
        ``label_direction`` (``"higher_is_harder"``; None without a label),
        ``n_boot``, ``bootstrap_seed``.
        """
        return {
            "study": self.study.id, "scoring_run": self.run.id, "min_votes": self.params.min_votes,
            "tie_rule": self.params.tie_rule, "label_key": self.labels.key,
            "label_direction": LABEL_DIRECTION if self.labels.key else None,
            "n_boot": self.params.n_boot, "bootstrap_seed": self.params.bootstrap_seed,
        }

    def to_json(self) -> dict[str, Any]:
        """The document of ``annotate/report_schema.json``: every field, plus
        ``parameters`` (:meth:`parameters`; ignored by ``from_json``)."""
        return {**super().to_json(), "parameters": self.parameters()}
