"""Adaptive studies judged through the pages (issue 15, point 3): each next
pair is chosen while the study runs, from the pool's same-subject questions.

Cast: a 2-subject catalog of 6 questions each (the pool: 2 x 15 = 30
possible pairs); evaluators ``e0`` .. ``e5`` judge through the Django test
client, always calling the question with the lower catalog index harder.
"""
from __future__ import annotations

import csv
import io
import json
import re
import threading
import zlib
from io import StringIO

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotate.api.payloads import study_out
from annotate.models import AdaptivePoolQuestion, Assignment, Judgment, Pair, PairStrategy, Participation, Study
from annotate.reports.services import alignment_report_compute
from annotate.reports.services.report_files import report_files
from annotate.reports.services.scale import ADAPTIVE_SSR_NOTE
from annotate.studies.forms.studies import ADAPTIVE_HELP, ERR_ADAPTIVE_PER_SUBJECT as FORM_ERR_PER_SUBJECT
from annotate.studies.selectors.studies import participation_state
from annotate.studies.services import adaptive as adaptive_module
from annotate.studies.services.adaptive import adaptive_choose, pair_get_or_create
from annotate.studies.services.scope import ERR_ADAPTIVE_PER_SUBJECT
from annotate.studies.services.studies import ERR_ADAPTIVE_MIN, ERR_ADAPTIVE_SHARE, study_create
from annotate.studies.services.study_transfer import study_import
from annotate.studies.services.transfer_export import dump_export, study_export
from tests.annotate.factories import make_catalog, make_evaluator, make_researcher, make_study
from tests.annotate.judging_forms import FORM_RE, form_data, form_ids
from tests.annotate.reports.test_schema import SCHEMA, errors

pytestmark = pytest.mark.django_db

WRITES = ("INSERT", "UPDATE", "DELETE")


def adaptive_study(catalog, *, per_evaluator: int = 8, min_comparisons: int = 2, random_share: float = 0.1,
                   attention_check_share: float = 0.0, name: str = "Adaptive"):
    return study_create(
        name=name, run=catalog.run, datasets=[catalog.dataset], n_pairs=per_evaluator, seed=5,
        strategy=PairStrategy.ADAPTIVE, adaptive_min_comparisons=min_comparisons,
        adaptive_random_share=random_share, attention_check_share=attention_check_share,
    )


def judge_url(study) -> str:
    return reverse("annotate:study_judge", kwargs={"study_id": study.pk})


def ready_client(study, username: str) -> tuple[Participation, Client]:
    """An onboarded evaluator who accepted the guidelines through the page (which serves their first pair); their
    seed (which drives the kernel's random draws) is fixed by their name, so every run chooses the same pairs."""
    participation = make_evaluator(study, username)
    participation.seed = zlib.crc32(username.encode())
    participation.save(update_fields=["seed"])
    client = Client()
    client.force_login(participation.user)
    response = client.post(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk}))
    assert response.status_code == 302
    return participation, client


def on_screen(client: Client, study) -> tuple[int, int] | None:
    response = client.get(judge_url(study))
    if response.status_code == 302:
        return None
    assert response.status_code == 200
    found = FORM_RE.search(response.content.decode())
    return None if found is None else form_ids(client, study, response.content.decode())


def judge_all(client: Client, study, rank: dict[int, int], *, limit: int = 100) -> int:
    """Answer every pair served (lower rank = harder); the number answered."""
    n = 0
    while n < limit:
        shown = on_screen(client, study)
        if shown is None:
            return n
        pair_id, left_id = shown
        pair = Pair.objects.get(pk=pair_id)
        right_id = pair.question_b_id if left_id == pair.question_a_id else pair.question_a_id
        choice = "left" if rank[left_id] < rank[right_id] else "right"
        response = client.post(judge_url(study), form_data(client, study, pair_id, left_id, choice))
        assert response.status_code == 302
        n += 1
    raise AssertionError("the evaluator never finished")


