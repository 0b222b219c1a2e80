"""The kernel recurrences' layer loop, checked against the Gaussian integrals done independently.

``iterate_family`` runs most families with the branch input's numbers as Python floats, tanh's
Hermite coefficients on half the quadrature nodes (tanh is odd) and erf's diagonal moments from
scalar formulas. References, none of them that code: nested QUADPACK quadrature of
``E[phi^2]`` and ``E[phi(u1) phi(u2)]`` (``reference_quadrature``) applied to the recurrence
``P' = C P C^T + e e^T (sw2 E[phi^2] + sb2)``, ``D' = C D C^T + 2 sw2 e e^T (E[phi^2] - E[phi phi])``
written out here; the library's generic step ``kernel_step`` iterated by a loop of the test's own
(with its own stopping rule); and, for the half-node rule, the full rule with no parity declared.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from reference_quadrature import expect1, expect2

from depthdyn.errors import DomainError
from depthdyn.meanfield import branch, get_activation, hermite_rule, layer_series, mehler
from depthdyn.meanfield.kernels import LN_EPS, iterate_family, kernel_spec, kernel_step, resolve_activation

SW2, SB2 = 0.9, 0.05
CASES = [
    ("residual", {"h": 0.5}),
    ("full_residual", {"h": 0.5, "sv2": 1.2, "sa2": 0.02}),
    ("residual", {"h": 0.5, "norm": "pre"}),
    ("weighted", {"a": 0.8, "norm": "post"}),
    ("momentum", {"m": 0.5, "h": 0.5}),
    ("hyper_connection", {"n": 3, "h": 0.4, "H_pre": [0.5, 0.3, 0.2]}),
]


def _reference_layer(phi, spec, P, D):
    """One layer of the recurrence with every Gaussian integral by nested adaptive quadrature."""
    R = spec.R
    q, d = float((R @ P @ R.T)[0, 0]), float((R @ D @ R.T)[0, 0])
    if spec.norm == "pre":
        q, d = q / (q + LN_EPS), d / (q + LN_EPS)
    gain2, bias2 = SW2, SB2
    if spec.branch == "two":
        q, d, gain2, bias2 = SW2 * q + SB2, SW2 * d, spec.sv2, spec.sa2
    c = 1 - d / (2 * q)
    second = expect1(lambda x: phi(x) ** 2, q)
    cross = expect2(phi, phi, q, q, c)
    P = spec.C @ P @ spec.C.T + (gain2 * second + bias2) * spec.ee
    D = spec.C @ D @ spec.C.T + 2 * gain2 * (second - cross) * spec.ee
    if spec.norm == "post":
        P, D = P / (P[0, 0] + LN_EPS), D / (P[0, 0] + LN_EPS)
    return P, D


def _agrees(traj, phi, spec, layers, rtol):
    for layer in layers:
        P, D = _reference_layer(phi, spec, traj.P[layer], traj.D[layer])
        if not (np.allclose(traj.P[layer + 1], P, rtol=rtol, atol=0)
                and np.allclose(traj.D[layer + 1], D, rtol=rtol, atol=1e-300)):
            return False
    return True


@pytest.mark.parametrize("family, params", CASES)
@pytest.mark.parametrize("name, phi", [("tanh", math.tanh), ("erf", math.erf)])
def test_layers_agree_with_quadrature_of_the_recurrence(family, params, name, phi):
    spec = kernel_spec(family, depth=6, sw2=SW2, sb2=SB2, **params)
    traj = iterate_family(name, SW2, SB2, depth=6, q0=1.3, eps0=0.6, family=family, **params)
    assert traj.stopped_at is None
    # each layer from the one before it: the moments are certified to 1e-12 relative
    assert _agrees(traj, phi, spec, (0, 2, 5), rtol=1e-11)
    # the mutant: the same layers under a bias variance 1e-9 larger fall outside that tolerance
    shifted = iterate_family(name, SW2, SB2 * (1 + 1e-8), depth=6, q0=1.3, eps0=0.6, family=family, **params)
    assert not _agrees(shifted, phi, spec, (2, 5), rtol=1e-11)


def _stepped(act, family, params, depth, q_min, q_max, sw2=SW2, sb2=SB2):
    """The test's own layer loop: ``kernel_step`` until a variance leaves ``[q_min, q_max]``, in the basis
    the family is iterated in (``KernelSpec.iterated``), its states taken back to the spec's own."""
    spec, back = kernel_spec(family, depth=depth, sw2=sw2, sb2=sb2, **params).iterated
    Ps, Ds, stopped = _stepped_in(act, spec, depth, q_min, q_max, sw2, sb2)
    return (Ps, Ds, stopped) if back is None else (back @ Ps @ back.T, back @ Ds @ back.T, stopped)


