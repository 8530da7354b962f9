"""The runs domain's services."""