def test_creation_stores_the_pool_and_no_pair():
    catalog = make_catalog(per_subject=6, unkept=1)
    study = adaptive_study(catalog, per_evaluator=7)
    assert study.n_pairs == 7
    assert Pair.objects.filter(study=study).count() == 0
    pool = set(AdaptivePoolQuestion.objects.filter(study=study).values_list("question_id", flat=True))
    kept = {q.pk for i, q in enumerate(catalog.questions) if i % 6 >= 1}
    assert pool == kept  # 10 eligible questions: the unkept one of each subject stays out
    assert len(pool) == 10


def test_settings_are_validated():
    catalog = make_catalog(per_subject=4)
    with pytest.raises(ValueError, match=re.escape(ERR_ADAPTIVE_MIN.format(value=-1))):
        adaptive_study(catalog, min_comparisons=-1)
    with pytest.raises(ValueError, match=re.escape(ERR_ADAPTIVE_SHARE.format(value=1.5))):
        adaptive_study(catalog, random_share=1.5)
    with pytest.raises(ValueError, match=re.escape(ERR_ADAPTIVE_PER_SUBJECT.format(value=3))):
        study_create(name="per subject", run=catalog.run, datasets=[catalog.dataset], pairs_per_subject=3,
                     seed=1, strategy=PairStrategy.ADAPTIVE)


def test_several_evaluators_judge_an_adaptive_study():
    catalog = make_catalog(per_subject=6)
    study = adaptive_study(catalog, per_evaluator=6, min_comparisons=2)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    subject_of = {q.pk: q.subject_id for q in catalog.questions}
    pool = set(AdaptivePoolQuestion.objects.filter(study=study).values_list("question_id", flat=True))
    clients = [ready_client(study, f"e{k}") for k in range(4)]
    for participation, client in clients:
        assert judge_all(client, study, rank) == 6
        participation.refresh_from_db()
        assert participation.finished_at is not None
        state = participation_state(participation=participation)
        assert (state.progress.judged, state.progress.remaining, state.progress.total) == (6, 0, 6)
    pairs = list(Pair.objects.filter(study=study))
    assert all(p.question_a_id in pool and p.question_b_id in pool for p in pairs)
    assert all(subject_of[p.question_a_id] == subject_of[p.question_b_id] for p in pairs)
    for participation, _ in clients:
        mine = list(Assignment.objects.filter(participation=participation).values_list("pair_id", flat=True))
        assert len(mine) == len(set(mine)) == 6  # never the same pair twice
    assert Judgment.objects.filter(pair__study=study).count() == 24
    # Every question got its minimum number of comparisons (24 votes, 4 comparisons per question on average).
    counts = np.zeros(len(catalog.questions), dtype=int)
    for a, b in Judgment.objects.filter(pair__study=study).values_list("pair__question_a_id", "pair__question_b_id"):
        counts[rank[a]] += 1
        counts[rank[b]] += 1
    assert counts.min() >= 2


