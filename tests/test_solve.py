"""Closed forms, modes and depth limits (depthdyn.symbolic.solve).

Every closed form is checked against exact forward iteration (``Recurrence.iterate``),
never against another symbolic solver. SymPy's ``rsolve`` appears only in comparison
tests that document where it fails; no test depends on its running time.
"""

import math
from dataclasses import replace

import mpmath
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.errors import (
    DegreeTooLargeError,
    ParameterError,
    RealisationError,
    ShapeError,
    UnknownParameterError,
)
from depthdyn.recurrence import r
from depthdyn.symbolic.solve import closed_form, depth_limit, l, modes

AB3 = dict(rho="r**3 - r**2", sigma="(23*r**2 - 16*r + 5)/12")
AB5 = dict(rho="r**5 - r**4", sigma="(1901*r**4 - 2774*r**3 + 2616*r**2 - 1274*r + 251)/720")
x0, x1, x2 = sp.symbols("x_0 x_1 x_2")
c = sp.Symbol("c")


def _agrees_with_iteration(cf, rec, initial, upto=10, **values):
    seq = rec.iterate(initial, upto)
    return all(sp.expand(cf.at(k, **values) - seq[k]) == 0 for k in range(upto + 1))


# ------------------------------------------------------------------ basics
def test_residual_closed_form_and_shifted_start():
    lam = dd.residual().symbols["lam"]
    cf = closed_form(dd.residual())
    assert cf.expr == x0 * (lam + 1) ** l
    assert cf.terms == ((lam + 1, 1, x0),)
    shifted = closed_form(dd.residual(), [3], start=2)
    assert shifted.initial == ((2, 3),)
    assert [shifted.at(k, lam=1) for k in (2, 3, 4)] == [3, 6, 12]
    assert cf(5, lam=2, x_0=1) == 243  # __call__ is at


def test_generic_momentum_matches_iteration_and_text():
    rec = dd.momentum()
    cf = closed_form(rec)
    assert cf.check()
    assert len(cf.terms) == 2 and all(m == 1 for _, m, _ in cf.terms)
    sub = rec.subs(m="1/2", eta=2, lam="-1/3")
    assert _agrees_with_iteration(cf, sub, [x0, x1], m="1/2", eta=2, lam="-1/3")
    assert str(cf).startswith("x_l = ") and "x_0..x_1 given" in str(cf)
    assert cf._repr_latex_().startswith("$")


# ------------------------------------------------------- (a) critical damping
def test_momentum_critical_damping_symbolic():
    rec = dd.momentum()
    m, eta = rec.symbols["m"], rec.symbols["eta"]
    crit = rec.subs(lam=(2 * sp.sqrt(m) - 1 - m) / eta)
    cf = closed_form(crit)
    assert [(rho, mult) for rho, mult, _ in cf.terms] == [(sp.sqrt(m), 2)]
    seq = crit.iterate([x0, x1], 10)
    for k in range(11):
        assert sp.expand(cf.expr.subs(l, k) - seq[k]) == 0
        assert sp.expand(cf.at(k) - seq[k]) == 0


def test_momentum_critical_damping_numeric():
    rec = dd.momentum(m="1/4", eta=1, lam="-1/4")  # r**2 - r + 1/4 = (r - 1/2)**2
    cf = closed_form(rec)
    assert sp.expand(cf.expr - (x0 + l * (2 * x1 - x0)) / 2**l) == 0
    seq = rec.iterate([x0, x1], 10)
    assert all(sp.expand(cf.expr.subs(l, k) - seq[k]) == 0 for k in range(11))
    assert modes(rec).basis == (sp.Rational(1, 2) ** l, l * sp.Rational(1, 2) ** l)


def test_comparison_generic_formula_is_singular_on_the_surface():
    """rsolve's generic momentum solution (like any generic formula, ours included) is
    0/0 on the critical-damping surface; solving the substituted recurrence is not."""
    lam, m, eta = sp.symbols("lam m eta")
    n = sp.Symbol("n", integer=True)
    x = sp.Function("x")
    generic = sp.rsolve(x(n + 2) - (1 + m + eta * lam) * x(n + 1) + m * x(n), x(n), {x(0): x0, x(1): x1})
    on_surface = generic.subs({m: sp.Rational(1, 4), eta: 1, lam: sp.Rational(-1, 4)})
    assert on_surface.has(sp.zoo) or on_surface.has(sp.nan)
    ours = closed_form(dd.momentum())
    fixed = closed_form(dd.momentum(m="1/4", eta=1, lam="-1/4"))
    assert not fixed.expr.has(sp.zoo, sp.nan)
    # at values on the surface the generic closed form switches to the repeated-root form
    assert ours.at(3, m="1/4", eta=1, lam="-1/4") == fixed.at(3)


