"""Playwright with the system Chromium (no browser download on these machines).

Browser tests need /usr/bin/chromium: in CI (``CI=true``) a missing browser
fails the tests; elsewhere they skip with the reason.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("EIP_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# pytest-django's live_server runs Django in a thread while Playwright's sync
# API runs an event loop in this one; ORM calls from the test body are then
# flagged as "async unsafe". Tests only.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"system Chromium not found at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(message + "; browser tests must run in CI", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    require_chromium()
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}
