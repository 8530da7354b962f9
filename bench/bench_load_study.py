"""A real study under load: ``python -m bench load_study [--quick]``.

50 evaluators judge a 70-pair study at the same time, each in their own
thread with their own cookie jar, against gunicorn (``eipsite.wsgi``, 3
workers, production settings with ``DEBUG=0``) on 127.0.0.1 and a throwaway
PostgreSQL database that the run creates and drops (``eip_bench_load_study_<pid>``
on the server of ``BENCH_POSTGRES_URL``, default
``postgres://postgres@127.0.0.1:5432/postgres``). No request leaves the
machine.

Every evaluator follows the real path: open the invitation link, join (a
pseudonymous account), onboard, accept the guidelines, then for each pair
GET the judging page and POST an answer. One answer in ten is deliberately
submitted twice (a double click: the same form posted again at once), which
must not create a second judgment. Timed step: one POST of an answer (its
302, not following it) and one GET of the judging page, each measured alone
on the client; median and 95th percentile over every request of the kind.
Two phases, each on its own study. ``saturated``: the 70-pair study with no
pause between pairs, so the server is saturated: the latency is mostly time
queued for a worker, about evaluators / throughput (Little's law), and the
throughput is the capacity. ``paced``: a 10-pair study where each evaluator
first reads the pair for 2-4 s (real evaluators take 10-30 s): the latency an
evaluator sees in a busy but not overloaded session.

At the end the database is checked directly: judgments = evaluators x pairs
(nothing lost), no (evaluator, pair) twice (nothing duplicated), and every
answer the server acknowledged with a 302 is stored with the choice sent.
``--quick``: 10 evaluators, 20 and 5 pairs.

The module also holds the small helpers the fault and deployment tests use to
run gunicorn (:class:`GunicornServer`), prepare a scratch site
(:func:`prepare_site`) and act as an evaluator's browser (:class:`Browser`).
"""
from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
N_EVALUATORS = 50
N_PAIRS = 70
WORKERS = 3
DUPLICATE_EVERY = 10
PACED_PAIRS = 10
PACED_THINK_S = (2.0, 4.0)
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres"
BENCH_SECRET_KEY = "bench-only-" + "k3y" * 20  # 71 characters, never used outside a throwaway run
FORM_RE = re.compile(
    r'name="csrfmiddlewaretoken" value="([^"]+)".*?name="pair" value="([0-9a-f]{16})"'
    r'.*?name="left" value="([0-9a-f]{16})"', re.S
)
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
WHO_RE = re.compile(r'<span class="who">([^<]+)</span>')
PROXY_HEADERS = {"X-Forwarded-Proto": "https"}


# --- processes ------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def production_env(database_url: str, static_root: Path, **extra: str) -> dict[str, str]:
    """Environment of a production-mode process on loopback, every production
    default kept (DEBUG off, a real secret key, HTTPS redirect, secure cookies,
    HSTS, the database cache), static files collected into ``static_root``.

    The site runs as it would behind a reverse proxy that terminates TLS
    (``SECURE_PROXY_SSL_HEADER=1``): :class:`Browser` plays the proxy by sending
    ``X-Forwarded-Proto: https``, so plain HTTP on 127.0.0.1 suffices."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(
        DJANGO_SETTINGS_MODULE="eipsite.settings",
        DATABASE_URL=database_url,
        DEBUG="0",
        SECRET_KEY=BENCH_SECRET_KEY,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_PROXY_SSL_HEADER="1",
        DB_CONN_MAX_AGE="60",
        CACHE_BACKEND="database",
        TASKS_BACKEND="immediate",
        STATIC_ROOT=str(static_root),
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def run_django(script: str, env: dict[str, str], *args: str, timeout: float = 300) -> str:
    """Run ``script`` (Python, after ``django.setup()``) in a child process; its stdout."""
    code = "import django\ndjango.setup()\n" + script
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"child process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


PREPARE = """
from django.core.management import call_command
from django.db import connection
if connection.vendor == "sqlite":  # a scratch file: no need to wait for the disk
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA synchronous=OFF")
        cursor.execute("PRAGMA journal_mode=MEMORY")
