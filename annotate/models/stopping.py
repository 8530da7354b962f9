"""A study's stopping rules: when it stops assigning new pairs.

One row per study that has rules (none: the study runs until its pairs reach
their target votes, as before). Chosen while the study has no judgment
(:func:`annotate.studies.services.stopping.stopping_rules_set`); checked after every
judgment (:func:`annotate.studies.services.stopping.stopping_check`), which stamps
``fired_at`` once. From then on newcomers are told the study is full and
participants finish the pair on their screen.
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q

from annotate.models.studies import Study


class StoppingRuleKind(models.TextChoices):
    RELIABILITY = "reliability", "the human scale reached its target reliability"
    COMPARISON = "comparison", "the comparison of the two methods was decided"
    BUDGET = "budget", "the budget was spent"


class StoppingRules(models.Model):
    """Rules (a) reliability, (b) a decided method comparison, (c) a budget; any that is set may fire."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="stopping_rules")
    target_reliability = models.DecimalField(
        max_digits=4, decimal_places=3, null=True, blank=True,
        help_text="Stop when SSR (and split-half, where defined) of the human scale reach this, in (0, 1)",
    )
    method_a = models.CharField(max_length=40, blank=True, help_text="Method key (e.g. eip) of the comparison")
    method_b = models.CharField(max_length=40, blank=True, help_text="The other method key (e.g. simple_rank)")
    alpha = models.DecimalField(
        max_digits=4, decimal_places=3, default="0.050",
        help_text="Level of the anytime-valid sequential test of the comparison, in (0, 1)",
    )
    max_judgments = models.PositiveIntegerField(
        null=True, blank=True, help_text="Stop after this many judgments (skips included)"
    )
    budget = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, help_text="Stop when judgments x pay reach this"
    )
    pay_per_judgment = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text="Pay per judgment (skips included)"
    )
    fired_at = models.DateTimeField(null=True, blank=True)
    fired_rule = models.CharField(max_length=20, choices=StoppingRuleKind.choices, blank=True)
    fired_after_judgments = models.PositiveIntegerField(null=True, blank=True)
    fired_detail = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name_plural = "stopping rules"
        constraints = [
            models.CheckConstraint(
                condition=Q(target_reliability__isnull=True)
                | (Q(target_reliability__gt=0) & Q(target_reliability__lt=1)),
                name="stopping_target_reliability_range",
            ),
            models.CheckConstraint(condition=Q(alpha__gt=0) & Q(alpha__lt=1), name="stopping_alpha_range"),
            models.CheckConstraint(condition=Q(budget__isnull=True) | Q(budget__gte=0), name="stopping_budget_gte_0"),
            models.CheckConstraint(
                condition=Q(pay_per_judgment__isnull=True) | Q(pay_per_judgment__gte=0),
                name="stopping_pay_gte_0",
            ),
        ]

    def __str__(self) -> str:
        state = f"fired ({self.fired_rule})" if self.fired_at else "armed"
        return f"stopping rules of study {self.study_id}: {state}"
