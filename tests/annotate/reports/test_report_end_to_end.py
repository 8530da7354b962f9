"""End to end: simulated evaluators judge a study through the real judging
pages, a researcher downloads the report as JSON, and every agreement and
kappa figure is recomputed here by plain counting (no :mod:`scoring`).

Eight evaluators join by invitation link, onboard, accept the guidelines and
answer each pair the judging page shows them. Each agrees with a hidden truth
(a per-pair coin flip, seeded) with probability 0.8 and skips with
probability 0.1. They decide in canonical terms ("a" or "b" harder) and then
press the button of the side where that question is displayed.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from annotate.models import Pair, QuestionResult
from annotate.studies.services.participation import invitation_create
from tests.annotate.factories import make_catalog, make_study, make_user
from tests.annotate.judging_forms import form_data, form_ids

pytestmark = pytest.mark.django_db

N_EVALUATORS = 8
P_AGREE = 0.8
P_SKIP = 0.1
WHO_RE = re.compile(r'<span class="who">([^<]+)</span>')
COLUMNS = {"eip": "eip_scaled", "simple_rank": "simple_rank", "accuracy": "accuracy_difficulty",
           "irt_1pl": "irt_1pl", "irt_2pl": "irt_2pl", "irt_mirt": "irt_mirt"}
TOL = 1e-9


def kappa_by_hand(x: list[str], y: list[str]) -> float | None:
    """Orientation-free Cohen's kappa from counts: the pairs both called "a" or "b",
    each counted again reversed ("a" <-> "b"), then (p_o - p_e) / (1 - p_e); None without such a pair."""
    flip = {"a": "b", "b": "a"}
    kept = [(a, b) for a, b in zip(x, y) if a in flip and b in flip]
    if not kept:
        return None
    x = [a for a, _ in kept] + [flip[a] for a, _ in kept]
    y = [b for _, b in kept] + [flip[b] for _, b in kept]
    n = len(x)
    p_o = sum(a == b for a, b in zip(x, y)) / n
    cx, cy = Counter(x), Counter(y)
    p_e = sum(cx[k] * cy[k] for k in set(x) | set(y)) / (n * n)
    return (p_o - p_e) / (1 - p_e)


def consensus_by_hand(votes: dict[str, dict[int, str]]) -> dict[int, str | None]:
    """Majority per pair; an exact tie goes to the side whose voters agree more
    often with the others' strict majority on their other pairs (1/2 if never)."""
    pairs = {p for v in votes.values() for p in v}

    def majority(p: int, without: str) -> str | None:
        c = Counter(v[p] for e, v in votes.items() if e != without and p in v)
        return None if c["a"] == c["b"] else ("a" if c["a"] > c["b"] else "b")

    def weight(e: str, p: int) -> Fraction:
        scored = [(q, majority(q, e)) for q in votes[e] if q != p]
        scored = [(q, m) for q, m in scored if m is not None]
        return Fraction(sum(votes[e][q] == m for q, m in scored), len(scored)) if scored else Fraction(1, 2)

    out = {}
    for p in pairs:
        c = Counter(v[p] for v in votes.values() if p in v)
        if c["a"] != c["b"]:
            out[p] = "a" if c["a"] > c["b"] else "b"
            continue
        wa = sum((weight(e, p) for e, v in votes.items() if v.get(p) == "a"), Fraction(0))
        wb = sum((weight(e, p) for e, v in votes.items() if v.get(p) == "b"), Fraction(0))
        out[p] = None if wa == wb else ("a" if wa > wb else "b")
    return out


def judge_all(study, decisions: np.ndarray, truth: dict[int, str], position: dict[int, int]) -> dict[str, dict]:
    """Every evaluator joins and judges through the pages; returns their canonical votes."""
    invitation = invitation_create(study=study)
    join = reverse("annotate:study_join", kwargs={"token": invitation.token})
    subjects = list(study.subjects.values_list("pk", flat=True))
    votes: dict[str, dict[int, str]] = {}
    for i in range(N_EVALUATORS):
        client = Client()
        assert client.post(join, {"consent": "yes"}).status_code == 302
        onboarding = reverse("annotate:study_onboarding", kwargs={"study_id": study.pk})
        response = client.post(onboarding, {"field_of_study": "mathematics", "education_level": "master",
                                            "qualified_subjects": subjects[:1]})
        assert response.status_code == 302
        client.post(reverse("annotate:study_guidelines", kwargs={"study_id": study.pk}))
        judge = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
        mine: dict[int, str] = {}
        while True:
            page = client.get(judge)
            if page.status_code == 302:
                assert page.url == reverse("annotate:study_done", kwargs={"study_id": study.pk})
                break
            html = page.content.decode()
            name = WHO_RE.search(html).group(1)
            pair_id, left_id = form_ids(client, study, html)
            pair = Pair.objects.get(pk=pair_id)
            u = decisions[i, position[pair_id]]
            if u < P_SKIP:
                choice = "skip"
            else:
                t = truth[pair_id]
                harder = t if u < P_SKIP + (1 - P_SKIP) * P_AGREE else ("b" if t == "a" else "a")
                harder_id = pair.question_a_id if harder == "a" else pair.question_b_id
                choice = "left" if harder_id == left_id else "right"
                mine[pair_id] = harder
            assert client.post(judge, form_data(client, study, pair_id, left_id, choice)).status_code == 302
        votes[name] = mine
    return votes


