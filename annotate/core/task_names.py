"""The background tasks by name: where services and the task modules meet.

A service that hands work to the worker enqueues a task by its name here; each
domain's ``tasks`` module (``annotate.catalog.tasks``, ``annotate.runs.tasks``,
``annotate.analyses.tasks``) defines its task functions, which call the
services. Neither imports the other, so there is no import circle: a task's
module is looked up by its dotted path when the task is first enqueued (the
worker imports it the same way, by the path django-tasks stores with each task).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from importlib import import_module
from typing import Any

LOAD_UPLOAD = "load_upload"
RUN_SCORING = "run_scoring"
RUN_ANALYSIS = "run_analysis"
DELETE_RESPONSE_SET = "delete_response_set"
#: The module holding each task function (``@task()``), by dotted path.
TASK_MODULES = {
    LOAD_UPLOAD: "annotate.catalog.tasks",
    DELETE_RESPONSE_SET: "annotate.catalog.tasks",
    RUN_SCORING: "annotate.runs.tasks",
    RUN_ANALYSIS: "annotate.analyses.tasks",
}
#: Every task name; each is a function of its module in :data:`TASK_MODULES`.
TASK_NAMES = tuple(TASK_MODULES)
ERR_UNKNOWN_TASK = "unknown task {name!r}; known: {known}"
#: The libraries the tasks' services import inside their functions, kept out of
#: the web processes' start-up: pandas and pyarrow (upload parsing), fsspec and
#: Zarr (the matrix store), scipy.optimize and scipy.stats (the fits and the
#: analyses), threadpoolctl (the scoring runs' BLAS limit). A worker imports
#: them before it claims its first task (:func:`tasks_warm_up`).
WORKER_LIBRARIES = (
    "pandas",
    "pyarrow.compute",
    "pyarrow.csv",
    "pyarrow.pandas_compat",
    "pyarrow.parquet",
    "pyarrow.vendored.version",  # imported by pyarrow.pandas_compat on its first conversion
    "fsspec",
    "zarr",
    "zarr.storage",
    "scipy.optimize",
    "scipy.stats",
    "threadpoolctl",
)


@dataclass(frozen=True)
class WarmUp:
    """What :func:`tasks_warm_up` did: ``seconds`` of wall time, ``modules`` newly imported."""

    seconds: float
    modules: int


def task_enqueue(name: str, *args: Any) -> Any:
    """Enqueue task ``name`` (of its module in :data:`TASK_MODULES`) with JSON-ready ``args``.

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
    return getattr(import_module(TASK_MODULES[name]), name).enqueue(*args)


def tasks_warm_up() -> WarmUp:
    """Import every task module (:data:`TASK_MODULES`) and :data:`WORKER_LIBRARIES`.

    A task worker calls this before it claims its first task, so that no task
    pays the libraries' import inside its run (about a second on the first
    analysis, scoring run or upload of a cold process, more on a busy
    machine).

    Returns
    -------
    WarmUp
        The wall time the imports took and how many modules they added to
        ``sys.modules`` (0 when everything was already imported).

    Raises
    ------
    ImportError
        When a task module or a library is missing (the worker could not run
        its tasks either).
    """
    before, t0 = len(sys.modules), time.perf_counter()
    for module in (*dict.fromkeys(TASK_MODULES.values()), *WORKER_LIBRARIES):
        import_module(module)
    return WarmUp(seconds=time.perf_counter() - t0, modules=len(sys.modules) - before)
