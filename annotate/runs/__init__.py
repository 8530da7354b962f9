"""Runs: scoring runs of the difficulty methods, their results and downloads.

Creating, executing and reaping runs (``services.scoring``,
``services.stale_runs``), the per-question sort keys of the question list
(``services.sort_keys``), reads of runs and results (``selectors``), the
results pages and their tidy downloads (``views``, ``forms``), the admin and
the scoring task.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "run_table_chunks": "annotate.runs.selectors.results",
    "run_method_results": "annotate.runs.selectors.scoring",
    "scoring_run_diagnostics": "annotate.runs.selectors.scoring",
    "scoring_run_get": "annotate.runs.selectors.scoring",
    "scoring_run_latest_covering": "annotate.runs.selectors.scoring",
    "study_report_runs": "annotate.runs.selectors.scoring",
    "DEFAULT_PARAMS": "annotate.runs.services.scoring",
    "parse_methods": "annotate.runs.services.scoring",
    "required_methods": "annotate.runs.services.scoring",
    "scoring_run_create": "annotate.runs.services.scoring",
    "scoring_run_enqueue": "annotate.runs.services.scoring",
    "scoring_run_execute": "annotate.runs.services.scoring",
    "scoring_run_request": "annotate.runs.services.scoring",
    "sort_keys_rebuild": "annotate.runs.services.sort_keys",
    "runs_reap_stale": "annotate.runs.services.stale_runs",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