call_command("migrate", verbosity=0)
call_command("createcachetable", verbosity=0)
call_command("collectstatic", verbosity=0, interactive=False)
"""


def prepare_site(env: dict[str, str]) -> None:
    """What a deployment runs once: migrate the database of ``env["DATABASE_URL"]``,
    create the cache table, collect the static files into ``env["STATIC_ROOT"]``."""
    run_django(PREPARE, env)


def create_postgres_database(server_url: str, name: str) -> str:
    """Create database ``name`` on the server of ``server_url``; its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urllib.parse.urlsplit(server_url)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def drop_postgres_database(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class GunicornServer:
    """``gunicorn eipsite.wsgi --workers N --bind 127.0.0.1:<free port>`` as a
    child process in its own process group (so that :meth:`kill` takes the
    master and its workers down at once, like a power cut)."""

    env: dict[str, str]
    workers: int = WORKERS
    log_path: Path | None = None
    port: int = 0
    process: subprocess.Popen | None = None
    _log: object = None

    def start(self, timeout: float = 30.0) -> GunicornServer:
        self.port = free_port()
        if self.log_path is None:
            self.log_path = Path(tempfile.mkstemp(prefix="gunicorn-", suffix=".log")[1])
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - open for the server's lifetime, closed by _close_log()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "eipsite.wsgi", "--workers", str(self.workers),
             "--bind", f"127.0.0.1:{self.port}", "--timeout", "60", "--graceful-timeout", "5", "--no-control-socket"],
            cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}:\n{self.log_tail()}")
            request = urllib.request.Request(self.url("/accounts/login/"), headers=PROXY_HEADERS)
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"gunicorn did not answer within {timeout} s:\n{self.log_tail()}")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def log_tail(self, n: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-n:] if self.log_path else ""

    def kill(self) -> None:
        """SIGKILL the master and every worker (the process group)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self._close_log()

    def stop(self) -> None:
        """SIGTERM (graceful), then SIGKILL after 10 s."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


# --- an evaluator's browser -----------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class _BehindTlsProxy(http.cookiejar.DefaultCookiePolicy):
    """Send secure cookies over the loopback hop: the client side is HTTPS."""

    def return_ok_secure(self, cookie, request) -> bool:
        return True


@dataclass
class Browser:
    """One evaluator behind the TLS proxy: a cookie jar, no automatic
    redirects, timings per kind."""

    base: str
    jar: http.cookiejar.CookieJar = field(default_factory=lambda: http.cookiejar.CookieJar(_BehindTlsProxy()))
    timings: dict[str, list[float]] = field(default_factory=lambda: {"get": [], "post": []})
    username: str = ""

    def __post_init__(self) -> None:
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect)

    def request(self, path: str, data: dict | None = None, kind: str | None = None) -> tuple[int, str, str]:
        """(status, body, Location) of one request; 3xx are returned, not followed."""
        body = None if data is None else urllib.parse.urlencode(data).encode()
        request = urllib.request.Request(self.base + path, data=body, headers=PROXY_HEADERS)
        if data is not None:  # what a browser on https://<host>/ sends
            request.add_header("Referer", "https://" + self.base.split("://", 1)[1] + path)
        started = time.perf_counter()
        try:
            with self.opener.open(request, timeout=60) as response:
                status, text, location = response.status, response.read().decode(), response.headers.get("Location", "")
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode(errors="replace")
            location = error.headers.get("Location", "")
        if kind is not None:
            self.timings[kind].append(time.perf_counter() - started)
        return status, text, location

    def csrf(self, path: str) -> str:
        """The CSRF token of the form on ``path`` (and who the page says is logged in)."""
        status, text, _ = self.request(path)
        match = CSRF_RE.search(text)
        if status != 200 or match is None:
            raise RuntimeError(f"GET {path}: {status}, no form")
        who = WHO_RE.search(text)
        if who is not None:
            self.username = who.group(1)
        return match.group(1)

    def join(self, token: str, subject_id: int | None = None) -> int:
        """Join through the invitation link (agreeing to the consent text), onboard and accept the
        guidelines; the study id."""
        join = f"/join/{token}/"
        status, _, location = self.request(join, {"csrfmiddlewaretoken": self.csrf(join), "consent": "yes"})
        if status != 302:
            raise RuntimeError(f"join: {status}")
        study_id = int(re.search(r"/studies/(\d+)/", location).group(1))
        onboarding = f"/studies/{study_id}/onboarding/"
        form = {"csrfmiddlewaretoken": self.csrf(onboarding), "field_of_study": "mathematics",
                "education_level": "master_student"}
        if subject_id is not None:
            form["qualified_subjects"] = str(subject_id)
        status, _, _ = self.request(onboarding, form)
        guidelines = f"/studies/{study_id}/guidelines/"
        status, _, _ = self.request(guidelines, {"csrfmiddlewaretoken": self.csrf(guidelines)})
        if status != 302:
            raise RuntimeError(f"guidelines: {status}")
        return study_id

    def screen(self, study_id: int) -> tuple[str, str, str] | None:
        """(csrf, pair token, left question token) on the judging page, or None when done."""
        status, text, location = self.request(f"/studies/{study_id}/judge/", kind="get")
        if status == 302 and "/done/" in location:
            return None
        match = FORM_RE.search(text)
        if status != 200 or match is None:
            raise RuntimeError(f"judge page: {status} {location}")
        return match.group(1), match.group(2), match.group(3)  # the form's tokens, posted back as they are

    def answer(self, study_id: int, csrf: str, pair: str, left: str, choice: str) -> int:
        """POST one answer; the status (302 when the server took it)."""
        data = {"csrfmiddlewaretoken": csrf, "pair": pair, "left": left, "choice": choice, "client_ms": 1500}
        status, _, _ = self.request(f"/studies/{study_id}/judge/", data, kind="post")
        return status


