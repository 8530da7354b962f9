"""Compatibility names for the alignment report's data: the reads live in
:mod:`annotate.selectors.alignment` (issue 11, point 2)."""
from __future__ import annotations

from annotate.models import Study
from annotate.selectors.alignment import (
    JUDGMENT_COLUMNS,
    REFERENCE_METHOD,
    EvaluatorInfo,
    MethodSpec,
    PairInfo,
    StudyData,
    align_values,
    report_methods,
    study_alignment_data,
    study_judgment_rows,
    verdict_from_display,
)

__all__ = [
    "JUDGMENT_COLUMNS", "REFERENCE_METHOD", "EvaluatorInfo", "MethodSpec", "PairInfo", "StudyData", "align_values",
    "judgment_export_rows", "report_methods", "study_data", "verdict_from_display",
]


def study_data(*, study: Study, run) -> StudyData:
    """Read a study's pairs, judgments, evaluators and the run's difficulties
    (:func:`annotate.selectors.alignment.study_alignment_data`)."""
    return study_alignment_data(study=study, run=run)


def judgment_export_rows(*, study: Study) -> list[dict]:
    """One dict per judgment or skip (:func:`annotate.selectors.alignment.study_judgment_rows`)."""
    return study_judgment_rows(study=study)