def _stepped_in(act, spec, depth, q_min, q_max, sw2, sb2):
    P = 1.3 * spec.P0
    D = 2 * 0.6 * P
    Ps, Ds = [P], [D]
    for layer in range(depth):
        q = np.diag(spec.branch_inputs(P))
        if spec.norm != "pre" and not (q_min <= q.min() and q.max() <= q_max):
            return np.array(Ps), np.array(Ds), layer
        P, D, _ = kernel_step(act, spec, sw2, sb2, P, D)
        Ps.append(P)
        Ds.append(D)
        if spec.norm == "pre" and P[0, 0] > q_max:
            return np.array(Ps), np.array(Ds), layer + 1
    return np.array(Ps), np.array(Ds), None


def _fresh():
    """Forget the Hermite records and the branch's recalled moments: a variance met again reuses whatever
    order it was computed at (a value within the bound, not always the same bits), so two runs compared
    bit for bit start alike."""
    mehler._cache.clear()
    mehler._joined.clear()
    layer_series._cache.clear()
    branch._memo.clear()


MORE = [("smooth", {"k": 3, "h": 0.3}), ("dense", {"k": 3, "h": 0.3}), ("plain", {}), ("rezero", {"a": 0.5})]


@pytest.mark.parametrize("family, params", CASES + MORE)
@pytest.mark.parametrize("name", ["tanh", "erf", "relu"])
def test_layer_loop_is_kernel_step_iterated(family, params, name):
    act = resolve_activation(name)
    _fresh()
    traj = iterate_family(act, SW2, SB2, depth=40, q0=1.3, eps0=0.6, family=family, **params)
    _fresh()
    P, D, stopped = _stepped(act, family, params, 40, 1e-8, 1e8)
    assert traj.stopped_at == stopped
    assert np.array_equal(traj.P, P) and np.array_equal(traj.D, D)
    # the mutant: the step's states one layer late
    assert not np.array_equal(traj.P[1:], P[:-1])


@pytest.mark.parametrize("family, params, q_min, q_max", [
    ("residual", {"h": 2.0}, 1e-8, 50.0),  # exploding: q passes q_max
    ("momentum", {"m": 0.5, "h": 2.0}, 1e-8, 50.0),
    ("plain", {}, 0.6, 1e8),  # vanishing under sw2 < 1: q falls below q_min
    ("residual", {"h": 2.0, "norm": "pre"}, 1e-8, 50.0),  # pre-LN: the new state's q passes q_max
])
def test_stopping_is_the_same_as_the_steps(family, params, q_min, q_max):
    act = resolve_activation("tanh")
    sw2, sb2 = (0.3, 0.0) if family == "plain" else (SW2, SB2)
    _fresh()
    traj = iterate_family(act, sw2, sb2, depth=200, q0=1.3, eps0=0.6, family=family, q_min=q_min, q_max=q_max,
                          **params)
    assert traj.stopped_at is not None and len(traj.q) == traj.stopped_at + 1
    assert ("vanishing" if family == "plain" else "exploding") in traj.reason
    assert np.all(np.isfinite(traj.P)) and np.all(np.isfinite(traj.D))
    _fresh()
    P, _, stopped = _stepped(act, family, params, 200, q_min, q_max, sw2, sb2)
    assert stopped == traj.stopped_at and np.array_equal(P, traj.P)
    # the mutant: bounds a hundred times wider stop elsewhere
    wider = iterate_family(act, sw2, sb2, depth=200, q0=1.3, eps0=0.6, family=family, q_min=q_min / 100,
                           q_max=q_max * 100, **params)
    assert wider.stopped_at != traj.stopped_at


@pytest.mark.parametrize("q", [1e-6, 0.3, 1.5, 5.0, 50.0, 5e3, 1e8])
def test_half_node_rule_of_an_odd_activation_matches_the_full_rule(q):
    odd = get_activation("tanh")
    full = get_activation("tanh")
    full.parity = None  # no parity declared: every node, every degree
    x = np.array([q])
    levels = hermite_rule.levels(q)
    a, b = mehler._compute(odd, x, 96, levels), mehler._compute(full, x, 96, levels)
    assert np.all(np.abs(a.b - b.b) <= b.b_err) and np.all(a.b[:, ::2] == 0)
    assert abs(a.m0[0] - b.m0[0]) <= b.m0_err[0] and abs(a.t0[0] - b.t0[0]) <= 0.1 * b.t0[0] + 1e-18
    # the mutant: tanh declared even keeps the (vanishing) even degrees and loses the odd ones
    even = get_activation("tanh")
    even.parity = "even"
    wrong = mehler._compute(even, x, 96, levels)
    assert np.any(np.abs(wrong.b - b.b) > 1e3 * b.b_err)


