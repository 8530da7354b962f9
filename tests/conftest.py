"""Fixtures shared by every test folder."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _shared_data_dir() -> Path:
    return Path(os.environ.get("EIP_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real public data (``EIP_SHARED_DATA``, default ../shared/data).

    Skips with a clear reason when it is absent, except in CI where it must exist.
    """
    path = _shared_data_dir()
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"shared data folder {path} is missing in CI (set EIP_SHARED_DATA)")
        pytest.skip(f"shared data folder {path} not found; set EIP_SHARED_DATA to run this test")
    return path


@pytest.fixture(autouse=True)
def _matrix_store_dir(tmp_path_factory, monkeypatch):
    """Every test writes response-set matrix stores into its own folder (setting
    ``EIP_STORE_DIR``; also in the environment, for subprocesses)."""
    from django.conf import settings

    path = tmp_path_factory.mktemp("store")
    monkeypatch.setattr(settings, "EIP_STORE_DIR", path, raising=False)
    monkeypatch.setenv("EIP_STORE_DIR", str(path))
    return path
