"""Tokens for the JSON API: per user, revocable, stored only as a hash."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """One API key of a user. The key itself is shown once, when it is created
    (``manage.py create_api_token``); only its SHA-256 is stored, so a copy of
    the database does not give access. ``prefix`` (the key's first characters)
    lets a person tell their tokens apart."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for")
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key (hex)")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        state = "revoked" if self.revoked_at else "active"
        return f"token {self.prefix}… of {self.user} ({state})"