def choice_for(evaluator: int, pair: int | str) -> str:
    """The answer an evaluator gives on a pair (its id or its form token, 16 hex
    digits): deterministic, so the database can be checked."""
    number = pair if isinstance(pair, int) else int(pair, 16)
    return ("left", "right", "left", "right", "skip")[(evaluator * 7 + number) % 5]


# --- the benchmark --------------------------------------------------------------

SETUP = """
import json, sys
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_study
catalog = make_catalog(subjects=("Mathematics", "Physics", "Law", "History"), per_subject=14)
out = {}
for label, n_pairs in zip(("saturated", "paced"), map(int, sys.argv[1:3])):
    study = make_study(catalog, n_pairs=n_pairs, seed=7, target=1000, name=f"load study ({label})")
    out[label] = {"study": study.pk, "token": invitation_create(study=study).token}
print(json.dumps(out))
"""

CHECK = """
import json, sys
from django.db.models import Count
from annotate.models import Judgment, Pair
study = int(sys.argv[1])
from annotate.studies.selectors.judging_tokens import judging_token
# Pairs as the evaluators' forms named them (their tokens), to match what the server acknowledged.
rows = [(j.participation.user.username, judging_token(participation=j.participation, value=j.pair_id), j.choice)
        for j in Judgment.objects.filter(pair__study_id=study).select_related("participation__user")]
dupes = Judgment.objects.filter(pair__study_id=study).values("participation_id", "pair_id").annotate(
    n=Count("id")).filter(n__gt=1).count()
print(json.dumps({"rows": rows, "duplicates": dupes, "pairs": Pair.objects.filter(study_id=study).count()}))
"""


@dataclass
class _Phase:
    """One run of every evaluator through one study."""

    token: str
    think_s: tuple[float, float]  # uniform pause before each answer (reading the pair)
    acknowledged: dict = field(default_factory=dict)
    errors: list = field(default_factory=list)
    timings: list = field(default_factory=list)


