"""Fixtures shared by every test folder."""
from __future__ import annotations

import itertools
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


_RATE_WINDOWS = itertools.count()


@pytest.fixture(autouse=True)
def _rate_limit_clock(monkeypatch):
    """The rate limiter's clock stands still during a test, 20 s into a window of its own.

    Limits count failures per fixed window (``RATELIMIT_WINDOW_S``); with the real clock a
    test that crossed a window boundary between its attempts and its check saw its counts
    reset and failed at random. Each test gets a different day, so no count carries over
    from another test whatever the cache keeps. Tests that move time set ``ratelimit.now``
    themselves (their monkeypatch wins).
    """
    from annotate.core import ratelimit

    frozen = 1_000_000_040.0 + 86_400.0 * next(_RATE_WINDOWS)  # 1,000,000,040 = 16,666,667 * 60 + 20
    monkeypatch.setattr(ratelimit, "now", lambda: frozen)
    return frozen


@pytest.fixture(autouse=True)
def _no_kept_scale_estimates():
    """Each test starts with no scale estimate kept by the adaptive service: ids
    are reused between tests, and a test may replace the fit (monkeypatch)."""
    from annotate.studies.services import adaptive

    adaptive.adaptive_estimates_forget()


@pytest.fixture(autouse=True)
def _no_kept_cached_reports():
    """Each test starts with an empty in-process cache: ids are reused between tests (each
    test's rows are rolled back), and a cached report's key holds the study's and run's ids
    and the newest judgment and participation ids, so another test's report could be served.
    Only the local-memory cache is cleared; a shared cache (Redis) is left alone."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    backend = caches["default"]
    if isinstance(backend, LocMemCache):
        backend.clear()
