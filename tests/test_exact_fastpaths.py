"""The fast paths of the exact core give the answers of the slow ones they replace.

Each fast path (Schur-Cohn minors by one Bareiss elimination in ``lam`` and its conjugate,
signs of univariate polynomials by root counting, exact evaluation of conditions in
fractions, Gaussian square roots of quadratic discriminants, per-point conditions in
``check``) is compared with an independent computation: SymPy determinants of the
Schur-Cohn matrix built here from its definition, ``solve_univariate_inequality``,
``xreplace``, numeric roots. Each comparison is shown to fail on a wrong input.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.families import adams_bashforth, bdf, deepnet, kromhc
from depthdyn.numeric import check as check_module
from depthdyn.recurrence import r
from depthdyn.symbolic import stability
from depthdyn.symbolic.polynomial import _sqrt, roots
from depthdyn.symbolic.signs import _univariate_sign

Q = sp.Rational
re_, im_ = sp.Symbol("lam_re", real=True), sp.Symbol("lam_im", real=True)


def _definition_minors(rec):
    """Leading principal minors of the Schur-Cohn matrix, from its definition, by SymPy det."""
    p = sp.Poly(sp.expand(rec.charpoly().xreplace({rec.lam_symbol: re_ + sp.I * im_})), r)
    a = p.all_coeffs()[::-1]
    ac = [sp.conjugate(c) for c in a]
    n = len(a) - 1
    C = sp.Matrix(n, n, lambda i, j: sum(ac[n - i - 1 + k] * a[n - j - 1 + k] - a[i + 1 - k] * ac[j + 1 - k]
                                         for k in range(1, min(i, j) + 2)))
    return [sp.expand(C[:m, :m].det(method="berkowitz")) for m in range(1, n + 1)]


@pytest.mark.parametrize("make", [dd.momentum, lambda: bdf(k=3), lambda: adams_bashforth(k=3),
                                  lambda: dd.general(rho="r**3 - a*r + 1/3", sigma="r**2")])
def test_bareiss_minors_equal_determinants(make):
    rec = make()
    z = sp.Dummy("z")
    p = sp.Poly(rec.charpoly().xreplace({rec.lam_symbol: z}), r)
    got = stability._schur_cohn_minors(p, z, (re_, im_))
    want = _definition_minors(rec)
    assert [sp.expand(g - w) for g, w in zip(got, want, strict=True)] == [0] * len(want)
    # a wrong coefficient changes the minors
    wrong = sp.Poly(p.as_expr() + sp.Rational(1, 7), r)
    assert [sp.expand(g) for g in stability._schur_cohn_minors(wrong, z, (re_, im_))] != want


def test_zero_pivot_falls_back_and_is_never_stable():
    # r^2 - lam r + 1: |a_0| = |a_2| identically, the first minor is 0 (product of roots 1)
    rec = dd.general(rho="r**2 + 1", sigma="r")
    sc = stability.stability_conditions(rec, lam="complex")
    assert sc.never
    z = sp.Dummy("z")
    minors = stability._schur_cohn_minors(sp.Poly(r**2 - z * r + 1, r), z, (re_, im_))
    want = _definition_minors(rec)
    assert minors[0] == 0 and sp.expand(minors[1] - want[1]) == 0


x = sp.Symbol("x", real=True)
DOMAINS = [sp.Reals, sp.Interval(0, 1), sp.Interval.Ropen(0, 1), sp.Interval.open(0, 1),
           sp.Interval(0, sp.oo), sp.Interval.open(1, 3), sp.Interval(-sp.oo, 2)]


def _reference_sign(f, dom, strict):
    for sgn, bad in ((1, f <= 0 if strict else f < 0), (-1, f >= 0 if strict else f > 0)):
        if sp.solve_univariate_inequality(bad, x, relational=False, domain=dom).is_empty:
            return sgn
    return None


@pytest.mark.parametrize("f", [x**2 - x, (x - 1)**2, -(x - 3)**2 * (x**2 + 1), x**3 - 2,
                               (x - 1) * (x - 3), x + 5, 2 * (x - Q(1, 2))**2 + 1])
def test_univariate_sign_matches_solve_univariate_inequality(f):
    for dom in DOMAINS:
        for strict in (True, False):
            assert _univariate_sign(sp.expand(f), x, dom, strict) == _reference_sign(f, dom, strict), (dom, strict)


def test_univariate_sign_can_change_with_the_domain():
    f = sp.expand((x - 1) * (x - 3))
    assert _univariate_sign(f, x, sp.Interval.open(1, 3), True) == -1
    assert _univariate_sign(f, x, sp.Interval(1, 3), True) is None  # vanishes at the ends
    assert _univariate_sign(f, x, sp.Interval(1, 3), False) == -1
    assert _univariate_sign(f, x, sp.Interval(0, 3), False) is None
    assert _univariate_sign(x - sp.sqrt(2), x, sp.Reals, True) is NotImplemented  # not rational


@pytest.mark.parametrize("mode", ["real", "complex"])
@pytest.mark.parametrize("make", [dd.momentum, lambda: dd.hyper_connection(n=2), deepnet, kromhc])
def test_fraction_evaluation_equals_xreplace(make, mode):
    sc = stability.stability_conditions(make(), lam=mode)
    syms = [s for s, _ in sc.domains]
    rng = random.Random(4)
    for _ in range(5):
        values = {s: Q(rng.randint(1, 999), 512) for s in syms}
        for cond in sc.conditions + sc.implied_by_domain:
            assert stability._at(cond, values) == cond.xreplace(values)
    if not sc.never:  # a wrong value changes some verdict
        cond = sc.conditions[0]
        far = {s: Q(rng.randint(1, 999), 512) for s in syms}
        flipped = sp.StrictGreaterThan(-cond.lhs, 0)
        assert stability._at(cond, far) != stability._at(flipped, far)


def test_gaussian_square_root_is_exact():
    for d in (-3 + 4 * sp.I, 2 * sp.I, Q(-7, 4) - 6 * sp.I):
        w = _sqrt(sp.sympify(d))
        assert not w.has(sp.Pow) and sp.expand(w**2 - d) == 0
    assert _sqrt(sp.I).has(sp.Pow) and _sqrt(5 + sp.I) == sp.sqrt(5 + sp.I)  # not squares in Q(i)


def test_gaussian_quadratic_roots_match_numeric():
    # (r - (1 + 2i)) (r - (1/2 - i)) and a quadratic whose discriminant is no square in Q(i)
    for expr in (sp.expand((r - 1 - 2 * sp.I) * (r - Q(1, 2) + sp.I)), r**2 - r + 1 + sp.I):
        coeffs = sp.Poly(expr, r).all_coeffs()
        rec = dd.from_coefficients(coeffs)
        got = sorted((complex(sp.N(v, 30)) for v in roots(rec).values()), key=lambda z: (z.real, z.imag))
        want = sorted(np.roots([complex(c) for c in coeffs]), key=lambda z: (z.real, z.imag))
        assert np.allclose(got, want, atol=1e-12)
    rts = roots(dd.from_coefficients(sp.Poly(sp.expand((r - 1 - 2 * sp.I) * (r - Q(1, 2) + sp.I)),
                                              r).all_coeffs())).values()
    assert set(rts) == {1 + 2 * sp.I, Q(1, 2) - sp.I}


def test_check_per_point_fallback_passes_and_can_fail(monkeypatch):
    rec = dd.hyper_connection(n=2)
    monkeypatch.setattr(check_module, "PARAMETRIC_SECONDS", 1e-9)  # refuse the parametric route
    report = check_module.check(rec, samples=4, closed_form_samples=1)
    assert report.passed
    notes = [row.note for row in report.rows if row.name.startswith("stability (complex")]
    assert notes and all("per point" in note for note in notes)

    class Never:
        never = True

        def holds(self, *a, **k):
            return False

    real = stability.stability_conditions
    monkeypatch.setattr(stability, "stability_conditions",
                        lambda r, lam="real": Never() if lam == "complex" else real(r, lam=lam))
    assert not check_module.check(rec, samples=4, closed_form_samples=1).passed
