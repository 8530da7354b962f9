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
