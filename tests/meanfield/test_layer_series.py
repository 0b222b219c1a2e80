"""A kernel layer's fast Hermite paths: one variance's record, the asymptote cut, the pairs of lags.

References, none of them the code under test: nested QUADPACK (``reference_quadrature``) of
``E[phi^2]``, ``E[phi(u1) phi(u2)]`` and (for the difference near ``c = 1``) Price's expansion in
one-variable integrals; mpmath at 40 digits for the asymptotes' bounds and coefficients and for
erf's arcsine kernel (Williams 1997); and the recurrence of a dense network written out in the test with every
pair of lags integrated by QUADPACK.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from reference_quadrature import expect1, expect2

from depthdyn.meanfield import branch, get_activation, layer_series, mehler, smooth
from depthdyn.meanfield.activation import Activation
from depthdyn.meanfield.kernels import iterate_family, kernel_spec


def _fresh():
    mehler._cache.clear()
    mehler._joined.clear()
    layer_series._cache.clear()
    branch._memo.clear()


def _difference_reference(q: float, eps: float) -> float:
    """``E[tanh(u)^2] - E[tanh(u1) tanh(u2)]``: nested quadrature, or Price's expansion for a tiny ``eps``."""
    if eps < 1e-6:
        d1 = expect1(lambda x: (1 - math.tanh(x) ** 2) ** 2, q)
        d2 = expect1(lambda x: (2 * math.tanh(x) * (1 - math.tanh(x) ** 2)) ** 2, q)
        return q * eps * d1 - (q * eps) ** 2 / 2 * d2
    return expect1(lambda x: math.tanh(x) ** 2, q) - expect2(math.tanh, math.tanh, q, q, 1 - eps)


@pytest.mark.parametrize("q, eps", [(0.3, 0.7), (1.0, 0.25), (1.7, 1e-9), (2.2, 1.4), (30.0, 0.6),
                                    (500.0, 0.9), (5e3, 0.3), (1e5, 1.9)])
def test_one_variance_diagonal_against_quadrature(q, eps):
    act = get_activation("tanh")
    _fresh()
    second, second_ok, difference, difference_ok = layer_series.diagonal(act, q, eps, 1)
    assert second_ok and difference_ok
    assert second == pytest.approx(expect1(lambda x: math.tanh(x) ** 2, q), rel=1e-11, abs=0)
    assert difference == pytest.approx(_difference_reference(q, eps), rel=1e-10, abs=0)
    # the mutant: a correlation off by a part in 10^6 gives another difference moment
    shifted = layer_series.diagonal(act, q, eps * (1 + 1e-6), 1)[2]
    assert shifted != pytest.approx(difference, rel=1e-10, abs=0)


def _orders(act, x):
    """The orders of the records kept for ``act`` at variance ``x``."""
    return set(layer_series._cache.get(act, (1, x)) or ())


def test_more_terms_only_where_the_default_is_not_enough():
    act = get_activation("tanh")
    # q = 30, c = 0.96: 384 terms miss the bound (their tail), 768 or more meet it
    _fresh()
    second, second_ok, difference, ok = layer_series.diagonal(act, 30.0, 0.04, 1)
    assert ok and second_ok and max(_orders(act, 30.0)) > 384
    assert difference == pytest.approx(_difference_reference(30.0, 0.04), rel=1e-10, abs=0)
    # q = 10, c = 0.955: the criterion |rho|^N <= RTOL/100 asks for 768, but the default 384 is enough
    _fresh()
    assert mehler.rule.order_of(10.0, 0.955, more=True) > 384
    assert layer_series.diagonal(act, 10.0, 0.045, 1)[3] and _orders(act, 10.0) == {384}
    # a call after one that needed more starts there (the layers of a kernel move slowly)
    _fresh()
    layer_series.diagonal(act, 30.0, 0.04, 1)
    layer_series.diagonal(act, 10.0, 0.045, 1)
    assert max(_orders(act, 10.0)) > 384
    # the mutant: with the default alone the first point is not within its bound
    _fresh()
    assert not layer_series._diagonal(act, 30.0, 0.04, 1, 384)[3]


