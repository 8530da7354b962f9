"""The runs domain's selectors."""
