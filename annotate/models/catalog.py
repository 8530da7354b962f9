"""What admins load: benchmarks, questions, language models and their responses."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Dataset(models.Model):
    """A benchmark (MMLU-Pro, GSM8k, ...)."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Subject(models.Model):
    """A subject category; pairs for human judging never mix subjects."""

    name = models.CharField(max_length=200, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Question(models.Model):
    """One benchmark item. ``external_id`` is the id used in the loaded files."""

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="questions")
    subject = models.ForeignKey(
        Subject, on_delete=models.PROTECT, related_name="questions", null=True, blank=True
    )
    external_id = models.CharField(max_length=255)
    text = models.TextField(blank=True)
    options = models.JSONField(default=list, blank=True)
    reference_answer = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="question_unique_per_dataset"),
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"


class ModelAccess(models.TextChoices):
    OPEN_WEIGHT = "open_weight", "open-weight"
    PROPRIETARY = "proprietary", "proprietary"
    UNKNOWN = "unknown", "unknown"


class LanguageModel(models.Model):
    """An LLM that answered questions."""

    name = models.CharField(max_length=200, unique=True)
    family = models.CharField(max_length=100, blank=True)
    parameters_b = models.FloatField(
        null=True, blank=True, help_text="Parameter count in billions; blank when unknown."
    )
    access = models.CharField(max_length=20, choices=ModelAccess.choices, default=ModelAccess.UNKNOWN)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(parameters_b__isnull=True) | Q(parameters_b__gt=0),
                name="language_model_parameters_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ResponseSetStatus(models.TextChoices):
    LOADING = "loading", "loading (hidden until its last batch is written)"
    LOADED = "loaded", "loaded"
    SUPERSEDED = "superseded", "superseded by a newer version"


class ResponseSet(models.Model):
    """One upload of model responses. A load writes its responses in batches while
    the set is ``loading``; every selector hides it until one short final
    transaction marks it ``loaded``, and a failed load removes it. A re-upload
    of identical bytes is refused by ``checksum``; a changed file under the
    same name is an explicit new ``version``."""

    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField(default=1)
    file_name = models.CharField(max_length=500)
    checksum = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the uploaded files")
    file_format = models.CharField(max_length=40)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=20, choices=ResponseSetStatus.choices, default=ResponseSetStatus.LOADED)
    n_questions = models.PositiveIntegerField(default=0)
    n_models = models.PositiveIntegerField(default=0)
    n_responses = models.PositiveIntegerField(default=0)
    options = models.JSONField(default=dict, blank=True, help_text="Loader options (columns, metric, ...)")
    summary = models.JSONField(default=dict, blank=True, help_text="Warnings and counts from the load")
    loader = models.CharField(max_length=120, blank=True, help_text="host:pid of the process loading it")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="last batch written while loading")
    is_human = models.BooleanField(
        default=False,
        help_text="people's answers (one 'model' per person): never scored as LLMs; its difficulty is a human label",
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="response_set_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class Response(models.Model):
    """Credit in [0, 1] that a model got on a question, within one response set.
    A missing row means "not observed", never a failure."""

    response_set = models.ForeignKey(ResponseSet, on_delete=models.CASCADE, related_name="responses")
    model = models.ForeignKey(LanguageModel, on_delete=models.PROTECT, related_name="responses")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="responses")
    credit = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["response_set", "model", "question"], name="response_unique_per_set"
            ),
            models.CheckConstraint(
                condition=Q(credit__gte=0.0) & Q(credit__lte=1.0), name="response_credit_in_unit_interval"
            ),
        ]
        # The matrix of a response set reads its responses by question.
        indexes = [models.Index(fields=["response_set", "question"], name="response_set_question")]

    def __str__(self) -> str:
        return f"{self.model_id}/{self.question_id}={self.credit}"
