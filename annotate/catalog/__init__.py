"""Catalog: datasets, subjects, questions, language models and response sets.

Everything that gets responses in and out of the database: the parsers
(``loaders``), the compact matrix store (``matrix_store``), the one upload
service that the admin, the API and ``load_responses`` call
(``services.uploads``, ``services.loading``, ``services.upload_jobs``), human
response sets (``services.human``), background deletion (``services.deletion``),
reads (``selectors``: the catalog, the response matrix, uploads, delete
counts), the upload form, the admin pages and the tasks.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "ResponseUploadForm": "annotate.catalog.forms",
    "LoadError": "annotate.catalog.loaders.base",
    "Problem": "annotate.catalog.loaders.base",
    "problems_text": "annotate.catalog.loaders.base",
    "HARNESS_FORMATS": "annotate.catalog.loaders.harness:FORMATS",
    "scratch_dir": "annotate.catalog.loaders.limits",
    "TABULAR_FORMATS": "annotate.catalog.loaders.tabular:FORMATS",
    "store_remove_on_commit": "annotate.catalog.matrix_store",
    "dataset_ids_by_name": "annotate.catalog.selectors.catalog",
    "dataset_names": "annotate.catalog.selectors.catalog",
    "datasets_by_name": "annotate.catalog.selectors.catalog",
    "model_ids_by_name": "annotate.catalog.selectors.catalog",
    "response_set_by_checksum": "annotate.catalog.selectors.catalog",
    "response_set_by_key": "annotate.catalog.selectors.catalog",
    "response_set_default": "annotate.catalog.selectors.catalog",
    "response_set_labels": "annotate.catalog.selectors.catalog",
    "response_set_latest": "annotate.catalog.selectors.catalog",
    "response_set_names_loaded": "annotate.catalog.selectors.catalog",
    "response_sets_loaded": "annotate.catalog.selectors.catalog",
    "response_sets_visible": "annotate.catalog.selectors.catalog",
    "subject_names": "annotate.catalog.selectors.catalog",
    "subjects_by_name": "annotate.catalog.selectors.catalog",
    "CompactMatrix": "annotate.catalog.selectors.matrix",
    "NO_SUBJECT": "annotate.catalog.selectors.matrix",
    "ResponseMatrix": "annotate.catalog.selectors.matrix",
    "check_ids": "annotate.catalog.selectors.matrix",
    "ids_shown": "annotate.catalog.selectors.matrix",
    "response_matrix": "annotate.catalog.selectors.matrix",
    "response_matrix_compact": "annotate.catalog.selectors.matrix",
    "upload_job_get": "annotate.catalog.selectors.uploads",
    "response_set_mark_human": "annotate.catalog.services.human",
    "LoadPreview": "annotate.catalog.services.load_plan",
    "checksum_of": "annotate.catalog.services.load_plan",
    "diagnostics_line": "annotate.catalog.services.load_plan",
    "response_set_load": "annotate.catalog.services.loading",
    "response_sets_abandoned_remove": "annotate.catalog.services.loading",
    "upload_job_submit": "annotate.catalog.services.upload_jobs",
    "CheckedUpload": "annotate.catalog.services.uploads",
    "FILE_ROLES": "annotate.catalog.services.upload_store",
    "UploadOptions": "annotate.catalog.services.uploads",
    "UploadOutcome": "annotate.catalog.services.uploads",
    "UploadSource": "annotate.catalog.services.uploads",
    "upload_check": "annotate.catalog.services.uploads",
    "upload_discard": "annotate.catalog.services.upload_store",
    "upload_load": "annotate.catalog.services.uploads",
    "upload_parse": "annotate.catalog.services.uploads",
    "upload_receive": "annotate.catalog.services.upload_store",
    "upload_store": "annotate.catalog.services.upload_store",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
