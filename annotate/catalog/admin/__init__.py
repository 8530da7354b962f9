"""The catalog domain's admin."""
