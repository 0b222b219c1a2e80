"""JJ^T spectra at initialisation: exact moments against textbook random-matrix facts and
against simulated networks of width 512; the density against Marchenko–Pastur and moments."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from depthdyn.errors import ParameterError
from depthdyn.meanfield.isometry import isometry_score, jacobian_density, jacobian_moments

torch = pytest.importorskip("torch")
from depthdyn.meanfield.montecarlo import simulate_jacobian_moments  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def fuss_catalan(L: int, k: int) -> int:
    """Moments of a product of L square Ginibre matrices: C((L+1) k, k) / (L k + 1)."""
    return math.comb((L + 1) * k, k) // (L * k + 1)


def narayana_moment(k: int, p: Fraction) -> Fraction:
    """Moments of W P W^T (W Ginibre, P a projection of rank p N): sum_j N(k, j) p^j."""
    return sum(Fraction(math.comb(k, j) * math.comb(k, j - 1), k) * p**j for j in range(1, k + 1))


@pytest.mark.parametrize("L", [1, 2, 3, 4])
def test_linear_gaussian_network_gives_fuss_catalan(L):
    got = jacobian_moments([1, 1, 1, 1, 1], 1, depth=L).moments
    assert got == tuple(fuss_catalan(L, k) for k in range(1, 6))
    scaled = jacobian_moments([1, 1, 1], Fraction(3, 2), depth=L).moments
    assert scaled == tuple(fuss_catalan(L, k) * Fraction(3, 2) ** (L * k) for k in range(1, 4))
    assert jacobian_moments([1, 1, 1], 1, depth=L + 1).moments != got[:3]  # depth matters


def test_orthogonal_linear_network_is_an_isometry():
    m = jacobian_moments([1, 1, 1, 1], Fraction(2), depth=5, weights="orthogonal")
    assert m.moments == tuple(Fraction(2) ** (5 * k) for k in range(1, 5))
    assert m.score == 0


@pytest.mark.parametrize("p", [Fraction(1, 2), Fraction(1, 3), Fraction(7, 10)])
def test_one_layer_with_a_projection_gives_narayana(p):
    # D^2 in {0, 1} with P(1) = p: moments of D^2 are all p; J J^T = W D^2 W^T
    got = jacobian_moments([p] * 4, 1, depth=1).moments
    assert got == tuple(narayana_moment(k, p) for k in range(1, 5))
    wrong = jacobian_moments([p] * 4, 1, depth=1, weights="orthogonal").moments
    assert wrong[1] != narayana_moment(2, p)


def test_isometry_score_adds_up_over_layers():
    # the normalised variance m2/m1^2 - 1 is additive under free multiplicative convolution:
    # each layer adds (mu2/mu1^2 - 1) from D^2 and 1 (Gaussian, Marchenko-Pastur) or 0 (Haar)
    rng = np.random.default_rng(1)
    for _ in range(5):
        mu1, mu2 = Fraction(int(rng.integers(1, 9)), 10), Fraction(int(rng.integers(1, 9)), 10)
        mu2 = max(mu2, mu1 * mu1)
        L, sw2 = int(rng.integers(1, 7)), Fraction(int(rng.integers(1, 5)))
        for weights, s in (("gaussian", 1), ("orthogonal", 0)):
            assert isometry_score([mu1, mu2], sw2, depth=L, weights=weights) == L * (mu2 / mu1**2 - 1 + s)


def _gauss_hermite(f, q, n=200):
    z, w = np.polynomial.hermite_e.hermegauss(n)
    return float(np.sum(w * f(math.sqrt(q) * z)) / math.sqrt(2 * math.pi))


def _tanh_fixed_point(sw2, sb2):
    q = 1.0
    for _ in range(500):
        q = sw2 * _gauss_hermite(lambda u: np.tanh(u) ** 2, q) + sb2
    return q


@pytest.mark.parametrize("weights", ["gaussian", "orthogonal"])
def test_moments_against_simulated_networks(weights):
    sw2, sb2, L = 1.5, 0.05, 3
    q = _tanh_fixed_point(sw2, sb2)  # independent quadrature, not the package's map
    mu = [_gauss_hermite(lambda u, k=k: np.cosh(u) ** (-4 * k), q) for k in (1, 2, 3)]
    theory = np.array([float(m) for m in jacobian_moments(mu, sw2, depth=L, weights=weights).moments])
    sim = simulate_jacobian_moments(
        "tanh", sw2, sb2, depth=L, q0=q, width=512, seeds=6, weights=weights, seed=11
    )
    # the band, widened by the O(1/N) finite-width bias (a few times m_k / N)
    slack = 3 * theory / 512
    assert np.all(sim.band[0] - slack <= theory) and np.all(theory <= sim.band[1] + slack), (sim, theory)
    other = "orthogonal" if weights == "gaussian" else "gaussian"
    wrong = np.array([float(m) for m in jacobian_moments(mu, sw2, depth=L, weights=other).moments])
    assert not (np.all(sim.band[0] - slack <= wrong) and np.all(wrong <= sim.band[1] + slack))


def test_density_of_one_gaussian_layer_is_marchenko_pastur():
    x = np.linspace(0.05, 3.95, 79)
    rho = jacobian_density(x, p=1.0, sw2=1.0, depth=1)
    assert np.allclose(rho, np.sqrt(x * (4 - x)) / (2 * np.pi * x), atol=1e-6)
    assert np.all(jacobian_density(np.array([4.5, 6.0]), p=1.0, sw2=1.0, depth=1) < 1e-6)  # outside [0, 4]


@pytest.mark.parametrize(
    "L, p, weights",
    [(2, Fraction(1, 2), "gaussian"), (3, Fraction(1, 2), "orthogonal"), (2, Fraction(4, 5), "gaussian")],
)
def test_density_integrates_to_the_exact_moments(L, p, weights):
    x = np.geomspace(1e-6, 60, 3001)
    rho = jacobian_density(x, p=float(p), sw2=float(1 / p), depth=L, weights=weights)
    exact = [float(m) for m in jacobian_moments([p, p], 1 / p, depth=L, weights=weights).moments]
    # the continuous part has mass p for ReLU-like D^2 (the rest is the atom at 0)
    assert np.trapezoid(rho, x) == pytest.approx(float(p), abs=0.02)
    assert np.trapezoid(rho * x, x) == pytest.approx(exact[0], rel=1e-3)
    assert np.trapezoid(rho * x * x, x) == pytest.approx(exact[1], rel=1e-3)


def test_bad_input():
    with pytest.raises(ParameterError):
        jacobian_moments([1, 1], 1, depth=2, weights="uniform")
    with pytest.raises(ParameterError):
        jacobian_moments([], 1, depth=2)
    with pytest.raises(ParameterError):
        jacobian_moments([1], 1, depth=0)
    with pytest.raises(ParameterError):
        jacobian_moments([1], -1.0, depth=2)
    with pytest.raises(ParameterError):
        jacobian_density(np.array([-1.0]), p=0.5, sw2=2.0, depth=2)
    with pytest.raises(ParameterError):
        jacobian_density(np.array([1.0]), p=1.5, sw2=2.0, depth=2)
    with pytest.raises(ParameterError):
        simulate_jacobian_moments("tanh", 1.0, 0.0, depth=2, q0=1.0, width=16, seeds=1)
