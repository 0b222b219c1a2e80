"""Batched simulation against exact rational iteration (depthdyn.numeric.simulate)."""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from depthdyn import dense, entangled, hyper_connection, momentum, smooth
from depthdyn.errors import DepthdynError, DomainError, ParameterError, ShapeError
from depthdyn.numeric.blocks import simulate_block
from depthdyn.numeric.bridge import batch_coefficients
from depthdyn.numeric.simulate import (
    OverflowReport,
    SimulationOverflowError,
    final_state,
    initial_from_velocity,
    simulate,
    trajectory,
)


# ------------------------------------------------------- exact reference iteration
def _gauss(v) -> tuple[Fraction, Fraction]:
    v = complex(v)
    return Fraction(v.real), Fraction(v.imag)


def exact_iteration(coeffs, init, L: int) -> list[complex]:
    """``x_0 .. x_L`` of a monic scalar recurrence with float (hence dyadic) data, exactly.

    Every float is ``integer / 2^k``; with ``D = 2^k`` a common denominator and
    ``x_l = X_l / D^(l+1)`` the recurrence ``x_{l+p} = -sum_j a_j x_{l+p-j}`` becomes the
    integer recurrence ``X_{l+p} = -sum_j (D a_j) X_{l+p-j} D^(j-1)`` (Gaussian integers for
    complex data), so no rounding and no gcd happens until the final conversion.
    """
    a = [_gauss(c) for c in coeffs]
    x = [_gauss(v) for v in init]
    D = max(f.denominator for pair in a + x for f in pair)
    A = [(int(re * D), int(im * D)) for re, im in a]
    X = [(int(re * D ** (i + 1)), int(im * D ** (i + 1))) for i, (re, im) in enumerate(x)]
    p = len(a) - 1
    while len(X) <= L:
        re = im = 0
        for j in range(1, p + 1):
            (ar, ai), (xr, xi) = A[j], X[-j]
            scale = D ** (j - 1)
            re -= (ar * xr - ai * xi) * scale
            im -= (ar * xi + ai * xr) * scale
        X.append((re, im))
    return X, D


def exact_at(X, D, layer: int) -> complex:
    re, im = X[layer]
    return complex(float(Fraction(re, D ** (layer + 1))), float(Fraction(im, D ** (layer + 1))))


def momentum_coeffs(lam, m, eta):
    lam, m = np.asarray(lam), np.asarray(m)
    return np.stack(np.broadcast_arrays(np.ones_like(lam + m), -(1 + m + eta * lam), m + 0 * lam), axis=-1)


# ------------------------------------------------------------------ linear, exact
def test_critical_damping_double_root_one_half():
    # m = 1/4, eta = 1, lam = -1/4: r^2 - r + 1/4 = (r - 1/2)^2, so x_l = (x_0 + l (2 x_1 - x_0)) / 2^l
    coeffs = momentum_coeffs(-0.25, 0.25, 1.0)
    assert np.array_equal(coeffs, [1.0, -1.0, 0.25])
    init = np.array([[1.0, 1.0], [3.0, -0.5], [-2.0, 4.0]])
    L = 1024
    traj = trajectory(coeffs, init, L)
    layers = np.array([0, 1, 2, 7, 100, 513, 1000, 1024])
    for b, (x0, x1) in enumerate(init):
        exact = [(Fraction(x0) + k * (2 * Fraction(x1) - Fraction(x0))) / 2**k for k in layers.tolist()]
        exact = np.array([float(e) for e in exact])
        np.testing.assert_allclose(traj[layers, b], exact, rtol=1e-12, atol=0)
    final = final_state(coeffs, init, L)
    np.testing.assert_allclose(final, traj[L], rtol=1e-12, atol=0)
    exact_L = [float((Fraction(x0) + L * (2 * Fraction(x1) - Fraction(x0))) / 2**L) for x0, x1 in init]
    np.testing.assert_allclose(final, exact_L, rtol=1e-12, atol=0)


def test_critical_damping_matches_recurrence_iterate():
    rec = momentum(m=sp.Rational(1, 4), eta=1, lam=sp.Rational(-1, 4))
    exact = rec.iterate([3, sp.Rational(-1, 2)], 40)
    got = trajectory(batch_coefficients(rec), [3.0, -0.5], 40)
    np.testing.assert_allclose(got, [float(v) for v in exact], rtol=1e-13, atol=0)


