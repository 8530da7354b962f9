"""scoring.human_labels.compare_with_label against a slow, obvious reference.

Every pair of labelled questions is enumerated with ``itertools.combinations``;
a bootstrap replicate weighs a pair by the product of its two questions'
multinomial counts, drawn from the generator in the order the docstring
documents (``n_boot`` multinomial rows, then ``n_boot`` rows of indices for
Spearman). Inputs are small and random, with label ties, method ties, NaN on
both sides, several subjects (``3`` and ``"3"`` are one subject: subjects are
compared as text) and margins.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import spearmanr

from scoring.human_labels import compare_with_label

MARGINS = (0.0, 0.25, 0.3, 0.5)


def _inputs(seed: int):
    g = np.random.default_rng(seed)
    n = int(g.integers(2, 45))
    d = g.integers(0, 6, n).astype(float)  # whole numbers: method ties are exact, no tolerance involved
    d[g.random(n) < 0.15] = np.nan
    lab = g.integers(0, 9, n) / 8  # multiples of 1/8: every label gap is exact
    lab[g.random(n) < 0.15] = np.nan
    subjects = np.array([("a", "b", 3, "3", "c")[k] for k in g.integers(0, 5, n)], dtype=object)
    return d, lab, subjects


def _pair_counts(d, lab, subjects, margin, weights):
    """Weighted counts over every same-subject pair of labelled questions (weights: one per labelled question)."""
    keep = [i for i in range(d.size) if np.isfinite(lab[i])]
    out = dict.fromkeys(("scored", "label_ties", "agree", "disagree", "ties", "undefined"), 0)
    for (a, wa), (b, wb) in itertools.combinations(zip(keep, weights), 2):
        if str(subjects[a]) != str(subjects[b]):
            continue
        w = int(wa) * int(wb)
        if abs(lab[a] - lab[b]) <= margin:
            out["label_ties"] += w
            continue
        out["scored"] += w
        hard, easy = (a, b) if lab[a] > lab[b] else (b, a)
        if np.isnan(d[hard]) or np.isnan(d[easy]):
            out["undefined"] += w
        elif d[hard] > d[easy]:
            out["agree"] += w
        elif d[hard] < d[easy]:
            out["disagree"] += w
        else:
            out["ties"] += w
    return out


def _interval(values, level=0.95):
    values = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if values.size == 0:
        return None
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("higher_is_harder", [True, False])
def test_counts_and_bootstrap_intervals_equal_the_enumeration_of_every_pair(seed, higher_is_harder):
    d, lab, subjects = _inputs(seed)
    n_boot = 25
    r = compare_with_label(d, lab, subjects, margins=MARGINS, label_higher_is_harder=higher_is_harder,
                           n_boot=n_boot, rng=seed)
    signed = lab if higher_is_harder else -lab
    n = int(np.isfinite(lab).sum())
    assert r.n_questions == n
    assert r.n_questions_undefined == int((np.isfinite(lab) & np.isnan(d)).sum())
    assert r.n_subjects == len({str(s) for s, x in zip(subjects, lab) if np.isfinite(x)})

    gen = np.random.default_rng(seed)
    rows = [gen.multinomial(n, np.full(n, 1.0 / n)) for _ in range(n_boot)] if n else []
    for k, margin in enumerate(MARGINS):
        got = r.margins[k]
        c = _pair_counts(d, signed, subjects, margin, np.ones(n, dtype=int))
        assert (got.n_pairs, got.n_label_ties, got.n_agree, got.n_disagree, got.n_method_ties, got.n_undefined) == (
            c["scored"], c["label_ties"], c["agree"], c["disagree"], c["ties"], c["undefined"])
        reps = [_pair_counts(d, signed, subjects, margin, w) for w in rows]
        a = [x["agree"] / x["scored"] if x["scored"] else None for x in reps]
        x_ = [x["agree"] / (x["agree"] + x["disagree"]) if x["agree"] + x["disagree"] else None for x in reps]
        assert got.agreement_ci == _interval(a)
        assert got.agreement_excluding_ties_ci == _interval(x_)
        assert got.kappa_ci == _interval([None if v is None else 2 * v - 1 for v in x_])

    # the Spearman bootstrap draws after every multinomial row, over the questions with both values
    both = np.isfinite(lab) & np.isfinite(d)
    xs, ys = d[both], signed[both]
    m = xs.size
    if r.spearman.value is None:
        assert r.spearman_ci is None
        return
    rhos = []
    for _ in range(n_boot):
        idx = gen.integers(0, m, size=m)
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = spearmanr(xs[idx], ys[idx])[0] if np.ptp(xs[idx]) and np.ptp(ys[idx]) else np.nan
        rhos.append(rho)
    want = _interval(rhos)
    assert (r.spearman_ci is None) == (want is None)
    if want is not None:
        assert r.spearman_ci == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_a_block_of_fewer_replicates_gives_the_same_intervals(monkeypatch):
    # many questions go fewer replicates at a time; the numbers must not depend on it
    import scoring.human_labels as module

    g = np.random.default_rng(5)
    d = g.random(120)
    d[g.random(120) < 0.05] = np.nan
    lab = np.round(d + g.normal(0, 0.3, 120), 1)
    s = g.integers(0, 4, 120)
    whole = compare_with_label(d, lab, s, margins=(0.0, 0.2), n_boot=23, rng=3)
    monkeypatch.setattr(module, "_BLOCK_BYTES", 8 * 120 * 2)  # two replicates a block
    assert module._chunk(120) == 2
    blocks = compare_with_label(d, lab, s, margins=(0.0, 0.2), n_boot=23, rng=3)
    assert blocks == whole
