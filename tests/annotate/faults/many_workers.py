"""Several ``manage.py run_worker`` processes on one queue: the set-up shared by
``test_many_workers`` (each job runs once) and ``python -m bench workers``
(how the time to drain the queue falls with more workers).

Call after ``django.setup()`` on a migrated PostgreSQL database: the jobs are
queued in the database task backend and real worker processes are started
against the same database (its URL is read from the open connection). A
round (:func:`run_round`) times the workers' start-up (until each has logged
that it is warm) and the queue's drain (from releasing the held jobs until
the last finished) apart.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import override_settings
from django.utils import timezone

ROOT = Path(__file__).resolve().parents[3]
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
#: The round of jobs: scoring runs, upload loads, analysis runs (40 in all).
N_SCORING, N_UPLOADS, N_ANALYSES = 16, 12, 12
N_JOBS = N_SCORING + N_UPLOADS + N_ANALYSES
#: The words of the line a worker logs once warm (``run_worker.READY``), before its first claim.
READY_WORDS = "ready: task modules and their libraries imported"


def database_url() -> str:
    """The URL of the database the open connection uses (the workers connect to it)."""
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def wide_csv(n_questions: int, n_models: int, seed: int) -> bytes:
    """A seeded wide CSV of 0/1 cells, models of rising skill."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.2, 0.8, n_models)
    cells = (rng.random((n_questions, n_models)) < skill).astype(int)
    lines = ["question_id," + ",".join(f"m{j}" for j in range(n_models))]
    lines += [f"q{seed}-{i}," + ",".join(map(str, row)) for i, row in enumerate(cells.tolist())]
    return ("\n".join(lines) + "\n").encode()


def response_set(folder: Path, name: str, seed: int):
    """A loaded response set of 1,500 questions x 12 models named ``name``."""
    from annotate.catalog.loaders.tabular_files import parse_files
    from annotate.catalog.services.loading import response_set_load

    path = folder / f"{name}.csv"
    path.write_bytes(wide_csv(1500, 12, seed))
    return response_set_load(parsed=parse_files(responses=path, file_format="wide", dataset=name), name=name)


def queue_jobs(folder: Path, *, n_scoring: int, n_uploads: int, n_analyses: int, tag: str, seed: int,
               methods: tuple[str, ...] = ("eip", "simple_rank", "accuracy", "irt_1pl")) -> dict[str, list[int]]:
    """Queue the jobs (database task backend: nothing runs here); returns their ids by kind."""
    from annotate.analyses.services.runs import analysis_run_create, analysis_run_enqueue
    from annotate.catalog.services.upload_jobs import upload_job_submit
    from annotate.catalog.services.upload_store import upload_store
    from annotate.catalog.services.uploads import UploadOptions
    from annotate.runs.services.scoring import scoring_run_create, scoring_run_enqueue

    rs = response_set(folder, f"base-{tag}", seed=seed)
    ids: dict[str, list[int]] = {"scoring": [], "upload": [], "analysis": []}
    with override_settings(TASKS=DATABASE):
        for k in range(n_scoring):
            run = scoring_run_create(response_set=rs, params={"methods": list(methods), "alpha": 0.80 + k / 1000})
            scoring_run_enqueue(run=run)
            ids["scoring"].append(run.pk)
        for k in range(n_uploads):
            upload = upload_store(
                files={"responses": SimpleUploadedFile(f"up-{tag}-{k}.csv", wide_csv(400, 8, seed=1000 * seed + k))},
                options=UploadOptions(file_format="wide", dataset=f"U-{tag}-{k}", name=f"up-{tag}-{k}"))
            ids["upload"].append(upload_job_submit(upload=upload).pk)
        for k in range(n_analyses):
            run = analysis_run_create(kind="rank_changes", response_set=rs, params={"alpha": 0.80 + k / 1000})
            analysis_run_enqueue(run=run)
            ids["analysis"].append(run.pk)
    return ids


class WorkerProcess:
    """One ``run_worker`` process, its output read as it comes (standard error merged into output).

    ``ready_s`` is the time from its start until it logged that it is warm
    (:data:`annotate.management.commands.run_worker.READY`), None before.
    """

    def __init__(self, process: subprocess.Popen, started: float) -> None:
        self.process, self.started, self.ready_s = process, started, None
        self.lines: list[str] = []
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for raw in self.process.stdout:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            if READY_WORDS in line and not self.ready.is_set():
                self.ready_s = time.perf_counter() - self.started
                self.ready.set()

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        """Everything the worker wrote so far."""
        return "".join(self.lines)

    def wait(self, timeout: float) -> int:
        """Its exit code, after waiting up to ``timeout`` seconds (then it is killed with its process group)."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._reader.join(timeout=10)
        return self.process.returncode


def start_workers(n: int, *, batch: bool = True) -> list[WorkerProcess]:
    """``n`` ``run_worker`` processes (``--batch``: each exits when the queue is empty).

    They keep their database connection between jobs and polls
    (``DB_CONN_MAX_AGE=60``, as docs/deploy.md sets it in production)
    instead of opening one for every poll and every job.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DJANGO_SETTINGS_MODULE="eipsite.settings", PYTHONPATH=str(ROOT), DATABASE_URL=database_url(),
               TASKS_BACKEND="database", DEBUG="1", DB_CONN_MAX_AGE="60")
    command = [sys.executable, "manage.py", "run_worker", "--interval", "0.1", "--no-startup-delay", "--no-reload"]
    workers = []
    for k in range(n):
        started = time.perf_counter()
        process = subprocess.Popen([*command, *(["--batch"] if batch else []), "--worker-id", f"w{k}"], cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        workers.append(WorkerProcess(process, started))
    return workers


def stop_workers(workers: list[WorkerProcess], *, graceful: bool = False) -> None:
    """Stop the workers still running, each with its process group: SIGKILL, or with ``graceful``
    SIGTERM (a worker finishes its task and exits with code 0; killed after 60 s)."""
    for worker in workers:
        if worker.process.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM if graceful else signal.SIGKILL)
    for worker in workers:
        worker.wait(60)


