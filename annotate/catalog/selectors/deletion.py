"""What deleting a response set would remove, in counts (never a list of every object)."""
from __future__ import annotations

from dataclasses import dataclass

from annotate.models import AnalysisRun, ResponseSet, ScoringRun, Study


@dataclass(frozen=True)
class DeleteCounts:
    """Counts shown on the delete confirmation page of one response set.

    Attributes
    ----------
    response_set : ResponseSet
    n_questions, n_models : int
        Questions and models with a response in the set (as loaded). The
        questions and models themselves are kept: they belong to the catalog.
    n_responses : int
        Responses (observed cells of its matrix store) deleted.
    n_scoring_runs, n_analysis_runs : int
        Runs on the set, deleted with their results.
    blocking_studies : tuple of str
        Names of the studies that use one of its scoring runs; while any
        exists the set cannot be deleted.
    """

    response_set: ResponseSet
    n_questions: int
    n_models: int
    n_responses: int
    n_scoring_runs: int
    n_analysis_runs: int
    blocking_studies: tuple[str, ...]


def response_set_delete_counts(*, response_set: ResponseSet) -> DeleteCounts:
    """The counts of :class:`DeleteCounts` for ``response_set`` (a few indexed queries, whatever its size)."""
    studies = Study.objects.filter(scoring_run__response_set=response_set).order_by("name")
    return DeleteCounts(
        response_set=response_set,
        n_questions=response_set.n_questions,
        n_models=response_set.n_models,
        n_responses=response_set.n_responses,
        n_scoring_runs=ScoringRun.objects.filter(response_set=response_set).count(),
        n_analysis_runs=AnalysisRun.objects.filter(response_set=response_set).count(),
        blocking_studies=tuple(studies.values_list("name", flat=True)),
    )
