"""Gaussian moments of the activations against independent quadrature and exact arithmetic.

References: mpmath at 30 digits (one variable), QUADPACK nested on split intervals (two
variables), the SymPy closed forms evaluated by mpmath at 40 digits (closed-form
activations, down to ``c = 1 - 1e-12``) and Price's theorem for ``c -> 1``. Each kind of check
has a mutant (a perturbed activation, the naive difference) that it catches.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from reference_quadrature import expect1, expect2, mp_expect1
from scipy.special import erfc, expit

from depthdyn.errors import DomainError, ParameterError, UnknownParameterError
from depthdyn.meanfield import ACTIVATIONS, UnknownActivationError, get_activation

SQRT2PI = math.sqrt(2 * math.pi)
LAM, ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
with mp.workdps(50):  # SELU's constants to all the digits given
    MP_LAM = mp.mpf("1.0507009873554804934193349852946")
    MP_ALPHA = mp.mpf("1.6732632423543772848170429916717")


def _softplus(x):
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


#: name -> (phi, phi', phi'') as float functions, written here from the definitions
FLOAT = {
    "tanh": (math.tanh, lambda x: 1 - math.tanh(x) ** 2,
             lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2)),
    "sigmoid": (lambda x: float(expit(x)), lambda x: float(expit(x) * expit(-x)),
                lambda x: float(expit(x) * expit(-x) * (1 - 2 * expit(x)))),
    "silu": (lambda x: x * float(expit(x)), lambda x: float(expit(x) * (1 + x * expit(-x))),
             lambda x: float(expit(x) * expit(-x) * (2 + x * (1 - 2 * expit(x))))),
    "softplus": (_softplus, lambda x: float(expit(x)), lambda x: float(expit(x) * expit(-x))),
    "selu": (lambda x: LAM * x if x > 0 else LAM * ALPHA * math.expm1(x),
             lambda x: LAM if x > 0 else LAM * ALPHA * math.exp(x), None),
    "gelu": (lambda x: x * 0.5 * float(erfc(-x / math.sqrt(2))),
             lambda x: float(0.5 * erfc(-x / math.sqrt(2))) + x * math.exp(-x * x / 2) / SQRT2PI,
             lambda x: (2 - x * x) * math.exp(-x * x / 2) / math.sqrt(2 * math.pi)),
    "relu": (lambda x: max(x, 0.0), lambda x: 1.0 if x > 0 else 0.0, None),
    "leaky_relu": (lambda x: x if x > 0 else 0.01 * x, lambda x: 1.0 if x > 0 else 0.01, None),
    "abs": (abs, lambda x: 1.0 if x > 0 else -1.0, None),
    "linear": (lambda x: x, lambda x: 1.0, None),
    "erf": (math.erf, lambda x: 2 / math.sqrt(math.pi) * math.exp(-x * x), None),
    "sin": (math.sin, math.cos, None),
    "cos": (math.cos, lambda x: -math.sin(x), None),
    "exp": (math.exp, math.exp, None),
    "gaussian": (lambda x: math.exp(-x * x / 2), lambda x: -x * math.exp(-x * x / 2), None),
    "hermite": (lambda x: x ** 3 - 3 * x, lambda x: 3 * x * x - 3, None),
}
#: the same in mpmath (for the 30-digit one-variable references)
MP = {
    "tanh": (mp.tanh, lambda x: mp.sech(x) ** 2),
    "sigmoid": (lambda x: 1 / (1 + mp.exp(-x)), lambda x: mp.exp(-x) / (1 + mp.exp(-x)) ** 2),
    "silu": (lambda x: x / (1 + mp.exp(-x)),
             lambda x: 1 / (1 + mp.exp(-x)) + x * mp.exp(-x) / (1 + mp.exp(-x)) ** 2),
    "softplus": (lambda x: mp.log1p(mp.exp(x)), lambda x: 1 / (1 + mp.exp(-x))),
    "selu": (lambda x: MP_LAM * x if x > 0 else MP_LAM * MP_ALPHA * mp.expm1(x),
             lambda x: MP_LAM if x > 0 else MP_LAM * MP_ALPHA * mp.exp(x)),
    "gelu": (lambda x: x * mp.ncdf(x), lambda x: mp.ncdf(x) + x * mp.npdf(x)),
    "relu": (lambda x: max(x, 0), lambda x: 1 if x > 0 else 0),
    "leaky_relu": (lambda x: x if x > 0 else x / 100, lambda x: 1 if x > 0 else mp.mpf(1) / 100),
    "abs": (abs, lambda x: 1 if x > 0 else -1),
    "linear": (lambda x: x, lambda x: 1),
    "erf": (mp.erf, lambda x: 2 / mp.sqrt(mp.pi) * mp.exp(-x * x)),
    "sin": (mp.sin, mp.cos),
    "cos": (mp.cos, lambda x: -mp.sin(x)),
    "exp": (mp.exp, mp.exp),
    "gaussian": (lambda x: mp.exp(-x * x / 2), lambda x: -x * mp.exp(-x * x / 2)),
    "hermite": (lambda x: x ** 3 - 3 * x, lambda x: 3 * x * x - 3),
}
NUMERIC = ("tanh", "sigmoid", "silu", "softplus", "selu", "gelu")
CLOSED = ("relu", "leaky_relu", "abs", "linear", "erf", "sin", "cos", "exp", "gaussian")
Q_GRID = (1e-8, 1e-4, 1.0, 1e4, 1e8)


def _q_grid(name, quadrature=False):
    """The variances checked: exp's moments pass float64 beyond q ~ 354; sin and cos oscillate too fast for
    a quadrature reference beyond q ~ 100 (their closed forms are checked on the whole grid at 40 digits)."""
    if quadrature and name == "exp":  # exp(2 sqrt(q) z) e^(-z^2/2) peaks at z = 2 sqrt(q)
        return (1e-8, 1e-4, 1.0, 4.0)
    small = name == "exp" or (quadrature and name in ("sin", "cos"))
    return tuple(q for q in Q_GRID if not small or q <= 100) + ((100.0,) if small else ())


def _close(value, reference, tol=1e-12):
    return abs(float(value) - float(reference)) <= tol * max(1.0, abs(float(reference)))


def test_every_registered_activation_has_a_reference_here():
    assert set(ACTIVATIONS) == set(FLOAT) == set(MP)


# ------------------------------------------------------------------ one variable, all activations
@pytest.mark.parametrize("name", sorted(MP))
def test_one_variable_moments_against_mpmath(name):
    act = get_activation(name)
    phi, dphi = MP[name]
    for q in _q_grid(name, quadrature=True):
        for method, f in (("mean", phi), ("second_moment", lambda x: phi(x) ** 2),
                          ("derivative_second_moment", lambda x: dphi(x) ** 2)):
            value, bound = getattr(act, method)(q, return_error=True)
            reference = mp_expect1(f, q)
            assert np.isfinite(value) and np.isfinite(bound)
            assert _close(value, reference), (name, method, q, float(value), float(reference))
            # the reported bound holds: the true error (against 30 digits) is below it
            # (the reference's own accuracy is about 1e-25)
            assert abs(mp.mpf(float(value)) - reference) <= float(bound) + 1e-25 * max(1, abs(reference)), \
                (name, method, q)


def test_one_variable_check_catches_a_perturbed_activation():
    mutant = get_activation(sp.tanh(sp.Rational(1000001, 1000000) * sp.Symbol("x")))
    reference = mp_expect1(lambda x: mp.tanh(x) ** 2, 1.0)
    assert not _close(mutant.second_moment(1.0), reference)


@pytest.mark.parametrize("name", ["tanh", "selu", "gelu", "erf", "sin"])
def test_second_moment_slope_is_the_derivative_of_the_second_moment(name):
    act = get_activation(name)
    phi = FLOAT[name][0]
    for q in (0.3, 2.0):
        h = 1e-4 * q  # central difference of the reference: error ~ h^2
        slope = (expect1(lambda x: phi(x) ** 2, q + h) - expect1(lambda x: phi(x) ** 2, q - h)) / (2 * h)
        assert abs(float(act.second_moment_slope(q)) - slope) <= 1e-7 * max(1, abs(slope))


# ------------------------------------------------------------------ two variables
@pytest.mark.parametrize("name", NUMERIC)
def test_cross_moment_and_c_map_against_nested_adaptive_quadrature(name):
    act = get_activation(name)
    phi = FLOAT[name][0]
    for q in (1e-8, 1.0, 1e8):
        second = expect1(lambda x: phi(x) ** 2, q)
        for c in (-0.6, 0.95, 1 - 1e-12):
            value, bound = act.cross_moment(q, q, c, return_error=True)
            reference = expect2(phi, phi, q, q, c)
            assert _close(value, reference), (name, q, c, float(value), reference)
            assert abs(float(value) - reference) <= float(bound) + 2e-16 * max(1, abs(reference))
            # the c-map at sw2 = 1.5, sb2 = 0.1 to 1e-12
            from depthdyn.meanfield import c_map

            expected = (1.5 * reference + 0.1) / (1.5 * second + 0.1)
            assert abs(float(c_map(act, c, q, 1.5, 0.1)) - expected) <= 1e-12


@pytest.mark.parametrize("name", ["tanh", "selu"])
def test_derivative_cross_moment_against_nested_adaptive_quadrature(name):
    act = get_activation(name)
    dphi = FLOAT[name][1]
    for q, c in ((1.0, 0.3), (1e4, -0.6), (0.5, 1 - 1e-6)):
        reference = expect2(dphi, dphi, q, q, c)
        assert _close(act.derivative_cross_moment(q, q, c), reference, 1e-11), (name, q, c)


def test_two_variable_check_catches_a_perturbed_activation():
    mutant = get_activation(sp.tanh(sp.Rational(1000001, 1000000) * sp.Symbol("x")))
    reference = expect2(math.tanh, math.tanh, 1.0, 1.0, 0.95)
    assert not _close(mutant.cross_moment(1.0, 1.0, 0.95), reference)


def test_unequal_variances():
    act = get_activation("tanh")
    reference = expect2(math.tanh, math.tanh, 0.5, 3.0, 0.4)
    assert _close(act.cross_moment(0.5, 3.0, 0.4), reference)
    exact = get_activation("erf")
    assert _close(exact.cross_moment(0.5, 3.0, 0.4), expect2(math.erf, math.erf, 0.5, 3.0, 0.4))


# ------------------------------------------------------------------ c -> 1 without lost digits
@pytest.mark.parametrize("name", ["tanh", "sigmoid", "silu", "softplus", "gelu"])
def test_difference_moment_near_c_one_by_prices_theorem(name):
    # Price: dE[phi(u1)phi(u2)]/dS12 = E[phi'phi'], so E[phi^2] - E[phi phi](c = 1 - eps)
    #        = q eps E[phi'^2] - (q eps)^2 / 2 E[phi''^2] + O((q eps)^3)
    act = get_activation(name)
    _, dphi, ddphi = FLOAT[name]
    eps = 1e-12
    for q in (1e-4, 1.0, 100.0):
        expected = q * eps * expect1(lambda x: dphi(x) ** 2, q) - (q * eps) ** 2 / 2 * expect1(
            lambda x: ddphi(x) ** 2, q)
        value = float(act.difference_moment(q, eps=eps))
        assert abs(value - expected) <= 1e-9 * expected, (name, q, value, expected)
        # the c-map's 1 - c keeps its digits: eps' = sw2 D / q'
        from depthdyn.meanfield import eps_map

        q_next = 2.0 * expect1(lambda x: FLOAT[name][0](x) ** 2, q) + 0.05
        target = 2.0 * expected / q_next
        assert abs(float(eps_map(act, eps, q, 2.0, 0.05)) - target) <= 1e-9 * target


def test_naive_difference_loses_the_digits_that_difference_moment_keeps():
    act = get_activation("tanh")
    q, eps = 1.0, 1e-12
    expected = q * eps * expect1(lambda x: (1 - math.tanh(x) ** 2) ** 2, q)
    naive = float(act.second_moment(q) - act.cross_moment(q, q, eps=eps))
    assert abs(naive - expected) > 1e-6 * expected  # the mutant: c -> 1 by subtraction
    assert abs(float(act.difference_moment(q, eps=eps)) - expected) <= 1e-9 * expected


@pytest.mark.parametrize("name", CLOSED)
def test_closed_forms_against_their_sympy_integrals_at_40_digits(name):
    act = get_activation(name)
    exact = act.exact_moments()
    q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
    c = sp.Symbol("c")
    cross = sp.lambdify((q1, q2, c), exact["cross_moment"], "mpmath")
    dcross = sp.lambdify((q1, q2, c), exact["derivative_cross_moment"], "mpmath")
    second = sp.lambdify(q, exact["second_moment"], "mpmath")
    epsilons = (2.0, 1.6, 1.0, 0.4, 1e-6, 1e-12, 0.0)
    with mp.workdps(40):
        for qv in _q_grid(name):
            for e in epsilons:
                cv = 1 - mp.mpf(e)
                Q = mp.mpf(qv)
                ref = cross(Q, Q, cv)
                assert _close(act.cross_moment(qv, qv, eps=e), ref), (name, qv, e)
                assert _close(act.derivative_cross_moment(qv, qv, eps=e), dcross(Q, Q, cv)), (name, qv, e)
                diff = second(Q) - ref
                value = float(act.difference_moment(qv, eps=e))
                # relative 1e-12 where the difference is small (c near 1), absolute 1e-15 elsewhere, and
                # the 40-digit evaluation's own noise (1e-30 of the second moment)
                tol = 1e-12 * abs(diff) + 1e-15 * abs(second(Q)) * (e > 0.1) + 1e-30 * abs(second(Q))
                assert abs(value - diff) <= tol, (name, qv, e, value, diff)


@pytest.mark.parametrize("name", CLOSED)
def test_sympy_closed_forms_against_adaptive_quadrature(name):
    act = get_activation(name)
    exact = act.exact_moments()
    q1, q2 = sp.symbols("q1 q2", nonnegative=True)
    c = sp.Symbol("c")
    phi, dphi = FLOAT[name][:2]
    for qa, qb, cv in ((1.0, 1.0, 0.3), (0.7, 2.0, -0.6)):
        at = {q1: qa, q2: qb, c: cv}
        assert _close(sp.N(exact["cross_moment"].subs(at), 30), expect2(phi, phi, qa, qb, cv), 1e-11), name
        assert _close(sp.N(exact["derivative_cross_moment"].subs(at), 30), expect2(dphi, dphi, qa, qb, cv),
                      1e-11), name


def test_hermite_mehler_and_polynomial_expressions():
    # Mehler's formula: E[He_n(z1) He_n(z2)] = n! c^n for unit variances (a textbook fact)
    act = get_activation("hermite", n=3)
    for c in (-0.7, 0.2, 0.99):
        assert _close(act.cross_moment(1.0, 1.0, c), 6 * c ** 3)
    x = sp.Symbol("x")
    same = get_activation(x ** 3 - 3 * x)
    for q in (0.5, 20.0):
        assert _close(same.cross_moment(q, q, 0.3), act.cross_moment(q, q, 0.3))
        he3 = FLOAT["hermite"][0]
        assert _close(act.cross_moment(q, q, 0.3), expect2(he3, he3, q, q, 0.3))
    # first order suffices at q eps = 2e-12
    price = 1e-12 * 2.0 * expect1(lambda u: (3 * u * u - 3) ** 2, 2.0)
    assert _close(act.difference_moment(2.0, eps=1e-12), price, 1e-9)


# ------------------------------------------------------------------ a user's own activation
def test_sympy_expression_activation_against_quadrature():
    x = sp.Symbol("x")
    act = get_activation(x * sp.tanh(x))
    f = lambda u: u * math.tanh(u)  # noqa: E731
    assert _close(act.second_moment(2.0), expect1(lambda u: f(u) ** 2, 2.0))
    assert _close(act.cross_moment(2.0, 2.0, 0.5), expect2(f, f, 2.0, 2.0, 0.5))
    assert get_activation(sp.tanh(x)).name == "tanh"  # a registered function of its symbol


def test_torch_function_activation_matches_the_named_one():
    torch = pytest.importorskip("torch")
    act = get_activation(lambda t: torch.tanh(t))
    ref = get_activation("tanh")
    q = np.array([0.1, 1.0, 30.0])
    assert np.allclose(act.second_moment(q), ref.second_moment(q), rtol=0, atol=1e-14)
    assert np.allclose(act.derivative_second_moment(q), ref.derivative_second_moment(q), rtol=0, atol=1e-13)
    assert torch.equal(ref.torch(torch.ones(3)), torch.tanh(torch.ones(3)))


def test_no_nan_or_inf_on_the_whole_grid():
    q = np.array(Q_GRID)
    eps = np.array([2.0, 0.5, 1e-12, 1e-300, 0.0])
    Q, E = np.meshgrid(q, eps, indexing="ij")
    for name in NUMERIC + CLOSED + ("hermite",):
        act = get_activation(name)
        qq, ee = (Q[:1], E[:1]) if name == "exp" else (Q, E)
        for values in (act.second_moment(qq), act.derivative_second_moment(qq),
                       act.cross_moment(qq, qq, eps=ee), act.difference_moment(qq, eps=ee),
                       act.derivative_cross_moment(qq, qq, eps=ee)):
            assert np.all(np.isfinite(values)), name


# ------------------------------------------------------------------ bad input
def test_unknown_name_suggests_the_nearest():
    with pytest.raises(UnknownActivationError, match="did you mean 'tanh'"):
        get_activation("tnah")
    with pytest.raises(KeyError):  # also a KeyError, and a ValueError
        get_activation("nonsense")
    with pytest.raises(UnknownParameterError, match="did you mean 'alpha'"):
        get_activation("leaky_relu", alhpa=0.1)
    with pytest.raises(DomainError):
        get_activation("leaky_relu", alpha=float("nan"))
    with pytest.raises(DomainError):
        get_activation("hermite", n=2.5)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_bad_variance_is_a_domain_error(bad):
    for name in ("tanh", "relu"):
        with pytest.raises(DomainError):
            get_activation(name).second_moment(bad)
        with pytest.raises(DomainError):
            get_activation(name).cross_moment(bad, 1.0, 0.5)


def test_bad_correlation_and_overflow():
    act = get_activation("tanh")
    for kwargs in ({"c": 1.5}, {"eps": -1e-3}, {"c": float("nan")}):
        with pytest.raises(DomainError):
            act.cross_moment(1.0, 1.0, **kwargs)
    with pytest.raises(DomainError):
        act.cross_moment(1.0, 1.0, 0.5, eps=0.5)
    with pytest.raises(DomainError, match="overflow"):  # exp(2q) past float64: said, not inf
        get_activation("exp").second_moment(1e3)
    with pytest.raises(ParameterError):
        get_activation(sp.Symbol("x") * sp.Symbol("y"))


# ------------------------------------------------------------------ the mpmath path
@pytest.mark.parametrize("name", ["tanh", "selu", "gelu"])
def test_mpmath_path_and_its_error_estimate(name):
    from depthdyn.meanfield import mp_moment

    act = get_activation(name)
    for q in (1e-4, 1.0, 1e6):
        value, error = mp_moment(name, q, "second_moment", dps=25)
        with mp.workdps(50):
            truth = mp_expect1(lambda x: MP[name][0](x) ** 2, q, dps=50)  # independent splitting, 50 digits
            assert abs(value - truth) <= error + mp.mpf(10) ** -24 * abs(truth)
        floated, bound = act.second_moment(q, return_error=True)
        assert abs(mp.mpf(float(floated)) - value) <= float(bound)
    with pytest.raises(ParameterError):
        mp_moment("tanh", 1.0, "third_moment")
