"""Reports: how a study's people agree with each difficulty method.

The alignment report computed once into one typed structure
(``services.report``, ``services.model``), consensus and evaluators
(``services.human``), the human scale (``services.scale``), human labels
(``services.labels``), model pools (``services.pools``), every table
(``services.tables``), the report's files (``services.report_files``), reads
(``selectors``), the report page and its form.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "pools_analysis_latest": "annotate.reports.selectors.alignment",
    "report_methods": "annotate.reports.selectors.alignment",
    "study_judgment_rows": "annotate.reports.selectors.alignment",
    "analysis_run_get": "annotate.reports.selectors.human_labels",
    "human_matrix": "annotate.reports.selectors.human_labels",
    "human_response_set": "annotate.reports.selectors.human_labels",
    "question_metadata_of_set": "annotate.reports.selectors.human_labels",
    "question_names": "annotate.reports.selectors.human_labels",
    "response_sets_human": "annotate.reports.selectors.human_labels",
    "response_sets_human_queryset": "annotate.reports.selectors.human_labels",
    "run_questions": "annotate.reports.selectors.human_labels",
    "scoring_run_for_labels": "annotate.reports.selectors.human_labels",
    "scoring_runs_for_labels": "annotate.reports.selectors.human_labels",
    "study_live_counts": "annotate.reports.services.live",
    "run_alpha": "annotate.reports.services.pools",
    "alignment_report_compute": "annotate.reports.services.report",
    "JSON_PAIRS_LIMIT": "annotate.reports.services.report_files",
    "judgments_csv": "annotate.reports.services.report_files",
    "judgments_file_name": "annotate.reports.services.report_files",
    "report_csv": "annotate.reports.services.report_files",
    "report_file_name": "annotate.reports.services.report_files",
    "write_bundle": "annotate.reports.services.report_files",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
