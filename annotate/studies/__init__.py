"""Studies: blind pairwise judgments by evaluators, from setup to export.

Studies and their pairs (``services.studies``, adaptive pairs
``services.adaptive``), participation and judging (``services.judging``,
``views.judging``), quality checks and exclusions (``services.study_quality``),
stopping rules (``services.stopping``), studies derived from a human
response set or imported from elsewhere (``services.derived``,
``services.judgment_import``), export and import (``services.study_transfer``),
evaluator privacy (``services.privacy``), people and their roles (``selectors``,
``views.access``), the study pages, forms and admin.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "EVALUATOR_GROUP": "annotate.studies.selectors.studies",
    "RESEARCHER_GROUP": "annotate.studies.selectors.studies",
    "studies_visible_to": "annotate.studies.selectors.studies",
    "study_evaluator_count": "annotate.studies.selectors.studies",
    "study_for_researcher": "annotate.studies.selectors.studies",
    "study_get_by_key": "annotate.studies.selectors.studies",
    "study_judgment_count": "annotate.studies.selectors.studies",
    "study_pool_size": "annotate.studies.selectors.studies",
    "study_subject_count": "annotate.studies.selectors.studies",
    "user_get_by_username": "annotate.studies.selectors.studies",
    "user_is_researcher": "annotate.studies.selectors.studies",
    "user_role": "annotate.studies.selectors.studies",
    "DEFAULT_N_PAIRS": "annotate.studies.services.derived",
    "DerivedPreview": "annotate.studies.services.derived",
    "derived_study_create": "annotate.studies.services.derived",
    "derived_study_preview": "annotate.studies.services.derived",
    "judging_screen": "annotate.studies.services.judging",
    "judgment_submit": "annotate.studies.services.judging",
    "judgments_import": "annotate.studies.services.judgment_import",
    "JUDGMENT_FORMATS": "annotate.studies.services.judgment_import:FORMATS",
    "judgment_import_file": "annotate.studies.services.judgment_import:import_file_read",
    "evaluator_by_pseudonym": "annotate.studies.services.privacy",
    "evaluator_delete_personal_data": "annotate.studies.services.privacy",
    "ensure_role_groups": "annotate.studies.services.participation",
    "evaluator_create": "annotate.studies.services.participation",
    "invitation_create": "annotate.studies.services.participation",
    "participation_accept_guidelines": "annotate.studies.services.participation",
    "study_create": "annotate.studies.services.studies",
    "StoppingInput": "annotate.studies.services.stopping",
    "StoppingRulesForm": "annotate.studies.forms.stopping",
    "stopping_form_problems": "annotate.studies.forms.stopping",
    "study_scope_update": "annotate.studies.services.scope",
    "ExportCounts": "annotate.studies.services.transfer_export",
    "study_export_chunks": "annotate.studies.services.transfer_export",
    "study_import": "annotate.studies.services.study_transfer",
    "researcher_required": "annotate.studies.views.access",
    "study_access_required": "annotate.studies.views.access",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
