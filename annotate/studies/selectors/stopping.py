"""Reads behind a study's stopping rules: where each rule stands, and projections.

The votes a rule reads are the report's: non-skip judgments on the study's
regular pairs (attention checks left out) by evaluators not excluded, in the
order they were submitted. The budget counts every judgment (skips,
attention checks and excluded evaluators included: each was paid for).

Nothing here writes; :func:`annotate.studies.services.stopping.stopping_check`
stamps a rule that fires.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from decimal import Decimal, localcontext

import numpy as np
from django.db.models import F, Sum
from django.db.models.functions import Greatest

from annotate.models import Choice, Judgment, Pair, QuestionResult, StoppingRules, Study
from annotate.reports import report_methods
from scoring.human_scale import human_scale
from scoring.pairs import FIRST, harder_of_pairs
from scoring.stopping import (
    ODDS_SLOPE,
    ODDS_SLOPE_RANGE,
    ReliabilityProjection,
    SignTestProjection,
    SignTestState,
    budget_spent,
    project_reliability,
    project_sign_test,
    reliability_reached,
    sequential_sign_test,
)

#: Random splits of the evaluators for split-half reliability (seeded by the study's seed).
N_SPLITS = 20


@dataclass(frozen=True)
class VoteLog:
    """A study's votes in submission order.

    ``harder``, ``easier`` are question ids, ``evaluator`` participation ids,
    each of shape (n_votes,); ``n_judgments`` counts every judgment of the
    study (the budget's count)."""

    harder: np.ndarray
    easier: np.ndarray
    evaluator: np.ndarray
    n_judgments: int

    @property
    def n_votes(self) -> int:
        return int(self.harder.size)


#: How the manage page words a scale separation reliability (SSR) that is not yet a reliability.
SSR_UNDEFINED = "not defined yet (too few votes)"
SSR_NEGATIVE = "below 0 ({value}): too few votes yet"
SSR_NEGATIVE_NOTE = (
    "SSR = (spread of the questions' difficulties − their estimation error) / spread. It is below 0 while the "
    "estimation error is still larger than the spread: the votes cannot yet tell the questions apart, so read it "
    "as no reliability yet. It rises as votes come in."
)
SPLIT_HALF_UNDEFINED = "not defined yet (it needs votes from several evaluators on the same questions)"


def _figure(value: float) -> str:
    return f"{value:.3f}".replace("-", "−")


@dataclass(frozen=True)
class ReliabilityState:
    """The reliability rule now: SSR and split-half reliability of the human scale (NaN = undefined)."""

    ssr: float
    split_half: float
    target: Decimal
    reached: bool

    @property
    def ssr_text(self) -> str:
        """SSR in words: its value, or why it is no reliability yet (undefined, or below 0)."""
        if not math.isfinite(self.ssr):
            return SSR_UNDEFINED
        return SSR_NEGATIVE.format(value=_figure(self.ssr)) if self.ssr < 0 else _figure(self.ssr)

    @property
    def split_half_text(self) -> str:
        """Split-half reliability in words: its value, or why it is not defined yet."""
        return _figure(self.split_half) if math.isfinite(self.split_half) else SPLIT_HALF_UNDEFINED

    @property
    def ssr_note(self) -> str:
        """What a negative SSR means ("" when SSR is not negative)."""
        return SSR_NEGATIVE_NOTE if math.isfinite(self.ssr) and self.ssr < 0 else ""


@dataclass(frozen=True)
class ComparisonState:
    method_a: str
    method_b: str
    label_a: str
    label_b: str
    test: SignTestState

    @property
    def reached(self) -> bool:
        return self.test.decided

    @property
    def favoured_label(self) -> str:
        return {"a": self.label_a, "b": self.label_b}.get(self.test.favoured or "", "")


@dataclass(frozen=True)
class BudgetState:
    max_judgments: int | None
    budget: Decimal | None
    pay_per_judgment: Decimal | None
    spent: Decimal | None
    reached: bool


#: How the manage page words a projection whose upper end is infinite, and one it cannot make.
NO_UPPER_END = "the upper end cannot be projected yet"
NOT_PROJECTED = "not projected yet: too few votes"
RELIABILITY_NOT_POSITIVE = "not projected yet: SSR must first rise above 0"
NO_DISCORDANT_VOTE = "not projected yet: no vote tells the two methods apart yet"
EVEN_SPLIT = ("at least {low}; no point estimate yet: at the current shares of the votes that tell the methods "
              "apart the test would not decide")
NEVER = "not expected: at the current shares the test never decides"
BEYOND_PAIRS = ("more than the study's pairs can take: about {more} would be needed, and they take at most "
                "about {capacity} more (votes past each pair's target are not collected)")
PAIRS_LIMIT = "; the study's pairs take at most about {capacity} more"
STUDY_FULL = "none: the study is full"
#: How far the reliability projection can be trusted: ``python -m bench adaptive``'s calibration
#: (``bench.bench_adaptive.projection_calibration`` on seeds 7000-7019, 8040-8059 and 9000-9019, 60 simulated
#: studies per design and projection point; docs/measurements.md).
PROJECTION_CALIBRATION = (
    "In 60 simulated studies per design it came within ±25 % of the judgments actually needed in 83 % of them "
    "when made at 8 votes per question, with fixed pairs and adaptive alike; made later, once the reliability "
    "reached 0.6 or 0.7, in 85 to 87 % of adaptive studies but only 70 % of fixed-pair ones. Its interval held the "
    "actual in 67 to 92 %. Studies with fixed pairs tended to need more than projected (median projected / needed "
    "0.85 to 0.99), adaptive ones slightly fewer (1.01 to 1.11). Read it as a guide for budgeting, not a promise."
)


@dataclass(frozen=True)
class Projection:
    """More judgments (skips included) to a rule's target: point and interval, and their cost at ``pay``.

    ``unknown_reason`` says, in words, why the point is NaN (too little data)."""

    more: float
    low: float
    high: float
    pay: Decimal | None
    unknown_reason: str = NOT_PROJECTED
    #: Most further judgments the study's fixed pairs can take (their votes up to each pair's target, at the
    #: study's judgments per vote); None when unbounded (an adaptive study draws new pairs).
    capacity: float | None = None

    def cost(self, value: float) -> Decimal | None:
        if self.pay is None or not math.isfinite(value):
            return None
        count = Decimal(math.ceil(value))
        with localcontext(prec=len(count.as_tuple().digits) + len(self.pay.as_tuple().digits) + 3):
            return (self.pay * count).quantize(Decimal("0.01"))

    @property
    def cost_point(self) -> Decimal | None:
        return self.cost(self.more)

    @property
    def cost_low(self) -> Decimal | None:
        return self.cost(self.low)

    @property
    def cost_high(self) -> Decimal | None:
        return self.cost(self.high)

    @property
    def status(self) -> str:
        """"reached" (0 more), "never" (not expected to be reached), "unknown" (too little data), "beyond" (more
        than the study's pairs can take) or "projected"."""
        if math.isnan(self.more):
            return "unknown"
        if math.isinf(self.more):
            return "never"
        if self.more == 0:
            return "reached"
        return "beyond" if self.capacity is not None and self.more > self.capacity else "projected"

    @staticmethod
    def _count(value: float) -> str:
        return "∞" if math.isinf(value) else "–" if math.isnan(value) else f"{math.ceil(value):,}"

    @property
    def more_text(self) -> str:
        return self._count(self.more)

    @staticmethod
    def _words(point: str, low: str, high: str, *, unbounded: str | None) -> str:
        """A point and its interval in words: "53", "about 120 (90 to 160)", or with no upper end "at least 53"
        followed by ``unbounded`` (when not empty)."""
        if unbounded is not None:
            at_least = f"at least {low}" + (f"; {unbounded}" if unbounded else "")
            return at_least if point == low else f"about {point} ({at_least})"
        return point if low == high else f"about {point} ({low} to {high})"

    @property
    def text(self) -> str:
        """The judgments still needed, in words, for every status but "unknown" (see :attr:`unknown_reason`)."""
        status = self.status
        if status == "reached":
            return "0"
        if status == "never":
            return EVEN_SPLIT.format(low=self._count(self.low)) if math.isfinite(self.low) else NEVER
        if status == "beyond":
            return BEYOND_PAIRS.format(more=self.more_text, capacity=self._count(self.capacity or 0.0))
        words = self._words(self.more_text, self._count(self.low), self._count(self.high),
                            unbounded=NO_UPPER_END if math.isinf(self.high) else None)
        if self.capacity is not None and self.high > self.capacity:
            words += PAIRS_LIMIT.format(capacity=self._count(self.capacity))
        return words

    @property
    def cost_text(self) -> str:
        """The cost of :attr:`text` at ``pay``, in words ("at least 10.60" when the judgments have no upper end);
        "" without a pay or a finite point, or beyond the study's pairs."""
        if self.status == "beyond":
            return ""
        point, low = self.cost_point, self.cost_low
        if point is None or low is None:
            return ""
        high = self.cost_high
        return self._words(str(point), str(low), str(high if high is not None else ""),
                           unbounded="" if high is None else None)


@dataclass(frozen=True)
class StoppingState:
    """Every set rule's state, the rule that fires now (a, b, c order) and, on request, projections."""

    rules: StoppingRules
    n_judgments: int
    n_votes: int
    reliability: ReliabilityState | None
    comparison: ComparisonState | None
    budget: BudgetState | None
    firing: str  # StoppingRuleKind value of the first rule that holds now, "" if none
    reliability_projection: Projection | None = None
    comparison_projection: Projection | None = None
    budget_projection: Projection | None = None

    @property
    def fired(self) -> bool:
        return self.rules.fired_at is not None

    @property
    def projection_calibration(self) -> str:
        """How often the reliability projection came true in simulated studies (:data:`PROJECTION_CALIBRATION`)."""
        return PROJECTION_CALIBRATION

    @property
    def full_text(self) -> str:
        """What the projection cells say once a rule has fired (nothing is projected then)."""
        return STUDY_FULL

    @property
    def odds_slope(self) -> float:
        """Growth exponent of the reliability odds behind the projection (:data:`scoring.stopping.ODDS_SLOPE`)."""
        return ODDS_SLOPE

    @property
    def odds_slope_range(self) -> tuple[float, float]:
        """Exponents giving the projection's interval (:data:`scoring.stopping.ODDS_SLOPE_RANGE`)."""
        return ODDS_SLOPE_RANGE


def stopping_rules_of(*, study: Study) -> StoppingRules | None:
    return StoppingRules.objects.filter(study_id=study.pk).first()


def study_is_full(*, study_id: int) -> bool:
    """A stopping rule of the study has fired: no new pair is assigned, newcomers are turned away."""
    return StoppingRules.objects.filter(study_id=study_id, fired_at__isnull=False).exists()


def study_vote_log(*, study: Study) -> VoteLog:
    """The study's votes in submission order (see the module docstring), and its judgment count."""
    rows = np.array(
        Judgment.objects.filter(pair__study_id=study.pk, pair__attention_check=False,
                                choice__in=(Choice.LEFT, Choice.RIGHT), participation__excluded_at__isnull=True)
        .order_by("submitted_at", "pk")
        .values_list("harder_question_id", "pair__question_a_id", "pair__question_b_id", "participation_id"),
        dtype=np.int64,
    ).reshape(-1, 4)
    harder = rows[:, 0]
    easier = np.where(rows[:, 1] == harder, rows[:, 2], rows[:, 1])
    n_judgments = Judgment.objects.filter(pair__study_id=study.pk).count()
    return VoteLog(harder=harder, easier=easier, evaluator=rows[:, 3], n_judgments=n_judgments)


def _reliability(log: VoteLog, n_votes: int, seed: int) -> tuple[float, float]:
    """SSR and split-half of the scale fitted on the first ``n_votes`` votes (NaN where undefined)."""
    if n_votes < 2:
        return math.nan, math.nan
    h, e, who = log.harder[:n_votes], log.easier[:n_votes], log.evaluator[:n_votes]
    qids, idx = np.unique(np.concatenate([h, e]), return_inverse=True)
    _, who_idx = np.unique(who, return_inverse=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a disconnected graph (one component per subject) is expected here
        scale = human_scale(idx[:n_votes], idx[n_votes:], who_idx, n_items=qids.size, n_boot=0,
                            n_splits=N_SPLITS, rng=seed % 2**32)
    return float(scale.ssr), float(scale.split_half)


def _agreement(study: Study, log: VoteLog, key: str) -> np.ndarray:
    """Per vote, whether the method calls the voter's harder question harder (a tie or no value: no)."""
    spec = next(m for m in report_methods() if m.key == key)
    qids = np.unique(np.concatenate([log.harder, log.easier]))
    scores = dict(QuestionResult.objects.filter(run_id=study.scoring_run_id, question_id__in=qids.tolist())
                  .values_list("question_id", "scores"))
    values = np.array([(scores.get(q) or {}).get(spec.column, np.nan) for q in qids.tolist()], dtype=np.float64)
    values = np.where(np.isfinite(values), values, np.nan)
    pairs = np.column_stack([np.searchsorted(qids, log.harder), np.searchsorted(qids, log.easier)])
    if pairs.size == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(harder_of_pairs(values, pairs, tol=spec.tie_tolerance) == FIRST)


def method_labels() -> dict[str, str]:
    """Method key -> display label, in report order (the registry's difficulty methods)."""
    return {m.key: m.label for m in report_methods()}


def study_stopping_state(
    *, study: Study, rules: StoppingRules | None = None, projections: bool = False, pay: Decimal | None = None,
) -> StoppingState | None:
    """Where the study's stopping rules stand; None when the study has none.

    Parameters
    ----------
    study : Study
    rules : StoppingRules, optional
        The study's rules, if already read.
    projections : bool, default False
        Also project the judgments each rule still needs
        (:func:`scoring.stopping.project_reliability`,
        :func:`scoring.stopping.project_sign_test`), and the cost at ``pay``.
    pay : Decimal, optional
        Pay per judgment for the cost (default: the rules' ``pay_per_judgment``).
    """
    rules = rules if rules is not None else stopping_rules_of(study=study)
    if rules is None:
        return None
    log = study_vote_log(study=study)
    labels = method_labels()
    reliability = comparison = budget = None
    ssr = split = math.nan
    if rules.target_reliability is not None:
        ssr, split = _reliability(log, log.n_votes, study.seed)
        reliability = ReliabilityState(ssr=ssr, split_half=split, target=rules.target_reliability,
                                       reached=reliability_reached(ssr=ssr, split_half=split,
                                                                   target=rules.target_reliability))
    agree_a = agree_b = None
    if rules.method_a and rules.method_b:
        agree_a, agree_b = _agreement(study, log, rules.method_a), _agreement(study, log, rules.method_b)
        discordant = agree_a != agree_b
        test = sequential_sign_test(int((discordant & agree_a).sum()), int(discordant.sum()), alpha=rules.alpha)
        comparison = ComparisonState(method_a=rules.method_a, method_b=rules.method_b,
                                     label_a=labels.get(rules.method_a, rules.method_a),
                                     label_b=labels.get(rules.method_b, rules.method_b), test=test)
    if rules.max_judgments is not None or rules.budget is not None:
        spent = (None if rules.pay_per_judgment is None
                 else (rules.pay_per_judgment * log.n_judgments).quantize(Decimal("0.01")))
        budget = BudgetState(
            max_judgments=rules.max_judgments, budget=rules.budget, pay_per_judgment=rules.pay_per_judgment,
            spent=spent, reached=budget_spent(n_judgments=log.n_judgments, max_judgments=rules.max_judgments,
                                             budget=rules.budget, pay_per_judgment=rules.pay_per_judgment))
    firing = next((kind for kind, state in (("reliability", reliability), ("comparison", comparison),
                                            ("budget", budget)) if state is not None and state.reached), "")
    state = StoppingState(rules=rules, n_judgments=log.n_judgments, n_votes=log.n_votes, reliability=reliability,
                          comparison=comparison, budget=budget, firing=firing)
    if not projections or rules.fired_at is not None:
        return state
    pay = pay if pay is not None else rules.pay_per_judgment
    per_vote = log.n_judgments / log.n_votes if log.n_votes else math.nan
    capacity = None if study.is_adaptive else study_votes_left(study=study) * (per_vote if log.n_votes else 1.0)
    rel_projection = cmp_projection = budget_projection = None
    if reliability is not None:
        rel_projection = _reliability_projection(log, study.seed, reliability, (ssr, split), per_vote, pay, capacity)
    if comparison is not None:
        t = comparison.test
        p: SignTestProjection = project_sign_test(t.wins_a, t.n_discordant, log.n_votes, alpha=rules.alpha)
        cmp_projection = Projection(p.more_votes * per_vote, p.low * per_vote, p.high * per_vote, pay,
                                    unknown_reason=NO_DISCORDANT_VOTE, capacity=capacity)
    if budget is not None:
        left = [float(budget.max_judgments - log.n_judgments)] if budget.max_judgments is not None else []
        if budget.budget is not None and budget.pay_per_judgment:
            left.append(float(math.ceil(budget.budget / budget.pay_per_judgment)) - log.n_judgments)
        more = max(0.0, min(left)) if left else math.nan
        budget_projection = Projection(more, more, more, pay)
    return StoppingState(rules=rules, n_judgments=log.n_judgments, n_votes=log.n_votes, reliability=reliability,
                         comparison=comparison, budget=budget, firing=firing,
                         reliability_projection=rel_projection, comparison_projection=cmp_projection,
                         budget_projection=budget_projection)


def _reliability_projection(log: VoteLog, seed: int, state: ReliabilityState, now: tuple[float, float],
                            per_vote: float, pay: Decimal | None, capacity: float | None) -> Projection:
    """Judgments until min(SSR, split-half) reaches the target, projected from its value now."""
    ssr, split = now
    value = ssr if not math.isfinite(split) else min(ssr, split)
    p: ReliabilityProjection = project_reliability([log.n_votes], [value], target=state.target)
    reason = RELIABILITY_NOT_POSITIVE if math.isfinite(value) and value <= 0 else NOT_PROJECTED
    return Projection(p.more_votes * per_vote, p.low * per_vote, p.high * per_vote, pay, unknown_reason=reason,
                      capacity=capacity)


def study_votes_left(*, study: Study) -> int:
    """Votes the study's regular pairs still take: per pair, its target votes minus its votes (never below 0)."""
    left = (Pair.objects.filter(study_id=study.pk, attention_check=False)
            .aggregate(n=Sum(Greatest(study.target_judgments_per_pair - F("n_votes"), 0)))["n"])
    return int(left or 0)
