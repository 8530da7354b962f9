"""The adaptive scale estimate (scale_estimate) against an independent optimiser."""
import math

import numpy as np
import pytest
from scipy import optimize

from scoring.adaptive_pairs import scale_estimate


def _votes(true, n_votes, rng, subjects):
    harder, easier = [], []
    while len(harder) < n_votes:
        i, j = (int(x) for x in rng.choice(true.size, 2, replace=False))
        if subjects[i] != subjects[j]:
            continue
        win = rng.random() < 1 / (1 + math.exp(-(true[i] - true[j])))
        harder.append(i if win else j)
        easier.append(j if win else i)
    return np.array(harder), np.array(easier)


def _scipy_fit(n, harder, easier, penalty):
    """The penalised maximum likelihood by scipy (exact trust region, then a root of the gradient) on the plain sum
    over votes:
    minimise ``sum_k log(1 + exp(-(b_h - b_e))) + penalty/2 |b|**2``."""
    def loss(b):
        d = b[harder] - b[easier]
        return float(np.logaddexp(0.0, -d).sum() + 0.5 * penalty * b @ b)

    def grad(b):
        q = 1 / (1 + np.exp(b[harder] - b[easier]))  # 1 - sigma(d)
        return -np.bincount(harder, q, n) + np.bincount(easier, q, n) + penalty * b

    def hess(b):
        p = 1 / (1 + np.exp(-(b[harder] - b[easier])))
        w = p * (1 - p)
        out = penalty * np.eye(n)
        np.add.at(out, (harder, harder), w)
        np.add.at(out, (easier, easier), w)
        np.add.at(out, (harder, easier), -w)
        np.add.at(out, (easier, harder), -w)
        return out

    near = optimize.minimize(loss, np.zeros(n), jac=grad, hess=hess, method="trust-exact").x
    # the trust region stops on the objective's last digits; a root finder on the gradient goes on from there
    out = optimize.root(grad, near, jac=hess, method="hybr", tol=1e-14)
    assert np.abs(grad(out.x)).max() <= 1e-10
    return out.x


@pytest.mark.parametrize("n_votes", [0, 15, 400])
def test_the_estimate_is_the_penalised_optimum_found_by_scipy(n_votes):
    rng = np.random.default_rng(n_votes)
    subjects = np.repeat([0, 1, 2], 20)
    harder, easier = _votes(rng.normal(0, 1.2, 60), n_votes, rng, subjects)
    harder, easier = harder.astype(np.int64), easier.astype(np.int64)
    est = scale_estimate(60, harder, easier, tol=1e-10)
    # the objective's curvature is at least the penalty, so |b - b*| <= |gradient| / penalty
    np.testing.assert_allclose(est.b, _scipy_fit(60, harder, easier, 0.5), atol=1e-8)
