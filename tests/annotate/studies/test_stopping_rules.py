"""Stopping rules of a study: each fires at the right judgment; a full study
assigns nothing new and turns newcomers away; the manage page shows each
rule's state, the projection and its cost.

Cast: ``owner`` (staff), evaluators ``ada``, ``bob``, ``cy``; a newcomer
following the invitation link.
"""
from __future__ import annotations

import html
import math
import warnings
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Choice, Judgment, StoppingRules
from annotate.studies.selectors.stopping import study_stopping_state
from annotate.studies.services.judging import judging_screen, judgment_submit
from annotate.studies.services.participation import invitation_create
from annotate.studies.services.stopping import StoppingInput, stopping_rules_set
from scoring.human_scale import human_scale
from scoring.stopping import ODDS_SLOPE, ODDS_SLOPE_RANGE, sequential_sign_test
from tests.annotate.factories import difficulty_of, make_catalog, make_evaluator, make_study, make_user

pytestmark = pytest.mark.django_db
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    """One clock for every evaluator, so submission order is the order of the calls."""

    def __init__(self) -> None:
        self.now = START

    def tick(self) -> datetime:
        self.now += timedelta(seconds=30)
        return self.now


def judge_one(participation, decide, clock: Clock) -> Judgment | None:
    """Serve ``participation`` a pair and answer it: ``decide(pair)`` gives the harder question id (None: skip)."""
    screen = judging_screen(participation=participation, now=clock.tick())
    if screen is None:
        return None
    harder = decide(screen.pair)
    choice = "skip" if harder is None else ("left" if harder == screen.left.pk else "right")
    return judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                           choice=choice, now=clock.tick()).judgment


@pytest.fixture
def catalog():
    return make_catalog(per_subject=6)


def rules(study, **values) -> StoppingRules:
    out = stopping_rules_set(study=study, values=StoppingInput(**values))
    assert out is not None
    return out


def fired(study) -> StoppingRules:
    return StoppingRules.objects.get(study=study)


def harder_by_eip(catalog):
    rank = {q.pk: difficulty_of(k)["eip_scaled"] for k, q in enumerate(catalog.questions)}
    return lambda pair: max((pair.question_a_id, pair.question_b_id), key=rank.__getitem__)


# --- (c) budget ---------------------------------------------------------------------------------------


def test_a_judgment_budget_fires_at_the_last_judgment_and_the_evaluator_finishes_the_pair_on_screen(catalog):
    study = make_study(catalog, n_pairs=12, target=3)
    rules(study, max_judgments=5)
    ada, bob = make_evaluator(study, "ada"), make_evaluator(study, "bob")
    clock, decide = Clock(), harder_by_eip(catalog)
    for k in range(4):
        judge_one(ada if k % 2 == 0 else bob, decide, clock)
        assert fired(study).fired_at is None
    # bob now has a pair on screen; ada's 5th judgment spends the budget.
    bob_screen = judging_screen(participation=bob, now=clock.tick())
    judge_one(ada, decide, clock)
    rule = fired(study)
    assert (rule.fired_rule, rule.fired_after_judgments) == ("budget", 5)
    # Nothing new for ada; bob finishes the pair he was shown, then is done.
    assert judging_screen(participation=ada, now=clock.tick()) is None
    again = judging_screen(participation=bob, now=clock.tick())
    assert again is not None and again.pair.pk == bob_screen.pair.pk
    judge_one(bob, decide, clock)
    assert judging_screen(participation=bob, now=clock.tick()) is None
    assert Judgment.objects.filter(pair__study=study).count() == 6  # the pair on screen was kept, none lost


def test_a_money_budget_is_decided_exactly(catalog):
    # 3 x 0.15 = 0.45 exactly (in binary floats 0.15 * 3 = 0.44999999999999996 < 0.45, one judgment late).
    study = make_study(catalog, n_pairs=12, target=3)
    rules(study, budget="0.45", pay_per_judgment="0.15")
    ada = make_evaluator(study, "ada")
    clock, decide = Clock(), harder_by_eip(catalog)
    judge_one(ada, decide, clock)
    judge_one(ada, lambda pair: None, clock)  # a skip is paid too
    assert fired(study).fired_at is None
    judge_one(ada, decide, clock)
    assert (fired(study).fired_rule, fired(study).fired_after_judgments) == ("budget", 3)


