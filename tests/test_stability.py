"""Exact stability conditions and the root condition, against hand derivations and numeric roots."""

import itertools
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.errors import DegreeTooLargeError, DomainError, ParameterError
from depthdyn.recurrence import r
from depthdyn.symbolic.stability import root_condition, stability_conditions

Q = sp.Rational


def max_modulus(coeffs, digits=50):
    """Largest root modulus of sum c_j r^(n-j), numerically (mpmath, independent of sympy)."""
    with mpmath.workdps(digits):
        exact = [(sp.Rational(sp.re(c)), sp.Rational(sp.im(c))) for c in map(sp.sympify, coeffs)]
        cs = [mpmath.mpc(mpmath.mpf(a.p) / a.q, mpmath.mpf(b.p) / b.q) for a, b in exact]
        if len(cs) == 2:
            return abs(-cs[1] / cs[0])
        try:
            rts = mpmath.polyroots(cs, maxsteps=400, extraprec=400)
        except mpmath.libmp.NoConvergence:
            rts = mpmath.polyroots(cs, maxsteps=4000, extraprec=2000)
        return max(abs(z) for z in rts)


# ----------------------------------------------------------------------- momentum
def test_momentum_exact_conditions_printed():
    sc = stability_conditions(dd.momentum())
    eta, lam, m = sp.symbols("eta lam m")
    got = {sp.sympify(s) for s in sc.to_json()["conditions"]}
    # Jury for r^2 - b r + m: |m| < 1 and |b| < 1 + m, b = 1 + m + eta*lam
    assert got == {sp.StrictGreaterThan(eta * lam + 2 * m + 2, 0), sp.StrictGreaterThan(-eta * lam, 0)}
    assert [sp.sympify(s) for s in sc.to_json()["implied_by_domain"]] == [sp.StrictGreaterThan(1 - m, 0)]
    assert not sc.never and sc.to_json()["never"] is False
    assert "lam real" in sc.assumptions
    assert "eta*lam + 2*m + 2 > 0" in str(sc) and "\\wedge" in sc._latex()


def test_momentum_region_equals_hand_inequality_on_grid():
    sc = stability_conditions(dd.momentum())
    ms, etas = [0, Q(1, 4), Q(1, 2), Q(3, 4), Q(9, 10)], [Q(1, 2), 1, Q(3, 2), 3]
    for m, eta, k in itertools.product(ms, etas, range(29)):
        lam = -6 + Q(k, 4)
        expected = -2 * (1 + m) < eta * lam < 0
        assert sc.holds(m=m, eta=eta, lam=lam) == expected, (m, eta, lam)


def test_momentum_region_agrees_with_numeric_roots():
    sc = stability_conditions(dd.momentum())
    lams = [-7, Q(-5, 2), -1, Q(-1, 10), Q(1, 5)]
    for m, eta, lam in itertools.product([0, Q(1, 3), Q(4, 5)], [Q(1, 3), 2], lams):
        b = 1 + m + eta * lam
        assert sc.holds({"m": m, "eta": eta, "lam": lam}) == (max_modulus([1, -b, m]) < 1)


def test_momentum_solve_for_lam():
    rec = dd.momentum()
    sc = stability_conditions(rec)
    lam, m, eta = sp.Symbol("lam", real=True), rec.symbols["m"], rec.symbols["eta"]
    solved = sc.solve_for("lam")
    assert isinstance(solved, sp.And) and len(solved.args) == 2
    bounds = {type(rel): rel.rhs for rel in solved.args if rel.lhs == lam}
    assert set(bounds) == {sp.StrictGreaterThan, sp.StrictLessThan}
    assert sp.simplify(bounds[sp.StrictGreaterThan] + 2 * (1 + m) / eta) == 0
    assert bounds[sp.StrictLessThan] == 0
    assert sp.sstr(solved) == "(lam < 0) & (lam > -2*(m + 1)/eta)"
    assert sp.simplify(sc.solve_for("m").subs({eta: 1, lam: -1, m: Q(1, 2)})) == sp.true
    with pytest.raises(ParameterError, match="sign"):
        sc.solve_for("eta")  # slope lam has no known sign


