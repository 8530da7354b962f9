"""The PostgreSQL housekeeping of issue 13 is a no-op on SQLite (the default database)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotate.catalog.loaders.model_names import infer_from_model_name
from annotate.core.services.database import backend_cancel, backend_pid, load_lock, responses_analyze
from annotate.models import RunStatus, ScoringRun
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.runs.services.stale_runs import runs_reap_stale
from tests.annotate.factories import make_catalog

pytestmark = pytest.mark.django_db


def test_on_sqlite_no_pid_is_recorded_and_reaping_cancels_nothing():
    if connection.vendor == "postgresql":
        pytest.skip("the PostgreSQL behaviour is tested in test_postgres.py")
    catalog = make_catalog(per_subject=3)
    run = scoring_run_execute(run=scoring_run_create(response_set=catalog.response_set,
                                                     params={"methods": ["eip", "accuracy"]}))
    assert run.status == RunStatus.DONE and ScoringRun.objects.get(pk=run.pk).db_backend_pid is None
    stale = ScoringRun.objects.create(response_set=catalog.response_set, status=RunStatus.RUNNING,
                                      db_backend_pid=4242, heartbeat_at=timezone.now() - timedelta(hours=3))
    result = runs_reap_stale(older_than=timedelta(hours=1))
    assert (result.scoring_runs, result.queries_cancelled) == ([stale.pk], 0)
    assert backend_pid() is None and backend_cancel(pid=4242, started_before=timezone.now()) is False
    load_lock()
    responses_analyze()  # no-ops


def test_model_name_guesses_ignore_look_alike_spaces():
    assert infer_from_model_name("Llama\u00a02\u200b-13b") == infer_from_model_name("Llama 2-13b")
    assert infer_from_model_name("Llama\u00a02\u200b-13b").parameters_b == 13.0
