"""``solve_for(..., for_all={y: J})``: parameter sets where stability holds for every ``y`` in ``J``.

Built on the exact points, sweeps and conditions of one variable of
:mod:`depthdyn.symbolic.intervals`.
"""

from __future__ import annotations

import sympy as sp

from ..errors import ParameterError
from ..printing import sstr
from ..recurrence import REALS, to_exact
from .intervals import (
    ExactPoint,
    IntervalUnion,
    conditions_of,
    distinct_points,
    domain_conditions,
    point_key,
    rational_between,
    real_domain,
    real_points,
    sweep,
    widened,
)

__all__ = ["solve_for_all"]


def _for_all_interval(name: str, J) -> sp.Interval:
    """``for_all``'s set as a non-empty real interval with ordered, non-NaN ends."""
    hint = f"give for_all={{{name!r}: sympy.Interval(lo, hi)}} or {{{name!r}: (lo, hi)}} with lo < hi"
    if isinstance(J, (tuple, list)) and len(J) == 2:
        lo, hi = to_exact(J[0]), to_exact(J[1])
        if not (lo.is_extended_real and hi.is_extended_real and bool(lo < hi)):
            raise ParameterError(f"for_all interval ends for {name} must be real numbers lo < hi, got {J!r}; {hint}")
        J = sp.Interval(lo, hi)
    if not isinstance(J, sp.Interval):
        raise ParameterError(f"for_all needs an interval for {name}, got {J!r} ({type(J).__name__}); {hint}")
    ends = (J.start, J.end)
    if any(e.has(sp.nan) or not e.is_extended_real for e in ends) or not bool(J.start < J.end):
        raise ParameterError(f"for_all interval for {name} must have real ends lo < hi, got {J}; {hint}")
    return J


def solve_for_all(rec, param: str, domain, for_all: dict, solve_for) -> IntervalUnion:
    """``{param : conditions hold for all y in J}`` for a recurrence with two free parameters."""
    from .stability import stability_conditions

    if len(for_all) != 1:
        raise ParameterError(f"for_all takes one parameter and its interval, got {for_all!r}")
    (yname, J), = for_all.items()
    J = _for_all_interval(yname, J)
    left = [p for p in rec.param_names if p not in (param, yname)]
    if left or yname not in rec.param_names:
        raise ParameterError(f"for_all needs {param} and {yname} as the only free parameters; left: {left}")
    dom = rec.param(param).domain.intersect(REALS) if domain is None else real_domain(param, domain)
    rec = widened(rec, param, dom)
    sc = stability_conditions(rec, lam="real")
    syms = {s.name: s for s, _ in sc.domains}
    x, y = syms.get(param, sp.Symbol(param, real=True)), syms.get(yname, sp.Symbol(yname, real=True))
    conds = conditions_of(sc)
    ydom = rec.param(yname).domain.intersect(REALS)
    if ydom.intersect(J) != J:
        raise ParameterError(f"the interval {J} for {yname} leaves its domain {ydom}")
    gs = [sp.Poly(sp.numer(sp.together(c.lhs - c.rhs)), y) for c in conds if c not in (sp.true, sp.false)]
    crit_polys = []
    for i, g in enumerate(gs):
        for end in (J.start, J.end):
            crit_polys.append(g.as_expr().subs(y, end))
        crit_polys.append(g.LC())
        if g.degree() > 1:
            crit_polys.append(sp.discriminant(g.as_expr(), y))
        crit_polys += list(g.all_coeffs()) if g.degree() == 0 else []
        for h in gs[i + 1:]:
            if g.degree() > 0 and h.degree() > 0:
                crit_polys.append(sp.resultant(g.as_expr(), h.as_expr(), y))
    crit_polys += [c.lhs - c.rhs for c in domain_conditions(x, dom)]
    points: list[ExactPoint] = []
    for e in crit_polys:
        e = sp.expand(e)
        if e.free_symbols - {x} or e == 0:
            continue
        points += real_points(sp.Poly(e, x))
    points = distinct_points(sorted(points, key=point_key))
    compact = J.is_closed and J.is_bounded if hasattr(J, "is_bounded") else J.is_closed and J.measure.is_finite

    decided: dict = {}

    def holds(v) -> bool:
        if v in decided:
            return decided[v]
        if not all(bool(c.subs(x, v)) for c in domain_conditions(x, dom)):
            decided[v] = False
            return False
        inner = solve_for([c.subs(x, v) for c in conds], yname, domain=ydom)
        answer = J.is_subset(inner.as_set())
        if answer is None:  # pragma: no cover - SymPy could not compare the endpoints
            raise ParameterError(f"cannot decide whether {J} lies in {inner.as_set()} at {param} = {v}")
        decided[v] = bool(answer)
        return decided[v]

    def at_point(b: ExactPoint) -> bool:
        if b.rational:
            return holds(b.value)
        if not compact or not all(type(c) in (sp.StrictGreaterThan, sp.StrictLessThan) for c in conds):
            raise ParameterError(f"cannot decide at the algebraic value {param} = {b.value} "
                                 f"for a non-compact {yname}-interval; use a closed one")
        # strict conditions on a compact J hold on an open set of x: a good point has good
        # neighbours, and there every g >= 0 on J by continuity, so b is good unless one vanishes
        i = points.index(b)
        left, right = points[i - 1] if i else None, points[i + 1] if i + 1 < len(points) else None
        if not (holds(rational_between(left, b)) and holds(rational_between(b, right))):
            return False
        return not any(_vanishes_on(sp.numer(sp.together(c.lhs - c.rhs)), x, y, b, J) for c in conds)

    return IntervalUnion(sweep(points, holds, at_point), param,
                         f"for all {yname} in {J}: exact decisions at {len(points)} critical values and between")


