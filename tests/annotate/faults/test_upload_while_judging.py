"""A ~20 MB wide CSV posted through the API loads in the background while ten
evaluators keep judging, on SQLite (the default database), without one error.

Everything runs as in ``make demo``: a SQLite file (WAL, busy timeout, the
settings' OPTIONS), the API and judging pages served by Django's test client
in one process (ten evaluator threads, one poller), and ``manage.py
run_worker`` in a second process loading the upload in batches. Checked:

* every judging GET and POST answers 200 or 302 (no "database is locked");
* every accepted answer (302) is stored, exactly once;
* the upload answers 202 at once, its status goes queued -> ... -> done, the
  new set is absent from the API's list until its last commit and present
  after, with all 1,050,000 responses.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from bench.bench_load_study import PREPARE, ROOT, run_django
from tests.annotate.faults.upload_while_judging import N_MODELS, N_QUESTIONS

pytestmark = pytest.mark.slow

CHILD = """
import sys
from tests.annotate.faults.upload_while_judging import main
main(sys.argv[1])
"""

DECODE = """
import json
import sys
from annotate.models import Participation
from annotate.studies.selectors.judging_tokens import PAIR, judging_token_value
accepted = json.loads(open(sys.argv[1], encoding="utf-8").read())
parts = {p.pk: p for p in Participation.objects.filter(pk__in={pk for pk, _ in accepted})}
json.dump([[pk, judging_token_value(participation=parts[pk], token=token, kind=PAIR)] for pk, token in accepted],
          sys.stdout)
"""


def pair_ids(accepted: list, env: dict[str, str], tmp_path) -> list[tuple[int, int]]:
    """(participation id, pair id) of each accepted answer: the form posted the
    evaluator's pair token, decoded here with the site's secret and database."""
    path = tmp_path / "accepted.json"
    path.write_text(json.dumps(accepted), encoding="utf-8")
    return [tuple(a) for a in json.loads(run_django(DECODE, env, str(path)))]


def test_a_20_mb_upload_loads_while_ten_evaluators_judge_on_sqlite(tmp_path, capsys):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env.update(DJANGO_SETTINGS_MODULE="eipsite.settings", PYTHONPATH=str(ROOT), STATIC_ROOT=str(tmp_path / "static"),
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", TASKS_BACKEND="database", DEBUG="1")
    run_django(PREPARE.replace('call_command("collectstatic", verbosity=0, interactive=False)', "")
               .replace('cursor.execute("PRAGMA journal_mode=MEMORY")', "pass"), env)
    worker = subprocess.Popen([sys.executable, "manage.py", "run_worker", "--interval", "0.2", "--no-startup-delay"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        seen = json.loads(run_django(CHILD, env, str(tmp_path), timeout=240))
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            _, worker_log = worker.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            _, worker_log = worker.communicate()
    with capsys.disabled():
        print(f"\n{seen['csv_bytes'] / 1e6:.1f} MB wide CSV: POST answered in {seen['post_s']} s, loaded in "
              f"{seen['load_s']} s while {len(seen['accepted'])} judgments were accepted; statuses {seen['statuses']}")
    assert seen["csv_bytes"] > 19e6
    assert seen["errors"] == [] and seen["threads_alive"] == 0
    assert set(seen["statuses"]) <= {"200", "302"}, seen["statuses"]
    assert seen["post_status"] == 202
    final = seen["final"]
    assert (final["state"], final["error"], final["n_done"], final["n_total"]) == (
        "done", "", N_QUESTIONS * N_MODELS, N_QUESTIONS * N_MODELS), (final, worker_log.decode()[-3000:])
    assert seen["listed_early"] == 0 and seen["listed_after"]
    # The poller saw the upload under way (and the set hidden at every such poll). Which phase a poll lands in
    # depends on the machine's speed (a warm worker may parse and load between two polls), so either counts;
    # test_loading_batches checks deterministically that a set in the loading phase is hidden everywhere.
    assert {"parsing", "loading"} & set(seen["states"]), seen["states"]
    stored = [tuple(s) for s in seen["stored"]]
    accepted = pair_ids(seen["accepted"], env, tmp_path)
    assert all(pair_id is not None for _, pair_id in accepted)
    assert len(stored) == len(set(stored))  # no judgment twice
    assert sorted(stored) == sorted(accepted)  # every accepted answer stored, nothing else
    assert len(accepted) >= 10  # evaluators really judged during the load
