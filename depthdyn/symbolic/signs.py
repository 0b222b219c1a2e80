"""Signs of parameter polynomials on the parameters' domains, decided exactly.

Used to drop stability conditions the domains already imply and root-structure cases
that cannot occur (``gamma**2 < 0`` for a real ``gamma``).
"""

from __future__ import annotations

import itertools

import sympy as sp

from ..budget import REFINE_SECONDS, at_most
from ..limits import SIGN_TERMS
from ..recurrence import REALS

__all__ = ["sign", "pieces", "cheap_to_factor"]



def cheap_to_factor(expr: sp.Expr) -> bool:
    """Whether multivariate factorisation of ``expr`` is quick (few terms or few symbols).

    Factoring only tidies results (and proves signs); above this size results are kept
    expanded rather than spending minutes in Wang's algorithm. Non-real coefficients (a
    complex ``lam`` substituted) are factored over ``QQ<I>`` by Trager's algorithm, far
    slower again: only in at most two symbols.
    """
    if len(sp.Add.make_args(expr)) > SIGN_TERMS:  # already too large: do not expand it
        return False
    if len(expr.free_symbols) > 2 and expr.has(sp.I):
        return False
    terms = len(sp.Add.make_args(sp.expand(expr)))
    return terms <= SIGN_TERMS and (terms <= 40 or len(expr.free_symbols) <= 4)


def pieces(dom: sp.Set) -> list:
    """Rational parametrisations covering ``dom`` by fresh symbols with sign assumptions."""
    if isinstance(dom, sp.FiniteSet) and all(v.is_real for v in dom):
        return list(dom)
    if not isinstance(dom, sp.Interval):
        return [sp.Dummy(real=True)]
    a, b = dom.start, dom.end
    t = sp.Dummy(positive=True) if dom.left_open or a.is_infinite else sp.Dummy(nonnegative=True)
    if a.is_finite:
        return [a + (b - a) * t / (1 + t)] + ([] if dom.right_open else [b]) if b.is_finite else [a + t]
    tb = sp.Dummy(positive=True) if dom.right_open else sp.Dummy(nonnegative=True)
    return [b - tb] if b.is_finite else [sp.Dummy(real=True)]


def sign(f: sp.Expr, domains: dict, strict: bool = True, irreducible: bool = False) -> int | None:
    """+1 / -1 if ``f`` is provably > 0 / < 0 (>= 0 / <= 0 unless strict) on the domains.

    ``irreducible`` says that ``f`` is an irreducible polynomial already (a factor of
    ``factor_list``): where the domains substitute plain real symbols (unbounded
    parameters) it stays so, and factoring it again is skipped.
    """
    # a refinement: undecided (None) past a few seconds rather than minutes of factoring
    return at_most(REFINE_SECONDS, "deciding a sign", lambda: _sign(f, domains, strict, irreducible), None)


def _sign(f: sp.Expr, domains: dict, strict: bool, irreducible: bool) -> int | None:
    if not cheap_to_factor(f):  # undecided rather than slow
        return None
    free = sorted(f.free_symbols, key=str)
    if len(free) == 1 and f.is_polynomial(free[0]):  # exact: real roots of a univariate polynomial
        x, dom = free[0], domains.get(free[0], REALS)
        decided = _univariate_sign(f, x, dom, strict)
        if decided is not NotImplemented:
            return decided
        for sgn, bad in ((1, f <= 0 if strict else f < 0), (-1, f >= 0 if strict else f > 0)):
            try:
                if sp.solve_univariate_inequality(bad, x, relational=False, domain=dom).is_empty:
                    return sgn
            except (NotImplementedError, ValueError, TypeError):
                break
    combos = list(itertools.product(*(pieces(domains.get(x, REALS)) for x in free)))
    if len(combos) > 64:
        return None
    signs = set()
    for combo in combos:
        g = f.xreplace(dict(zip(free, combo, strict=True)))
        if not (irreducible and all(isinstance(c, sp.Symbol) for c in combo)):
            g = sp.factor(sp.cancel(sp.together(g)))
        pos, neg = (g.is_positive, g.is_negative) if strict else (g.is_nonnegative, g.is_nonpositive)
        signs.add(1 if pos else -1 if neg else None)
    return signs.pop() if len(signs) == 1 else None


def _univariate_sign(f: sp.Expr, x: sp.Symbol, dom: sp.Set, strict: bool):
    """``sign`` of a polynomial in one variable with rational coefficients on an interval
    with rational (or infinite) ends, by counting real roots (Sturm sequences); many times
    faster than ``solve_univariate_inequality``. ``NotImplemented`` for anything else.

    ``f > 0`` on the interval iff no root lies in it and ``f > 0`` at one point; ``f >= 0``
    iff no root of odd multiplicity lies inside it and ``f > 0`` at a point where it is
    nonzero (a polynomial of degree ``d`` vanishes at no more than ``d`` of ``d + 1`` points).
    """
    if not isinstance(dom, sp.Interval):
        return NotImplemented
    P = sp.Poly(f, x)
    a, b = dom.start, dom.end
    if P.domain not in (sp.ZZ, sp.QQ) or not all(e.is_Rational or e.is_infinite for e in (a, b)):
        return NotImplemented
    lo, hi = (None if a.is_infinite else a), (None if b.is_infinite else b)
    for g, m in P.sqf_list()[1]:
        closed = g.count_roots(lo, hi)  # roots in [a, b]
        ends = [(e, is_open) for e, is_open in ((lo, dom.left_open), (hi, dom.right_open))
                if e is not None and g.eval(e) == 0]
        inside = closed - len(ends)  # roots in (a, b)
        in_domain = inside + sum(1 for _, is_open in ends if not is_open)
        if (in_domain if strict else inside * (m % 2)) > 0:
            return None
    d = P.degree()
    if lo is not None and hi is not None:
        points = [lo + (hi - lo) * sp.Rational(k, d + 2) for k in range(1, d + 2)]
    elif lo is not None:
        points = [lo + k for k in range(1, d + 2)]
    elif hi is not None:
        points = [hi - k for k in range(1, d + 2)]
    else:
        points = [sp.Integer(k) for k in range(d + 1)]
    for p in points:
        value = P.eval(p)
        if value != 0:
            return 1 if value > 0 else -1
    return None  # unreachable for a nonzero polynomial
