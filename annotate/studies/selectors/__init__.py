"""The studies domain's selectors."""