def test_every_pair_holds_an_under_exposed_question_while_one_exists():
    """The kernel's exposure floor, seen through the pages: with a random share
    of 0, while some question with a pair the evaluator has not seen has fewer
    than 3 votes, every pair served contains such a question."""
    catalog = make_catalog(per_subject=6)
    study = adaptive_study(catalog, per_evaluator=6, min_comparisons=3, random_share=0.0)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    subject_of = {q.pk: q.subject_id for q in catalog.questions}
    clients = [ready_client(study, f"e{k}") for k in range(4)]
    for _, client in clients:
        judge_all(client, study, rank)
    judged = list(Judgment.objects.filter(pair__study=study).values_list(
        "submitted_at", "pair__question_a_id", "pair__question_b_id"))
    served = (Assignment.objects.filter(participation__study=study).order_by("shown_at", "id")
              .values_list("participation_id", "shown_at", "pair__question_a_id", "pair__question_b_id"))
    seen: dict[int, set[frozenset[int]]] = {}
    checked = 0
    for who, shown_at, a, b in served:
        # The votes the choice saw: those submitted up to the moment the pair was served.
        votes = {q.pk: 0 for q in catalog.questions}
        for at, x, y in judged:
            if at <= shown_at:
                votes[x] += 1
                votes[y] += 1
        mine = seen.setdefault(who, set())
        low = {q for q, n in votes.items() if n < 3 and any(
            frozenset((q, r)) not in mine for r in votes if r != q and subject_of[r] == subject_of[q])}
        if low:
            assert a in low or b in low, (a, b, low)
            checked += 1
        mine.add(frozenset((a, b)))
    assert checked >= 18  # 12 questions x 3 votes = 36 comparisons, at most 2 per pair
    final = {q.pk: 0 for q in catalog.questions}
    for _, x, y in judged:
        final[x] += 1
        final[y] += 1
    assert min(final.values()) >= 3  # 24 votes: every question reached the floor


def test_a_get_writes_nothing():
    catalog = make_catalog(per_subject=5)
    study = adaptive_study(catalog, per_evaluator=4)
    participation, client = ready_client(study, "ada")
    assert Assignment.objects.filter(participation=participation).count() == 1
    assert Pair.objects.filter(study=study).count() == 1
    for _ in range(3):
        with CaptureQueriesContext(connection) as ctx:
            pair_id, left_id = on_screen(client, study)
            assert client.get(judge_url(study)).status_code == 200
        assert [q["sql"] for q in ctx.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)] == []
        assert client.post(judge_url(study), form_data(client, study, pair_id, left_id, "skip")).status_code == 302
    assert Pair.objects.filter(study=study).count() == 4


def test_the_page_reveals_no_method_or_setting():
    catalog = make_catalog(per_subject=5)
    study = adaptive_study(catalog, per_evaluator=4, name="Exam questions")
    _, client = ready_client(study, "ada")
    page = client.get(judge_url(study)).content.decode().lower()
    for word in ("adaptive", "random share", "comparisons", "zebrafinch", "marmoset", "bradley"):
        assert word not in page
    assert "remaining 4" in page  # progress: the evaluator's 4 pairs, none decided yet


def test_the_choice_reads_the_votes_of_included_evaluators_only(monkeypatch):
    """``kept`` votes 3 times, ``gone`` 3 times and is then excluded, ``skipper`` skips 3 pairs: the scale
    the kernel gets counts kept's 3 votes only (6 comparisons), the harder question of each above the other."""
    catalog = make_catalog(per_subject=4)
    study = adaptive_study(catalog, per_evaluator=3, min_comparisons=1)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    gone, client = ready_client(study, "gone")
    judge_all(client, study, rank)
    Participation.objects.filter(pk=gone.pk).update(excluded_at=timezone.now())
    kept, client = ready_client(study, "kept")
    judge_all(client, study, rank)
    skipper, client = ready_client(study, "skipper")
    for _ in range(3):
        pair_id, left_id = on_screen(client, study)
        client.post(judge_url(study), form_data(client, study, pair_id, left_id, "skip"))
    assert Judgment.objects.filter(participation=skipper, choice="skip").count() == 3
    estimates = []
    real = adaptive_module.choose_next_pair

    def spy(**kwargs):
        estimates.append(kwargs["estimate"])
        return real(**kwargs)

    monkeypatch.setattr(adaptive_module, "choose_next_pair", spy)
    assert adaptive_choose(study=study, participation=make_evaluator(study, "next"), shown=[]) is not None
    pool = sorted(AdaptivePoolQuestion.objects.filter(study=study).values_list("question_id", flat=True))
    estimate = estimates[0]
    assert estimate.n_comparisons.sum() == 6
    for harder, a, b in Judgment.objects.filter(participation=kept).values_list(
            "harder_question_id", "pair__question_a_id", "pair__question_b_id"):
        easier = b if harder == a else a
        assert rank[harder] < rank[easier]  # judge_all calls the lower catalog index harder
        assert estimate.b[pool.index(harder)] > estimate.b[pool.index(easier)]


