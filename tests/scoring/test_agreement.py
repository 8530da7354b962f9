"""Cohen's kappa, Krippendorff's alpha, Fleiss' kappa, raw agreement."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from scoring.agreement import (
    REASON_ALPHA_SINGLE_VALUE,
    REASON_FLEISS_FEW_ITEMS,
    REASON_FLEISS_FEW_RATERS,
    REASON_FLEISS_MISSING,
    REASON_FLEISS_SINGLE_LABEL,
    REASON_NO_COMMON_ITEM,
    REASON_NO_PAIRABLE_UNIT,
    REASON_SINGLE_LABEL,
    agreement_rate,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)

N = None
NAN = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C
# ("nominal data, any number of observers, missing data"): 4 observers x 12
# units, "." = missing. Published results: alpha_nominal = 0.743 and
# alpha_interval = 0.849, with n.. = 40 pairable values (unit 12 holds a
# single value and is not pairable).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],  # observer A
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],  # observer B
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],  # observer C
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],  # observer D
]

# Fleiss (1971) example as reproduced in Wikipedia's "Fleiss' kappa" worked
# example: 10 subjects, 14 raters, 5 categories; counts n_ij per subject.
# Published: P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
FLEISS_WIKIPEDIA_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _ratings_from_counts(counts):
    return [[j + 1 for j, c in enumerate(row) for _ in range(c)] for row in counts]


# --------------------------------------------------------------------------- Cohen


def test_it_computes_kappa_of_a_hand_worked_2x2_table():
    #            b=0  b=1
    #   a=0       3    1     row 4
    #   a=1       2    4     row 6
    #   col       5    5     n = 10
    # p_o = (3 + 4) / 10 = 0.7; p_e = (4*5 + 6*5) / 100 = 0.5
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    b = [0, 0, 0, 1, 0, 0, 1, 1, 1, 1]
    r = cohen_kappa(a, b)
    assert r.n == 10
    assert r.p_o == pytest.approx(0.7, abs=1e-15)
    assert r.p_e == pytest.approx(0.5, abs=1e-15)
    assert r.kappa == pytest.approx(0.4, abs=1e-14)
    assert r.undefined_reason is None


def test_it_drops_items_either_rater_left_unlabelled():
    a = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, None, 1, NAN]
    b = [0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 0, np.nan, NAN]
    r = cohen_kappa(a, b)
    assert r.n == 10
    assert r.kappa == pytest.approx(0.4, abs=1e-14)


def test_it_gives_zero_kappa_when_one_rater_is_constant_but_the_other_is_not():
    # a = 1,1,1,1 ; b = 1,1,0,1: p_o = 3/4; p_e = (4*3 + 0*1) / 16 = 3/4 -> kappa = 0
    r = cohen_kappa([1, 1, 1, 1], [1, 1, 0, 1])
    assert r.kappa == pytest.approx(0.0, abs=1e-15)
    assert r.p_e == pytest.approx(0.75, abs=1e-15)


def test_it_reports_kappa_undefined_when_both_raters_use_one_same_label():
    r = cohen_kappa(["x", "x", "x"], ["x", "x", "x"])
    assert r.kappa is None
    assert r.p_o == 1.0 and r.p_e == 1.0 and r.n == 3
    assert r.undefined_reason == REASON_SINGLE_LABEL.format(label="x")
    assert r.undefined_reason == "expected agreement p_e = 1: both raters used only the label 'x'"


def test_it_reports_kappa_undefined_when_no_item_is_labelled_by_both():
    r = cohen_kappa([0, None, 1], [None, 1, NAN])
    assert (r.kappa, r.p_o, r.p_e, r.n) == (None, None, None, 0)
    assert r.undefined_reason == REASON_NO_COMMON_ITEM == "no item labelled by both"


def test_it_matches_sklearn_on_many_random_cases():
    rng = np.random.default_rng(20240601)
    checked = 0
    for _ in range(300):
        n = int(rng.integers(1, 40))
        k = int(rng.integers(1, 5))
        a = rng.integers(0, k, n).astype(float)
        b = np.where(rng.random(n) < 0.7, a, rng.integers(0, k, n)).astype(float)
        a[rng.random(n) < 0.1] = np.nan
        b[rng.random(n) < 0.1] = np.nan
        keep = ~np.isnan(a) & ~np.isnan(b)
        r = cohen_kappa(a, b)
        assert r.n == int(keep.sum())
        if r.n == 0:
            assert r.kappa is None
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns on its own undefined (NaN) case
            expected = cohen_kappa_score(a[keep], b[keep])
        if r.kappa is None:
            assert math.isnan(expected)
        else:
            assert r.kappa == pytest.approx(expected, abs=1e-12)
            checked += 1
    assert checked > 200


def test_it_handles_string_labels_like_integer_codes():
    a = ["easy", "easy", "hard", "hard", "hard"]
    b = ["easy", "hard", "hard", "hard", "easy"]
    ints = cohen_kappa([0, 0, 1, 1, 1], [0, 1, 1, 1, 0])
    # p_o = 3/5; p_e = (2*2 + 3*3) / 25 = 13/25; kappa = (15/25 - 13/25) / (12/25) = 1/6
    assert cohen_kappa(a, b).kappa == pytest.approx(1 / 6, abs=1e-14)
    assert ints.kappa == pytest.approx(1 / 6, abs=1e-14)


def test_it_rejects_a_label_outside_the_declared_labels():
    with pytest.raises(ValueError, match=r"b has the label 2, which is not in labels \[0, 1\]"):
        cohen_kappa([0, 1, 1], [0, 1, 2], labels=[0, 1])


def test_it_ignores_unused_declared_labels():
    r = cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1], labels=[0, 1, 2, 3])
    # p_o = 3/4, p_e = (2*1 + 2*3)/16 = 1/2 -> kappa = 1/2
    assert r.kappa == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([0, 1], [0], "a and b must have the same length; got 2 and 1"),
        ([[0, 1]], [[0, 1]], r"a must be 1-dimensional \(n_items,\); got shape \(1, 2\)"),
    ],
)
def test_it_rejects_malformed_rater_vectors(a, b, message):
    with pytest.raises(ValueError, match=message):
        cohen_kappa(a, b)


def test_it_serialises_a_kappa_result_to_a_dict():
    d = cohen_kappa([0, 1], [0, 1]).to_dict()
    assert d == {"kappa": 1.0, "p_o": 1.0, "p_e": 0.5, "n": 2, "undefined_reason": None}


def test_it_computes_raw_agreement_over_items_both_labelled():
    # items 0..3 labelled by both: agree on 0, 2 -> 2/4
    assert agreement_rate([0, 1, 1, 0, None], [0, 0, 1, 1, 1]) == (0.5, 4)
    assert agreement_rate([None], [1]) == (None, 0)


# --------------------------------------------------------------------------- Krippendorff


def test_it_reproduces_krippendorffs_published_nominal_example():
    r = krippendorff_alpha(KRIPPENDORFF_2011)
    assert r.alpha == pytest.approx(0.743, abs=5e-4)
    assert r.n_pairable == 40
    assert r.n_units_pairable == 11
    assert r.undefined_reason is None


def test_it_reproduces_krippendorffs_published_interval_example():
    r = krippendorff_alpha(KRIPPENDORFF_2011, level="interval")
    assert r.alpha == pytest.approx(0.849, abs=5e-4)


def test_it_accepts_nan_as_missing_in_a_float_matrix():
    arr = np.array([[np.nan if x is None else x for x in row] for row in KRIPPENDORFF_2011])
    assert krippendorff_alpha(arr).alpha == pytest.approx(0.743, abs=5e-4)


def _alpha_by_pairs(data, delta):
    """Slow alpha from explicit ordered pairs of values (Krippendorff 2011, section A)."""
    units = [[row[u] for row in data if row[u] is not None] for u in range(len(data[0]))]
    units = [vals for vals in units if len(vals) >= 2]
    pooled = [v for vals in units for v in vals]
    n = len(pooled)
    d_o = sum(
        sum(delta(x, y) for x, y in itertools.permutations(vals, 2)) / (len(vals) - 1)
        for vals in units
    ) / n
    d_e = sum(delta(x, y) for x, y in itertools.permutations(pooled, 2)) / (n * (n - 1))
    return 1 - d_o / d_e


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_it_matches_a_slow_pairwise_alpha_on_random_data(level):
    rng = np.random.default_rng(7)
    delta = (lambda x, y: float(x != y)) if level == "nominal" else (lambda x, y: (x - y) ** 2)
    for _ in range(30):
        raters, units = int(rng.integers(2, 5)), int(rng.integers(3, 12))
        vals = rng.integers(1, 5, size=(raters, units)).tolist()
        data = [[None if rng.random() < 0.25 else v for v in row] for row in vals]
        r = krippendorff_alpha(data, level=level)
        if r.alpha is None:
            continue
        assert r.alpha == pytest.approx(_alpha_by_pairs(data, delta), abs=1e-12)


def test_it_gives_alpha_one_for_perfect_agreement():
    # every unit has agreeing values: d_o = 0 -> alpha = 1
    r = krippendorff_alpha([[1, 2, 2, N], [1, 2, 2, 3], [N, 2, 2, 3]])
    assert r.alpha == pytest.approx(1.0, abs=1e-15)
    assert r.d_o == pytest.approx(0.0, abs=1e-15)


def test_it_reports_alpha_undefined_without_pairable_units():
    r = krippendorff_alpha([[1, N, 2], [N, 3, N]])
    assert r.alpha is None and r.n_pairable == 0
    assert r.undefined_reason == REASON_NO_PAIRABLE_UNIT


def test_it_reports_alpha_undefined_when_every_pairable_value_is_the_same():
    r = krippendorff_alpha([["a", "a", "b"], ["a", "a", N]])
    assert r.alpha is None
    assert r.undefined_reason == REASON_ALPHA_SINGLE_VALUE.format(label="a")


def test_it_rejects_unknown_levels_and_non_numeric_interval_data():
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2]], level="ordinal")
    with pytest.raises(ValueError, match="real numbers for level='interval'; got 'x'"):
        krippendorff_alpha([["x", 1], [1, 1]], level="interval")
    with pytest.raises(ValueError, match=r"2-dimensional \(n_raters, n_units\)"):
        krippendorff_alpha([1, 2, 3])


# --------------------------------------------------------------------------- Fleiss


def test_it_reproduces_the_published_fleiss_example():
    r = fleiss_kappa(_ratings_from_counts(FLEISS_WIKIPEDIA_COUNTS))
    assert (r.n_items, r.n_raters) == (10, 14)
    assert r.kappa == pytest.approx(0.210, abs=5e-4)
    assert r.p_o == pytest.approx(0.378, abs=5e-4)
    assert r.p_e == pytest.approx(0.213, abs=5e-4)


def test_it_computes_fleiss_kappa_of_a_hand_worked_table():
    # 3 items x 3 raters, labels a/b:
    #   item 1: a a a -> pairs agreeing (3*2 + 0) / (3*2) = 1
    #   item 2: a a b -> (2*1 + 0) / 6 = 1/3
    #   item 3: b b b -> 1
    # P-bar = (1 + 1/3 + 1) / 3 = 7/9; p_a = 5/9, p_b = 4/9, P_e = 25/81 + 16/81 = 41/81
    # kappa = (7/9 - 41/81) / (1 - 41/81) = (63 - 41) / (81 - 41) = 22/40 = 0.55
    r = fleiss_kappa([["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"]])
    assert r.p_o == pytest.approx(7 / 9, abs=1e-14)
    assert r.p_e == pytest.approx(41 / 81, abs=1e-14)
    assert r.kappa == pytest.approx(0.55, abs=1e-14)


@pytest.mark.parametrize(
    ("ratings", "reason"),
    [
        ([[1, 1], [1, None]], REASON_FLEISS_MISSING.format(n_missing=1)),
        ([[1, 2, 2]], REASON_FLEISS_FEW_ITEMS.format(n_items=1)),
        ([[1], [2]], REASON_FLEISS_FEW_RATERS.format(n_raters=1)),
        ([[3, 3], [3, 3]], REASON_FLEISS_SINGLE_LABEL.format(label=3)),
    ],
)
def test_it_explains_degenerate_fleiss_input_instead_of_nan(ratings, reason):
    r = fleiss_kappa(ratings)
    assert r.kappa is None
    assert r.undefined_reason == reason


def test_it_rejects_a_fleiss_matrix_that_is_not_two_dimensional():
    with pytest.raises(ValueError, match=r"ratings must be 2-dimensional \(n_items, n_raters\)"):
        fleiss_kappa([1, 2, 3])


@pytest.mark.parametrize("seed", range(5))
def test_units_with_fewer_than_two_values_change_no_alpha_figure(seed):
    """The report hands alpha only the pairs with two or more votes: dropping the others leaves
    every figure (alpha, d_o, d_e, pairable counts) exactly equal."""
    rng = np.random.default_rng(seed)
    data = rng.choice([0, 1], size=(4, 300)).astype(object)
    data[rng.random(data.shape) < 0.7] = None  # many units with 0 or 1 value
    full = krippendorff_alpha(data.tolist())
    keep = (data != None).sum(axis=0) >= 2  # noqa: E711 (element-wise on an object array)
    assert 0 < keep.sum() < data.shape[1]
    assert krippendorff_alpha(data[:, keep].tolist()) == full