# ------------------------------------------------------------ (b) AB3
@pytest.mark.parametrize("lam", ["-1/3", "1/7", "-2", "5/2"])
def test_adams_bashforth_3_symbolic_lam(lam):
    rec = dd.general(**AB3)
    cf = closed_form(rec)  # explicit (Cardano) roots with symbolic lam; ~0.2 s
    assert not cf.expr.has(sp.RootSum)
    sub = rec.subs(lam=lam)
    assert _agrees_with_iteration(cf, sub, [x0, x1, x2], upto=8, lam=lam)
    init = [1, -2, sp.Rational(1, 3)]
    seq = sub.iterate(init, 8)
    for k in range(9):
        num = cf.numeric(k, 30, lam=lam, x_0=init[0], x_1=init[1], x_2=init[2])
        assert abs(num - seq[k]) < sp.Float("1e-25") * (1 + abs(seq[k]))


# ------------------------------------------------------------ (c) AB5
@pytest.mark.parametrize("lam", ["-1/3", "1/5", "-7/4"])
def test_adams_bashforth_5_rootsum(lam):
    rec = dd.general(**AB5)
    cf = closed_form(rec)
    assert cf.expr != 0 and cf.expr.has(sp.RootSum)
    sub = rec.subs(lam=lam)
    xs = sp.symbols("x_0:5")
    assert _agrees_with_iteration(cf, sub, list(xs), upto=9, lam=lam)
    init = [1, 0, 0, 0, 0]
    seq = sub.iterate(init, 12)
    assert any(v != 0 for v in seq[5:])
    for k in range(13):
        num = cf.numeric(k, 30, lam=lam, **{f"x_{i}": v for i, v in enumerate(init)})
        assert abs(num - seq[k]) < sp.Float("1e-28") * (1 + abs(seq[k]))


def test_comparison_rsolve_returns_zero_for_ab5():
    """SymPy 1.14's rsolve answers 0 for AB5 with symbolic lam; the sequence is not 0."""
    rec = dd.general(**AB5)
    lam = sp.Symbol("lam")
    n = sp.Symbol("n", integer=True)
    x = sp.Function("x")
    coeffs = [a[0, 0].xreplace({rec.symbols["lam"]: lam}) for a in rec.coeffs]
    eq = sum(a * x(n + 5 - j) for j, a in enumerate(coeffs))
    xs = sp.symbols("x_0:5")
    theirs = sp.rsolve(eq, x(n), {x(i): xs[i] for i in range(5)})
    seq = rec.subs(lam="1/3").iterate(list(xs), 6)
    ours = closed_form(rec).at(6, lam="1/3")
    assert sp.expand(ours - seq[6]) == 0 and seq[6] != 0
    if theirs == 0:  # the documented failure; ours is right where theirs is wrong
        assert sp.expand(seq[6]) != 0


# ------------------------------------------------------------ (d) zero roots
def test_zero_roots_give_kronecker_deltas():
    rec = dd.general(rho="r**3 - r**2")
    cf = closed_form(rec)
    expected = x2 + (x0 - x2) * sp.KroneckerDelta(l, 0) + (x1 - x2) * sp.KroneckerDelta(l, 1)
    assert sp.expand(cf.expr - expected) == 0
    assert _agrees_with_iteration(cf, rec, [x0, x1, x2])
    assert modes(rec).basis == (1, sp.KroneckerDelta(l, 0), sp.KroneckerDelta(l, 1))
    shifted = closed_form(rec, [1, 2, 3], start=-1)
    assert [shifted.at(k) for k in range(-1, 4)] == [1, 2, 3, 3, 3]
    assert shifted.expr.has(sp.KroneckerDelta(l, -1))


def test_zero_root_with_repeated_nonzero_root():
    rec = dd.from_coefficients([1, -2, 1, 0, 0])  # r**2 (r - 1)**2
    cf = closed_form(rec)
    assert sorted(m for _, m, _ in cf.terms) == [2, 2]
    assert _agrees_with_iteration(cf, rec, list(sp.symbols("x_0:4")), upto=10)


