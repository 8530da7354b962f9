"""The studies domain's forms."""