HALF = mp.mpf(1) / 2
# each activation with an asymptote at 40 digits: phi, phi', and its remainder written without cancellation
ASYMPTOTIC = {
    "tanh": (mp.tanh, lambda u: mp.sech(u) ** 2, lambda u: -2 / (mp.exp(2 * u) + 1)),
    "gelu_even_part": (lambda u: u * mp.ncdf(u) - u / 2, lambda u: mp.ncdf(u) + u * mp.npdf(u) - HALF,
                       lambda u: -u * mp.ncdf(-u)),
    "silu_even_part": (lambda u: u / (1 + mp.exp(-u)) - u / 2,
                       lambda u: 1 / (1 + mp.exp(-u)) + u * mp.exp(-u) / (1 + mp.exp(-u)) ** 2 - HALF,
                       lambda u: -u / (1 + mp.exp(u))),
    "softplus_even_part": (lambda u: mp.log(1 + mp.exp(u)) - u / 2, lambda u: 1 / (1 + mp.exp(-u)) - HALF,
                           lambda u: mp.log(1 + mp.exp(-u))),
}


def _asymptotic(name):
    return get_activation("tanh") if name == "tanh" else getattr(smooth, {
        "gelu_even_part": "GELUEvenPart", "silu_even_part": "SiLUEvenPart",
        "softplus_even_part": "SoftplusEvenPart"}[name])()


@pytest.mark.parametrize("name", sorted(ASYMPTOTIC))
def test_asymptote_bounds_hold(name):
    # |phi - limit - slope u| <= s and |phi' - slope| <= d for u >= U, at 40 digits (both decrease in u)
    act = _asymptotic(name)
    phi, dphi, rest = ASYMPTOTIC[name]
    U, limit, slope, s, d = act.phi_asymptote()
    with mp.workdps(40):
        for u in (0.5, 3.0, 9.0):  # the remainder's formula is phi's
            assert abs(rest(mp.mpf(u)) - (phi(mp.mpf(u)) - limit - slope * u)) < mp.mpf(10) ** -35
        for u in (U, U + 1e-9, U + 0.5, 2 * U, 700.0):
            assert abs(rest(mp.mpf(u))) <= s
            assert abs(dphi(mp.mpf(u)) - slope) <= d
        # the mutant: the bound one unit of u earlier does not hold
        assert abs(rest(mp.mpf(U - 1))) > s
        # the remainder as the activation computes it (scipy's erfc: 1e-13 relative in the far tail)
        u = np.array([0.0, 0.3, 2.0, 9.0, U - 1, U])
        want = [float(rest(mp.mpf(x))) for x in u]
        np.testing.assert_allclose(act.phi_remainder(u), want, rtol=2e-13, atol=1e-300)


@pytest.mark.parametrize("name", sorted(ASYMPTOTIC))
@pytest.mark.parametrize("q", [50.0, 5e3, 1e8])
def test_asymptote_and_remainder_give_the_full_rule(name, q):
    # the asymptote's exact coefficients plus the remainder's below U, against phi at every node
    cut, full = _asymptotic(name), _asymptotic(name)
    full.asymptote = None
    _fresh()
    levels = mehler.rule.levels(q)
    a, b = mehler._compute(cut, np.array([q]), 96, levels), mehler._compute(full, np.array([q]), 96, levels)
    assert np.all(np.abs(a.b - b.b) <= a.b_err + b.b_err)
    assert abs(a.m0[0] - b.m0[0]) <= a.m0_err[0] + b.m0_err[0]
    if name != "tanh" and q > 1e3:  # the point of it: a bound from the remainder's rounding, not phi's
        assert np.median(a.b_err) < np.median(b.b_err) / 100
    # the mutant: a limit or slope 1% off moves the coefficients far beyond the full rule's bounds
    U, limit, slope, s, d = cut.phi_asymptote()
    wrong = _asymptotic(name)
    wrong.asymptote = (U, 0.99 * limit, 0.99 * slope, s, d)
    _fresh()
    moved = mehler._compute(wrong, np.array([q]), 96, levels)
    assert np.any(np.abs(moved.b - b.b) > 1e3 * b.b_err)


@pytest.mark.parametrize("name", sorted(ASYMPTOTIC))
@pytest.mark.parametrize("q", [0.1, 2.0, 50.0, 5e3])
def test_projection_moments_against_quadpack(name, q):
    # E[phi^2] and q E[phi'^2] of every path (phi itself, phi - phi(0), the asymptote's remainder)
    act = _asymptotic(name)
    phi, dphi, _ = ASYMPTOTIC[name]
    p = layer_series.project_parity(act, q, 96, mehler.rule.levels(q), layer_series.parity_of(act))
    with mp.workdps(30):
        second = expect1(lambda x: float(phi(mp.mpf(x))) ** 2, q)
        slope2 = expect1(lambda x: float(dphi(mp.mpf(x))) ** 2, q)
    assert p.m0 == pytest.approx(second, rel=1e-12) and p.m0_lo == pytest.approx(second, rel=1e-9)
    assert p.m1 == pytest.approx(q * slope2, rel=1e-12) and p.m1_lo == pytest.approx(q * slope2, rel=1e-9)
    # the mutant: the slope's square at another variance
    assert p.m1 != pytest.approx(1.01 * q * slope2, rel=1e-6)


