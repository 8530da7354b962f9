"""Alignment of difficulty methods with human judgment (paper section 3.3).

:func:`alignment_report_compute` computes a study's report once into one typed
structure (:class:`~annotate.reports.services.model.AlignmentReport`):
consensus per pair, each evaluator and the consensus against each method
(agreement, Cohen's kappa, bootstrap intervals, McNemar tests), inter-rater
reliability, model pools (read from a stored pools analysis) and human
difficulty labels. Its renderings: ``report.to_json()`` (schema:
``annotate/report_schema.json``; :func:`study_alignment_report` returns it),
the tables of :mod:`.tables` (page and tidy CSV) and the files of
:mod:`annotate.reports.services.report_files` (CSV, zip, codebook, plots).

Modules: ``model`` (the typed report), ``human`` (consensus, evaluators, IRR),
``pools`` (the stored model-pool analysis), ``labels`` (metadata labels,
figure 9 profiles), ``report`` (the entry point), ``tables`` (every table),
``cache`` (the page's cache). Database reads are in
:mod:`annotate.reports.selectors.alignment`.
"""
from annotate.reports.selectors.alignment import (
    JUDGMENT_COLUMNS,
    REFERENCE_METHOD,
    MethodSpec,
    report_methods,
    verdict_from_display,
)
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.pools import report_pools_start
from annotate.reports.services.report import SCHEMA_VERSION, alignment_report_compute, study_alignment_report

__all__ = [
    "JUDGMENT_COLUMNS",
    "REFERENCE_METHOD",
    "SCHEMA_VERSION",
    "AlignmentReport",
    "MethodSpec",
    "alignment_report_compute",
    "report_methods",
    "report_pools_start",
    "study_alignment_report",
    "verdict_from_display",
]
