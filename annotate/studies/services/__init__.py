"""The studies domain's services."""
