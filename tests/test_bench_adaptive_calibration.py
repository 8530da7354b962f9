"""The adaptive bench's calibration-only runs measure what its full runs measure."""
from __future__ import annotations

import math

import pytest

from bench.bench_adaptive import LEVELS, RULE_CHECK_EVERY, make_world, simulate
from scoring.adaptive_pairs import AdaptiveConfig


@pytest.mark.parametrize("strategy", ["uniform", "adaptive"])
def test_a_calibration_only_run_projects_and_stops_as_the_full_run(strategy):
    world = make_world(5, n_subjects=4, per_subject=8, n_evaluators=40, spread=1.2)
    full = simulate(world, strategy, 5, max_per_question=max(LEVELS), config=AdaptiveConfig())
    short = simulate(world, strategy, 5, max_per_question=max(LEVELS), config=AdaptiveConfig(),
                     calibration_only=True)
    assert math.isfinite(full.projected_at) and math.isfinite(full.reliability_at)
    assert (short.projected_at, short.reliability_at) == (full.projected_at, full.reliability_at)
    assert short.projected_more == full.projected_more and short.reference_more == full.reference_more
    # The rule is read at judgment counts at least RULE_CHECK_EVERY apart after the projection.
    assert short.reliability_at - short.projected_at >= RULE_CHECK_EVERY
    # The calibration-only run skips the Spearman target and the reliability levels.
    assert math.isnan(short.judgments_to_target) and short.at_level == {}

