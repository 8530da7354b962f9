"""The catalog domain's services."""
