"""Analyses: the paper's analyses over stored data.

Each analysis's parameters (``services.params``), its computation as a call of
:mod:`scoring.analyses` (``services.compute``, ``services.human_labels``), its
runs (``services.runs``) and files (``services.files``), reads
(``selectors``), the analyses pages, forms, admin and task.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "analysis_run_by_params_key": "annotate.analyses.selectors",
    "Table": "annotate.analyses.services.files",
    "analysis_headlines": "annotate.analyses.services.files",
    "fmt": "annotate.analyses.services.files",
    "write_analysis_files": "annotate.analyses.services.files",
    "human_labels": "annotate.analyses.services.human_labels",
    "NEEDS_RESPONSE_SET": "annotate.analyses.services.params",
    "SCALING_GRIDS": "annotate.analyses.services.params",
    "check_params": "annotate.analyses.services.params",
    "params_key": "annotate.analyses.services.params",
    "pick_params": "annotate.analyses.services.params",
    "analysis_run_create": "annotate.analyses.services.runs",
    "analysis_run_execute": "annotate.analyses.services.runs",
    "analysis_run_start": "annotate.analyses.services.runs",
    "kind_label": "annotate.analyses.services.runs",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
