"""Services enqueue background tasks by name (``annotate.task_names``), never by importing the task module."""
from __future__ import annotations

import pytest
from django_tasks.base import Task

import annotate.tasks
from annotate.task_names import ERR_UNKNOWN_TASK, TASK_NAMES, task_enqueue


def test_every_task_name_is_a_task_of_the_task_module():
    assert TASK_NAMES == ("load_upload", "run_scoring", "run_analysis", "delete_response_set")
    for name in TASK_NAMES:
        task = getattr(annotate.tasks, name)
        assert isinstance(task, Task) and task.module_path == f"annotate.tasks.{name}"
    defined = sorted(n for n, v in vars(annotate.tasks).items() if isinstance(v, Task))
    assert defined == sorted(TASK_NAMES)


def test_an_unknown_task_name_is_refused_naming_the_known_ones():
    with pytest.raises(LookupError) as info:
        task_enqueue("run_scorng", 1)
    assert str(info.value) == ERR_UNKNOWN_TASK.format(name="run_scorng", known=list(TASK_NAMES))
