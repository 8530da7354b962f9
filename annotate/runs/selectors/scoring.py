"""Reads of scoring runs: one by id, the newest finished run covering some
datasets, a run's method summaries."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count

from annotate.models import Dataset, MethodResult, Pair, QuestionResult, RunStatus, ScoringRun, Study


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
    :func:`annotate.runs.services.scoring.diagnostics_summary`); ``{}`` for a run
    without any (unfinished, older, or missing)."""
    found = ScoringRun.objects.filter(pk=pk).values_list("diagnostics", flat=True).first()
    return found or {}


@dataclass(frozen=True)
class ReportRunChoice:
    """A scoring run a study's report may compare with: a finished run that
    scores every question of the study's pairs."""

    run: ScoringRun
    is_study_run: bool

    @property
    def label(self) -> str:
        finished = self.run.finished_at.date().isoformat() if self.run.finished_at else "?"
        mark = ", the study's run" if self.is_study_run else ""
        return f"run {self.run.pk} of {self.run.response_set} (finished {finished}{mark})"


def study_report_runs(*, study: Study) -> list[ReportRunChoice]:
    """The runs a study's report can be computed against, the study's own
    run first, then the newest first: finished (``done``) runs with a
    question result for every question of the study's pairs. A study without
    pairs offers its own run only (when finished)."""
    pairs = Pair.objects.filter(study=study)
    questions = set(pairs.values_list("question_a_id", flat=True)) | set(pairs.values_list("question_b_id", flat=True))
    done = ScoringRun.objects.filter(status=RunStatus.DONE).select_related("response_set")
    if questions:
        covering = (QuestionResult.objects.filter(question_id__in=questions).values("run_id")
                    .annotate(n=Count("question_id", distinct=True)).filter(n=len(questions)).values("run_id"))
        done = done.filter(pk__in=covering)
    else:
        done = done.filter(pk=study.scoring_run_id)
    runs = sorted(done, key=lambda r: (r.pk != study.scoring_run_id, -r.created_at.timestamp(), -r.pk))
    return [ReportRunChoice(r, r.pk == study.scoring_run_id) for r in runs]
