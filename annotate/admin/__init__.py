"""Admin registrations, one module per area."""
from annotate.admin import catalog  # noqa: F401
