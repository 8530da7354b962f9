"""The studies domain's views."""