# --- (b) the sequential comparison --------------------------------------------------------------------


def test_the_comparison_fires_at_the_seventh_discordant_vote_for_eip(catalog):
    # Every vote follows EIP (eip_scaled rises with k). Simple rank (((7k) mod 13)) disagrees with EIP on some
    # pairs: those votes are discordant and all side with EIP. At alpha = 0.1 the test decides when
    # 2**n / (n + 1) >= 10: n = 6 gives 9.14, n = 7 gives 16. Computed here from the factory's values.
    study = make_study(catalog, n_pairs=15, target=5)
    rules(study, method_a="eip", method_b="simple_rank", alpha="0.1")
    eip = {q.pk: difficulty_of(k)["eip_scaled"] for k, q in enumerate(catalog.questions)}
    rank = {q.pk: difficulty_of(k)["simple_rank"] for k, q in enumerate(catalog.questions)}
    people = [make_evaluator(study, name) for name in ("ada", "bob", "cy")]
    clock, decide = Clock(), harder_by_eip(catalog)
    discordant, expected_at, n = 0, None, 0
    while expected_at is None:
        judgment = judge_one(people[n % 3], decide, clock)
        assert judgment is not None
        n += 1
        other = judgment.pair.question_b_id if judgment.harder_question_id == judgment.pair.question_a_id \
            else judgment.pair.question_a_id
        if not rank[judgment.harder_question_id] > rank[other]:
            assert eip[judgment.harder_question_id] > eip[other]
            discordant += 1
        if discordant == 7:
            expected_at = n
        else:
            assert fired(study).fired_at is None, n
    rule = fired(study)
    assert (rule.fired_rule, rule.fired_after_judgments) == ("comparison", expected_at)
    assert "EIP" in rule.fired_detail or "eip" in rule.fired_detail.lower()
    state = study_stopping_state(study=study)
    assert state.comparison.test.decided and state.comparison.test.favoured == "a"
    assert (state.comparison.test.wins_a, state.comparison.test.n_discordant) == (7, 7)


# --- (a) reliability ------------------------------------------------------------------------------------


def test_the_reliability_rule_fires_at_the_first_judgment_where_ssr_and_split_half_reach_the_target(catalog):
    study = make_study(catalog, n_pairs=15, target=6)
    rules(study, target_reliability="0.3")
    people = [make_evaluator(study, name) for name in ("ada", "bob", "cy", "dee")]
    clock, decide = Clock(), harder_by_eip(catalog)
    votes: list[tuple[int, int, int]] = []
    expected_at = None
    for n in range(1, 200):
        judgment = judge_one(people[n % 4], decide, clock)
        assert judgment is not None
        other = judgment.pair.question_b_id if judgment.harder_question_id == judgment.pair.question_a_id \
            else judgment.pair.question_a_id
        votes.append((judgment.harder_question_id, other, judgment.participation_id))
        arr = np.array(votes)
        qids, idx = np.unique(arr[:, :2], return_inverse=True)
        idx = idx.reshape(-1, 2)
        _, who = np.unique(arr[:, 2], return_inverse=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = human_scale(idx[:, 0], idx[:, 1], who, n_items=qids.size, n_boot=0, n_splits=20,
                            rng=study.seed % 2**32)
        holds = (math.isfinite(s.ssr) and s.ssr >= 0.3 and (not math.isfinite(s.split_half) or s.split_half >= 0.3))
        if holds:
            expected_at = n
            break
        assert fired(study).fired_at is None, n
    assert expected_at is not None
    rule = fired(study)
    assert (rule.fired_rule, rule.fired_after_judgments) == ("reliability", expected_at)


# --- setting the rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "message"), [
    ({"target_reliability": "1.2"}, "target_reliability must be a number in (0, 1); got '1.2'"),
    ({"method_a": "eip"}, "method_a and method_b must both be set or both be blank; got 'eip' and ''"),
    ({"method_a": "eip", "method_b": "eip"}, "method_a and method_b must differ; got 'eip' twice"),
    ({"method_a": "eip", "method_b": "astrology"}, "method_b must be one of"),
    ({"budget": "10"}, "a budget in money needs pay_per_judgment > 0"),
    ({"max_judgments": 0}, "max_judgments must be an integer >= 1; got 0"),
    ({"pay_per_judgment": "0.123"}, "pay_per_judgment must be an amount >= 0 with at most 2 decimals"),
])
def test_bad_rules_are_refused_naming_the_field_and_change_nothing(catalog, values, message):
    study = make_study(catalog, n_pairs=4)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        stopping_rules_set(study=study, values=StoppingInput(**values))
    assert not StoppingRules.objects.filter(study=study).exists()


