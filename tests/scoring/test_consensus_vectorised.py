"""The vectorised leave-one-out consensus (issue 16) gives the verdicts of the
per-evaluator implementation it replaces, on random studies with ties, skips,
missing judgments and several ``min_votes``.

``_slow_reference`` is the old code path of the report, kept here: one call of
:func:`scoring.leave_one_out_consensus` per evaluator over the judgment list.
"""
from __future__ import annotations

import numpy as np
import pytest

from scoring.consensus import leave_one_out_consensus, leave_one_out_verdicts
from scoring.pairs import FIRST, SECOND, SKIP, UNDEFINED


def _slow_reference(human: np.ndarray, *, min_votes: int, tie_rule: str) -> np.ndarray:
    """What ``annotate.reports.services.human._vs_others`` computed before, row by row."""
    n_e, n_p = human.shape
    judgments = [(p, e, int(human[e, p])) for e in range(n_e) for p in range(n_p) if human[e, p] != UNDEFINED]
    out = np.full((n_e, n_p), int(UNDEFINED), dtype=np.int8)
    for e in range(n_e):
        if not any(j[1] == e for j in judgments):
            continue  # the old path never asked for an evaluator without judgments
        others = leave_one_out_consensus(judgments, e, min_votes=min_votes, tie_rule=tie_rule)
        judged = {p.pair_id for p in others.pairs}
        out[e] = [int(others[p].verdict) if p in judged else int(UNDEFINED) for p in range(n_p)]
    return out


def _random_study(rng: np.random.Generator, n_e: int, n_p: int, p_missing: float, p_skip: float) -> np.ndarray:
    codes = rng.choice([int(FIRST), int(SECOND)], size=(n_e, n_p))
    codes[rng.random((n_e, n_p)) < p_skip] = int(SKIP)
    codes[rng.random((n_e, n_p)) < p_missing] = int(UNDEFINED)
    return codes.astype(np.int8)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("min_votes", [1, 2, 3])
@pytest.mark.parametrize("tie_rule", ["evaluator_weight", "none"])
def test_it_matches_the_per_evaluator_implementation_on_random_studies(seed, min_votes, tie_rule):
    rng = np.random.default_rng(seed)
    n_e = int(rng.integers(2, 9))
    # Even evaluator counts and few pairs make exact vote ties (the weighted branch) common.
    human = _random_study(rng, n_e, int(rng.integers(1, 25)), p_missing=rng.uniform(0, 0.5),
                          p_skip=rng.uniform(0, 0.3))
    fast = leave_one_out_verdicts(human, min_votes=min_votes, tie_rule=tie_rule)
    slow = _slow_reference(human, min_votes=min_votes, tie_rule=tie_rule)
    np.testing.assert_array_equal(fast, slow)


def test_the_random_studies_exercise_every_branch():
    """Guard for the test above: its studies contain resolved ties, unresolved
    ties, majorities and pairs below min_votes."""
    seen = set()
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n_e = int(rng.integers(2, 9))
        human = _random_study(rng, n_e, int(rng.integers(1, 25)), p_missing=rng.uniform(0, 0.5),
                              p_skip=rng.uniform(0, 0.3))
        judgments = [(p, e, int(human[e, p])) for e in range(n_e) for p in range(human.shape[1])
                     if human[e, p] != UNDEFINED]
        for e in {j[1] for j in judgments}:
            for rec in leave_one_out_consensus(judgments, e, min_votes=2).pairs:
                seen.add(rec.method if rec.reason is None else rec.reason)
    assert {"majority", "tie_resolved", "tie not resolved by weights", "fewer than min_votes votes"} <= seen


def test_a_hand_worked_tie_is_resolved_by_the_others_weights():
    # Pairs 0..2; evaluators a, b, c, d. Leave d out: pair 0 has a=FIRST, b=SECOND (a tie).
    # Weights among {a, b, c}: on pairs 1 and 2, a and c vote FIRST, b votes SECOND.
    # a: on pair 1 the others (b, c) tie -> not informative; same on pair 2 -> weight 1/2.
    # b: on pairs 1, 2 the others (a, c) say FIRST, b says SECOND -> 0/2 = 0.
    # So pair 0: FIRST weight 1/2 > SECOND weight 0 -> FIRST.
    human = np.array([[0, 0, 0], [1, 1, 1], [-1, 0, 0], [1, 1, 1]], dtype=np.int8)
    fast = leave_one_out_verdicts(human)
    assert fast[3, 0] == FIRST
    assert fast[3, 1] == FIRST and fast[3, 2] == FIRST  # a, c vs b: a majority
    np.testing.assert_array_equal(fast, _slow_reference(human, min_votes=1, tie_rule="evaluator_weight"))


def test_it_rejects_codes_that_are_not_judgments():
    with pytest.raises(ValueError, match=r"human\[0, 1\] is 2"):
        leave_one_out_verdicts([[0, 2]])
    with pytest.raises(ValueError, match="2-D integer array"):
        leave_one_out_verdicts([0, 1])


