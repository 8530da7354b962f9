"""Logging filters named in ``settings.LOGGING``.

Django logs every 403 (``PermissionDenied``) on ``django.request`` as a
warning *with* the exception's traceback: one probe of the admin by a stranger
fills the log with stack frames. :class:`ForbiddenWithoutTraceback` keeps the
one line ("Forbidden (Permission denied): /path") and drops the traceback.
"""
from __future__ import annotations

import logging


class ForbiddenWithoutTraceback(logging.Filter):
    """Strip ``exc_info`` from records of 403 responses; keep every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
