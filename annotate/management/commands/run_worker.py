"""``manage.py run_worker``: django-tasks' ``db_worker`` that survives a locked database.

django-tasks-db's worker already skips a locked database while it claims a
task, but exits on the same error anywhere else (starting a transaction,
recording a result), leaving runs queued forever. This worker retries there:
the claim loop starts again after a pause, and a task's result is recorded
again until it is stored. Use it instead of ``db_worker`` (same options).

Before it claims its first task the worker imports every task module and the
libraries their services import lazily (pandas, pyarrow, Zarr, scipy.stats...;
:func:`annotate.core.task_names.tasks_warm_up`), then logs ``worker <id>
ready`` with the time that took: no task pays a cold import inside its run,
and several workers started together are all warm before the queue is
touched.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.db import OperationalError, close_old_connections
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand, Worker
from django_tasks_db.utils import is_locked_database_exception

from annotate.core import tasks_warm_up

logger = logging.getLogger("annotate.worker")

LOCKED_WAIT_S = 1.0
RESULT_RETRIES = 30
#: The line a worker logs once warm, before its first claim (``worker_id``, seconds, modules imported).
READY = "worker %s ready: task modules and their libraries imported in %.2f s (%d modules)"


def _retrying(record: Callable[..., Any]) -> Callable[..., Any]:
    """``record`` (a task result's ``set_successful``/``set_failed``) tried again while the database is locked."""

    def call(*args: Any, **kwargs: Any) -> Any:
        for attempt in range(RESULT_RETRIES):
            try:
                return record(*args, **kwargs)
            except OperationalError as error:
                if not is_locked_database_exception(error) or attempt == RESULT_RETRIES - 1:
                    raise
                logger.warning("database is locked; recording a task result again (%d)", attempt + 1)
                close_old_connections()
                time.sleep(LOCKED_WAIT_S)
        return None

    return call


class PatientWorker(Worker):
    """A :class:`Worker` that warms up before its first claim, and whose loop and
    result records survive "database is locked"."""

    def run(self) -> None:
        warm = tasks_warm_up()
        logger.info(READY, self.worker_id, warm.seconds, warm.modules)
        while True:
            try:
                super().run()
                return
            except OperationalError as error:
                if not is_locked_database_exception(error) or not self.running:
                    raise
                logger.warning("database is locked; the worker waits %.1f s and goes on", LOCKED_WAIT_S)
                close_old_connections()
                time.sleep(LOCKED_WAIT_S)

    def run_task(self, db_task_result: Any) -> None:
        db_task_result.set_successful = _retrying(db_task_result.set_successful)
        db_task_result.set_failed = _retrying(db_task_result.set_failed)
        super().run_task(db_task_result)


class Command(DbWorkerCommand):
    help = "Run queued tasks (scoring, analyses, upload loads); survives a transiently locked database."

    def configure_logging(self, verbosity: int) -> None:
        super().configure_logging(verbosity)
        logger.setLevel(logging.getLogger("django_tasks_db").level)
        if not logger.hasHandlers():
            logger.addHandler(logging.StreamHandler(self.stdout))

    def handle(self, *, verbosity: int, queue_name: str, interval: float, batch: bool, backend_name: str,
               startup_delay: bool, reload: bool, max_tasks: int | None, worker_id: str, exclude_queues: str,
               **options: Any) -> None:
        self.configure_logging(verbosity)
        worker = PatientWorker(
            queue_names=queue_name.split(","), interval=interval, batch=batch, backend_name=backend_name,
            startup_delay=startup_delay, max_tasks=max_tasks, worker_id=worker_id,
            excluded_queue_names=exclude_queues.split(",") if exclude_queues else [],
        )
        worker.configure_signals()
        worker.run()
