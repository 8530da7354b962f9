"""Reads of scoring runs: one by id, the newest finished run covering some
datasets, a run's method summaries."""
from __future__ import annotations

from collections.abc import Iterable

from annotate.models import Dataset, MethodResult, QuestionResult, RunStatus, ScoringRun


def scoring_run_get(*, pk: int) -> ScoringRun | None:
    """The scoring run with id ``pk`` (its response set loaded), or None."""
    return ScoringRun.objects.select_related("response_set").filter(pk=pk).first()


def scoring_run_latest_covering(*, datasets: Iterable[Dataset]) -> ScoringRun | None:
    """The newest finished scoring run with a question result in any of
    ``datasets`` (newest by ``created_at``, then by id), or None.

    This is the run a new study samples its pairs from when none is named.
    """
    covering = QuestionResult.objects.filter(question__dataset__in=list(datasets)).values("run_id")
    return ScoringRun.objects.filter(status=RunStatus.DONE, pk__in=covering).order_by("-created_at", "-pk").first()


def run_method_results(*, run: ScoringRun) -> list[MethodResult]:
    """The run's per-method summaries, in the order they were stored."""
    return list(MethodResult.objects.filter(run=run).order_by("pk"))


def scoring_run_diagnostics(*, pk: int) -> dict:
    """The response-matrix diagnostics stored on run ``pk`` (see
    :func:`annotate.services.scoring.diagnostics_summary`); ``{}`` for a run
    without any (unfinished, older, or missing)."""
    found = ScoringRun.objects.filter(pk=pk).values_list("diagnostics", flat=True).first()
    return found or {}
