"""The paper's analyses over stored data: runs, results and files.

* :mod:`.params` -- each analysis's parameters, defaults and checks;
* :mod:`.compute` -- each analysis as a call of :mod:`scoring.analyses` on a
  response set (or on simulated data), returning a JSON-able dict;
* :mod:`.runs` -- ``analysis_run_create`` / ``_execute`` / ``_enqueue`` and
  the lookups of stored runs;
* :mod:`.files` -- tables (one tidy CSV each, a codebook, a zip), JSON, plots
  (PNG/SVG) and headline numbers.
"""
from annotate.analyses.selectors import analysis_runs_recent  # a read, re-exported for the analyses views
from annotate.analyses.services.files import (
    Table,
    analysis_codebook,
    analysis_csv,
    analysis_headlines,
    analysis_json,
    analysis_plot,
    analysis_tables,
    analysis_tidy_tables,
    analysis_zip,
    write_analysis_files,
)
from annotate.analyses.services.params import NEEDS_RESPONSE_SET, SCALING_GRIDS, check_params, defaults, pick_params
from annotate.analyses.services.runs import (
    analysis_run_create,
    analysis_run_enqueue,
    analysis_run_execute,
    analysis_run_latest,
    analysis_run_start,
    kind_label,
)

__all__ = [
    "NEEDS_RESPONSE_SET",
    "SCALING_GRIDS",
    "Table",
    "analysis_codebook",
    "analysis_csv",
    "analysis_headlines",
    "analysis_json",
    "analysis_plot",
    "analysis_run_create",
    "analysis_run_enqueue",
    "analysis_run_execute",
    "analysis_run_latest",
    "analysis_run_start",
    "analysis_runs_recent",
    "analysis_tables",
    "analysis_tidy_tables",
    "analysis_zip",
    "check_params",
    "defaults",
    "kind_label",
    "pick_params",
    "write_analysis_files",
]