@pytest.mark.parametrize("seed", range(4))
def test_an_integer_array_of_judgments_gives_the_consensus_of_the_list(seed):
    from scoring.consensus import consensus

    human = _random_study(np.random.default_rng(seed), 7, 40, 0.3, 0.1)
    e, p = np.nonzero(human != UNDEFINED)
    triples = [(int(pp), int(ee), int(human[ee, pp])) for ee, pp in zip(e, p, strict=True)]
    from_list = consensus(triples, min_votes=2)
    from_array = consensus(np.array(triples, dtype=np.int64), min_votes=2)
    assert from_array.pairs == from_list.pairs
    assert len(from_array.pairs) == len({t[0] for t in triples})


def test_an_integer_array_is_checked_like_a_list():
    from scoring.consensus import consensus

    with pytest.raises(ValueError, match=r"judgments\[1\] has the verdict 2; verdicts must be FIRST \(0\)"):
        consensus(np.array([[1, 1, 0], [1, 2, 2]]))
    with pytest.raises(ValueError, match=r"more than one judgment for \(pair 4, evaluator 9\)$"):
        consensus(np.array([[4, 9, 0], [5, 9, 1], [4, 9, 1]]))
    with pytest.raises(ValueError, match=r"must be a \(n_judgments, 3\) array"):
        consensus(np.array([[4, 9]]))


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("min_votes", [1, 2, 3])
@pytest.mark.parametrize("tie_rule", ["evaluator_weight", "none"])
def test_the_array_kernel_gives_the_records_of_the_list_kernel(seed, min_votes, tie_rule):
    """Every record (counts, winner, method, reason, tie weights) of the array path equals
    the per-judgment path's, for scattered ids given in any order."""
    from scoring.consensus import consensus

    rng = np.random.default_rng(100 + seed)
    n_e, n_p = int(rng.integers(2, 9)), int(rng.integers(1, 30))
    human = _random_study(rng, n_e, n_p, p_missing=rng.uniform(0, 0.5), p_skip=rng.uniform(0, 0.3))
    pair_ids = rng.choice(10**9, size=n_p, replace=False) - 5 * 10**8  # negative ids too
    eval_ids = rng.choice(10**6, size=n_e, replace=False)
    e, p = np.nonzero(human != UNDEFINED)
    triples = [(int(pair_ids[pp]), int(eval_ids[ee]), int(human[ee, pp])) for ee, pp in zip(e, p, strict=True)]
    order = rng.permutation(len(triples))
    from_list = consensus([triples[k] for k in order], min_votes=min_votes, tie_rule=tie_rule)
    from_array = consensus(np.array(triples, dtype=np.int64).reshape(-1, 3)[order], min_votes=min_votes,
                           tie_rule=tie_rule)
    assert from_array.pairs == from_list.pairs
    assert from_array.n_evaluators == from_list.n_evaluators == len({t[1] for t in triples})


def _float_trap() -> np.ndarray:
    """A study whose pair 0 is an exact tie of weights 1/10 + 2/10 against 3/10 + 0/10.

    Evaluators A, B, C, D (rows 0-3) each judge a block of ten other pairs on which
    two helpers (rows 4, 5) vote FIRST; A agrees with them on 1 of 10, B on 2, C on 3,
    D on none. On pair 0, A and B vote FIRST and C and D SECOND; row 6 judges nothing.
    In floats 0.1 + 0.2 > 0.3 + 0.0, so a float comparison calls FIRST.
    """
    n_p = 41
    human = np.full((7, n_p), int(UNDEFINED), dtype=np.int8)
    human[:4, 0] = [int(FIRST), int(FIRST), int(SECOND), int(SECOND)]
    for e, agree in enumerate((1, 2, 3, 0)):
        block = np.arange(1 + 10 * e, 11 + 10 * e)
        human[4:6, block] = int(FIRST)
        human[e, block] = int(SECOND)
        human[e, block[:agree]] = int(FIRST)
    return human


def test_float_rounding_never_decides_a_tie():
    from scoring.consensus import consensus

    assert 0.1 + 0.2 > 0.3 + 0.0  # the trap is real
    human = _float_trap()
    e, p = np.nonzero(human != UNDEFINED)
    triples = [(int(pp), int(ee), int(human[ee, pp])) for ee, pp in zip(e, p, strict=True)]
    for judgments in (triples, np.array(triples, dtype=np.int64)):
        rec = consensus(judgments)[0]
        assert (rec.votes_first, rec.votes_second) == (2, 2)
        assert rec.winner is None and rec.reason == "tie not resolved by weights"
        assert [w for _, _, w in rec.tie_weights] == [0.1, 0.2, 0.3, 0.0]
    # row 6 judged nothing: its leave-one-out consensus is everyone's consensus
    loo = leave_one_out_verdicts(human)
    assert loo[6, 0] == UNDEFINED
    np.testing.assert_array_equal(loo[:6], _slow_reference(human, min_votes=1, tie_rule="evaluator_weight")[:6])
