"""The core domain's services."""
