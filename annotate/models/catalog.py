"""What admins load: benchmarks, questions, language models and their responses.

A response set's cells live in its matrix store
(:mod:`annotate.catalog.matrix_store`), not in rows; the database keeps which
question is which row and which model which column."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class TextFormat(models.TextChoices):
    """How a dataset's question text is written (see :mod:`annotate.core.rendering`).

    Plain text is shown character for character (only delimited math is
    typeset); Markdown is formatted (``**bold**``, lists, code blocks), so its
    syntax characters are not shown."""

    PLAIN = "plain", "plain text with math"
    MARKDOWN = "markdown", "Markdown with math"


class Dataset(models.Model):
    """A benchmark (MMLU-Pro, GSM8k, ...)."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    text_format = models.CharField(
        max_length=20, choices=TextFormat.choices, default=TextFormat.PLAIN,
        help_text="how its questions are written: plain text is shown as written (only delimited math is "
                  "typeset); Markdown is formatted, its syntax characters hidden",
    )
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
    """One upload of model responses. A load writes its matrix store and membership
    rows while the set is ``loading``; every selector hides it until one short final
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
    n_responses = models.PositiveBigIntegerField(default=0, help_text="observed cells of the matrix")
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


class ResponseSetQuestion(models.Model):
    """Question ``question`` is row ``row`` of the matrix of ``response_set``.

    The cells themselves live in the set's matrix store
    (:mod:`annotate.catalog.matrix_store`); a question has a row when the set
    holds at least one response to it."""

    response_set = models.ForeignKey(ResponseSet, on_delete=models.CASCADE, related_name="question_rows")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="response_set_rows")
    row = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response_set", "question"], name="response_set_question_unique"),
            models.UniqueConstraint(fields=["response_set", "row"], name="response_set_row_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.response_set_id}[{self.row}]={self.question_id}"


class ResponseSetModel(models.Model):
    """Model ``model`` is column ``column`` of the matrix of ``response_set``
    (it has at least one response in the set)."""

    response_set = models.ForeignKey(ResponseSet, on_delete=models.CASCADE, related_name="model_columns")
    model = models.ForeignKey(LanguageModel, on_delete=models.PROTECT, related_name="response_set_columns")
    column = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["response_set", "model"], name="response_set_model_unique"),
            models.UniqueConstraint(fields=["response_set", "column"], name="response_set_column_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.response_set_id}[:, {self.column}]={self.model_id}"
