"""A response-set load interrupted halfway leaves nothing behind.

Two interruptions of a 600-row load (100 questions x 6 models) written in
batches of 20 questions (120 cells: membership rows and a block of the
temporary matrix store):

* an exception raised after three of the six batches, inside the process;
* ``manage.py load_responses`` killed with SIGKILL after its first batch was
  written (no Python clean-up can run), in a child process against a database
  file (SQLite) or the test database (PostgreSQL).

Batches are committed one by one (so a load never holds the write lock for
long), while the set stays ``loading`` and hidden. After the exception
nothing remains at once; after the kill the committed batch stays hidden
until the next load (or ``reap_stale_runs``) finds the set abandoned (its
loader process is gone) and removes it. Either way no response set,
response, matrix store (temporary or final), question, model, dataset or
subject of the file remains, and
loading the same file again works (its checksum is not taken, nothing is
locked).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from annotate.catalog.services import loading
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, Subject
from bench.bench_load_study import PREPARE, ROOT, run_django
from tests.annotate.factories import n_stored_responses

N_QUESTIONS, N_MODELS, BATCH = 100, 6, 20  # 600 responses = 5 batches of 20 questions
DATASET = "interrupted-bench"


def write_long_csv(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        handle.write("model,question_id,subject,credit\n")
        for q in range(N_QUESTIONS):
            for m in range(N_MODELS):
                handle.write(f"llm-{m},q{q},subject-{q % 3},{(q + m) % 2}\n")
    return path


def leftovers() -> tuple[int, ...]:
    from django.conf import settings
    return (
        ResponseSet.objects.count(),
        n_stored_responses(),
        len(list(Path(settings.EIP_STORE_DIR).rglob("*.zarr"))),  # stores, temporary ones included
        Question.objects.filter(dataset__name=DATASET).count(),
        LanguageModel.objects.filter(name__startswith="llm-").count(),
        Dataset.objects.filter(name=DATASET).count(),
        Subject.objects.filter(name__startswith="subject-").count(),
    )


@pytest.mark.django_db(transaction=True)
def test_an_exception_after_half_the_batches_leaves_nothing(tmp_path, monkeypatch):
    source = write_long_csv(tmp_path / "responses.csv")
    written = []
    real_batch = loading._write_response_batch

    def failing_batch(response_set_id, start, questions, credit, observed, writer):
        if len(written) == 3:
            raise OSError("the disk is full")  # after batches 1-3 of 5 were written
        real_batch(response_set_id, start, questions, credit, observed, writer)
        written.append(int(credit.size if observed is None else observed.sum()))  # None: every cell observed

    monkeypatch.setattr(loading, "RESPONSE_BATCH_SIZE", BATCH)
    monkeypatch.setattr(loading, "_write_response_batch", failing_batch)
    with pytest.raises(OSError, match="the disk is full"):
        call_command("load_responses", responses=source, dataset=DATASET, verbosity=0)
    assert written == [120, 120, 120]
    assert leftovers() == (0, 0, 0, 0, 0, 0, 0)

    monkeypatch.setattr(loading, "_write_response_batch", real_batch)
    call_command("load_responses", responses=source, dataset=DATASET, verbosity=0)
    # 1 set, 600 responses, 1 store, 100 questions, 6 models, 1 dataset, 3 subjects
    assert leftovers() == (1, 600, 1, 100, 6, 1, 3)


KILLED_LOAD = f"""
import sys, time
from pathlib import Path
from django.core.management import call_command
from annotate.catalog.services import loading
marker = Path(sys.argv[2])
real = loading._write_response_batch
def batch_then_hang(*args):
    real(*args)
    marker.write_text("one batch written")
    time.sleep(120)  # SIGKILL arrives here, inside the transaction
loading.RESPONSE_BATCH_SIZE = {BATCH}
loading._write_response_batch = batch_then_hang
call_command("load_responses", responses=Path(sys.argv[1]), dataset="{DATASET}", verbosity=0)
"""

COUNT = """
import json
from tests.annotate.faults.test_interrupted_load import leftovers
print(json.dumps(leftovers()))
"""

HIDDEN_THEN_SWEPT = """
import json
from annotate.api.selectors import response_sets_list
from annotate.catalog.selectors.catalog import response_sets_loaded
from annotate.catalog.services.loading import response_sets_abandoned_remove
from tests.annotate.faults.test_interrupted_load import leftovers
print(json.dumps([len(response_sets_list()), response_sets_loaded().count(), response_sets_abandoned_remove(),
                  *leftovers()]))
"""

LOAD = f"""
import sys
from pathlib import Path
from django.core.management import call_command
call_command("load_responses", responses=Path(sys.argv[1]), dataset="{DATASET}", verbosity=0)
"""


def child_env(tmp_path: Path) -> dict[str, str]:
    """The child's database: the PostgreSQL test database, or a migrated SQLite file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DJANGO_SETTINGS_MODULE="eipsite.settings", PYTHONPATH=str(ROOT), STATIC_ROOT=str(tmp_path / "static"))
    if connection.vendor == "postgresql":
        s = connection.settings_dict
        env["DATABASE_URL"] = f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
        run_django(PREPARE.replace('call_command("collectstatic", verbosity=0, interactive=False)', ""), env)
    return env


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_load_killed_mid_write_leaves_nothing(tmp_path):
    source = write_long_csv(tmp_path / "responses.csv")
    env = child_env(tmp_path)
    marker = tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-c", "import django\ndjango.setup()\n" + KILLED_LOAD, str(source),
                              str(marker)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, child.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the child never wrote its first batch"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    # no set listed, none loaded; the sweep removes one abandoned set, and then nothing of the file remains
    assert json.loads(run_django(HIDDEN_THEN_SWEPT, env)) == [0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    run_django(LOAD, env, str(source))  # the same file loads cleanly afterwards
    assert json.loads(run_django(COUNT, env)) == [1, 600, 1, 100, 6, 1, 3]