@pytest.mark.parametrize("name", ["tanh", "selu"])  # one parity's record, and one of every degree
def test_scalar_diagonal_moments_are_the_array_ones(name):
    act = get_activation(name)
    rng = np.random.default_rng(3)
    q = np.concatenate([10 ** rng.uniform(-6, 8, 40), [0.0, 2.5]])
    eps = np.concatenate([rng.uniform(0, 2, 30), 10 ** rng.uniform(-14, -1, 12)])
    for x, e in zip(q.tolist(), eps.tolist(), strict=True):
        s, s_ok, d, d_ok = mehler.diagonal_moments_scalar(act, x, e)
        # two variances in one array call: the generic path, another matrix product
        S, S_ok, Dm, D_ok = mehler.diagonal_moments(act, np.array([x, x + 1.0]), np.array([e, e]))
        assert (s_ok, d_ok) == (bool(S_ok[0]), bool(D_ok[0]))
        assert s == pytest.approx(S[0], rel=1e-14, abs=1e-300)
        if d_ok:
            assert d == pytest.approx(Dm[0], rel=1e-13, abs=1e-300)
    # the mutant: the next variance's moments differ at that tolerance
    assert mehler.diagonal_moments_scalar(act, 1.5, 0.5)[2] != pytest.approx(
        mehler.diagonal_moments_scalar(act, 1.5 * (1 + 1e-12), 0.5)[2], rel=1e-14, abs=0)


def test_erf_layer_moments_are_its_array_formulas():
    act = get_activation("erf")
    rng = np.random.default_rng(5)
    for q in np.concatenate([10 ** rng.uniform(-9, 8, 200), [0.25, 1e-300]]).tolist():
        for e in (0.0, 1e-300, 1e-12, 0.3, 1.0, 1.7, 2.0, float(rng.uniform(0, 2))):
            second, difference = act.layer_moments(q, e)
            assert second == float(act.second_moment(np.array([q]))[0])
            assert difference == float(act.difference_moment(np.array([q]), eps=np.array([e]))[0])
    # the mutant: a neighbouring correlation
    assert act.layer_moments(1.0, 0.3)[1] != act.layer_moments(1.0, 0.3 * (1 + 1e-15))[1]


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "abs", "linear"])
def test_piecewise_linear_layer_and_pair_moments_are_its_array_formulas(name):
    """The one-point forms a kernel layer takes (Python floats) against the array methods, to a few ulp
    (``math``'s and NumPy's sine may differ in the last bit), and the pairs against QUADPACK."""
    act = get_activation(name)
    ulp = np.finfo(float).eps
    rng = np.random.default_rng(6)
    for q in np.concatenate([10 ** rng.uniform(-9, 8, 60), [0.25, 1e-300]]).tolist():
        for e in (0.0, 1e-300, 1e-12, 0.05, 0.3, 1.0, 1.7, 2.0, float(rng.uniform(0, 2))):
            second, difference = act.layer_moments(q, e)
            assert abs(second - float(act.second_moment(np.array([q]))[0])) <= 2 * ulp * second
            want = float(act.difference_moment(np.array([q]), eps=np.array([e]))[0])
            assert abs(difference - want) <= 8 * ulp * abs(want)
            q2 = q * float(rng.uniform(0.1, 10))
            want = float(act.cross_moment(np.array([q]), np.array([q2]), eps=np.array([e]))[0])
            assert abs(act.pair_moment(q, q2, e) - want) <= 8 * ulp * math.sqrt(q * q2)
    alpha = act.alpha

    def phi(x):
        return max(x, alpha * x) if alpha <= 1 else min(x, alpha * x)

    for q1, q2, c in ((1.0, 2.0, 0.3), (0.5, 0.5, -0.6), (3.0, 1.0, 0.999)):
        want = expect2(phi, phi, q1, q2, c)
        assert act.pair_moment(q1, q2, 1 - c) == pytest.approx(want, rel=1e-11, abs=1e-13)
    # past float64 the one-point forms refuse as the array methods do, with a typed error
    if name != "relu":  # relu's q / 2 stays finite
        with pytest.raises(DomainError):
            act.layer_moments(float(np.finfo(float).max), 0.5)
    with pytest.raises(DomainError):
        act.pair_moment(1.7e308, 1.7e308, 0.5)
    # the mutant: another slope's moments
    other = get_activation("leaky_relu", alpha=0.2) if name != "leaky_relu" else get_activation("relu")
    assert other.pair_moment(1.0, 2.0, 0.7) != pytest.approx(act.pair_moment(1.0, 2.0, 0.7), rel=1e-6)
    assert other.layer_moments(1.0, 0.7)[1] != pytest.approx(act.layer_moments(1.0, 0.7)[1], rel=1e-6)