@pytest.mark.parametrize("L", [1, 2, 3, 64, 333, 1024])
def test_momentum_batch_against_exact_rational_iteration(L):
    rng = np.random.default_rng(L)
    N = 4000
    m = rng.uniform(0.0, 0.95, N)
    eta = 1.0
    lam = rng.uniform(-2 * (1 + m), 0.0)  # inside the stability region: no overflow at L = 1024
    lam[:3] = -0.25
    m[:3] = 0.25  # critical damping among the sampled entries
    coeffs = momentum_coeffs(lam, m, eta)
    init = rng.uniform(-1, 1, (N, 2))
    final = final_state(coeffs, init, L)
    traj = trajectory(coeffs, init, L)
    assert final.shape == (N,) and traj.shape == (L + 1, N)
    for b in [0, 1, 2, *rng.choice(N, 9, replace=False).tolist()]:
        X, D = exact_iteration(coeffs[b], init[b], L + 1)
        exact = exact_at(X, D, L).real
        # relative to the local envelope |x| near layer L (x_L itself may sit near a zero crossing)
        scale = max(abs(exact_at(X, D, j)) for j in (L - 1, L, L + 1) if j >= 0)
        assert abs(final[b] - exact) <= 1e-12 * scale, (b, final[b], exact)
        assert abs(traj[L, b] - exact) <= 1e-12 * scale, (b, traj[L, b], exact)


def test_overdamped_pointwise_relative_error():
    # real positive roots and positive data: x_l > 0 for every l, so plain relative error
    rng = np.random.default_rng(5)
    r1, r2 = rng.uniform(0.5, 0.99, 50), rng.uniform(0.1, 0.49, 50)
    coeffs = np.stack([np.ones(50), -(r1 + r2), r1 * r2], axis=-1)
    init = np.stack([np.ones(50), r1], axis=-1)  # x_l = r1^l exactly
    L = 700
    final = final_state(coeffs, init, L)
    traj = trajectory(coeffs, init, L)
    for b in range(0, 50, 7):
        X, D = exact_iteration(coeffs[b], init[b], L)
        assert abs(final[b] / exact_at(X, D, L).real - 1) <= 1e-12
        assert abs(traj[L, b] / exact_at(X, D, L).real - 1) <= 1e-12


@pytest.mark.parametrize("p", [1, 3, 4])
def test_other_orders_against_exact(p):
    rng = np.random.default_rng(p)
    N = 30
    roots = rng.uniform(-0.9, 0.9, (N, p))
    coeffs = np.array([np.poly(rts) for rts in roots])  # monic, roots inside the unit circle
    init = rng.uniform(-1, 1, (N, p))
    L = 200
    final, traj = final_state(coeffs, init, L), trajectory(coeffs, init, L)
    for b in range(0, N, 5):
        X, D = exact_iteration(coeffs[b], init[b], L + p)
        scale = max(abs(exact_at(X, D, j)) for j in range(L - p, L + p + 1))
        exact = exact_at(X, D, L).real
        assert abs(final[b] - exact) <= 1e-12 * scale
        assert abs(traj[L, b] - exact) <= 1e-12 * scale


def test_complex_coefficients_against_exact():
    rng = np.random.default_rng(7)
    lam = rng.uniform(-1.5, 0, 20) + 1j * rng.uniform(-0.5, 0.5, 20)
    coeffs = momentum_coeffs(lam, 0.5, 1.0)
    init = np.array([1.0, 0.5 - 0.25j])
    L = 150
    final = final_state(coeffs, init, L)
    assert final.dtype == np.complex128
    for b in range(0, 20, 4):
        X, D = exact_iteration(coeffs[b], init, L + 1)
        scale = max(abs(exact_at(X, D, j)) for j in (L - 1, L, L + 1))
        assert abs(final[b] - exact_at(X, D, L)) <= 1e-12 * scale