def test_two_evaluators_racing_for_the_same_new_pair_get_one_row():
    catalog = make_catalog(per_subject=3)
    study = adaptive_study(catalog, per_evaluator=2)
    a, b = catalog.questions[0].pk, catalog.questions[1].pk
    first = pair_get_or_create(study=study, question_a_id=a, question_b_id=b)
    second = pair_get_or_create(study=study, question_a_id=b, question_b_id=a)
    assert first.pk == second.pk
    assert Pair.objects.filter(study=study).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_inserts_of_one_pair_make_one_row():
    """Two threads (two connections) insert the same new pair at once."""
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith(("file:memorydb", ":memory:")):
        pytest.skip("threads need a database shared between connections (run on PostgreSQL)")
    catalog = make_catalog(per_subject=3)
    study = adaptive_study(catalog, per_evaluator=2)
    a, b = catalog.questions[0].pk, catalog.questions[1].pk
    barrier = threading.Barrier(2)
    got: list[int] = []
    errors: list[BaseException] = []

    def insert(x: int, y: int) -> None:
        try:
            barrier.wait(timeout=10)
            got.append(pair_get_or_create(study=study, question_a_id=x, question_b_id=y).pk)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=insert, args=(a, b)), threading.Thread(target=insert, args=(b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(got) == 2 and got[0] == got[1]
    assert Pair.objects.filter(study=study).count() == 1


def test_attention_checks_are_served_once_to_each_evaluator():
    catalog = make_catalog(subjects=("Mathematics",), per_subject=12)
    study = adaptive_study(catalog, per_evaluator=8, attention_check_share=0.2)
    checks = list(Pair.objects.filter(study=study, attention_check=True).values_list("pk", flat=True))
    assert len(checks) == 2  # round(0.2 * 8 / 0.8)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    for k in range(2):
        participation, client = ready_client(study, f"c{k}")
        assert judge_all(client, study, rank) == 10
        mine = list(Assignment.objects.filter(participation=participation).values_list("pair_id", flat=True))
        assert sorted(p for p in mine if p in checks) == sorted(checks)
        assert len(set(mine)) == 10
    assert Pair.objects.filter(study=study, attention_check=False).count() >= 8


@pytest.mark.slow
def test_the_report_of_an_adaptive_study_says_to_trust_split_half():
    catalog = make_catalog(per_subject=6)
    study = adaptive_study(catalog, per_evaluator=6, min_comparisons=2)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    for k in range(3):
        judge_all(ready_client(study, f"e{k}")[1], study, rank)
    report = alignment_report_compute(study=study, n_boot=20, rng=1)
    document = report.to_json()
    assert errors(document, SCHEMA) == []
    hs = document["human_scale"]
    assert hs["available"] and hs["n_votes"] == 18
    assert hs["adaptive"] is True
    assert hs["reliability_note"] == ADAPTIVE_SSR_NOTE and "Bramley & Vitello, 2019" in hs["reliability_note"]
    assert hs["ssr"] is not None and hs["split_half"] is not None  # both figures, side by side
    summary = list(csv.DictReader(io.StringIO(report_files(report, [])["human_scale_summary.csv"].decode())))
    assert summary[0]["reliability_note"] == ADAPTIVE_SSR_NOTE
    assert float(summary[0]["ssr"]) == pytest.approx(hs["ssr"], abs=1e-6)
    researcher = make_researcher("rhea")
    study.members.add(researcher)
    client = Client()
    client.force_login(researcher)
    cache.clear()
    page = client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}), {"n_boot": 20})
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="human-scale-adaptive"' in html and "inflates SSR (Bramley &amp; Vitello, 2019)" in html
    assert "split-half" in html


