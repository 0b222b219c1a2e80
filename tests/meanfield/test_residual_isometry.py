"""JJ^T moments of the residual chain J = prod_l (I + h W_l D_l): exact small cases derived by
hand, the per-unit moments against a second quadrature, and simulated networks of width 512."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from depthdyn.errors import DomainError, ParameterError
from depthdyn.meanfield import get_activation
from depthdyn.meanfield.residual_isometry import (
    residual_d2_moments,
    residual_isometry_score,
    residual_jacobian_moments,
)

WIDTH = 512


def _one_layer(mu, nu, a, eps):
    """tau(M^2) for M = (1 + h c d)(1 + h c d)^*, expanded by hand.

    M = 1 + h (c d + d c^*) + h^2 c d^2 c^*. Only words with as many c as c^* survive; a single
    pair c..c^* traces what it encloses (sw2 tau(.)), and c d^2 c^* c d^2 c^* has two pairings
    for a circular c (tau(d^2)^2 + tau(d^4)) and one for a Haar unitary (tau(d^4)):
    1 + 2a tau(d^2) [the 1 * h^2 c d^2 c^* terms] + 2a tau(d^2) [c d . d c^* both orders] + a^2 (...).
    """
    return 1 + 4 * a * mu + a * a * (eps * mu * mu + nu)


ONE_LAYER = [(Fraction(1, 2), Fraction(1, 2)), (1, 1), (Fraction(1, 3), Fraction(1, 5))]


@pytest.mark.parametrize("mu, nu", ONE_LAYER, ids=["relu", "linear", "other"])
@pytest.mark.parametrize("h, sw2", [(1, 1), (Fraction(1, 2), 2), (Fraction(3, 4), Fraction(5, 3))])
def test_one_layer_by_hand(mu, nu, h, sw2):
    a = h * h * sw2
    for weights, eps in (("gaussian", 1), ("orthogonal", 0)):
        m = residual_jacobian_moments([mu], [[nu]], sw2, h=h, weights=weights)
        assert m.moments == (1 + a * mu, _one_layer(mu, nu, a, eps))
    # mutants: E[phi'^4] replaced by E[phi'^2]^2, h instead of h^2
    if nu != mu * mu:
        assert residual_jacobian_moments([mu], [[mu * mu]], sw2, h=h).moments[1] != _one_layer(mu, nu, a, 1)
    if h != 1:
        wrong = residual_jacobian_moments([mu], [[nu]], sw2 * h, h=1).moments
        assert wrong[1] != _one_layer(mu, nu, a, 1)


@pytest.mark.parametrize("L", [1, 2, 3, 7])
def test_linear_network_is_a_free_product(L):
    # phi' = 1: the factors 1 + h c_l are free, so the normalised variance m2/m1^2 - 1 of the
    # product adds over layers; one layer's is (2a + a^2)/(1 + a)^2 (Gaussian) or 2a/(1 + a)^2
    # (Haar), from its moments 1 + a, 1 + 4a + 2a^2 or 1 + 4a + a^2
    h, sw2 = Fraction(1, 3), Fraction(3, 2)
    a = h * h * sw2
    for weights, one in (("gaussian", (2 * a + a * a) / (1 + a) ** 2), ("orthogonal", 2 * a / (1 + a) ** 2)):
        m = residual_jacobian_moments([1] * L, [[1] * L] * L, sw2, h=h, weights=weights)
        assert m.moments[0] == (1 + a) ** L
        assert m.score == L * one
        wrong = residual_jacobian_moments([1] * L, [[1] * L] * L, sw2, h=2 * h, weights=weights)
        assert wrong.score != L * one


def test_sympy_rationals_stay_exact():
    sympy = pytest.importorskip("sympy")
    m = residual_jacobian_moments([sympy.Rational(1, 2)] * 2, [[sympy.Rational(1, 2)] * 2] * 2, 2,
                                  h=sympy.Rational(1, 2))
    assert all(isinstance(x, Fraction) for x in m.moments)
    assert m.moments[0] == Fraction(25, 16)


def _free_moment(L, k, h, sw2, law):
    """tau((J J^*)^k) for J = prod_l (1 + h c_l d_l), c_l free circular, by brute force.

    Every term of the expansion is a word in the c's, c^*'s and the commuting d's. A free
    circular family with variance sw2 contributes sw2 per pair (c_l, c_l^*) of each non-crossing
    pairing, and a pair c x c^* (inner pairs removed first) becomes tau(x). ``law`` is a finite
    joint law of (d_0, ..., d_{L-1}): a list of (probability, values).
    """
    import itertools

    def tau(powers):
        return sum(p * math.prod(v**e for v, e in zip(values, powers, strict=True)) for p, values in law)

    def d(layer):
        return tuple(1 if j == layer else 0 for j in range(L))

    total = 0
    for choice in itertools.product((0, 1), repeat=2 * k * L):
        letters, weight = [], 1
        for rep in range(k):
            picks = choice[2 * rep * L: (2 * rep + 2) * L]
            for layer, pick in zip(reversed(range(L)), picks[:L], strict=True):  # J = A_{L-1} ... A_0
                if pick:
                    letters += [("c", layer, 0), ("b", d(layer))]
                    weight *= h
            for layer, pick in zip(range(L), picks[L:], strict=True):  # J^* = A_0^* ... A_{L-1}^*
                if pick:
                    letters += [("b", d(layer)), ("c", layer, 1)]
                    weight *= h
        cs = [i for i, x in enumerate(letters) if x[0] == "c"]
        for matching in _matchings(cs):
            if any(letters[a][1] != letters[b][1] or letters[a][2] == letters[b][2] for a, b in matching):
                continue
            if any(a < c < b < e for a, b in matching for c, e in matching):
                continue
            total += weight * sw2 ** len(matching) * _reduce(letters, matching, (0,) * L, tau)
    return total


def _matchings(items):
    if not items:
        yield []
        return
    first = items[0]
    for i in range(1, len(items)):
        for rest in _matchings(items[1:i] + items[i + 1:]):
            yield [(first, items[i]), *rest]


def _reduce(letters, matching, zero, tau):
    """tau of a word whose c's are paired without crossings: c x c^* -> tau(x), innermost first."""
    partner = {i: j for a, b in matching for i, j in ((a, b), (b, a))}
    scalar = 1

    def inside(a, b):  # the d-powers strictly between positions a < b, with the pairs there removed
        nonlocal scalar
        powers, i = list(zero), a + 1
        while i < b:
            if letters[i][0] == "c":
                j = partner[i]
                enclosed = tau(inside(i, j))  # before reading scalar: the call updates it
                scalar *= enclosed
                i = j + 1
            else:
                powers = [u + v for u, v in zip(powers, letters[i][1], strict=True)]
                i += 1
        return tuple(powers)

    outer = inside(-1, len(letters))
    return scalar * tau(outer)


