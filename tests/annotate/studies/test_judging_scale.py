"""Judging cost does not grow with the study (issue 16, point 4): a GET of the
judging page writes nothing, and serving plus answering take the same number
of queries at 70 pairs and at 5,000.

Cast: ``ada`` judges; ``bo`` has voted on some pairs before her.
"""
from __future__ import annotations

import dataclasses

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Assignment, Judgment, Pair
from annotate.studies.selectors.studies import (
    evaluator_order_position,
    evaluator_order_positions,
    participation_state,
)
from annotate.studies.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import make_catalog, make_evaluator, make_study
from tests.annotate.judging_forms import form_data, form_ids

pytestmark = pytest.mark.django_db

WRITES = ("INSERT", "UPDATE", "DELETE")
#: Queries of the POST of an answer and of the GET that follows, whatever the study size (session, user and
#: participation reads included; the participation comes with its study's stopping rules, and the evaluator's
#: counts come in one row; the exact figures are pinned in test_judging_queries.py).
MAX_QUERIES_POST = 11
MAX_QUERIES_GET = 4


def judge_url(study) -> str:
    return reverse("annotate:study_judge", kwargs={"study_id": study.pk})


def ready_client(study, username: str) -> tuple[object, Client]:
    """An onboarded evaluator who has just accepted the guidelines through the page."""
    participation = make_evaluator(study, username)
    client = Client()
    client.force_login(participation.user)
    response = client.post(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk}))
    assert response.status_code == 302
    return participation, client


def on_screen(client: Client, study) -> tuple[int, int]:
    response = client.get(judge_url(study))
    assert response.status_code == 200
    return form_ids(client, study, response.content.decode())


def writes_in(queries) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(WRITES)]


def _spec_position(seed: int, n: int, index: int) -> int:
    """The order as its docstring specifies it, written out here: splitmix64's finaliser as the round function,
    4 Feistel rounds keyed by mix(seed * 4 + round) on the smallest even bit width covering n, cycle-walked."""
    m64 = (1 << 64) - 1

    def mix(x: int) -> int:
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m64
        return x ^ (x >> 31)

    bits = max(2, (n - 1).bit_length() + ((n - 1).bit_length() % 2))
    half = bits // 2
    x = index
    while True:
        left, right = x >> half, x & ((1 << half) - 1)
        for r in range(4):
            left, right = right, left ^ (mix(right ^ mix((seed * 4 + r) & m64)) & ((1 << half) - 1))
        x = (left << half) | right
        if x < n:
            return x


def test_a_chunk_of_the_order_is_the_specified_order_at_each_of_its_indices():
    for n, seed in ((70, 9), (5001, -17), (1, 3), (64, 4)):
        indices = range(0, n, max(1, n // 64))
        want = [_spec_position(seed, n, k) for k in indices]
        assert evaluator_order_positions(seed=seed, n=n, indices=indices) == want
        assert [evaluator_order_position(seed=seed, n=n, index=k) for k in indices] == want


def test_the_order_is_a_permutation_of_the_positions():
    for n in (1, 2, 3, 7, 64, 70, 1000, 5001):
        for seed in (0, 1, 2**62 + 5, -17):
            order = [evaluator_order_position(seed=seed, n=n, index=k) for k in range(n)]
            assert sorted(order) == list(range(n))
    first = {tuple(evaluator_order_position(seed=s, n=70, index=k) for k in range(70)) for s in range(20)}
    assert len(first) == 20  # 20 seeds, 20 different orders


def test_a_get_of_the_judging_page_writes_nothing():
    study = make_study(make_catalog(per_subject=6), n_pairs=10, seed=4)
    participation, client = ready_client(study, "ada")
    assert Assignment.objects.filter(participation=participation).count() == 1  # written by the guidelines POST
    for _ in range(3):
        with CaptureQueriesContext(connection) as ctx:
            pair_id, left_id = on_screen(client, study)
        assert writes_in(ctx.captured_queries) == []
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(judge_url(study)).status_code == 200  # a refresh: still nothing written
        assert writes_in(ctx.captured_queries) == []
        response = client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left"))
        assert response.status_code == 302
    assert Judgment.objects.filter(participation=participation).count() == 3


def test_shown_at_is_the_time_of_the_post_that_put_the_pair_on_screen():
    study = make_study(make_catalog(per_subject=6), n_pairs=10, seed=4)
    participation, client = ready_client(study, "ada")
    pair_id, left_id = on_screen(client, study)
    client.post(judge_url(study), form_data(client, study, pair_id, left_id, "right"))
    first = Judgment.objects.get(participation=participation)
    following = Assignment.objects.filter(participation=participation).exclude(pair_id=pair_id).get()
    # The next assignment was written by the answer's POST, at its submission time.
    assert following.shown_at == first.submitted_at


def test_votes_per_pair_are_kept_and_skips_do_not_count():
    study = make_study(make_catalog(per_subject=6), n_pairs=6, seed=2)
    for name, choice in (("ada", "left"), ("bo", "skip"), ("cy", "right")):
        participation = make_evaluator(study, name)
        screen = judging_screen(participation=participation)
        judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                        choice=choice)
    stored = {p.pk: p.n_votes for p in Pair.objects.filter(study=study)}
    counted = {p.pk: Judgment.objects.filter(pair=p, choice__in=("left", "right")).count()
               for p in Pair.objects.filter(study=study)}
    assert stored == counted and sum(stored.values()) == 2


def study_of(n_pairs: int, per_subject: int):
    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=per_subject), n_pairs=n_pairs, seed=9)
    assert Pair.objects.filter(study=study).count() == n_pairs
    bo = make_evaluator(study, f"bo{n_pairs}")
    for _ in range(5):  # some votes elsewhere in the study
        screen = judging_screen(participation=bo)
        judgment_submit(participation=bo, pair_id=screen.pair.pk, left_question_id=screen.left.pk, choice="left")
    return study


