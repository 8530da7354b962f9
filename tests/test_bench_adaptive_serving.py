"""The adaptive bench serves pairs as the site does: chosen when the evaluator's previous judgment arrives, judged
at their next turn, the pairs the other evaluators hold left out while another pair is left."""
from __future__ import annotations

import numpy as np

from bench.bench_adaptive import Adaptive, make_world
from scoring.adaptive_pairs import AdaptiveConfig


def strategy(*, ahead: bool = True, per_subject: int = 6) -> Adaptive:
    world = make_world(3, n_subjects=1, per_subject=per_subject, n_evaluators=4, spread=1.2)
    return Adaptive(world, np.random.default_rng(0), AdaptiveConfig(min_comparisons=1, random_share=0.0),
                    ahead=ahead)


def test_the_pair_of_a_turn_is_the_one_chosen_when_the_previous_judgment_arrived():
    s = strategy()
    first = s.next(0, set())
    s.record(*first)
    s.answered(0, {first})
    held = s.held[0]
    assert held != first
    # Votes that arrive in between do not change what was chosen for the evaluator's next turn.
    s.record(*held)
    assert s.next(0, {first}) == held
    assert 0 not in s.held


def test_no_evaluator_is_given_a_pair_another_one_holds_while_another_is_left():
    s = strategy()
    held = []
    for e in range(4):
        pair = s.next(e, set())
        s.answered(e, {pair})
        held.append(s.held[e])
    assert len(set(held)) == 4


def test_when_only_held_pairs_are_left_one_of_them_is_given():
    s = strategy(per_subject=3)  # 3 pairs in all
    s.held = {1: (0, 1), 2: (0, 2)}
    pair = s.next(0, {(1, 2)})
    assert pair in {(0, 1), (0, 2)}


def test_without_serving_ahead_nothing_is_held_and_each_turn_chooses_afresh():
    s = strategy(ahead=False)
    pair = s.next(0, set())
    s.answered(0, {pair})
    assert s.held == {}
    assert s.next(0, {pair}) not in (None, pair)