@pytest.mark.parametrize("q", [0.1, 2.0, 6.0])
def test_an_even_activation_with_a_constant_sums_the_rest(q):
    # softplus's even part is log 2 at 0: phi(0) is an exact coefficient and phi - phi(0) is summed
    act, full = smooth.SoftplusEvenPart(), smooth.SoftplusEvenPart()
    full.parity = None  # every node and degree, phi itself summed
    _fresh()
    levels = mehler.rule.levels(q)
    a, b = mehler._compute(act, np.array([q]), 96, levels), mehler._compute(full, np.array([q]), 96, levels)
    assert np.all(np.abs(a.b - b.b) <= a.b_err + b.b_err)
    assert abs(a.m0[0] - b.m0[0]) <= a.m0_err[0] + b.m0_err[0]
    if q < 1:  # where log 2 is most of phi: the rounding is the rest's
        assert np.median(a.b_err) < np.median(b.b_err) / 10
    # the difference moment at c = 1 - 1e-20: q eps E[phi'^2] to first order (Price), by QUADPACK
    eps = 1e-20
    second, second_ok, difference, ok = layer_series.diagonal(act, q, eps, 0)
    assert ok and second_ok
    slope2 = expect1(lambda x: (0.5 * math.tanh(0.5 * x)) ** 2, q)
    assert difference == pytest.approx(q * eps * slope2, rel=1e-10)

    class Shifted(smooth.SoftplusEvenPart):  # the mutant: a difference off by 1e-9
        def diff(self, u, h):
            return super().diff(u, h) + 1e-9

    _fresh()
    moved = mehler._compute(Shifted(), np.array([q]), 96, levels)
    assert np.any(np.abs(moved.b - b.b) > 1e3 * b.b_err)


@pytest.mark.parametrize("parity", [0, 1])
def test_asymptote_coefficients_against_mpmath(parity):
    # E[f(z) h_k(z)] of |z| (parity 0) and sign(z) (parity 1), by mpmath's quadrature at 40 digits
    got = mehler.rule.asymptote_coefficients(parity, 40)
    f = (lambda z: abs(z)) if parity == 0 else (lambda z: mp.sign(z))
    with mp.workdps(40):
        for i in (0, 1, 2, 7, 39):
            k = parity + 2 * i
            # 2 int_0^oo f(z) He_k(z) phi(z) dz / sqrt(k!) (f and He_k of the same parity)
            want = 2 * mp.quad(lambda z, k=k: f(z) * mp.hermite(k, z / mp.sqrt(2)) * 2 ** (-mp.mpf(k) / 2)
                               * mp.npdf(z), [0, 5, 10, 20, mp.inf]) / mp.sqrt(mp.factorial(k))
            assert abs(got[i] - float(want)) <= 2 * np.finfo(float).eps * abs(float(want)), (k, got[i], want)
    # the mutant: the other parity's function has other coefficients
    assert not np.allclose(got[:5], mehler.rule.asymptote_coefficients(1 - parity, 5), rtol=1e-3)


PAIRS = [(1.0, 1.0002, 0.9999), (1.3, 0.7, 0.5), (2.0, 1.5, -0.6), (0.4, 2.2, 0.0), (30.0, 25.0, 0.3)]


@pytest.mark.parametrize("order", [96, 192, 384])
def test_pairs_of_variances_against_quadrature(order):
    act = get_activation("tanh")
    _fresh()
    for q1, q2, rho in PAIRS:
        layer_series.layer_series(act, q1, 384, 1)  # a record of a higher order, cut to `order`
        values, _, ok = layer_series.cross_moments(act, [q1, q2], 1, order, [0, 1], [1, 0], [rho, rho])
        reference = expect2(math.tanh, math.tanh, q1, q2, rho)
        for value, good in zip(values, ok, strict=True):
            # accepted points are within 1e-12 of the scale E[phi^2] (<= 1), declined ones say so
            assert not good or abs(value - reference) <= 2e-12, (q1, q2, rho, order, value, reference)
        assert ok[0] == ok[1]
        if order == 384 and q1 < 3:
            assert ok[0]
    # the mutant: the wrong lag (the first variance twice) misses the reference
    values, _, _ = layer_series.cross_moments(act, [1.3, 0.7], 1, order, [0], [0], [0.5])
    assert abs(values[0] - expect2(math.tanh, math.tanh, 1.3, 0.7, 0.5)) > 1e-6


