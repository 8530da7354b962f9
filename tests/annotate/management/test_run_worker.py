"""``manage.py run_worker`` survives a transiently locked database.

django-tasks-db's worker exits when "database is locked" escapes its claim
loop (e.g. starting the exclusive transaction) or when recording a task's
result; ``run_worker`` waits and goes on. Other database errors still stop it.
"""
from __future__ import annotations

import pytest
from django.db import OperationalError
from django_tasks_db.management.commands.db_worker import Worker

from annotate.management.commands import run_worker

LOCKED = OperationalError("database is locked")


def make_worker() -> run_worker.PatientWorker:
    return run_worker.PatientWorker(queue_names=["default"], interval=0, batch=True, backend_name="default",
                                    startup_delay=False, max_tasks=None, worker_id="w", excluded_queue_names=[])


def test_the_loop_goes_on_after_a_locked_database(monkeypatch):
    monkeypatch.setattr(run_worker, "LOCKED_WAIT_S", 0)
    monkeypatch.setattr(run_worker, "close_old_connections", lambda: None)  # no database here
    calls = []

    def loop(self):
        calls.append("run")
        if len(calls) < 3:
            raise LOCKED  # twice, as django-tasks-db's loop would raise it from BEGIN EXCLUSIVE

    monkeypatch.setattr(Worker, "run", loop)
    make_worker().run()
    assert calls == ["run", "run", "run"]


def test_another_database_error_still_stops_it(monkeypatch):
    def loop(self):
        raise OperationalError("no such table: django_tasks_database_dbtaskresult")

    monkeypatch.setattr(Worker, "run", loop)
    with pytest.raises(OperationalError, match="no such table"):
        make_worker().run()


def test_a_task_result_is_recorded_again_while_the_database_is_locked(monkeypatch):
    monkeypatch.setattr(run_worker, "LOCKED_WAIT_S", 0)
    monkeypatch.setattr(run_worker, "close_old_connections", lambda: None)  # no database here
    attempts = []

    def record(value):
        attempts.append(value)
        if len(attempts) < 4:
            raise LOCKED
        return "stored"

    assert run_worker._retrying(record)("done") == "stored"
    assert attempts == ["done"] * 4


def test_a_result_that_stays_locked_gives_up_after_the_retries(monkeypatch):
    monkeypatch.setattr(run_worker, "LOCKED_WAIT_S", 0)
    monkeypatch.setattr(run_worker, "close_old_connections", lambda: None)  # no database here
    monkeypatch.setattr(run_worker, "RESULT_RETRIES", 3)
    attempts = []

    def record():
        attempts.append(1)
        raise LOCKED

    with pytest.raises(OperationalError, match="locked"):
        run_worker._retrying(record)()
    assert len(attempts) == 3