def round_trip_queries(study, assert_max) -> tuple[int, int]:
    """Queries of the POST of an answer and of the GET that follows (the third answer)."""
    _participation, client = ready_client(study, f"ada{study.pk}")
    for _ in range(2):
        pair_id, left_id = on_screen(client, study)
        client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left"))
    pair_id, left_id = on_screen(client, study)
    data = form_data(client, study, pair_id, left_id, "left")  # the tokens, read before counting
    with assert_max(MAX_QUERIES_POST), CaptureQueriesContext(connection) as post:
        assert client.post(judge_url(study), data).status_code == 302
    with assert_max(MAX_QUERIES_GET), CaptureQueriesContext(connection) as get:
        assert client.get(judge_url(study)).status_code == 200
    return len(post.captured_queries), len(get.captured_queries)


@pytest.mark.slow
def test_the_queries_per_judging_request_do_not_grow_with_the_study(django_assert_max_num_queries):
    small = round_trip_queries(study_of(70, per_subject=13), django_assert_max_num_queries)  # C(13, 2) = 78
    large = round_trip_queries(study_of(5000, per_subject=101), django_assert_max_num_queries)  # C(101, 2) = 5,050
    assert small == large


def test_a_finished_evaluator_is_stamped_by_the_post_of_the_last_answer():
    study = make_study(make_catalog(per_subject=3), n_pairs=2, seed=1)
    participation, client = ready_client(study, "ada")
    for _ in range(2):
        pair_id, left_id = on_screen(client, study)
        client.post(judge_url(study), form_data(client, study, pair_id, left_id, "skip"))
    participation.refresh_from_db()
    assert participation.finished_at is not None
    state = participation_state(participation=participation)
    assert (state.progress.judged, state.progress.skipped, state.progress.remaining) == (0, 2, 0)
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(judge_url(study)).url == reverse("annotate:study_done", kwargs={"study_id": study.pk})
    assert writes_in(ctx.captured_queries) == []


def test_a_pair_another_tab_assigned_a_moment_ago_is_kept_not_written_again(monkeypatch):
    """The race: another tab's request assigns the pair between this request's walk to it and its insert."""
    from datetime import timedelta

    from django.utils import timezone

    from annotate.studies.selectors.studies import participation_next_pair
    from annotate.studies.services import judging as judging_service
    from annotate.studies.services.judging import judging_assign_next

    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=6), n_pairs=8, seed=5)
    participation = make_evaluator(study, "ada")
    state = participation_state(participation=participation)  # read before the other tab wrote
    assert state.open_assignments == ()
    found = participation_next_pair(participation=participation, n_offerable=state.n_offerable, n_pairs=state.n_pairs)
    earlier = timezone.now() - timedelta(seconds=3)
    theirs = Assignment.objects.create(participation=participation, pair_id=found.pair_id,
                                       left_question_id=found.question_b_id, shown_at=earlier)
    monkeypatch.setattr(judging_service, "participation_next_pair", lambda **_: found)  # the walk ran before
    got = judging_assign_next(participation=participation, state=state)
    assert (got.pk, got.left_question_id, got.shown_at) == (theirs.pk, found.question_b_id, earlier)
    assert Assignment.objects.filter(participation=participation).count() == 1
    participation.refresh_from_db()
    assert participation.order_cursor == found.cursor


def test_an_answer_whose_next_pair_another_tab_just_assigned_is_kept(monkeypatch):
    """The same race inside an answer's transaction (the hot path): the answer and its vote stay, the other tab's
    assignment stands, nothing is written twice."""
    from django.utils import timezone

    from annotate.studies.selectors.studies import NextPair, participation_get
    from annotate.studies.services import judging as judging_service

    study = make_study(make_catalog(subjects=("Mathematics",), per_subject=6), n_pairs=8, seed=5)
    participation = participation_get(study_id=study.pk, user=make_evaluator(study, "ada").user)  # as the view reads it
    assert judging_service._assigns_with_the_answer(participation)  # the hot path: one transaction
    screen = judging_screen(participation=participation)
    other = Pair.objects.filter(study=study).exclude(pk=screen.pair.pk).order_by("position").first()
    theirs = Assignment.objects.create(participation=participation, pair=other, left_question_id=other.question_a_id,
                                       shown_at=timezone.now())
    found = NextPair(pair_id=other.pk, cursor=participation.order_cursor + 1, question_a_id=other.question_a_id,
                     question_b_id=other.question_b_id)
    real_state = judging_service.participation_state
    monkeypatch.setattr(judging_service, "participation_state",  # read before the other tab wrote: nothing open
                        lambda **kw: dataclasses.replace(real_state(**kw), open_assignments=()))
    monkeypatch.setattr(judging_service, "participation_next_pair", lambda **_: found)
    result = judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                             choice="left", assign_next=True)
    assert result.created
    assert list(Judgment.objects.filter(participation=participation).values_list("pair_id", "choice")) == [
        (screen.pair.pk, "left")]
    assert Pair.objects.get(pk=screen.pair.pk).n_votes == 1
    assert Assignment.objects.get(participation=participation, pair=other).pk == theirs.pk
    assert Assignment.objects.filter(participation=participation).count() == 2