def _hermite(phi, q: float, n: int) -> float:
    """``E[phi(sqrt(q) z) h_n(z)]`` by QUADPACK (``h_n = He_n / sqrt(n!)``)."""
    coefficients = np.zeros(n + 1)
    coefficients[n] = 1.0 / math.sqrt(math.factorial(n))
    root = math.sqrt(q)
    return expect1(lambda u: phi(u) * float(np.polynomial.hermite_e.hermeval(u / root, coefficients)), q)


@pytest.mark.parametrize("q", [0.04, 1.0, 7.5])
def test_a_record_of_every_degree_against_quadrature(q):
    """SELU has neither parity: its record holds every degree, the even ones from ``(phi(u) + phi(-u)) / 2``
    and the odd ones from ``(phi(u) - phi(-u)) / 2``, each within its bound of QUADPACK."""
    act = get_activation("selu")
    _fresh()
    record = layer_series.layer_series(act, q, 96, layer_series.BOTH)
    b, bound = record.b, record.b_err
    assert b.size == 97 and record.base > 0
    for n in (0, 1, 2, 3, 6, 11, 30):
        want = _hermite(_selu, q, n)
        assert abs(b[n] - want) <= bound[n] + 1e-15 and abs(b[n] - want) <= 1e-13, (q, n, b[n], want)
    second = expect1(lambda u: _selu(u) ** 2, q)
    assert abs(record.m0 - second) <= record.m0_err + 1e-15 * second
    # Parseval: the squares and the tail T0 make up E[phi^2]
    assert record.square_sum <= second <= record.square_sum + record.t0 + 1e-14
    # the mutant: the mirror image phi(-u) has the odd degrees' signs flipped
    mirror = layer_series._project_both(_Mirror(), q, 96, mehler.rule.levels(q))
    assert np.allclose(mirror.hi[0::2], b[0::2], rtol=1e-13, atol=1e-15)
    assert abs(mirror.hi[1] - _hermite(_selu, q, 1)) > 0.1 * abs(b[1])
    # q E[phi'^2] (the derivative's Parseval tail T1) from phi' at +-u, against QUADPACK
    lam, alpha = smooth.SELU.SCALE, smooth.SELU.ALPHA
    slope = q * expect1(lambda u: (lam if u > 0 else lam * alpha * math.exp(u)) ** 2, q)
    level = mehler.rule.levels(q)
    m1, m1_lo, _ = layer_series.derivative_square(act, q, level, layer_series.BOTH)
    assert abs(m1 - slope) <= abs(m1 - m1_lo) + 1e-13 * slope and abs(m1 - m1_lo) <= 1e-12 * slope
    # the mutant: a variance off by a part in 10^3 leaves the reference
    moved = layer_series.derivative_square(act, q * 1.001, level, layer_series.BOTH)[0]
    assert abs(moved - slope) > 1e-5 * slope


class _Mirror(smooth.SELU):
    """``selu(-u)``: the mutant of the records of every degree."""

    def phi(self, u):
        return super().phi(-u)


class _Cubic(Activation):
    """``u^3 / 6 + u^2 / 2 + u``: neither parity, and Hermite coefficients in closed form."""

    def phi(self, u):
        return u * (1.0 + u * (0.5 + u / 6.0))


class _Swapped(_Cubic):
    """The mutant: ``phi(-u)`` and ``phi(u)`` handed over in each other's place (``mirrored`` is taken from
    the class that defines ``phi``)."""

    def phi(self, u):
        return super().phi(u)

    def mirrored(self, v):
        return self.phi(np.multiply.outer([-1.0, 1.0], v))


