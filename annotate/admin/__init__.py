"""Admin registrations, one module per area (imported here so that Django's
admin autodiscovery registers them all before the admin URLs are built)."""
from annotate.admin import analyses, api, catalog, scoring, studies  # noqa: F401
