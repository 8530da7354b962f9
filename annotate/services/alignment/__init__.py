"""Alignment of difficulty methods with human judgment (issue 5; paper section 3.3).

:func:`study_alignment_report` turns a study's judgments and a scoring run into
one plain dict (schema: ``annotate/report_schema.json``): consensus per pair,
each evaluator and the consensus against each method (agreement, Cohen's kappa,
bootstrap intervals, McNemar tests), inter-rater reliability, model pools and
human difficulty labels. :mod:`annotate.services.report_files` renders it as
CSV, JSON and plots.

Modules: ``_data`` (database reads), ``human`` (consensus, evaluators, IRR),
``pools`` (EIP per model pool), ``labels`` (metadata labels, figure 9
profiles), ``report`` (the entry point), ``tables`` (table 2 as rows).
"""
from annotate.services.alignment._data import (
    JUDGMENT_COLUMNS,
    REFERENCE_METHOD,
    MethodSpec,
    report_methods,
    judgment_export_rows,
    verdict_from_display,
)
from annotate.services.alignment.report import SCHEMA_VERSION, study_alignment_report

__all__ = [
    "JUDGMENT_COLUMNS",
    "REFERENCE_METHOD",
    "SCHEMA_VERSION",
    "MethodSpec",
    "report_methods",
    "judgment_export_rows",
    "study_alignment_report",
    "verdict_from_display",
]
