"""An adaptive study's next pair is chosen before the answer's transaction, with the answer counted in memory
(:func:`annotate.studies.services.adaptive.adaptive_next_ahead`); it must be the pair a choice made after the
answer's commit gives, from the same votes, shown pairs and seeds (what the site chose before it chose ahead).

Each answer below is posted through the judging page; then the choice is made again the old way, from the
database as the answer left it (:func:`adaptive_choose` with the evaluator's shown pairs before the new one), and
the votes the POST's choice fitted are compared with those of the committed database.

Cast: ``ada``, ``ben`` and ``cy`` judge in turns in a study of 12 questions with attention checks and earlier votes;
``cy`` is excluded from the analyses half-way (their later answers are no votes); answers cycle left, right,
skip.
"""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from annotate.models import Assignment, Judgment, Pair
from annotate.studies.services import adaptive as adaptive_module, judging as judging_service
from annotate.studies.services.adaptive import adaptive_choose, adaptive_estimates_forget
from annotate.studies.services.adaptive_reads import study_reads
from annotate.studies.services.study_quality import participation_exclude
from tests.annotate.factories import make_catalog
from tests.annotate.judging_forms import form_data
from tests.annotate.studies.test_adaptive_estimate import Votes
from tests.annotate.studies.test_judging_adaptive import adaptive_study, judge_url, on_screen, ready_client

pytestmark = pytest.mark.django_db

CHOICES = ("left", "right", "skip")


@pytest.fixture
def fitted(monkeypatch):
    """The vote codes (sorted ``harder * n + easier``, positions in the pool) of every fit the choices ask for."""
    seen: list[bytes] = []
    real = adaptive_module._estimate

    def recording(n, harder, easier, *, study):
        seen.append(np.sort(harder.astype(np.int64) * n + easier).tobytes())
        return real(n, harder, easier, study=study)

    monkeypatch.setattr(adaptive_module, "_estimate", recording)
    return seen


def committed_codes(study) -> bytes:
    """The vote codes of the study as its database holds them now."""
    reads = study_reads(study_id=study.pk)
    qids, n = reads.questions, len(reads.questions)
    h, e = np.searchsorted(qids, reads.harder), np.searchsorted(qids, reads.easier)
    return np.sort(h.astype(np.int64) * n + e).tobytes()


def shown_before_newest(participation) -> list[tuple[int, int, int, bool]]:
    rows = (Assignment.objects.filter(participation=participation).select_related("pair").order_by("shown_at", "id"))
    return [(x.pair_id, x.pair.question_a_id, x.pair.question_b_id, x.pair.attention_check) for x in rows][:-1]


def newest_pair(participation) -> Pair:
    return Assignment.objects.filter(participation=participation).select_related("pair").latest("shown_at", "id").pair


def test_each_pair_chosen_ahead_is_the_pair_chosen_after_the_commit(fitted):
    adaptive_estimates_forget()
    catalog = make_catalog(subjects=("Mathematics",), per_subject=12)
    study = adaptive_study(catalog, per_evaluator=12, min_comparisons=2, random_share=0.2,
                           attention_check_share=0.2)
    assert Pair.objects.filter(study=study, attention_check=True).exists()
    votes = Votes(study, seed=11)
    for _ in range(10):
        votes.add()
    cast = {name: ready_client(study, name) for name in ("ada", "ben", "cy")}
    compared = checks = 0
    for turn in range(30):
        name = ("ada", "ben", "cy")[turn % 3]
        participation, client = cast[name]
        if turn == 15:
            participation_exclude(participation=cast["cy"][0], reason="test", by=None)
        shown = on_screen(client, study)
        if shown is None:
            continue
        pair_id, left_id = shown
        fits_before = len(fitted)
        data = form_data(client, study, pair_id, left_id, CHOICES[(turn // 3) % 3])  # each evaluator cycles
        assert client.post(judge_url(study), data).status_code == 302
        served = newest_pair(participation)
        if served.pk == pair_id:  # nothing new was served (the evaluator is done)
            continue
        if served.attention_check:
            checks += 1
            continue
        # The choice the POST made fitted exactly the votes the database holds after its commit ...
        assert len(fitted) == fits_before + 1 and fitted[-1] == committed_codes(study)
        # ... and chose what a choice after the commit chooses.
        again = adaptive_choose(study=study, participation=participation, shown=shown_before_newest(participation))
        assert again is not None and {*again} == {served.question_a_id, served.question_b_id}
        compared += 1
    assert compared >= 20 and checks >= 1


@pytest.mark.django_db(transaction=True)
def test_the_answer_its_pair_and_the_next_assignment_commit_once(monkeypatch):
    study = adaptive_study(make_catalog(subjects=("Mathematics",), per_subject=8), per_evaluator=6)
    participation, client = ready_client(study, "ada")
    pair_id, left_id = on_screen(client, study)
    commits: list[int] = []
    real_commit = connection.commit
    monkeypatch.setattr(connection, "commit", lambda: commits.append(1) or real_commit())
    assert client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left")).status_code == 302
    monkeypatch.undo()
    assert commits == [1]
    assert Judgment.objects.filter(participation=participation).count() == 1
    assert Assignment.objects.filter(participation=participation, pair__judgments=None).count() == 1
    assert Pair.objects.get(pk=pair_id).n_votes == 1


def test_an_answer_whose_next_pair_cannot_be_stored_leaves_nothing(monkeypatch):
    study = adaptive_study(make_catalog(subjects=("Mathematics",), per_subject=8), per_evaluator=6)
    participation, client = ready_client(study, "ada")
    pair_id, left_id = on_screen(client, study)
    pairs_before = Pair.objects.filter(study=study).count()

    def broken(**kwargs):
        raise RuntimeError("the next pair could not be stored")

    monkeypatch.setattr(judging_service, "adaptive_pair_of", broken)
    with pytest.raises(RuntimeError):
        client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left"))
    monkeypatch.undo()
    assert Judgment.objects.filter(participation=participation).count() == 0
    assert Pair.objects.get(pk=pair_id).n_votes == 0
    assert Pair.objects.filter(study=study).count() == pairs_before
    # Sent again, the answer is stored once, with its vote and the next pair.
    assert client.post(judge_url(study), form_data(client, study, pair_id, left_id, "left")).status_code == 302
    assert Judgment.objects.filter(participation=participation).count() == 1
    assert Assignment.objects.filter(participation=participation, pair__judgments=None).count() == 1