@pytest.mark.parametrize("name", ["erf", "tanh"])
def test_branch_sums_of_several_lags_are_the_pairs_moments(name):
    # a dense layer's sums written out pair by pair with the activation's own cross moment
    from depthdyn.meanfield.branch import branch_moments

    act = get_activation(name)
    q = np.array([1.1, 1.4, 0.8])
    corr = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, 0.5], [0.3, 0.5, 1.0]])
    QP = corr * np.sqrt(np.outer(q, q))
    S = 0.4 * QP  # the two inputs' cross-covariance
    QD = 2 * (QP - S)
    GP, GD = branch_moments(act, SW2, SB2, q, QP, QD)
    expected_p = expected_d = 0.0
    for i in range(3):
        for j in range(3):
            root = math.sqrt(q[i] * q[j])
            m_p = float(act.cross_moment(q[i], q[j], QP[i, j] / root))
            m_s = float(act.cross_moment(q[i], q[j], S[i, j] / root))
            expected_p += SW2 * m_p + SB2
            expected_d += 2 * SW2 * (m_p - m_s)
    assert GP == pytest.approx(expected_p, rel=1e-12) and GD == pytest.approx(expected_d, rel=1e-11)
    # the mutant: a cross-covariance larger by a part in 10^6
    wrong = branch_moments(act, SW2, SB2, q, QP, 2 * (QP - 0.4 * (1 + 1e-6) * QP))[1]
    assert wrong != pytest.approx(expected_d, rel=1e-11)


def test_a_subclass_that_redefines_phi_loses_the_parity():
    class Shifted(type(get_activation("tanh"))):  # tanh(u) + 0.1 is neither odd nor even
        name = "shifted tanh"

        def phi(self, u):
            return np.tanh(u) + 0.1

    act = Shifted()
    assert get_activation("tanh").phi_parity() == "odd" and act.phi_parity() is None
    value, bound, ok = mehler.cross_moment(act, np.array([0.7]), np.array([1.4]), np.array([0.4]))
    reference = expect2(lambda x: math.tanh(x) + 0.1, lambda x: math.tanh(x) + 0.1, 0.7, 1.4, 0.4)
    assert ok[0] and abs(value[0] - reference) <= bound[0] + 1e-14
    # the mutant: the inherited declaration trusted, the even coefficients (the 0.1) are lost
    act.parity = "odd"
    _fresh()
    wrong = mehler.cross_moment(act, np.array([0.7]), np.array([1.4]), np.array([0.4]))[0][0]
    _fresh()
    assert abs(wrong - reference) > 1e-3


@pytest.mark.parametrize("family, params", [("dense", {"k": 3, "h": 0.3}), ("momentum", {"m": 0.5, "h": 0.5}),
                                            ("hyper_connection", {"n": 4, "h": 0.4}), ("residual", {})])
def test_the_state_update_is_c_x_c_transpose_plus_the_branch(family, params):
    """``KernelSpec.carry`` (one product with ``C kron C``; where ``e e^T`` has one entry, two float
    additions) against ``C X C^T + G e e^T`` written out, for ``e`` with one entry and with several."""
    spec = kernel_spec(family, depth=10, **params)
    rng = np.random.default_rng(7)
    state = rng.uniform(0.1, 2.0, (2, spec.k, spec.k))
    state = state + state.transpose(0, 2, 1)
    GP, GD = 0.7, 0.3
    C, ee = spec.C, spec.ee
    want = np.stack([C @ field @ C.T + g * ee for field, g in zip(state, (GP, GD), strict=True)])
    np.testing.assert_allclose(spec.carry(state, GP, GD), want, rtol=1e-14, atol=1e-15)
    # the mutant: the two fields' branch sums swapped
    assert not np.allclose(spec.carry(state, GD, GP), want, rtol=1e-10, atol=0)


