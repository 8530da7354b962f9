"""The background tasks by name: where services and the task module meet.

A service that hands work to the worker enqueues a task by its name here;
:mod:`annotate.tasks` defines the task functions, which call the services.
Neither imports the other, so there is no import circle: the task module is
looked up by its dotted path when the first task is enqueued (the worker
imports it the same way, by the path django-tasks stores with each task).
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

#: The module holding the task functions (``@task()``), by dotted path.
TASKS_MODULE = "annotate.tasks"
LOAD_UPLOAD = "load_upload"
RUN_SCORING = "run_scoring"
RUN_ANALYSIS = "run_analysis"
DELETE_RESPONSE_SET = "delete_response_set"
#: Every task name; each is a function of :data:`TASKS_MODULE`.
TASK_NAMES = (LOAD_UPLOAD, RUN_SCORING, RUN_ANALYSIS, DELETE_RESPONSE_SET)
ERR_UNKNOWN_TASK = "unknown task {name!r}; known: {known}"


def task_enqueue(name: str, *args: Any) -> Any:
    """Enqueue task ``name`` of :data:`TASKS_MODULE` with JSON-ready ``args``.

    Parameters
    ----------
    name : str
        One of :data:`TASK_NAMES`.
    *args
        The task's arguments (ids).

    Returns
    -------
    django_tasks.TaskResult
        With ``TASKS_BACKEND=immediate`` the task has run when this returns.

    Raises
    ------
    LookupError
        For a name not in :data:`TASK_NAMES` (:data:`ERR_UNKNOWN_TASK`);
        nothing is enqueued.
    """
    if name not in TASK_NAMES:
        raise LookupError(ERR_UNKNOWN_TASK.format(name=name, known=list(TASK_NAMES)))
    return getattr(import_module(TASKS_MODULE), name).enqueue(*args)
