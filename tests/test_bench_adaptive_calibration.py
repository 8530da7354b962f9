"""The adaptive bench's calibration-only runs measure what its full runs measure."""
from __future__ import annotations

import math

import pytest

from bench.bench_adaptive import (
    LEVELS,
    RELIABILITY_POINTS,
    RULE_CHECK_EVERY,
    Run,
    _calibration,
    _point_line,
    make_world,
    simulate,
)
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
    # The later projection points: the same in both runs, made once the reliability reached each point.
    assert short.at_reliability == full.at_reliability
    assert sorted(short.at_reliability) == sorted(RELIABILITY_POINTS)
    for point, (at, reliability, (more, low, high)) in short.at_reliability.items():
        assert reliability >= float(point) and at <= short.reliability_at
        assert low <= more <= high


def test_a_run_whose_rule_never_fired_counts_as_a_missed_projection(capsys):
    # Projected 100 more, took 110 (ratio 0.91, within +-25 %); projected 1,000, never fired (a miss);
    # projected 100, took 200 (ratio 0.5, a miss, outside its interval 80-150).
    runs = {"uniform": [Run(projected_at=500.0, projected_more=(100.0, 80.0, 150.0), reliability_at=610.0),
                        Run(projected_at=500.0, projected_more=(1000.0, 800.0, 1500.0)),
                        Run(projected_at=500.0, projected_more=(100.0, 80.0, 150.0), reliability_at=700.0)],
            "adaptive": [Run()]}
    _calibration(runs)
    out = capsys.readouterr().out.splitlines()
    default = out[out.index(next(line for line in out if line.startswith(" default"))) + 1:][:4]
    assert "100/110 1000/never 100/200" in default[0]
    assert "within +-25 %: 1/3 seeds" in default[1] and "interval holds the actual: 1/3" in default[1]
    assert "ratio median 0.70, range 0.50-0.91" in default[1]  # (100/110 + 0.5) / 2 = 0.7045
    assert "projected/actual per seed: n/a" in default[2] and "within +-25 %: 0/0" in default[3]


def test_a_reliability_point_counts_runs_as_the_8_votes_projection_does(capsys):
    # Made at 300 with 100 more projected, fired at 390 (100/90 = 1.11: within; the interval 80-150 holds 90);
    # never reached the point (n/a, not counted); reached it, rule never fired (a miss); reached it in the look
    # that fired the rule (nothing left to project: not counted).
    _point_line("uniform", [((300.0, 0.61, (100.0, 80.0, 150.0)), 390.0), (None, 500.0),
                            ((300.0, 0.62, (100.0, 80.0, 150.0)), float("nan")),
                            ((400.0, 0.81, (0.0, 0.0, 0.0)), 400.0)])
    out = capsys.readouterr().out.splitlines()
    assert "100/90 n/a 100/never same look" in out[0]
    assert "within +-25 %: 1/2 seeds" in out[1] and "interval holds the actual: 1/2" in out[1]
    assert "reliability then: median 0.620" in out[1]  # median of 0.61, 0.62, 0.81 (n/a has none)
