"""Judging latency: ``python -m bench judging [--quick]``.

For each database below, the benchmark starts a real server (gunicorn
``eipsite.wsgi``, gthread, on 127.0.0.1 on a free port) against a throwaway
database, creates an open study and 20 onboarded evaluators (sessions made
directly in the database), then lets the 20 evaluators judge at the same
time, one client thread each. The timed step is "submit a judgment and get
the next pair": the POST of an answer, its 302 and the GET of the next
judging page (urllib follows the redirect), seen by the client on loopback.
The server's own time per request comes from gunicorn's access log
(``%(D)s``).

The floor: between two answers, each evaluator thread also makes the
trivial round trip (``bench/trivial_urls.py``: a POST that redirects to a
small page with a CSRF token), signed in as the same evaluator, on the same
server, same middleware; nothing else differs. The "floor" table gives
judging / trivial, per database and load, from the client's medians and
from the server's (target: at most 2).

Two loads:

* ``paced``: each evaluator waits a random 0.5-1.5 s between answers (real
  people take tens of seconds per pair, so this is still ~20x busier than a
  real 20-person session);
* ``stress`` (full run only): no waiting; 20 closed-loop clients saturate the
  two cores, so the round trip measures queueing, not service time.

Databases:

* ``sqlite``: a fresh file with the project's settings as they are (DEBUG
  off, static files collected into the temporary folder);
* ``sqlite-wal``: the same plus ``transaction_mode="IMMEDIATE"`` and
  ``PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL`` (settings this
  benchmark suggested for SQLite; ``eipsite/settings.py`` sets both itself,
  so the two SQLite rows measure one configuration twice and their
  difference is the run-to-run spread);
* ``postgres``: a database ``bench_judging_<pid>`` created on the server at
  ``BENCH_JUDGING_POSTGRES`` (default ``postgres://postgres@127.0.0.1:5432``)
  and dropped afterwards; skipped when the server is not reachable.

Server shape: ``BENCH_JUDGING_WORKERS`` (default one per core, at least 2)
gthread workers with ``BENCH_JUDGING_THREADS`` (default 4) threads each.
Database connections as production keeps them (docs/deploy.md):
``DB_CONN_MAX_AGE=60``, each worker thread's connection reused from request
to request and health-checked before reuse (``BENCH_JUDGING_CONN_MAX_AGE=0``
opens one per request instead, as the settings did by default before).

Everything is bounded (a fixed number of answers per evaluator) and stops by
itself; the temporary folder and database are removed. Target: median
"submit + next pair" under 50 ms.

Scale: the same paced load on a 70-pair and on a 50,000-pair study (one
subject of 317 questions), PostgreSQL when reachable; the server medians of
POST + GET and their ratio (target: at most 1.5).

Adaptive: an adaptive study of 1,000 questions (one subject, 2,500
earlier votes; every POST fits the human scale to all votes and chooses the
next pair) and a uniform study of the same questions, in one database on
one server: each evaluator thread answers in both studies (as two
evaluators) and makes the trivial round trip, in turn, under the paced
load; SQLite (WAL) and PostgreSQL. Server medians, adaptive / uniform
(target: at most 1.3) and each / trivial, and the choice alone timed in
process (target: the adaptive POST well under 100 ms).

Options (``python -m bench judging --port 8765 --database bench_judging_me``):
``--port`` serves on that port instead of a free one; ``--database`` names the
scratch PostgreSQL database (created empty and dropped afterwards: never name
a database you keep).
"""
from __future__ import annotations

import http.cookiejar
import json
import os
import random
import re
import secrets
import shutil
import socket
import statistics
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
N_EVALUATORS = 20
TARGET_MS = 50.0
THINK_S = (0.5, 1.5)
TRIVIAL_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
TRIVIAL_POST = "/bench/trivial/"
FORM_RE = re.compile(
    r'name="csrfmiddlewaretoken" value="([^"]+)".*?name="pair" value="([0-9a-f]{16})"'
    r'.*?name="left" value="([0-9a-f]{16})"', re.S
)

