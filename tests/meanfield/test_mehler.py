"""The Hermite (Mehler) series of the bivariate moments: its values, its error bound, its switch.

References, none of them the series itself: nested QUADPACK (``reference_quadrature.expect2``),
one-variable adaptive quadrature for Price's expansion near ``c = 1``
(``E[phi^2] - E[phi(u1) phi(u2)] = q eps E[phi'^2] - (q eps)^2 / 2 E[phi''^2] + ...``) and for
the derivative of the cross moment in ``rho`` (``sqrt(q1 q2) E[phi'(u1) phi'(u2)]``). The
bound is checked where it is small (accepted points) and where the series is cut short on
purpose (the Parseval tail then dominates, and must still cover the error).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_quadrature import expect1, expect2

from depthdyn.meanfield import get_activation, hermite_rule, mehler


def _tanh_d(x):
    return 1 - math.tanh(x) ** 2


def _tanh_dd(x):
    return -2 * math.tanh(x) * (1 - math.tanh(x) ** 2)


def _one(x):
    return np.array([float(x)])


@pytest.mark.parametrize("q1, q2, rho", [(1e-8, 1e-8, 0.3), (0.3, 0.3, -0.9), (1.0, 2.0, 0.95),
                                         (2.0, 2.0, 0.5), (5.0, 5.0, 0.2)])
def test_cross_moment_and_its_bound_against_nested_quadrature(q1, q2, rho):
    act = get_activation("tanh")
    reference = expect2(math.tanh, math.tanh, q1, q2, rho)
    value, bound, ok = mehler.cross_moment(act, _one(q1), _one(q2), _one(rho))
    assert ok[0], (q1, q2, rho, bound)
    assert abs(value[0] - reference) <= bound[0] + 1e-15, (value[0], reference, bound[0])
    assert bound[0] <= 1e-12
    # the derivative cross moment as well
    reference = expect2(_tanh_d, _tanh_d, q1, q2, rho)
    value, bound, ok = mehler.derivative_cross_moment(act, _one(q1), _one(q2), _one(rho))
    assert ok[0] and abs(value[0] - reference) <= bound[0] + 1e-15


@pytest.mark.parametrize("q", [1e-8, 0.01, 0.5, 1.0, 2.0])
def test_difference_moment_at_rho_one_minus_1e_12_keeps_its_digits(q):
    act = get_activation("tanh")
    eps = 1e-12
    expected = q * eps * expect1(lambda x: _tanh_d(x) ** 2, q) - (q * eps) ** 2 / 2 * expect1(
        lambda x: _tanh_dd(x) ** 2, q)
    value, bound, ok = mehler.difference_moment(act, _one(q), _one(eps))
    assert ok[0]
    assert abs(value[0] - expected) <= bound[0] + 1e-14 * expected, (q, value[0], expected, bound[0])
    assert bound[0] <= 1e-12 * expected
    # the mutant: the same series summed as E[phi^2] - E[phi phi] loses six digits
    naive = float(act.second_moment(q)) - mehler.cross_moment(act, _one(q), _one(q), _one(1 - eps))[0][0]
    assert q < 0.1 or abs(naive - expected) > 1e-6 * expected


def test_the_bound_covers_a_series_cut_short(monkeypatch):
    # 48 terms at q = 2: the Parseval tail dominates the bound, and it must still cover the error
    act = get_activation("tanh")
    monkeypatch.setattr(hermite_rule, "tier", lambda q_max: 48)
    mehler._cache.clear()
    try:
        for rho in (0.5, 0.99, 1 - 1e-6):
            value, bound, ok = mehler.cross_moment(act, _one(2.0), _one(2.0), _one(rho))
            reference = expect2(math.tanh, math.tanh, 2.0, 2.0, rho)
            assert abs(value[0] - reference) <= bound[0]
            assert rho == 0.5 or not ok[0]  # declined: the quadrature takes over
        eps = 1e-6
        expected = 2 * eps * expect1(lambda x: _tanh_d(x) ** 2, 2.0) - (2 * eps) ** 2 / 2 * expect1(
            lambda x: _tanh_dd(x) ** 2, 2.0)
        value, bound, ok = mehler.difference_moment(act, _one(2.0), _one(eps))
        assert not ok[0] and abs(value[0] - expected) <= bound[0] + 1e-9 * expected
        # the mutant: a bound without its tail would not cover the error of the short series
        assert abs(value[0] - expected) > 1e-9 * expected
    finally:
        mehler._cache.clear()


def test_large_variance_near_c_one_switches_to_quadrature_with_its_bound():
    act = get_activation("tanh")
    for q in (10.0, 1e4, 1e8):
        *_, ok = mehler.difference_moment(act, _one(q), _one(1e-12))
        assert not ok[0]  # the series declines beyond its reach
    value, bound = act.cross_moment(1e8, 1e8, 1 - 1e-12, return_error=True)
    reference = expect2(math.tanh, math.tanh, 1e8, 1e8, 1 - 1e-12)
    assert abs(float(value) - reference) <= float(bound) + 1e-13


@pytest.mark.parametrize("q", [30.0, 1e4, 1e8])
def test_large_variance_away_from_c_one_by_the_series_on_graded_panels(q):
    # E[phi^2] - sum b_n^2 rho^n: its tail |rho|^(N+1) T0 vanishes for |rho| <= 0.9
    act = get_activation("tanh")
    for eps in (0.3, 1.0, 1.7):
        value, bound, ok = mehler.difference_moment(act, _one(q), _one(eps))
        assert ok[0], (q, eps, bound)
        reference = expect1(lambda x: math.tanh(x) ** 2, q) - expect2(math.tanh, math.tanh, q, q, 1 - eps)
        assert abs(value[0] - reference) <= bound[0] + 1e-14, (q, eps, value[0], reference, bound[0])


def test_cross_difference_of_nearby_correlations():
    # M(rho) - M(rho - delta) = delta sqrt(q1 q2) E[phi' phi'](rho - delta / 2) + O(delta^3)
    act = get_activation("tanh")
    q1, q2, rho, delta = 0.8, 1.3, 0.6, 1e-6
    expected = delta * math.sqrt(q1 * q2) * expect2(_tanh_d, _tanh_d, q1, q2, rho - delta / 2)
    value, bound, ok = mehler.cross_difference(act, _one(q1), _one(q2), _one(rho), _one(delta))
    assert ok[0] and abs(value[0] - expected) <= bound[0] + 1e-12 * expected
    # the mutant: the difference of two rounded moments has an absolute error of an ulp of M
    pair = mehler.cross_moment(act, np.array([q1, q1]), np.array([q2, q2]), np.array([rho, rho - delta]))[0]
    assert abs((pair[0] - pair[1]) - expected) > 1e-12 * expected


def test_every_quadrature_activation_uses_the_series_and_agrees_with_quadrature():
    for name in ("tanh", "sigmoid", "silu", "softplus", "gelu", "selu"):
        act = get_activation(name)
        value, bound, ok = mehler.cross_moment(act, _one(0.7), _one(1.4), _one(0.4))
        assert ok[0], name
        reference = expect2(act.phi, act.phi, 0.7, 1.4, 0.4)
        assert abs(value[0] - reference) <= bound[0] + 1e-14, name
    # SELU's derivative jumps at 0: its coefficients fall only like n^(-5/4), so near c = 1 the
    # series declines (the quadrature takes over) while away from it |rho|^n does the work
    selu = get_activation("selu")
    *_, ok = mehler.difference_moment(selu, _one(1.0), _one(1e-12))
    assert not ok[0]
    value, bound, ok = mehler.difference_moment(selu, _one(1.0), _one(0.7))
    reference = expect1(lambda x: float(selu.phi(x)) ** 2, 1.0) - expect2(selu.phi, selu.phi, 1.0, 1.0, 0.3)
    assert ok[0] and abs(value[0] - reference) <= bound[0] + 1e-14


def test_a_perturbed_activation_changes_the_series_beyond_its_bound():
    class Bent(type(get_activation("tanh"))):
        name = "bent tanh"

        def phi(self, u):
            return np.tanh(u) + 1e-9 * np.sin(u)

    value, bound, _ = mehler.cross_moment(Bent(), _one(1.0), _one(1.0), _one(0.5))
    reference = expect2(math.tanh, math.tanh, 1.0, 1.0, 0.5)
    assert abs(value[0] - reference) > bound[0]


@pytest.mark.parametrize("family, params, sw2", [("residual", {}, 0.5), ("dense", {"k": 3, "h": 0.3}, 1.0),
                                                 ("momentum", {"m": 0.5, "h": 0.5}, 1.5), ("plain", {}, 2.5)])
def test_kernel_recurrences_agree_with_the_two_dimensional_quadrature(family, params, sw2):
    from depthdyn.meanfield.kernels import iterate_family

    series = get_activation("tanh")
    quadrature = get_activation("tanh")
    quadrature.growth = None  # the graded 2-D rule at every point
    for eps0 in (0.7, 1e-9):
        a = iterate_family(series, sw2, 0.05, depth=8, q0=1.0, eps0=eps0, family=family, **params)
        b = iterate_family(quadrature, sw2, 0.05, depth=8, q0=1.0, eps0=eps0, family=family, **params)
        assert np.allclose(a.q, b.q, rtol=1e-13, atol=0) and np.allclose(a.eps, b.eps, rtol=1e-12, atol=0)
    # the mutant: a slightly different variance is seen at this tolerance
    run = dict(depth=8, q0=1.0, eps0=0.7, family=family, **params)
    a = iterate_family(series, sw2, 0.05, **run)
    c = iterate_family(quadrature, sw2 * (1 + 1e-10), 0.05, **run)
    assert not (np.allclose(a.q, c.q, rtol=1e-13, atol=0) and np.allclose(a.eps, c.eps, rtol=1e-12, atol=0))


def test_diagonal_moments_are_the_two_moments_of_a_residual_trajectory_within_their_bounds():
    # points along a real residual kernel (q grows, c tends to 1): one record gives E[phi^2] and
    # E[phi^2] - E[phi phi], each checked against nested quadrature where the series accepts it
    from depthdyn.meanfield.kernels import iterate_family

    act = get_activation("tanh")
    traj = iterate_family(act, 0.5, 0.05, depth=40, q0=1.0, c0=0.3, family="residual")
    q, eps = traj.q[::8].copy(), traj.eps[::8].copy()
    second, second_ok, difference, difference_ok = mehler.diagonal_moments(act, q, eps)
    s_value, s_bound, s_ok = mehler.second_moment(act, q)
    d_value, d_bound, d_ok = mehler.difference_moment(act, q, eps)
    assert (second_ok == s_ok).all() and (difference_ok == d_ok).all() and d_ok.all()
    assert np.array_equal(second[s_ok], s_value[s_ok]) and np.array_equal(difference, d_value)
    for i in range(q.size):
        m2 = expect1(lambda x: math.tanh(x) ** 2, q[i])
        reference = m2 - expect2(math.tanh, math.tanh, q[i], q[i], 1 - eps[i])
        assert abs(second[i] - m2) <= s_bound[i] + 1e-14
        assert abs(difference[i] - reference) <= d_bound[i] + 1e-14 * reference, (q[i], eps[i])
    # the mutant: the variance of the next layer instead of this one is seen beyond the bound
    shifted = mehler.diagonal_moments(act, q * (1 + 1e-9), eps)[2]
    assert (np.abs(shifted - d_value) > d_bound).all()


def test_diagonal_moments_outside_the_series_defer_to_the_separate_moments():
    act = get_activation("tanh")
    q, eps = np.array([0.0, 1.0]), np.array([0.5, 0.5])
    second, second_ok, difference, difference_ok = mehler.diagonal_moments(act, q, eps)
    # q = 0: E[tanh(0)^2] = 0 is exact, the difference (no coefficients at q = 0) is declined
    assert second_ok.all() and second[0] == 0 and not difference_ok[0] and difference_ok[1]
    assert second[1] == mehler.second_moment(act, q[1:])[0][0]
    assert difference[1] == mehler.difference_moment(act, q[1:], eps[1:])[0][0]
