"""Activations reduced to an affine part plus one of a parity (sigmoid, SiLU, softplus, GELU).

References, none of them the reduction: the activation itself evaluated point by point (the
parts must rebuild it), mpmath at 40 digits for the even parts and their differences, nested
QUADPACK quadrature (``reference_quadrature``) of the moments and of the kernel layers, the
exact identity ``E[phi(u)^2] - E[phi(u) phi(-u)] = q/2`` of SiLU, and the same activation's
moments and kernel trajectories computed without the reduction (a twin class with the same
``phi`` that declares none, on the generic Hermite-and-quadrature path).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from reference_quadrature import expect1, expect2

from depthdyn.meanfield import get_activation
from depthdyn.meanfield.activation import Activation
from depthdyn.meanfield.kernels import iterate_family
from depthdyn.meanfield.reduced import Reduced
from depthdyn.meanfield.smooth import GELUEvenPart, SiLUEvenPart, SoftplusEvenPart, Tanh

REDUCED = ["sigmoid", "silu", "softplus", "gelu"]

# each activation at 40 digits, for the parts and the even parts' differences
MP = {
    "sigmoid": lambda x: 1 / (1 + mp.exp(-x)),
    "silu": lambda x: x / (1 + mp.exp(-x)),
    "softplus": lambda x: mp.log(1 + mp.exp(x)),
    "gelu": lambda x: x * mp.ncdf(x),
}
EVEN = {"silu": (SiLUEvenPart, MP["silu"]), "softplus": (SoftplusEvenPart, MP["softplus"]),
        "gelu": (GELUEvenPart, MP["gelu"])}


def _twin(act):
    """The same ``phi``, ``dphi``, ``diff`` and growth bound, without the reduction (the generic path)."""
    cls = type(act)

    class Plain(Activation):
        name, smooth, growth, bounded = cls.name + "-plain", True, cls.growth, cls.bounded

        def phi(self, u):
            return cls.phi(act, u)

        def dphi(self, u):
            return cls.dphi(act, u)

        def diff(self, u, h):
            return cls.diff(act, u, h)

    return Plain()


@pytest.mark.parametrize("name", REDUCED)
def test_parts_rebuild_the_activation(name):
    act = get_activation(name)
    a, b, s, k = act.parts
    u = np.linspace(-30, 30, 601)
    psi = act.inner.phi(k * u)
    # to a few ulps of the parts' sizes (u/2 + psi cancels where u << 0)
    size = abs(a) + np.abs(b * u) + np.abs(s * psi)
    assert np.all(np.abs(a + b * u + s * psi - act.phi(u)) <= 4e-16 * size)
    assert act.inner.phi_parity() in ("odd", "even")
    mirrored = act.inner.phi(-k * u)
    np.testing.assert_array_equal(psi, mirrored if act.inner.phi_parity() == "even" else -mirrored)
    # the mutant: another slope b no longer rebuilds phi
    assert b == 0 or not np.all(np.abs(a + 1.001 * b * u + s * psi - act.phi(u)) <= 1e-6 * size)
    assert not np.all(np.abs(a + b * u + 1.001 * s * psi - act.phi(u)) <= 1e-6 * size)


@pytest.mark.parametrize("name", sorted(EVEN))
def test_even_parts_and_their_differences_against_mpmath(name):
    cls, full = EVEN[name]
    psi = cls()
    mp.mp.dps = 40
    u = np.array([-25.0, -3.0, -0.7, -1e-3, 0.0, 2e-8, 0.4, 1.5, 9.0])
    ref = [float(full(mp.mpf(x)) - mp.mpf(x) / 2) for x in u]
    np.testing.assert_allclose(psi.phi(u), ref, rtol=2e-15, atol=1e-300)
    dref = [float(mp.diff(lambda t: full(t) - t / 2, mp.mpf(x))) for x in u]
    np.testing.assert_allclose(psi.dphi(u), dref, rtol=2e-15, atol=1e-60)  # mp.diff: 3e-95 at 0
    for h in (1e-12, 1e-5, 0.3, 2.5):
        got = psi.diff(u, np.full(u.shape, h))
        want = [float(full(mp.mpf(x) + h) - full(mp.mpf(x)) - mp.mpf(h) / 2) for x in u]
        # relative to the difference where it is not itself zero (psi(u + h) = psi(u) near u = -h/2)
        scale = np.maximum(np.abs(want), 1e-16 * abs(h))
        assert np.all(np.abs(got - want) <= 4e-15 * scale), (name, h)
    # from 0 to h (how a kernel layer sums an even part with psi(0) != 0, from the scalar 0), past the
    # overflow of the closed form the small h take (2 sinh(h/4)^2 at h > 1419: was inf up to 2000)
    for h in (np.array([1e-9, 0.2, 3.0, 40.0, 1000.0, 1500.0, 1999.0, -1500.0]), np.array([2500.0, 3.0])):
        want = [float(full(mp.mpf(x)) - full(mp.mpf(0)) - mp.mpf(x) / 2) for x in h]
        np.testing.assert_allclose(psi.diff(np.zeros(h.size), h), want, rtol=4e-15, atol=0)
        np.testing.assert_allclose(psi.diff(0.0, h), want, rtol=4e-15, atol=0)
    # the mutant: the plain difference of psi loses the digits at h = 1e-12
    plain = psi.phi(u + 1e-12) - psi.phi(u)
    want = np.array([float(full(mp.mpf(x) + mp.mpf(1e-12)) - full(mp.mpf(x)) - mp.mpf(1e-12) / 2) for x in u])
    assert np.max(np.abs(plain - want) / np.maximum(np.abs(want), 1e-28)) > 1e-6


SQRT_2PI = math.sqrt(2 * math.pi)


def _sigmoid(x):
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


# each activation and its derivative as scalar functions of math's, for the nested quadrature
SCALAR = {
    "sigmoid": (_sigmoid, lambda x: _sigmoid(x) * _sigmoid(-x)),
    "silu": (lambda x: x * _sigmoid(x), lambda x: _sigmoid(x) * (1 + x * _sigmoid(-x))),
    "softplus": (lambda x: max(x, 0.0) + math.log1p(math.exp(-abs(x))), _sigmoid),
    "gelu": (lambda x: 0.5 * x * math.erfc(-x / math.sqrt(2)),
             lambda x: 0.5 * math.erfc(-x / math.sqrt(2)) + x * math.exp(-x * x / 2) / SQRT_2PI),
}


@pytest.mark.parametrize("name", REDUCED)
def test_moments_against_nested_quadrature(name):
    act = get_activation(name)
    phi, dphi = SCALAR[name]
    u = np.linspace(-20, 20, 81)
    assert np.allclose([phi(x) for x in u], act.phi(u), rtol=1e-12, atol=1e-300)  # the same function
    assert np.allclose([dphi(x) for x in u], act.dphi(u), rtol=1e-12, atol=1e-300)
    for q, eps in [(0.3, 0.5), (40.0, 0.05)]:
        c = 1 - eps
        second = expect1(lambda x: phi(x) ** 2, q)
        assert act.second_moment(q) == pytest.approx(second, rel=1e-12)
        assert act.cross_moment(q, 1.7 * q, eps=eps) == pytest.approx(expect2(phi, phi, q, 1.7 * q, c),
                                                                      rel=1e-11, abs=1e-14 * second)
        dcross = expect2(dphi, dphi, q, q, c)
        assert act.derivative_cross_moment(q, q, eps=eps) == pytest.approx(dcross, rel=1e-11)
        assert act.derivative_second_moment(q) == pytest.approx(expect1(lambda x: dphi(x) ** 2, q), rel=1e-12)
        assert act.mean(q) == pytest.approx(expect1(phi, q), rel=1e-12, abs=1e-15)
    # the mutant: the cross moment at a correlation 1e-6 lower is outside that tolerance
    assert act.cross_moment(0.3, 0.51, eps=0.5 + 1e-6) != pytest.approx(expect2(phi, phi, 0.3, 0.51, 0.5),
                                                                        rel=1e-11)


@pytest.mark.parametrize("name", REDUCED)
def test_reduced_moments_agree_with_the_generic_path(name):
    act = get_activation(name)
    plain = _twin(act)
    q = np.array([1e-6, 0.1, 1.0, 5.0, 30.0])
    Q, E = np.meshgrid(q, np.array([1e-12, 1e-5, 0.02, 0.6, 1.9]))
    # each moment against the twin's, relative to its scale: |M(q1, q2)| <= sqrt(M(q1, q1) M(q2, q2))
    checks = [
        (act.cross_moment(Q, 0.5 * Q, eps=E, return_error=True), plain.cross_moment(Q, 0.5 * Q, eps=E),
         np.sqrt(plain.second_moment(Q) * plain.second_moment(0.5 * Q))),
        (act.derivative_cross_moment(Q, 0.5 * Q, eps=E, return_error=True),
         plain.derivative_cross_moment(Q, 0.5 * Q, eps=E),
         np.sqrt(plain.derivative_second_moment(Q) * plain.derivative_second_moment(0.5 * Q))),
        (act.difference_moment(Q, eps=E, return_error=True), plain.difference_moment(Q, eps=E), None),
    ]
    for (got, bound), want, scale in checks:
        scale = np.abs(want) if scale is None else scale
        assert np.all(np.abs(got - want) <= 1e-11 * scale)
        assert np.all(bound <= 1e-12 * scale + 1e-300)  # the reduced moments are certified as tightly
    np.testing.assert_allclose(act.second_moment(q), plain.second_moment(q), rtol=1e-12)
    np.testing.assert_allclose(act.second_moment_slope(q), plain.second_moment_slope(q), rtol=1e-11)


def test_silu_difference_at_c_minus_one_is_exactly_half_the_variance():
    # E[s(u)^2] - E[s(u) s(-u)] = E[u^2 sigma(u) (sigma(u) + sigma(-u))] = E[u^2 sigma(u)] = q / 2
    silu = get_activation("silu")
    q = np.array([0.01, 1.0, 20.0, 1e4])
    got = silu.difference_moment(q, eps=np.full(4, 2.0))
    np.testing.assert_allclose(got, q / 2, rtol=2e-16)
    # the mutant: at eps = 1.9 it is not
    assert not np.allclose(silu.difference_moment(q, eps=np.full(4, 1.9)), q / 2, rtol=1e-3)


def test_sigmoid_mean_is_one_half_exactly_and_a_parity_is_required():
    sigmoid = get_activation("sigmoid")
    assert np.all(sigmoid.mean(np.array([0.0, 1.0, 1e6])) == 0.5)

    class Wrong(Reduced):  # an odd psi with a linear part: E[u psi(u)] != 0, so the reduction is wrong
        name, parts = "wrong", (0.0, 0.5, 1.0, 1.0)

        def inner_activation(self):
            return Tanh()

    with pytest.raises(TypeError, match="odd with b = 0"):
        Wrong()


CASES = [
    ("residual", {"h": 0.5}),
    ("residual", {"h": 0.5, "norm": "pre"}),
    ("momentum", {"m": 0.5, "h": 0.5}),
    ("dense", {"k": 3, "h": 0.3}),
    ("hyper_connection", {"n": 3, "h": 0.4, "H_pre": [0.5, 0.3, 0.2]}),
]


@pytest.mark.parametrize("family, params", CASES)
@pytest.mark.parametrize("name", REDUCED)
def test_kernel_trajectories_agree_with_the_generic_path(family, params, name):
    act = get_activation(name)
    kw = dict(depth=12, q0=1.3, eps0=0.6, family=family, **params)
    got = iterate_family(act, 0.9, 0.05, **kw)
    want = iterate_family(_twin(act), 0.9, 0.05, **kw)
    assert got.stopped_at is None and want.stopped_at is None
    np.testing.assert_allclose(got.P, want.P, rtol=1e-10, atol=0)
    np.testing.assert_allclose(got.D, want.D, rtol=1e-9, atol=0)
    # the mutant: a reduction with the linear part's slope 1% off gives other trajectories
    a, b, s, k = act.parts
    wrong = type(act)()
    wrong.parts = (a, b * 1.01 if b else b, s * 1.01, k)
    moved = iterate_family(wrong, 0.9, 0.05, **kw)
    assert not np.allclose(moved.P, want.P, rtol=1e-6)


@pytest.mark.parametrize("name", REDUCED)
def test_one_residual_layer_against_quadrature(name):
    act = get_activation(name)
    phi = lambda x: float(act.phi(np.array([x]))[0])  # noqa: E731
    traj = iterate_family(act, 0.9, 0.05, depth=1, q0=1.3, eps0=0.6, family="residual", h=1.0)
    q, c = 1.3, 0.4
    second, cross = expect1(lambda x: phi(x) ** 2, q), expect2(phi, phi, q, q, c)
    assert traj.q[1] == pytest.approx(q + 0.9 * second + 0.05, rel=1e-12)
    # the two inputs' covariance: q c + sw2 E[phi(u1) phi(u2)] + sb2
    assert traj.q[1] * (1 - traj.eps[1]) == pytest.approx(q * c + 0.9 * cross + 0.05, rel=1e-12)
    assert math.isfinite(traj.eps[1])
