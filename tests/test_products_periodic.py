"""Periodic patterns: Floquet conditions, monodromy charpolys and region masks against
independent numpy and SymPy products of the per-layer state matrices."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.errors import DegreeTooLargeError, DomainError, ParameterError, ParseError, ShapeError
from depthdyn.limits import MAX_PERIOD
from depthdyn.numeric import SimulationOverflowError
from depthdyn.products import periodic, stability_switches
from depthdyn.recurrence import r

a, b, c = sp.symbols("a b c")
HALF, THIRD = sp.Rational(1, 2), sp.Rational(1, 3)


def _holds(sc, names, *arrays):
    """The exact conditions evaluated on arrays (vectorised)."""
    syms = {s.name: s for s, _ in sc.domains}
    f = sp.lambdify([syms[n] for n in names], sp.And(*sc.conditions), modules="numpy")
    return np.broadcast_to(f(*arrays), np.broadcast_shapes(*(np.shape(x) for x in arrays)))


def test_residual_floquet_conditions_are_the_product_bound():
    sc = dd.stability_conditions(periodic(dd.residual(lam=a), dd.residual(lam=b)))
    rng = np.random.default_rng(0)
    A, B = rng.uniform(-3.5, 1.5, 20_000), rng.uniform(-3.5, 1.5, 20_000)
    exact = _holds(sc, ["a", "b"], A, B)
    prod = np.abs((1 + A) * (1 + B))  # the independent product of the two layers
    away = np.abs(prod - 1) > 1e-9
    assert away.sum() > 10_000
    assert np.array_equal(exact[away], prod[away] < 1)
    assert 0.1 < exact.mean() < 0.9  # both verdicts occur


def test_a_wrong_pattern_gives_other_conditions():  # mutant: the sum of the gains, not the product
    sc = dd.stability_conditions(dd.residual(lam=a + b))
    rng = np.random.default_rng(1)
    A, B = rng.uniform(-3.5, 1.5, 10_000), rng.uniform(-3.5, 1.5, 10_000)
    assert (_holds(sc, ["a", "b"], A, B) != (np.abs((1 + A) * (1 + B)) < 1)).sum() > 1000


def _state_matrix(rec, window):
    """Companion state matrix of one layer written out here, independently of layer_matrix."""
    n = rec.dim
    A0inv = rec.coeffs[0].inv()
    M = sp.zeros(window * n)
    for j, Aj in enumerate(rec.coeffs[1:]):
        M[:n, j * n:(j + 1) * n] = -A0inv * Aj
    for i in range(1, window):
        M[i * n:(i + 1) * n, (i - 1) * n:i * n] = sp.eye(n)
    return M


SCALAR_LAYERS = {
    "residual": lambda s: dd.residual(lam=s),
    "momentum": lambda s: dd.momentum(lam=s, m=HALF, eta=1),
    "highway": lambda s: dd.highway(lam=s, g=HALF),
    "smooth": lambda s: dd.smooth(k=2, lam=s, h=1),
    "dense": lambda s: dd.dense(k=2, lam=s, h=1),
}
MATRIX_LAYERS = {
    "entangled": lambda s: dd.entangled(n=2, lam=s, gamma=THIRD),
    "hyper_connection": lambda s: dd.hyper_connection(
        n=2, H_res=[[sp.Rational(3, 4), sp.Rational(1, 4)], [sp.Rational(1, 4), sp.Rational(3, 4)]],
        H_pre=[HALF, HALF], H_post=[1, 1], lam=s),
}


@pytest.mark.parametrize("family", [*SCALAR_LAYERS, *MATRIX_LAYERS])
@pytest.mark.parametrize("period", [2, 3])
def test_monodromy_charpoly_is_the_charpoly_of_the_product(family, period):
    make = {**SCALAR_LAYERS, **MATRIX_LAYERS}[family]
    layers = [make(s) for s in (a, b, c)[:period]]
    pattern = periodic(*layers)
    w = max(rec.order for rec in layers)
    P = sp.eye(w * layers[0].dim)
    for rec in layers:
        P = _state_matrix(rec, w) * P
    want = sp.Poly(P.charpoly(r).as_expr(), r)
    got = sp.Poly(pattern.charpoly(), r)
    assert sp.expand(got.as_expr() / got.LC() - want.as_expr()) == 0


def test_mixed_orders_share_one_window():
    pattern = periodic(dd.residual(lam=a), dd.momentum(lam=b, m=HALF, eta=1))
    P = _state_matrix(dd.momentum(lam=b, m=HALF, eta=1), 2) * sp.Matrix([[1 + a, 0], [1, 0]])
    def plain(M):
        return M.xreplace({s: sp.Symbol(s.name) for s in M.free_symbols})

    assert sp.expand(plain(pattern.monodromy) - plain(P)) == sp.zeros(2)
    assert pattern.window == 2 and pattern.period == 2


NUMPY_LAYERS = {  # per-layer state matrices written from each family's update rule
    "residual": lambda s: (1 + s)[..., None, None],
    "momentum": lambda s: np.stack([np.stack([1.5 + s, -0.5 + 0 * s], -1),
                                    np.stack([1 + 0 * s, 0 * s], -1)], -2),
    "highway": lambda s: (0.5 + 0.5 * s)[..., None, None],
    "smooth": lambda s: np.stack([np.stack([2 + s, -1 + 0 * s], -1), np.stack([1 + 0 * s, 0 * s], -1)], -2),
    "entangled": lambda s: (np.array([[5 / 6, 1 / 6], [1 / 6, 5 / 6]]) + s[..., None, None] * np.eye(2)),
}


@pytest.mark.parametrize("family", list(NUMPY_LAYERS))
@pytest.mark.parametrize("period", [2, 3])
def test_region_mask_agrees_with_a_brute_force_product(family, period):
    make = {**SCALAR_LAYERS, **MATRIX_LAYERS}[family]
    syms = (a, b, c)[:period]
    pattern = periodic(*[make(s) for s in syms])
    x = np.linspace(-4.5, 1.5, 70)
    X, Y = np.meshgrid(x, x, indexing="ij")
    vals = {"a": X, "b": Y, "c": np.full_like(X, -2.6)}
    strict, _ = dd.stability_mask(pattern, **{s.name: vals[s.name] for s in syms})
    P = None
    for s in syms:
        C = NUMPY_LAYERS[family](vals[s.name])
        P = C if P is None else C @ P
    rho = np.abs(np.linalg.eigvals(P)).max(-1)
    away = np.abs(rho - 1) > 1e-9
    assert np.array_equal(strict[away], rho[away] < 1)
    if family == "smooth":  # det C = 1 at every layer: never strictly stable, by either route
        assert not strict.any() and (rho > 1 - 1e-9).all()
    else:
        assert 0 < strict.mean() < 1


def test_grid_search_finds_both_switches_and_checks_them():
    pattern = periodic(dd.momentum(lam=a, m=HALF, eta=1), dd.momentum(lam=b, m=HALF, eta=1))
    grid = {"a": np.linspace(-4, 1, 51), "b": np.linspace(-4, 1, 51)}
    found = stability_switches(pattern, grid)
    sw = found["layers stable, period unstable"]
    assert sw is not None and sw.confirmed
    va, vb = (float(v) for _, v in sw.values)
    C = [NUMPY_LAYERS["momentum"](np.array(v)) for v in (va, vb)]
    assert max(np.abs(np.linalg.eigvals(M)).max() for M in C) < 1
    assert np.abs(np.linalg.eigvals(C[1] @ C[0])).max() > 1
    # two hyper-connection layers on uniform mixing, each reading and writing its own stream
    mix = [[HALF, HALF], [HALF, HALF]]
    hc = periodic(dd.hyper_connection(n=2, H_res=mix, H_pre=[1, 0], H_post=[1, 0], lam=a),
                  dd.hyper_connection(n=2, H_res=mix, H_pre=[0, 1], H_post=[0, 1], lam=b))
    sw2 = stability_switches(hc, grid)["layers unstable, period stable"]
    assert sw2 is not None and sw2.confirmed
    x, y = (float(v) for _, v in sw2.values)
    L1, L2 = np.array(mix, float) + np.diag([x, 0]), np.array(mix, float) + np.diag([0, y])
    assert min(np.abs(np.linalg.eigvals(M)).max() for M in (L1, L2)) > 1
    assert np.abs(np.linalg.eigvals(L2 @ L1)).max() < 1
    # scalar first-order layers can do neither: |(1+a)(1+b)| = |1+a| |1+b|
    conv = stability_switches(periodic(dd.residual(lam=a), dd.residual(lam=b)), grid)
    assert conv == {"layers stable, period unstable": None, "layers unstable, period stable": None}


def test_identical_layers_have_no_switch():  # mutant: the period of one layer repeated
    pattern = periodic(dd.momentum(lam=a, m=HALF, eta=1), dd.momentum(lam=a, m=HALF, eta=1))
    found = stability_switches(pattern, {"a": np.linspace(-4, 1, 201)})
    assert all(v is None for v in found.values())


def test_verbs_take_the_pattern():
    pattern = periodic(dd.residual(lam=a), dd.residual(lam=b))
    point = pattern.subs(a=HALF, b=sp.Rational(-9, 10))
    assert point.is_numeric() and point.period == 2
    traj = dd.simulate(point, [1], 10)
    assert np.isclose(float(np.ravel(traj.final)[0]), (1.5 * 0.1) ** 10, rtol=1e-12)
    assert dd.root_condition(point).strict
    assert [rt.value for rt in dd.roots(point)] == [sp.Rational(3, 20)]
    reg = dd.stability_region(pattern, ("a", -3, 1, 41), ("b", -3, 1, 41))
    assert 0 < reg.strict.mean() < 1


def test_per_layer_symbols_become_parameters_and_strings_refuse():
    rec = dd.momentum(m=a, eta=1)
    assert rec.param("a").domain == sp.Interval.Ropen(0, 1)  # a bare symbol keeps m's domain
    assert dd.residual(lam=a).param("a").domain == sp.S.Reals
    with pytest.raises(ParseError):
        dd.residual(lam="a")  # typos in text stay errors
    with pytest.raises(dd.errors.UnknownParameterError):
        dd.residual(lam=sp.Symbol("r"))
    with pytest.raises(DomainError):
        periodic(dd.momentum(m=a, eta=1), dd.momentum(m=b, eta=1)).subs(a=2)


def test_bad_patterns_are_typed_errors():
    with pytest.raises(ShapeError, match="empty"):
        periodic()
    with pytest.raises(ShapeError, match="state dimension"):
        periodic(dd.residual(), dd.entangled(n=2))
    with pytest.raises(DegreeTooLargeError, match="too long"):
        periodic(*[dd.residual()] * (MAX_PERIOD + 1))
    with pytest.raises(ParameterError):
        periodic(dd.residual(), "momentum")
    with pytest.raises(DomainError):
        narrow = dd.from_coefficients([1, "-(1 + a)"], [dd.Param("a", sp.Interval(2, 3))])
        periodic(dd.momentum(m=a, eta=1), narrow)


def test_an_overflowing_pattern_is_reported_not_inf():
    with pytest.raises(SimulationOverflowError):
        dd.simulate(periodic(dd.residual(lam=10), dd.residual(lam=10)), [1], 1000)


_MOM = periodic(dd.momentum(lam=a, m=HALF, eta=1), dd.momentum(lam=b, m=sp.Rational(1, 5), eta=1))
_SC = dd.stability_conditions(_MOM)


@settings(max_examples=30, deadline=None)
@given(st.fractions(-5, 1, max_denominator=20), st.fractions(-5, 1, max_denominator=20))
def test_floquet_conditions_equal_the_exact_root_condition(x, y):
    point = {"a": sp.Rational(x.numerator, x.denominator), "b": sp.Rational(y.numerator, y.denominator)}
    assert _SC.holds(point) == dd.root_condition(_MOM.subs(point)).strict
