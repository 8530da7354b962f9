"""What an adaptive choice reads (:func:`~annotate.studies.services.adaptive_reads.study_reads`): the votes, kept in
the process and extended by the judgments stored since, always equal to a full read of the study's votes; the pool,
kept while unchanged; the attention checks.

Cast: adaptive studies of two subjects of 6 questions; votes stored directly (``Votes`` of the estimate tests: a
pair row made when new and a judgment by the first prior evaluator who has not judged it); ``after`` records the
lowest judgment id each read asked for (0: every judgment of the study).
"""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate.models import AdaptivePoolQuestion, Choice, Judgment, Pair
from annotate.studies.services import adaptive_reads
from annotate.studies.services.adaptive_reads import study_reads
from annotate.studies.services.study_quality import participation_exclude, participation_restore
from tests.annotate.factories import make_catalog, make_evaluator
from tests.annotate.studies.test_adaptive_estimate import Votes, _study
from tests.annotate.studies.test_judging_adaptive import adaptive_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def after(monkeypatch):
    """The ``after`` of every read, in order."""
    seen = []
    real = adaptive_reads._read

    def recording(using, *, study_id, after, **rest):
        seen.append(after)
        return real(using, study_id=study_id, after=after, **rest)

    monkeypatch.setattr(adaptive_reads, "_read", recording)
    return seen


def full_read(study):
    """The study's votes as one query over every judgment gives them: sorted (harder, easier) id pairs."""
    rows = Judgment.objects.filter(pair__study=study, pair__attention_check=False,
                                   choice__in=(Choice.LEFT, Choice.RIGHT),
                                   participation__excluded_at__isnull=True).values_list(
        "harder_question_id", "pair__question_a_id", "pair__question_b_id")
    return sorted((h, b if a == h else a) for h, a, b in rows)


def kept_votes(study):
    reads = study_reads(study_id=study.pk)
    return sorted(zip(reads.harder.tolist(), reads.easier.tolist()))


def judge(participation, pair, *, harder=None, pk=None):
    """A judgment of ``participation`` on ``pair`` (with id ``pk`` when given): ``harder`` judged harder, or a skip
    (None)."""
    now = timezone.now()
    return Judgment.objects.create(
        pk=pk, participation=participation, pair=pair, choice=Choice.SKIP if harder is None else Choice.LEFT,
        left_question_id=pair.question_a_id if harder is None else harder, harder_question_id=harder,
        shown_at=now, submitted_at=now, seconds=1.0)


def test_new_votes_are_read_alone_and_each_read_equals_the_full_read(after):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=1)
    for _ in range(5):
        votes.add()
    assert kept_votes(study) == full_read(study) and len(full_read(study)) == 5
    for _ in range(6):
        votes.add()
        top = Judgment.objects.filter(pair__study=study).order_by("-pk").values_list("pk", flat=True)[1]
        with CaptureQueriesContext(connection) as queries:
            kept = kept_votes(study)
        assert kept == full_read(study)
        assert len(queries.captured_queries) == 1  # the tally, the new judgment, the pool's signature, the checks
        assert after[-1] == top  # only the judgments above the largest one kept
    assert after[0] == 0 and 0 not in after[1:]
    assert len(full_read(study)) == 11


def test_skips_and_attention_checks_are_judgments_but_not_votes(after):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=2)
    votes.add()
    kept_votes(study)
    evaluator = make_evaluator(study, "skipper")
    a, b = (q for q, _ in votes.pool[:2])
    check = Pair.objects.create(study=study, position=999, question_a_id=a, question_b_id=b, attention_check=True)
    judge(evaluator, check, harder=a)
    judge(evaluator, Pair.objects.filter(study=study, attention_check=False).first())  # a skip
    assert kept_votes(study) == full_read(study) and len(full_read(study)) == 1
    assert after == [0, after[1]] and after[1] > 0


def test_each_study_reads_its_own_votes():
    catalog = make_catalog(per_subject=6)
    one, two = adaptive_study(catalog, name="One"), adaptive_study(catalog, name="Two")
    votes_one, votes_two = Votes(one, seed=3, name="one"), Votes(two, seed=4, name="two")
    for k in range(8):
        (votes_one if k % 3 else votes_two).add()
        for study in (one, two):
            assert kept_votes(study) == full_read(study)
    assert full_read(one) != full_read(two)
    assert len(full_read(one)) + len(full_read(two)) == 8


