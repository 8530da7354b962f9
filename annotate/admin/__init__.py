"""Admin registrations: each domain owns its admin module; importing them here
lets Django's admin autodiscovery register them all before the admin URLs are
built."""
from annotate.analyses import admin as analyses_admin
from annotate.api import admin as api_admin
from annotate.catalog.admin import catalog as catalog_admin
from annotate.runs import admin as runs_admin
from annotate.studies.admin import studies as studies_admin

__all__ = ["analyses_admin", "api_admin", "catalog_admin", "runs_admin", "studies_admin"]
