"""Admin registrations, one module per area."""
