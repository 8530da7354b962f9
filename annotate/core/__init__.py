"""Core: the helpers every domain shares, and nothing about any one of them.

Downloads and HTTP responses (``downloads``, ``http``), bounded JSON
(``jsonsafe``), the labels of codes (``labels``), question text to HTML
(``rendering``), figures (``plots``), reads and writes compiled once (``prepared``), values the database can store
(``storable``), background tasks by name (``task_names``, ``selectors.tasks``),
PostgreSQL housekeeping (``services.database``), the site's middleware
(``csp``, ``ratelimit``, ``views.errors``, ``logfilters``) and form fields
(``forms``). Core imports no other domain, only :mod:`annotate.models`.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core.surface import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "ServiceWritesAdmin": "annotate.core.admin",
    "json_display": "annotate.core.admin",
    "Column": "annotate.core.downloads",
    "ENCODING_NOTE": "annotate.core.downloads",
    "TidyTable": "annotate.core.downloads",
    "bundle_bytes": "annotate.core.downloads",
    "codebook_markdown": "annotate.core.downloads",
    "csv_bytes": "annotate.core.downloads",
    "download_name": "annotate.core.downloads",
    "kind_of": "annotate.core.downloads",
    "render_table": "annotate.core.downloads",
    "rows_csv_bytes": "annotate.core.downloads",
    "rows_csv_lines": "annotate.core.downloads",
    "tidy_frame": "annotate.core.downloads",
    "zip_bytes": "annotate.core.downloads",
    "column_field": "annotate.core.forms",
    "form_add_service_error": "annotate.core.service_errors",
    "form_problems": "annotate.core.service_errors",
    "service_error_text": "annotate.core.service_errors",
    "IdsModelMultipleChoiceField": "annotate.core.forms",
    "ShortEchoChoiceField": "annotate.core.forms",
    "ShortEchoMultipleChoiceField": "annotate.core.forms",
    "ShortEchoTypedChoiceField": "annotate.core.forms",
    "short_echo": "annotate.core.forms",
    "file_response": "annotate.core.http",
    "streamed_file_response": "annotate.core.http",
    "BoundedJSONDecoder": "annotate.core.jsonsafe",
    "JsonTooDeepError": "annotate.core.jsonsafe",
    "load_bounded": "annotate.core.jsonsafe",
    "loads_bounded": "annotate.core.jsonsafe",
    "max_json_depth": "annotate.core.jsonsafe",
    "CONSENSUS_LABELS": "annotate.core.labels",
    "MMLU_LEVELS": "annotate.core.labels",
    "TIE_RULE_LABELS": "annotate.core.labels",
    "humanize": "annotate.core.labels",
    "label": "annotate.core.labels",
    "label_value": "annotate.core.labels",
    "method_notes": "annotate.core.labels",
    "params_text": "annotate.core.labels",
    "report_parameters_text": "annotate.core.labels",
    "difficulty_profile_figure": "annotate.core.plots",
    "PreparedQuery": "annotate.core.prepared",
    "PreparedInsert": "annotate.core.prepared",
    "PreparedUpdate": "annotate.core.prepared",
    "forest_figure": "annotate.core.plots",
    "human_scale_figure": "annotate.core.plots",
    "API_TOKEN_DOOR": "annotate.core.ratelimit",
    "DECLINE_DOOR": "annotate.core.ratelimit",
    "attempt_failed": "annotate.core.ratelimit",
    "attempts_blocked": "annotate.core.ratelimit",
    "door_keys": "annotate.core.ratelimit",
    "seconds_left": "annotate.core.ratelimit",
    "too_many_attempts": "annotate.core.ratelimit",
    "TextFormatSuggestion": "annotate.core.rendering",
    "UNKNOWN_TEXT_FORMAT": "annotate.core.rendering",
    "render_markdown": "annotate.core.rendering",
    "render_option": "annotate.core.rendering",
    "render_question": "annotate.core.rendering",
    "render_question_block": "annotate.core.rendering",
    "text_format_suggest": "annotate.core.rendering",
    "task_pending": "annotate.core.selectors.tasks",
    "backend_cancel": "annotate.core.services.database",
    "backend_pid": "annotate.core.services.database",
    "load_lock": "annotate.core.services.database",
    "pairs_analyze": "annotate.core.services.database",
    "responses_analyze": "annotate.core.services.database",
    "rows_insert": "annotate.core.services.database",
    "sort_keys_analyze": "annotate.core.services.database",
    "ID_MAX": "annotate.core.storable",
    "column_text": "annotate.core.storable",
    "storable_text_problem": "annotate.core.storable",
    "unstorable_in": "annotate.core.storable",
    "lazy_surface": "annotate.core.surface",
    "DELETE_RESPONSE_SET": "annotate.core.task_names",
    "LOAD_UPLOAD": "annotate.core.task_names",
    "RUN_ANALYSIS": "annotate.core.task_names",
    "RUN_SCORING": "annotate.core.task_names",
    "task_enqueue": "annotate.core.task_names",
    "tasks_warm_up": "annotate.core.task_names",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
