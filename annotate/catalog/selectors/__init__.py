"""The catalog domain's selectors."""