def test_momentum_complex_lam_against_roots():
    rec = dd.momentum(m=Q(1, 2), eta=1)
    sc = stability_conditions(rec, lam="complex")
    assert "lam_re" in " ".join(sc.assumptions) and "Schur-Cohn" in sc.method
    points = [(-1, Q(1, 2)), (-1, Q(1, 5)), (Q(-1, 2), Q(1, 2)), (Q(-3, 2), Q(1, 4)), (Q(-1, 10), 0),
              (-2, 1), (Q(-1, 4), Q(-1, 3)), (Q(1, 10), Q(1, 10)), (-3, Q(1, 10)), (Q(-29, 10), 0)]
    results = set()
    for re_, im_ in points:
        lam = re_ + sp.I * im_
        expected = max_modulus([1, -(Q(3, 2) + lam), Q(1, 2)]) < 1
        assert sc.holds(lam_re=re_, lam_im=im_) == expected, (re_, im_)
        assert sc.holds(lam=lam) == expected
        results.add(expected)
    assert results == {True, False}
    # lam = -1 + i/2: r^2 - (1 + i) r / 2 + 1/2, roots ((1 + i) +- sqrt(-8 + 2i)) / 4; sqrt(-8 + 2i) has
    # imaginary part sqrt((sqrt(68) + 8)/2) > 2.8, so one root has |Im r| > (1 + 2.8)/4 = 0.95 and
    # |Re r| > (1 + 0.35)/4 = 0.33 (real part sqrt((sqrt(68) - 8)/2) = 0.35): |r|^2 > 0.90 + 0.11 > 1
    assert sc.holds(lam=-1 + sp.I / 2) is False
    assert sc.holds(lam=Q(-1, 2)) is True  # r^2 - r + 1/2: roots (1 +- i)/2, |r| = 1/sqrt(2)


def test_complex_numeric_coefficients_use_doubling():
    cases = [([1, -sp.I / 2], True), ([1, -(1 + sp.I) * Q(3, 4)], False), ([1, -sp.I, Q(-1, 4)], None)]
    for coeffs, stable in cases:
        rec = dd.from_coefficients(coeffs)
        expected = max_modulus(coeffs) < 1 if stable is None else stable
        assert stability_conditions(rec).holds() == expected
        assert root_condition(rec).strict == expected


# ----------------------------------------------------------------------- C^k nets
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_smooth_nets_never_strictly_stable(k):
    sc = stability_conditions(dd.smooth(k=k))
    assert sc.never and sc.conditions == (sp.false,) and sc.reason
    assert sc.holds(lam=-1, h=Q(1, 2)) is False
    assert sc.region == sp.false
    # independent reasons: |product of roots| = |(-1)^k| = 1, and for odd k the conditions clash
    assert "product of the roots| = 1" in sc.reason
    assert ("contradict" in sc.reason) == (k % 2 == 1)
    assert str(sc).startswith("never strictly stable")


def test_residual_c1_net_interval():
    sc = stability_conditions(dd.smooth(k=1))
    assert not sc.never
    for h, k in itertools.product([Q(1, 3), 1, 2], range(-30, 8)):
        lam = Q(k, 5)
        assert sc.holds(h=h, lam=lam) == (-2 < h * lam < 0), (h, lam)


# ----------------------------------------------------------------------- other families vs roots
@pytest.mark.parametrize("rec, point", [
    (dd.entangled(), {"gamma": Q(1, 2)}),
    (dd.highway(), {"g": Q(1, 3)}),
    (dd.general(rho="r**3 - a*r**2 + b", sigma="r**2"), {"a": Q(1, 2), "b": Q(-1, 5)}),
    (dd.from_coefficients(["a", 1], params=["a"]), {}),
    (dd.oscillator(form="explicit"), {"L": 3}),
])
def test_parametric_conditions_match_numeric_roots(rec, point):
    sc = stability_conditions(rec)
    free = [p.name for p in rec.params if p.name not in point]
    outcomes = set()
    for vals in itertools.product([Q(-9, 4), Q(-1, 3), Q(1, 7), Q(5, 4), Q(7, 3)], repeat=len(free)):
        values = dict(point, **dict(zip(free, vals, strict=True)))
        try:
            sub = rec.subs(values)
        except (ParameterError, ValueError):
            continue  # outside a domain or singular leading coefficient
        coeffs = sp.Poly(sub.charpoly(), r).all_coeffs()
        expected = max_modulus(coeffs) < 1
        assert sc.holds(values) == expected, values
        outcomes.add(expected)
    assert outcomes == {True, False} or rec.name == "oscillator"


