"""Signs of parameter polynomials on the parameters' domains, decided exactly.

Used to drop stability conditions the domains already imply and root-structure cases
that cannot occur (``gamma**2 < 0`` for a real ``gamma``).
"""

from __future__ import annotations

import itertools

import sympy as sp

from ..recurrence import REALS

__all__ = ["sign", "pieces", "SIGN_TERMS", "cheap_to_factor"]

#: Expressions with more top-level terms than this are left undecided (factoring them is slow).
SIGN_TERMS = 300


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


def sign(f: sp.Expr, domains: dict, strict: bool = True) -> int | None:
    """+1 / -1 if ``f`` is provably > 0 / < 0 (>= 0 / <= 0 unless strict) on the domains."""
    if not cheap_to_factor(f):  # undecided rather than slow
        return None
    free = sorted(f.free_symbols, key=str)
    if len(free) == 1 and f.is_polynomial(free[0]):  # exact: real roots of a univariate polynomial
        x, dom = free[0], domains.get(free[0], REALS)
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
        g = sp.factor(sp.cancel(sp.together(f.xreplace(dict(zip(free, combo, strict=True))))))
        pos, neg = (g.is_positive, g.is_negative) if strict else (g.is_nonnegative, g.is_nonpositive)
        signs.add(1 if pos else -1 if neg else None)
    return signs.pop() if len(signs) == 1 else None