# Production-like: DEBUG off (set through the environment), static files
# collected into the temporary folder instead of the project's STATIC_ROOT.
# Plain HTTP on loopback stands in for TLS terminated by a proxy, so the
# cookies may not be HTTPS-only here. The URL configuration is the site's plus
# the trivial floor (bench/trivial_urls.py), served by the same process.
BASE_SETTINGS = """from eipsite.settings import *  # noqa: F401,F403
STATIC_ROOT = {static_root!r}
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
ROOT_URLCONF = "bench.trivial_urls"
"""
SQLITE_WAL_SETTINGS = """
DATABASES["default"].setdefault("OPTIONS", {}).update(
    transaction_mode="IMMEDIATE",
    init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
)
"""

SETUP = r"""
import json, sys
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("collectstatic", interactive=False, verbosity=0)
call_command("createcachetable", verbosity=0)
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from tests.annotate.factories import make_catalog, make_evaluator, make_study
n_pairs, n_evaluators, per_subject = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
strategy = sys.argv[4] if len(sys.argv) > 4 else "uniform"
prior_votes = int(sys.argv[5]) if len(sys.argv) > 5 else 0
subjects = ("Mathematics", "Physics", "Law") if per_subject == 16 else ("Mathematics",)
catalog = make_catalog(subjects=subjects, per_subject=per_subject)
extra = {}
if strategy == "adaptive":
    # n_pairs = pairs per evaluator; the pool is every question; earlier votes come from one prior evaluator.
    import statistics, time
    import numpy as np
    from django.utils import timezone
    from annotate.models import Judgment, Pair, Participation
    from annotate.studies.services.adaptive import adaptive_choose
    from annotate.studies.services.studies import study_create
    study = study_create(name="bench", run=catalog.run, datasets=[catalog.dataset], n_pairs=n_pairs, seed=1,
                         strategy="adaptive", target_judgments_per_pair=1000)
    prior = make_evaluator(study, "bench-prior")
    rng = np.random.default_rng(7)
    ids = [q.pk for q in catalog.questions]
    chosen = set()
    while len(chosen) < prior_votes:
        i, j = sorted(rng.choice(len(ids), 2, replace=False).tolist())
        chosen.add((ids[i], ids[j]))
    pairs = Pair.objects.bulk_create(Pair(study=study, position=k, question_a_id=a, question_b_id=b, n_votes=1)
                                     for k, (a, b) in enumerate(sorted(chosen)))
    now = timezone.now()
    left_a = rng.random(len(pairs)) < 0.5
    Judgment.objects.bulk_create(
        Judgment(participation=prior, pair=p, choice="left",
                 left_question_id=p.question_a_id if la else p.question_b_id,
                 harder_question_id=p.question_a_id if la else p.question_b_id, shown_at=now, submitted_at=now,
                 seconds=1.0)
        for p, la in zip(pairs, left_a.tolist()))
    probe = make_evaluator(study, "bench-probe")
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        adaptive_choose(study=study, participation=probe, shown=[])
        times.append((time.perf_counter() - t0) * 1000)
    extra["choice_ms"] = statistics.median(times)
    Participation.objects.filter(pk=probe.pk).delete()
    # The uniform study of the same questions, judged in the same run by evaluators of its own.
    uniform = make_study(catalog, n_pairs=prior_votes, seed=1, target=1000, name="bench-uniform")
else:
    study = make_study(catalog, n_pairs=n_pairs, seed=1, target=1000, name="bench")
    uniform = None


def sessions_of(study, prefix):
    keys = []
    for k in range(n_evaluators):
        user = make_evaluator(study, f"{prefix}-{k}").user
        s = SessionStore()
        s[SESSION_KEY] = str(user.pk)
        s[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        s[HASH_SESSION_KEY] = user.get_session_auth_hash()
        s.save()
        keys.append(s.session_key)
    return keys


if uniform is not None:
    extra.update(uniform_study=uniform.pk, uniform_sessions=sessions_of(uniform, "bench-uniform"))
print(json.dumps({"study": study.pk, "sessions": sessions_of(study, "bench"), "cookie": settings.SESSION_COOKIE_NAME,
                  **extra}))
"""

