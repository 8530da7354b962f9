"""Writes for a study's stopping rules: choose them, and stamp the one that fires.

Rules
-----
* Rules are chosen while the study has no judgment (with its other
  settings, before launch); afterwards they are frozen, so a rule cannot be
  moved to where the data already are.
* After every judgment :func:`stopping_check` reads the rules' state
  (:func:`annotate.studies.selectors.stopping.study_stopping_state`) and, when one
  holds, stamps it once (``fired_at``, which rule, after how many
  judgments). The stamp is final: the study is full.
* A full study assigns no new pair (:func:`annotate.studies.selectors.studies.participation_state`
  offers nothing more), so participants finish the pair on their screen and
  are done; the invitation link tells newcomers the study is full.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from annotate.core import counted
from annotate.models import Judgment, StoppingRules, Study
from annotate.studies.selectors.stopping import method_labels, stopping_rules_of, study_stopping_state
from annotate.studies.selectors.studies import stopping_rules_loaded
from scoring._validation import check_int

ERR_FROZEN = "the stopping rules of study {name!r} are frozen: it already has judgments"
ERR_RELIABILITY = "target_reliability must be a number in (0, 1); got {value!r}"
ERR_ALPHA = "alpha must be a number in (0, 1); got {value!r}"
ERR_METHODS = "method_a and method_b must both be set or both be blank; got {a!r} and {b!r}"
ERR_METHOD_UNKNOWN = "{name} must be one of {choices}; got {value!r}"
ERR_METHODS_SAME = "method_a and method_b must differ; got {value!r} twice"
ERR_MAX_JUDGMENTS = "max_judgments must be an integer >= 1; got {value!r}"
ERR_MONEY = "{name} must be an amount >= 0 with at most 2 decimals; got {value!r}"
ERR_BUDGET_PAY = "a budget in money needs pay_per_judgment > 0"


@dataclass(frozen=True)
class StoppingInput:
    """Parsed rule settings (None / "" = rule not used)."""

    target_reliability: Decimal | None = None
    method_a: str = ""
    method_b: str = ""
    alpha: Decimal = Decimal("0.05")
    max_judgments: int | None = None
    budget: Decimal | None = None
    pay_per_judgment: Decimal | None = None


def _decimal(value: object, *, message: str, name: str, places: int) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        out = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise ValueError(message.format(name=name, value=value)) from None
    if not out.is_finite() or out.as_tuple().exponent < -places:  # type: ignore[operator]
        raise ValueError(message.format(name=name, value=value))
    return out


def stopping_input_clean(*, values: StoppingInput) -> StoppingInput:
    """Check stopping-rule settings without writing anything; the cleaned settings.

    The one check behind :func:`stopping_rules_set` and the rules chosen at
    study creation (:func:`annotate.studies.services.studies.study_create`).

    Parameters
    ----------
    values : StoppingInput
        As :func:`stopping_rules_set` takes them; decimals may come as text.

    Returns
    -------
    StoppingInput
        Decimals parsed, method keys stripped.

    Raises
    ------
    ValueError
        A bad value; the message (this module's ``ERR_*``) names the field.
    """
    target = _decimal(values.target_reliability, message=ERR_RELIABILITY, name="target_reliability", places=3)
    if target is not None and not Decimal(0) < target < Decimal(1):
        raise ValueError(ERR_RELIABILITY.format(value=values.target_reliability))
    alpha = _decimal(values.alpha, message=ERR_ALPHA, name="alpha", places=3)
    if alpha is None or not Decimal(0) < alpha < Decimal(1):
        raise ValueError(ERR_ALPHA.format(value=values.alpha))
    a, b = (values.method_a or "").strip(), (values.method_b or "").strip()
    if bool(a) != bool(b):
        raise ValueError(ERR_METHODS.format(a=a, b=b))
    keys = list(method_labels())
    for name, key in (("method_a", a), ("method_b", b)):
        if key and key not in keys:
            raise ValueError(ERR_METHOD_UNKNOWN.format(name=name, choices=keys, value=key))
    if a and a == b:
        raise ValueError(ERR_METHODS_SAME.format(value=a))
    m = values.max_judgments
    if m is not None:
        check_int(m, name="max_judgments", low=1, message=ERR_MAX_JUDGMENTS)
    budget = _decimal(values.budget, message=ERR_MONEY, name="budget", places=2)
    pay = _decimal(values.pay_per_judgment, message=ERR_MONEY, name="pay_per_judgment", places=2)
    for name, amount in (("budget", budget), ("pay_per_judgment", pay)):
        if amount is not None and amount < 0:
            raise ValueError(ERR_MONEY.format(name=name, value=amount))
    if budget is not None and not pay:
        raise ValueError(ERR_BUDGET_PAY)
    return StoppingInput(target_reliability=target, method_a=a, method_b=b, alpha=alpha, max_judgments=m,
                         budget=budget, pay_per_judgment=pay)


@transaction.atomic
def stopping_rules_set(*, study: Study, values: StoppingInput) -> StoppingRules | None:
    """Choose the study's stopping rules (replacing any); no rule set at all removes them.

    Parameters
    ----------
    study : Study
        A study without judgments.
    values : StoppingInput
        (a) ``target_reliability`` in (0, 1), 3 decimals; (b) ``method_a``
        and ``method_b``, two different registry method keys, with the
        sequential test's ``alpha`` in (0, 1); (c) ``max_judgments`` >= 1
        and/or ``budget`` (money, 2 decimals) with ``pay_per_judgment`` > 0.
        ``pay_per_judgment`` alone is kept for the manage page's costs.

    Returns
    -------
    StoppingRules or None
        The stored rules; None when every rule is blank (rules removed).

    Raises
    ------
    ValueError
        A bad value (the message names the field) or a study with judgments;
        nothing is changed.
    """
    clean = stopping_input_clean(values=values)
    if Judgment.objects.filter(pair__study_id=study.pk).exists():
        raise ValueError(ERR_FROZEN.format(name=study.name))
    fields = {"target_reliability": clean.target_reliability, "method_a": clean.method_a,
              "method_b": clean.method_b, "alpha": clean.alpha, "max_judgments": clean.max_judgments,
              "budget": clean.budget, "pay_per_judgment": clean.pay_per_judgment}
    any_rule = (clean.target_reliability is not None or clean.method_a or clean.max_judgments is not None
                or clean.budget is not None or clean.pay_per_judgment is not None)
    if not any_rule:
        StoppingRules.objects.filter(study_id=study.pk).delete()
        return None
    rules, _ = StoppingRules.objects.select_for_update().update_or_create(study=study, defaults=fields)
    return rules


def stopping_check(*, study: Study) -> str:
    """Stamp the first rule that holds now (reliability, comparison, budget), once.

    Returns the fired rule's kind ("" when none fired now, when the study
    has no rules, or when a rule fired before). Race-safe: the stamp is a
    conditional update (``fired_at`` still empty), so two concurrent checks
    stamp once.

    A study read with its rules (:func:`annotate.studies.selectors.studies.participation_get`)
    that has none, or whose rule had fired, needs no query: rules are chosen
    before the first judgment and a stamp is final. Otherwise the rules are
    read again here (another request may have stamped one since) and the
    study's copy is kept current, so what it offers next honours the stamp.
    """
    known, rules = stopping_rules_loaded(study=study)
    if known and (rules is None or rules.fired_at is not None):
        return ""
    rules = stopping_rules_of(study=study)
    if known:
        Study.stopping_rules.related.set_cached_value(study, rules)
    if rules is None or rules.fired_at is not None:
        return ""
    state = study_stopping_state(study=study, rules=rules)
    if state is None or not state.firing:
        return ""
    detail = {
        "reliability": lambda: (f"SSR {state.reliability.ssr:.3f}, split-half {state.reliability.split_half:.3f} "
                                f">= {state.reliability.target}") if state.reliability else "",
        "comparison": lambda: (f"{state.comparison.favoured_label} agrees better with people: "
                               f"{state.comparison.test.wins_a} of {state.comparison.test.n_discordant} discordant "
                               f"votes side with {state.comparison.label_a}, e-value "
                               f"{state.comparison.test.e_value:.1f} >= 1/{rules.alpha}") if state.comparison else "",
        "budget": lambda: counted(state.n_judgments, "judgment"),
    }[state.firing]()
    stamped = StoppingRules.objects.filter(pk=rules.pk, fired_at__isnull=True).update(
        fired_at=timezone.now(), fired_rule=state.firing, fired_after_judgments=state.n_judgments,
        fired_detail=detail[:300])
    if known:  # the stamp, ours or a concurrent one, on the study's copy
        Study.stopping_rules.related.set_cached_value(study, stopping_rules_of(study=study))
    return state.firing if stamped else ""
