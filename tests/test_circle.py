"""Exact root placement against the unit circle: roots built from chosen factors, so the
expected verdict is known by construction, not computed by the code under test."""

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.errors import ParameterError
from depthdyn.recurrence import r
from depthdyn.symbolic.circle import circle_roots, exact_poly, on_circle_count
from depthdyn.symbolic.stability import root_condition

Q, I = sp.Rational, sp.I

# (root, where): where = -1 inside, 0 on, +1 outside the unit circle, known by hand
POOL = [
    (Q(1, 2), -1), (Q(-2, 3), -1), (I / 3, -1), (Q(1, 3) + I / 2, -1), (1 - Q(1, 10**40), -1),
    (-1 + Q(1, 10**25), -1), (Q(1, 10**30), -1), (sp.S.Zero, -1),
    (sp.S.One, 0), (sp.S.NegativeOne, 0), (I, 0), ((3 + 4 * I) / 5, 0), ((-1 + sp.sqrt(3) * I) / 2, 0),
    (Q(2), 1), (1 + Q(1, 10**40), 1), (Q(-5, 4) * I, 1), (sp.sqrt(2), 1), (1 + I * Q(1, 10**20), 1),
]


def rec_from_roots(roots):
    return dd.from_coefficients(sp.Poly(sp.expand(sp.prod([r - z for z in roots])), r).all_coeffs())


def expected(chosen):
    """Verdicts of the root condition from the construction: (strict, marginal)."""
    strict = all(w < 0 for _, w, _ in chosen)
    marginal = all(w < 0 or (w == 0 and k == 1) for _, w, k in chosen)
    return strict, marginal


@pytest.mark.parametrize("roots, strict, marginal", [
    ([1 - Q(1, 10**40)], True, True),                 # inside by 1e-40: decided, not "cannot decide"
    ([1 + Q(1, 10**40)], False, False),               # outside by 1e-40
    ([1], False, True),                               # simple root on the circle passes
    ([1, 1], False, False),                           # double root on the circle fails
    ([1, 1 - Q(1, 10**40)], False, True),             # two distinct roots 1e-40 apart
    ([I, I, Q(1, 2)], False, False),
    ([(3 + 4 * I) / 5, (3 - 4 * I) / 5, Q(-1, 2)], False, True),
    ([(1 + sp.sqrt(2) * I) / sp.sqrt(3), sp.sqrt(2) / 2 * (1 - I), Q(3, 4) * sp.sqrt(2) * (1 + I) / 2], False, True),
    ([(1 + sp.sqrt(2) * I) / sp.sqrt(3) * (1 + Q(1, 10**30))], False, False),
    # a pair 2e-40 apart around 1 beside a root 1e-30: the Newton polygon's groups alone leave the pair
    # a conjugate pair off by 1e-18 at every precision (found by the property test below)
    ([1 - Q(1, 10**40), Q(1, 10**30), 1 + Q(1, 10**40)], False, False),
    ([1 - Q(1, 10**40), Q(1, 10**30), 1], False, True),
    ([-1 + Q(1, 10**25), Q(1, 10**30), -1], False, True),
])
def test_near_and_on_circle(roots, strict, marginal):
    rc = root_condition(rec_from_roots(roots))
    assert (rc.strict, rc.marginal) == (strict, marginal)
    assert sum(k for _, k, _ in rc.roots) == len(roots)


def test_complex_lam_with_radical_roots():
    rec = dd.general(rho="r**2 - r", sigma="3*r/2 - 1/2")
    for lam in (Q(-1, 2) + I / 2, Q(-3, 2) + I, Q(-1, 10) + I / 10, Q(-2, 3)):
        coeffs = sp.Poly(rec.subs(lam=lam).charpoly(), r).all_coeffs()
        with mpmath.workdps(60):  # independent: mpmath roots of the same polynomial
            cs = [mpmath.mpc(*(mpmath.mpf(sp.Rational(p).p) / sp.Rational(p).q for p in c.as_real_imag()))
                  for c in coeffs]
            rho = max(abs(z) for z in mpmath.polyroots(cs, extraprec=200))
        assert abs(rho - 1) > 1e-6  # the chosen values are far from the boundary
        rc = root_condition(rec.subs(lam=lam))
        assert rc.strict == (rho < 1), lam
        assert abs(rc.spectral_radius - float(rho)) < 1e-12
    # both verdicts occur among the values above (the test can fail either way)
    assert root_condition(rec.subs(lam=Q(-1, 2) + I / 2)).strict
    assert not root_condition(rec.subs(lam=Q(-3, 2) + I)).strict


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(range(len(POOL))), st.integers(1, 2)), min_size=1, max_size=3,
                unique_by=lambda t: t[0]))
def test_roots_from_chosen_factors(picks):
    chosen = [(POOL[i][0], POOL[i][1], k) for i, k in picks]
    rec = rec_from_roots([z for z, _, k in chosen for _ in range(k)])
    rc = root_condition(rec)
    assert (rc.strict, rc.marginal) == expected(chosen)
    assert sum(k for _, k, _ in rc.roots) == sum(k for *_, k in chosen)
    assert on_circle_count(sp.Poly(sp.prod([r - z for z, w, _ in chosen]), r, extension=True)) == \
        sum(w == 0 for _, w, _ in chosen)


def test_mutated_root_changes_the_verdict():
    base = [Q(1, 2), I, (3 + 4 * I) / 5]
    assert (root_condition(rec_from_roots(base)).marginal, root_condition(rec_from_roots(base)).strict) == (True, False)
    assert not root_condition(rec_from_roots([Q(1, 2), I * (1 + Q(1, 10**30)), (3 + 4 * I) / 5])).marginal
    assert root_condition(rec_from_roots([Q(1, 2), I * (1 - Q(1, 10**30)), (3 + 4 * I) / 5 * Q(99, 100)])).strict
    assert not root_condition(rec_from_roots(base + [I])).marginal  # I now double


def test_salem_polynomial_has_two_roots_on_and_two_off():
    # r^4 - r^3 - r^2 - r + 1 is self-reciprocal; with x = r + 1/r it is x^2 - x - 3 = 0,
    # x = (1 +- sqrt(13))/2: x in [-2, 2] gives 2 roots on the circle, x > 2 a real pair r, 1/r
    found = circle_roots(sp.Poly(r**4 - r**3 - r**2 - r + 1, r))
    assert sorted(c.where for c in found) == [-1, 0, 0, 1]


def test_non_algebraic_coefficients_are_refused():
    with pytest.raises(ParameterError, match="algebraic"):
        exact_poly(r**2 - sp.sin(1) * r + sp.Rational(1, 2))


def test_imaginary_cubic_crootof_coefficients():
    """Leapfrog ``r^2 - 2 i t r - 1`` at ``t`` a root of ``T^3 - T - 1/3`` (no radicals).

    The roots ``i t +- sqrt(1 - t^2)`` lie on the circle, distinct, for ``|t| < 1``; for
    ``|t| > 1`` they are ``i (t +- sqrt(t^2 - 1))``, one outside. The cubic has roots on
    both sides of ``|t| = 1``.
    """
    T = sp.Symbol("T")
    rec = dd.general(rho="r**2 - 1", sigma="2*r")
    seen = set()
    for i in range(3):
        t = sp.CRootOf(T**3 - T - Q(1, 3), i)
        inside = abs(float(sp.N(t, 30))) < 1
        seen.add(inside)
        rc = root_condition(rec.subs(lam=I * t))
        assert (rc.strict, rc.marginal) == (False, inside), t
    assert seen == {True, False}