CHECK = r"""
import json
import django
django.setup()
from django.db.models import Count
from annotate.models import Judgment
dup = Judgment.objects.values("participation_id", "pair_id").annotate(n=Count("id")).filter(n__gt=1).count()
print(json.dumps({"judgments": Judgment.objects.count(), "duplicates": dup}))
"""


@dataclass
class Phase:
    name: str
    answers: int
    think: tuple[float, float] | None
    latencies: list[float]
    failures: list[str]
    wall: float = 0.0
    #: Round trips of the other lanes interleaved with judging ("trivial", "uniform"), seconds.
    lanes: dict[str, list[float]] = field(default_factory=dict)


# --- plumbing -------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(database_url: str, folder: Path, extra_settings: str | None) -> dict[str, str]:
    env = dict(os.environ)
    text = BASE_SETTINGS.format(static_root=str(folder / "static")) + (extra_settings or "")
    (folder / "bench_settings.py").write_text(text)
    env.update(DATABASE_URL=database_url, DEBUG="0", SECRET_KEY=secrets.token_urlsafe(50),
               ALLOWED_HOSTS="127.0.0.1", SECURE_SSL_REDIRECT="0", DB_CONN_MAX_AGE=_conn_max_age(),
               PYTHONPATH=f"{folder}{os.pathsep}{ROOT}", DJANGO_SETTINGS_MODULE="bench_settings")
    return env


def _python(code: str, env: dict[str, str], *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"helper process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _wait_until_up(base: str, server: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(base + "/accounts/login/", timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    raise RuntimeError("server did not start in time")


def _server_shape() -> tuple[int, int]:
    """gunicorn workers and threads per worker (env BENCH_JUDGING_WORKERS /
    BENCH_JUDGING_THREADS; default one worker per core, at least 2, x 4 threads)."""
    workers = int(os.environ.get("BENCH_JUDGING_WORKERS", max(2, os.cpu_count() or 2)))
    return workers, int(os.environ.get("BENCH_JUDGING_THREADS", "4"))


def _conn_max_age() -> str:
    """Seconds a server thread keeps its database connection (env
    BENCH_JUDGING_CONN_MAX_AGE; default 60, docs/deploy.md's production value)."""
    return os.environ.get("BENCH_JUDGING_CONN_MAX_AGE", "60")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# --- postgres scratch database --------------------------------------------------


def _postgres_scratch(name: str | None = None) -> tuple[str, callable] | None:
    """Create an empty scratch database (``name``, default ``bench_judging_<pid>``;
    dropped afterwards, so never name a database you keep); return (url, drop)
    or None if unreachable."""
    server = os.environ.get("BENCH_JUDGING_POSTGRES", "postgres://postgres@127.0.0.1:5432").rstrip("/")
    try:
        import psycopg

        admin = psycopg.connect(f"{server}/postgres", autocommit=True, connect_timeout=3)
    except Exception:
        return None
    name = name or f"bench_judging_{os.getpid()}"
    admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    admin.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()

    return f"{server}/{name}", drop


# --- the load -------------------------------------------------------------------


def _opener(cookie_name: str, session_key: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    jar.set_cookie(http.cookiejar.Cookie(
        0, cookie_name, session_key, None, False, "127.0.0.1", False, False, "/", True, False, None, False,
        None, None, {},
    ))
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))


@dataclass
class Lane:
    """One kind of round trip an evaluator thread repeats: ``judge`` (a study's
    judging page, ``url``) or ``trivial`` (the floor, bench/trivial_urls.py)."""

    name: str
    kind: str
    url: str
    opener: urllib.request.OpenerDirector
    page: str = ""

    def body(self, k: int) -> bytes:
        if self.kind == "trivial":
            match = TRIVIAL_RE.search(self.page)
            if match is None:
                raise RuntimeError("no form on the trivial page")
            return urllib.parse.urlencode({"csrfmiddlewaretoken": match.group(1), "choice": "left"}).encode()
        match = FORM_RE.search(self.page)
        if match is None:
            raise RuntimeError("no pair on the judging page")
        token, pair_id, left_id = match.groups()
        return urllib.parse.urlencode({
            "csrfmiddlewaretoken": token, "pair": pair_id, "left": left_id,
            "choice": ("left", "right", "skip")[k % 3], "client_ms": "1000",
        }).encode()


