"""Stored results of running the difficulty methods of :mod:`scoring`."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models.catalog import Dataset, LanguageModel, Question, ResponseSet


class RunStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ScoringRun(models.Model):
    """Every method of :mod:`scoring` run once on one response set (optionally
    restricted to a subset of models and/or datasets)."""

    response_set = models.ForeignKey(ResponseSet, on_delete=models.CASCADE, related_name="scoring_runs")
    models_used = models.ManyToManyField(LanguageModel, blank=True, related_name="+")
    datasets_used = models.ManyToManyField(Dataset, blank=True, related_name="+")
    params = models.JSONField(default=dict, blank=True, help_text="alpha, tol, seeds, ...")
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED)
    progress = models.FloatField(default=0.0, help_text="0..1")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="last progress write by the worker (stale runs are reaped)"
    )
    db_backend_pid = models.IntegerField(
        null=True, blank=True,
        help_text="PostgreSQL backend pid of the worker's connection (its query is cancelled if the run is reaped)",
    )
    error = models.TextField(blank=True)
    diagnostics = models.JSONField(
        default=dict, blank=True,
        help_text="response-matrix diagnostics: n_cells, n_missing, min_models, n_low_coverage, n_components",
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk} on {self.response_set}"


class MethodResult(models.Model):
    """How one method went within a run."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="methods")
    method = models.CharField(max_length=40)
    params = models.JSONField(default=dict, blank=True)
    n_iter = models.PositiveIntegerField(null=True, blank=True)
    converged = models.BooleanField(null=True)
    residual = models.FloatField(null=True, blank=True)
    duration_s = models.FloatField()
    notes = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "method"], name="method_result_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"{self.method} in run {self.run_id}"


class QuestionResult(models.Model):
    """Every method's values for one question of a run.

    ``scores`` maps each stored question column of :mod:`scoring.methods`
    (e.g. ``"eip_scaled"``, ``"irt_1pl"``) to a float; a column the method
    leaves undefined (NaN) or a method the run did not execute is absent,
    never NaN. Higher difficulty = harder for every registered method.
    """

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="question_results")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    kept = models.BooleanField(help_text="False when every model solved (or failed) it")
    n_observed = models.PositiveIntegerField()
    component = models.PositiveIntegerField(
        null=True, blank=True, help_text="connected component of the model-question graph (NULL: older run)"
    )
    scores = models.JSONField(default=dict, blank=True, help_text="stored column -> value (see scoring.methods)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "question"], name="question_result_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"q{self.question_id} in run {self.run_id}"

    def score(self, column: str) -> float | None:
        """The stored value of ``column``, or None when undefined."""
        return self.scores.get(column)


class QuestionSortKey(models.Model):
    """Where one question of a run stands when the run's question list is
    sorted by one column, in either direction.

    ``ascending`` / ``descending`` are the question's 0-based positions in
    the list sorted by ``column`` (a stored question column, or
    ``"n_observed"``) ascending / descending: undefined values last
    whatever the direction, ties by question id, exactly the order of the
    stored values. They are computed once, when the run's results are
    stored, so a page of a million-question run is an index range scan
    instead of a sort of every JSON value. A column the run left undefined
    for every question has no rows (its order is the question order).
    """

    # Two indexes only, both filled in order as a run's keys are written (rows
    # come in ascending position): a third one on (run, column, question),
    # filled at random, tripled the write time of a million-question run.
    # Neither foreign key gets an index of its own: both indexes start with
    # the run (run deletes), and questions are catalog rows that stay.
    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="+", db_index=False)
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="sort_keys", db_index=False)
    column = models.CharField(max_length=40)
    ascending = models.PositiveIntegerField(help_text="position in the list sorted ascending (0 = first)")
    descending = models.PositiveIntegerField(help_text="position in the list sorted descending (0 = first)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "column", "ascending"], name="question_sort_key_ascending"),
            models.UniqueConstraint(fields=["run", "column", "descending"], name="question_sort_key_descending"),
        ]

    def __str__(self) -> str:
        return f"q{self.question_id} by {self.column} in run {self.run_id}"


class ModelResult(models.Model):
    """Every method's competency (ability) for one model in a run; ``scores``
    as in :class:`QuestionResult` (model columns of :mod:`scoring.methods`)."""

    run = models.ForeignKey(ScoringRun, on_delete=models.CASCADE, related_name="model_results")
    model = models.ForeignKey(LanguageModel, on_delete=models.CASCADE, related_name="+")
    n_observed = models.PositiveIntegerField()
    scores = models.JSONField(default=dict, blank=True, help_text="stored column -> value (see scoring.methods)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "model"], name="model_result_unique_per_run"),
        ]

    def __str__(self) -> str:
        return f"m{self.model_id} in run {self.run_id}"

    def score(self, column: str) -> float | None:
        """The stored value of ``column``, or None when undefined."""
        return self.scores.get(column)