# ----------------------------------------------------------------------- property test
coeff = st.fractions(min_value=-3, max_value=3, max_denominator=6)


@given(st.integers(1, 5).flatmap(lambda n: st.lists(coeff, min_size=n + 1, max_size=n + 1)))
def test_random_numeric_polynomials(cs):
    if cs[0] == 0:
        cs[0] = Fraction(1)
    coeffs = [Q(c.numerator, c.denominator) for c in cs]
    rho = max_modulus(coeffs)
    rec = dd.from_coefficients(coeffs)
    sc, rc = stability_conditions(rec), root_condition(rec)
    assert abs(rc.spectral_radius - float(rho)) < 1e-9 * (1 + float(rho))
    if abs(rho - 1) < mpmath.mpf("1e-40"):
        assert not sc.holds() and not rc.strict
    elif abs(rho - 1) > 1e-8:
        assert sc.holds() == (rho < 1) == rc.strict
        assert sc.never == (rho >= 1)
        if rho < 1:
            assert rc.marginal


# ----------------------------------------------------------------------- root condition
def poly_rec(expr):
    return dd.from_coefficients(sp.Poly(sp.expand(expr), r).all_coeffs())


@pytest.mark.parametrize("expr, strict, marginal, radius", [
    ((r - 1) ** 2, False, False, 1.0),
    (r**2 + 1, False, True, 1.0),
    ((r - 2) * (r - Q(1, 2)), False, False, 2.0),
    ((r**2 + 1) ** 2, False, False, 1.0),
    ((r - 1) * (r + Q(1, 2)) ** 3, False, True, 1.0),
    (r**2 - r / 2, True, True, 0.5),
    ((r - Q(1, 3)) ** 2 * (r + Q(2, 3)), True, True, 2 / 3),
    (r**2 - sp.sqrt(2) * r + 1, False, True, 1.0),
    (r - sp.I, False, True, 1.0),
    ((r - sp.I) ** 2, False, False, 1.0),
])
def test_root_condition_cases(expr, strict, marginal, radius):
    rc = root_condition(poly_rec(expr))
    assert (rc.strict, rc.marginal) == (strict, marginal)
    assert abs(rc.spectral_radius - radius) < 1e-12
    assert sum(k for _, k, _ in rc.roots) == sp.degree(expr, r)
    assert "spectral radius" in str(rc) and "\\rho" in rc._latex()


def test_root_condition_dense_roots_of_unity():
    rc = root_condition(dd.dense(k=3, lam=0))  # r^3 - 1: three simple roots on the circle
    assert not rc.strict and rc.marginal and len(rc.roots) == 3
    assert all(k == 1 and mod == 1.0 for _, k, mod in rc.roots)
    assert not root_condition(dd.smooth(k=3, lam=0)).marginal  # (r - 1)^3


# ----------------------------------------------------------------------- errors
def test_errors():
    with pytest.raises(ParameterError, match="eta.*lam.*m|lam.*eta"):
        root_condition(dd.momentum())
    with pytest.raises(DegreeTooLargeError):
        stability_conditions(dd.from_coefficients([1] * 13 + ["a"], params=["a"]))
    with pytest.raises(DegreeTooLargeError):
        stability_conditions(dd.from_coefficients([1] * 13 + ["lam"], params=["lam"], lam="lam"), lam="complex")
    with pytest.raises(ParameterError):
        stability_conditions(dd.momentum(), lam="imaginary")
    sc = stability_conditions(dd.momentum())
    with pytest.raises(ParameterError, match="eta"):
        sc.holds(m=Q(1, 2), lam=-1)
    with pytest.raises(DomainError):
        sc.holds(m=2, eta=1, lam=-1)
    with pytest.raises(ParameterError):
        sc.holds(m=0, eta=1, lam=sp.I)  # lam is real in this mode