@pytest.mark.parametrize("x", [0.04, 1.0, 3.0, 9.0])
def test_every_degree_of_a_cubic_exactly(x):
    """``phi(a z)`` with ``a = sqrt(x)`` is
    ``a^2 / 2 + (a + a^3 / 2) h_1 + (a^2 / sqrt 2) h_2 + (a^3 / sqrt 6) h_3`` (``z^2 = sqrt 2 h_2 + 1``,
    ``z^3 = sqrt 6 h_3 + 3 h_1``): both rules give it, degree by degree, from ``phi`` at ``+-u`` (each rule
    is exact on polynomials of low degree)."""
    a = math.sqrt(x)
    want = np.zeros(49)
    want[:4] = [a * a / 2, a + a**3 / 2, a * a / math.sqrt(2), a**3 / math.sqrt(6)]
    level = mehler.rule.levels(x)
    p = layer_series._project_both(_Cubic(), x, 48, level)
    scale = float(np.abs(want).max())
    for coefficients in (p.hi, p.lo):
        assert np.abs(coefficients - want).max() <= 1e-13 * scale
    assert p.m0 == pytest.approx(float(want @ want), rel=1e-13) and p.m0_lo == pytest.approx(p.m0, rel=1e-13)
    swapped = layer_series._project_both(_Swapped(), x, 48, level)
    assert np.allclose(swapped.hi[0::2], want[0::2], rtol=0, atol=1e-13 * scale)
    assert abs(swapped.hi[1] + want[1]) <= 1e-13 * scale  # the odd degrees' signs flipped


def test_selu_on_both_half_lines_as_its_phi():
    """SELU's ``phi(v), phi(-v)`` from the line and the exponential alone, bit for bit as ``phi`` at ``+-v``;
    a subclass that redefines ``phi`` does not inherit them."""
    v = np.concatenate([[0.0, 1e-300, 1e-8], np.linspace(0.01, 40.0, 997), [800.0]])
    act = get_activation("selu")
    assert np.array_equal(act.phi_mirrored(v), act.phi(np.multiply.outer([1.0, -1.0], v)))
    mirror = _Mirror()
    assert np.array_equal(mirror.phi_mirrored(v), act.phi(np.multiply.outer([-1.0, 1.0], v)))


@pytest.mark.parametrize("q1, q2, rho", [(1.3, 1.2, 0.6), (0.5, 2.0, -0.4), (3.0, 2.5, 0.85),
                                         (0.2, 0.3, 0.0)])
def test_pairs_of_a_record_of_every_degree_against_quadrature(q1, q2, rho):
    act = get_activation("selu")
    _fresh()
    values, errors, ok = layer_series.cross_moments(act, [q1, q2], layer_series.BOTH, 192, [0, 1], [1, 0],
                                                    [rho, rho])
    reference = expect2(_selu, _selu, q1, q2, rho)
    assert ok == [True, True]
    for value, error in zip(values, errors, strict=True):
        miss = abs(value - reference)
        assert miss <= error + 1e-14 and miss <= 1e-12 * abs(reference) + 1e-15
    # the same through the full-line series (mehler), another set of tables and nodes
    full, _, full_ok = mehler.cross_moment(act, np.array([q1]), np.array([q2]), np.array([rho]))
    assert full_ok[0] and abs(full[0] - values[0]) <= 1e-14
    # the mutant: a correlation off by a part in 10^6 leaves the reference
    moved = layer_series.cross_moments(act, [q1, q2], layer_series.BOTH, 192, [0], [1],
                                       [rho + 1e-6 * (rho or 1)])
    assert abs(moved[0][0] - reference) > 1e-10


def _dense_reference(phi, spec, P, D, sw2, sb2):
    """One dense layer, every pair of lags by nested quadrature: P' = C P C^T + e e^T sum_ij G."""
    k = spec.k
    q = np.diag(P)
    S = P - D / 2
    sum_p = sum_d = 0.0
    for i in range(k):
        for j in range(k):
            root = math.sqrt(q[i] * q[j])
            m_p = expect2(phi, phi, q[i], q[j], min(P[i, j] / root, 1.0))
            m_s = expect2(phi, phi, q[i], q[j], min(S[i, j] / root, 1.0))
            sum_p += sw2 * m_p + sb2
            sum_d += 2 * sw2 * (m_p - m_s)
    return spec.C @ P @ spec.C.T + sum_p * spec.ee, spec.C @ D @ spec.C.T + sum_d * spec.ee


def _selu(u: float) -> float:
    lam, alpha = smooth.SELU.SCALE, smooth.SELU.ALPHA
    return lam * u if u > 0 else lam * alpha * math.expm1(u)