def test_a_uniform_study_report_has_no_adaptive_note():
    study = make_study(make_catalog(per_subject=4), n_pairs=4)
    document = alignment_report_compute(study=study, n_boot=20, rng=1).to_json()
    assert document["human_scale"]["adaptive"] is False
    assert "reliability_note" not in document["human_scale"]


def test_the_creation_page_makes_an_adaptive_study_and_explains_it():
    catalog = make_catalog(per_subject=6)
    olga = make_researcher("olga")
    client = Client()
    client.force_login(olga)
    page = client.get(reverse("annotate:study_create")).content.decode()
    assert 'value="adaptive"' in page
    assert escape(ADAPTIVE_HELP) in page  # one sentence on what adaptive does
    data = {
        "name": "Adaptive from the page", "run": catalog.run.pk, "datasets": [catalog.dataset.pk],
        "pairs_mode": "total", "n_pairs": 9, "strategy": "adaptive", "target_judgments_per_pair": 5, "seed": 42,
        "adaptive_min_comparisons": 4, "adaptive_random_share": 0.25, "guidelines": "Pick.", "consent_text": "Yes.",
        "onboarding_questions": ["education_level"],
    }
    response = client.post(reverse("annotate:study_create"), data)
    study = Study.objects.get(name="Adaptive from the page")
    assert response.status_code == 302
    assert (study.strategy, study.n_pairs, study.adaptive_min_comparisons, study.adaptive_random_share) == (
        "adaptive", 9, 4, 0.25)
    assert study.pool.count() == 12 and study.pairs.count() == 0
    manage = client.get(response.url).content.decode()
    assert "9 pairs per evaluator, chosen adaptively from a pool of 12 questions" in manage
    edit = client.get(reverse("annotate:study_edit", kwargs={"study_id": study.pk})).content.decode()
    assert 'value="0.25"' in edit and 'name="adaptive_min_comparisons" value="4"' in edit
    refused = client.post(reverse("annotate:study_create"),
                          {**data, "name": "Per subject", "pairs_mode": "per_subject"})
    assert refused.status_code == 400 and not Study.objects.filter(name="Per subject").exists()
    assert escape(FORM_ERR_PER_SUBJECT) in refused.content.decode()
    bad = client.post(reverse("annotate:study_create"), {**data, "name": "Bad share", "adaptive_random_share": 2})
    assert bad.status_code == 400 and not Study.objects.filter(name="Bad share").exists()


def test_the_command_and_the_api_carry_the_strategy_and_its_settings():
    catalog = make_catalog(per_subject=6)
    out = StringIO()
    call_command("create_study", "--name", "Adaptive command", "--datasets", catalog.dataset.name, "--pairs", "7",
                 "--strategy", "adaptive", "--min-comparisons", "3", "--random-share", "0.2",
                 "--run", str(catalog.run.pk), "--no-invitation", stdout=out)
    study = Study.objects.get(name="Adaptive command")
    assert (study.strategy, study.n_pairs, study.adaptive_min_comparisons, study.adaptive_random_share) == (
        "adaptive", 7, 3, 0.2)
    assert "adaptive, a pool of 12 questions, 7 pairs per evaluator" in out.getvalue()
    payload = study_out(study)
    assert (payload.strategy, payload.adaptive_min_comparisons, payload.adaptive_random_share) == ("adaptive", 3, 0.2)


