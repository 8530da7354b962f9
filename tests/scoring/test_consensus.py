"""Majority-vote consensus with skips, min_votes and weight-resolved ties."""
from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from scoring.consensus import (
    METHOD_MAJORITY,
    METHOD_NO_CONSENSUS,
    METHOD_TIE_RESOLVED,
    REASON_FEW_VOTES,
    REASON_TIE_RULE_NONE,
    REASON_TIE_UNRESOLVED,
    consensus,
    leave_one_out_consensus,
)
from scoring.pairs import FIRST, SECOND, SKIP, UNDEFINED

F, S, K = int(FIRST), int(SECOND), int(SKIP)

# A small named cast: evaluators a, b, c, d; pairs P1..P4 and P6.
#   P1: a F, b F, c S, d F      -> majority FIRST (3-1)
#   P2: a F, b F, c S, d S      -> tie 2-2
#   P3: a S, b S, c F, d skip   -> majority SECOND (2-1)
#   P4: a F, d F, b skip, c skip -> majority FIRST (2-0)
#   P6: a F, b skip             -> 1 vote
# Weights for the tie on P2 (other pairs only; "others" = everyone but e):
#   a: P1 others F2 S1 -> F, a F agrees; P3 others S1 F1 -> no majority; P4 others F1 -> agrees;
#      P6 others none -> no majority.                          w_a = 2/2 = 1
#   b: P1 others F2 S1 -> F, agrees; P3 no majority.          w_b = 1/1 = 1
#   c: P1 others F3 -> F, c S disagrees; P3 others S2 -> S, c F disagrees.  w_c = 0/2 = 0
#   d: P1 others F2 S1 -> agrees; P4 others F1 -> agrees.     w_d = 2/2 = 1
#   FIRST side a + b = 2 > SECOND side c + d = 1 -> FIRST, tie resolved.
CAST = [
    ("P1", "a", F), ("P1", "b", F), ("P1", "c", S), ("P1", "d", F),
    ("P2", "a", F), ("P2", "b", F), ("P2", "c", S), ("P2", "d", S),
    ("P3", "a", S), ("P3", "b", S), ("P3", "c", F), ("P3", "d", K),
    ("P4", "a", F), ("P4", "b", K), ("P4", "c", K), ("P4", "d", F),
    ("P6", "a", F), ("P6", "b", K),
]


def test_it_takes_the_strict_majority_and_ignores_skips():
    r = consensus(CAST)
    p1, p3, p4 = r["P1"], r["P3"], r["P4"]
    got = (p1.votes_first, p1.votes_second, p1.n_skips, p1.winner, p1.method)
    assert got == (3, 1, 0, FIRST, METHOD_MAJORITY)
    assert (p3.votes_first, p3.votes_second, p3.n_skips, p3.winner) == (1, 2, 1, SECOND)
    assert (p4.votes_first, p4.votes_second, p4.n_skips, p4.winner) == (2, 0, 2, FIRST)
    assert p1.reason is None and p1.weight_first is None and p1.tie_weights == ()


def test_it_breaks_a_vote_tie_by_evaluator_weights():
    p2 = consensus(CAST)["P2"]
    assert (p2.votes_first, p2.votes_second) == (2, 2)
    assert p2.method == METHOD_TIE_RESOLVED and p2.winner == FIRST
    assert p2.weight_first == pytest.approx(2.0, abs=1e-15)
    assert p2.weight_second == pytest.approx(1.0, abs=1e-15)
    assert p2.tie_weights == (
        ("a", FIRST, 1.0), ("b", FIRST, 1.0), ("c", SECOND, 0.0), ("d", SECOND, 1.0)
    )


def test_it_leaves_a_tie_open_when_the_weights_are_equal():
    # Only pair: no other pair to learn from, so both weights are 1/2 -> 1/2 vs 1/2.
    q = consensus([("Q", "x", F), ("Q", "y", S)])["Q"]
    assert q.winner is None and q.method == METHOD_NO_CONSENSUS
    assert q.reason == REASON_TIE_UNRESOLVED == "tie not resolved by weights"
    assert (q.weight_first, q.weight_second) == (0.5, 0.5)
    assert q.verdict == UNDEFINED


def test_it_leaves_every_tie_open_with_tie_rule_none():
    p2 = consensus(CAST, tie_rule="none")["P2"]
    assert p2.winner is None and p2.reason == REASON_TIE_RULE_NONE
    assert (p2.votes_first, p2.votes_second) == (2, 2)


def test_it_gives_no_consensus_below_min_votes():
    assert consensus(CAST)["P6"].winner == FIRST
    p6 = consensus(CAST, min_votes=2)["P6"]
    assert (p6.votes_first, p6.n_skips, p6.winner) == (1, 1, None)
    assert p6.reason == REASON_FEW_VOTES == "fewer than min_votes votes"
    # P1..P4 all have >= 2 votes and keep their consensus.
    assert consensus(CAST, min_votes=2).verdicts(["P1", "P2", "P3", "P4"]).tolist() == [F, F, S, F]


def test_it_gives_no_consensus_to_a_pair_everyone_skipped():
    r = consensus([("Z", "a", K), ("Z", "b", K)])
    assert r["Z"].reason == REASON_FEW_VOTES and r["Z"].n_skips == 2


def test_it_does_not_depend_on_the_order_of_judgments():
    rng = random.Random(0)
    judgments = _random_judgments(np.random.default_rng(2), n_pairs=40, n_evaluators=6)
    expected = consensus(judgments)
    assert expected.counts()[METHOD_TIE_RESOLVED] > 0  # the shuffle must exercise weights
    for _ in range(5):
        shuffled = judgments[:]
        rng.shuffle(shuffled)
        assert consensus(shuffled) == expected


