"""The core domain's views."""
