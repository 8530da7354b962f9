"""Turn :mod:`scoring` results into the typed pieces of the report
(:mod:`annotate.reports.services.model`).

Every number is a Python ``int``/``float`` (never NaN); an undefined value is
``None`` next to an ``undefined_reason``.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from annotate.reports.selectors.alignment import StudyData, report_methods
from annotate.reports.services.model import Agreement, Average, Correlation, Interval, Kappa, KappaAgreement, McNemar
from scoring import (
    FIRST,
    SECOND,
    SKIP,
    TIE,
    UNDEFINED,
    AgreementCI,
    KappaResult,
    McNemarResult,
    MethodAgreement,
    harder_of_pairs,
)

#: Verdict codes as written in the report: "a" = question_a is harder.
VERDICT_NAMES = {int(FIRST): "a", int(SECOND): "b", int(TIE): "tie", int(UNDEFINED): "undefined", int(SKIP): "skip"}

REASON_NO_SCORED_PAIR = "no pair with a human verdict (every pair was skipped, unjudged or without consensus)"


def method_verdicts(data: StudyData, pairs: np.ndarray, keys: Sequence[str]) -> dict[str, np.ndarray]:
    """Each method's verdict on ``pairs`` (rows of ``data.question_ids``).

    Each method's difficulty is read with higher = harder
    (:meth:`~annotate.reports.selectors.alignment.StudyData.harder`). Two difficulties
    within the method's registry ``tie_tolerance * spread`` (spread over the
    study's questions) are a tie, so numerical noise never
    decides a verdict, a rank or a tie count of the report. A stochastic
    method (replicate fits: MIRT over several seeds) is judged on the mean of
    its fits, and its verdict is a tie wherever the fits disagree on the
    pair's order (:func:`unstable_pairs`).
    """
    specs = {m.key: m for m in report_methods()}
    out = {}
    for k in keys:
        verdicts = harder_of_pairs(data.harder(k), pairs, tol=specs[k].tie_tolerance)
        unstable = unstable_pairs(data, pairs, k)
        verdicts[unstable & (verdicts != UNDEFINED)] = TIE
        out[k] = verdicts
    return out


def unstable_pairs(data: StudyData, pairs: np.ndarray, key: str) -> np.ndarray:
    """Pairs on which the replicate fits of method ``key`` disagree.

    Returns
    -------
    ndarray of bool, shape (n_pairs,)
        True where two replicates with values for both questions give
        different verdicts (each within the method's tie tolerance); all
        False for a method without replicates.
    """
    replicates = data.harder_replicates(key)
    unstable = np.zeros(len(pairs), dtype=bool)
    if replicates is None:
        return unstable
    tol = next(m.tie_tolerance for m in report_methods() if m.key == key)
    seen = np.full(len(pairs), int(UNDEFINED), dtype=np.int8)
    for column in replicates.T:
        v = harder_of_pairs(column, pairs, tol=tol)
        defined = v != UNDEFINED
        unstable |= defined & (seen != UNDEFINED) & (v != seen)
        seen = np.where(defined & (seen == UNDEFINED), v, seen)
    return unstable


def verdict_name(code: int) -> str:
    return VERDICT_NAMES[int(code)]


_CODE_AT_END = re.compile(r"the label (-?\d+)$")


def _readable(reason: str | None) -> str | None:
    """Name a verdict code in a kappa reason ("... only the label 1" -> "... only the verdict 'b'")."""
    if reason is None:
        return None
    match = _CODE_AT_END.search(reason)
    if match is None or int(match.group(1)) not in VERDICT_NAMES:
        return reason
    return reason[: match.start()] + f"the verdict {VERDICT_NAMES[int(match.group(1))]!r}"


def kappa_of(k: KappaResult) -> Kappa:
    """Cohen's kappa with a readable reason when undefined."""
    return Kappa(value=k.kappa, p_o=k.p_o, p_e=k.p_e, n=k.n, undefined_reason=_readable(k.undefined_reason))


def kappa_agreement_of(k: KappaResult, reason: str | None) -> KappaAgreement:
    """Two raters' agreement (``p_o``) and kappa; ``reason`` when they share no pair."""
    return KappaAgreement(agreement=k.p_o, n=k.n, kappa=kappa_of(k), undefined_reason=reason if k.n == 0 else None)


def agreement_fields(a: MethodAgreement) -> dict:
    """:class:`scoring.MethodAgreement` as the fields of :class:`Agreement`."""
    return {
        "agreement": a.agreement, "agreement_excluding_ties": a.agreement_excluding_ties, "n_pairs": a.n_pairs,
        "n_agree": a.n_agree, "n_ties": a.n_ties, "n_undefined": a.n_undefined,
        "n_human_excluded": a.n_human_excluded, "kappa": kappa_of(a.kappa),
        "undefined_reason": None if a.agreement is not None else REASON_NO_SCORED_PAIR,
    }


def agreement_of(a: MethodAgreement) -> Agreement:
    return Agreement(**agreement_fields(a))


def interval_of(ci: AgreementCI | None, reason: str | None = None) -> Interval:
    """Bootstrap intervals as ``(low, high)`` (``None`` when undefined)."""
    if ci is None:
        return Interval(agreement=None, kappa=None, level=None, n_boot=None, n_kappa_undefined=None,
                        undefined_reason=reason)
    return Interval(
        agreement=tuple(ci.agreement), kappa=None if ci.kappa is None else tuple(ci.kappa), level=ci.level,
        n_boot=ci.n_boot, n_kappa_undefined=ci.n_kappa_undefined,
        undefined_reason=None if ci.kappa is not None else "kappa undefined in every bootstrap replicate",
    )


def mcnemar_of(method_a: str, method_b: str, r: McNemarResult | None, reason: str | None = None) -> McNemar:
    if r is None:
        return McNemar(method_a=method_a, method_b=method_b, b=None, c=None, n_discordant=None, n=None,
                       statistic=None, p_value=None, undefined_reason=reason)
    return McNemar(method_a=method_a, method_b=method_b, b=r.b, c=r.c, n_discordant=r.n_discordant, n=r.n,
                   statistic=r.statistic, p_value=r.p_value, undefined_reason=None)


def correlation_of(c) -> Correlation:
    """:class:`scoring.analyses.Correlation` (or its stored dict) as :class:`Correlation`."""
    if isinstance(c, dict):
        return Correlation(value=c["value"], p_value=c["p_value"], n=c["n"], undefined_reason=c["undefined_reason"])
    return Correlation(value=c.value, p_value=c.p_value, n=c.n, undefined_reason=c.undefined_reason)


def average(values: Sequence[float | None], *, noun: str = "evaluators") -> Average:
    """Mean of the defined values, saying how many were left out.

    Returns
    -------
    Average
        ``mean`` None when nothing was defined; the note reads "mean over 18
        of 20 evaluators; 2 undefined", "mean over all 20 evaluators", or says
        that nothing was defined.

    Examples
    --------
    >>> average([0.5, None, 1.0]).note
    'mean over 2 of 3 evaluators; 1 undefined'
    """
    defined = [float(v) for v in values if v is not None]
    n_total, n_defined = len(values), len(defined)
    if n_defined == 0:
        return Average(mean=None, n_defined=0, n_total=n_total,
                       note=f"undefined: none of the {n_total} {noun} has a defined value")
    mean = sum(defined) / n_defined
    if n_defined == n_total:
        note = f"mean over all {n_total} {noun}"
    else:
        note = f"mean over {n_defined} of {n_total} {noun}; {n_total - n_defined} undefined"
    return Average(mean=mean, n_defined=n_defined, n_total=n_total, note=note)
