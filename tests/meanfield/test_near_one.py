"""SELU's moments near ``c = 1`` by Price's theorem (``difference_near_one``, ``cross_near_one``), against
nested adaptive quadrature (of the difference written here), and in the kernel layers that take them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from reference_quadrature import expect1, expect2
from scipy.integrate import quad

from depthdyn.meanfield import get_activation
from depthdyn.meanfield.activation import NEAR_ONE
from depthdyn.meanfield.hermite_rule import RTOL
from depthdyn.meanfield.kernels import iterate_family
from depthdyn.meanfield.smooth import SELU

LAM, ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
Z = 12.0


def _selu(u: float) -> float:
    return LAM * u if u > 0 else LAM * ALPHA * math.expm1(u)


def _selu_difference(u1: float, d: float) -> float:
    """``selu(u1 + d) - selu(u1)``: ``lam d`` on the line, ``lam alpha e^u1 expm1(d)`` on the exponential."""
    u2 = u1 + d
    if u1 > 0 and u2 > 0:
        return LAM * d
    if u1 <= 0 and u2 <= 0:
        return LAM * ALPHA * math.exp(u1) * math.expm1(d)
    return _selu(u2) - _selu(u1)


def _npdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def _integrate(f, points) -> float:
    total = 0.0
    with warnings.catch_warnings():  # QUADPACK's round-off notices at the requested accuracy
        warnings.simplefilter("ignore")
        for a, b in zip(points[:-1], points[1:], strict=True):
            total += quad(f, a, b, epsabs=0.0, epsrel=1e-13, limit=200)[0]
    return total


def reference(q: float, eps: float) -> float:
    """``E[(selu(u2) - selu(u1))^2] / 2`` by nested QUADPACK: ``u1 = sqrt(q) z1``, ``u2 - u1 = sqrt(q)
    (-eps z1 + s z2)``; the inner integral split where ``u2`` crosses 0, the outer graded down to
    ``s = sqrt(1 - c^2)`` around 0 (where the two can have opposite signs)."""
    r, s, c = math.sqrt(q), math.sqrt(eps * (2 - eps)), 1 - eps

    def inner(z1):
        kink = -c * z1 / s
        points = sorted({-Z, Z, 0.0, -3.0, 3.0, *([kink] if abs(kink) < Z else [])})
        return _integrate(lambda z2: 0.5 * _selu_difference(r * z1, r * (s * z2 - eps * z1)) ** 2 * _npdf(z2),
                          points)

    scales = [s * 10.0**k for k in range(20) if s * 10.0**k < Z]
    points = sorted({-Z, Z, 0.0, -3.0, 3.0, -1.0, 1.0, *scales, *(-x for x in scales)})
    return _integrate(lambda z1: inner(z1) * _npdf(z1), points)


POINTS = [(1.0, 1e-12), (3.0, 1e-9), (0.01, 1e-6), (10.0, 1e-3), (1e-6, 0.05), (1.0, 0.3)]


@pytest.mark.parametrize(("q", "eps"), POINTS)
def test_price_against_nested_quadrature(q, eps):
    value, bound = SELU().difference_near_one(np.array([q]), np.array([eps]))
    expected = reference(q, eps)
    assert bound[0] <= RTOL * value[0]  # certified here
    assert abs(value[0] - expected) <= bound[0] + 1e-15 * expected
    assert abs(value[0] - expected) <= 1e-13 * expected
    # a wrong input leaves the reference: eps one part in 1e6 off
    moved, _ = SELU().difference_near_one(np.array([q]), np.array([eps * (1 + 1e-6)]))
    assert abs(moved[0] - expected) > bound[0] + 1e-15 * expected


def test_a_wrong_constant_leaves_the_reference(monkeypatch):
    q, eps = 1.0, 1e-9
    expected = reference(q, eps)
    monkeypatch.setattr(SELU, "ALPHA", ALPHA * (1 + 1e-6))  # the mutant: alpha off in the exponential terms
    value, bound = SELU().difference_near_one(np.array([q]), np.array([eps]))
    assert abs(value[0] - expected) > bound[0] + 1e-12 * expected


def test_slope_at_c_equal_one_is_q_times_the_derivative_moment():
    """``D(eps) = eps q E[phi'^2] (1 + O(sqrt eps))``: Price's theorem at ``c = 1``."""
    q, eps = 2.0, 1e-14
    slope = q * expect1(lambda u: (LAM if u > 0 else LAM * ALPHA * math.exp(u)) ** 2, q)
    value, _ = SELU().difference_near_one(np.array([q]), np.array([eps]))
    assert abs(value[0] / eps - slope) <= 1e-6 * slope


def test_outside_its_range_the_bound_says_so_and_another_method_answers():
    """Where ``q s^2`` is large the exponentials vary too fast for the rule: the bound is not within
    RTOL, and ``difference_moment`` answers from the series or the quadrature, still right."""
    q, eps = 100.0, 0.5
    value, bound = SELU().difference_near_one(np.array([q]), np.array([eps]))
    assert not bound[0] <= RTOL * value[0]
    expected = reference(q, eps)
    got = float(SELU().difference_moment(q, eps=eps))
    assert abs(got - expected) <= 1e-12 * expected


def test_a_variance_zero_is_refused_quietly(recwarn):
    """``q = 0`` makes the Price integral's limits 0/0: it is refused (no warning, no NaN), and the
    moments are 0 (selu(0) = 0)."""
    value, bound = SELU().cross_near_one(np.array([0.0]), np.array([0.0]), np.array([1e-3]))
    assert np.isinf(bound[0]) and value[0] == 0.0
    assert float(SELU().cross_moment(0.0, 1.0, eps=1e-3)) == 0.0
    assert float(SELU().difference_moment(0.0, eps=1e-3)) == 0.0
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_far_from_one_the_series_answers_and_the_near_method_is_not_asked(monkeypatch):
    asked = []
    near = SELU.difference_near_one

    def counted(self, q, eps):
        asked.extend(eps.tolist())
        return near(self, q, eps)

    monkeypatch.setattr(SELU, "difference_near_one", counted)
    eps = np.array([1e-10, 0.9])
    value = SELU().difference_moment(np.array([1.0, 1.0]), eps=eps)
    assert asked == [1e-10] and 0.9 > NEAR_ONE  # c = 0.1 is beyond the near method's reach
    for v, e in zip(value, eps, strict=True):
        assert abs(v - reference(1.0, float(e))) <= 1e-12 * v


@pytest.mark.parametrize(("q1", "q2", "eps"), [(1.0, 1.2, 1e-6), (0.5, 2.0, 1e-3), (3.0, 2.9, 0.1),
                                              (10.0, 12.0, 0.01), (1.0, 1.3, 0.4), (2.0, 2.0, 1e-9)])
def test_cross_moment_of_unequal_variances_against_nested_quadrature(q1, q2, eps):
    value, bound = SELU().cross_near_one(np.array([q1]), np.array([q2]), np.array([eps]))
    expected = expect2(_selu, _selu, q1, q2, 1 - eps)
    assert bound[0] <= RTOL * value[0]
    assert abs(value[0] - expected) <= bound[0] + 1e-14 * expected
    swapped, _ = SELU().cross_near_one(np.array([q2]), np.array([q1]), np.array([eps]))
    assert abs(swapped[0] - value[0]) <= 4e-16 * value[0]  # symmetric in the two variances
    # a wrong input leaves the reference: q2 one part in 1e6 off
    moved, _ = SELU().cross_near_one(np.array([q1]), np.array([q2 * (1 + 1e-6)]), np.array([eps]))
    assert abs(moved[0] - expected) > bound[0] + 1e-14 * expected


def test_cross_moment_answers_through_the_activation():
    """``cross_moment`` takes the near method where the series does not certify (c near 1), the
    series elsewhere; every point right."""
    act = SELU()
    q1, q2, eps = np.array([1.0, 1.0, 0.7]), np.array([1.5, 1.5, 0.4]), np.array([1e-8, 0.9, 1e-3])
    value = act.cross_moment(q1, q2, eps=eps)
    for v, a, b, e in zip(value, q1, q2, eps, strict=True):
        assert abs(v - expect2(_selu, _selu, a, b, 1 - e)) <= 1e-12 * abs(v)


class _SeriesSELU(SELU):
    """SELU without its near-one methods: the Hermite series and the two-dimensional quadrature."""

    difference_near_one = None
    cross_near_one = None


@pytest.mark.parametrize(("family", "params"), [("residual", {"norm": "post"}), ("highway", {"g": 0.3})])
def test_kernel_layers_agree_with_the_quadrature(family, params, monkeypatch):
    calls = []
    near = SELU.difference_near_one

    def counted(self, q, eps):
        calls.append(eps)
        return near(self, q, eps)

    monkeypatch.setattr(SELU, "difference_near_one", counted)
    fast = iterate_family(get_activation("selu"), 1.0, 0.05, depth=12, q0=1.0, eps0=1e-6, family=family,
                          **params)
    assert len(calls) >= 12  # every layer took Price's path
    slow = iterate_family(_SeriesSELU(), 1.0, 0.05, depth=12, q0=1.0, eps0=1e-6, family=family, **params)
    np.testing.assert_allclose(fast.q, slow.q, rtol=1e-12)
    np.testing.assert_allclose(fast.eps, slow.eps, rtol=1e-11)
    assert fast.eps[-1] < 1e-5  # near c = 1 all the way


def test_dense_kernel_agrees_with_the_quadrature():
    """A dense network's lags are correlated near 1 at unequal variances: ``cross_near_one``."""
    fast = iterate_family(get_activation("selu"), 1.0, 0.05, depth=6, q0=1.0, c0=0.3, family="dense", k=3,
                          h=0.01)
    slow = iterate_family(_SeriesSELU(), 1.0, 0.05, depth=6, q0=1.0, c0=0.3, family="dense", k=3, h=0.01)
    np.testing.assert_allclose(fast.P, slow.P, rtol=1e-12)
    np.testing.assert_allclose(fast.D, slow.D, rtol=1e-11)


def test_near_method_against_the_graded_quadrature_over_decades():
    """Across ``q`` from 1e-8 to 1e4: wherever the Price integral certifies, it agrees with the graded
    two-dimensional quadrature (a second method) within the two bounds; it certifies the points near
    ``c = 1`` that the series cannot, at every ``q`` here."""
    from depthdyn.meanfield.gaussian import expect2 as graded

    act = SELU()
    q = np.array([1e-8, 1e-3, 1.0, 30.0, 1e4])
    for eps in (1e-14, 1e-6, 0.3):
        e = np.full(q.shape, eps)
        value, bound = act.difference_near_one(q, e)
        ref, ref_bound = graded(lambda u, d: 0.5 * act.diff(u, d) ** 2, q, q, eps=e, sharp=True,
                                return_error=True)
        certified = bound <= RTOL * value
        assert np.all(np.abs(value - ref)[certified] <= (bound + ref_bound)[certified])
        if eps <= 1e-6:
            assert certified.all()
