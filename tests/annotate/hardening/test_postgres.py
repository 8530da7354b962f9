"""PostgreSQL hardening (issue 13): simultaneous loads of the same new names, ANALYZE after a load, the
(response set, question) index, and a reaped run's query cancelled.

Runs only on PostgreSQL: ``DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> pytest -m postgres``.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import OperationalError, connection, connections
from django.utils import timezone

from annotate.catalog.loaders.base import LoadError
from annotate.catalog.services.uploads import UploadOptions, UploadSource, upload_check, upload_load
from annotate.core.services.database import backend_pid
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, ResponseSetQuestion, RunStatus, ScoringRun
from annotate.runs.services.scoring import scoring_run_create, scoring_run_execute
from annotate.runs.services.stale_runs import runs_reap_stale
from tests.annotate.factories import make_catalog, n_stored_responses

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip(f"needs PostgreSQL: run with DATABASE_URL=postgres://... (this run uses {connection.vendor})")


def run_threads(targets) -> list[BaseException]:
    errors: list[BaseException] = []

    def wrap(fn):
        def inner():
            try:
                fn()
            except BaseException as exc:  # reported to the test
                errors.append(exc)
            finally:
                connections.close_all()
        return inner

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def long_file(folder: Path, name: str, questions: list[str], models: list[str], credit: float) -> Path:
    lines = ["dataset,question_id,model,credit"]
    lines += [f"NewBench,{q},{m},{credit}" for q in questions for m in models]
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_two_simultaneous_loads_creating_the_same_new_names_both_load(tmp_path):
    files = [long_file(tmp_path, "a.csv", ["q1", "q2", "q3"], ["m-new-1", "m-shared"], 1.0),
             long_file(tmp_path, "b.csv", ["q2", "q3", "q4"], ["m-shared", "m-new-2"], 0.0)]
    checked = [upload_check(source=UploadSource(responses=f), options=UploadOptions(file_format="long"))
               for f in files]  # both planned before either writes: each plans to create NewBench, m-shared, ...
    assert [c.preview.datasets_new for c in checked] == [1, 1]
    barrier = threading.Barrier(2)
    loaded = []

    def load(c):
        def fn():
            barrier.wait()
            loaded.append(upload_load(checked=c).name)
        return fn

    errors = run_threads([load(c) for c in checked])
    assert errors == []
    assert sorted(loaded) == ["a", "b"]
    assert Dataset.objects.filter(name="NewBench").count() == 1
    assert sorted(LanguageModel.objects.values_list("name", flat=True)) == ["m-new-1", "m-new-2", "m-shared"]
    assert sorted(Question.objects.values_list("external_id", flat=True)) == ["q1", "q2", "q3", "q4"]
    # 3 questions x 2 models in each file
    assert {rs.name: n_stored_responses(rs) for rs in ResponseSet.objects.all()} == {"a": 6, "b": 6}
    assert n_stored_responses() == 12


def test_two_simultaneous_loads_of_the_same_file_give_one_load_and_one_clear_refusal(tmp_path):
    path = long_file(tmp_path, "same.csv", ["q1", "q2"], ["m1", "m2"], 1.0)
    checked = [upload_check(source=UploadSource(responses=path), options=UploadOptions(file_format="long"))
               for _ in range(2)]
    barrier = threading.Barrier(2)

    def load(c):
        def fn():
            barrier.wait()
            upload_load(checked=c)
        return fn

    errors = run_threads([load(c) for c in checked])
    assert len(errors) == 1 and isinstance(errors[0], LoadError)
    assert "these files were already loaded as response set 'same v1'" in str(errors[0])
    assert ResponseSet.objects.count() == 1 and n_stored_responses() == 4


def test_a_load_refreshes_the_planner_statistics_of_the_membership_table(tmp_path):
    path = long_file(tmp_path, "s.csv", [f"q{i}" for i in range(50)], [f"m{j}" for j in range(4)], 1.0)
    upload_load(checked=upload_check(source=UploadSource(responses=path), options=UploadOptions(file_format="long")))
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [ResponseSetQuestion._meta.db_table])
        (reltuples,) = cursor.fetchone()
        cursor.execute("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = %s",
                       [ResponseSetQuestion._meta.db_table])
        (analyzed,) = cursor.fetchone()
    assert reltuples == 50  # 50 questions (rows of the matrix), counted by ANALYZE (never-analysed tables show -1)
    assert analyzed >= 1


def test_the_response_set_question_index_exists():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'response_set_question_unique'")
        (definition,) = cursor.fetchone()
    assert definition.endswith("(response_set_id, question_id)")


def test_a_run_records_the_backend_pid_of_its_worker():
    catalog = make_catalog(per_subject=3)
    run = scoring_run_execute(run=scoring_run_create(response_set=catalog.response_set,
                                                     params={"methods": ["eip", "accuracy"]}))
    assert run.status == RunStatus.DONE
    assert ScoringRun.objects.get(pk=run.pk).db_backend_pid == backend_pid()


def test_reaping_a_stale_run_cancels_its_still_running_query():
    catalog = make_catalog(per_subject=3)
    run = ScoringRun.objects.create(response_set=catalog.response_set, status=RunStatus.RUNNING)
    started, outcome = threading.Event(), {}

    def worker():
        # the "killed" worker's connection: records its pid, then runs a long query
        ScoringRun.objects.filter(pk=run.pk).update(db_backend_pid=backend_pid(), heartbeat_at=timezone.now())
        started.set()
        t0 = time.perf_counter()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(60)")
            outcome["error"] = None
        except OperationalError as error:
            outcome["error"] = error
        outcome["seconds"] = time.perf_counter() - t0

    thread_errors: list[BaseException] = []

    def reap():
        assert started.wait(30)
        time.sleep(0.5)  # let pg_sleep start
        result = runs_reap_stale(older_than=timedelta(hours=1), now=timezone.now() + timedelta(hours=2))
        outcome["result"] = result

    thread_errors = run_threads([worker, reap])
    assert thread_errors == []
    assert outcome["result"].scoring_runs == [run.pk] and outcome["result"].queries_cancelled == 1
    assert "canceling statement due to user request" in str(outcome["error"])
    assert outcome["seconds"] < 30
    assert ScoringRun.objects.get(pk=run.pk).status == RunStatus.FAILED


def test_a_reused_pid_of_a_newer_connection_is_left_alone():
    catalog = make_catalog(per_subject=3)
    long_ago = timezone.now() - timedelta(days=1)
    run = ScoringRun.objects.create(response_set=catalog.response_set, status=RunStatus.RUNNING,
                                    heartbeat_at=long_ago)
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() LIMIT 1")
        row = cursor.fetchone()
    if row is None:
        pytest.skip("no other backend to point at")
    # any existing backend started after "a day ago": it cannot be the run's worker
    ScoringRun.objects.filter(pk=run.pk).update(db_backend_pid=row[0])
    result = runs_reap_stale(older_than=timedelta(hours=1))
    assert result.scoring_runs == [run.pk] and result.queries_cancelled == 0


def test_simultaneous_api_uploads_of_the_same_new_names_never_answer_500():
    import io

    from django.test import Client, override_settings
    from django.urls import reverse

    from annotate.api.services import api_token_create
    from tests.annotate.factories import make_user

    token = api_token_create(user=make_user("owner", staff=True))[1]
    bodies = [("a.csv", b"question_id,m-shared,m-a\nq1,1,0\nq2,0,1\n"),
              ("b.csv", b"question_id,m-shared,m-b\nq2,1,1\nq3,0,0\n")]
    barrier = threading.Barrier(2)
    statuses = []

    def post(name, content):
        def fn():
            file = io.BytesIO(content)
            file.name = name
            client = Client(HTTP_AUTHORIZATION=f"Token {token}")
            barrier.wait()
            statuses.append(client.post(reverse("annotate:api_response_sets"),
                                        {"responses": file, "dataset": "api-new", "file_format": "wide"}).status_code)
        return fn

    with override_settings(TASKS={"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}):
        errors = run_threads([post(*body) for body in bodies])
    assert errors == []
    assert all(status < 500 for status in statuses), statuses
    if statuses == [201, 201]:  # loaded inside the request (background loads answer 202)
        assert Dataset.objects.filter(name="api-new").count() == 1
        assert sorted(LanguageModel.objects.values_list("name", flat=True)) == ["m-a", "m-b", "m-shared"]
        assert n_stored_responses() == 8  # 2 questions x 2 models per file


def test_identical_scoring_requests_sent_at_once_queue_one_run():
    from django.test import override_settings

    from annotate.runs.services.scoring import scoring_run_request

    catalog = make_catalog(per_subject=3)
    n = 4
    barrier = threading.Barrier(n)
    outcomes = []

    def ask():
        barrier.wait()
        outcomes.append(scoring_run_request(response_set=catalog.response_set, params={"methods": ["eip", "accuracy"]}))

    with override_settings(TASKS={"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}):
        errors = run_threads([ask] * n)
    assert errors == []
    assert sorted(o.created for o in outcomes) == [False] * (n - 1) + [True]
    assert len({o.run.pk for o in outcomes}) == 1
    assert ScoringRun.objects.filter(status=RunStatus.QUEUED).count() == 1
