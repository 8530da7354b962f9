"""Reads of the JSON API: API tokens by key, and the objects the API lists
and shows. Nothing here writes (stamping a token's use is
:func:`annotate.api.services.api_token_authenticate`).

A key is ``"eip_"`` followed by 43 URL-safe characters; only its SHA-256 is
stored, so a token is found by the hash of the key it was sent with.
"""
from __future__ import annotations

import hashlib

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q

from annotate.catalog import response_sets_visible
from annotate.models import ApiToken, Choice, ResponseSet, ScoringRun, Study
from annotate.studies import studies_visible_to

KEY_PREFIX = "eip_"
PREFIX_LENGTH = 12
RESPONSE_SETS_LIMIT = 500


def api_key_hash(key: str) -> str:
    """The stored form of an API key: its SHA-256, hex."""
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_for_key(*, key: str) -> ApiToken | None:
    """The unrevoked token of an active user whose key is ``key`` (user loaded), or None."""
    if not key or not key.startswith(KEY_PREFIX):
        return None
    return (
        ApiToken.objects.select_related("user")
        .filter(key_hash=api_key_hash(key), revoked_at__isnull=True, user__is_active=True)
        .first()
    )


def response_sets_list(*, limit: int = RESPONSE_SETS_LIMIT) -> list[ResponseSet]:
    """The newest ``limit`` response sets, newest first."""
    return list(response_sets_visible().order_by("-created_at", "-id")[:limit])


def response_set_get(*, response_set_id: int) -> ResponseSet | None:
    return response_sets_visible().filter(pk=response_set_id).first()


def scoring_run_get(*, run_id: int) -> ScoringRun | None:
    """The run with its per-method summaries prefetched."""
    return ScoringRun.objects.prefetch_related("methods").filter(pk=run_id).first()


def studies_list(*, user: AbstractBaseUser) -> list[Study]:
    """The studies ``user`` may see (:func:`annotate.studies.selectors.studies.studies_visible_to`),
    newest first, with ``n_evaluators`` and ``n_judgments`` (votes, not skips)."""
    return list(
        studies_visible_to(user=user).annotate(
            n_evaluators=Count("participations", distinct=True),
            n_judgments=Count("pairs__judgments", filter=~Q(pairs__judgments__choice=Choice.SKIP), distinct=True),
        ).order_by("-created_at", "-id")
    )