def test_rules_are_frozen_once_the_study_has_judgments(catalog):
    study = make_study(catalog, n_pairs=4)
    judge_one(make_evaluator(study, "ada"), harder_by_eip(catalog), Clock())
    with pytest.raises(ValueError, match="frozen: it already has judgments"):
        stopping_rules_set(study=study, values=StoppingInput(max_judgments=3))


# --- pages ------------------------------------------------------------------------------------------------


def test_the_invitation_tells_a_newcomer_the_study_is_full(catalog):
    study = make_study(catalog, n_pairs=12, target=3)
    rules(study, max_judgments=2)
    invitation = invitation_create(study=study, note="crowd")
    link = reverse("annotate:study_join", kwargs={"token": invitation.token})
    assert "This study is full" not in Client().get(link).content.decode()
    ada = make_evaluator(study, "ada")
    clock = Clock()
    judge_one(ada, harder_by_eip(catalog), clock)
    judge_one(ada, harder_by_eip(catalog), clock)
    newcomer = Client()
    page = newcomer.get(link + "?PROLIFIC_PID=late").content.decode()
    assert "This study is full" in page and 'name="consent"' not in page
    # A POST straight to the link joins nobody either.
    newcomer.post(link, {"consent": "yes"})
    assert study.participations.count() == 1


def test_the_manage_page_shows_each_rule_with_projection_and_cost(catalog):
    study = make_study(catalog, n_pairs=15, target=6)
    rules(study, max_judgments=100, method_a="eip", method_b="simple_rank", target_reliability="0.9",
          pay_per_judgment="0.15")
    people = [make_evaluator(study, name) for name in ("ada", "bob", "cy")]
    clock, decide = Clock(), harder_by_eip(catalog)
    for k in range(12):
        judge_one(people[k % 3], decide, clock)
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    url = reverse("annotate:study_manage", kwargs={"study_id": study.pk})
    page = client.get(url, {"pay": "0.20"}).content.decode()
    assert 'id="stopping-table"' in page
    # Budget: 100 - 12 = 88 more judgments, 88 x 0.20 = 17.60 at the entered pay.
    budget_cell = page.split('id="projection-budget">')[1].split("</td>")[0]
    cost_cell = page.split('id="cost-budget">')[1].split("</td>")[0]
    assert budget_cell.strip() == "88" and cost_cell.strip() == "17.60"
    # Reliability and comparison: the selector's projections, priced at the same pay.
    state = study_stopping_state(study=study, projections=True, pay=Decimal("0.20"))
    for key, projection in (("reliability", state.reliability_projection),
                            ("comparison", state.comparison_projection)):
        cell = page.split(f'id="projection-{key}">')[1].split("</td>")[0]
        if projection.status == "projected":
            assert projection.more_text in cell
            assert str(projection.cost_point) in page.split(f'id="cost-{key}">')[1].split("</td>")[0]
            assert projection.cost_point == (Decimal("0.20") * math.ceil(projection.more)).quantize(Decimal("0.01"))
    assert f"{state.n_judgments} judgments" in page
    # The page names the projection's model as the projection uses it.
    low, high = ODDS_SLOPE_RANGE
    assert f"to the power {ODDS_SLOPE} (interval: powers {low} to {high})" in page
    # ... and how often it came true in simulated studies, as the bench measured it.
    from annotate.studies.selectors.stopping import PROJECTION_CALIBRATION
    assert page.split('id="projection-calibration">')[1].split("</span>")[0] == PROJECTION_CALIBRATION
    # Without ?pay= the rules' own pay (0.15) prices them: 88 x 0.15 = 13.20.
    page = client.get(url).content.decode()
    assert page.split('id="cost-budget">')[1].split("</td>")[0].strip() == "13.20"


