"""Several ``manage.py run_worker`` processes on one queue: the set-up shared by
``test_many_workers`` (each job runs once) and ``python -m bench workers``
(how the wall time falls with more workers).

Call after ``django.setup()`` on a migrated PostgreSQL database: the jobs are
queued in the database task backend and real worker processes are started
against the same database (its URL is read from the open connection).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[3]
DATABASE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
#: The round of jobs: scoring runs, upload loads, analysis runs (40 in all).
N_SCORING, N_UPLOADS, N_ANALYSES = 16, 12, 12
N_JOBS = N_SCORING + N_UPLOADS + N_ANALYSES


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


def start_workers(n: int, *, batch: bool = True) -> list[subprocess.Popen]:
    """``n`` ``run_worker`` processes (``--batch``: each exits when the queue is empty)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DJANGO_SETTINGS_MODULE="eipsite.settings", PYTHONPATH=str(ROOT), DATABASE_URL=database_url(),
               TASKS_BACKEND="database", DEBUG="1")
    command = [sys.executable, "manage.py", "run_worker", "--interval", "0.1", "--no-startup-delay", "--no-reload"]
    return [subprocess.Popen([*command, *(["--batch"] if batch else []), "--worker-id", f"w{k}"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            for k in range(n)]


def wait_workers(workers: list[subprocess.Popen], timeout: float) -> list[str]:
    """Wait for each worker to exit (killed after ``timeout`` seconds); their standard error."""
    logs = []
    for worker in workers:
        try:
            _, err = worker.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            _, err = worker.communicate()
        logs.append(err.decode(errors="replace"))
    return logs


def stop_workers(workers: list[subprocess.Popen]) -> None:
    """Kill the workers still running (each with its process group)."""
    for worker in workers:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.communicate()


def task_results() -> list[dict]:
    """Every task result row: path, arguments, status, worker ids, start and finish times."""
    from django_tasks_db.models import DBTaskResult
    return list(DBTaskResult.objects.values("task_path", "args_kwargs", "status", "worker_ids", "started_at",
                                            "finished_at"))


def run_round(folder: Path, n_workers: int, tag: str, seed: int,
              timeout: float = 600) -> tuple[float, list[dict], dict[str, list[int]], list[int | None], list[str]]:
    """Queue the round's :data:`N_JOBS` jobs on an empty queue and run them with ``n_workers`` workers.

    Returns
    -------
    (seconds, results, ids, return codes, worker logs)
        The wall time from starting the workers until the last exits, the
        task results, the jobs' ids by kind, each worker's exit code and
        standard error.
    """
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.all().delete()
    ids = queue_jobs(folder, n_scoring=N_SCORING, n_uploads=N_UPLOADS, n_analyses=N_ANALYSES, tag=tag, seed=seed)
    ready = DBTaskResult.objects.filter(status="READY").count()
    if ready != N_JOBS:
        raise RuntimeError(f"{ready} jobs queued, expected {N_JOBS}")
    t0 = time.perf_counter()
    workers = start_workers(n_workers)
    try:
        logs = wait_workers(workers, timeout=timeout)
    finally:
        stop_workers(workers)
    elapsed = time.perf_counter() - t0
    return elapsed, task_results(), ids, [w.returncode for w in workers], logs