def _evaluate(base: str, k: int, phase: _Phase, barrier: threading.Barrier) -> None:
    browser = Browser(base)
    rng = random.Random(k)
    try:
        study_id = browser.join(phase.token)
        barrier.wait(timeout=120)
        n = 0
        while True:
            screen = browser.screen(study_id)
            if screen is None:
                break
            csrf, pair, left = screen
            if phase.think_s[1] > 0:
                time.sleep(rng.uniform(*phase.think_s))
            choice = choice_for(k, pair)
            status = browser.answer(study_id, csrf, pair, left, choice)
            if status != 302:
                raise RuntimeError(f"answer on pair {pair}: {status}")
            if n % DUPLICATE_EVERY == 0:  # a double click: the same form again
                again = browser.answer(study_id, csrf, pair, left, "skip" if choice != "skip" else "left")
                if again != 302:
                    raise RuntimeError(f"duplicate answer on pair {pair}: {again}")
            phase.acknowledged[(browser.username, pair)] = choice
            n += 1
    except BaseException as error:  # reported by run()
        phase.errors.append(f"evaluator {k}: {error!r}")
    finally:
        phase.timings.append(browser.timings)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _run_phase(server: GunicornServer, phase: _Phase, n_evaluators: int) -> float:
    barrier = threading.Barrier(n_evaluators)
    threads = [threading.Thread(target=_evaluate, args=(server.url(""), k, phase, barrier))
               for k in range(n_evaluators)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def _summary(phase: _Phase, check: dict, n_evaluators: int, wall: float) -> dict:
    stored = {(user, pair): choice for user, pair, choice in check["rows"]}
    gets = [t for timings in phase.timings for t in timings["get"]]
    posts = [t for timings in phase.timings for t in timings["post"]]
    ms = lambda values, q: round(1000 * _percentile(values, q), 1) if values else None  # noqa: E731
    return {
        "evaluators": n_evaluators,
        "pairs": check["pairs"],
        "expected": n_evaluators * check["pairs"],
        "stored": len(check["rows"]),
        "acknowledged": len(phase.acknowledged),
        "lost": sum(1 for key in phase.acknowledged if key not in stored),
        "changed": sum(1 for key, choice in phase.acknowledged.items() if stored.get(key, choice) != choice),
        "duplicates": check["duplicates"],
        "errors": phase.errors[:5],
        "wall_s": round(wall, 1),
        "requests": len(gets) + len(posts),
        "throughput_rps": round((len(gets) + len(posts)) / wall, 1),
        "get_median_ms": ms(gets, 0.5), "get_p95_ms": ms(gets, 0.95),
        "post_median_ms": ms(posts, 0.5), "post_p95_ms": ms(posts, 0.95),
    }


def _print(label: str, r: dict) -> None:
    print(f"{label}: {r['evaluators']} evaluators x {r['pairs']} pairs, {r['wall_s']} s wall, "
          f"{r['requests']} timed requests, {r['throughput_rps']} requests/s")
    print(f"  judgments stored {r['stored']} / expected {r['expected']}; lost {r['lost']}, duplicates "
          f"{r['duplicates']}, changed by a double submit {r['changed']}; errors {len(r['errors'])}")
    print(f"  judging page GET: median {r['get_median_ms']} ms, p95 {r['get_p95_ms']} ms")
    print(f"  answer POST:      median {r['post_median_ms']} ms, p95 {r['post_p95_ms']} ms")
    for error in r["errors"]:
        print(f"  error: {error}")


def run(args: argparse.Namespace) -> dict:
    n_evaluators, n_pairs, n_paced = (10, 20, 5) if args.quick else (N_EVALUATORS, N_PAIRS, PACED_PAIRS)
    server_url = os.environ.get("BENCH_POSTGRES_URL", DEFAULT_PG_URL)
    name = f"eip_bench_load_study_{os.getpid()}"
    try:
        database_url = create_postgres_database(server_url, name)
    except Exception as error:  # no server: say so instead of a traceback
        print(f"skipped: cannot create a PostgreSQL database on {server_url}: {error}")
        return {}
    server = None
    work = Path(tempfile.mkdtemp(prefix="eip-bench-load-study-"))  # static files and the server log
    results = {}
    try:
        env = production_env(database_url, work / "static")
        prepare_site(env)
        setup = json.loads(run_django(SETUP, env, str(n_pairs), str(n_paced)))
        server = GunicornServer(env, workers=WORKERS, log_path=work / "gunicorn.log").start()
        print(f"gunicorn, {WORKERS} workers, production settings, PostgreSQL, all on 127.0.0.1")
        for label, think in (("saturated", (0.0, 0.0)), ("paced", PACED_THINK_S)):
            phase = _Phase(token=setup[label]["token"], think_s=think)
            wall = _run_phase(server, phase, n_evaluators)
            check = json.loads(run_django(CHECK, env, str(setup[label]["study"])))
            results[label] = _summary(phase, check, n_evaluators, wall)
            _print(f"{label} (think {think[0]:g}-{think[1]:g} s per pair)", results[label])
    finally:
        if server is not None:
            server.stop()
        drop_postgres_database(server_url, name)
        shutil.rmtree(work, ignore_errors=True)
    print("saturated: no pause between requests, so latency is mostly queueing (about evaluators / throughput); "
          "paced: evaluators read each pair for a few seconds first (real ones take 10-30 s)")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    run(parser.parse_args())
