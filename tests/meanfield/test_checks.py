"""The mean-field argument checks: which typed error a bad number gets."""

import math

import pytest

from depthdyn.errors import DomainError, ParameterError
from depthdyn.meanfield.checks import as_real
from depthdyn.meanfield.iteration import iterate


def test_an_infinity_past_a_bound_is_out_of_the_domain_and_nan_is_no_number():
    assert as_real(1e300, "q_max", low=0, high=1e300, low_open=True) == 1e300
    with pytest.raises(DomainError, match=r"q_max must lie in \(0, 1e\+300\]; got inf"):
        as_real(math.inf, "q_max", low=0, high=1e300, low_open=True)
    with pytest.raises(DomainError, match="sw2 must lie in"):
        as_real(-math.inf, "sw2", low=0)
    unbounded = ((math.inf, {"low": 0}), (-math.inf, {"high": 1}), (math.nan, {"low": 0, "high": 1}))
    for value, bounds in unbounded:
        with pytest.raises(ParameterError, match="must be finite") as err:
            as_real(value, "x", **bounds)
        assert not isinstance(err.value, DomainError)
    for bad in (True, "a", None):
        with pytest.raises(ParameterError, match="must be"):
            as_real(bad, "x", low=0)
    # q_max reads through it: past float64's range and not positive are out of the domain
    for q_max in (math.inf, 2e300, 0.0, -1.0):
        with pytest.raises(DomainError, match="q_max"):
            iterate("relu", 2.0, 0.1, depth=3, q_max=q_max)
    assert iterate("relu", 2.0, 0.1, depth=3, q_max=1e300).stopped_at is None
