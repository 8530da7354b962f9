"""The alignment report as one typed structure.

:func:`annotate.reports.services.report.alignment_report_compute` fills an
:class:`AlignmentReport` once; the page, the CSV tables and the JSON are
renderings of it (:mod:`.tables` builds every table, ``to_json`` the JSON of
``annotate/report_schema.json``). Every class is a frozen dataclass whose
field names are the JSON keys, so ``to_json``/``from_json`` are one generic
walk. Agreements are fractions in [0, 1]; an undefined statistic is ``None``
next to an ``undefined_reason``.
"""
from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from annotate.reports.services.model_base import OMIT_NONE, _Json
from annotate.reports.services.model_crowd import CrowdSection

#: How a human difficulty label is read (annotate.reports.services.labels): higher = harder, or easier.
LABEL_DIRECTION = "higher_is_harder"
LABEL_DIRECTION_EASIER = "higher_is_easier"


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
    evaluator voted, every other judgment of the pair is a skip),
    ``n_skipped_by_both`` (this evaluator and every other who judged the pair
    skipped it) and their sum ``pairs_skipped_by_one`` (every shared pair left
    out because of skips)."""

    pairs_skipped_by_one: int = 0
    n_skipped_by_evaluator: int = 0
    n_skipped_by_others: int = 0
    n_skipped_by_both: int = 0


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
    n_simulated_evaluators: int = 0


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
    label_higher_is_harder: bool = True
    label_margin: float = 0.2
    #: True when the report has its crowd section (judges weighted by reliability); None (left out) when not.
    crowd: bool | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class MethodInfo(_Json):
    """A method of the report; ``unstable_verdicts``: for a stochastic method
    (MIRT, fitted with several seeds), how many study pairs' verdicts are a
    tie because the seeds disagree on their order (None for other methods);
    ``bound_verdicts``: for a method whose fit confines its difficulty to a
    box (the IRT fits), how many study pairs have a question whose value is
    on the box's bound, i.e. the bound rather than an estimate (None for
    other methods)."""

    key: str
    label: str
    column: str
    available: bool
    undefined_reason: str | None
    tie_tolerance: float = 0.0
    unstable_verdicts: int | None = field(default=None, metadata=OMIT_NONE)
    n_replicates: int | None = field(default=None, metadata=OMIT_NONE)
    bound_verdicts: int | None = field(default=None, metadata=OMIT_NONE)


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
    #: Per bounded method (the IRT fits' box): 1 when a question of the pair is on the bound, 0 when neither,
    #: None when undefined (:func:`scoring.methods.at_bound_flags`). None (left out of the JSON): no bounded method.
    at_bound: dict[str, int | None] | None = field(default=None, metadata=OMIT_NONE)


class PairRows(Sequence[PairRow]):
    """The report's pairs column-wise: one array per field, so a study of
    hundreds of thousands of pairs holds a few arrays instead of five Python
    objects per pair. Reads like a tuple of :class:`PairRow` (``len``,
    indexing, slicing to a list, iteration); each row is built when asked
    for. ``to_json(offset, limit)`` gives one page of rows as JSON.

    Columns (length ``n_pairs``, study order): ``pair_id``, ``position``,
    ``question_a``/``question_b`` (database ids), ``votes_a``, ``votes_b``,
    ``n_skips`` (int64); ``subject``, ``dataset_a``, ``external_a``,
    ``dataset_b``, ``external_b``, ``verdict`` ("a", "b" or None),
    ``method``, ``reason`` (object); ``weight_a``, ``weight_b`` (float64,
    NaN = None); ``tie_weights`` maps a row to its non-empty tie weights;
    ``methods`` maps a method key to its verdict names (object array);
    ``at_bound`` maps a bounded method's key to its pair flags (float64 1/0,
    NaN = undefined: :func:`annotate.reports.services.human.pair_bound_flags`).
    """

    INT = ("pair_id", "position", "question_a", "question_b", "votes_a", "votes_b", "n_skips")
    TEXT = ("subject", "dataset_a", "external_a", "dataset_b", "external_b", "verdict", "method", "reason")
    FLOAT = ("weight_a", "weight_b")

    def __init__(self, *, columns: dict[str, Any], tie_weights: dict[int, tuple[TieWeight, ...]],
                 methods: dict[str, Any], at_bound: dict[str, Any] | None = None) -> None:
        import numpy as np

        self.columns = {k: np.asarray(columns[k], dtype=np.int64) for k in self.INT}
        self.columns.update({k: np.asarray(columns[k], dtype=object) for k in self.TEXT})
        self.columns.update({k: np.asarray(columns[k], dtype=np.float64) for k in self.FLOAT})
        self.tie_weights = tie_weights
        self.methods = {k: np.asarray(v, dtype=object) for k, v in methods.items()}
        self.at_bound = {k: np.asarray(v, dtype=np.float64) for k, v in (at_bound or {}).items()}

    def __len__(self) -> int:
        return int(self.columns["pair_id"].size)

    @typing.overload
    def __getitem__(self, index: int) -> PairRow: ...

    @typing.overload
    def __getitem__(self, index: slice) -> list[PairRow]: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        i = int(index) + n if int(index) < 0 else int(index)
        if not 0 <= i < n:
            raise IndexError(f"pair row {index} out of range (0..{n - 1})")
        return self._row(i)

    def __iter__(self):
        return (self._row(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PairRows | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _row(self, i: int) -> PairRow:
        c = self.columns
        wa, wb = float(c["weight_a"][i]), float(c["weight_b"][i])
        return PairRow(
            pair_id=int(c["pair_id"][i]), position=int(c["position"][i]), subject=c["subject"][i],
            question_a=QuestionRef(id=int(c["question_a"][i]), dataset=c["dataset_a"][i],
                                   external_id=c["external_a"][i]),
            question_b=QuestionRef(id=int(c["question_b"][i]), dataset=c["dataset_b"][i],
                                   external_id=c["external_b"][i]),
            consensus=PairConsensus(
                verdict=c["verdict"][i], method=c["method"][i], votes_a=int(c["votes_a"][i]),
                votes_b=int(c["votes_b"][i]), n_skips=int(c["n_skips"][i]), reason=c["reason"][i],
                weight_a=None if wa != wa else wa, weight_b=None if wb != wb else wb,
                tie_weights=self.tie_weights.get(i, ()),
            ),
            methods={k: v[i] for k, v in self.methods.items()},
            at_bound={k: None if v[i] != v[i] else int(v[i]) for k, v in self.at_bound.items()} or None,
        )

    def to_json(self, offset: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Rows ``offset`` to ``offset + limit`` (all from ``offset`` without a limit) as JSON."""
        stop = len(self) if limit is None else min(len(self), offset + limit)
        return [self._row(i).to_json() for i in range(max(0, offset), stop)]

    @classmethod
    def from_rows(cls, rows: Sequence[PairRow]) -> PairRows:
        """Columns of ``rows`` (a report read back from JSON, or hand-built rows)."""
        columns: dict[str, list] = {k: [] for k in (*cls.INT, *cls.TEXT, *cls.FLOAT)}
        keys = list(rows[0].methods) if rows else []
        methods: dict[str, list] = {k: [] for k in keys}
        bounded = list(rows[0].at_bound or {}) if rows else []
        at_bound: dict[str, list] = {k: [] for k in bounded}
        ties = {}
        for i, r in enumerate(rows):
            c = r.consensus
            for k, v in (("pair_id", r.pair_id), ("position", r.position), ("question_a", r.question_a.id),
                         ("question_b", r.question_b.id), ("votes_a", c.votes_a), ("votes_b", c.votes_b),
                         ("n_skips", c.n_skips), ("subject", r.subject), ("dataset_a", r.question_a.dataset),
                         ("external_a", r.question_a.external_id), ("dataset_b", r.question_b.dataset),
                         ("external_b", r.question_b.external_id), ("verdict", c.verdict), ("method", c.method),
                         ("reason", c.reason), ("weight_a", float("nan") if c.weight_a is None else c.weight_a),
                         ("weight_b", float("nan") if c.weight_b is None else c.weight_b)):
                columns[k].append(v)
            if c.tie_weights:
                ties[i] = tuple(c.tie_weights)
            for k in keys:
                methods[k].append(r.methods[k])
            for k in bounded:
                flag = (r.at_bound or {}).get(k)
                at_bound[k].append(float("nan") if flag is None else flag)
        return cls(columns=columns, tie_weights=ties, methods=methods, at_bound=at_bound)

    @classmethod
    def from_json(cls, data: list[dict[str, Any]]) -> PairRows:
        return cls.from_rows([PairRow.from_json(d) for d in data])


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
    simulated: bool = False  # votes made by a simulation (the demo's seeded evaluators), not a person


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
    #: "higher = harder" or "higher = easier" (None without a label).
    direction: str | None = field(default=None, metadata=OMIT_NONE)
    #: The human-label analysis of the label over every labelled question of the run
    #: (annotate.analyses.services.human_labels; its result document), None without a label.
    analysis: dict | None = field(default=None, metadata=OMIT_NONE)
    #: The stored analysis run it was read from; None when computed for this report.
    analysis_run: int | None = field(default=None, metadata=OMIT_NONE)


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
    #: Per bounded method (the IRT fits' box): 1 when the question's value is on the bound, 0 when not, None when
    #: undefined (:func:`scoring.methods.at_bound_flags`). None (left out of the JSON): no bounded method.
    at_bound: dict[str, int | None] | None = field(default=None, metadata=OMIT_NONE)


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
class GroupInfo(_Json):
    name: str
    n_evaluators: int
    n_votes: int
    n_pairs_decided: int