#: finite joint laws of (d_0, ..., d_{L-1}), correlated like the layers of one unit
LAWS = {
    2: [(Fraction(1, 2), (1, 1)), (Fraction(1, 4), (0, Fraction(1, 2))),
        (Fraction(1, 4), (Fraction(1, 3), 0))],
    3: [(Fraction(1, 2), (1, 1, Fraction(1, 2))), (Fraction(1, 4), (0, Fraction(1, 2), 1)),
        (Fraction(1, 4), (Fraction(1, 3), 0, 0))],
}


@pytest.mark.parametrize("L", sorted(LAWS))
def test_small_depths_against_the_free_expansion(L):
    law = LAWS[L]

    def mom(*powers):
        return sum(w * math.prod(Fraction(v) ** e for v, e in zip(vals, powers, strict=True))
                   for w, vals in law)

    def two(j, k):
        return mom(*(2 * (i == j) + 2 * (i == k) for i in range(L)))

    means = [mom(*(2 * (i == j) for i in range(L))) for j in range(L)]
    products = [[two(j, k) for k in range(L)] for j in range(L)]
    h, sw2 = Fraction(1, 2), Fraction(3, 2)
    got = residual_jacobian_moments(means, products, sw2, h=h).moments
    assert got == (_free_moment(L, 1, h, sw2, law), _free_moment(L, 2, h, sw2, law))
    # mutant: the layers' diagonals independent
    independent = [[products[j][k] if j == k else means[j] * means[k] for k in range(L)] for j in range(L)]
    assert residual_jacobian_moments(means, independent, sw2, h=h).moments[1] != got[1]


def _relu_walk(L, h, sw2, q0):
    """ReLU, sb2 = 0: q_{l+1} = q_l (1 + h^2 sw2 / 2); P(x_j > 0, x_l > 0) = 1/4 + asin(rho)/(2 pi)."""
    q = q0 * (1 + h * h * sw2 / 2) ** np.arange(L)
    rho = np.sqrt(np.minimum.outer(q, q) / np.maximum.outer(q, q))
    return np.full(L, 0.5), 0.25 + np.arcsin(rho) / (2 * np.pi)