def task_results() -> list[dict]:
    """Every task result row: path, arguments, status, worker ids, start and finish times."""
    from django_tasks_db.models import DBTaskResult
    return list(DBTaskResult.objects.values("task_path", "args_kwargs", "status", "worker_ids", "started_at",
                                            "finished_at"))


@dataclass
class Round:
    """One round of :func:`run_round`.

    ``startup_s``: per worker, seconds from its start until it was warm and
    ready; ``drain_s``: from the release of the queued jobs (every worker
    ready) until the last job finished; ``drain_cpu_s``: the CPU time the
    workers used meanwhile, summed (None without ``/proc``); ``results``: the task results;
    ``ids``: the jobs' ids by kind; ``codes``: the workers' exit codes after
    SIGTERM once the queue was empty; ``logs``: their output.
    """

    startup_s: list[float]
    drain_s: float
    drain_cpu_s: float | None
    results: list[dict]
    ids: dict[str, list[int]]
    codes: list[int | None]
    logs: list[str]


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of process ``pid`` so far (from ``/proc``; None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hold_ready_jobs() -> int:
    """Hold every ready job (``run_after`` far ahead: no worker claims it); returns how many."""
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(status="READY").update(run_after=timezone.now() + timedelta(days=1))


def release_jobs() -> datetime:
    """Release the held jobs at once (``run_after`` now); returns that moment."""
    from django_tasks_db.models import DBTaskResult

    now = timezone.now()
    DBTaskResult.objects.filter(status="READY").update(run_after=now)
    return now


def run_round(folder: Path, n_workers: int, tag: str, seed: int, timeout: float = 600) -> Round:
    """Run the round's :data:`N_JOBS` jobs with ``n_workers`` warm workers, timing start-up and drain apart.

    The jobs are queued on an empty queue and held; the workers are started
    (not ``--batch``) and, once every one has logged that it is warm, the jobs
    are released in one ``UPDATE``; the drain ends when the last job's result
    is recorded (its ``finished_at``; the database is polled every 50 ms).
    The workers are then stopped with SIGTERM and must exit with code 0.

    Raises
    ------
    RuntimeError
        If the queue did not hold exactly :data:`N_JOBS` jobs, a worker did
        not get ready, or the jobs were not all done within ``timeout`` s.
    """
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.all().delete()
    ids = queue_jobs(folder, n_scoring=N_SCORING, n_uploads=N_UPLOADS, n_analyses=N_ANALYSES, tag=tag, seed=seed)
    held = hold_ready_jobs()
    if held != N_JOBS:
        raise RuntimeError(f"{held} jobs queued, expected {N_JOBS}")
    workers = start_workers(n_workers, batch=False)
    try:
        deadline = time.monotonic() + timeout
        for worker in workers:
            if not worker.ready.wait(max(0.0, deadline - time.monotonic())):
                raise RuntimeError(f"a worker did not get ready:\n{worker.log()[-3000:]}")
        cpu_before = [cpu_seconds(w.pid) for w in workers]
        released = release_jobs()
        while DBTaskResult.objects.filter(status__in=("READY", "RUNNING")).exists():
            if time.monotonic() > deadline:
                logs = "\n".join(w.log()[-2000:] for w in workers)
                raise RuntimeError(f"the jobs were not all done in time:\n{logs}")
            time.sleep(0.05)
        last = max(DBTaskResult.objects.values_list("finished_at", flat=True))
        cpu_after = [cpu_seconds(w.pid) for w in workers]
        cpu = (None if None in cpu_before + cpu_after
               else sum(a - b for a, b in zip(cpu_after, cpu_before, strict=True)))
    finally:
        stop_workers(workers, graceful=True)
    return Round(startup_s=[w.ready_s for w in workers], drain_s=(last - released).total_seconds(), drain_cpu_s=cpu,
                 results=task_results(), ids=ids, codes=[w.process.returncode for w in workers],
                 logs=[w.log() for w in workers])