def test_a_deleted_judgment_is_noticed_and_every_judgment_read_again(after):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=5)
    for _ in range(6):
        votes.add()
    kept_votes(study)
    Judgment.objects.filter(pk=Judgment.objects.filter(pair__study=study).order_by("pk")[2].pk).delete()
    del after[:]
    assert kept_votes(study) == full_read(study) and len(full_read(study)) == 5
    assert after[0] > 0 and after[1:] == [0]  # the kept judgments no longer make the tally: a full read


def test_a_judgment_committed_below_the_largest_id_kept_is_noticed(after):
    """Two tabs of one evaluator: a judgment with a smaller id becomes visible after a larger one was read."""
    study = _study(make_catalog(per_subject=6))
    evaluator = make_evaluator(study, "two-tabs")
    (a, _), (b, _), (c, _) = Votes(study).pool[:3]
    pairs = [Pair.objects.create(study=study, position=100 + k, question_a_id=x, question_b_id=y)
             for k, (x, y) in enumerate([(a, b), (a, c), (b, c)])]
    early = judge(evaluator, pairs[0], harder=a)
    late = judge(evaluator, pairs[1], harder=c, pk=early.pk + 5)
    assert kept_votes(study) == full_read(study)
    judge(evaluator, pairs[2], harder=b, pk=early.pk + 1)  # committed after ``late`` was read
    del after[:]
    assert kept_votes(study) == full_read(study) and len(full_read(study)) == 3
    assert after == [late.pk, 0]


def test_an_exclusion_and_a_restore_count_at_once_without_a_full_read(after):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=6)
    for _ in range(12):
        votes.add()
    others = Votes(study, seed=7, name="other")
    for _ in range(4):
        others.add()
    everything = kept_votes(study)
    excluded = participation_exclude(participation=others.voters[0], reason="speeding", by=None)
    assert kept_votes(study) == full_read(study) and len(full_read(study)) < len(everything)
    participation_restore(participation=excluded, by=None)
    assert kept_votes(study) == full_read(study) == everything
    assert after[0] == 0 and 0 not in after[1:]


def test_forgetting_reads_every_judgment_again(after):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=8)
    votes.add()
    kept_votes(study)
    kept_votes(study)
    adaptive_reads.study_reads_forget()
    assert kept_votes(study) == full_read(study)
    assert after[0] == 0 and after[1] > 0 and after[2] == 0


def test_the_pool_is_read_again_only_when_it_changed_and_the_checks_come_by_position():
    study = _study(make_catalog(per_subject=6))
    pool = list(AdaptivePoolQuestion.objects.filter(study=study).order_by("question_id").values_list("question_id",
                                                                                                    "block"))
    (a, _), (b, _), (c, _) = pool[:3]
    for position, (x, y) in ((7, (b, c)), (3, (a, b))):
        Pair.objects.create(study=study, position=position, question_a_id=x, question_b_id=y, attention_check=True)
    checks = list(Pair.objects.filter(study=study, attention_check=True).order_by("position")
                  .values_list("pk", "question_a_id", "question_b_id"))
    with CaptureQueriesContext(connection) as first:
        reads = study_reads(study_id=study.pk)
    assert [(int(q), int(k)) for q, k in zip(reads.questions, reads.blocks)] == pool
    assert reads.checks == checks and checks[0][1:] == (a, b)
    with CaptureQueriesContext(connection) as second:
        again = study_reads(study_id=study.pk)
    assert (len(first.captured_queries), len(second.captured_queries)) == (2, 1)
    assert again.questions is reads.questions and again.checks == checks
    AdaptivePoolQuestion.objects.filter(study=study, question_id=a).delete()
    with CaptureQueriesContext(connection) as third:
        smaller = study_reads(study_id=study.pk)
    assert len(third.captured_queries) == 2
    assert smaller.questions.tolist() == [q for q, _ in pool[1:]]