def _tanh_walk(L, h, sw2, sb2, q0, n=300):
    """tanh by Gauss-Hermite (300 nodes: sech^4 has poles near the axis): q_l from the residual q-map,
    products by a 2-d product rule."""
    z, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / math.sqrt(2 * math.pi)
    q = [q0]
    for _ in range(L - 1):
        q.append(q[-1] + h * h * (sw2 * np.sum(w * np.tanh(math.sqrt(q[-1]) * z) ** 2) + sb2))
    q = np.array(q)
    d2 = lambda u: np.cosh(u) ** -4  # noqa: E731
    means = np.array([np.sum(w * d2(math.sqrt(v) * z)) for v in q])
    prod = np.empty((L, L))
    for j in range(L):
        for k in range(L):
            lo, hi = min(q[j], q[k]), max(q[j], q[k])
            # x_hi = x_lo + an independent increment of variance hi - lo
            u = math.sqrt(lo) * z[:, None]
            v = u + math.sqrt(hi - lo) * z[None, :]
            prod[j, k] = np.sum(w[:, None] * w[None, :] * d2(u) * d2(v))
    return means, prod


def test_per_unit_moments_against_a_second_quadrature():
    got_m, got_p = residual_d2_moments("relu", 2.0, 0.0, depth=6, h=0.5, q0=1.3)
    want_m, want_p = _relu_walk(6, 0.5, 2.0, 1.3)
    assert np.allclose(got_m, want_m, atol=1e-10) and np.allclose(got_p, want_p, atol=1e-8)
    # leaky ReLU: phi'^2 is 1 or alpha^2, by the sign of each pre-activation
    alpha = 0.2
    got_m, got_p = residual_d2_moments(get_activation("leaky_relu", alpha=alpha), 1.5, 0.1, depth=4, h=0.6)
    q = [1.0]
    for _ in range(3):
        q.append(q[-1] + 0.36 * (1.5 * q[-1] * (1 + alpha**2) / 2 + 0.1))
    q = np.array(q)
    pp = 0.25 + np.arcsin(np.sqrt(np.minimum.outer(q, q) / np.maximum.outer(q, q))) / (2 * np.pi)
    want_p = pp * (1 + alpha**4) + 2 * (0.5 - pp) * alpha**2
    assert np.allclose(got_m, (1 + alpha**2) / 2, atol=1e-10) and np.allclose(got_p, want_p, atol=1e-8)
    got_m, got_p = residual_d2_moments("tanh", 1.5, 0.05, depth=5, h=0.7, q0=0.8)
    want_m, want_p = _tanh_walk(5, 0.7, 1.5, 0.05, 0.8)
    assert np.allclose(got_m, want_m, atol=1e-9) and np.allclose(got_p, want_p, atol=1e-7)
    # mutant: the layers' pre-activations independent (no skip in the covariance)
    indep = np.outer(want_m, want_m)
    assert not np.allclose(got_p[~np.eye(5, dtype=bool)], indep[~np.eye(5, dtype=bool)], atol=1e-3)


ACTS = {
    "relu": (lambda u: np.maximum(u, 0.0), lambda u: (u > 0) * 1.0, 2.0, 0.0),
    "tanh": (np.tanh, lambda u: np.cosh(u) ** -2, 1.5, 0.05),
}


def _simulate(act, L, h, weights, seeds, seed=0):
    """Residual networks of width 512: per seed tau(JJ^T), tau((JJ^T)^2) and the D-moments."""
    phi, dphi, sw2, sb2 = ACTS[act]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(seeds):
        x = rng.standard_normal(WIDTH)
        J = np.eye(WIDTH)
        d2 = []
        for _ in range(L):
            if weights == "gaussian":
                W = rng.standard_normal((WIDTH, WIDTH)) * math.sqrt(sw2 / WIDTH)
            else:
                Q, R = np.linalg.qr(rng.standard_normal((WIDTH, WIDTH)))
                W = Q * np.sign(np.diag(R)) * math.sqrt(sw2)
            d = dphi(x)
            d2.append(d * d)
            J = J + h * (W @ (d[:, None] * J))
            x = x + h * (W @ phi(x) + rng.standard_normal(WIDTH) * math.sqrt(sb2))
        M = J @ J.T
        D = np.array(d2)
        out.append((np.trace(M) / WIDTH, np.sum(M * M) / WIDTH, D.mean(axis=1), D @ D.T / WIDTH))
    return out


def _relative_errors(runs, sw2, h, weights, mutate=None):
    rows = []
    for m1, m2, mu, nu in runs:
        if mutate is not None:
            mu, nu, h_used = mutate(mu, nu, h)
        else:
            h_used = h
        th = residual_jacobian_moments(mu.tolist(), nu.tolist(), sw2, h=h_used, weights=weights).moments
        rows.append((m1 / th[0] - 1, m2 / th[1] - 1))
    return np.mean(rows, axis=0)


