"""Production mode: settings from the environment, ``check --deploy`` clean,
static files through whitenoise, gunicorn serving.

The settings file is executed afresh (``runpy``) under a patched environment,
so these tests never touch the settings of the running test session.
"""
from __future__ import annotations

import os
import re
import runpy
import secrets
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from bench.bench_load_study import GunicornServer, run_django

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "eipsite" / "settings.py"
ENV_NAMES = (
    "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "CACHE_BACKEND", "CSRF_TRUSTED_ORIGINS",
    "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER", "RATELIMIT_ATTEMPTS", "RATELIMIT_WINDOW_S", "STATIC_ROOT", "TASKS_BACKEND",
    "REDIS_URL", "CSP_ENABLED", "JSON_MAX_DEPTH", "MAX_ID_LIST_LENGTH", "QUESTION_TEXT_MAX_CHARS",
    "EIP_DASK_SCHEDULER", "EIP_DASK_MIN_CELLS", "EIP_DASK_TIMEOUT_S", "DB_CONN_MAX_AGE", "DB_PREPARED_STATEMENTS",
    "SITE_URL",
)


def production_key() -> str:
    return secrets.token_urlsafe(50)  # 67 characters


@pytest.fixture
def env(monkeypatch):
    """A clean environment for the settings file; returns a setter."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)

    def set_env(**values: str) -> None:
        for name, value in values.items():
            monkeypatch.setenv(name, value)

    return set_env


def load_settings() -> dict:
    return runpy.run_path(str(SETTINGS))


def production(env, **extra: str) -> dict:
    env(DEBUG="0", SECRET_KEY=production_key(), ALLOWED_HOSTS="example.org", **extra)
    return load_settings()


def child_env(**values: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ENV_NAMES and not k.startswith(("DJANGO_", "PYTEST"))}
    return {**base, "DJANGO_SETTINGS_MODULE": "eipsite.settings", "PYTHONPATH": str(ROOT), **values}


def test_check_deploy_passes_with_no_warning_in_production_mode(tmp_path):
    env = child_env(DEBUG="0", SECRET_KEY=production_key(), ALLOWED_HOSTS="example.org",
                    DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout
    assert "WARNING" not in done.stdout + done.stderr


def test_the_same_check_warns_with_the_local_defaults(tmp_path):
    # The oracle of the test above: check --deploy does flag an unsafe configuration.
    env = child_env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016", "security.W018"):
        assert warning in done.stderr + done.stdout


def test_production_mode_turns_on_https_hsts_and_secure_cookies(env):
    s = production(env)
    assert s["DEBUG"] is False
    assert s["SECURE_SSL_REDIRECT"] is True
    assert s["SESSION_COOKIE_SECURE"] is True and s["CSRF_COOKIE_SECURE"] is True
    assert s["SECURE_HSTS_SECONDS"] == 31_536_000  # 365 days x 86,400 s
    assert s["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True and s["SECURE_HSTS_PRELOAD"] is True
    assert "SECURE_PROXY_SSL_HEADER" not in s  # opt-in only
    assert s["ALLOWED_HOSTS"] == ["example.org"]
    # WhiteNoise's compressed manifest storage, each URL computed once (annotate/core/static_storage.py).
    assert s["STORAGES"]["staticfiles"]["BACKEND"] == "annotate.core.static_storage.ManifestStaticStorage"
    assert s["CACHES"]["default"]["BACKEND"] == "django.core.cache.backends.db.DatabaseCache"
    assert s["CACHES"]["default"]["LOCATION"] == "eip_cache"
    assert s["CSP_ENABLED"] is True
    assert "annotate.core.csp.ContentSecurityPolicyMiddleware" in s["MIDDLEWARE"]
    # Each worker thread keeps its database connection for a minute, checked before it is reused.
    assert (s["DATABASES"]["default"]["CONN_MAX_AGE"], s["DATABASES"]["default"]["CONN_HEALTH_CHECKS"]) == (60, True)


def test_production_uses_redis_for_the_cache_when_redis_url_is_set(env):
    s = production(env, REDIS_URL="redis://127.0.0.1:6379/0")
    assert s["CACHES"]["default"] == {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                      "LOCATION": "redis://127.0.0.1:6379/0", "KEY_PREFIX": "eip"}


def test_the_limits_come_from_the_environment(env):
    env(JSON_MAX_DEPTH="20", MAX_ID_LIST_LENGTH="500", QUESTION_TEXT_MAX_CHARS="5000", CSP_ENABLED="1")
    s = load_settings()
    assert (s["JSON_MAX_DEPTH"], s["MAX_ID_LIST_LENGTH"], s["QUESTION_TEXT_MAX_CHARS"]) == (20, 500, 5000)
    assert s["CSP_ENABLED"] is True


def test_production_knobs_come_from_the_environment(env):
    s = production(env, SECURE_HSTS_SECONDS="3600", SECURE_PROXY_SSL_HEADER="1",
                   CSRF_TRUSTED_ORIGINS="https://example.org, https://www.example.org", CACHE_BACKEND="locmem",
                   DB_CONN_MAX_AGE="0")
    assert s["DATABASES"]["default"]["CONN_MAX_AGE"] == 0
    assert s["SECURE_HSTS_SECONDS"] == 3600
    assert s["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert s["CSRF_TRUSTED_ORIGINS"] == ["https://example.org", "https://www.example.org"]
    assert s["CACHES"]["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_the_public_address_comes_from_the_environment_without_its_trailing_slash(env):
    assert load_settings()["SITE_URL"] == "http://127.0.0.1:8000"
    env(SITE_URL=" https://study.example.org/ ")
    assert load_settings()["SITE_URL"] == "https://study.example.org"
    env(SITE_URL="http://lab.example:8080/eip/")  # a port and a path prefix
    assert load_settings()["SITE_URL"] == "http://lab.example:8080/eip"


def test_eip_on_dask_is_off_by_default_and_configured_from_the_environment(env):
    s = load_settings()
    assert (s["EIP_DASK_SCHEDULER"], s["EIP_DASK_MIN_CELLS"], s["EIP_DASK_TIMEOUT_S"]) == ("", 100_000_000, 10)
    env(EIP_DASK_SCHEDULER=" tcp://dask-scheduler:8786 ", EIP_DASK_MIN_CELLS="5000000", EIP_DASK_TIMEOUT_S="3")
    s = load_settings()
    assert (s["EIP_DASK_SCHEDULER"], s["EIP_DASK_MIN_CELLS"], s["EIP_DASK_TIMEOUT_S"]) == (
        "tcp://dask-scheduler:8786", 5_000_000, 3)


def test_the_local_defaults_stay_local_and_safe(env):
    s = load_settings()
    assert s["DEBUG"] is True
    assert "SECURE_SSL_REDIRECT" not in s and "SECURE_HSTS_SECONDS" not in s  # plain http on a laptop
    assert s["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost", "testserver"]
    assert s["DATABASES"]["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert s["DATABASES"]["default"]["CONN_MAX_AGE"] == 0  # runserver's thread per request would not reuse it
    assert s["CACHES"]["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"
    assert s["STORAGES"]["staticfiles"]["BACKEND"] == "django.contrib.staticfiles.storage.StaticFilesStorage"
    assert (s["RATELIMIT_ATTEMPTS"], s["RATELIMIT_WINDOW_S"]) == (10, 60)
    assert "annotate.core.ratelimit.RateLimitMiddleware" in s["MIDDLEWARE"]
    assert (s["JSON_MAX_DEPTH"], s["MAX_ID_LIST_LENGTH"], s["QUESTION_TEXT_MAX_CHARS"]) == (100, 10_000, 100_000)
    assert s["CSP_ENABLED"] is False


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"DEBUG": "0", "ALLOWED_HOSTS": "example.org"}, "SECRET_KEY is the local default"),
        ({"DEBUG": "0", "ALLOWED_HOSTS": "example.org", "SECRET_KEY": "short-but-not-default"}, "SECRET_KEY is weak"),
        ({"DEBUG": "0", "ALLOWED_HOSTS": "example.org", "SECRET_KEY": "a" * 60}, "SECRET_KEY is weak"),
        ({"DEBUG": "0", "SECRET_KEY": "x" + secrets.token_urlsafe(50)}, "set ALLOWED_HOSTS"),
        ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
        ({"CACHE_BACKEND": "memcached"}, "CACHE_BACKEND='memcached'; use one of ['database', 'locmem', 'redis']"),
        ({"CACHE_BACKEND": "redis"}, "CACHE_BACKEND=redis needs REDIS_URL"),
        ({"REDIS_URL": "127.0.0.1:6379"}, "REDIS_URL='127.0.0.1:6379' must start with redis://"),
        ({"JSON_MAX_DEPTH": "0"}, "JSON_MAX_DEPTH=0 must be >= 1"),
        ({"JSON_MAX_DEPTH": "5000"}, "JSON_MAX_DEPTH=5000 must be <= 500"),
        ({"MAX_ID_LIST_LENGTH": "-1"}, "MAX_ID_LIST_LENGTH=-1 must be >= 1"),
        ({"CSRF_TRUSTED_ORIGINS": "example.org"}, "CSRF_TRUSTED_ORIGINS entry 'example.org' must start with https://"),
        ({"RATELIMIT_ATTEMPTS": "0"}, "RATELIMIT_ATTEMPTS=0 and RATELIMIT_WINDOW_S=60 must be >= 1"),
        ({"EIP_DASK_SCHEDULER": "dask-host:8786"}, "EIP_DASK_SCHEDULER='dask-host:8786' is not a Dask scheduler"),
        ({"EIP_DASK_TIMEOUT_S": "0"}, "EIP_DASK_MIN_CELLS must be >= 0 and EIP_DASK_TIMEOUT_S >= 1"),
        *[({"SITE_URL": bad}, f"SITE_URL={bad!r} is not the site's public address; use e.g. "
                              "https://study.example.org (http:// or https://, a host, no query)")
          for bad in ("study.example.org", "ftp://study.example.org", "https://", "http://host:port",
                      "https://study.example.org/?next=1", "https://study example.org", "http://[::1",
                      "http://user:pw@study.example.org", "http://x.org;y", "https://study.example.org/a\x7fb",
                      "https://study.example.org/e\u200bip", "https://study.example.org/\u202eip",
                      'https://study.example.org/"<b>', "https://st\u00fcdy.example.org")],
        ({"DEBUG": "0", "ALLOWED_HOSTS": "e.org", "SECRET_KEY": "k" + secrets.token_urlsafe(50),
          "SECURE_HSTS_SECONDS": "soon"}, "SECURE_HSTS_SECONDS='soon' is not an integer"),
    ],
)
def test_it_refuses_unsafe_or_malformed_settings(env, values, message):
    env(**values)
    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        load_settings()


@pytest.mark.slow
def test_gunicorn_serves_hashed_static_files_and_sends_http_to_https(tmp_path):
    """The documented command, production settings, whitenoise, behind a TLS proxy."""
    static_root = tmp_path / "static"
    env = child_env(DEBUG="0", SECRET_KEY=production_key(), ALLOWED_HOSTS="127.0.0.1",
                    DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", STATIC_ROOT=str(static_root),
                    SECURE_PROXY_SSL_HEADER="1")
    hashed = run_django(
        "from django.core.management import call_command\n"
        "call_command('collectstatic', interactive=False, verbosity=0)\n"
        "from django.templatetags.static import static\n"
        "print(static('annotate/site.css'))\n",
        env,
    ).strip()
    assert hashed.startswith("/static/annotate/site.") and hashed.endswith(".css")
    assert hashed != "/static/annotate/site.css"
    assert (static_root / "staticfiles.json").is_file()
    server = GunicornServer(env, workers=2, log_path=tmp_path / "gunicorn.log").start()
    try:
        over_tls = {"X-Forwarded-Proto": "https"}
        with urllib.request.urlopen(urllib.request.Request(server.url(hashed), headers=over_tls)) as response:
            body = response.read()
            assert response.status == 200
            assert "immutable" in response.headers["Cache-Control"]  # whitenoise: hashed names cache forever
            assert response.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
        assert body == (ROOT / "annotate" / "static" / "annotate" / "site.css").read_bytes()
        with urllib.request.urlopen(urllib.request.Request(server.url("/accounts/login/"), headers=over_tls)) as page:
            assert hashed in page.read().decode()  # templates link the hashed file
            assert "Secure" in page.headers["Set-Cookie"]  # the CSRF cookie
            assert page.headers["Content-Security-Policy"].startswith("default-src 'self'; script-src 'self'")
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as plain:
            opener.open(server.url("/accounts/login/"))
        assert plain.value.code == 301
        assert plain.value.headers["Location"] == f"https://127.0.0.1:{server.port}/accounts/login/"
    finally:
        server.stop()
        shutil.rmtree(static_root, ignore_errors=True)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_postgresql_may_prepare_statements_unless_the_environment_says_no(env):
    env(DATABASE_URL="postgres://eip@127.0.0.1:5432/eip")
    assert load_settings()["DATABASES"]["default"]["OPTIONS"]["prepare_threshold"] == 5
    env(DB_PREPARED_STATEMENTS="0")
    assert "prepare_threshold" not in load_settings()["DATABASES"]["default"].get("OPTIONS", {})
    env(DATABASE_URL="sqlite:///x.sqlite3", DB_PREPARED_STATEMENTS="1")
    assert "prepare_threshold" not in load_settings()["DATABASES"]["default"]["OPTIONS"]