def _vanishes_on(g: sp.Expr, x: sp.Symbol, y: sp.Symbol, b: ExactPoint, J: sp.Interval) -> bool:
    """Whether ``g(b, y) = 0`` for some ``y`` in the closed, bounded ``J`` (``b`` algebraic), exactly.

    The zeros in ``y`` are among the real roots of the norm ``N(y) = Res_x(q(x), g(x, y))``
    (``q`` the minimal polynomial of ``b``); a rational candidate ``y0`` is a zero iff
    ``g(x, y0)`` vanishes at ``b``; an irrational one is excluded by evaluating ``g`` on
    shrinking rational boxes around ``(b, y0)``, or the question is refused.
    """
    q = b.poly.as_expr().xreplace({b.poly.gen: x})
    for end in (J.start, J.end):
        if b.sign_of(sp.Poly(sp.expand(g.subs(y, end)), x)) == 0:
            return True
    N = sp.expand(sp.resultant(q, g, x))
    if N == 0:
        return True  # q divides g as a polynomial in x: g(b, .) vanishes identically
    if not N.has(y):
        return False
    for yp in real_points(sp.Poly(N, y)):
        if not (J.start < yp.value < J.end):
            continue
        if yp.rational:
            if b.sign_of(sp.Poly(sp.expand(g.subs(y, yp.value)), x)) == 0:
                return True
            continue
        if not _box_excludes_zero(sp.Poly(g, x, y), b, yp):
            raise ParameterError(f"cannot decide whether {sstr(g)} vanishes at {x} = {b.value}, "
                                 f"{y} = {yp.value}")
    return False


def _box_excludes_zero(G: sp.Poly, bx: ExactPoint, by: ExactPoint, rounds: int = 12) -> bool:
    """Rational interval arithmetic: ``G`` has no zero on a box around ``(bx, by)`` once refined."""
    def ivmul(a, b):
        ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return min(ps), max(ps)

    def ivpow(a, n):
        out = (sp.Integer(1), sp.Integer(1))
        for _ in range(n):
            out = ivmul(out, a)
        return out

    width = sp.Rational(1, 16)
    for _ in range(rounds):
        bx, by = bx.refined(width), by.refined(width)
        lo = hi = sp.Integer(0)
        for (i, j), c in G.terms():
            t = ivmul(ivpow((bx.lo, bx.hi), i), ivpow((by.lo, by.hi), j))
            t = (c * t[0], c * t[1]) if c > 0 else (c * t[1], c * t[0])
            lo, hi = lo + t[0], hi + t[1]
        if lo > 0 or hi < 0:
            return True
        width /= 2**20
    return False
