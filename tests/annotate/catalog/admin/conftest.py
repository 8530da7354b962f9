"""The admin upload tests run the worker's load inline (``TASKS_BACKEND=immediate``)."""
from __future__ import annotations

import pytest

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture(autouse=True)
def _loads_run_inline(settings):
    settings.TASKS = IMMEDIATE
