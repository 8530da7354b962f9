"""Stored runs of the paper's analyses (see :mod:`scoring.analyses`).

One row per run of one analysis: what was asked (``kind``, ``response_set``,
``params``), how far it got (``status``, ``progress``, ``message``) and, once
done, its JSON-able ``result``. A failed run keeps its ``error`` and never a
partial result (a database constraint).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotate.models.catalog import ResponseSet
from annotate.models.scoring import RunStatus


class AnalysisKind(models.TextChoices):
    EFFICIENCY = "efficiency", "Efficiency on the loaded data (3.4, table 3)"
    SCALING = "scaling", "EIP scaling on synthetic matrices (3.4, table 4)"
    MODEL_ROBUSTNESS = "model_robustness", "Robustness to the model pool (3.5, table 5, E.1, table 9)"
    DATASET_ROBUSTNESS = "dataset_robustness", "Robustness to datasets (E.2, table 10)"
    CASE_STUDY = "case_study", "Case study simulation (4, tables 6 and 7)"
    RANK_CHANGES = "rank_changes", "EIP against accuracy (3.2, appendix G, figure 5)"
    PROFILES = "profiles", "Dataset difficulty profiles (figure 9)"
    POOLS = "pools", "Open-weight against the full pool (figure 6)"
    HUMAN_LABELS = "human_labels", "Every method against a human difficulty label"


class AnalysisRun(models.Model):
    """One run of one analysis; ``response_set`` is empty for the synthetic ones
    (``scaling``, ``case_study``)."""

    kind = models.CharField(max_length=40, choices=AnalysisKind.choices)
    response_set = models.ForeignKey(
        ResponseSet, on_delete=models.CASCADE, null=True, blank=True, related_name="analysis_runs"
    )
    params = models.JSONField(default=dict, blank=True, help_text="every parameter, defaults filled in")
    params_key = models.CharField(max_length=64, help_text="SHA-256 of kind, response set and params (lookups)")
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED)
    progress = models.FloatField(default=0.0, help_text="0..1")
    message = models.CharField(max_length=200, blank=True, help_text="what the run is doing now")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="last progress write by the worker (stale runs are reaped)"
    )
    db_backend_pid = models.IntegerField(
        null=True, blank=True,
        help_text="PostgreSQL backend pid of the worker's connection (its query is cancelled if the run is reaped)",
    )
    result = models.JSONField(null=True, blank=True, help_text="set when done, NULL otherwise")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True, help_text="wall time of the computation")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["params_key", "status"], name="analysis_run_params_status")]
        constraints = [
            models.CheckConstraint(
                condition=Q(progress__gte=0.0) & Q(progress__lte=1.0), name="analysis_run_progress_in_unit_interval"
            ),
            models.CheckConstraint(
                condition=(Q(status=RunStatus.DONE) & Q(result__isnull=False))
                | (~Q(status=RunStatus.DONE) & Q(result__isnull=True)),
                name="analysis_run_result_iff_done",
            ),
        ]

    def __str__(self) -> str:
        target = self.response_set if self.response_set_id else "synthetic data"
        return f"{self.kind} analysis {self.pk} on {target}"
