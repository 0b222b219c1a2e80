"""HC against mHC: composites of doubly stochastic matrices keep gain 1 (exact fact), the
unconstrained composite grows at the reported rate."""

import itertools
import random

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.errors import ParameterError
from depthdyn.mixing import sinkhorn
from depthdyn.products import ProductOverflowError, hc_vs_mhc, random_layers


def _exact_doubly_stochastic(n, rng):
    """A rational convex combination of permutation matrices (Birkhoff)."""
    perms = list(itertools.permutations(range(n)))
    w = [sp.Rational(rng.randint(1, 9)) for _ in range(3)]
    total = sum(w)
    M = sp.zeros(n)
    for wi in w:
        p = rng.choice(perms)
        for i, j in enumerate(p):
            M[i, j] += wi / total
    return M


def test_product_of_doubly_stochastic_matrices_is_doubly_stochastic_exactly():
    rng = random.Random(0)
    P = sp.eye(3)
    for _ in range(60):
        P = _exact_doubly_stochastic(3, rng) * P
    ones = sp.ones(3, 1)
    assert P * ones == ones and P.T * ones == ones and all(e >= 0 for e in P)
    floats = np.array([[float(e) for e in row] for row in P.tolist()])
    assert abs(np.abs(floats).sum(1).max() - 1) < 1e-12  # gain 1: ||P||_inf of a DS matrix


def test_hc_vs_mhc_over_sixty_seeded_layers():
    cmp = hc_vs_mhc(layers=60, n=4, samples=3, seed=0)
    mhc, hc = cmp.mhc, cmp.hc
    assert np.abs(mhc.log_row_gain).max() < 1e-10 and np.abs(mhc.log_col_gain).max() < 1e-10
    assert mhc.stochastic_defect.max() < 1e-10
    # the unconstrained composite, recomputed here by plain products
    H = random_layers("hc", 4, 60, 3, seed=0, scale=cmp.scale)
    gains = np.empty((3, 60))
    for s in range(3):
        P = np.eye(4)
        for i in range(60):
            P = H[s, i] @ P
            gains[s, i] = np.abs(P).sum(1).max()
    assert np.allclose(hc.gain(), gains, rtol=1e-10)
    rate = np.polyfit(np.arange(1, 61), np.log(gains).T, 1)[0]
    assert np.allclose(hc.rate, rate) and (hc.rate > 0.01).all()
    assert gains[:, -1].min() > 10
    # second singular value of the mHC composite decays: the streams homogenise
    assert mhc.log_sigma2[:, -1].max() < mhc.log_sigma2[:, 0].min()


def test_a_broken_projection_shows():  # mutant: one layer not doubly stochastic
    H = sinkhorn(random_layers("hc", 4, 60, seed=0))
    H[0, 30] *= 1.01
    g = dd.composite_gains(H)
    assert g.stochastic_defect[0, 29] < 1e-10 and g.stochastic_defect[0, 30] > 1e-3
    assert g.log_row_gain[0, -1] > 1e-3


def test_huge_gains_come_back_as_logs_not_inf():
    H = np.broadcast_to(3.0 * np.eye(2), (1000, 2, 2))
    g = dd.composite_gains(H)
    assert np.isclose(g.log_row_gain[0, -1], 1000 * np.log(3))
    with pytest.raises(ProductOverflowError):
        g.gain()


def test_sinkhorn_refuses_bad_input():
    with pytest.raises(ParameterError):
        sinkhorn(np.array([[1.0, np.inf], [1.0, 1.0]]))  # logits: exp(M) must be positive, finite
    with pytest.raises(ParameterError):
        sinkhorn(np.ones((2, 3)))
