"""Roots, multiplicities, Vieta relations, discriminants and root structure."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.recurrence import r


def test_momentum_hand_derivation():
    rec = dd.momentum()
    lam, m, eta = (rec.symbols[s] for s in ("lam", "m", "eta"))
    v = dd.vieta(rec)
    assert v.holds and all(rel.method == "exact" for rel in v.relations)
    assert sp.expand(v.product - m) == 0
    assert sp.expand(v.sum - (1 + m + eta * lam)) == 0
    assert sp.expand(dd.discriminant(rec) - ((1 + m + eta * lam) ** 2 - 4 * m)) == 0


@pytest.mark.parametrize(
    "m, eta, lam",
    [("1/4", "1", "-1/5"), ("9/10", "2", "-1"), ("1/2", "1", "-3"), ("0", "1", "1/3"), ("1/4", "1", "-1/4")],
)
def test_momentum_complex_exactly_when_discriminant_negative(m, eta, lam):
    rec = dd.momentum(m=m, eta=eta, lam=lam)
    disc = dd.discriminant(rec)
    values = [complex(sp.N(v, 30)) for v in dd.roots(rec).values()]
    complex_pair = any(abs(z.imag) > 1e-20 for z in values)
    assert complex_pair == (disc < 0)
    if disc == 0:
        assert len(dd.roots(rec).roots) == 1
    if complex_pair:  # |r| = sqrt(m) on the complex branch (product of a conjugate pair)
        assert all(abs(abs(z) - float(sp.sqrt(sp.Rational(m)))) < 1e-12 for z in values)


@pytest.mark.parametrize("k", range(1, 7))
def test_repeated_root_of_smooth_net(k):
    rts = dd.roots(dd.smooth(k=k, lam=0))
    assert [(rt.value, rt.multiplicity) for rt in rts] == [(1, k)]


def test_implicit_roots_are_never_invented():
    rec = dd.general(rho="r**5 - r**4", sigma="r**4 + r + 1")
    rts = dd.roots(rec)
    assert not rts.explicit and rts.degree == 5
    assert "RootOf" in str(rts)
    v = dd.vieta(rec)
    assert v.holds and "numeric" in v.relations[0].method


def test_vieta_detects_a_wrong_relation():
    import random

    from depthdyn.symbolic.polynomial import _numeric_vieta, _vieta_points

    points = _vieta_points(dd.momentum(), 3, 30, random.Random(0))
    m = dd.momentum().symbols["m"]
    assert _numeric_vieta(points, 2, m, 30)
    assert not _numeric_vieta(points, 2, m + 1, 30)


def test_root_structure_of_cubic():
    rec = dd.general(rho="r**3 - r", sigma="1")
    cases = dict((what, cond) for cond, what in dd.root_structure(rec).cases)
    lam = sp.Symbol("lam", real=True)
    # r^3 - r - lam: three real roots iff |lam| < 2/(3 sqrt 3)
    assert cases["three distinct real roots"].subs(lam, sp.Rational(1, 10)) == sp.true
    assert cases["one real root and a complex-conjugate pair"].subs(lam, 1) == sp.true


coeff = st.fractions(min_value=-4, max_value=4, max_denominator=5).map(
    lambda f: sp.Rational(f.numerator, f.denominator)
)


@given(st.lists(coeff, min_size=1, max_size=4))
def test_roots_satisfy_polynomial_and_vieta(tail):
    rec = dd.from_coefficients([1, *tail])
    poly = sp.Poly(rec.charpoly(), r)
    rts = dd.roots(rec)
    assert rts.degree == poly.degree()
    for rt in rts:
        if isinstance(rt.value, sp.CRootOf):
            # a CRootOf is a root of its defining factor: check that factor divides p exactly
            # the right number of times (evaluating CRootOf to many digits is slow)
            base = sp.Poly(rt.value.expr, r)
            assert sp.rem(poly, base**rt.multiplicity).is_zero
            assert not sp.rem(poly, base ** (rt.multiplicity + 1)).is_zero
            continue
        z = sp.N(rt.value, 60)

        def at(q, z=z):
            return abs(complex(q.as_expr().subs(r, z).evalf(60)))

        # multiplicity: p and its first mult-1 derivatives vanish there, the next does not
        for j in range(rt.multiplicity):
            assert at(poly.diff((r, j))) < 1e-30
        assert at(poly.diff((r, rt.multiplicity))) > 1e-20
    assert dd.vieta(rec).holds
    # independent: companion eigenvalues (numpy) sum to minus the next coefficient
    nums = np.roots([float(c) for c in [1, *tail]])
    assert abs(complex(nums.sum()) + float(tail[0])) < 1e-8


@given(st.lists(coeff, min_size=2, max_size=3))
def test_discriminant_sign_classifies_real_roots(tail):
    rec = dd.from_coefficients([1, *tail])
    disc = dd.discriminant(rec)
    if disc == 0:  # repeated root (nroots does not converge there)
        assert len(dd.roots(rec).roots) < rec.order
        return
    values = [complex(z) for z in sp.Poly(rec.charpoly(), r).nroots(n=40, maxsteps=200)]
    pairs = sum(1 for z in values if z.imag > 1e-25)
    assert pairs % 2 == (0 if disc > 0 else 1)


def test_records_print():
    rec = dd.momentum()
    assert "multiplicity 1" in str(dd.roots(rec))
    assert "holds" in str(dd.vieta(rec))
    assert dd.vieta(rec)._repr_latex_().startswith("$")
    assert "complex-conjugate pair" in str(dd.root_structure(rec))