@pytest.mark.parametrize("name, phi", [("tanh", math.tanh), ("erf", math.erf), ("selu", _selu)])
def test_dense_layers_recall_and_agree_with_quadrature(name, phi, monkeypatch):
    sw2, sb2 = 0.9, 0.05
    spec = kernel_spec("dense", depth=5, sw2=sw2, sb2=sb2, k=2, h=0.4)
    _fresh()
    both = []  # SELU (neither parity) takes the records of every degree
    project = layer_series._project_both
    monkeypatch.setattr(layer_series, "_project_both", lambda *a: both.append(a[1]) or project(*a))
    traj = iterate_family(name, sw2, sb2, depth=5, q0=1.3, eps0=0.6, family="dense", k=2, h=0.4)
    assert bool(both) == (name == "selu")
    for layer in (1, 3, 4):  # by then the older lag's pairs are recalled from the layer before
        P, D = _dense_reference(phi, spec, traj.P[layer], traj.D[layer], sw2, sb2)
        assert np.allclose(traj.P[layer + 1], P, rtol=1e-11, atol=0)
        assert np.allclose(traj.D[layer + 1], D, rtol=1e-11, atol=0)
    # recalled moments give the same bits as computed ones
    _fresh()
    again = iterate_family(name, sw2, sb2, depth=5, q0=1.3, eps0=0.6, family="dense", k=2, h=0.4)
    assert np.array_equal(again.P, traj.P) and np.array_equal(again.D, traj.D)
    # the mutant: the layer built from the lags one layer late does not agree
    P, _ = _dense_reference(phi, spec, traj.P[2], traj.D[2], sw2, sb2)
    assert not np.allclose(traj.P[4], P, rtol=1e-11, atol=0)


@pytest.mark.parametrize("name, phi, q", [("tanh", math.tanh, 0.5), ("tanh", math.tanh, 3.4),
                                         ("tanh", math.tanh, 7.5), ("selu", _selu, 2.0), ("gelu", None, 3.0)])
def test_records_to_degree_48_on_wider_panels_against_quadrature(name, phi, q):
    """Up to degree 48 the records take panels twice as wide (half the nodes), and up to 96 where
    ``q <= WIDE_Q``: every coefficient within its bound of QUADPACK, and of a record of a higher degree."""
    act = get_activation(name)
    inner = getattr(act, "inner", act)  # GELU: its even part
    if phi is None:
        phi = lambda u: 0.5 * u * math.erf(u / math.sqrt(2.0))  # noqa: E731
    odd = layer_series.parity_of(inner)
    odd = layer_series.BOTH if odd is None else odd
    _fresh()
    coarse, fine = (layer_series._compute(inner, q, order, odd) for order in (48, 96))
    parity, rows = (0, 25) if odd == layer_series.BOTH else (odd, layer_series.rows_of(48, odd))
    level = mehler.rule.levels(q)
    nodes = mehler.rule.parity_rule(level, parity, rows).z.size
    assert nodes < 0.6 * mehler.rule.parity_rule(level, 0, 49).z.size  # degree 48 on the wider panels
    degrees = range(48 + 1) if odd == layer_series.BOTH else range(odd, 48 + 1, 2)
    for i, n in enumerate(degrees):
        assert abs(coarse.b[i] - fine.b[i]) <= coarse.b_err[i] + fine.b_err[i], (n, coarse.b[i], fine.b[i])
        if n in (0, 1, 2, 7, 20, 47, 48):
            want = _hermite(phi, q, n)
            assert abs(coarse.b[i] - want) <= coarse.b_err[i] + 1e-15, (n, coarse.b[i], want)
    # up to degree 96 too where q <= WIDE_Q: against the record of degree 192 on the usual panels
    wide, finer = (layer_series._compute(inner, q, order, odd) for order in (96, 192))
    rows96 = 49 if odd == layer_series.BOTH else layer_series.rows_of(96, odd)
    wide_nodes = mehler.rule.parity_rule(level, parity, rows96, q <= mehler.rule.WIDE_Q).z.size
    assert (q <= mehler.rule.WIDE_Q) == (wide_nodes == nodes)
    n = wide.b.size
    assert np.all(np.abs(wide.b - finer.b[:n]) <= wide.b_err + finer.b_err[:n])
    # the mutant: the coefficients of another variance are not within the bounds
    other = layer_series._compute(inner, q * (1 + 1e-6), 48, odd)
    assert np.any(np.abs(other.b - coarse.b) > coarse.b_err + other.b_err)


def _williams(q1: float, q2: float, c: float) -> mp.mpf:
    """Williams' arcsine kernel ``(2/pi) asin(2 c sqrt(q1 q2) / sqrt((1 + 2 q1)(1 + 2 q2)))`` at 40 digits."""
    with mp.workdps(40):
        q1, q2, c = mp.mpf(q1), mp.mpf(q2), mp.mpf(c)
        return 2 / mp.pi * mp.asin(2 * c * mp.sqrt(q1 * q2) / mp.sqrt((1 + 2 * q1) * (1 + 2 * q2)))


