"""The reports domain's selectors."""
