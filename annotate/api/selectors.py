"""Reads the API needs beyond the app's selectors. Nothing here writes."""
from __future__ import annotations

from django.db.models import Count, Q

from annotate.models import Choice, ResponseSet, ScoringRun, Study


def response_sets_list(*, limit: int = 500) -> list[ResponseSet]:
    """The newest ``limit`` response sets, newest first."""
    return list(ResponseSet.objects.order_by("-created_at", "-id")[:limit])


def scoring_run_get(*, run_id: int) -> ScoringRun | None:
    return ScoringRun.objects.filter(pk=run_id).first()


def studies_list() -> list[Study]:
    """Every study, newest first, with ``n_evaluators`` and ``n_judgments`` (votes, not skips)."""
    return list(
        Study.objects.annotate(
            n_evaluators=Count("participations", distinct=True),
            n_judgments=Count("pairs__judgments", filter=~Q(pairs__judgments__choice=Choice.SKIP), distinct=True),
        ).order_by("-created_at", "-id")
    )
