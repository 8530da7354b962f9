"""PLACEHOLDER written by h15d against h15c's interface; h15c's version replaces it.

Adaptive pair selection: choose an evaluator's next same-subject pair from
the judgments so far (exposure first, then informative pairs, with a random
share).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["AdaptiveConfig", "ScaleEstimate", "choose_next_pair", "scale_estimate"]


@dataclass(frozen=True)
class AdaptiveConfig:
    min_comparisons: int = 5
    random_share: float = 0.1


@dataclass(frozen=True)
class ScaleEstimate:
    b: NDArray[np.float64]
    se: NDArray[np.float64]
    n_comparisons: NDArray[np.int64]


def scale_estimate(n_questions: int, harder: ArrayLike, easier: ArrayLike) -> ScaleEstimate:
    h = np.asarray(harder, dtype=np.int64)
    e = np.asarray(easier, dtype=np.int64)
    wins = np.bincount(h, minlength=n_questions).astype(float)
    losses = np.bincount(e, minlength=n_questions).astype(float)
    n = (wins + losses).astype(np.int64)
    b = np.log((wins + 0.5) / (losses + 0.5))
    se = 2.0 / np.sqrt(n + 1.0)
    return ScaleEstimate(b=b, se=se, n_comparisons=n)


def choose_next_pair(
    *,
    subjects: ArrayLike,
    estimate: ScaleEstimate,
    seen: ArrayLike,
    rng: np.random.Generator,
    config: AdaptiveConfig = AdaptiveConfig(),
) -> tuple[int, int] | None:
    s = np.asarray(subjects)
    n = len(s)
    seen_arr = np.asarray(seen, dtype=np.int64).reshape(-1, 2)
    seen_set = {(min(a, b), max(a, b)) for a, b in seen_arr.tolist()}
    i, j = np.triu_indices(n, 1)
    ok = s[i] == s[j]
    if seen_set:
        keys = i * n + j
        bad = np.array([a * n + b for a, b in seen_set], dtype=np.int64)
        ok &= ~np.isin(keys, bad)
    i, j = i[ok], j[ok]
    if not len(i):
        return None
    nc = estimate.n_comparisons
    low = np.minimum(nc[i], nc[j])
    if low.min() < config.min_comparisons:
        score = -(nc[i] + nc[j]).astype(float) + rng.random(len(i)) * 0.5
    elif rng.random() < config.random_share:
        score = rng.random(len(i))
    else:
        d = estimate.b[i] - estimate.b[j]
        p = 1.0 / (1.0 + np.exp(-d))
        score = p * (1 - p) * (estimate.se[i] + estimate.se[j]) + rng.random(len(i)) * 1e-9
    k = int(np.argmax(score))
    return int(i[k]), int(j[k])