# ------------------------------------------------------ (e) oscillator conventions
def test_oscillator_conventions_differ():
    block = closed_form(dd.oscillator(form="block"), {"x": c, "v": 0}, realisation="content_velocity")
    explicit = closed_form(dd.oscillator(form="explicit"), {"x": c, "v": 0},
                           realisation="content_velocity_forward")
    assert block.initial == ((-1, c), (0, c)) and block.start == -1
    assert explicit.initial == ((0, c), (1, c)) and explicit.start == 0
    values = dict(beta="3/2", L=4, c=1)
    assert block.at(3, **values) != explicit.at(3, **values)
    assert block.check() and explicit.check()


@pytest.mark.parametrize("beta, L", [("3/2", 4), ("1", 10), ("7/3", 5)])
def test_oscillator_explicit_forward_is_real_part(beta, L):
    rec = dd.oscillator(form="explicit", beta=beta, L=L)
    seq = rec.iterate([1, 1], 12)  # x_0 = c = 1, v_0 = x_1 - x_0 = 0
    z = 1 + sp.I * sp.Rational(beta) / L
    for k in range(13):
        assert sp.expand(seq[k] - sp.re(sp.expand(z**k))) == 0  # the claim, checked by iteration
    cf = closed_form(dd.oscillator(form="explicit"), {"x": c, "v": 0}, realisation="content_velocity_forward")
    assert all(sp.expand(cf.at(k, beta=beta, L=L, c=1) - seq[k]) == 0 for k in range(13))


def test_oscillator_block_backward_velocity_by_iteration():
    rec = dd.oscillator(form="block", beta="3/2", L=4)
    seq = rec.iterate([1, 1], 12)  # x_{-1} = x_0 = c = 1: v_0 = x_0 - x_{-1} = 0
    cf = closed_form(dd.oscillator(form="block"), {"x": 1, "v": 0}, realisation="block")
    assert all(sp.expand(cf.at(k - 1, beta="3/2", L=4) - seq[k]) == 0 for k in range(13))


# ------------------------------------------------------------ realisations
def test_difference_realisation_uses_ghost_values():
    rec = dd.smooth(k=3)
    cf = closed_form(rec, realisation="difference")
    q1, q2, q3 = sp.symbols("q1_0 q2_0 q3_0")
    assert cf.initial == ((-2, q1 - 2 * q2 + q3), (-1, q1 - q2), (0, q1))
    assert cf.check()


def test_realisation_errors():
    rec = dd.oscillator()
    with pytest.raises(ParameterError, match="states"):
        closed_form(rec, {"x": 1, "w": 0}, realisation="content_velocity")
    with pytest.raises(RealisationError):
        closed_form(rec, {"x": 1, "v": 0}, realisation="nonsense")
    with pytest.raises(ParameterError, match="realisation"):
        closed_form(rec, {"x": 1, "v": 0})
    with pytest.raises(ParameterError, match="order 2"):
        closed_form(rec, [1])


# ------------------------------------------------------------ matrices
@pytest.mark.parametrize("rec", [
    dd.entangled(n=2),
    dd.entangled(kind="orthogonal", n=3),
    dd.entangled(kind="matrix", Gamma=[[1, 1], [0, 1]]),  # a Jordan block
    dd.entangled(kind="matrix", Gamma=[[0, 1], [0, 0]], lam=0),  # nilpotent
])
def test_matrix_recurrences(rec):
    cf = closed_form(rec)
    assert isinstance(cf.expr, sp.MatrixBase)
    assert cf.check()


def test_matrix_initial_values_must_be_vectors():
    with pytest.raises(ShapeError):
        closed_form(dd.entangled(n=2), [1])


# ------------------------------------------------------ implicit repeated factor
def test_implicit_repeated_factor():
    poly = sp.Poly(sp.expand((r**5 - r - sp.Symbol("a")) ** 2), r)
    rec = dd.from_coefficients([str(a) for a in poly.all_coeffs()], params=["a"])
    cf = closed_form(rec)
    assert cf.expr.has(sp.RootSum) and {m for _, m, _ in cf.terms} == {2}
    assert cf.check(steps=12)


