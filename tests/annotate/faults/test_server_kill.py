"""Killing the server mid-study loses no stored judgment; evaluators resume.

Four evaluators join a 10-pair study through the invitation link and judge
through gunicorn (production settings, 2 workers) on the PostgreSQL test
database, one thread each, without pause. After 12 acknowledged answers the
whole gunicorn process group gets SIGKILL (requests may be in flight). Then:

* every answer the server had acknowledged (302) is stored, with the choice
  sent, and no (evaluator, pair) is stored twice;
* after a restart, each evaluator's browser (same cookies) lands on the pair
  the database says is theirs next (the one left on screen, if any), with the
  progress counts of what is stored;
* they finish the study: exactly one judgment per evaluator and pair.

PostgreSQL only: the server process must reach the test database, which an
in-memory SQLite test database cannot offer.
"""
from __future__ import annotations

import re
import shutil
import threading
import urllib.error

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count
from django.test import override_settings

from annotate.models import Judgment, Participation
from annotate.studies.selectors.judging_tokens import PAIR, judging_token, judging_token_value
from annotate.studies.selectors.studies import participation_state
from annotate.studies.services.participation import invitation_create
from bench.bench_load_study import BENCH_SECRET_KEY, Browser, GunicornServer, choice_for, prepare_site, production_env
from tests.annotate.factories import make_catalog, make_study

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

N_EVALUATORS = 4
N_PAIRS = 10
KILL_AFTER = 12
PROGRESS = re.compile(r'data-count="judged">Judged (\d+)<.*?data-count="skipped">Skipped (\d+)<', re.S)


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL so that gunicorn can reach the test database: run with "
                    f"DATABASE_URL=postgres://postgres@127.0.0.1:5432/test (this run uses {connection.vendor})")


def _test_database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def test_a_killed_server_loses_nothing_and_evaluators_resume(tmp_path):
    study = make_study(make_catalog(per_subject=6), n_pairs=N_PAIRS, target=1000, name="fault study")
    token = invitation_create(study=study).token
    call_command("createcachetable", verbosity=0)
    env = production_env(_test_database_url(), tmp_path / "static")
    prepare_site(env)  # migrations are already applied: this collects the static files
    server = GunicornServer(env, workers=2, log_path=tmp_path / "gunicorn.log").start()
    browsers = [Browser(server.url("")) for _ in range(N_EVALUATORS)]
    acknowledged: dict[tuple[str, int], str] = {}
    lock = threading.Lock()
    killed = threading.Event()
    errors: list[BaseException] = []

    def evaluate(k: int, browser: Browser) -> None:
        try:
            while not killed.is_set():
                screen = browser.screen(study.pk)
                if screen is None:
                    return
                csrf, pair, left = screen
                choice = choice_for(k, pair)
                if browser.answer(study.pk, csrf, pair, left, choice) == 302:
                    with lock:
                        acknowledged[(browser.username, pair)] = choice
                        if len(acknowledged) >= KILL_AFTER and not killed.is_set():
                            killed.set()
                            server.kill()  # SIGKILL to the master and every worker
        except (urllib.error.URLError, ConnectionError, OSError, RuntimeError) as error:
            if not killed.is_set():  # only the kill may interrupt an evaluator
                errors.append(error)

    try:
        for browser in browsers:
            browser.join(token)
        threads = [threading.Thread(target=evaluate, args=(k, b)) for k, b in enumerate(browsers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == []
        assert killed.is_set(), "the study finished before the kill; raise N_PAIRS"

        # Keyed by the pair as the evaluator's form named it (its token, under the server's secret), as
        # ``acknowledged`` is.
        with override_settings(SECRET_KEY=BENCH_SECRET_KEY):
            stored = {(j.participation.user.username,
                       judging_token(participation=j.participation, value=j.pair_id, kind=PAIR)): j.choice
                      for j in Judgment.objects.filter(pair__study=study).select_related("participation__user")}
        assert len(acknowledged) >= KILL_AFTER
        assert {key: stored.get(key) for key in acknowledged} == acknowledged  # nothing acknowledged was lost
        assert not Judgment.objects.filter(pair__study=study).values("participation", "pair").annotate(
            n=Count("id")).filter(n__gt=1).exists()

        server = GunicornServer(env, workers=2, log_path=tmp_path / "gunicorn-2.log").start()
        for k, browser in enumerate(browsers):
            browser.base = server.url("")
            participation = Participation.objects.get(study=study, user__username=browser.username)
            state = participation_state(participation=participation)
            expected_pair = state.next_pair_id()
            status, text, _ = browser.request(f"/studies/{study.pk}/judge/")
            assert status == 200, (browser.username, status)
            with override_settings(SECRET_KEY=BENCH_SECRET_KEY):  # the server's secret keys its tokens
                expected = judging_token(participation=participation, value=expected_pair, kind=PAIR)
            assert f'name="pair" value="{expected}"' in text  # where they were
            judged, skipped = map(int, PROGRESS.search(text).groups())
            assert (judged, skipped) == (state.progress.judged, state.progress.skipped)
            while (screen := browser.screen(study.pk)) is not None:
                csrf, pair, left = screen
                assert browser.answer(study.pk, csrf, pair, left, choice_for(k, pair)) == 302
        finished = Judgment.objects.filter(pair__study=study)
        assert finished.count() == N_EVALUATORS * N_PAIRS
        assert finished.values("participation", "pair").distinct().count() == N_EVALUATORS * N_PAIRS
        for (username, pair), choice in acknowledged.items():  # pair: the form's token
            participation = Participation.objects.get(study=study, user__username=username)
            with override_settings(SECRET_KEY=BENCH_SECRET_KEY):
                pair_id = judging_token_value(participation=participation, token=pair, kind=PAIR)
            assert finished.get(participation=participation, pair_id=pair_id).choice == choice
    finally:
        server.stop()
        shutil.rmtree(tmp_path / "static", ignore_errors=True)
