"""Stopping rules for a judging study, and projections of what is left.

A study may stop assigning new pairs when one of three rules fires:

(a) reliability: the human Bradley-Terry scale reaches a target reliability
    (SSR, and split-half where it is defined): :func:`reliability_reached`;
(b) a decided comparison: which of two difficulty methods agrees better with
    people is settled by an anytime-valid sequential test
    (:func:`sequential_sign_test`), which may be looked at after every vote;
(c) a budget: a number of judgments, or an amount of money at a pay per
    judgment, is spent (:func:`budget_spent`).

Projections (:func:`project_reliability`, :func:`project_sign_test`) say
about how many more votes reach rule (a) or (b), with an interval.

Every threshold comparison is exact (``fractions.Fraction`` or integer
arithmetic on the stored values), never decided by rounding.

Pure numpy/scipy; never imports Django.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

__all__ = [
    "ReliabilityProjection",
    "SignTestProjection",
    "SignTestState",
    "budget_spent",
    "project_reliability",
    "project_sign_test",
    "reliability_reached",
    "sequential_sign_test",
    "sign_test_first_decision",
]

_FloatArray = NDArray[np.float64]

ERR_ALPHA = "alpha must be a number in (0, 1); got {value!r}"
ERR_COUNTS = "wins_a must be an integer in [0, n_discordant] and n_discordant an integer >= 0; got {wins} of {n}"
ERR_TARGET = "target must be a number in (0, 1); got {value!r}"
ERR_HISTORY = "{name} must be a 1-D array of the same length as n_votes; got shape {shape}"
ERR_BUDGET = "{name} must be a finite number >= 0; got {value!r}"


def _exact(value: float | int | str | Decimal | Fraction, *, name: str, message: str) -> Fraction:
    """``value`` as an exact fraction; a float is taken as its exact binary value, a str as written."""
    if isinstance(value, bool):
        raise ValueError(message.format(name=name, value=value))
    try:
        out = Fraction(value)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise ValueError(message.format(name=name, value=value)) from None
    return out


def _alpha(alpha: float | str | Decimal | Fraction) -> Fraction:
    a = _exact(alpha, name="alpha", message=ERR_ALPHA)
    if not 0 < a < 1:
        raise ValueError(ERR_ALPHA.format(value=alpha))
    return a


# --- (a) reliability ----------------------------------------------------------------------


def reliability_reached(*, ssr: float, split_half: float, target: float | str | Decimal | Fraction) -> bool:
    """Whether the scale's reliability has reached ``target``.

    Parameters
    ----------
    ssr : float
        Scale separation reliability (:attr:`scoring.human_scale.HumanScale.ssr`);
        NaN = undefined (then the rule cannot fire).
    split_half : float
        Split-half reliability (Spearman-Brown corrected); NaN = undefined,
        then only SSR is required.
    target : float, str, Decimal or Fraction
        Target in (0, 1); a str or Decimal is taken exactly as written
        (``"0.8"`` is 4/5, not the nearest binary float).

    Returns
    -------
    bool
        ``ssr >= target`` and, where defined, ``split_half >= target``,
        decided in exact arithmetic on the float values.

    Raises
    ------
    ValueError
        If ``target`` is not in (0, 1).

    Notes
    -----
    SSR alone is optimistic in adaptive designs (Bramley and Vitello, 2019),
    hence the split-half requirement where the evaluators can be split.

    Examples
    --------
    >>> reliability_reached(ssr=0.81, split_half=float("nan"), target="0.8")
    True
    >>> reliability_reached(ssr=0.81, split_half=0.79, target="0.8")
    False
    """
    t = _exact(target, name="target", message=ERR_TARGET)
    if not 0 < t < 1:
        raise ValueError(ERR_TARGET.format(value=target))
    if not math.isfinite(ssr) or Fraction(ssr) < t:
        return False
    return not (math.isfinite(split_half) and Fraction(split_half) < t)


# --- (b) the sequential sign test ---------------------------------------------------------


@dataclass(frozen=True)
class SignTestState:
    """Where the sequential comparison of two methods stands.

    Attributes
    ----------
    n_discordant : int
        Votes on which exactly one of the two methods agrees with the voter.
    wins_a : int
        Of those, the votes that agree with method A.
    alpha : Fraction
        Level of the test.
    e_value : float
        ``E_n = 2**n B(s + 1, n - s + 1)``, the Beta(1, 1)-mixture likelihood
        ratio against a fair coin (``inf`` if it overflows a float).
    decided : bool
        ``E_n >= 1 / alpha``, decided exactly in integer arithmetic.
    favoured : {"a", "b"} or None
        The method that agrees better, once decided.
    cs_low, cs_high : float
        The anytime-valid ``1 - alpha`` confidence sequence for ``theta``
        (the probability that a discordant vote sides with A) at this look;
        ``decided`` exactly when 1/2 lies outside it (up to the root
        finder's tolerance of 1e-12).
    """

    n_discordant: int
    wins_a: int
    alpha: Fraction
    e_value: float
    decided: bool
    favoured: str | None
    cs_low: float
    cs_high: float


def _decided(wins: int, n: int, alpha: Fraction) -> bool:
    # E_n = 2**n / ((n + 1) C(n, s)) >= 1 / alpha   <=>   2**n alpha_num >= (n + 1) C(n, s) alpha_den
    return bool(2**n * alpha.numerator >= (n + 1) * math.comb(n, wins) * alpha.denominator)


def _log_mixture(wins: int, n: int) -> float:
    """``log B(s + 1, n - s + 1)``: the log marginal likelihood under a uniform prior on theta."""
    return float(special.betaln(wins + 1, n - wins + 1))


def _confidence_sequence(wins: int, n: int, alpha: Fraction) -> tuple[float, float]:
    """``{theta : theta**s (1 - theta)**(n - s) > alpha B(s + 1, n - s + 1)}`` (an interval)."""
    from scipy import optimize
    if n == 0:
        return 0.0, 1.0
    level = math.log(float(alpha)) + _log_mixture(wins, n)

    def gap(theta: float) -> float:
        return float(special.xlogy(wins, theta) + special.xlog1py(n - wins, -theta)) - level

    mode = wins / n
    low = 0.0 if gap(0.0) > 0 else float(optimize.brentq(gap, 0.0, mode, xtol=1e-12))
    high = 1.0 if gap(1.0) > 0 else float(optimize.brentq(gap, mode, 1.0, xtol=1e-12))
    return low, high


def _check_counts(wins_a: object, n_discordant: object) -> tuple[int, int]:
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (wins_a, n_discordant))
    if not ints or not 0 <= int(wins_a) <= int(n_discordant):  # type: ignore[call-overload]
        raise ValueError(ERR_COUNTS.format(wins=wins_a, n=n_discordant))
    return int(wins_a), int(n_discordant)  # type: ignore[call-overload]


def sequential_sign_test(
    wins_a: int, n_discordant: int, *, alpha: float | str | Decimal | Fraction = "0.05"
) -> SignTestState:
    """Anytime-valid test of whether method A or B agrees better with people.

    Only *discordant* votes inform the comparison: those on which exactly
    one of the two methods calls the voter's harder question harder (a
    method tie counts as not agreeing, as in the report). Under the null
    hypothesis the methods agree equally well, so each discordant vote sides
    with A with probability ``theta = 1/2``. The test statistic is the
    mixture martingale ``E_n = int_0^1 prod (2 theta)**x_k (2 (1 -
    theta))**(1 - x_k) d theta = 2**n B(s + 1, n - s + 1)`` (a uniform prior
    on ``theta``); the comparison is decided when ``E_n >= 1 / alpha``.

    Parameters
    ----------
    wins_a : int
        Discordant votes siding with method A, ``s`` in ``[0, n]``.
    n_discordant : int
        Discordant votes so far, ``n >= 0``.
    alpha : float, str, Decimal or Fraction, default "0.05"
        Level in (0, 1); a str or Decimal is taken exactly as written.

    Returns
    -------
    SignTestState
        Counts, e-value, the exact decision, the favoured method and the
        confidence sequence for ``theta`` at this look.

    Raises
    ------
    ValueError
        On counts out of range or ``alpha`` outside (0, 1).

    Notes
    -----
    ``E_n`` is a nonnegative martingale with mean 1 under the null, so by
    Ville's inequality ``P(E_n >= 1/alpha for some n) <= alpha``: the test
    may be looked at after every vote, and the study stopped at the first
    decision, without inflating the error rate (no alpha spending is
    needed). The null assumes the discordant votes are independent fair
    coins given the past; in a study whose pairs get many votes each, the
    votes on a pair are the units, so the conclusion is about the judged
    pairs. Inverting the test at every ``theta`` gives the confidence
    sequence reported in ``cs_low``, ``cs_high`` (Robbins' mixture
    method).

    References
    ----------
    Robbins, H. (1970). Statistical methods related to the law of the
    iterated logarithm. Annals of Mathematical Statistics 41, 1397-1409.
    Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021).
    Time-uniform, nonparametric, nonasymptotic confidence sequences. Annals
    of Statistics 49, 1055-1080. Ramdas, A., Grunwald, P., Vovk, V. and
    Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
    inference. Statistical Science 38, 576-601.

    Examples
    --------
    >>> st = sequential_sign_test(15, 16, alpha="0.05")
    >>> st.decided, st.favoured
    (True, 'a')
    >>> sequential_sign_test(7, 10).decided
    False
    """
    s, n = _check_counts(wins_a, n_discordant)
    a = _alpha(alpha)
    decided = _decided(s, n, a)
    log_e = n * math.log(2.0) + _log_mixture(s, n)
    e_value = math.exp(log_e) if log_e < 700 else math.inf
    favoured = None if not decided else ("a" if 2 * s > n else "b")
    low, high = _confidence_sequence(s, n, a)
    return SignTestState(n_discordant=n, wins_a=s, alpha=a, e_value=e_value, decided=decided, favoured=favoured,
                         cs_low=low, cs_high=high)


def sign_test_first_decision(
    agree_a: ArrayLike, agree_b: ArrayLike, *, alpha: float | str | Decimal | Fraction = "0.05"
) -> int | None:
    """The vote at which :func:`sequential_sign_test` first decides, looking after every vote.

    Parameters
    ----------
    agree_a, agree_b : array-like of bool, shape (n_votes,)
        Per vote, in the order the votes arrived, whether method A (B) calls
        the voter's harder question harder.
    alpha : float, str, Decimal or Fraction, default "0.05"
        Level in (0, 1).

    Returns
    -------
    int or None
        The 1-based number of votes after which the test first decides, or
        None if it never does.

    Raises
    ------
    ValueError
        If the arrays are not 1-D bool arrays of equal length, or ``alpha``
        is out of range.

    Examples
    --------
    >>> sign_test_first_decision([True] * 8, [False] * 8, alpha="0.05")
    8
    """
    a = np.asarray(agree_a)
    b = np.asarray(agree_b)
    if a.ndim != 1 or a.shape != b.shape or a.dtype != bool or b.dtype != bool:
        raise ValueError(f"agree_a and agree_b must be 1-D bool arrays of equal length; got {a.dtype} {a.shape} "
                         f"and {b.dtype} {b.shape}")
    level = _alpha(alpha)
    discordant = a != b
    n = np.cumsum(discordant)
    s = np.cumsum(discordant & a)
    at = np.flatnonzero(discordant)
    if at.size == 0:
        return None
    nk, sk = n[at], s[at]
    # Screen in floating point (log E_n), then decide exactly where the screen cannot rule a crossing out.
    log_e = nk * math.log(2.0) + special.betaln(sk + 1, nk - sk + 1)
    for k in np.flatnonzero(log_e >= -math.log(float(level)) - 1e-6):
        if _decided(int(sk[k]), int(nk[k]), level):
            return int(at[k]) + 1
    return None


@dataclass(frozen=True)
class SignTestProjection:
    """About how many more votes decide the comparison.

    Attributes
    ----------
    more_votes : float
        Further votes until the test decides if the share of discordant
        votes and the share siding with A stay at their current estimates;
        ``inf`` when not expected to decide (the share is 1/2), NaN when no
        discordant vote has been seen yet.
    low, high : float
        The same at the ends of the 95 % Wilson interval of that share (the
        end nearer 1/2 gives ``high``, possibly ``inf``).
    """

    more_votes: float
    low: float
    high: float


def _votes_to_decide(theta: float, rate: float, n_now: int, s_now: int, alpha: Fraction, cap: int) -> float:
    """Further votes until E_n crosses 1/alpha if discordant votes arrive at ``rate`` and side with A at ``theta``."""
    if rate <= 0 or theta == 0.5:
        return math.inf
    for extra in _grid(cap):
        n = n_now + round(extra * rate)
        s = s_now + round(extra * rate * theta)
        s = min(max(s, 0), n)
        if _decided(s, n, alpha) or _decided(n - s, n, alpha):
            return float(extra)
    return math.inf


def _grid(cap: int) -> list[int]:
    """0, 1, 2, ... then geometric steps (2 %) up to ``cap``: enough resolution for a projection."""
    out, k = [], 0
    while k <= cap:
        out.append(k)
        k = k + 1 if k < 50 else int(k * 1.02) + 1
    return out


def project_sign_test(
    wins_a: int, n_discordant: int, n_votes: int, *, alpha: float | str | Decimal | Fraction = "0.05",
    cap: int = 1_000_000,
) -> SignTestProjection:
    """Project the votes still needed by :func:`sequential_sign_test`.

    Parameters
    ----------
    wins_a, n_discordant : int
        As in :func:`sequential_sign_test`.
    n_votes : int
        All votes so far (discordant or not), ``>= n_discordant``.
    alpha : float, str, Decimal or Fraction, default "0.05"
    cap : int, default 1,000,000
        Largest number of further votes considered (beyond: ``inf``).

    Returns
    -------
    SignTestProjection

    Raises
    ------
    ValueError
        On counts out of range.

    Notes
    -----
    A plug-in projection: future votes are assumed discordant at the
    observed rate ``n_discordant / n_votes`` and siding with A at the
    observed share ``wins_a / n_discordant``; the interval replaces that
    share by the ends of its 95 % Wilson interval.

    Examples
    --------
    >>> p = project_sign_test(12, 16, 40)
    >>> 0 < p.low <= p.more_votes <= p.high
    True
    """
    from scipy import stats
    s, n = _check_counts(wins_a, n_discordant)
    if isinstance(n_votes, bool) or not isinstance(n_votes, (int, np.integer)) or n_votes < n:
        raise ValueError(f"n_votes must be an integer >= n_discordant ({n}); got {n_votes!r}")
    a = _alpha(alpha)
    if n == 0:
        return SignTestProjection(more_votes=math.nan, low=math.nan, high=math.nan)
    if _decided(s, n, a) or _decided(n - s, n, a):
        return SignTestProjection(more_votes=0.0, low=0.0, high=0.0)
    rate = n / int(n_votes)
    share = s / n
    z = float(stats.norm.ppf(0.975))
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    ends = [centre - half, centre + half]
    point = _votes_to_decide(share, rate, n, s, a, cap)
    at_ends = [_votes_to_decide(min(max(t, 0.0), 1.0), rate, n, s, a, cap) for t in ends]
    if ends[0] < 0.5 < ends[1]:  # 1/2 inside: the slow end is "never"
        low, high = min(at_ends), math.inf
    else:
        low, high = min(at_ends), max(at_ends)
    return SignTestProjection(more_votes=point, low=min(low, point), high=max(high, point))


# --- (a) projection -----------------------------------------------------------------------


@dataclass(frozen=True)
class ReliabilityProjection:
    """About how many more votes bring the scale's reliability to a target.

    Attributes
    ----------
    more_votes : float
        Further votes (non-skip judgments) projected to reach the target;
        0 when reached; NaN when there is too little history to project.
    low, high : float
        A 90 % interval for ``more_votes`` (see :func:`project_reliability`).
    slope : float
        Fitted growth of the reliability odds with the number of votes
        (log-log slope; 1 = proportional).
    n_points : int
        History points used (those with a reliability in (0, 1)).
    """

    more_votes: float
    low: float
    high: float
    slope: float
    n_points: int


#: Growth exponent of the reliability odds with the votes (see :func:`project_reliability`) and its range.
ODDS_SLOPE = 1.2
ODDS_SLOPE_RANGE = (1.0, 1.5)


def project_reliability(
    n_votes: ArrayLike, reliability: ArrayLike, *, target: float | str | Decimal | Fraction,
    slope: float | None = ODDS_SLOPE, slope_range: tuple[float, float] = ODDS_SLOPE_RANGE,
) -> ReliabilityProjection:
    """Project the votes needed for the scale's reliability to reach ``target``.

    Parameters
    ----------
    n_votes : array-like of int, shape (k,)
        Votes at each point of the study's history (increasing; the last is
        now), e.g. the current count and its 1/4, 1/2 and 3/4.
    reliability : array-like of float, shape (k,)
        The reliability (SSR, or the smaller of SSR and split-half) of the
        scale fitted on the first ``n_votes[i]`` votes; NaN = undefined.
    target : float, str, Decimal or Fraction
        Target reliability in (0, 1).
    slope : float or None, default 1.2
        Growth exponent ``k`` of the reliability odds with the votes, used
        through the last point (its interval: ``slope_range``); None fits
        it to the history (below).
    slope_range : (float, float), default (1.0, 1.5)
        Exponents giving the interval when ``slope`` is fixed.

    Returns
    -------
    ReliabilityProjection
        More votes with a 90 % interval; NaN when the last point's
        reliability is not in (0, 1).

    Raises
    ------
    ValueError
        On mismatched shapes or a target outside (0, 1).

    Notes
    -----
    Reliability is true variance over true plus error variance, and the
    error variance of a Bradley-Terry scale falls like one over the number
    of comparisons, so the reliability odds ``R / (1 - R)`` grow about in
    proportion to the votes (Verhavert et al., 2019, found the same in
    comparative-judgement studies). Measured, the smaller of SSR and
    split-half grows faster (the ridge penalty shrinks a young scale;
    split-half halves the evaluators): in ``python -m bench adaptive``'s
    simulated studies, projecting from 8 votes per question until the
    smaller first reaches 0.8 (the rule checked every 20 judgments), the
    exponent through the last point that would have hit the judgments
    actually needed had median 1.255 over the 39 uniform and adaptive runs
    of the tuning seeds 1000-1019 (5th and 95th percentiles 1.04 and 1.48;
    uniform median 1.21, adaptive 1.30). ``k = 1.2`` came within +-25 % on
    16 of those 20 uniform and 17 of 19 adaptive runs, ``k = 1.25`` on 17
    and 19, but on the fresh seeds 7000-7019 on 13 and 15 of 19 against
    15 and 16 for ``k = 1.2``; hence ``k = 1.2`` (and the interval from
    exponents 1.0 and 1.5, about those percentiles). The spread comes
    from the votes still to come: neither the reliability at the
    projection point, its growth over the last quarter of the votes nor
    the skip rate predicted a run's exponent (split-half minus SSR did a
    little in the uniform design), and projecting from a line through the
    last points with the exponent fixed, a fitted exponent, or SSR and
    split-half each with an exponent of its own did no better on those
    seeds (``docs/measurements.md``). With ``slope=None``
    the projection fits ``log odds = c + k log n_votes`` by least squares
    on the history points (``k`` clipped to [0.5, 2]) and solves for the
    target odds; with two points it keeps ``k = 1`` through the last
    point. The interval re-solves with the slope at its least-squares 90 %
    t-interval (or ``k`` in [0.75, 1.33] with two points), never narrower
    than the proportional model's answer.

    References
    ----------
    Verhavert, S., Bouwer, R., Donche, V. and De Maeyer, S. (2019). A
    meta-analysis on the reliability of comparative judgement. Assessment
    in Education 26, 541-562.

    Examples
    --------
    >>> p = project_reliability([100, 200], [0.5, 2 / 3], target="0.8", slope=None)
    >>> round(p.more_votes)
    200
    >>> round(project_reliability([200], [2 / 3], target="0.8").more_votes)  # 200 * 2**(1/1.2) - 200
    156
    """
    from scipy import stats
    t = _exact(target, name="target", message=ERR_TARGET)
    if not 0 < t < 1:
        raise ValueError(ERR_TARGET.format(value=target))
    x = np.asarray(n_votes, dtype=np.float64)
    r = np.asarray(reliability, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(ERR_HISTORY.format(name="n_votes", shape=x.shape))
    if r.shape != x.shape:
        raise ValueError(ERR_HISTORY.format(name="reliability", shape=r.shape))
    if x.size == 0:
        return ReliabilityProjection(math.nan, math.nan, math.nan, math.nan, 0)
    now = float(x[-1])
    if math.isfinite(float(r[-1])) and Fraction(float(r[-1])) >= t:
        return ReliabilityProjection(0.0, 0.0, 0.0, math.nan, int(x.size))
    ok = np.isfinite(r) & (r > 0) & (r < 1) & (x > 0)
    if not ok[-1]:
        return ReliabilityProjection(math.nan, math.nan, math.nan, math.nan, int(ok.sum()))
    target_odds = math.log(float(t) / (1 - float(t)))
    if slope is not None:
        last_x, last_y = math.log(now), math.log(float(r[-1]) / (1 - float(r[-1])))

        def through_last(k: float) -> float:
            return max(0.0, math.exp(last_x + (target_odds - last_y) / k) - now)

        ends = [through_last(k) for k in slope_range]
        point = through_last(slope)
        return ReliabilityProjection(more_votes=point, low=min(*ends, point), high=max(*ends, point),
                                     slope=float(slope), n_points=1)
    lx = np.log(x[ok])
    ly = np.log(r[ok] / (1 - r[ok]))
    if ok.sum() <= 2:
        slope, slopes = 1.0, (0.75, 1.0 / 0.75)
        anchor_x, anchor_y = lx[-1], float(ly[-1])
        anchors: tuple[float, ...] = (anchor_y,)
    else:
        fit = stats.linregress(lx, ly)
        slope = float(np.clip(fit.slope, 0.5, 2.0))
        tq = float(stats.t.ppf(0.95, lx.size - 2))
        slopes = (float(np.clip(fit.slope - tq * fit.stderr, 0.5, 2.0)),
                  float(np.clip(fit.slope + tq * fit.stderr, 0.5, 2.0)))
        # Anchored at the last point: both the observed value and the fitted line's, which differ by its noise.
        anchor_x = lx[-1]
        fitted, observed = float(fit.intercept + fit.slope * lx[-1]), float(ly[-1])
        anchors = (fitted, observed)
        anchor_y = 0.5 * (fitted + observed)

    def more(k: float, y: float | None = None) -> float:
        return max(0.0, math.exp(anchor_x + (target_odds - (anchor_y if y is None else y)) / k) - now)

    point = more(slope)
    ends = [more(k, y) for k in (*slopes, 1.0) for y in (anchors if ok.sum() > 2 else (anchor_y,))]
    return ReliabilityProjection(more_votes=point, low=min(*ends, point), high=max(*ends, point),
                                 slope=slope, n_points=int(ok.sum()))


# --- (c) budget ---------------------------------------------------------------------------


def budget_spent(
    *, n_judgments: int, max_judgments: int | None = None, budget: Decimal | str | None = None,
    pay_per_judgment: Decimal | str | None = None,
) -> bool:
    """Whether a budget of judgments, or of money, is spent.

    Parameters
    ----------
    n_judgments : int
        Judgments so far, skips included (a skip costs the evaluator's time).
    max_judgments : int, optional
        Budget in judgments; None = no such budget.
    budget, pay_per_judgment : Decimal or str, optional
        Budget in money and the pay per judgment (same currency); both or
        neither. Decimal arithmetic: exact.

    Returns
    -------
    bool
        ``n_judgments >= max_judgments`` or ``n_judgments * pay_per_judgment
        >= budget``.

    Raises
    ------
    ValueError
        On a negative or non-finite amount.

    Examples
    --------
    >>> budget_spent(n_judgments=300, budget="45.00", pay_per_judgment="0.15")
    True
    >>> budget_spent(n_judgments=299, budget="45.00", pay_per_judgment="0.15")
    False
    """
    if max_judgments is not None and n_judgments >= max_judgments:
        return True
    if budget is None or pay_per_judgment is None:
        return False
    money = _money(budget, name="budget")
    pay = _money(pay_per_judgment, name="pay_per_judgment")
    return pay * n_judgments >= money


def _money(value: Decimal | str, *, name: str) -> Decimal:
    try:
        out = Decimal(value)
    except (ArithmeticError, TypeError, ValueError):
        raise ValueError(ERR_BUDGET.format(name=name, value=value)) from None
    if not out.is_finite() or out < 0:
        raise ValueError(ERR_BUDGET.format(name=name, value=value))
    return out
