"""Adaptive pair selection (issue 15, point 3): scale_estimate and choose_next_pair."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from scoring.adaptive_pairs import AdaptiveConfig, ScaleEstimate, choose_next_pair, scale_estimate
from scoring.exceptions import ConvergenceError
from scoring.human_scale import bradley_terry

GREEDY = AdaptiveConfig(random_share=0.0)


def _votes(true, n_votes, rng, subjects=None):
    """Bradley-Terry votes on random pairs (within a subject when subjects are given)."""
    n = true.size
    harder, easier = [], []
    while len(harder) < n_votes:
        i, j = (int(x) for x in rng.choice(n, 2, replace=False))
        if subjects is not None and subjects[i] != subjects[j]:
            continue
        win = rng.random() < 1 / (1 + math.exp(-(true[i] - true[j])))
        harder.append(i if win else j)
        easier.append(j if win else i)
    return np.array(harder), np.array(easier)


def _estimate(n, b, se, n_comparisons):
    return ScaleEstimate(b=np.asarray(b, float), se=np.asarray(se, float),
                         n_comparisons=np.asarray(n_comparisons, np.int64))


def _rank_weights(b, se):
    """Squared rank sensitivity, mean 1: f_i = sum_{j != i} of the N(0, se_i^2 + se_j^2) density at b_i - b_j."""
    f = np.array([sum(stats.norm.pdf(b[x] - b[y], scale=math.hypot(se[x], se[y])) for y in range(b.size) if y != x)
                  for x in range(b.size)])
    return f**2 / np.mean(f**2)


def _criterion(est, i, j, subjects):
    """Brute force of the documented criterion: the drop of the subject's rank-weighted (centred) posterior
    variance, sum_k weight_k Var(b_k - mean b).

    The subject's precision ``diag(1 / se**2) - W`` (W the pair information) before and after one vote on
    ``(i, j)`` with information ``p (1 - p)``, each inverted on its own (no rank-one update formula).
    """
    members = np.flatnonzero(np.asarray(subjects) == subjects[i])
    weight = _rank_weights(np.asarray(est.b, float)[members], np.asarray(est.se, float)[members])
    m = members.size
    precision = np.diag(1 / np.asarray(est.se, float)[members] ** 2)
    if est.pair_information is not None:
        precision -= est.pair_information.toarray()[np.ix_(members, members)]
    p = 1 / (1 + math.exp(-(est.b[i] - est.b[j])))
    a = np.zeros(m)
    a[members == i], a[members == j] = 1.0, -1.0
    centre = np.eye(m) - 1.0 / m
    before = np.diag(centre @ np.linalg.inv(precision) @ centre)
    after = np.diag(centre @ np.linalg.inv(precision + p * (1 - p) * np.outer(a, a)) @ centre)
    return float(weight @ (before - after))


# --- scale_estimate ---------------------------------------------------------------------


def test_the_estimate_recovers_a_simulated_scale():
    rng = np.random.default_rng(3)
    true = rng.normal(0, 1.5, 40)
    h, e = _votes(true, 1200, rng)  # 60 votes per question
    est = scale_estimate(40, h, e)
    assert est.converged and est.residual <= 1e-6
    assert stats.spearmanr(est.b, true).statistic > 0.9
    assert est.n_comparisons.sum() == 2 * 1200


def test_the_estimate_is_human_scales_penalised_fit():
    # The ridge makes the penalised optimum sum to zero per component by itself (the likelihood is
    # shift-invariant), so it equals human_scale's constrained fit with the same penalty.
    rng = np.random.default_rng(4)
    subjects = np.repeat([0, 1], 15)
    true = rng.normal(0, 1, 30)
    h, e = _votes(true, 300, rng, subjects)
    est = scale_estimate(30, h, e, penalty=0.1, tol=1e-10)
    reference, _ = bradley_terry(h, e, n_items=30, penalty=0.1)
    np.testing.assert_allclose(est.b, reference, atol=1e-7)


def test_the_hand_worked_two_question_case():
    # 3 votes for 0, 1 for 1, no ridge to speak of: b0 - b1 = log 3; with penalty 0.1 the optimum
    # solves 3 (1 - p) - 1 p = 0.1 b0 ... checked against the closed form of the unpenalised fit.
    est = scale_estimate(2, [0, 0, 0, 1], [1, 1, 1, 0], penalty=1e-9, tol=1e-10)
    assert est.b[0] - est.b[1] == pytest.approx(math.log(3), abs=1e-6)
    # se: information 4 p (1 - p) = 4 * 3/16 = 0.75 on each question
    np.testing.assert_allclose(est.se, 1 / math.sqrt(0.75), rtol=1e-6)


def test_unjudged_questions_sit_at_the_prior():
    est = scale_estimate(5, [0, 0], [1, 1], penalty=0.25)
    np.testing.assert_array_equal(est.b[2:], 0.0)
    np.testing.assert_allclose(est.se[2:], 2.0)  # 1 / sqrt(0.25)
    assert est.se[0] < 2.0
    assert est.n_comparisons.tolist() == [2, 2, 0, 0, 0]


def test_a_question_that_wins_everything_and_disconnected_subjects_stay_finite():
    h = [0] * 20 + [3] * 5
    e = [1] * 20 + [2] * 5
    est = scale_estimate(4, h, e)
    assert np.all(np.isfinite(est.b)) and est.b[0] > est.b[1] and est.b[3] > est.b[2]
    assert est.b[0] + est.b[1] == pytest.approx(0.0, abs=1e-6)  # each component centres itself


def test_a_warm_start_reaches_the_same_optimum():
    rng = np.random.default_rng(5)
    true = rng.normal(0, 1, 20)
    h, e = _votes(true, 200, rng)
    cold = scale_estimate(20, h, e, tol=1e-10)
    warm = scale_estimate(20, h, e, tol=1e-10, initial=rng.normal(0, 3, 20))
    np.testing.assert_allclose(warm.b, cold.b, atol=1e-8)


def test_the_order_of_the_votes_changes_nothing():
    rng = np.random.default_rng(6)
    h, e = _votes(rng.normal(0, 1, 15), 100, rng)
    perm = rng.permutation(h.size)
    a, b = scale_estimate(15, h, e, tol=1e-10), scale_estimate(15, h[perm], e[perm], tol=1e-10)
    np.testing.assert_allclose(a.b, b.b, atol=1e-9)
    np.testing.assert_allclose(a.se, b.se, atol=1e-9)


def test_max_iter_one_raises_convergence_error():
    with pytest.raises(ConvergenceError, match="did not converge"):
        scale_estimate(3, [0, 0, 1, 2], [1, 2, 2, 0], max_iter=1, tol=1e-12)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_questions": 0}, "n_questions must be an integer >= 1; got 0"),
    ({"n_questions": 2.0}, "n_questions must be an integer >= 1; got 2.0"),
    ({"harder": [0, 1, 2]}, "harder and easier must have equal lengths; got 3 and 2"),
    ({"harder": [0, 5]}, r"harder holds question index 5 at position \(1,\); indices must be in \[0, 3\)"),
    ({"easier": [-1, 2]}, r"easier holds question index -1 at position \(0,\)"),
    ({"easier": [0, 2]}, "a vote compares a question with itself: harder == easier at position 0"),
    ({"harder": [0.5, 1]}, "harder must hold integer question indices; got dtype float64"),
    ({"harder": [[0, 1]]}, r"harder must have shape \(n_votes,\); got \(1, 2\)"),
    ({"penalty": 0.0}, "penalty must be a finite number > 0; got 0.0"),
    ({"penalty": -1}, "penalty must be a finite number > 0; got -1"),
    ({"initial": [0.0, 1.0]}, r"initial must be a finite float array of shape \(3,\); got shape \(2,\)"),
])
def test_scale_estimate_names_the_bad_input(kwargs, message):
    args = {"n_questions": 3, "harder": [0, 1], "easier": [1, 2]} | kwargs
    n = args.pop("n_questions")
    with pytest.raises(ValueError, match=message):
        scale_estimate(n, args.pop("harder"), args.pop("easier"), **args)


# --- choose_next_pair -------------------------------------------------------------------


def _world(seed=0, n_subjects=3, per_subject=8, n_votes=120):
    rng = np.random.default_rng(seed)
    subjects = np.repeat(np.array(["bio", "law", "math"][:n_subjects]), per_subject)
    true = rng.normal(0, 1.2, subjects.size)
    h, e = _votes(true, n_votes, rng, subjects)
    return subjects, scale_estimate(subjects.size, h, e), rng


def test_pairs_stay_within_a_subject_and_come_ordered():
    subjects, est, _ = _world()
    for seed in range(200):
        config = AdaptiveConfig(random_share=0.5)
        i, j = choose_next_pair(subjects=subjects, estimate=est, seen=[], rng=np.random.default_rng(seed),
                                config=config)
        assert i < j and subjects[i] == subjects[j]
        assert isinstance(i, int) and isinstance(j, int)


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_an_evaluator_gets_every_pair_once_and_then_none(share):
    # 2 subjects of 5 and 4 questions: 10 + 6 = 16 pairs; the evaluator's seen list is given reversed.
    subjects = np.array([0] * 5 + [1] * 4)
    rng = np.random.default_rng(1)
    est = scale_estimate(9, [0, 1, 5], [2, 3, 6])
    seen = []
    for _ in range(16):
        pair = choose_next_pair(subjects=subjects, estimate=est, seen=[(j, i) for i, j in seen], rng=rng,
                                config=AdaptiveConfig(random_share=share, min_comparisons=2))
        assert pair is not None and pair not in seen
        seen.append(pair)
    assert sorted(seen) == sorted(
        [p for s in (range(5), range(5, 9)) for p in itertools.combinations(s, 2)])
    assert choose_next_pair(subjects=subjects, estimate=est, seen=seen, rng=rng) is None


def test_none_when_no_subject_has_two_eligible_questions():
    est = scale_estimate(4, [], [])
    assert choose_next_pair(subjects=["a", "b", "c", "c"], estimate=est, seen=[], rng=np.random.default_rng(0),
                            eligible=np.array([True, True, True, False])) is None


def test_ineligible_questions_are_never_shown():
    subjects, est, _ = _world()
    eligible = np.ones(subjects.size, bool)
    eligible[::3] = False
    for seed in range(100):
        i, j = choose_next_pair(subjects=subjects, estimate=est, seen=[], rng=np.random.default_rng(seed),
                                config=AdaptiveConfig(random_share=0.5), eligible=eligible)
        assert eligible[i] and eligible[j]


def test_the_choice_maximises_the_criterion_like_a_brute_force_search():
    # The branch-and-bound scan against scoring every unseen same-subject pair (distinct values: no ties).
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = 40
        subjects = rng.integers(0, 3, n)
        est = _estimate(n, rng.normal(0, 1, n), rng.uniform(0.2, 2.0, n), rng.integers(0, 12, n))
        seen = [tuple(rng.choice(n, 2, replace=False)) for _ in range(60)]
        config = AdaptiveConfig(random_share=0.0, min_comparisons=int(rng.integers(0, 8)))
        pair = choose_next_pair(subjects=subjects, estimate=est, seen=seen, rng=rng, config=config)
        taken = {(min(a, b), max(a, b)) for a, b in seen}
        below = est.n_comparisons < config.min_comparisons
        candidates = [(i, j) for i, j in itertools.combinations(range(n), 2)
                      if subjects[i] == subjects[j] and (i, j) not in taken]
        if any(below[i] or below[j] for i, j in candidates):
            candidates = [(i, j) for i, j in candidates if below[i] or below[j]]
        best = max(candidates, key=lambda p: _criterion(est, *p, subjects))
        assert pair == best, seed


def test_the_choice_on_real_estimates_matches_a_brute_force_search():
    # Estimates from votes (so repeated pairs carry their own information), several subjects, a seen list.
    for seed in range(15):
        rng = np.random.default_rng(100 + seed)
        n = 36
        subjects = rng.integers(0, 3, n)
        true = rng.normal(0, 1.2, n)
        h, e = _votes(true, 300, rng, subjects)  # ~17 votes per question: many pairs repeat
        est = scale_estimate(n, h, e)
        seen = [tuple(rng.choice(n, 2, replace=False)) for _ in range(40)]
        pair = choose_next_pair(subjects=subjects, estimate=est, seen=seen, rng=rng,
                                config=AdaptiveConfig(min_comparisons=0, random_share=0.0))
        taken = {(min(a, b), max(a, b)) for a, b in seen}
        candidates = [(i, j) for i, j in itertools.combinations(range(n), 2)
                      if subjects[i] == subjects[j] and (i, j) not in taken]
        best = max(candidates, key=lambda p: _criterion(est, *p, subjects))
        assert _criterion(est, *pair, subjects) == pytest.approx(_criterion(est, *best, subjects), rel=1e-9), seed


def test_a_pair_judged_many_times_gives_way_to_a_fresh_one():
    # All at b = 0 with equal se = 1/sqrt(2.5 + 0.1) (penalty 0.1); (0, 1) and (2, 3) were each judged 10 times,
    # split 5-5 (information 10 * 0.25 = 2.5 each). Covariance: blocks inv([[2.6, -2.5], [-2.5, 2.6]]), so
    # var(b_0 - b_1) = 2 / (2.6 + 2.5) = 0.392 against 2 * 2.6 / (2.6**2 - 2.5**2) = 10.2 for a cross pair:
    # only the 4 cross pairs qualify.
    h = [0] * 5 + [1] * 5 + [2] * 5 + [3] * 5
    e = [1] * 5 + [0] * 5 + [3] * 5 + [2] * 5
    est = scale_estimate(4, h, e, penalty=0.1)
    np.testing.assert_allclose(est.se, 1 / math.sqrt(2.6), rtol=1e-9)
    picks = {choose_next_pair(subjects=[0] * 4, estimate=est, seen=[], rng=np.random.default_rng(s),
                              config=AdaptiveConfig(min_comparisons=0, random_share=0.0)) for s in range(100)}
    assert picks == {(0, 2), (0, 3), (1, 2), (1, 3)}
    # Without the pair information the six pairs tie.
    plain = ScaleEstimate(b=est.b, se=est.se, n_comparisons=est.n_comparisons)
    picks = {choose_next_pair(subjects=[0] * 4, estimate=plain, seen=[], rng=np.random.default_rng(s),
                              config=AdaptiveConfig(min_comparisons=0, random_share=0.0)) for s in range(100)}
    assert len(picks) == 6


def test_it_prefers_close_estimates_and_large_uncertainty():
    # Hand-worked with a diagonal covariance (no pair information), w = p (1 - p), rank weights
    # f**2 / mean = (0.1413, 0.1437, 1.8662, 1.8488) (f = 0.2885, 0.2910, 1.0486, 1.0437: sums of normal densities),
    # criterion w sum_k weight_k (u_k - mean u)**2 / (1 + w (v_i + v_j)), u = S a:
    # (0, 1) close and uncertain: u = (1, -1, 0, 0): 0.2494 * 0.2850 / 1.4988 = 0.0474;
    # (2, 3) close but certain: 0.2475 * 0.00037 / 1.005 = 0.00009;
    # (1, 2): u = (0, 1, -0.01, 0), mean 0.2475: 0.0495 * 0.327 / 1.050 = 0.0154;
    # (0, 2): 0.0452 * 0.3258 / 1.0452 = 0.0141; (1, 3), (0, 3): smaller w, less.
    est = _estimate(4, [0.0, 0.1, 3.0, 3.2], [1.0, 1.0, 0.1, 0.1], [10] * 4)
    assert choose_next_pair(subjects=[0] * 4, estimate=est, seen=[], rng=np.random.default_rng(0),
                            config=GREEDY) == (0, 1)
    assert choose_next_pair(subjects=[0] * 4, estimate=est, seen=[(1, 0)], rng=np.random.default_rng(0),
                            config=GREEDY) == (1, 2)


def test_a_large_subject_uses_the_diagonal_covariance(monkeypatch):
    # Above _DENSE_MAX the covariance is diag(se**2): criterion w (f_i v_i^2 + f_j v_j^2) / (1 + w (v_i + v_j))
    # with f the rank weights,
    # checked against that formula over all pairs (no pair information, so no parallel-link term).
    import scoring._pair_criterion as adaptive

    monkeypatch.setattr(adaptive, "_DENSE_MAX", 5)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        n = 12
        est = _estimate(n, rng.normal(0, 1, n), rng.uniform(0.2, 2.0, n), [9] * n)
        pair = choose_next_pair(subjects=[0] * n, estimate=est, seen=[], rng=rng, config=GREEDY)

        weight = _rank_weights(est.b, est.se)

        def diagonal(p, est=est, weight=weight):
            w = 1 / (1 + math.exp(-(est.b[p[0]] - est.b[p[1]])))
            w *= 1 - w
            v_i, v_j = est.se[p[0]] ** 2, est.se[p[1]] ** 2
            return w * (weight[p[0]] * v_i ** 2 + weight[p[1]] * v_j ** 2) / (1 + w * (v_i + v_j))

        assert pair == max(itertools.combinations(range(n), 2), key=diagonal), seed



def test_the_diagonal_bound_is_above_every_pair_of_its_group():
    # _diagonal_bound(i, group) >= w (f_i v_i^2 + f_j v_j^2) / (1 + w (v_i + v_j)) for every j of the group
    # (pairs without votes of their own), from the group's difficulty range, largest f v^2 and smallest v.
    from scoring import _pair_criterion as adaptive_pairs

    rng = np.random.default_rng(51)
    n = 60
    b, var, weight = rng.normal(0, 1.5, n), rng.uniform(0.05, 2.0, n), rng.uniform(0.0, 3.0, n)
    rows = np.arange(n)
    for _ in range(20):
        group = rng.choice(n, size=int(rng.integers(1, 9)), replace=False)
        bound = adaptive_pairs._diagonal_bound(rows, b[group].min(keepdims=True), b[group].max(keepdims=True),
                                               (weight[group] * var[group] ** 2).max(keepdims=True),
                                               var[group].min(keepdims=True), b, var, weight)
        for i in rows:
            for j in group:
                w = 1 / (1 + math.exp(-(b[i] - b[j])))
                w *= 1 - w
                exact = w * (weight[i] * var[i] ** 2 + weight[j] * var[j] ** 2) / (1 + w * (var[i] + var[j]))
                assert bound[i, 0] >= exact * (1 - 1e-12), (i, j)


@pytest.mark.parametrize("seed", range(6))
def test_a_large_subject_chooses_what_scoring_every_pair_chooses(monkeypatch, seed):
    # The bound skips most pairs of a large subject; the choice must be the full scan's. Every question has
    # votes (distinct estimates, no ties), some pairs twice (votes of their own), half are below the floor.
    from scoring import _pair_criterion as adaptive_pairs

    monkeypatch.setattr(adaptive_pairs, "_DENSE_MAX", 5)
    rng = np.random.default_rng(seed)
    n = 150
    subjects = np.repeat([0, 1], n // 2)
    true = rng.normal(0, 1.2, n)
    harder, easier = _votes(true, 3 * n, rng, subjects)
    harder, easier = np.concatenate([harder, harder[:40]]), np.concatenate([easier, easier[:40]])
    est = scale_estimate(n, harder, easier)
    config = AdaptiveConfig(min_comparisons=int(np.median(est.n_comparisons)), random_share=0.0)
    seen = np.stack([harder[::7], easier[::7]], axis=1)
    scored = []
    orig = adaptive_pairs._diagonal_candidates
    monkeypatch.setattr(adaptive_pairs, "_diagonal_candidates",
                        lambda *a: scored.append(orig(*a)[0].size) or orig(*a))
    pruned = choose_next_pair(subjects=subjects, estimate=est, seen=seen, rng=np.random.default_rng(0),
                              config=config)
    monkeypatch.setattr(adaptive_pairs, "_PRUNE", False)
    assert pruned == choose_next_pair(subjects=subjects, estimate=est, seen=seen, rng=np.random.default_rng(0),
                                      config=config)
    assert 0 < sum(scored) < (n // 2) ** 2 // 2  # fewer than half the subject's pairs were scored


@pytest.mark.parametrize("min_comparisons", [0, 5])
def test_a_large_subject_s_last_unseen_pair_is_chosen(monkeypatch, min_comparisons):
    # Every pair but one seen: the cells scored first (groups of 2 partners, 1 cell) usually hold seen pairs
    # only, and the one pair left must still be found.
    from scoring import _pair_criterion as adaptive_pairs

    monkeypatch.setattr(adaptive_pairs, "_DENSE_MAX", 2)
    monkeypatch.setattr(adaptive_pairs, "_BUCKET", 2)
    monkeypatch.setattr(adaptive_pairs, "_FIRST_CELLS", 1)
    n = 10
    est = scale_estimate(n, np.arange(n - 1), np.arange(1, n))
    pairs = list(itertools.combinations(range(n), 2))
    for k, left in enumerate(pairs):
        seen = [p for p in pairs if p != left]
        assert choose_next_pair(subjects=[0] * n, estimate=est, seen=seen, rng=np.random.default_rng(k),
                                config=AdaptiveConfig(min_comparisons=min_comparisons, random_share=0.0)) == left

def test_the_exposure_floor_comes_first():
    # Question 3 has 1 vote and a tiny se (the criterion alone would never pick it); the floor of 5 does.
    est = _estimate(6, [0, 0, 0, 5.0, 0, 0], [1, 1, 1, 0.01, 1, 1], [9, 9, 9, 1, 9, 9])
    for seed in range(50):
        pair = choose_next_pair(subjects=[0] * 6, estimate=est, seen=[], rng=np.random.default_rng(seed),
                                config=GREEDY)
        assert 3 in pair
    # Once question 3 has no unseen partner left, the floor no longer binds.
    seen = [(3, k) for k in (0, 1, 2, 4, 5)]
    pair = choose_next_pair(subjects=[0] * 6, estimate=est, seen=seen, rng=np.random.default_rng(0), config=GREEDY)
    assert 3 not in pair
    # min_comparisons=0 disables it.
    assert 3 not in choose_next_pair(subjects=[0] * 6, estimate=est, seen=[], rng=np.random.default_rng(0),
                                     config=AdaptiveConfig(min_comparisons=0, random_share=0.0))


def test_a_simulated_study_lifts_every_question_to_the_floor_quickly():
    # 30 questions, floor 5: the greedy rule needs at least 75 votes; allow 20 % more.
    rng = np.random.default_rng(2)
    true = rng.normal(0, 1.2, 30)
    subjects = np.repeat([0, 1, 2], 10)
    h, e = [], []
    for _ in range(90):
        est = scale_estimate(30, h, e)
        i, j = choose_next_pair(subjects=subjects, estimate=est, seen=[], rng=rng, config=GREEDY)
        win = rng.random() < 1 / (1 + math.exp(-(true[i] - true[j])))
        h.append(i if win else j)
        e.append(j if win else i)
    counts = np.bincount(h + e, minlength=30)
    assert counts.min() >= 5


def test_the_random_share_matches_the_config():
    # The informative choice is one fixed pair (the same for every generator: no tie), so a draw other than it
    # is a random draw that missed it: expected share 0.3 * 44/45 = 0.2933; binomial sd over 1,500 draws
    # 0.0118, bound +-0.045 (3.8 sd; a share of 0.2 or 0.4 fails it).
    se = np.full(10, 0.1)
    se[:2] = 5.0
    est = _estimate(10, np.linspace(-1.0, 1.0, 10), se, [20] * 10)
    best = {choose_next_pair(subjects=[0] * 10, estimate=est, seen=[], rng=np.random.default_rng(s), config=GREEDY)
            for s in range(20)}
    assert len(best) == 1
    (top,) = best
    rng = np.random.default_rng(11)
    picks = [choose_next_pair(subjects=[0] * 10, estimate=est, seen=[], rng=rng,
                              config=AdaptiveConfig(random_share=0.3)) for _ in range(1500)]
    other = [p for p in picks if p != top]
    assert abs(len(other) / 1500 - 0.3 * 44 / 45) < 0.045
    # and the random draws are uniform over the 45 pairs: chi-square over the 44 missed ones
    counts = np.array([other.count(p) for p in itertools.combinations(range(10), 2) if p != top])
    assert stats.chisquare(counts).pvalue > 1e-3


def test_ties_are_broken_at_random_and_reproducibly():
    # No votes yet: every pair ties; the choice must not always be the first pair.
    subjects = np.repeat([0, 1], 20)
    est = scale_estimate(40, [], [])
    picks = [choose_next_pair(subjects=subjects, estimate=est, seen=[], rng=np.random.default_rng(s), config=GREEDY)
             for s in range(200)]
    assert len(set(picks)) > 100  # 380 tied pairs, 200 draws: ~157 distinct expected
    assert sum(p[0] < 20 for p in picks) == pytest.approx(100, abs=30)  # both subjects (190 pairs each)
    again = [choose_next_pair(subjects=subjects, estimate=est, seen=[], rng=np.random.default_rng(s), config=GREEDY)
             for s in range(200)]
    assert again == picks


def test_the_same_generator_state_gives_the_same_sequence():
    subjects, est, _ = _world(seed=3)

    def sequence(seed):
        rng = np.random.default_rng(seed)
        seen = []
        for _ in range(25):
            seen.append(choose_next_pair(subjects=subjects, estimate=est, seen=seen, rng=rng,
                                         config=AdaptiveConfig(random_share=0.4)))
        return seen

    assert sequence(7) == sequence(7)
    assert sequence(7) != sequence(8)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"subjects": [0, 0, 1]}, r"subjects must have shape \(4,\) like estimate.b; got \(3,\)"),
    ({"seen": [[0, 1, 2]]}, r"seen must have shape \(k, 2\); got \(1, 3\)"),
    ({"seen": [[0, 4]]}, r"seen holds question index 4 at position \(0, 1\); indices must be in \[0, 4\)"),
    ({"seen": [[2, 2]]}, "seen pairs a question with itself at row 0"),
    ({"rng": 0}, "rng must be a numpy.random.Generator; got int"),
    ({"eligible": [1, 1, 1, 1]}, r"eligible must be a bool array of shape \(4,\)"),
    ({"config": {"random_share": 0.1}}, "config must be an AdaptiveConfig; got dict"),
    ({"estimate": ScaleEstimate(b=np.zeros(4), se=np.ones(3), n_comparisons=np.zeros(4, np.int64))},
     r"estimate.b, .se and .n_comparisons must be 1-D of equal length; got shapes \(4,\), \(3,\), \(4,\)"),
    ({"estimate": ScaleEstimate(b=np.array([0, np.nan, 0, 0]), se=np.ones(4), n_comparisons=np.zeros(4, np.int64))},
     "estimate.b and estimate.se must be finite"),
    ({"estimate": ScaleEstimate(b=np.zeros(4), se=np.ones(4), n_comparisons=np.zeros(4, np.int64),
                                pair_information=scale_estimate(3, [], []).pair_information)},
     r"estimate.pair_information must have shape \(4, 4\); got \(3, 3\)"),
])
def test_choose_next_pair_names_the_bad_input(kwargs, message):
    args = {"subjects": [0, 0, 1, 1], "estimate": scale_estimate(4, [], []), "seen": [],
            "rng": np.random.default_rng(0)} | kwargs
    with pytest.raises(ValueError, match=message):
        choose_next_pair(**args)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"min_comparisons": -1}, "min_comparisons must be an integer >= 0; got -1"),
    ({"min_comparisons": 2.5}, "min_comparisons must be an integer >= 0; got 2.5"),
    ({"random_share": 1.5}, r"random_share must be a number in \[0, 1\]; got 1.5"),
    ({"random_share": float("nan")}, r"random_share must be a number in \[0, 1\]; got nan"),
])
def test_the_config_names_the_bad_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AdaptiveConfig(**kwargs)


# --- what is kept between choices ------------------------------------------------------


def test_rank_weights_do_not_depend_on_the_block_size_and_match_the_formula(monkeypatch):
    from scoring import _pair_criterion as adaptive_pairs

    rng = np.random.default_rng(41)
    b, se = rng.normal(size=37), rng.uniform(0.2, 1.5, size=37)
    monkeypatch.setattr(adaptive_pairs, "_RANK_BLOCK_ENTRIES", 1)  # one row per block
    by_row = adaptive_pairs._rank_weight(b, se**2)
    monkeypatch.setattr(adaptive_pairs, "_RANK_BLOCK_ENTRIES", 10**9)  # the whole matrix at once
    whole = adaptive_pairs._rank_weight(b, se**2)
    assert np.array_equal(by_row, whole)
    np.testing.assert_allclose(whole, _rank_weights(b, se), rtol=1e-12)



@pytest.mark.parametrize("block_entries", [1, 37 * 5, 10**9])
def test_rank_weights_from_one_triangle_equal_those_from_every_entry(monkeypatch, block_entries):
    from scoring import _pair_criterion as adaptive_pairs

    rng = np.random.default_rng(42)
    b, var = rng.normal(size=37), rng.uniform(0.05, 2.0, size=37)
    b[:5] = 0.0  # a few unjudged questions: equal estimates and variances
    var[:5] = 2.0
    monkeypatch.setattr(adaptive_pairs, "_RANK_BLOCK_ENTRIES", block_entries)
    monkeypatch.setattr(adaptive_pairs, "_RANK_SYMMETRIC_MAX", 0)  # every entry, row by row
    every = adaptive_pairs._rank_weight(b, var)
    monkeypatch.setattr(adaptive_pairs, "_RANK_SYMMETRIC_MAX", 37)  # one triangle, mirrored
    assert np.array_equal(adaptive_pairs._rank_weight(b, var), every)

@pytest.mark.parametrize("dense_max", [300, 5])  # dense covariance per subject, and the diagonal approximation
def test_a_choice_from_an_estimate_already_used_equals_one_from_a_fresh_fit(monkeypatch, dense_max):
    from scoring import _pair_criterion as adaptive_pairs

    monkeypatch.setattr(adaptive_pairs, "_DENSE_MAX", dense_max)
    rng = np.random.default_rng(43)
    subjects = np.repeat([0, 1, 2], 12)
    harder, easier = _votes(rng.normal(size=36), 150, rng, subjects)
    used = scale_estimate(36, harder, easier)
    for k in range(12):  # fills used.memo on the first call, reuses it afterwards
        choose_next_pair(subjects=subjects, estimate=used, seen=[], rng=np.random.default_rng(k), config=GREEDY)
    members = {np.flatnonzero(subjects == g).tobytes() for g in range(3)}
    assert used.memo and set(used.memo) <= members  # one entry per subject a choice looked at
    for k in range(12):
        seen = [[0, 1], [12, 13]] if k % 2 else []
        fresh = scale_estimate(36, harder, easier)
        assert not fresh.memo
        assert choose_next_pair(subjects=subjects, estimate=used, seen=seen, rng=np.random.default_rng([k, 1]),
                                config=GREEDY) == choose_next_pair(subjects=subjects, estimate=fresh, seen=seen,
                                                                   rng=np.random.default_rng([k, 1]), config=GREEDY)
