"""The core domain's selectors."""
