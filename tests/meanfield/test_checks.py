"""The mean-field argument checks: which typed error a bad number gets."""

import math

import pytest

from depthdyn.errors import DomainError, ParameterError
from depthdyn.meanfield.checks import as_real
from depthdyn.meanfield.iteration import iterate


def test_nan_and_an_infinity_past_a_bound_are_out_of_the_domain():
    assert as_real(1e300, "q_max", low=0, high=1e300, low_open=True) == 1e300
    with pytest.raises(DomainError, match=r"q_max must lie in \(0, 1e\+300\]; got inf"):
        as_real(math.inf, "q_max", low=0, high=1e300, low_open=True)
    with pytest.raises(DomainError, match="sw2 must lie in"):
        as_real(-math.inf, "sw2", low=0)
    unbounded = ((math.inf, {"low": 0}), (-math.inf, {"high": 1}), (math.nan, {}))
    for value, bounds in unbounded:
        with pytest.raises(ParameterError, match="must be finite") as err:
            as_real(value, "x", **bounds)
        assert not isinstance(err.value, DomainError)
    # nan lies in no interval: outside any domain given
    for bounds in ({"low": 0}, {"high": 1}, {"low": 0, "high": 1}):
        with pytest.raises(DomainError, match="x must lie in"):
            as_real(math.nan, "x", **bounds)
    for bad in (True, "a", None):
        with pytest.raises(ParameterError, match="must be"):
            as_real(bad, "x", low=0)
    # q_max reads through it: past the variances' limit and not positive are out of the domain
    for q_max in (math.inf, 2e300, 0.0, -1.0):
        with pytest.raises(DomainError, match="q_max"):
            iterate("relu", 2.0, 0.1, depth=3, q_max=q_max)
    assert iterate("relu", 2.0, 0.1, depth=3, q_max=1e30).stopped_at is None


def test_variances_are_capped_where_the_rules_stay_affordable():
    """sw2, sb2, q0 and q_max past depthdyn.limits.MAX_VARIANCE are a DomainError naming the one out
    of range (the Gaussian rules refine with log q; past 1e300 a fixed point did not finish), and a
    bounded activation's fixed point is found up there, not reported as exploding: tanh's q* solves
    q = sw2 E[tanh(sqrt(q) z)^2], within a millionth of sw2 at sw2 = 1e20 (E[sech^2] ~ 0.8 / sqrt(q))."""
    from depthdyn.limits import MAX_VARIANCE
    from depthdyn.meanfield import fixed_point
    from depthdyn.meanfield.checks import check_weights

    assert check_weights(MAX_VARIANCE, MAX_VARIANCE) == (MAX_VARIANCE, MAX_VARIANCE)
    past = 10 * MAX_VARIANCE
    for sw2, sb2, name in ((past, 0.0, "sw2"), (1.0, past, "sb2"), (0.0, 0.0, "sw2"), (1.0, -1e-300, "sb2")):
        with pytest.raises(DomainError, match=name):
            check_weights(sw2, sb2)
    with pytest.raises(DomainError, match="q_max"):
        iterate("tanh", 1.0, 0.0, depth=3, q_max=10 * MAX_VARIANCE)
    with pytest.raises(DomainError, match="q0"):
        iterate("tanh", 1.0, 0.0, depth=3, q0=10 * MAX_VARIANCE)
    with pytest.raises(DomainError, match="q0"):
        fixed_point("tanh", 1.0, 0.0, q0=10 * MAX_VARIANCE)
    fp = fixed_point("tanh", 1e20, 0.0)  # was "exploding" past q = 1e10
    assert fp.phase == "chaotic" and 1e20 * (1 - 1e-6) < fp.q_star < 1e20
    assert fp.chi_c == pytest.approx(2 / math.pi, rel=1e-9)  # c* = 0: sw2 E[phi']^2 / q* -> 2 / pi