def cell(page: str, cell_id: str) -> str:
    return page.split(f'id="{cell_id}">')[1].split("</td>")[0].strip()


def test_the_manage_page_says_every_figure_in_words(catalog, monkeypatch):
    from annotate.studies.selectors import stopping as selector
    from annotate.studies.views import studies as views

    study = make_study(catalog, n_pairs=15, target=6)
    stored = rules(study, method_a="eip", method_b="simple_rank", target_reliability="0.9", pay_per_judgment="0.20")
    client = Client()
    client.force_login(make_user("owner", staff=True))
    url = reverse("annotate:study_manage", kwargs={"study_id": study.pk})

    def shown(reliability, rel_projection, test, cmp_projection) -> str:
        """The manage page when the rules stand so (the votes that would give these figures vary with the order
        in which evaluators meet the pairs)."""
        comparison = selector.ComparisonState("eip", "simple_rank", "EIP", "Simple rank", test)
        state = selector.StoppingState(rules=stored, n_judgments=9, n_votes=9, reliability=reliability,
                                       comparison=comparison, budget=None, firing="",
                                       reliability_projection=rel_projection, comparison_projection=cmp_projection)
        monkeypatch.setattr(views, "study_stopping_state", lambda **kwargs: state)
        return client.get(url).content.decode()

    # Few votes: SSR below 0 (the estimation error exceeds the spread), split-half undefined, nothing projected.
    page = shown(selector.ReliabilityState(ssr=-0.5771, split_half=math.nan, target=Decimal("0.9"), reached=False),
                 selector.Projection(math.nan, math.nan, math.nan, Decimal("0.20"),
                                     unknown_reason=selector.RELIABILITY_NOT_POSITIVE),
                 sequential_sign_test(0, 0, alpha="0.05"),
                 selector.Projection(math.nan, math.nan, math.nan, Decimal("0.20"),
                                     unknown_reason=selector.NO_DISCORDANT_VOTE))
    assert "Scale separation reliability (SSR) and split-half reliability of the human difficulty scale both " \
           "reach 0.9" in page
    assert cell(page, "reliability-now") == (
        "SSR: below 0 (\u22120.577): too few votes yet<br>split-half: not defined yet (it needs votes from several "
        "evaluators on the same questions)")
    assert "read it as no reliability yet" in page.split('id="ssr-note">')[1].split("</p>")[0]
    assert cell(page, "projection-reliability") == \
        '<span class="muted">not projected yet: SSR must first rise above 0</span>'
    assert cell(page, "projection-comparison") == \
        '<span class="muted">not projected yet: no vote tells the two methods apart yet</span>'
    assert cell(page, "comparison-now") == (
        "0 of 0 votes that tell the methods apart side with EIP<br>\n      evidence (e-value) 1.00; the test decides "
        "at 20<br>\n      EIP's share of those votes: 0.00 to 1.00")
    assert cell(page, "cost-reliability") == cell(page, "cost-comparison") == "–"
    # More votes: 3 of 3 discordant votes for EIP; the share's interval still reaches 1/2, so the comparison's
    # projection has no upper end: at least 53 more judgments, 53 x 0.20 = 10.60.
    page = shown(selector.ReliabilityState(ssr=0.1149, split_half=0.8467, target=Decimal("0.9"), reached=False),
                 selector.Projection(298.97, 142.94, 615.27, Decimal("0.20")),
                 sequential_sign_test(3, 3, alpha="0.05"), selector.Projection(53, 53, math.inf, Decimal("0.20")))
    assert "∞" not in page and 'id="ssr-note"' not in page
    assert cell(page, "reliability-now") == "SSR: 0.115<br>split-half: 0.847"
    assert cell(page, "projection-reliability") == "about 299 (143 to 616)"
    assert cell(page, "cost-reliability") == "about 59.80 (28.60 to 123.20)"
    assert cell(page, "projection-comparison") == "at least 53; the upper end cannot be projected yet"
    assert cell(page, "cost-comparison") == "at least 10.60"