def test_it_sorts_pairs_and_exports_verdicts_in_the_requested_order():
    r = consensus(CAST)
    assert [p.pair_id for p in r.pairs] == ["P1", "P2", "P3", "P4", "P6"]
    assert r.verdicts(["P3", "P1"]).tolist() == [S, F]
    assert r.counts() == {METHOD_MAJORITY: 4, METHOD_TIE_RESOLVED: 1, METHOD_NO_CONSENSUS: 0}
    assert r.n_evaluators == 4
    with pytest.raises(ValueError, match="pair_ids has the pair 'P9', which has no judgment"):
        r.verdicts(["P9"])


def test_it_treats_numpy_integer_ids_as_python_ints():
    r = consensus([(np.int64(1), np.int32(7), F), (1, 8, F)])
    assert r[1].votes_first == 2 and r[np.int64(1)].winner == FIRST


def test_it_rejects_a_second_judgment_by_the_same_evaluator():
    message = r"more than one judgment for \(pair 'P1', evaluator 'a'\)"
    with pytest.raises(ValueError, match=message):
        consensus([("P1", "a", F), ("P1", "b", S), ("P1", "a", S)])


@pytest.mark.parametrize(
    ("judgments", "message"),
    [
        ([("P1", "a")], r"judgments\[0\] must be a \(pair_id, evaluator_id, verdict\) triple"),
        ([("P1", "a", 2)], r"judgments\[0\] has the verdict 2; verdicts must be FIRST \(0\)"),
        ([("P1", "a", True)], r"judgments\[0\] has the verdict True"),
        ([(["P1"], "a", 0)], r"judgments\[0\] has an unhashable pair_id \['P1'\]"),
        ([(None, "a", 0)], r"judgments\[0\] has pair_id None"),
    ],
)
def test_it_rejects_malformed_judgments(judgments, message):
    with pytest.raises(ValueError, match=message):
        consensus(judgments)


def test_it_rejects_bad_knobs():
    with pytest.raises(ValueError, match=r"min_votes must be an integer >= 1; got 0"):
        consensus(CAST, min_votes=0)
    message = r"tie_rule must be one of \('evaluator_weight', 'none'\); got 'coin'"
    with pytest.raises(ValueError, match=message):
        consensus(CAST, tie_rule="coin")


def test_it_computes_the_consensus_of_the_others_for_one_evaluator():
    # Without c: P1 a F, b F, d F -> F; P2 a F, b F, d S -> F (majority, no tie now);
    # P3 a S, b S -> S; P4 a F, d F -> F.
    r = leave_one_out_consensus(CAST, "c")
    assert r.verdicts(["P1", "P2", "P3", "P4"]).tolist() == [F, F, S, F]
    assert r["P2"].method == METHOD_MAJORITY
    assert (r["P2"].votes_first, r["P2"].votes_second) == (2, 1)
    assert r.n_evaluators == 3
    with pytest.raises(ValueError, match="evaluator 'zed' has no judgment in judgments"):
        leave_one_out_consensus(CAST, "zed")


def test_it_passes_options_through_leave_one_out():
    # Without a: P6 has b's skip only -> below min_votes=1 as well.
    r = leave_one_out_consensus(CAST, "a", tie_rule="none")
    assert r["P6"].reason == REASON_FEW_VOTES
    assert r.tie_rule == "none"


# --------------------------------------------------------------------------- slow oracle


def _random_judgments(rng, *, n_pairs, n_evaluators):
    out = []
    for p in range(n_pairs):
        truth = int(rng.integers(0, 2))
        for e in range(n_evaluators):
            u = rng.random()
            if u < 0.2:
                continue  # not asked
            v = K if u < 0.3 else (truth if rng.random() < 0.7 else 1 - truth)
            out.append((p, f"e{e}", v))
    return out


def _slow_consensus(judgments):
    """(winner, weight_first, weight_second) per pair from the docstring definition, by brute force.

    Weights are None unless the pair is a vote tie.
    """
    votes = {}
    for p, e, v in judgments:
        votes.setdefault(p, {})[e] = v
    winners = {}
    for p, ev in votes.items():
        f = sum(v == F for v in ev.values())
        s = sum(v == S for v in ev.values())
        if f + s == 0:
            winners[p] = (None, None, None)
        elif f != s:
            winners[p] = (F if f > s else S, None, None)
        else:
            side = {F: Fraction(0), S: Fraction(0)}
            for e, v in ev.items():
                if v == K:
                    continue
                agree = count = 0
                for q, evq in votes.items():
                    if q == p or evq.get(e, K) == K:
                        continue
                    others = [w for x, w in evq.items() if x != e and w != K]
                    of, os_ = others.count(F), others.count(S)
                    if of == os_:
                        continue
                    count += 1
                    agree += evq[e] == (F if of > os_ else S)
                side[v] += Fraction(agree, count) if count else Fraction(1, 2)
            winner = None if side[F] == side[S] else (F if side[F] > side[S] else S)
            winners[p] = (winner, float(side[F]), float(side[S]))
    return winners


def test_it_matches_a_brute_force_reading_of_the_weight_rule():
    n_ties = 0
    for seed in range(8):
        judgments = _random_judgments(np.random.default_rng(seed), n_pairs=30, n_evaluators=4)
        r = consensus(judgments)
        slow = _slow_consensus(judgments)
        for rec in r.pairs:
            winner = None if rec.winner is None else int(rec.winner)
            assert (winner, rec.weight_first, rec.weight_second) == slow[rec.pair_id], rec
        n_ties += sum(rec.votes_first == rec.votes_second > 0 for rec in r.pairs)
    assert n_ties >= 10  # the check must actually exercise the tie rule
