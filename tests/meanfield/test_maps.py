"""The q- and c-maps, their slopes, and iterate(), against maps built here from independent quadrature."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from reference_quadrature import expect1, expect2

from depthdyn.errors import DomainError, ParameterError
from depthdyn.meanfield import c_map, chi1, chi_c, chi_q, eps_map, iterate, q_map


def _ref_q(phi, q, sw2, sb2):
    return sw2 * expect1(lambda u: phi(u) ** 2, q) + sb2


def _ref_c(phi, c, q, sw2, sb2):
    return (sw2 * expect2(phi, phi, q, q, c) + sb2) / _ref_q(phi, q, sw2, sb2)


def test_q_and_c_maps_of_tanh_against_quadrature():
    for q, c in ((0.3, -0.5), (2.0, 0.4), (50.0, 0.9)):
        assert abs(float(q_map("tanh", q, 1.7, 0.2)) - _ref_q(math.tanh, q, 1.7, 0.2)) <= 1e-13
        assert abs(float(c_map("tanh", c, q, 1.7, 0.2)) - _ref_c(math.tanh, c, q, 1.7, 0.2)) <= 1e-12
    # the mutant: another sw2 gives another map
    mutant = float(c_map("tanh", 0.4, 2.0, 1.7 * (1 + 1e-9), 0.2))
    assert abs(mutant - _ref_c(math.tanh, 0.4, 2.0, 1.7, 0.2)) > 1e-12


def test_slopes_against_finite_differences_of_the_reference_maps():
    sw2, sb2, q, c, h = 2.0, 0.1, 1.3, 0.4, 1e-5
    fd = (_ref_c(math.tanh, c + h, q, sw2, sb2) - _ref_c(math.tanh, c - h, q, sw2, sb2)) / (2 * h)
    assert abs(float(chi_c("tanh", q, sw2, sb2, c)) - fd) <= 1e-8
    assert abs(float(chi_c("tanh", q, sw2 * 1.001, sb2, c)) - fd) > 1e-6  # mutant
    dq = 1e-5
    fdq = (_ref_q(math.tanh, q + dq, sw2, sb2) - _ref_q(math.tanh, q - dq, sw2, sb2)) / (2 * dq)
    assert abs(float(chi_q("tanh", q, sw2)) - fdq) <= 1e-8
    expected = sw2 * expect1(lambda u: (1 - math.tanh(u) ** 2) ** 2, q)
    assert abs(float(chi1("tanh", q, sw2)) - expected) <= 1e-13


def test_eps_map_is_one_minus_the_c_map_and_keeps_digits():
    one_minus = 1 - float(c_map("erf", 0.4, 1.0, 1.5, 0.1))
    assert abs(float(eps_map("erf", 0.6, 1.0, 1.5, 0.1)) - one_minus) <= 1e-15
    # near c = 1, against 50-digit arithmetic on the arcsine kernel of erf, itself checked against
    # quadrature in test_activations: eps' = sw2 (2/pi) (asin(a) - asin(a c)) / q', a = 2q/(1+2q)
    with mp.workdps(50):
        q, eps, sw2, sb2 = mp.mpf(1), mp.mpf("1e-12"), mp.mpf("1.5"), mp.mpf("0.1")
        a = 2 * q / (1 + 2 * q)
        q_next = sw2 * 2 / mp.pi * mp.asin(a) + sb2
        expected = sw2 * 2 / mp.pi * (mp.asin(a) - mp.asin(a * (1 - eps))) / q_next
    value = float(eps_map("erf", 1e-12, 1.0, 1.5, 0.1))
    assert abs(value - float(expected)) <= 1e-14 * float(expected)


def test_iterate_tanh_against_a_loop_of_reference_maps():
    sw2, sb2, q, c = 1.8, 0.05, 1.0, 0.3
    it = iterate("tanh", sw2, sb2, depth=4, q0=q, c0=c)
    assert it.q.shape == it.c.shape == it.eps.shape == (5,)
    for layer in range(1, 5):
        c = _ref_c(math.tanh, c, q, sw2, sb2)
        q = _ref_q(math.tanh, q, sw2, sb2)
        assert abs(it.q[layer] - q) <= 1e-13 * q and abs(it.c[layer] - c) <= 1e-12


def test_iterate_relu_from_nearly_equal_inputs_keeps_eps():
    # arc-cosine kernel at 50 digits (checked against quadrature in test_activations)
    it = iterate("relu", 1.5, 0.2, depth=30, q0=2.0, eps0=1e-12)
    with mp.workdps(50):
        q, eps = mp.mpf(2), mp.mpf("1e-12")
        for layer in range(1, 31):
            c = 1 - eps
            t = mp.acos(c)
            cross = q / (2 * mp.pi) * (mp.sin(t) + (mp.pi - t) * c)
            q_next = mp.mpf("1.5") * q / 2 + mp.mpf("0.2")
            eps = 1 - (mp.mpf("1.5") * cross + mp.mpf("0.2")) / q_next
            q = q_next
            assert abs(it.eps[layer] - float(eps)) <= 1e-12 * float(eps), layer
            assert abs(it.q[layer] - float(q)) <= 1e-14 * float(q)


def test_iterate_shapes_and_bad_input():
    it = iterate("relu", 2.0, 0.0, depth=0, q0=1.0, c0=0.2)
    assert it.q.tolist() == [1.0] and it.c.tolist() == [0.2]
    with pytest.raises(DomainError):
        iterate("relu", 2.0, 0.0, depth=-1)
    with pytest.raises(ParameterError):
        iterate("relu", 2.0, 0.0, depth=2.5)
    with pytest.raises(ParameterError):
        iterate("relu", 2.0, 0.0, depth=3, h=0.5)  # the plain chain has no parameters
    with pytest.raises(DomainError):
        iterate("relu", 2.0, 0.0, depth=3, c0=1.2)
    with pytest.raises(DomainError):
        iterate("relu", 2.0, 0.0, depth=3, q0=-1.0)


@pytest.mark.parametrize("sw2, sb2", [(0.0, 0.1), (-1.0, 0.1), (float("nan"), 0.1), (float("inf"), 0.1),
                                      (1.0, -0.1), (1.0, float("nan"))])
def test_bad_weight_variances(sw2, sb2):
    with pytest.raises(DomainError):
        q_map("tanh", 1.0, sw2, sb2)
    with pytest.raises(DomainError):
        iterate("tanh", sw2, sb2, depth=2)


def test_an_exploding_variance_stops_and_is_flagged_the_same_way_in_every_family():
    # ReLU, sw2 = 3, sb2 = 0.1: q' = 3/2 q + 0.1 exactly (E[relu(sqrt(q) z)^2] = q / 2), so the
    # first q above 1e8 is the first l with q_l > 1e8 of that affine recurrence, computed here
    q, layer = 1.0, 0
    while q <= 1e8:
        q, layer = 1.5 * q + 0.1, layer + 1
    it = iterate("relu", 3.0, 0.1, depth=2000, q0=1.0, c0=0.3)
    assert it.stopped_at == layer and it.layers == layer and it.depth == 2000
    assert it.reason == "exploding phase: q > q_max = 1e+08"
    assert it.q[-1] == pytest.approx(q, rel=1e-12) and len(it.q) == layer + 1
    assert np.all(np.isfinite(it.q)) and np.all(np.isfinite(it.c)) and np.all(np.isfinite(it.log_q))
    assert "stopped at layer" in str(it)
    # the mutant: a bound one layer further stops one layer later
    assert iterate("relu", 3.0, 0.1, depth=2000, q0=1.0, c0=0.3, q_max=1.5 * q).stopped_at == layer + 1
    # unbounded smooth activations stop the same way instead of raising; exp's moments pass float64 first
    for act, sw2, q0 in (("softplus", 50.0, 1.0), ("hermite", 1.0, 2.0), ("exp", 1.0, 1.0)):
        it = iterate(act, sw2, 0.1, depth=400, q0=q0, c0=0.3)
        assert it.stopped_at is not None and it.stopped_at < 400 and it.reason.startswith("exploding phase")
        assert np.all(np.isfinite(it.q)) and np.all(np.isfinite(it.c))
    # the residual family and the plain chain share the fields and the reason
    fam = iterate("relu", 3.0, 0.1, depth=2000, q0=1.0, c0=0.3, family="residual")
    assert fam.stopped_at is not None and fam.reason == "exploding phase: q > q_max = 1e+08"
    assert fam.q[-1] > 1e8 >= fam.q[-2]
    with pytest.raises(DomainError):
        iterate("relu", 3.0, 0.1, depth=10, q_max=float("inf"))


def test_public_names_are_documented_and_the_import_is_light():
    import subprocess
    import sys

    import depthdyn.meanfield as mf

    for name in mf.__all__:
        obj = getattr(mf, name)
        if callable(obj):
            assert obj.__doc__, name
    heavy = "('torch', 'matplotlib')"
    code = f"import sys, depthdyn.meanfield; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(mf.__file__).parents[2]))
    assert out.stdout.strip() == "[]"


def test_families_receive_eps_not_a_rounded_correlation():
    # 1 - (1 - 1e-14) is 9.992e-15 in float64: handing the families c0 would lose 0.08% of eps
    it = iterate("tanh", 1.5, 0.05, depth=3, q0=1.0, eps0=1e-14, family="residual")
    assert it.eps[0] == 1e-14
    assert 1.0 - (1.0 - 1e-14) != 1e-14  # the mutant: the rounded correlation differs