def test_the_manage_page_words_the_selectors_figures(catalog):
    study = make_study(catalog, n_pairs=15, target=6)
    rules(study, method_a="eip", method_b="simple_rank", target_reliability="0.9", pay_per_judgment="0.20")
    people = [make_evaluator(study, name) for name in ("ada", "bob", "cy")]
    clock, decide = Clock(), harder_by_eip(catalog)
    for k in range(9):
        judge_one(people[k % 3], decide, clock)
    client = Client()
    client.force_login(make_user("owner", staff=True))
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    state = study_stopping_state(study=study, projections=True)
    # Both projections know what the 15 pairs x 6 votes can still take, in judgments (9 judgments, no skip).
    assert state.n_judgments == state.n_votes == 9
    left = 15 * 6 - 9
    assert state.reliability_projection.capacity == state.comparison_projection.capacity == left
    assert cell(page, "reliability-now") == f"SSR: {state.reliability.ssr_text}<br>split-half: " \
                                            f"{state.reliability.split_half_text}"
    for key, projection in (("reliability", state.reliability_projection),
                            ("comparison", state.comparison_projection)):
        words = (f'<span class="muted">{projection.unknown_reason}</span>' if projection.status == "unknown"
                 else html.escape(projection.text))
        assert cell(page, f"projection-{key}") == words
    assert "∞" not in page


@pytest.mark.parametrize(("more", "low", "high", "text", "cost"), [
    (88, 88, 88, "88", "17.60"),
    (120.2, 90, 159.1, "about 121 (90 to 160)", "about 24.20 (18.00 to 32.00)"),
    (53, 53, math.inf, "at least 53; the upper end cannot be projected yet", "at least 10.60"),
    (80, 52.5, math.inf, "about 80 (at least 53; the upper end cannot be projected yet)",
     "about 16.00 (at least 10.60)"),
])
def test_a_projection_reads_in_words(more, low, high, text, cost):
    from annotate.studies.selectors.stopping import Projection

    projection = Projection(more, low, high, Decimal("0.20"))
    assert (projection.status, projection.text, projection.cost_text) == ("projected", text, cost)
    assert Projection(more, low, high, None).cost_text == ""


@pytest.mark.parametrize(("more", "low", "high", "capacity", "status", "text"), [
    # Within the pairs' room: as without a capacity; an upper end past it is said.
    (120.2, 90, 159.1, 200.0, "projected", "about 121 (90 to 160)"),
    (120.2, 90, 159.1, 140.0, "projected",
     "about 121 (90 to 160); the study's pairs take at most about 140 more"),
    (53, 53, math.inf, 81.0, "projected",
     "at least 53; the upper end cannot be projected yet; the study's pairs take at most about 81 more"),
    # Past it: the target is not within the study's pairs.
    (1045.3, 521.6, 2061.2, 180.4, "beyond",
     "more than the study's pairs can take: about 1,046 would be needed, and they take at most about 181 more "
     "(votes past each pair's target are not collected)"),
    # The comparison at an even split: no point, a lower end from the share's interval.
    (math.inf, 13.1, math.inf, None, "never",
     "at least 14; no point estimate yet: at the current shares of the votes that tell the methods apart the "
     "test would not decide"),
    (math.inf, math.inf, math.inf, None, "never", "not expected: at the current shares the test never decides"),
])
def test_a_projection_is_said_against_what_the_pairs_can_take(more, low, high, capacity, status, text):
    from annotate.studies.selectors.stopping import Projection

    projection = Projection(more, low, high, Decimal("0.20"), capacity=capacity)
    assert (projection.status, projection.text) == (status, text)
    if status != "projected":
        assert projection.cost_text == ""