def _evaluator(lanes: list[Lane], phases: list[Phase], barrier, seed) -> None:
    """Each answer: one round trip of every lane in turn (the first is the
    judging lane whose figures go to ``phase.latencies``)."""
    rng = random.Random(seed)
    phase = phases[0]
    try:
        for lane in lanes:
            first = lane.url + "page/" if lane.kind == "trivial" else lane.url
            lane.page = lane.opener.open(first, timeout=60).read().decode()
        for phase in phases:
            barrier.wait(timeout=120)
            for k in range(phase.answers):
                for n, lane in enumerate(lanes):
                    if phase.think:
                        time.sleep(rng.uniform(*phase.think))
                    request = urllib.request.Request(lane.url, data=lane.body(k), headers={"Referer": lane.url})
                    t0 = time.perf_counter()
                    with lane.opener.open(request, timeout=60) as response:  # POST -> 302 -> GET next page
                        lane.page = response.read().decode()
                    spent = time.perf_counter() - t0
                    (phase.latencies if n == 0 else phase.lanes.setdefault(lane.name, [])).append(spent)
    except Exception as exc:  # reported in the table
        phase.failures.append(repr(exc))
        barrier.abort()  # never leave the others waiting


def _per_subject(n_pairs: int) -> int:
    """Questions per subject: the usual three subjects of 16, or one subject
    with enough questions for ``n_pairs`` same-subject pairs."""
    if n_pairs <= 3 * 16 * 15 // 2:
        return 16
    k = 2
    while k * (k - 1) // 2 < n_pairs:
        k += 1
    return k


def _run_database(label: str, database_url: str | None, settings_text: str | None, phases: list[Phase],
                  n_pairs: int | None = None, port: int | None = None, adaptive: tuple[int, int] | None = None,
                  per_subject: int | None = None) -> dict:
    """One server against one throwaway database (a fresh SQLite file when
    ``database_url`` is None); a study of ``n_pairs`` pairs (default: as many
    as answers), served on ``port`` (default: a free one). ``adaptive`` =
    ``(questions, prior votes)``: an adaptive study of one subject of that
    many questions instead, ``n_pairs`` pairs per evaluator, with that many
    earlier votes; the setup also times the choice itself in process."""
    folder = Path(tempfile.mkdtemp(prefix="bench-judging-"))
    env = _env(database_url or f"sqlite:///{folder / 'bench.sqlite3'}", folder, settings_text)
    server = None
    try:
        n_pairs = n_pairs or sum(p.answers for p in phases)
        if adaptive is None:
            setup = _python(SETUP, env, str(n_pairs), str(N_EVALUATORS), str(per_subject or _per_subject(n_pairs)))
        else:
            setup = _python(SETUP, env, str(n_pairs), str(N_EVALUATORS), str(adaptive[0]), "adaptive",
                            str(adaptive[1]))
        port = port or _free_port()
        base = f"http://127.0.0.1:{port}"
        access_log = folder / "access.log"
        workers, threads_per_worker = _server_shape()
        with open(folder / "server.err", "w") as err:
            server = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "eipsite.wsgi:application", "--bind", f"127.0.0.1:{port}",
                 "--workers", str(workers), "--threads", str(threads_per_worker), "--worker-class", "gthread",
                 "--access-logfile", str(access_log), "--access-logformat", "%(m)s %(U)s %(s)s %(D)s",
                 "--log-level", "warning", "--no-control-socket"],
                env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
            )
        try:
            _wait_until_up(base, server)
        except RuntimeError:
            print((folder / "server.err").read_text()[-3000:])
            raise
        barrier = threading.Barrier(N_EVALUATORS)
        threads = []
        for k, key in enumerate(setup["sessions"]):
            lanes = [Lane("judging", "judge", f"{base}/studies/{setup['study']}/judge/", _opener(setup["cookie"], key))]
            if "uniform_study" in setup:
                lanes.append(Lane("uniform", "judge", f"{base}/studies/{setup['uniform_study']}/judge/",
                                  _opener(setup["cookie"], setup["uniform_sessions"][k])))
            lanes.append(Lane("trivial", "trivial", base + TRIVIAL_POST, _opener(setup["cookie"], key)))
            threads.append(threading.Thread(target=_evaluator, args=(lanes, phases, barrier, k)))
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        wall = time.perf_counter() - t0
        check = _python(CHECK, env)
        lane_of = {f"/studies/{setup['study']}/judge/": "judging", TRIVIAL_POST: "trivial",
                   TRIVIAL_POST + "page/": "trivial"}
        if "uniform_study" in setup:
            lane_of[f"/studies/{setup['uniform_study']}/judge/"] = "uniform"
        lanes_ms = {name: {"POST": [], "GET": []} for name in set(lane_of.values())}
        for line in access_log.read_text().splitlines():
            method, path, _status, micros = line.split()
            if path in lane_of and method in ("POST", "GET"):
                lanes_ms[lane_of[path]][method].append(int(micros) / 1000)
        expected = N_EVALUATORS * sum(p.answers for p in phases) * (2 if "uniform_study" in setup else 1)
        return {"label": label, "check": check, "server_ms": lanes_ms["judging"], "lanes_ms": lanes_ms, "wall": wall,
                "workers": workers, "expected": expected, "choice_ms": setup.get("choice_ms")}
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(folder, ignore_errors=True)