def test_erf_pair_moment_is_the_arcsine_kernel():
    act = get_activation("erf")
    rng = np.random.default_rng(11)
    for _ in range(300):
        q1, q2 = (10 ** rng.uniform(-6, 6, 2)).tolist()
        eps = float(rng.choice([0.0, 1e-13, 1e-7, rng.uniform(0, 2), 1.0, 2.0]))
        value = act.pair_moment(q1, q2, eps)
        with mp.workdps(40):
            expected = _williams(q1, q2, 1 - mp.mpf(eps))
        # the closed forms' documented rounding bound: 32 ulp of the scale 1
        assert abs(value - float(expected)) <= 32 * np.finfo(float).eps
        assert abs(value - float(act.cross_moment(q1, q2, eps=eps))) <= 32 * np.finfo(float).eps
    # the mutant: the correlation's sign flipped
    assert act.pair_moment(1.0, 2.0, 0.3) != pytest.approx(float(_williams(1.0, 2.0, -0.7)), rel=1e-6)


class _TanhSquared(type(get_activation("tanh"))):
    """``tanh(u)^2``: even, levels off at 1 (``1 - tanh^2 = sech^2 <= 4 exp(-2u)``)."""

    name, parity, growth = "tanh^2", "even", (1.0, 0.0, 1.0)
    asymptote = (20.0, 1.0, 0.0, 2e-17, 4e-17)

    def phi(self, u):
        return np.tanh(u) ** 2

    def dphi(self, u):
        return 2 * np.tanh(u) / np.cosh(u) ** 2


def _tanh2(x):
    return math.tanh(x) ** 2


@pytest.mark.parametrize("q, eps", [(0.5, 0.6), (0.4, 1e-8), (12.0, 0.5), (40.0, 1.3)])
def test_an_even_activation_keeps_its_degree_zero(q, eps):
    act = _TanhSquared()
    assert act.phi_parity() == "even" and layer_series.parity_of(act) == 0
    _fresh()
    second, second_ok, difference, difference_ok = layer_series.diagonal(act, q, eps, 0)
    expected_second = expect1(lambda x: _tanh2(x) ** 2, q)
    assert second_ok and second == pytest.approx(expected_second, rel=1e-11, abs=0)
    if eps < 1e-6:  # Price's expansion, phi' = 2 tanh sech^2, phi'' = 2 sech^2 (1 - 3 tanh^2)
        d1 = expect1(lambda x: (2 * math.tanh(x) / math.cosh(x) ** 2) ** 2, q)
        d2 = expect1(lambda x: (2 / math.cosh(x) ** 2 * (1 - 3 * math.tanh(x) ** 2)) ** 2, q)
        expected = q * eps * d1 - (q * eps) ** 2 / 2 * d2
    else:
        expected = expected_second - expect2(_tanh2, _tanh2, q, q, 1 - eps)
    assert difference_ok and difference == pytest.approx(expected, rel=1e-10, abs=0)
    values, _, ok = layer_series.cross_moments(act, [q, 0.8 * q], 0, 96, [0], [1], [1 - eps / 2])
    if ok[0]:
        assert abs(values[0] - expect2(_tanh2, _tanh2, q, 0.8 * q, 1 - eps / 2)) <= 2e-12
    # the mutant: declared odd, the even coefficients (all there are) are lost
    act.parity = "odd"
    _fresh()
    assert layer_series.diagonal(act, q, eps, 1)[2] != pytest.approx(expected, rel=1e-6)