def test_the_downloaded_report_matches_an_independent_count():
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=6)
    study = make_study(catalog, n_pairs=12, seed=5, name="E2E")
    pairs = list(Pair.objects.filter(study=study).order_by("position"))
    position = {p.pk: p.position for p in pairs}
    rng = np.random.default_rng(2033)  # this seed gives two pairs with a vote tie
    truth = {p.pk: ("a" if rng.random() < 0.5 else "b") for p in pairs}
    decisions = rng.random((N_EVALUATORS, len(pairs)))
    votes = judge_all(study, decisions, truth, position)

    researcher = make_user("rhea")
    researcher.groups.add(Group.objects.get_or_create(name="researcher")[0])
    study.members.add(researcher)
    client = Client()
    client.force_login(researcher)
    response = client.get(reverse("annotate:study_report_json", kwargs={"study_id": study.pk}) + "?n_boot=200")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    report = json.loads(response.content)

    # method verdicts straight from the stored difficulties
    values = {q: [scores.get(c) for c in COLUMNS.values()]
              for q, scores in QuestionResult.objects.filter(run=catalog.run).values_list("question_id", "scores")}
    method = {}
    for k, key in enumerate(COLUMNS):
        method[key] = {}
        for p in pairs:
            va, vb = values[p.question_a_id][k], values[p.question_b_id][k]
            method[key][p.pk] = "a" if va > vb else "b" if vb > va else "tie"

    by_name = {e["pseudonym"]: e for e in report["evaluators"]}
    assert sorted(by_name) == sorted(votes)
    for name, mine in votes.items():
        row = by_name[name]
        assert row["n_votes"] == len(mine)
        assert row["n_skips"] == len(pairs) - len(mine)
        for key in COLUMNS:
            got = row["methods"][key]
            theirs = [method[key][p] for p in mine]
            assert got["n_pairs"] == len(mine)
            assert got["agreement"] == pytest.approx(sum(a == b for a, b in zip(mine.values(), theirs)) / len(mine),
                                                     abs=TOL)
            expected = kappa_by_hand(list(mine.values()), theirs)
            assert got["kappa"]["value"] == (None if expected is None else pytest.approx(expected, abs=TOL))

    cons = consensus_by_hand(votes)
    tied = [p for p in report["pairs"] if p["consensus"]["votes_a"] == p["consensus"]["votes_b"]]
    assert len(tied) == 2 and all(p["consensus"]["weight_a"] is not None for p in tied)
    reported = {p["pair_id"]: p["consensus"]["verdict"] for p in report["pairs"]}
    assert reported == {p.pk: cons.get(p.pk) for p in pairs}
    decided = [p.pk for p in pairs if cons.get(p.pk) is not None]
    human = [cons[p] for p in decided]
    for key in COLUMNS:
        got = report["consensus_agreement"][key]
        theirs = [method[key][p] for p in decided]
        assert got["n_pairs"] == len(decided)
        assert got["agreement"] == pytest.approx(sum(a == b for a, b in zip(human, theirs)) / len(decided), abs=TOL)
        expected = kappa_by_hand(human, theirs)
        assert got["kappa"]["value"] == (None if expected is None else pytest.approx(expected, abs=TOL))
        low, high = got["ci"]["agreement"]
        assert low - TOL <= got["agreement"] <= high + TOL

    # the simulated accuracy shows: votes agree with the hidden truth about 80% of the time
    all_votes = [(p, v) for mine in votes.values() for p, v in mine.items()]
    truth_agreement = sum(v == truth[p] for p, v in all_votes) / len(all_votes)
    assert 0.65 <= truth_agreement <= 0.95