#: Study sizes of the scale comparison (target: the 50,000-pair figure within 1.5x of the 70-pair one).
SCALE_PAIRS = (70, 50_000)
SCALE_TARGET_RATIO = 1.5


def run(args) -> None:
    quick = bool(getattr(args, "quick", False))
    port = getattr(args, "port", None)
    database = getattr(args, "database", None)
    paced_answers, stress_answers = (8, 0) if quick else (20, 20)
    _run_latency(quick, paced_answers, stress_answers, port, database)
    _run_scale(quick, port, database)
    _run_adaptive(quick, port, database)


#: Adaptive study of the comparison: one subject of this many questions, with this many earlier votes
#: (5 comparisons per question), against a uniform study of the same questions.
ADAPTIVE_QUESTIONS = 1000
ADAPTIVE_PRIOR_VOTES = 2500
ADAPTIVE_TARGET_MS = 100.0


#: Targets of the floor: judging at most this many times the trivial round trip on the same server,
#: an adaptive study's answer at most this many times a uniform study's.
FLOOR_TARGET = 2.0
ADAPTIVE_TARGET_RATIO = 1.3


def _server_sum(ms: dict[str, list[float]]) -> float:
    """Median server POST + median server GET (ms) of one lane, from the access log."""
    return statistics.median(ms["POST"]) + statistics.median(ms["GET"])


