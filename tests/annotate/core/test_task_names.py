"""Services enqueue background tasks by name (``annotate.core.task_names``), never by importing a task module."""
from __future__ import annotations

from importlib import import_module

import pytest
from django_tasks.base import Task

from annotate.core.task_names import ERR_UNKNOWN_TASK, TASK_MODULES, TASK_NAMES, task_enqueue


def test_every_task_name_is_a_task_of_its_domain_module():
    assert TASK_NAMES == ("load_upload", "delete_response_set", "run_scoring", "run_analysis")
    assert TASK_MODULES == {"load_upload": "annotate.catalog.tasks", "delete_response_set": "annotate.catalog.tasks",
                            "run_scoring": "annotate.runs.tasks", "run_analysis": "annotate.analyses.tasks"}
    for name in TASK_NAMES:
        task = getattr(import_module(TASK_MODULES[name]), name)
        assert isinstance(task, Task) and task.module_path == f"{TASK_MODULES[name]}.{name}"
    defined = sorted(n for module in set(TASK_MODULES.values())
                     for n, v in vars(import_module(module)).items() if isinstance(v, Task))
    assert defined == sorted(TASK_NAMES)


def test_an_unknown_task_name_is_refused_naming_the_known_ones():
    with pytest.raises(LookupError) as info:
        task_enqueue("run_scorng", 1)
    assert str(info.value) == ERR_UNKNOWN_TASK.format(name="run_scorng", known=list(TASK_NAMES))
