"""Runs whose worker died are marked failed, and only those."""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotate.models import AnalysisRun, RunStatus, ScoringRun
from annotate.runs.services.stale_runs import STALE_ERROR, runs_reap_stale
from tests.annotate.factories import make_catalog

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs():
    catalog = make_catalog(per_subject=2)
    now = timezone.now()
    rs = catalog.response_set

    def scoring(status, heartbeat_minutes_ago):
        beat = None if heartbeat_minutes_ago is None else now - timedelta(minutes=heartbeat_minutes_ago)
        return ScoringRun.objects.create(response_set=rs, status=status, heartbeat_at=beat)

    def analysis(status, heartbeat_minutes_ago):
        beat = now - timedelta(minutes=heartbeat_minutes_ago)
        return AnalysisRun.objects.create(kind="profiles", response_set=rs, params={}, params_key=f"k{status}{beat}",
                                          status=status, started_at=beat, heartbeat_at=beat)

    return now, {
        "silent_scoring": scoring(RunStatus.RUNNING, 90),
        "busy_scoring": scoring(RunStatus.RUNNING, 5),
        "old_queued": scoring(RunStatus.QUEUED, 500),
        "old_done": ScoringRun.objects.get(pk=catalog.run.pk),
        "silent_analysis": analysis(RunStatus.RUNNING, 61),
        "busy_analysis": analysis(RunStatus.RUNNING, 59),
    }


def test_only_running_runs_silent_past_the_threshold_are_failed(runs):
    now, r = runs
    result = runs_reap_stale(older_than=timedelta(minutes=60), now=now)
    assert result.scoring_runs == [r["silent_scoring"].pk]
    assert result.analysis_runs == [r["silent_analysis"].pk]
    statuses = {name: type(run).objects.get(pk=run.pk).status for name, run in r.items()}
    assert statuses == {
        "silent_scoring": "failed", "busy_scoring": "running", "old_queued": "queued", "old_done": "done",
        "silent_analysis": "failed", "busy_analysis": "running",
    }
    failed = ScoringRun.objects.get(pk=r["silent_scoring"].pk)
    assert failed.error == STALE_ERROR.format(minutes=60) and failed.finished_at == now


def test_a_running_run_that_never_wrote_a_heartbeat_counts_from_its_creation(runs):
    now, r = runs
    never = ScoringRun.objects.create(response_set=r["old_done"].response_set, status=RunStatus.RUNNING)
    ScoringRun.objects.filter(pk=never.pk).update(created_at=now - timedelta(hours=3))
    assert never.pk in runs_reap_stale(older_than=timedelta(minutes=60), now=now).scoring_runs


def test_the_command_sums_up_and_refuses_a_non_positive_threshold(runs):
    out = StringIO()
    call_command("reap_stale_runs", "--minutes", "60", stdout=out)
    assert out.getvalue().startswith("Marked 2 stale run(s) failed")
    with pytest.raises(CommandError, match="older_than must be a positive duration"):
        call_command("reap_stale_runs", "--minutes", "0")


def test_the_scoring_service_writes_a_heartbeat_while_it_runs():
    from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute

    catalog = make_catalog(per_subject=3)
    before = timezone.now()
    run = scoring_run_create(response_set=catalog.response_set, params={"methods": ["eip", "accuracy"]})
    scoring_run_execute(run=run)
    run.refresh_from_db()
    assert run.status == "done" and run.heartbeat_at is not None and run.heartbeat_at >= before