def test_a_dense_layer_takes_the_order_its_tails_need():
    """The order of a dense layer's pairs comes from an older lag's record: the least tier whose tail
    ``|rho|^(N+1) T0(N)`` is a hundredth of the tolerance, not ``|rho|^N`` alone; the trajectory is the
    one at the order ``|rho|^N`` asks for, within the moments' bounds."""
    act = get_activation("softplus").inner
    _fresh()
    layer_series.layer_series(act, 2.0, 192, 0)
    # softplus's even part falls fast at q = 2: 48 terms where |rho|^N alone asks for 192
    assert mehler.rule.order_of(2.0, 0.8, more=True) == 192
    assert layer_series.least_order(act, 2.0, 0, 0.8, 192) == 48
    # the mutants: no record kept, a correlation near 1, a kinked activation's slow tail
    assert layer_series.least_order(act, 2.1, 0, 0.8, 192) == 192
    assert layer_series.least_order(act, 2.0, 0, 0.99999, 192) > 48
    selu = get_activation("selu")
    layer_series.layer_series(selu, 2.0, 192, layer_series.BOTH)
    assert layer_series.least_order(selu, 2.0, layer_series.BOTH, 0.8, 192) == 192
    # the kernel against the one whose pairs take the order |rho|^N asks for
    for name in ("softplus", "selu", "tanh"):
        _fresh()
        fast = iterate_family(name, 1.0, 0.05, depth=300, q0=1.0, c0=0.3, family="dense", k=3, h=0.01)
        _fresh()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(layer_series, "least_order", lambda act, x, odd, rho, order: order)
            full = iterate_family(name, 1.0, 0.05, depth=300, q0=1.0, c0=0.3, family="dense", k=3, h=0.01)
        np.testing.assert_allclose(fast.P, full.P, rtol=1e-12, atol=0)
        np.testing.assert_allclose(fast.D, full.D, rtol=1e-11, atol=0)


def test_a_dense_layer_whose_tails_are_not_as_small_takes_the_full_order(monkeypatch):
    """Where the order from an older lag's tail is too low for the new lag, the layer asks again at the
    order ``|rho|^N`` asks for, and the trajectory is that order's."""
    calls = []
    cross = layer_series.cross_moments

    def counted(act, q, odd, order, i, j, rho):
        out = cross(act, q, odd, order, i, j, rho)
        calls.append((order, all(out[2])))
        return out

    _fresh()
    full = iterate_family("tanh", 1.0, 0.05, depth=40, q0=6.0, c0=0.3, family="dense", k=3, h=0.3)
    _fresh()
    monkeypatch.setattr(layer_series, "least_order", lambda act, x, odd, rho, order: 48)
    monkeypatch.setattr(layer_series, "cross_moments", counted)
    low = iterate_family("tanh", 1.0, 0.05, depth=40, q0=6.0, c0=0.3, family="dense", k=3, h=0.3)
    # the guess of 48 terms misses at q = 6 (tanh's poles near the real line), and the next call of the
    # same layer takes the full order
    retried = [k for k, (order, good) in enumerate(calls[:-1]) if order == 48 and not good]
    assert retried and all(calls[k + 1][0] > 48 for k in retried)
    np.testing.assert_allclose(low.P, full.P, rtol=1e-12, atol=0)
    np.testing.assert_allclose(low.D, full.D, rtol=1e-11, atol=0)


def _log_cosh(u: float) -> float:
    """softplus's even part ``log(2 cosh(u / 2))``."""
    a = abs(u)
    return 0.5 * a + math.log1p(math.exp(-a))


def test_a_lags_own_difference_from_the_far_sum(monkeypatch):
    """A dense layer's new lag: ``E[psi^2] - sum b_n^2 rho^n`` from the sum its pairs already took, bounded
    by that sum's bound (its rounding included), ``E[psi^2]``'s and the subtraction's rounding. At
    softplus's even part, ``q = 1.3``, ``1 - c = 0.7`` (a dense network's early layers) that is within the
    tolerance: no second sum is taken; at ``q = 1``, ``1 - c = 0.3`` it is not, and the one-variance path
    takes it. Both meet QUADPACK."""
    act = get_activation("softplus").inner
    fallback = []
    single = branch._single_diagonal
    monkeypatch.setattr(branch, "_single_diagonal", lambda *a: fallback.append(a) or single(*a))
    for x, eps, far in ((1.3, 0.7, True), (1.0, 0.3, False)):
        want_second = expect1(lambda u: _log_cosh(u) ** 2, x)
        want = want_second - expect2(_log_cosh, _log_cosh, x, x, 1 - eps)
        for moved in (1.0, 1 + 1e-9):  # the mutant: a correlation moved by a part in 10^9 is seen
            _fresh()
            fallback.clear()
            q, P, D = [x, 1.2], [[x, 0.9], [0.9, 1.2]], [[2 * eps * moved * x, 1.0], [1.0, 1.5]]
            _, [(second, difference)] = branch._new_moments(act, q, P, D, [(0, 1)], [0])
            assert (not fallback) == far
            assert second == pytest.approx(want_second, rel=1e-13)
            if moved == 1.0:
                assert difference == pytest.approx(want, rel=1e-12, abs=0)
            else:
                assert difference != pytest.approx(want, rel=1e-10, abs=0)