@pytest.mark.parametrize("coeffs, params", [
    (["1", "0", "-2*a", "0", "a**2"], ["a"]),  # (r**2 - a)**2, symbolic radicals
    ([1, 0, 2, 0, 1], []),  # (r**2 + 1)**2: a double complex pair
])
def test_repeated_irreducible_quadratic(coeffs, params):
    rec = dd.from_coefficients(coeffs, params=params)
    cf = closed_form(rec)
    assert len(cf.terms) == 2 and {m for _, m, _ in cf.terms} == {2}
    assert cf.check(steps=10)


# ------------------------------------------------------------ at / check errors
def test_at_errors_and_check_detects_a_wrong_form():
    cf = closed_form(dd.momentum())
    with pytest.raises(ParameterError, match="l >= 0"):
        cf.at(-1)
    with pytest.raises(ParameterError, match="integer"):
        cf.at(sp.Rational(1, 2))
    with pytest.raises(UnknownParameterError):
        cf.at(2, nope=1)
    wrong = replace(cf, initial=((0, x0 + 1), (1, x1)))
    assert not wrong.check()


# ------------------------------------------------------------ property
_rat = st.fractions(min_value=-4, max_value=4, max_denominator=6)


@given(
    st.lists(_rat, min_size=1, max_size=4),
    st.fractions(min_value=1, max_value=4, max_denominator=6),
    st.data(),
)
def test_random_rational_recurrences(tail, lead, data):
    rec = dd.from_coefficients([lead, *tail])
    p = rec.order
    init = data.draw(st.lists(_rat, min_size=p, max_size=p))
    cf = closed_form(rec, init)
    seq = rec.iterate(init, 10)
    for k in range(11):
        assert cf.at(k) == seq[k]
        assert abs(cf.numeric(k, 30) - seq[k]) < sp.Float("1e-24") * (1 + abs(seq[k]))


@given(st.lists(st.tuples(st.fractions(min_value=-2, max_value=2, max_denominator=4), st.integers(1, 3)),
                min_size=1, max_size=3, unique_by=lambda t: t[0]))
def test_random_repeated_roots(roots):
    poly = sp.Poly(sp.prod([(r - sp.Rational(rho)) ** m for rho, m in roots]), r)
    if poly.degree() > 6:
        return
    rec = dd.from_coefficients(poly.all_coeffs())
    init = list(range(1, poly.degree() + 1))
    cf = closed_form(rec, init)
    seq = rec.iterate(init, 10)
    assert all(cf.at(k) == seq[k] for k in range(11))
    assert all(sp.expand(cf.expr.subs(l, k) - seq[k]) == 0 for k in range(11))


# ------------------------------------------------------------ modes
def test_modes_general_solution():
    md = modes(dd.general(rho="r**3 - r**2"))
    c1, c2, c3 = sp.symbols("c_1:4")
    assert md.general_solution == c1 + c2 * sp.KroneckerDelta(l, 0) + c3 * sp.KroneckerDelta(l, 1)
    assert str(md).startswith("x_l = ")
    implicit = modes(dd.general(**AB5))
    assert len(implicit.basis) == 5 and "RootOf" in str(implicit)


# ------------------------------------------------------------ depth limits
def test_depth_limit_residual_scaled():
    rec = dd.residual(scaled=True)
    lam, L = rec.symbols["lam"], rec.symbols["L"]
    res = depth_limit(rec)
    assert sp.simplify(res.limit - sp.exp(lam) * x0) == 0
    assert sp.simplify(res.leading_term + lam**2 * sp.exp(lam) * x0 / (2 * L)) == 0
    assert res.order == 1
    assert "O(L**-2)" in str(res)


def _iterate_mp(a1, a2, xm, x0_, steps):
    """x_{l+1} = a1 x_l + a2 x_{l-1} in mpmath, from (x_{-1}, x_0) -> x_steps."""
    prev, cur = xm, x0_
    for _ in range(steps):
        prev, cur = cur, a1 * cur + a2 * prev
    return cur


def _block_x_L(beta, L):
    e2 = (beta / L) ** 2
    return _iterate_mp(2 - e2, -1, mpmath.mpf(1), mpmath.mpf(1), L)  # x_{-1} = x_0 = 1