def _run_adaptive(quick: bool, port: int | None, database: str | None) -> None:
    """An adaptive study of 1,000 questions (each POST fits the scale to every
    vote so far and chooses the next pair), a uniform study of the same
    questions and the trivial floor, interleaved by the same evaluator threads
    on one server, per database; plus the choice alone (queries + kernel),
    timed in process."""
    answers = 8 if quick else 20
    print(f"\nadaptive (paced, {N_EVALUATORS} evaluators x {answers} answers in each study, interleaved with "
          f"the trivial round trip; {ADAPTIVE_QUESTIONS:,} questions in one subject, {ADAPTIVE_PRIOR_VOTES:,} "
          f"earlier votes in the adaptive study): server medians, and the client's median round trip")
    print(f"{'database':<11}{'study':>9}{'srv POST ms':>13}{'srv GET ms':>12}{'sum ms':>9}{'client ms':>11}"
          f"{'/uniform':>10}{'/trivial':>10}{'choice ms':>11}{'stored':>8}{'fail':>6}")
    for label in ("sqlite-wal", "postgres"):
        scratch = _postgres_scratch(database) if label == "postgres" else None
        if label == "postgres" and scratch is None:
            print("postgres: skipped (no server at BENCH_JUDGING_POSTGRES / 127.0.0.1:5432)")
            continue
        phases = [Phase("paced", answers, THINK_S, [], [])]
        try:
            result = _run_database(label, scratch[0] if scratch else None,
                                   None if scratch else SQLITE_WAL_SETTINGS, phases, n_pairs=answers + 1, port=port,
                                   adaptive=(ADAPTIVE_QUESTIONS, ADAPTIVE_PRIOR_VOTES))
        finally:
            if scratch is not None:
                scratch[1]()
        failures = sum(len(p.failures) for p in phases)
        if failures:
            print(f"{label:<11} failures: {phases[0].failures[:1]}")
            continue
        lanes_ms = result["lanes_ms"]
        client = {"adaptive": phases[0].latencies, **phases[0].lanes}
        uniform, trivial = _server_sum(lanes_ms["uniform"]), _server_sum(lanes_ms["trivial"])
        for kind, lane in (("adaptive", "judging"), ("uniform", "uniform"), ("trivial", "trivial")):
            ms = lanes_ms[lane]
            total = _server_sum(ms)
            choice = f"{result['choice_ms']:.1f}" if kind == "adaptive" and result["choice_ms"] is not None else ""
            stored = result["check"]["judgments"] if kind == "adaptive" else ""
            print(f"{label:<11}{kind:>9}{statistics.median(ms['POST']):>13.1f}{statistics.median(ms['GET']):>12.1f}"
                  f"{total:>9.1f}{statistics.median(client[kind]) * 1000:>11.1f}{total / uniform:>10.2f}"
                  f"{total / trivial:>10.2f}{choice:>11}{stored:>8}{failures if kind == 'adaptive' else '':>6}")
    print(f"targets: adaptive / uniform <= {ADAPTIVE_TARGET_RATIO} and judging / trivial <= {FLOOR_TARGET} "
          f"(server sums); the adaptive POST well under {ADAPTIVE_TARGET_MS:.0f} ms; the choice alone "
          f"(kernel target < 50 ms) in 'choice ms'")


def _run_scale(quick: bool, port: int | None, database: str | None) -> None:
    """Server median of "submit + next pair" (POST + GET medians from the access
    log) at 70 and at 50,000 pairs, same load, same database kind."""
    answers = 8 if quick else 20
    scratch = _postgres_scratch(database)
    label, settings_text = ("postgres", None) if scratch is not None else ("sqlite-wal", SQLITE_WAL_SETTINGS)
    print(f"\nscale ({label}, paced, {N_EVALUATORS} evaluators x {answers} answers): server median POST + GET")
    print(f"{'pairs':>8}{'srv POST ms':>13}{'srv GET ms':>12}{'sum ms':>9}{'ratio':>8}{'stored':>8}{'fail':>6}")
    base_ms = None
    try:
        for n_pairs in SCALE_PAIRS:
            if scratch is not None and n_pairs != SCALE_PAIRS[0]:
                scratch[1]()
                scratch = _postgres_scratch(database)
            phases = [Phase("paced", answers, THINK_S, [], [])]
            result = _run_database(label, scratch[0] if scratch else None, settings_text, phases,
                                   n_pairs=n_pairs, port=port)
            post = statistics.median(result["server_ms"]["POST"])
            get = statistics.median(result["server_ms"]["GET"])
            base_ms = base_ms or post + get
            failures = sum(len(p.failures) for p in phases)
            print(f"{n_pairs:>8}{post:>13.1f}{get:>12.1f}{post + get:>9.1f}{(post + get) / base_ms:>8.2f}"
                  f"{result['check']['judgments']:>8}{failures:>6}")
    finally:
        if scratch is not None:
            scratch[1]()
    print(f"target: ratio <= {SCALE_TARGET_RATIO} (cost independent of the study size)")