def test_the_pairs_room_counts_votes_up_to_each_pairs_target(catalog):
    from annotate.studies.selectors.stopping import study_votes_left

    study = make_study(catalog, n_pairs=4, target=2)
    pairs = list(study.pairs.filter(attention_check=False))
    assert study_votes_left(study=study) == 4 * 2
    # 3 votes on one pair (one past its target) and 1 on another: 0 + 1 + 2 + 2 = 5 votes still taken.
    pairs[0].n_votes, pairs[1].n_votes = 3, 1
    for pair in pairs[:2]:
        pair.save(update_fields=["n_votes"])
    assert study_votes_left(study=study) == 5


def test_a_full_study_projects_nothing(catalog):
    study = make_study(catalog, n_pairs=12, target=3)
    rules(study, max_judgments=3, target_reliability="0.8", method_a="eip", method_b="simple_rank",
          pay_per_judgment="0.20")
    people = [make_evaluator(study, name) for name in ("ada", "bob", "cy")]
    clock, decide = Clock(), harder_by_eip(catalog)
    for k in range(3):
        judge_one(people[k], decide, clock)
    assert fired(study).fired_at is not None
    client = Client()
    client.force_login(make_user("owner", staff=True))
    page = client.get(reverse("annotate:study_manage", kwargs={"study_id": study.pk})).content.decode()
    for key in ("reliability", "comparison", "budget"):
        assert cell(page, f"projection-{key}") == '<span class="muted">none: the study is full</span>'
        assert cell(page, f"cost-{key}") == "–"


@pytest.mark.parametrize(("ssr", "split_half", "ssr_text", "split_text", "note"), [
    (0.8123, 0.7456, "0.812", "0.746", False),
    (-0.5771, 0.31, "below 0 (\u22120.577): too few votes yet", "0.310", True),
    (math.nan, math.nan, "not defined yet (too few votes)",
     "not defined yet (it needs votes from several evaluators on the same questions)", False),
])
def test_a_reliability_reads_in_words(ssr, split_half, ssr_text, split_text, note):
    from annotate.studies.selectors.stopping import ReliabilityState

    state = ReliabilityState(ssr=ssr, split_half=split_half, target=Decimal("0.8"), reached=False)
    assert (state.ssr_text, state.split_half_text, bool(state.ssr_note)) == (ssr_text, split_text, note)


def test_the_owner_sets_rules_on_the_manage_page_before_the_first_judgment(catalog):
    study = make_study(catalog, n_pairs=4)
    owner = make_user("owner", staff=True)
    client = Client()
    client.force_login(owner)
    url = reverse("annotate:study_stopping_rules", kwargs={"study_id": study.pk})
    client.post(url, {"target_reliability": "0.8", "method_a": "eip", "method_b": "simple_rank", "alpha": "0.05",
                      "max_judgments": "300", "budget": "", "pay_per_judgment": "0.15"})
    stored = StoppingRules.objects.get(study=study)
    assert (stored.target_reliability, stored.method_a, stored.max_judgments) == (Decimal("0.800"), "eip", 300)
    response = client.post(url, {"alpha": "0.05", "method_a": "eip", "method_b": ""}, follow=True)
    assert ("Stopping rules not saved: The first method to compare and the second method must both be set or both "
            "be blank (entered: &#x27;eip&#x27; and &#x27;&#x27;)") in response.content.decode()
    assert StoppingRules.objects.get(study=study).method_b == "simple_rank"  # unchanged


def test_a_study_without_rules_is_unchanged(catalog):
    study = make_study(catalog, n_pairs=4, target=1)
    ada = make_evaluator(study, "ada")
    clock = Clock()
    n = 0
    while judge_one(ada, harder_by_eip(catalog), clock) is not None:
        n += 1
    assert n == 4 and not StoppingRules.objects.filter(study=study).exists()
    assert Judgment.objects.filter(pair__study=study, choice__in=(Choice.LEFT, Choice.RIGHT)).count() == 4
