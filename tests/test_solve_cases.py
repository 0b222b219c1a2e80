"""Closed forms on repeated-root surfaces: the case split and numeric evaluation there,
against exact iteration of the substituted recurrence (an independent computation)."""

import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.symbolic.solve import closed_form, l

Q = sp.Rational


def by_name(expr, values, index):
    syms = {s.name: s for s in expr.free_symbols}
    return sp.cancel(expr.xreplace({syms[k]: sp.sympify(v) for k, v in values.items() if k in syms})
                       .xreplace({l: index}))


# momentum: r^2 - (1 + m + eta lam) r + m has a double root where (1 + m + eta lam)^2 = 4 m,
# i.e. lam = (+-2 sqrt(m) - 1 - m) / eta; m a rational square keeps the point rational
SURFACE = [dict(m=Q(1, 4), eta=1, lam=Q(-1, 4)), dict(m=Q(1, 4), eta=2, lam=Q(-9, 8)),
           dict(m=Q(9, 16), eta=Q(1, 2), lam=Q(-1, 8)), dict(m=0, eta=1, lam=-1)]
OFF = [dict(m=Q(1, 4), eta=1, lam=Q(-1, 2)), dict(m=Q(1, 2), eta=1, lam=Q(1, 3))]


@pytest.mark.parametrize("point", SURFACE + OFF)
def test_momentum_closed_form_on_and_off_the_surface(point):
    rec, cf = dd.momentum(), closed_form(dd.momentum())
    init = dict(x_0=Q(3, 2), x_1=-1)
    seq = rec.subs(point).iterate([init["x_0"], init["x_1"]], 9)
    (c_on, e_on), (c_off, e_off) = cf.cases()
    on = (1 + point["m"] + point["eta"] * point["lam"]) ** 2 == 4 * point["m"] and point["m"] != 0
    assert by_name(c_on, point, 0) == on
    for k in range(10):
        assert cf.at(k, **point, **init) == seq[k]
        assert abs(cf.numeric(k, **point, **init) - seq[k]) < 1e-25
        if point["m"] != 0:  # m = 0 on the surface: a double root at 0, in neither case
            assert by_name(e_on if on else e_off, {**point, **init}, k) == seq[k]
    assert sp.Piecewise(*[(e, c) for c, e in cf.cases()]) == cf.piecewise()
    if on:  # the generic form is 0/0 there, and the surface form is wrong off the surface
        assert by_name(e_off, {**point, **init}, 3).has(sp.nan, sp.zoo) or \
            sp.N(by_name(e_off, {**point, **init}, 3)) != seq[3]
    else:
        assert by_name(e_on, {**point, **init}, 4) != seq[4]


@pytest.mark.parametrize("a, b", [(Q(3, 4), Q(1, 16)), (Q(1, 2), 0), (Q(3, 2), Q(1, 2))])
def test_cubic_double_root_surface(a, b):
    # (r - s)^2 (r + s/2) = r^3 - (3 s/2) r^2 + s^3/2: a = 3s/2, b = s^3/2 (s = 1/2, 1); b = 0: r^2 (r - a)
    rec = dd.general(rho="r**3 - a*r**2 + b")
    cf = closed_form(rec)
    init = dict(x_0=1, x_1=2, x_2=-1)
    seq = rec.subs(a=a, b=b).iterate([1, 2, -1], 7)
    (cond, expr), _ = cf.cases()
    assert by_name(cond, dict(a=a, b=b), 0) == (b != 0)  # b = 0: double root at 0
    for k in range(8):
        assert cf.at(k, a=a, b=b, **init) == seq[k]
        assert abs(cf.numeric(k, a=a, b=b, **init) - seq[k]) < 1e-25
        if b != 0:
            assert by_name(expr, dict(a=a, b=b, **init), k) == seq[k]


def test_no_parameters_means_one_case():
    cf = closed_form(dd.general(rho="(r - 1)**2"))
    assert cf.cases() == ((sp.true, cf.expr),)
