"""The studies domain's admin."""