#: Monte-Carlo tolerance on the mean over 3 seeds of measured / predicted - 1 (m1, m2), given the
#: measured D-moments: the remaining error is the O(1/N) of the weights, growing with depth
#: (measured spread of single seeds at width 512: about 0.5% at depth 2, 5% at depth 20).
TOL = {2: (0.015, 0.03), 5: (0.015, 0.03), 20: (0.03, 0.06)}
CASES = [(2, 0.7), (5, 0.5), (20, 0.3)]


@pytest.mark.parametrize("weights", ["gaussian", "orthogonal"])
@pytest.mark.parametrize("act", ["relu", "tanh"])
@pytest.mark.parametrize("L, h", CASES)
def test_moments_against_simulated_networks(act, weights, L, h):
    runs = _simulate(act, L, h, weights, seeds=3, seed=L)
    err = _relative_errors(runs, ACTS[act][2], h, weights)
    assert np.all(np.abs(err) <= TOL[L]), err


MUTANTS = {
    "no E[phi'^4]": lambda mu, nu, h: (mu, nu - np.diag(np.diag(nu)) + np.diag(mu * mu), h),
    "independent layers": lambda mu, nu, h: (mu, np.outer(mu, mu) + np.diag(np.diag(nu) - mu * mu), h),
    "h instead of h^2": lambda mu, nu, h: (mu, nu, math.sqrt(h)),
}


@pytest.mark.parametrize("weights", ["gaussian", "orthogonal"])
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutants_leave_the_band(weights, mutant):
    runs = _simulate("relu", 5, 0.5, weights, seeds=3, seed=5)
    err = _relative_errors(runs, 2.0, 0.5, weights, mutate=MUTANTS[mutant])
    assert np.any(np.abs(err) > TOL[5]), err


def test_mean_field_prediction_against_simulation():
    # the whole chain: mean-field D-moments (not the measured ones) against networks; the
    # band is 4 standard errors over 24 seeds (the D's fluctuate by O(1/sqrt(N)) from seed to
    # seed) plus 1% (the O(1/N) bias)
    L, h, weights = 5, 0.5, "gaussian"
    runs = _simulate("relu", L, h, weights, seeds=24, seed=17)
    sim = np.array([(m1, m2) for m1, m2, _, _ in runs])
    mean, se = sim.mean(axis=0), sim.std(axis=0, ddof=1) / math.sqrt(len(sim))
    mu, nu = residual_d2_moments("relu", 2.0, 0.0, depth=L, h=h, q0=1.0)
    theory = np.array(residual_jacobian_moments(mu, nu, 2.0, h=h).moments, dtype=float)
    assert np.all(np.abs(mean - theory) <= 4 * se + 0.01 * theory), (mean, se, theory)
    score = residual_isometry_score("relu", 2.0, 0.0, depth=L, h=h, q0=1.0)
    assert score == pytest.approx(theory[1] / theory[0] ** 2 - 1, rel=1e-12)
    assert residual_isometry_score("relu", 2.0, 0.0, depth=L, h=h, weights="orthogonal") < score
    # mutant: the layers independent (as if the skip did not correlate them)
    independent = np.outer(mu, mu) + np.diag(np.diag(nu) - mu * mu)
    wrong = np.array(residual_jacobian_moments(mu, independent, 2.0, h=h).moments)
    assert np.any(np.abs(mean - wrong) > 4 * se + 0.01 * wrong), (mean, se, wrong)


def test_bad_input():
    with pytest.raises(ParameterError):
        residual_jacobian_moments([1], [[1]], 1, weights="uniform")
    with pytest.raises(ParameterError):
        residual_jacobian_moments([], [], 1)
    with pytest.raises(ParameterError):
        residual_jacobian_moments([1, 1], [[1]], 1)
    with pytest.raises(ParameterError):
        residual_jacobian_moments([1], 5, 1)
    with pytest.raises(DomainError):
        residual_jacobian_moments([1], [[-1]], 1)
    with pytest.raises(DomainError):
        residual_jacobian_moments([1], [[1]], 1, h=0)
    with pytest.raises(DomainError):
        residual_jacobian_moments([1], [[1]], -2.0)
    with pytest.raises(DomainError):
        residual_jacobian_moments([1e300], [[1e300]], 1e300)  # float64 overflow: no inf, no NaN
    with pytest.raises(ParameterError):
        residual_d2_moments("relu", 2.0, 0.0, depth=0)
    with pytest.raises(DomainError):
        residual_d2_moments("relu", 2.0, 0.0, depth=400, h=5.0)
