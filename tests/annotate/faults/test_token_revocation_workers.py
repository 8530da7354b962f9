"""A revoked API token fails at once in every worker of a multi-process
server: gunicorn with three workers (production settings) on the PostgreSQL
test database; the key works on many requests (spread over the workers),
is revoked, and every following request is refused (401, then 429 once the
address has used up its failed-token attempts).

PostgreSQL only: the server processes must reach the test database.
"""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from django.core.management import call_command
from django.db import connection

from annotate.api.services import api_token_create, api_token_revoke
from bench.bench_load_study import PROXY_HEADERS, GunicornServer, prepare_site, production_env
from tests.annotate.factories import make_user

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
N_REQUESTS = 24


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL so that gunicorn can reach the test database "
                    f"(this run uses {connection.vendor})")


def _test_database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _status(url: str, key: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {key}", **PROXY_HEADERS})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_a_revoked_token_fails_at_once_in_every_worker(tmp_path):
    token, key = api_token_create(user=make_user("ops", staff=True))
    call_command("createcachetable", verbosity=0)
    env = production_env(_test_database_url(), tmp_path / "static")
    prepare_site(env)
    server = GunicornServer(env, workers=3, log_path=tmp_path / "gunicorn.log").start()
    try:
        url = server.url("/api/studies/")
        assert [_status(url, key) for _ in range(N_REQUESTS)] == [200] * N_REQUESTS
        api_token_revoke(token=token)
        after = [_status(url, key) for _ in range(N_REQUESTS)]
        assert after[0] == 401
        assert set(after) <= {401, 429}  # 429 once the address used up its failed-token attempts
    finally:
        server.stop()
