"""The scale an adaptive choice reads: the kernel's fit of every vote of the included evaluators, whatever the
order the votes are read in and whatever the process already keeps.

Cast: an adaptive study of two subjects of 6 questions each; votes stored directly (a pair row, made when new,
and a judgment by the first prior evaluator who has not judged that pair), drawn from a fixed generator.
"""
from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from annotate.models import AdaptivePoolQuestion, Judgment, PairStrategy, Participation
from annotate.studies.services import adaptive as adaptive_module
from annotate.studies.services.adaptive import (
    CHOICE_STREAM,
    adaptive_choose,
    adaptive_config,
    adaptive_estimates_forget,
    pair_get_or_create,
)
from annotate.studies.services.studies import study_create
from scoring.adaptive_pairs import choose_next_pair, scale_estimate
from tests.annotate.factories import make_catalog, make_evaluator

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_estimates():
    adaptive_estimates_forget()
    yield
    adaptive_estimates_forget()


def _study(catalog, *, min_comparisons=2, random_share=0.1):
    return study_create(
        name="Refit", run=catalog.run, datasets=[catalog.dataset], n_pairs=30, seed=5,
        strategy=PairStrategy.ADAPTIVE, adaptive_min_comparisons=min_comparisons,
        adaptive_random_share=random_share, attention_check_share=0.0,
    )


class Votes:
    """Votes on random same-subject pairs of the pool, stored one at a time, each by the first of the prior
    evaluators ``{name}0``, ``{name}1`` ... who has not judged that pair."""

    def __init__(self, study, seed=0, name="prior"):
        self.study, self.name = study, name
        self.voters = []
        self.pool = list(AdaptivePoolQuestion.objects.filter(study=study).order_by("question_id")
                         .values_list("question_id", "block"))
        self.rng = np.random.default_rng(seed)

    def add(self):
        """One more vote; returns (harder id, easier id)."""
        ids = [q for q, _ in self.pool]
        blocks = [b for _, b in self.pool]
        while True:
            i, j = (int(x) for x in self.rng.choice(len(ids), 2, replace=False))
            if blocks[i] == blocks[j]:
                break
        a, b = ids[i], ids[j]
        harder = a if self.rng.random() < 0.6 else b
        pair = pair_get_or_create(study=self.study, question_a_id=a, question_b_id=b)
        done = set(Judgment.objects.filter(pair=pair).values_list("participation_id", flat=True))
        voter = next((v for v in self.voters if v.pk not in done), None)
        if voter is None:
            voter = make_evaluator(self.study, f"{self.name}{len(self.voters)}")
            self.voters.append(voter)
        now = timezone.now()
        Judgment.objects.create(participation=voter, pair=pair, choice="left", left_question_id=harder,
                                harder_question_id=harder, shown_at=now, submitted_at=now, seconds=1.0)
        return harder, b if harder == a else a


def _expected(study, participation, stored):
    """The choice recomputed from the stored votes (list of (harder id, easier id)): a cold kernel fit of all of
    them and the same generator."""
    pool = list(AdaptivePoolQuestion.objects.filter(study=study).order_by("question_id")
                .values_list("question_id", "block"))
    ids = [q for q, _ in pool]
    at = {q: k for k, q in enumerate(ids)}
    h = np.array([at[x] for x, _ in stored], dtype=np.int64)
    e = np.array([at[y] for _, y in stored], dtype=np.int64)
    estimate = scale_estimate(len(ids), h, e)
    rng = np.random.default_rng([participation.seed, CHOICE_STREAM, 0])
    chosen = choose_next_pair(subjects=[b for _, b in pool], estimate=estimate, seen=np.empty((0, 2), int),
                              rng=rng, config=adaptive_config(study=study))
    if chosen is None:
        return None
    a, b = ids[chosen[0]], ids[chosen[1]]
    return (a, b) if rng.random() < 0.5 else (b, a)


@pytest.mark.parametrize("random_share", [0.0, 0.5])
def test_each_choice_equals_one_from_a_cold_fit_of_every_vote(random_share):
    """After every new vote (0 .. 33 of them), three evaluators' choices in a process that keeps its estimates
    equal the ones recomputed from a cold fit of all the votes stored."""
    study = _study(make_catalog(per_subject=6), random_share=random_share)
    votes = Votes(study, seed=11)
    evaluators = [make_evaluator(study, f"e{k}") for k in range(3)]
    stored = []
    for v in range(34):
        for participation in evaluators:
            assert adaptive_choose(study=study, participation=participation, shown=[]) == _expected(
                study, participation, stored), f"after {v} votes"
        stored.append(votes.add())


def test_the_scale_is_fitted_once_per_set_of_votes_and_counts_every_vote(monkeypatch):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=3)
    fits, seen = [], []
    real_fit, real_choose = adaptive_module.scale_estimate, adaptive_module.choose_next_pair
    monkeypatch.setattr(adaptive_module, "scale_estimate",
                        lambda n, h, e, **k: fits.append(len(h)) or real_fit(n, h, e, **k))
    monkeypatch.setattr(adaptive_module, "choose_next_pair",
                        lambda **kwargs: seen.append(kwargs["estimate"]) or real_choose(**kwargs))
    evaluators = [make_evaluator(study, f"e{k}") for k in range(2)]
    for v in range(12):
        for participation in evaluators:
            adaptive_choose(study=study, participation=participation, shown=[])
            assert seen[-1].n_comparisons.sum() == 2 * v
        assert seen[-1] is seen[-2]  # the second evaluator's choice reuses the first one's estimate
        votes.add()
    assert fits == list(range(12))  # one fit per new set of votes


def test_an_excluded_evaluator_s_votes_leave_the_refit():
    """The fitted votes are those of the included evaluators: excluding some moves the next choice's scale to
    the cold fit of the others' votes."""
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=5)
    stored = [votes.add() for _ in range(10)]
    other = Votes(study, seed=6, name="other")
    for _ in range(10):
        other.add()
    participation = make_evaluator(study, "e")
    adaptive_choose(study=study, participation=participation, shown=[])
    Participation.objects.filter(pk__in=[v.pk for v in other.voters]).update(excluded_at=timezone.now())
    assert adaptive_choose(study=study, participation=participation, shown=[]) == _expected(
        study, participation, stored)


def test_each_fit_starts_from_the_study_s_newest_estimate_and_reaches_the_cold_optimum(monkeypatch):
    study = _study(make_catalog(per_subject=6))
    votes = Votes(study, seed=9)
    starts, fitted, stored = [], [], []
    real_fit = adaptive_module.scale_estimate

    def recording(n, h, e, **kwargs):
        starts.append(kwargs.get("initial"))
        fitted.append(real_fit(n, h, e, **kwargs))
        return fitted[-1]

    monkeypatch.setattr(adaptive_module, "scale_estimate", recording)
    participation = make_evaluator(study, "e")
    for _ in range(15):
        adaptive_choose(study=study, participation=participation, shown=[])
        stored.append(votes.add())
    assert starts[0] is None and all(start is fitted[k].b for k, start in enumerate(starts[1:]))
    ids = list(AdaptivePoolQuestion.objects.filter(study=study).order_by("question_id")
               .values_list("question_id", flat=True))
    at = {q: k for k, q in enumerate(ids)}
    cold = real_fit(len(ids), [at[h] for h, _ in stored[:-1]], [at[e] for _, e in stored[:-1]])
    assert fitted[-1].n_iter < cold.n_iter
    assert np.max(np.abs(fitted[-1].b - cold.b)) <= 1e-6
