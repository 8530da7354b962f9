"""Concurrent submissions on PostgreSQL: no lost and no duplicate judgments.

Several evaluators, each with two "tabs" (threads), judge the same study at
once; the two tabs of an evaluator start on the same pair and submit it
together. Runs only on PostgreSQL (SQLite serialises writers, so it would
prove nothing): ``DATABASE_URL=postgres://postgres@127.0.0.1:5432/test``.
"""
from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.test import Client
from django.urls import reverse

from annotate.models import Judgment
from annotate.studies.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import make_catalog, make_evaluator, make_study
from tests.annotate.judging_forms import form_data, form_ids

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]



@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL: run with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test "
            f"(this run uses {connection.vendor})"
        )


def run_threads(targets) -> list[BaseException]:
    errors: list[BaseException] = []

    def wrap(fn):
        def inner():
            try:
                fn()
            except BaseException as exc:  # reported to the test below
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


def test_simultaneous_duplicates_of_one_pair_store_exactly_one_judgment():
    study = make_study(make_catalog(per_subject=4), n_pairs=4)
    ada = make_evaluator(study, "ada")
    screen = judging_screen(participation=ada)
    n = 8
    barrier = threading.Barrier(n)
    results = []

    def submit(k):
        def fn():
            barrier.wait()
            result = judgment_submit(participation=ada, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                                     choice="left" if k % 2 else "right")
            results.append(result.created)
        return fn

    errors = run_threads([submit(k) for k in range(n)])
    assert errors == []
    assert sorted(results) == [False] * (n - 1) + [True]
    assert Judgment.objects.filter(participation=ada, pair=screen.pair).count() == 1


def test_many_evaluators_with_two_tabs_each_lose_nothing_and_duplicate_nothing():
    n_pairs, n_evaluators = 8, 6
    study = make_study(make_catalog(per_subject=4), n_pairs=n_pairs, target=100)
    evaluators = [make_evaluator(study, f"ev{k}") for k in range(n_evaluators)]
    url = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    start = threading.Barrier(2 * n_evaluators)
    posted: list[tuple[int, int, int]] = []  # (participation, pair, status)
    statuses: list[int] = []

    def tab(participation, choice):
        def fn():
            client = Client()
            client.force_login(participation.user)
            first = True
            for _ in range(4 * n_pairs):  # bounded: at most 8 answers + repeats
                page = client.get(url)
                statuses.append(page.status_code)
                if page.status_code == 302:  # done
                    assert page.url.endswith("/done/")
                    return
                pair_id, left_id = form_ids(client, study, page.content.decode())
                if first:  # both tabs now hold the same pair; submit together
                    start.wait()
                    first = False
                response = client.post(url, form_data(client, study, pair_id, left_id, choice))
                statuses.append(response.status_code)
                posted.append((participation.pk, pair_id, response.status_code))
            raise AssertionError("tab did not finish")
        return fn

    targets = [tab(p, c) for p in evaluators for c in ("left", "right")]
    errors = run_threads(targets)
    assert errors == []
    assert set(statuses) <= {200, 302}, sorted(set(statuses))
    stored = list(Judgment.objects.filter(pair__study=study).values_list("participation_id", "pair_id"))
    assert len(stored) == len(set(stored)) == n_evaluators * n_pairs  # no duplicates, none missing
    assert {(p, q) for p, q, _ in posted} == set(stored)  # every accepted answer is stored
    assert len(posted) > len(stored)  # duplicates really were submitted
