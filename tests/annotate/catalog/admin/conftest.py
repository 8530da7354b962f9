"""The admin upload tests run the worker's load inline (``TASKS_BACKEND=immediate``)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User

from annotate.catalog.services import upload_store as ustore

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture(autouse=True)
def _loads_run_inline(settings):
    settings.TASKS = IMMEDIATE


@pytest.fixture(autouse=True)
def upload_root(tmp_path, monkeypatch):
    """Uploads kept in a folder of the test's own."""
    root = tmp_path / "uploads"
    monkeypatch.setattr(ustore, "UPLOAD_ROOT", root)
    return root


@pytest.fixture
def uploader(client):
    """A staff member allowed to add and view response sets (not a superuser), logged in."""
    user = User.objects.create_user("uploader", is_staff=True)  # no password: no slow hashing
    user.user_permissions.add(*Permission.objects.filter(codename__in=["add_responseset", "view_responseset"]))
    client.force_login(user)
    return user