def test_an_export_carries_the_strategy_settings_and_pool():
    catalog = make_catalog(per_subject=6, unkept=1)
    study = adaptive_study(catalog, per_evaluator=5, min_comparisons=3, random_share=0.3)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    judge_all(ready_client(study, "ann")[1], study, rank)
    document = json.loads(dump_export(study_export(study=study)))
    assert document["study"]["strategy"] == "adaptive"
    assert (document["study"]["adaptive_min_comparisons"], document["study"]["adaptive_random_share"]) == (3, 0.3)
    assert len(document["study"]["adaptive_pool"]) == 10
    result = study_import(document=document, rename="Adaptive copy", reuse_evaluators=True)
    copy = Study.objects.get(name="Adaptive copy")
    assert result.study.pk == copy.pk
    assert (copy.strategy, copy.n_pairs, copy.adaptive_min_comparisons, copy.adaptive_random_share) == (
        "adaptive", 5, 3, 0.3)
    assert copy.pool.count() == 10
    again = json.loads(dump_export(study_export(study=copy)))
    assert again["study"]["adaptive_pool"] == document["study"]["adaptive_pool"]
    assert again["pairs"] == document["pairs"]


def test_a_fit_that_does_not_converge_still_serves_a_pair_and_keeps_the_answer(monkeypatch, caplog):
    """If the kernel's Bradley-Terry fit fails (ConvergenceError), the next pair comes from a neutral scale that
    still counts each question's votes: the answer that led to it is stored once and a pair is served."""
    catalog = make_catalog(per_subject=4)
    study = adaptive_study(catalog, per_evaluator=3, min_comparisons=1)
    rank = {q.pk: i for i, q in enumerate(catalog.questions)}
    participation, client = ready_client(study, "ada")
    pair_id, left_id = on_screen(client, study)
    real = adaptive_module.scale_estimate
    counts = []

    def failing(n, harder, easier, **kwargs):
        if len(harder):
            raise adaptive_module.ConvergenceError("Bradley-Terry (adaptive estimate)", n_iter=1, residual=1.0,
                                                   tol=1e-9)
        return real(n, harder, easier, **kwargs)

    spy_choose = adaptive_module.choose_next_pair

    def spy(**kwargs):
        counts.append(kwargs["estimate"].n_comparisons.copy())
        return spy_choose(**kwargs)

    monkeypatch.setattr(adaptive_module, "scale_estimate", failing)
    monkeypatch.setattr(adaptive_module, "choose_next_pair", spy)
    pair = Pair.objects.get(pk=pair_id)
    right_id = pair.question_b_id if left_id == pair.question_a_id else pair.question_a_id
    choice = "left" if rank[left_id] < rank[right_id] else "right"
    response = client.post(judge_url(study), form_data(client, study, pair_id, left_id, choice))
    assert response.status_code == 302
    assert Judgment.objects.filter(participation=participation).count() == 1
    assert on_screen(client, study) is not None
    assert counts[-1].sum() == 2  # the one vote counted for both of its questions
    assert counts[-1].max() == 1
    assert "choosing from a neutral scale" in caplog.text


def test_the_scale_estimate_of_a_set_of_votes_is_fitted_once_whatever_their_order(monkeypatch):
    """The service keeps one fit per set of votes: the same votes in another order reuse it, one more vote
    (or forgetting) fits again, and the estimate equals a fresh fit of the kernel."""
    study = adaptive_study(make_catalog(per_subject=4), per_evaluator=3)
    fits = []
    real = adaptive_module.scale_estimate
    monkeypatch.setattr(adaptive_module, "scale_estimate", lambda *a, **k: fits.append(1) or real(*a, **k))
    harder, easier = np.array([0, 2, 5, 0]), np.array([1, 3, 4, 2])
    first = adaptive_module._estimate(8, harder, easier, study=study)
    again = adaptive_module._estimate(8, harder[::-1].copy(), easier[::-1].copy(), study=study)
    assert again is first and len(fits) == 1
    assert np.array_equal(first.b, real(8, harder, easier).b)
    more = adaptive_module._estimate(8, np.append(harder, 6), np.append(easier, 7), study=study)
    assert more is not first and len(fits) == 2
    assert adaptive_module._estimate(8, harder, easier[::-1].copy(), study=study) is not first  # other votes
    adaptive_module.adaptive_estimates_forget()
    assert adaptive_module._estimate(8, harder, easier, study=study) is not first
    assert len(fits) == 4