def _run_latency(quick: bool, paced_answers: int, stress_answers: int, port: int | None,
                 database: str | None) -> None:
    scratch = _postgres_scratch(database)
    databases = [("sqlite", None, None), ("sqlite-wal", None, SQLITE_WAL_SETTINGS)]
    if scratch is not None:
        databases.append(("postgres", scratch[0], None))
    workers, threads_per_worker = _server_shape()
    print(f"{N_EVALUATORS} evaluators at once; gunicorn gthread, {workers} workers x {threads_per_worker} threads, "
          f"DEBUG off, DB_CONN_MAX_AGE={_conn_max_age()} (production: docs/deploy.md), loopback; "
          f"paced = {THINK_S[0]}-{THINK_S[1]} s between answers; "
          f"load average before {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'database':<11}{'load':<8}{'n':>5}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}"
          f"{'srv POST ms':>13}{'srv GET ms':>12}{'stored':>8}{'dup':>5}{'fail':>6}")
    floors = []
    try:
        for label, url, settings_text in databases:
            phases = [Phase("paced", paced_answers, THINK_S, [], [])]
            if stress_answers:
                phases.append(Phase("stress", stress_answers, None, [], []))
            result = _run_database(label, url, settings_text, phases, port=port)
            _report(result, phases)
            floors.append((result, phases))
    finally:
        if scratch is not None:
            scratch[1]()
    _report_floor(floors)
    print(f"load average after {os.getloadavg()[0]:.1f} (other work on the machine inflates every figure)")
    if scratch is None:
        print("postgres: skipped (no server at BENCH_JUDGING_POSTGRES / 127.0.0.1:5432)")


def _report_floor(floors: list[tuple[dict, list[Phase]]]) -> None:
    """Judging against the trivial round trip (bench/trivial_urls.py), which the
    same evaluator threads made between their answers on the same server."""
    print("\nfloor: judging (POST + 302 + GET of the next pair) / the trivial POST + 302 + GET, same server, "
          "interleaved; client medians per load, server medians (POST + GET) over the run")
    print(f"{'database':<11}{'load':<8}{'judge ms':>10}{'trivial ms':>12}{'ratio':>7}"
          f"{'srv judge ms':>14}{'srv trivial ms':>16}{'srv ratio':>11}")
    for result, phases in floors:
        srv_judge = _server_sum(result["lanes_ms"]["judging"])
        srv_trivial = _server_sum(result["lanes_ms"]["trivial"])
        for k, phase in enumerate(phases):
            trivial = phase.lanes.get("trivial", [])
            if not phase.latencies or not trivial:
                continue
            judge_ms, trivial_ms = statistics.median(phase.latencies) * 1000, statistics.median(trivial) * 1000
            tail = f"{srv_judge:>14.1f}{srv_trivial:>16.1f}{srv_judge / srv_trivial:>11.2f}" if k == 0 else ""
            print(f"{result['label']:<11}{phase.name:<8}{judge_ms:>10.1f}{trivial_ms:>12.1f}"
                  f"{judge_ms / trivial_ms:>7.2f}{tail}")
    print(f"target: judging / trivial <= {FLOOR_TARGET}")


def _report(result: dict, phases: list[Phase]) -> None:
    srv_post = result["server_ms"]["POST"]
    srv_get = result["server_ms"]["GET"]
    for k, phase in enumerate(phases):
        ms = [x * 1000 for x in phase.latencies]
        if not ms:
            print(f"{result['label']:<11}{phase.name:<8}  no answers; failures: {phase.failures[:1]}")
            continue
        tail = " " * 38
        if k == 0:  # access-log figures cover the whole run, printed once
            tail = (f"{statistics.median(srv_post):>13.1f}{statistics.median(srv_get):>12.1f}"
                    f"{result['check']['judgments']:>8}{result['check']['duplicates']:>5}")
        print(f"{result['label']:<11}{phase.name:<8}{len(ms):>5}{statistics.median(ms):>11.1f}"
              f"{_percentile(ms, 0.95):>9.1f}{max(ms):>9.1f}{tail}{len(phase.failures):>6}")
        if phase.failures:
            print(f"    first failure: {phase.failures[0]}")
    expected = result["expected"]
    if result["check"]["judgments"] != expected:
        print(f"    stored {result['check']['judgments']} judgments, expected {expected}")
