"""Settings for the EIP human-alignment site.

Everything that differs between a laptop and a server is read from the
environment by the small typed readers below; a bad value raises
``ImproperlyConfigured`` naming the variable.

Environment
-----------
SECRET_KEY      required when DEBUG is off: 50+ characters, 5+ distinct ones
                (the local default is refused then)
DEBUG           "1"/"true"/"yes"/"on" or "0"/"false"/"no"/"off"; default on
ALLOWED_HOSTS   comma-separated; default "127.0.0.1,localhost,testserver";
                required when DEBUG is off
SITE_URL        the site's public address, for links made outside a request (the
                invitation and log-in links the commands print), e.g.
                https://study.example.org; default http://127.0.0.1:8000
DATABASE_URL    e.g. postgres://user@127.0.0.1:5432/eip; default SQLite file db.sqlite3
EIP_STORE_URL   where the response-set matrices live when machines share them
                (fsspec URL: file:///mnt/eip-store, s3://bucket/store); default
                the folder EIP_STORE_DIR
DB_CONN_MAX_AGE seconds a database connection is kept between requests (checked
                before reuse); default 60 when DEBUG is off, 0 when it is on
DB_PREPARED_STATEMENTS
                PostgreSQL: let psycopg prepare the judging path's compiled
                statements (annotate/core/prepared.py); default on; off for a
                connection pooler that cannot keep prepared statements
STATIC_ROOT     where ``collectstatic`` writes; default ./staticfiles
TASKS_BACKEND   "database" (default; run ``manage.py run_worker``) or "immediate"
CACHE_BACKEND   "locmem", "redis" (needs REDIS_URL) or "database" (table
                ``eip_cache``, created by ``manage.py createcachetable``);
                default locmem when DEBUG is on; when it is off, redis if
                REDIS_URL is set, else database, so that several gunicorn
                workers share the rate-limit counters (Redis counts atomically)
REDIS_URL       e.g. redis://127.0.0.1:6379/0; default none
RATELIMIT_ATTEMPTS, RATELIMIT_WINDOW_S
                failed logins / invitation look-ups / API tokens allowed per
                client address (and per username) in a window; default 10 per 60 s
JSON_MAX_DEPTH  deepest nesting of JSON read from outside (API bodies, JSON
                Lines, options_json, harness logs); default 100
MAX_ID_LIST_LENGTH
                most ids in one list parameter (API model_ids, dataset_ids);
                default 10000
QUESTION_TEXT_MAX_CHARS
                longest question text, options (together) and reference answer
                an upload may hold; default 100000
CSP_ENABLED     send the Content-Security-Policy header; default on when DEBUG
                is off, off when it is on
TRUST_X_FORWARDED_FOR
                take the client address from the last X-Forwarded-For entry
                (only behind a reverse proxy that sets it); default off
EIP_SHARED_DATA folder with the shared real data (tests and benchmarks only)
EIP_UPLOAD_MAX_BYTES
                bytes of one upload's files (all parts together); default
                268435456 (256 MiB); keep the proxy's client_max_body_size equal
EIP_UPLOAD_MAX_CELLS
                model-question cells (questions x models) of one upload;
                default 5000000 (a load takes ~270 bytes of memory per cell)
EIP_UPLOAD_MAX_UNPACKED_BYTES, EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES
                decompressed bytes of one archive (.zip or .eval) and of all
                archives of one upload; default 1 GiB and 2 GiB
EIP_UPLOAD_MAX_MEMBER_BYTES
                decompressed bytes of one .eval member (read into memory);
                default 64 MiB
FILE_UPLOAD_TEMP_DIR
                where Django keeps uploaded files while a request is read;
                default the system's temporary folder
EIP_DASK_SCHEDULER
                run EIP on a Dask ``distributed`` cluster: "" (off, default),
                "local" (a LocalCluster started for each run) or a scheduler
                address such as tcp://dask-scheduler:8786 (docs/deploy.md)
EIP_DASK_MIN_CELLS
                use Dask only for matrices of at least this many cells
                (questions x models); default 100000000
EIP_DASK_TIMEOUT_S
                seconds to wait for the Dask scheduler to answer; default 10

Production only (DEBUG off)
---------------------------
SECURE_SSL_REDIRECT             default on
SECURE_HSTS_SECONDS             default 31536000 (one year)
SECURE_HSTS_INCLUDE_SUBDOMAINS  default on
SECURE_HSTS_PRELOAD             default on
SECURE_PROXY_SSL_HEADER         opt-in: trust "X-Forwarded-Proto: https" from a
                                reverse proxy that terminates TLS; default off
CSRF_TRUSTED_ORIGINS            comma-separated "https://host" origins; default none
LOG_LEVEL                       level of the stderr log; default WARNING
Session and CSRF cookies are always secure (HTTPS only) in production.
See docs/deploy.md.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
DEFAULT_SECRET_KEY = "insecure-local-development-key-do-not-use-in-production"


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off"
    )


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


#: A host of the public address: a DNS name (punycode for non-ASCII names) or an IP address.
_SITE_HOST = re.compile(r"[A-Za-z0-9.-]+|[0-9A-Fa-f:.]+")
#: Printable ASCII characters refused anywhere in it (a query, a fragment, a path escape, markup, a separator).
_SITE_URL_REFUSED = frozenset('?#\\"<>`{}|^;')


def env_site_url(name: str, default: str) -> str:
    """An absolute http(s) address (a host, an optional port and path prefix, no query, no credentials, printable
    ASCII only: percent-encode a path, punycode a name), without its trailing slash."""
    raw = os.environ.get(name, default)
    value = raw.strip().rstrip("/")
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0  # a port that is not a number raises here
    except ValueError:  # that, or a broken [IPv6] host
        parts, port_ok = None, False
    if (parts is None or not port_ok or parts.scheme not in ("http", "https") or not parts.hostname
            or "@" in parts.netloc  # credentials would be printed in every link
            or not _SITE_HOST.fullmatch(parts.hostname)
            or any(not 0x21 <= ord(ch) <= 0x7E or ch in _SITE_URL_REFUSED for ch in value)):
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not the site's public address; use e.g. https://study.example.org "
            "(http:// or https://, a host, no query)"
        )
    return value


def env_origins(name: str) -> list[str]:
    origins = env_list(name, [])
    for origin in origins:
        if not origin.startswith(("https://", "http://")):
            raise ImproperlyConfigured(f"{name} entry {origin!r} must start with https:// (or http://)")
    return origins


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY", DEFAULT_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured(
        "DEBUG is off but SECRET_KEY is the local default; set SECRET_KEY to a long random value"
    )
if not DEBUG and (len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5):
    raise ImproperlyConfigured(
        "DEBUG is off but SECRET_KEY is weak; use 50+ random characters, e.g. "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
if not DEBUG and not os.environ.get("ALLOWED_HOSTS", "").strip():
    raise ImproperlyConfigured("DEBUG is off; set ALLOWED_HOSTS to the host name(s) the site is served as")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
# Where people reach the site: the base of every absolute link made outside a request (the commands' printed
# invitation and log-in links, the default of their --base-url). Within a request, links come from the request.
SITE_URL = env_site_url("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_tasks",
    "django_tasks_db",
    "ninja",  # templates and static files of the API docs page
    "annotate",
]

MIDDLEWARE = [
    # Outermost: styled 400/403/404/500 pages with DEBUG on too (with DEBUG off the handlers in urls.py).
    "annotate.core.views.errors.ErrorPageMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "annotate.core.csp.ContentSecurityPolicyMiddleware",
    # WhiteNoise serves collected static files in production; in development
    # runserver's staticfiles app serves them (and there is no STATIC_ROOT).
    *([] if DEBUG else ["whitenoise.middleware.WhiteNoiseMiddleware"]),
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "annotate.core.ratelimit.RateLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# A message for the next page ("This study has judgments, ...") is kept in the session, which every signed-in
# client already sends back, not in a cookie of its own that a client may drop between the redirect and the page.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

ROOT_URLCONF = "eipsite.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Overrides of third-party templates (the admin's base_site.html), found before the apps' own.
        "DIRS": [BASE_DIR / "annotate" / "template_overrides"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "eipsite.wsgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        # Production keeps each worker thread's connection (a new PostgreSQL connection costs a process on the
        # server and a round trip more than the queries of a trivial page); a dead one is replaced, not reused.
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0 if DEBUG else 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool("DB_PREPARED_STATEMENTS", True):
    # Let psycopg prepare the statements that ask for it: the judging path's compiled queries
    # (annotate/core/prepared.py), then planned once per connection. Django's own queries are bound on the client
    # and never prepared. A pooler in transaction mode needs to support prepared statements (PgBouncer 1.21+,
    # max_prepared_statements), or DB_PREPARED_STATEMENTS=0.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 5)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Wait for a lock instead of failing at once when two requests write
    # together; take the write lock at BEGIN (no failed lock upgrades), and use
    # WAL so readers never block the writer (judging latency: docs/measurements.md).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "annotate.core.static_storage.ManifestStaticStorage"
        )
    },
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# A CSRF failure (an expired form) says so and sends the evaluator back to log in.
CSRF_FAILURE_VIEW = "annotate.studies.views.judging.csrf_failure"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotate:home"
LOGOUT_REDIRECT_URL = "login"

# Uploads of response sets can be large; keep big files on disk, not in memory.
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_TEMP_DIR = os.environ.get("FILE_UPLOAD_TEMP_DIR") or None
# Upload limits (annotate/catalog/services/uploads.py), checked while the bytes stream in
# or unpack; docs/deploy.md's proxy client_max_body_size matches EIP_UPLOAD_MAX_BYTES.
EIP_UPLOAD_MAX_BYTES = env_int("EIP_UPLOAD_MAX_BYTES", 256 * 1024**2)
EIP_UPLOAD_MAX_CELLS = env_int("EIP_UPLOAD_MAX_CELLS", 5_000_000)
EIP_UPLOAD_MAX_UNPACKED_BYTES = env_int("EIP_UPLOAD_MAX_UNPACKED_BYTES", 1024**3)
EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES = env_int("EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES", 2 * 1024**3)
EIP_UPLOAD_MAX_MEMBER_BYTES = env_int("EIP_UPLOAD_MAX_MEMBER_BYTES", 64 * 1024**2)

# Long scoring and analysis runs go through django-tasks (the backport of
# Django 6's tasks framework) with its database backend; `manage.py db_worker`
# runs them. TASKS_BACKEND=immediate runs them inline (tests, one-off scripts).
_TASK_BACKENDS = {
    "database": "django_tasks_db.DatabaseBackend",
    "immediate": "django_tasks.backends.immediate.ImmediateBackend",
}
_task_backend = env_str("TASKS_BACKEND", "database")
if _task_backend not in _TASK_BACKENDS:
    raise ImproperlyConfigured(f"TASKS_BACKEND={_task_backend!r}; use one of {sorted(_TASK_BACKENDS)}")
TASKS = {"default": {"BACKEND": _TASK_BACKENDS[_task_backend]}}

# Rate-limit counters (annotate/core/ratelimit.py) live in the cache. Each gunicorn
# worker has its own LocMemCache, so production defaults to the database cache
# (one table shared by every worker; `manage.py createcachetable`).
# Redis (REDIS_URL) is the production choice: its INCR is atomic, so a burst of
# failures from many workers is counted exactly.
REDIS_URL = env_str("REDIS_URL", "").strip()
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured(f"REDIS_URL={REDIS_URL!r} must start with redis://, rediss:// or unix://")
_CACHE_BACKENDS = {
    "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "eip"},
    "database": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "eip_cache"},
    "redis": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
              "KEY_PREFIX": "eip"},
}
_cache_backend = env_str("CACHE_BACKEND", "locmem" if DEBUG else ("redis" if REDIS_URL else "database"))
if _cache_backend not in _CACHE_BACKENDS:
    raise ImproperlyConfigured(f"CACHE_BACKEND={_cache_backend!r}; use one of {sorted(_CACHE_BACKENDS)}")
if _cache_backend == "redis" and not REDIS_URL:
    raise ImproperlyConfigured("CACHE_BACKEND=redis needs REDIS_URL, e.g. redis://127.0.0.1:6379/0")
CACHES = {"default": _CACHE_BACKENDS[_cache_backend]}

RATELIMIT_ATTEMPTS = env_int("RATELIMIT_ATTEMPTS", 10)
RATELIMIT_WINDOW_S = env_int("RATELIMIT_WINDOW_S", 60)
if RATELIMIT_ATTEMPTS < 1 or RATELIMIT_WINDOW_S < 1:
    raise ImproperlyConfigured(
        f"RATELIMIT_ATTEMPTS={RATELIMIT_ATTEMPTS} and RATELIMIT_WINDOW_S={RATELIMIT_WINDOW_S} must be >= 1"
    )
TRUST_X_FORWARDED_FOR = env_bool("TRUST_X_FORWARDED_FOR", False)

# Bounds on what a request or an upload may hold: nesting of JSON
# (annotate/core/jsonsafe.py), ids in one list parameter (annotate/catalog/selectors/matrix.py
# check_ids), characters of a question's text (annotate/catalog/services/loading.py).
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 100)
MAX_ID_LIST_LENGTH = env_int("MAX_ID_LIST_LENGTH", 10_000)
QUESTION_TEXT_MAX_CHARS = env_int("QUESTION_TEXT_MAX_CHARS", 100_000)
for _name in ("JSON_MAX_DEPTH", "MAX_ID_LIST_LENGTH", "QUESTION_TEXT_MAX_CHARS"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name}={globals()[_name]} must be >= 1")
if JSON_MAX_DEPTH > 500:  # Python's json recursion stops near 1000 levels
    raise ImproperlyConfigured(f"JSON_MAX_DEPTH={JSON_MAX_DEPTH} must be <= 500")

# Content-Security-Policy (annotate/core/csp.py): scripts, styles, fonts and images
# from this site only; no inline script or style attribute is needed.
CSP_ENABLED = env_bool("CSP_ENABLED", not DEBUG)
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)

# A 403 is logged as one warning line, without the PermissionDenied traceback.
LOGGING: dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"forbidden_one_line": {"()": "annotate.core.logfilters.ForbiddenWithoutTraceback"}},
    "loggers": {"django.request": {"filters": ["forbidden_one_line"]}},
}

# Production mode: HTTPS only, secure cookies, HSTS. `manage.py check --deploy`
# passes with no warning under these defaults (tests/annotate/test_deploy_settings.py).
CSRF_TRUSTED_ORIGINS = env_origins("CSRF_TRUSTED_ORIGINS")
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    if SECURE_HSTS_SECONDS < 0:
        raise ImproperlyConfigured(f"SECURE_HSTS_SECONDS={SECURE_HSTS_SECONDS} must be >= 0")
    if env_bool("SECURE_PROXY_SSL_HEADER", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    # Errors go to stderr (gunicorn and db_worker hand it to the journal), not
    # to ADMINS by mail. With DEBUG on, Django's default handlers are kept.
    LOGGING["handlers"] = {"console": {"class": "logging.StreamHandler"}}
    LOGGING["root"] = {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")}

EIP_SHARED_DATA = env_str("EIP_SHARED_DATA", str(BASE_DIR.parent / "shared" / "data"))

# EIP on a Dask cluster (annotate.runs.services.scoring, scoring.eip_dask). The
# scheduler's form is checked here with the same rule as the service
# (scoring.eip_dask.check_scheduler) so that a typo stops the site at start.
EIP_DASK_SCHEDULER = env_str("EIP_DASK_SCHEDULER", "").strip()
EIP_DASK_MIN_CELLS = env_int("EIP_DASK_MIN_CELLS", 100_000_000)
EIP_DASK_TIMEOUT_S = env_int("EIP_DASK_TIMEOUT_S", 10)
if EIP_DASK_SCHEDULER:
    from scoring.eip_dask import check_scheduler

    try:
        check_scheduler(EIP_DASK_SCHEDULER)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from None
if EIP_DASK_MIN_CELLS < 0 or EIP_DASK_TIMEOUT_S < 1:
    raise ImproperlyConfigured("EIP_DASK_MIN_CELLS must be >= 0 and EIP_DASK_TIMEOUT_S >= 1")

# Response-set matrices (annotate/catalog/matrix_store.py): one Zarr v3 store per
# response set under this folder; the database keeps questions, models and which
# row/column of the matrix each one is. Back it up with the database.
EIP_STORE_DIR = Path(env_str("EIP_STORE_DIR", str(BASE_DIR / "response_store")))
# Where the stores live when several machines share them: a URL read and
# written through fsspec (file:///mnt/shared/store, s3://bucket/store with s3fs
# and its credentials in the environment). Empty: the local folder above, which
# also keeps the parse scratch files (EIP_STORE_DIR/scratch) in every case.
EIP_STORE_URL = env_str("EIP_STORE_URL", "").strip()
if EIP_STORE_URL and ("://" not in EIP_STORE_URL or EIP_STORE_URL.split("://", 1)[1].strip("/") == ""):
    raise ImproperlyConfigured(
        f"EIP_STORE_URL={EIP_STORE_URL!r} is not a store URL; use e.g. file:///srv/eip/store or "
        "s3://bucket/store (empty: the folder EIP_STORE_DIR)"
    )