def test_matrix_recurrence_against_exact_iterate():
    rec = entangled(kind="orthogonal", n=3)  # x_{l+1} = (Gamma + lam I) x_l
    lams = np.array([-0.3, 0.05, -0.9])
    coeffs = batch_coefficients(rec, lam=lams)
    init = np.array([[[1.0, -2.0, 0.5]]])  # batch (1,) broadcasts against (3,); x_0 has 3 entries
    traj = trajectory(coeffs, init, 12, matrix=True)
    final = final_state(coeffs, init, 12, matrix=True)
    assert traj.shape == (13, 3, 3) and final.shape == (3, 3)
    for b, lam in enumerate(["-3/10", "1/20", "-9/10"]):
        exact = rec.subs(lam=lam).iterate([[1, -2, sp.Rational(1, 2)]], 12)
        want = np.array([[float(v) for v in col] for col in exact])
        np.testing.assert_allclose(traj[:, b, :], want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(final[b], want[-1], rtol=1e-12, atol=1e-14)


def test_non_monic_input_is_normalised_and_short_depths():
    assert final_state([2.0, -2.0, -2.0], [0.0, 1.0], 10) == 55.0  # Fibonacci F_10
    assert final_state([1.0, -1.0, -1.0], [4.0, 7.0], 1) == 7.0
    assert np.array_equal(trajectory([1.0, -1.0, -1.0], [4.0, 7.0], 0), [4.0])


# ---------------------------------------------------------------- conventions
def test_initial_from_velocity_conventions():
    coeffs = momentum_coeffs(np.array([-0.3, 0.2]), 0.5, 1.0)
    x0, v0 = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    fwd = initial_from_velocity(coeffs, x0, v0, "forward")
    np.testing.assert_array_equal(fwd, np.stack([x0, x0 + v0], -1))
    back = initial_from_velocity(coeffs, x0, v0, "backward")
    x_m1 = x0 - v0  # v_0 = x_0 - x_{-1}
    x1 = (1 + 0.5 + np.array([-0.3, 0.2])) * x0 - 0.5 * x_m1
    np.testing.assert_allclose(back, np.stack([x0, x1], -1), rtol=1e-15)
    with pytest.raises(ParameterError, match="convention"):
        initial_from_velocity(coeffs, x0, v0, "central")
    with pytest.raises(ShapeError, match="order-2"):
        initial_from_velocity([1.0, -0.5], x0, v0)


def test_simulate_recurrence_with_backward_velocity_is_the_block():
    # the block itself: v' = m v + eta lam x, x' = x + v', from (x_0, v_0)
    lam, m, eta, x, v = -0.7, 0.6, 0.8, 1.5, -0.25
    want = [x]
    for _ in range(30):
        v = m * v + eta * lam * x
        x = x + v
        want.append(x)
    res = simulate(momentum(), [1.5, -0.25], 30, convention="backward", lam=lam, m=m, eta=eta)
    np.testing.assert_allclose(res.values, want, rtol=1e-13)
    assert "v_0 = x_0 - x_{-1}" in str(res)
    fin = simulate(momentum(), [1.5, -0.25], 30, convention="backward", full=False, lam=lam, m=m, eta=eta)
    assert fin.values is None and fin.final == pytest.approx(want[-1], rel=1e-13)


# -------------------------------------------------------------------- overflow
def _first_layer_over(base: int, threshold: int) -> int:
    """Smallest l with x_l = base**(l-1) > threshold (x_0 = x_1 = 1, x_{l+1} = base x_l)."""
    layer = 1
    while base ** (layer - 1) <= threshold:
        layer += 1
    return layer


def test_overflow_reported_not_returned():
    coeffs = np.array([[1.0, -0.5, 0.0], [1.0, -3.0, 0.0], [1.0, -4.0, 0.0], [1.0, 0.5, 0.0]])
    init = np.ones((4, 2))
    with pytest.raises(SimulationOverflowError) as info:
        trajectory(coeffs, init, 2000)
    rep = info.value.report
    assert rep.layer == _first_layer_over(4, 10**300)  # 4^l crosses first
    assert (rep.count, rep.total, rep.indices) == (1, 4, ((2,),))
    assert isinstance(info.value, DepthdynError) and isinstance(info.value, ArithmeticError)
    assert "layer" in str(info.value) and "(2,)" in str(info.value)
    with pytest.raises(SimulationOverflowError) as info:
        final_state(coeffs, init, 2000)
    rep = info.value.report
    assert rep.layer == _first_layer_over(4, 10**300)
    assert (rep.count, rep.total, rep.indices) == (2, 4, ((1,), (2,)))


def test_overflow_threshold_and_pickling():
    with pytest.raises(SimulationOverflowError) as info:
        trajectory(np.array([1.0, -3.0, 0.0]), [1.0, 1.0], 100, threshold=1e6)
    assert info.value.report.layer == _first_layer_over(3, 10**6)
    err = pickle.loads(pickle.dumps(info.value))
    assert err.report == info.value.report and str(err) == str(info.value)
    assert isinstance(OverflowReport(1, 1, 1, ((0,),), 1.0).__str__(), str)


def test_nan_input_and_bad_shapes():
    with pytest.raises(ParameterError, match="NaN"):
        final_state([1.0, np.nan, 0.5], [1.0, 1.0], 5)
    with pytest.raises(ShapeError, match="init"):
        trajectory([1.0, -1.0, 0.5], [1.0, 1.0, 1.0], 5)
    with pytest.raises(ShapeError, match="broadcast"):
        trajectory(np.ones((3, 3)), np.ones((4, 2)), 5)
    with pytest.raises(ParameterError, match="non-negative"):
        trajectory([1.0, -1.0], [1.0], -1)
    with pytest.raises(ShapeError, match="out"):
        trajectory([1.0, -1.0], [1.0], 3, out=np.empty(3))


# ------------------------------------------------------------- nonlinear blocks
def test_nonlinear_momentum_with_linear_block_equals_linear_simulation():
    rng = np.random.default_rng(3)
    lam = rng.uniform(-3.0, 0.0, 500)
    m = rng.uniform(0.0, 0.9, 500)
    x0, v0 = rng.uniform(-1, 1, 500), rng.uniform(-1, 1, 500)
    L = 300
    block = simulate_block("momentum", lambda x: lam * x, x0, L, m=m, eta=0.9, v0=v0)
    linear = simulate(momentum(), np.stack([x0, v0], -1), L, convention="backward", lam=lam, m=m, eta=0.9)
    scale = np.abs(linear.values).max(axis=0)
    assert np.all(np.abs(block.values - linear.values) <= 1e-12 * scale)


@pytest.mark.parametrize("k", [2, 3])
def test_nonlinear_smooth_and_dense_with_linear_block(k):
    lam, h = np.array([-0.5, 0.3, -2.0]), 0.25
    x0 = np.array([1.0, -0.5, 2.0])
    for fam, factory in (("smooth", smooth), ("dense", dense)):
        block = simulate_block(fam, lambda x: lam * x, x0, 40, k=k, h=h)  # history: x_-j = x_0
        init = np.repeat(x0[:, None], k, axis=1)  # x_{-(k-1)} .. x_0, all equal to x_0
        want = simulate(factory(k=k), init, 40 + k - 1, lam=lam, h=h).values[k - 1:]
        np.testing.assert_allclose(block.values, want, rtol=1e-11, atol=1e-12 * np.abs(want).max())


def test_nonlinear_matrix_blocks_with_linear_block():
    G = np.array([[0.75, 0.25], [0.25, 0.75]])  # uniform entanglement gamma = 1/2, n = 2
    x0 = np.array([[1.0, -2.0]])
    block = simulate_block("entangled", lambda x: -0.2 * x, x0, 15, Gamma=G)
    lin = simulate(entangled(), x0[:, None, :], 15, lam=-0.2, gamma=0.5)
    np.testing.assert_allclose(block.values, lin.values, rtol=1e-13)
    Hres, pre, post = np.array([[0.7, 0.3], [0.3, 0.7]]), np.array([0.5, 1.5]), np.array([1.0, -0.5])
    X0 = np.array([[1.0], [2.0]])  # 2 streams, 1 channel
    block = simulate_block("hyper_connection", lambda y: 0.4 * y, X0, 10, H_res=Hres, H_pre=pre, H_post=post)
    lin = simulate(hyper_connection(), X0[None, :, 0], 10, lam=0.4, hres_1_1=0.7, hpre_1=0.5, hpre_2=1.5,
                   hpost_1=1.0, hpost_2=-0.5)
    np.testing.assert_allclose(block.values[..., 0], lin.values, rtol=1e-13)


def test_nonlinear_first_order_blocks_and_errors():
    x0 = np.array([0.5, -1.0])
    f = np.tanh
    res = simulate_block("highway", f, x0, 3, g=0.25)
    x = x0
    for _ in range(3):
        x = 0.75 * x + 0.25 * np.tanh(x)
    np.testing.assert_allclose(res.final, x, rtol=1e-15)
    with pytest.raises(DomainError, match="m"):
        simulate_block("momentum", f, x0, 3, m=1.0, eta=1.0)
    with pytest.raises(ParameterError, match="missing"):
        simulate_block("momentum", f, x0, 3, m=0.5)
    with pytest.raises(ParameterError, match="unknown block family"):
        simulate_block("transformer", f, x0, 3)
    with pytest.raises(ShapeError, match="shape"):
        simulate_block("residual", lambda x: x[:1], x0, 3)
    with pytest.raises(SimulationOverflowError) as info:
        simulate_block("residual", lambda x: x * x, np.array([0.5, 3.0]), 50)
    assert info.value.report.indices == ((1,),)