def _explicit_x_L(beta, L):
    e2 = (beta / L) ** 2  # x_0 = x_1 = 1: start the same two-step map one layer later
    return _iterate_mp(2, -(1 + e2), mpmath.mpf(1), mpmath.mpf(1), L - 1)


def test_depth_limit_oscillator_block_backward():
    rec = dd.oscillator(form="block")
    beta, L = rec.symbols["beta"], rec.symbols["L"]
    res = depth_limit(rec, {"x": c, "v": 0}, realisation="content_velocity")
    assert sp.simplify(res.limit - c * sp.cos(beta)) == 0
    assert res.order == 1
    coeff = (res.leading_term * L).subs({c: 1, beta: sp.Rational(13, 10)})
    with mpmath.workdps(50):
        b = mpmath.mpf(13) / 10
        for depth in (10**3, 10**4, 10**5):
            scaled = depth * (_block_x_L(b, depth) - mpmath.cos(b))
            assert abs(scaled - mpmath.mpf(sp.N(coeff, 50))) < 2.0 / depth
    # independent derivation: x_L = c cos(L theta + theta/2) / cos(theta/2), 2 sin(theta/2) = beta/L
    assert sp.simplify(coeff - (-sp.Rational(13, 10) * sp.sin(sp.Rational(13, 10)) / 2)) == 0


def test_depth_limit_oscillator_explicit_forward_slope():
    rec = dd.oscillator(form="explicit")
    beta = rec.symbols["beta"]
    res = depth_limit(rec, {"x": c, "v": 0}, realisation="content_velocity_forward")
    assert sp.simplify(res.limit - c * sp.cos(beta)) == 0
    assert res.order == 1
    with mpmath.workdps(50):
        b = mpmath.mpf(13) / 10
        depths = (10**3, 10**4, 10**5)
        errs = [abs(_explicit_x_L(b, d) - mpmath.cos(b)) for d in depths]
        slope = (math.log(errs[-1]) - math.log(errs[0])) / (math.log(depths[-1]) - math.log(depths[0]))
        assert abs(slope + res.order) < 0.01
        coeff = (res.leading_term * rec.symbols["L"]).subs({c: 1, beta: sp.Rational(13, 10)})
        scaled = depths[-1] * (_explicit_x_L(b, depths[-1]) - mpmath.cos(b))
        assert abs(scaled - mpmath.mpf(sp.N(coeff, 50))) < 1e-3


def test_depth_limit_scaled_velocity_and_decaying_mode():
    rec = dd.oscillator(form="block")
    beta, L = rec.symbols["beta"], rec.symbols["L"]
    w = sp.Symbol("w")
    res = depth_limit(rec, {"x": c, "v": w / L}, realisation="content_velocity")
    assert sp.simplify(res.limit - (c * sp.cos(beta) + w * sp.sin(beta) / beta)) == 0
    # momentum-like: roots -> 1 and m = 1/2; the second mode decays geometrically
    mom = dd.from_coefficients([1, "-(1 + m + lam/L)", "m"], params=["lam", "m", "L"], m="1/2")
    out = depth_limit(mom, [x0, x0])
    assert sp.simplify(out.limit - x0 * sp.exp(2 * mom.symbols["lam"])) == 0


def test_depth_limit_errors():
    with pytest.raises(UnknownParameterError):
        depth_limit(dd.residual())
    with pytest.raises(ParameterError, match="diverges"):
        depth_limit(dd.oscillator())  # an O(1) velocity over L layers grows like L
    growing = dd.from_coefficients([1, "-(2 + lam/L)"], params=["lam", "L"])
    with pytest.raises(ParameterError, match="tends to 2"):
        depth_limit(growing)
    with pytest.raises(ShapeError):
        depth_limit(dd.entangled(n=2))
    quintic = dd.from_coefficients([1, 0, 0, 0, -1, "-1/L"], params=["L"])  # roots -1, +-i of r^5 - r
    with pytest.raises(ParameterError, match="not inside the unit circle"):  # expanded from P itself
        depth_limit(quintic)
    # (r - 1 - 1/L)^2 (r - 1 + 2/L) + 1/L^4: two roots near 1 agree to first order
    close = dd.from_coefficients(["L**4", "-3*L**4", "3*L**4 - 3*L**2", "-L**4 + 3*L**2 + 2*L + 1"],
                                 params=["L"])
    with pytest.raises(DegreeTooLargeError, match="agree to first order"):
        depth_limit(close)
