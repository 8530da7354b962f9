"""Reads of the task queue: whether a task is already waiting or running."""
from __future__ import annotations

from django.conf import settings

from annotate.core.task_names import TASK_MODULES, TASK_NAMES

#: The database task backend, the only one whose queue can be read back.
DB_BACKEND = "django_tasks_db.DatabaseBackend"


def task_pending(*, name: str, first_arg: int) -> bool:
    """Whether task ``name`` with first argument ``first_arg`` is queued or
    running in the database task backend.

    Parameters
    ----------
    name : str
        One of :data:`annotate.core.task_names.TASK_NAMES`.
    first_arg : int
        The task's first argument (an id).

    Returns
    -------
    bool
        False under any other backend (the immediate backend has run a task
        by the time its request returns, so nothing is ever pending there).

    Raises
    ------
    LookupError
        For a name not in ``TASK_NAMES``.
    """
    if name not in TASK_NAMES:
        raise LookupError(f"unknown task {name!r}; known: {list(TASK_NAMES)}")
    if settings.TASKS.get("default", {}).get("BACKEND") != DB_BACKEND:
        return False
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(
        task_path=f"{TASK_MODULES[name]}.{name}", args_kwargs__args__0=first_arg,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
    ).exists()
