"""``run_worker`` warms up before its first claim: after
:func:`annotate.core.task_names.tasks_warm_up`, a scoring run, an upload load
and an analysis run import no further third-party module, so no task pays a
cold library import inside its run.

The jobs run in a fresh Python process (this one has imported everything
already) on its own migrated SQLite file, with the immediate task backend.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotate.core.task_names import TASK_MODULES, WORKER_LIBRARIES, tasks_warm_up

ROOT = Path(__file__).resolve().parents[3]

CHILD = r"""
import json, sys, sysconfig
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.core.files.uploadedfile import SimpleUploadedFile
from tests.annotate.faults.many_workers import response_set, wide_csv
from annotate.core.task_names import tasks_warm_up
warm = tasks_warm_up()
before = set(sys.modules)
from annotate.analyses.services.runs import analysis_run_create, analysis_run_enqueue
from annotate.catalog.services.upload_jobs import upload_job_submit
from annotate.catalog.services.upload_store import upload_store
from annotate.catalog.services.uploads import UploadOptions
from annotate.models import AnalysisRun, ScoringRun, UploadJob
from annotate.runs.services.scoring import scoring_run_create, scoring_run_enqueue
folder = Path(sys.argv[1])
rs = response_set(folder, "warm-base", seed=7)
run = scoring_run_create(response_set=rs, params={"methods": ["eip", "simple_rank", "accuracy", "irt_1pl"]})
scoring_run_enqueue(run=run)
upload = upload_store(files={"responses": SimpleUploadedFile("warm.csv", wide_csv(200, 6, seed=8))},
                      options=UploadOptions(file_format="wide", dataset="Warm", name="warm-upload"))
job = upload_job_submit(upload=upload)
analysis = analysis_run_create(kind="rank_changes", response_set=rs, params={"alpha": 0.8})
analysis_run_enqueue(run=analysis)
site = sysconfig.get_paths()["purelib"]
new = sorted(set(sys.modules) - before)
print(json.dumps({
    "warm_modules": warm.modules,
    "third_party": [m for m in new if (getattr(sys.modules.get(m), "__file__", None) or "").startswith(site)],
    "statuses": [str(ScoringRun.objects.get(pk=run.pk).status), str(UploadJob.objects.get(pk=job.pk).state),
                 str(AnalysisRun.objects.get(pk=analysis.pk).status)],
}))
"""


def test_the_warm_up_imports_every_task_module_and_library():
    warm = tasks_warm_up()
    assert warm.seconds >= 0 and warm.modules >= 0
    assert set(TASK_MODULES.values()) | set(WORKER_LIBRARIES) <= set(sys.modules)


@pytest.mark.slow
def test_after_the_warm_up_the_tasks_import_no_further_library(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DJANGO_SETTINGS_MODULE="eipsite.settings", PYTHONPATH=str(ROOT), DEBUG="1",
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", TASKS_BACKEND="immediate",
               EIP_STORE_DIR=str(tmp_path / "store"))
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["statuses"] == ["done", "done", "done"]  # the three kinds of job ran
    assert seen["warm_modules"] > 100  # a fresh process: the warm-up imported the libraries
    assert seen["third_party"] == []  # add a missing library to WORKER_LIBRARIES
