"""Uploads waiting for, or going through, the task worker (parse, check, load)."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from annotate.models.catalog import ResponseSet


class UploadState(models.TextChoices):
    QUEUED = "queued", "queued"
    PARSING = "parsing", "parsing"
    LOADING = "loading", "loading"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class UploadJob(models.Model):
    """One stored upload handed to the worker (``annotate.catalog.tasks.load_upload``).

    ``files`` and ``options`` are the :class:`~annotate.catalog.services.uploads.StoredUpload`
    as stored (its folder is ``token``); ``n_done`` of ``n_total`` responses are
    written while ``loading``; ``error``/``problems`` say why a load failed.
    """

    token = models.CharField(max_length=32, unique=True)
    state = models.CharField(max_length=20, choices=UploadState.choices, default=UploadState.QUEUED)
    files = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True)
    checksum = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the stored bytes")
    n_done = models.PositiveBigIntegerField(default=0)
    n_total = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True)
    problems = models.JSONField(default=list, blank=True, help_text="[{file, row, column, message}]")
    response_set = models.ForeignKey(ResponseSet, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"upload {self.pk} ({self.state})"