@dataclass(frozen=True)
class GroupPair(_Json):
    group_x: str
    group_y: str
    n: int
    agreement: float | None
    kappa: float | None
    agreement_ci: tuple[float, ...] | None
    kappa_ci: tuple[float, ...] | None
    undefined_reason: str | None


@dataclass(frozen=True)
class GroupMethod(_Json):
    group: str
    method: str
    n: int
    agreement: float | None
    kappa: float | None
    agreement_ci: tuple[float, ...] | None
    kappa_ci: tuple[float, ...] | None


@dataclass(frozen=True)
class GroupSection(_Json):
    """Evaluator groups (an imported study's ``group`` column) against each other and every method
    (:func:`scoring.groups.compare_groups`): each group's majority verdict per pair."""

    groups: tuple[GroupInfo, ...]
    pairs: tuple[GroupPair, ...]
    methods: tuple[GroupMethod, ...]


@dataclass(frozen=True)
class Timing(_Json):
    human_s: float
    pools_s: float
    total_s: float


@dataclass(frozen=True)
class AlignmentReport(_Json):
    """A study's alignment report: every section, computed once.

    ``to_json()`` is the document of ``annotate/report_schema.json``;
    :func:`annotate.reports.services.tables.report_tables` its tables (page
    and CSV). Per-method maps hold the available methods only, in registry
    order (:attr:`methods` lists every method, available or not).
    """

    schema_version: int
    generated_at: str
    study: StudyInfo
    run: RunInfo
    params: Parameters
    methods: tuple[MethodInfo, ...]
    pairs: PairRows
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
    #: Evaluator groups compared (only when some evaluator has a group).
    groups: GroupSection | None = field(default=None, metadata=OMIT_NONE)
    #: Judges weighted by reliability (only when the report asks for it: ``crowd=True``).
    crowd: CrowdSection | None = field(default=None, metadata=OMIT_NONE)

    @property
    def available(self) -> tuple[MethodInfo, ...]:
        """The methods the run has values for, in registry order."""
        return tuple(m for m in self.methods if m.available)

    def label(self, key: str) -> str:
        """Display label of method ``key``."""
        return next(m.label for m in self.methods if m.key == key)

    def parameters(self) -> dict[str, Any]:
        """What the report was computed with, flat: every
        rendering carries it (JSON ``parameters``, a constant column per
        parameter in every CSV table, the page's parameters line, the
        download's file name).

        Keys: ``study``, ``scoring_run``, ``min_votes``, ``tie_rule``,
        ``label_key`` (the label used, given or autodetected; None when none),
        ``label_direction`` (``"higher_is_harder"`` or ``"higher_is_easier"``; None without a label),
        ``n_boot``, ``bootstrap_seed``; ``scale_n_boot``: the replicates behind the
        human scale's intervals and its correlations (``n_boot``, at most
        :data:`~annotate.reports.services.scale.MAX_BOOT`: each replicate refits the
        scale; None without a fitted scale); ``label_n_boot``: the replicates of the
        label analysis (its own setting, the human-label analysis's; None without one).
        """
        return {
            "study": self.study.id, "scoring_run": self.run.id, "min_votes": self.params.min_votes,
            "tie_rule": self.params.tie_rule, "label_key": self.labels.key,
            "label_direction": None if not self.labels.key else (
                LABEL_DIRECTION if self.params.label_higher_is_harder else LABEL_DIRECTION_EASIER),
            "n_boot": self.params.n_boot, "bootstrap_seed": self.params.bootstrap_seed,
            "scale_n_boot": self.human_scale.n_boot if self.human_scale is not None and self.human_scale.available
            else None,
            "label_n_boot": (self.labels.analysis or {}).get("n_boot") if self.labels.key else None,
        }

    def to_json(self, *, pairs_offset: int = 0, pairs_limit: int | None = None) -> dict[str, Any]:
        """The document of ``annotate/report_schema.json``: every field, plus
        ``parameters`` (:meth:`parameters`; ignored by ``from_json``) and
        ``pairs_page`` (which rows ``pairs`` holds: ``offset``, ``count``,
        ``total``). ``pairs`` holds every pair unless ``pairs_limit`` is
        given (a large study's download pages them; pairs.csv has them all)."""
        full = pairs_offset == 0 and (pairs_limit is None or pairs_limit >= len(self.pairs))
        swapped = self if full else dataclasses.replace(self, pairs=PairRows.from_rows([]))
        out = {**_Json.to_json(swapped), "parameters": self.parameters()}
        if not full:
            out["pairs"] = self.pairs.to_json(pairs_offset, pairs_limit)
        out["pairs_page"] = {"offset": pairs_offset, "count": len(out["pairs"]), "total": len(self.pairs)}
        return out
