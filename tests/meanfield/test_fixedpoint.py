"""Fixed points, phases, depth scales and critical points against independent root finds."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from reference_quadrature import expect1, expect2
from scipy.optimize import fsolve
from scipy.special import erfc

from depthdyn.errors import DomainError, ParameterError
from depthdyn.meanfield import (
    UnknownActivationError,
    critical_point,
    critical_points,
    fixed_point,
    iterate,
    q_map,
)

SQRT2 = math.sqrt(2.0)
PHI = {
    "tanh": (math.tanh, lambda u: 1 - math.tanh(u) ** 2),
    "erf": (math.erf, lambda u: 2 / math.sqrt(math.pi) * math.exp(-u * u)),
    "gelu": (lambda u: u * 0.5 * float(erfc(-u / SQRT2)),
             lambda u: 0.5 * float(erfc(-u / SQRT2)) + u * math.exp(-u * u / 2) / math.sqrt(2 * math.pi)),
}


def _reference_critical(name, sb2, guess):
    """Solve ``q = sw2 E[phi^2](q) + sb2`` and ``sw2 E[phi'^2](q) = 1`` together (Powell's hybrid method)."""
    phi, dphi = PHI[name]

    def equations(x):
        sw2, q = x
        return [sw2 * expect1(lambda u: phi(u) ** 2, q) + sb2 - q,
                sw2 * expect1(lambda u: dphi(u) ** 2, q) - 1]

    (sw2, q), info, ok, msg = fsolve(equations, guess, xtol=1e-13, full_output=True)
    assert ok in (1, 3), msg  # 3: converged to rounding level
    assert max(abs(r) for r in equations((sw2, q))) <= 1e-13
    return sw2, q


CASES = [("tanh", sb2) for sb2 in (0.01, 0.05, 0.3, 1.0)] + [("erf", sb2) for sb2 in (0.01, 0.3, 1.0)] + [
    ("gelu", sb2) for sb2 in (0.3, 1.0, 2.0)]


@pytest.mark.parametrize("name, sb2", CASES)
def test_critical_point_against_an_independent_root_find(name, sb2):
    cp = critical_point(name, sb2=sb2)
    sw2, q = _reference_critical(name, sb2, [cp.sw2 * 1.05, cp.q_star * 1.1 + 0.01])
    assert abs(cp.sw2 - sw2) <= 1e-9 * sw2 and abs(cp.q_star - q) <= 1e-9 * max(q, 1e-3)
    assert cp.sb2 == sb2 and cp.chi_q <= 1


def test_critical_point_check_catches_a_perturbed_activation():
    x = sp.Symbol("x")
    mutant = critical_point(sp.tanh(sp.Rational(1001, 1000) * x) + 0 * x, sb2=0.05)
    sw2, _ = _reference_critical("tanh", 0.05, [mutant.sw2, mutant.q_star])
    assert abs(mutant.sw2 - sw2) > 1e-6


@pytest.mark.parametrize("sb2", [0.0, 0.05, 1.0])
def test_relu_critical_point_from_its_derivative_moment(sb2):
    d2 = expect1(lambda u: 1.0 if u > 0 else 0.0, 1.0)  # E[relu'(z)^2] = P(z > 0)
    cp = critical_point("relu", sb2=sb2)
    assert abs(cp.sw2 - 1 / d2) <= 1e-9 * cp.sw2
    assert math.isinf(cp.q_star) == (sb2 > 0)
    assert fixed_point("relu", cp.sw2, sb2).phase == "critical"


@pytest.mark.parametrize("name, sb2", [("tanh", 0.05), ("erf", 0.3), ("gelu", 1.0), ("tanh", 1.0)])
def test_critical_is_detected_and_a_millionth_away_is_not(name, sb2):
    cp = critical_point(name, sb2=sb2)
    at = fixed_point(name, cp.sw2, sb2)
    assert at.phase == "critical" and math.isinf(at.xi_c) and math.isinf(at.xi_grad)
    assert "critical" in str(at)
    below = fixed_point(name, cp.sw2 * (1 - 1e-6), sb2)
    above = fixed_point(name, cp.sw2 * (1 + 1e-6), sb2)
    assert below.phase == "ordered" and above.phase == "chaotic"
    for fp in (below, above):
        assert math.isfinite(fp.xi_c) and fp.xi_c > 1e4


def test_tanh_without_bias_is_critical_at_sw2_one_with_q_star_zero():
    # tanh(x) = x - x^3/3 + ...: E[phi'(0)^2] = 1, so chi_1 = sw2 at q* = 0
    cp = critical_point("tanh", sb2=0.0)
    assert cp.q_star == 0.0 and abs(cp.sw2 - 1.0) <= 1e-15
    assert fixed_point("tanh", 1.0, 0.0).phase == "critical"
    assert fixed_point("tanh", 0.9, 0.0).phase == "ordered"


def test_naive_iteration_stalls_at_criticality():
    cp = critical_point("erf", sb2=0.05)
    # at the edge of chaos 1 - c_l decays like 1/l: thousands of layers leave it far from c* = 1 ...
    stalled = iterate("erf", cp.sw2, 0.05, depth=3000, q0=cp.q_star, c0=0.5)
    assert stalled.eps[-1] > 1e-4
    assert stalled.eps[-1] > 0.5 * stalled.eps[1500] * 1500 / 3000  # ... power law, not geometric
    # ... while 20% into the ordered phase it converges geometrically
    ordered = iterate("erf", 0.8 * cp.sw2, 0.05, depth=300, c0=0.5)
    assert ordered.eps[-1] < 1e-12
    # the variance at sb2 = 0 (q* = 0 on the boundary) also decays only like 1/l
    q, sw2 = 1.0, critical_point("erf", sb2=0.0).sw2
    for _ in range(2000):
        q = float(q_map("erf", q, sw2, 0.0))
    assert q > 1e-4
    assert fixed_point("erf", sw2, 0.0).q_star == 0.0


def test_chaotic_fixed_point_against_reference_maps():
    sw2, sb2 = 2.5, 0.1
    fp = fixed_point("tanh", sw2, sb2)
    assert fp.phase == "chaotic" and 0 < fp.c_star < 1
    phi, dphi = PHI["tanh"]
    q = fp.q_star
    second = expect1(lambda u: phi(u) ** 2, q)
    assert abs(sw2 * second + sb2 - q) <= 1e-12

    def cmap(c):
        return (sw2 * expect2(phi, phi, q, q, c) + sb2) / (sw2 * second + sb2)

    assert abs(cmap(fp.c_star) - fp.c_star) <= 1e-11
    assert abs(cmap(fp.c_star + 1e-6) - (fp.c_star + 1e-6)) > 1e-8  # a mutant c* is not fixed
    h = 1e-5
    assert abs(fp.chi_c - (cmap(fp.c_star + h) - cmap(fp.c_star - h)) / (2 * h)) <= 1e-8
    assert abs(fp.chi1 - sw2 * expect1(lambda u: dphi(u) ** 2, q)) <= 1e-12
    assert abs(fp.xi_c + 1 / math.log(fp.chi_c)) <= 1e-12 * fp.xi_c


def test_ordered_relu_in_closed_form():
    fp = fixed_point("relu", 1.0, 0.5)  # q* = sb2 / (1 - sw2/2) = 1
    assert fp.q_star == 1.0 and fp.phase == "ordered" and fp.c_star == 1.0
    assert abs(fp.xi_c - 1 / math.log(2)) <= 1e-15


@pytest.mark.parametrize("name, sw2", [("relu", 3.0), ("linear", 1.5), ("softplus", 3.0),
                                       ("leaky_relu", 2.5)])
def test_exploding_phase_is_reported_not_nan(name, sw2):
    fp = fixed_point(name, sw2, 0.1)
    assert fp.phase == "exploding" and math.isinf(fp.q_star) and fp.growth > 1
    values = [v for v in fp.to_json().values() if isinstance(v, float)]
    assert not any(math.isnan(v) for v in values)
    assert "grow" in str(fp)


def test_relu_growth_factor():
    m2 = expect1(lambda u: max(u, 0.0) ** 2, 1.0)  # E[relu(z)^2]
    assert abs(fixed_point("relu", 3.0, 0.1).growth - 3.0 * m2) <= 1e-12


def test_bounded_activations_never_explode():
    assert fixed_point("tanh", 50.0, 0.1).phase == "chaotic"


def test_bad_input():
    for sw2 in (0.0, -1.0, float("nan")):
        with pytest.raises(DomainError):
            fixed_point("tanh", sw2, 0.1)
    with pytest.raises(DomainError):
        fixed_point("tanh", 1.0, -0.5)
    with pytest.raises(UnknownActivationError, match="did you mean 'gelu'"):
        fixed_point("gleu", 1.0, 0.1)
    with pytest.raises(DomainError):
        fixed_point("tanh", 1.0, 0.1, q0=-1)
    with pytest.raises(ParameterError):
        critical_point("tanh")
    with pytest.raises(ParameterError):
        critical_point("tanh", sw2=1.5, sb2=0.1)
    with pytest.raises(DomainError, match="no order-to-chaos"):
        critical_point("softplus", sb2=0.05)
    with pytest.raises(DomainError, match="critical only at sw2 = 2"):
        critical_point("relu", sw2=1.5)


def test_critical_point_given_sw2_and_gelu_branches():
    cp = critical_point("tanh", sw2=1.7)
    assert abs(fixed_point("tanh", 1.7, cp.sb2).chi1 - 1) <= 1e-10
    # GELU's sw2(q) along the boundary dips below 2 and comes back: two points for one sw2
    points = critical_points("gelu", sw2=1.97)
    assert len(points) == 2 and points[0].q_star < points[1].q_star
    for p in points:
        assert abs(fixed_point("gelu", p.sw2, p.sb2, q0=p.q_star).chi1 - 1) <= 1e-9
    assert np.isfinite([p.sb2 for p in points]).all()


def test_sign_changes_inside_the_rounding_of_the_equation_are_one_branch():
    # tanh at sb2 = 0: q - E[tanh^2] / E[tanh'^2] = O(q^3) is below its own rounding for q < 1e-6,
    # where it changes sign at random; the only point of the boundary is (sw2, q*) = (1, 0)
    # (tanh'(0) = 1), and it must be listed once
    cp = critical_point("tanh", sb2=0.0)
    assert len(cp.branches) == 1 and cp.q_star == 0.0 and cp.sw2 == pytest.approx(1.0, abs=1e-12)
    assert len(critical_points("tanh", sw2=1.0)) == 1
    # the mutant: two genuinely distinct branches (GELU's turn) stay two
    points = critical_points("gelu", sw2=1.97)
    assert len(points) == 2 and points[1].q_star > 5 * points[0].q_star


def test_polynomials_vanishing_with_their_slope_at_zero_have_a_critical_point_only_with_bias():
    """phi = x^2: E[phi^2] = 3 q^2, E[phi'^2] = 4 q (Gaussian moments), so the critical equation
    q - E[phi^2] / E[phi'^2] = sb2 reads q / 4 = sb2: no root at sb2 = 0 (0 / 0 at q = 0 is no
    sign change), q* = 4 sb2 and sw2 = 1 / (4 q*) otherwise; phi = x^3: 4 q / 9 = sb2."""
    x = sp.Symbol("x")
    for expr in (x**2, x**3):
        with pytest.raises(DomainError, match="no order-to-chaos point"):
            critical_point(expr, sb2=0.0)
    cp = critical_point(x**2, sb2=0.25)
    assert cp.q_star == pytest.approx(1.0, rel=1e-10) and cp.sw2 == pytest.approx(0.25, rel=1e-10)
    cp = critical_point(x**3, sb2=0.4)  # q* = 9 sb2 / 4, sw2 = 1 / E[phi'^2] = 1 / (27 q*^2)
    assert cp.q_star == pytest.approx(0.9, rel=1e-10) and cp.sw2 == pytest.approx(1 / (27 * 0.81), rel=1e-10)
    # with a linear part the slope at zero is 1: critical at sw2 = 1, q* = 0, as tanh
    cp = critical_point(x + x**2, sb2=0.0)
    assert cp.q_star == 0.0 and cp.sw2 == pytest.approx(1.0, rel=1e-12)


def test_a_log_bracket_keeps_its_ends_where_a_root_sits_between_b_and_exp_log_b():
    """A root just below the bracket's end b, above exp(log(b)) (rounded down from 1e150): in log
    coordinates the end itself must be evaluated, not exp(log(b)), or the bracket loses its sign
    change (brentq raised; tanh's fixed point sat that close to its bracket's end at sw2 = 1e300)."""
    from depthdyn.meanfield.fixedpoint import _bracketed

    b = 1e150
    assert math.exp(math.log(b)) < b
    root = float(np.nextafter(b, 0.0))
    assert math.exp(math.log(b)) < root  # between them: func(exp(log(b))) > 0 = sign at a

    def func(q):
        return root - q

    # exp of the root's logarithm (about 345) carries its rounding times 345: 1e-13
    assert _bracketed(func, b / 10, b, log=True) == pytest.approx(root, rel=1e-13)
    assert _bracketed(func, b / 10, b, log=False) == pytest.approx(root, rel=1e-14)
