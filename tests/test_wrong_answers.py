"""Regression tests for answers that used to be silently wrong (issue: from_lmm floats,
solve_for outside a parameter's declared domain, spectral radius at extreme scales)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

from depthdyn import momentum
from depthdyn.errors import DepthdynError, ParameterError
from depthdyn.families import from_lmm, order_and_error_constant
from depthdyn.numeric import spectral_radius
from depthdyn.symbolic.solvefor import solve_for


# ---------------------------------------------------------------- from_lmm / order conditions
def test_from_lmm_reads_float_thirds_as_the_fractions_they_round():
    # the theta-method with theta = 2/3: consistent, order 1 (C_2 = 1/2 - 2/3 = -1/6 != 0)
    exact = order_and_error_constant([-1, 1], [Fraction(1, 3), Fraction(2, 3)])
    floats = order_and_error_constant([-1, 1], [1 / 3, 2 / 3])
    assert (exact.order, floats.order) == (1, 1)
    assert floats.error_constant == exact.error_constant == sp.Rational(-1, 6)
    assert from_lmm(alpha=[-1, 1], beta=[1 / 3, 2 / 3]) == from_lmm(alpha=[-1, 1], beta=["1/3", "2/3"])
    # short decimals stay the decimal they print as
    assert from_lmm(alpha=[-1, 1], beta=[0.25, 0.75]) == from_lmm(alpha=[-1, 1], beta=["1/4", "3/4"])


def test_from_lmm_refuses_floats_it_cannot_read_exactly():
    with pytest.raises(ParameterError, match="neither a short decimal"):
        from_lmm(alpha=[-1, 1], beta=[math.pi / 10, 0.5])
    with pytest.raises(ParameterError, match="neither a short decimal"):
        order_and_error_constant([-1, 1], [1 / 7 + 1e-12, 0.5])


def test_from_lmm_accepts_numpy_arrays():
    # trapezoidal rule: order 2, error constant -1/12 (Hairer-Norsett-Wanner I, Table III.2.1)
    rec = from_lmm(alpha=np.array([-1, 1]), beta=np.array([0.5, 0.5]))
    assert rec == from_lmm(alpha=[-1, 1], beta=["1/2", "1/2"])
    o = order_and_error_constant(np.array([-1.0, 1.0]), np.array([0.5, 0.5]))
    assert (o.order, o.error_constant) == (2, sp.Rational(-1, 12))
    with pytest.raises(DepthdynError):
        from_lmm(alpha=np.zeros((2, 2)), beta=[1, 1])


@pytest.mark.parametrize("args", [
    (["a", "1"], ["1", "1"]),
    ("x", "y"),
    ([-1, 1], [1, 1, 1]),
])
def test_order_conditions_give_typed_errors(args):
    with pytest.raises(DepthdynError):
        order_and_error_constant(*args)


@pytest.mark.parametrize("bad", [-1, 2.5, True, "3"])
def test_order_conditions_refuse_a_bad_max_order(bad):
    with pytest.raises(ParameterError, match="max_order"):
        order_and_error_constant([-1, 1], [0, 1], max_order=bad)


def test_order_conditions_strings_are_parsed():
    o = order_and_error_constant(["-1", "1"], ["1/2", "1/2"])
    assert o.order == 2


# ---------------------------------------------------------------- solve_for beyond the declared domain
def _scan(rec_at, grid):
    """Strict Schur stability by numpy roots at each grid value (independent of solve_for)."""
    return np.array([np.abs(np.roots(rec_at(v))).max() < 1 for v in grid])


def test_solve_for_outside_the_declared_domain_matches_a_scan():
    # momentum(eta=1, lam=-1): r^2 - m r + m. Jury: |m| < 1 and 1 + m + m > 0 -> (-1/2, 1)
    got = solve_for(momentum(eta=1, lam=-1), "m", domain=sp.Interval(-1, 2))
    assert got.as_set() == sp.Interval.open(sp.Rational(-1, 2), 1)
    grid = np.linspace(-1, 2, 601)
    grid = grid[np.min(np.abs(grid[:, None] - np.array([-0.5, 1.0])[None, :]), axis=1) > 1e-6]
    scan = _scan(lambda m: [1, -m, m], grid)
    inside = np.array([bool(got.as_set().contains(sp.Rational(str(round(v, 6))))) for v in grid])
    assert (inside == scan).all()
    # the cross-check catches the old answer (all of [-1, 2]: m = 1.5 has radius 1.22)
    old = np.ones_like(scan)
    assert not (old == scan).all()
    assert np.abs(np.roots([1, -1.5, 1.5])).max() == pytest.approx(math.sqrt(1.5))
    # inside the declared domain nothing changes
    assert solve_for(momentum(eta=1, lam=-1), "m").as_set() == sp.Interval.Ropen(0, 1)


def test_solve_for_all_outside_the_declared_domain():
    # for lam in [-1, -1/2]: conditions -lam > 0, 1 - m > 0, lam + 2 m + 2 > 0 -> m > -1/2 (at lam = -1)
    got = solve_for(momentum(eta=1), "m", domain=sp.Interval(-1, 2), for_all={"lam": (-1, sp.Rational(-1, 2))})
    assert got.as_set() == sp.Interval.open(sp.Rational(-1, 2), 1)
    grid = np.linspace(-0.99, 1.99, 150)
    grid = grid[np.abs(grid + 0.5) > 1e-3]
    scan = np.ones(grid.size, bool)
    for lam in np.linspace(-1, -0.5, 11):
        scan &= _scan(lambda m, lam=lam: [1, -(1 + m + lam), m], grid)
    inside = np.array([bool(got.as_set().contains(sp.Rational(str(round(v, 8))))) for v in grid])
    assert (inside == scan).all()


# ---------------------------------------------------------------- spectral radius at extreme scales
def _reference(coeffs) -> float:
    """Largest root modulus at 80 digits on the exact binary values of the coefficients:
    the closed form for a quadratic, else the eigenvalues of the companion matrix of the
    polynomial rescaled (``r = s t``) so that its largest roots are about 1 (mpmath)."""
    mpmath.mp.dps = 80
    c = [mpmath.mpc(complex(x)) for x in coeffs]
    c = [x / c[0] for x in c]
    p = len(c) - 1
    if p == 2:
        d = mpmath.sqrt(c[1] ** 2 - 4 * c[2])
        return float(max(abs((-c[1] + d) / 2), abs((-c[1] - d) / 2)))
    s = max(abs(c[j]) ** (mpmath.mpf(1) / j) for j in range(1, p + 1) if c[j] != 0)
    scaled = [c[j] / s**j for j in range(p + 1)]
    C = mpmath.matrix(p, p)
    for j in range(p):
        C[0, j] = -scaled[j + 1]
    for i in range(1, p):
        C[i, i - 1] = 1
    return float(s * max(abs(z) for z in mpmath.eig(C, left=False, right=False)))


@pytest.mark.parametrize("coeffs", [
    [1, 1e-300, 1e-300],     # radius 1e-150 (was 0.0)
    [1, 1e-160, 1e-160],     # radius 1e-80 (digits were lost)
    [1, 1e-80, 1e-80],
    [1, 3e-200, 2e-250],
    [1, 1e200, 1e300],       # radius 1e200: squares overflow
    [1, -1e-170, 1e-250j],
    [1, 1e-200, 1e-200, 1e-300],
    [1e-20, 1, -2, 1],       # leading 1e-20: was refused ("cannot isolate ... at 2000 digits")
    [1e-20, 1, -3, 3, -1],
    [1e-20, 3, 1, 0.5],
    [2.0**-1000, 1.0, 1.0],
])
def test_spectral_radius_at_extreme_scales(coeffs):
    got = float(spectral_radius(np.array(coeffs)))
    assert got == pytest.approx(_reference(coeffs), rel=1e-13, abs=0)


def test_spectral_radius_extreme_scales_through_a_recurrence():
    lam = np.array([-1e-300, -1e-170, -0.5])  # r^2 - (1 + m + lam) r + m with m = 0: radius |1 + lam|
    got = spectral_radius(momentum(), lam=lam, m=0.0, eta=1)
    np.testing.assert_allclose(got, [1.0, 1.0, 0.5], rtol=1e-15)
    # a single point (0-d) takes the rescaled path too: radius 1e200 (its square overflows)
    assert float(spectral_radius(momentum(), lam=1e200, m=0.5, eta=1)) == pytest.approx(1e200, rel=1e-15)
    # momentum with m tiny: r^2 - (1 + m + lam) r + m at lam = -1 - m: r^2 + m, radius sqrt(m)
    m = 1e-300
    got = spectral_radius(np.array([1.0, 0.0, m]))
    assert got == pytest.approx(1e-150, rel=1e-15, abs=0)