def _smooth_exact(k: int, h: Fraction, sw2: Fraction, sb2: Fraction, depth: int):
    """The ``C^k`` smooth kernel of ``phi(u) = u`` in exact rationals, on the lags as the family is written
    (``sum_i (-1)^i C(k, i) x_{l+1-i} = h^k F(x_l)``, lags equal at layer 0, ``q0 = 1``): the lags'
    covariances ``P`` of every layer, and the gradients' Gram matrices back from layer ``depth``."""
    C = [[Fraction(0)] * k for _ in range(k)]
    for i in range(1, k + 1):
        C[0][i - 1] = Fraction(-((-1) ** i) * math.comb(k, i))
    for r in range(1, k):
        C[r][r - 1] = Fraction(1)
    e2 = h ** (2 * k)  # e e^T has one entry, (h^k)^2

    def conj(X, left):  # C X C^T (left) or C^T X C
        A = [[C[b][a] for b in range(k)] for a in range(k)] if not left else C
        AX = [[sum(A[a][m] * X[m][b] for m in range(k)) for b in range(k)] for a in range(k)]
        return [[sum(AX[a][m] * A[b][m] for m in range(k)) for b in range(k)] for a in range(k)]

    P = [[Fraction(1)] * k for _ in range(k)]
    Ps = [P]
    for _ in range(depth):  # the branch reads x_l: E[phi(x)^2] = q for phi(u) = u
        G = sw2 * P[0][0] + sb2
        P = conj(P, True)
        P[0][0] += G * e2
        Ps.append(P)
    gamma = [[Fraction(int(a == b == 0)) for b in range(k)] for a in range(k)]
    grads = [Fraction(1)]
    for _ in range(depth):  # E[phi' phi'] = 1: K = sw2
        add = e2 * gamma[0][0] * sw2
        gamma = conj(gamma, False)
        gamma[0][0] += add
        grads.append(gamma[0][0])
    input_grad = sum(sum(row) for row in gamma)  # x_0 feeds every lag
    return Ps, grads[::-1], input_grad


@pytest.mark.parametrize("k, h, depth", [(3, Fraction(3, 10), 50), (6, Fraction(1, 20), 250)])
def test_smooth_kernel_and_gradients_of_high_order_against_exact_arithmetic(k, h, depth, monkeypatch):
    """A ``C^k`` smooth kernel's lags are nearly equal, and their alternating binomial sums lose the
    differences' digits: iterated on the backward differences, the kernel and the gradient norms of a
    linear network meet the exact rational recurrence; on the lags themselves (the mutant) they do not."""
    from depthdyn.meanfield import asymptotics
    from depthdyn.meanfield.asymptotics import gradient_norms
    from depthdyn.meanfield.kernels import KernelSpec

    sw2, sb2 = Fraction(1), Fraction(1, 20)
    Ps, grads, input_grad = _smooth_exact(k, h, sw2, sb2, depth)
    want_q = np.array([float(P[0][0]) for P in Ps])
    want_lags = np.array([[float(x) for x in P[0]] for P in Ps])  # Cov(x_l, x_{l-m})
    want_grad = np.array([float(input_grad)] + [float(g) for g in grads[1:]])
    kw = dict(depth=depth, q0=1.0, c0=0.3, family="smooth", k=k, h=float(h))
    traj = iterate_family("linear", float(sw2), float(sb2), **kw)
    assert traj.stopped_at is None and traj.states[1] == "x[l-1]"
    np.testing.assert_allclose(traj.q, want_q, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.array(traj.P)[:, 0, :], want_lags, rtol=1e-12, atol=0)
    grad = gradient_norms("linear", float(sw2), float(sb2), depth=depth, family="smooth", k=k, h=float(h))
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=0)
    # the mutants: the same recurrences on the lags (at k = 6 the forward one stops at a negative
    # variance; the backward one, given the right forward kernel, is off by a factor)
    monkeypatch.setattr(KernelSpec, "iterated", property(lambda spec: (spec, None)))
    lags = iterate_family("linear", float(sw2), float(sb2), **kw)
    n = lags.q.size
    assert lags.stopped_at is not None or not np.allclose(lags.q, want_q[:n], rtol=1e-13, atol=0)
    if k == 6:
        monkeypatch.setattr(asymptotics, "iterate_family", lambda *a, **kw: traj)
        lag_grad = gradient_norms("linear", float(sw2), float(sb2), depth=depth, family="smooth", k=k,
                                  h=float(h))
        assert not np.allclose(lag_grad, want_grad, rtol=1e-3, atol=0)
