"""Exact one-parameter sets: conditions on one real parameter as a union of intervals.

:func:`solve_for` reduces polynomial (or rational) conditions ``g_i(x) > 0`` (``>=``,
``<``, ``<=``, ``=`` too) in one real symbol ``x`` to a union of intervals with exact
endpoints. The truth value of every condition is constant between consecutive real roots
of the numerators and denominators, so the answer is decided exactly at one rational
point inside each gap and at each root itself (an algebraic number, decided by refining
its isolating interval until the polynomial in question has no root in it). Adjacent
true pieces are merged, so a bound implied by the others never appears.

Endpoints are rationals, quadratic surds, or ``CRootOf`` of an irreducible factor; every
endpoint also carries a float.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import sympy as sp

from ..errors import ParameterError
from ..printing import sstr
from ..records import Record
from ..recurrence import REALS, to_exact

__all__ = ["Interval", "IntervalUnion", "ExactPoint", "real_points", "sweep", "holding_set",
           "reduced_conditions"]

_RELS = {
    sp.StrictGreaterThan: lambda s: s > 0,
    sp.GreaterThan: lambda s: s >= 0,
    sp.StrictLessThan: lambda s: s < 0,
    sp.LessThan: lambda s: s <= 0,
    sp.Equality: lambda s: s == 0,
    sp.Unequality: lambda s: s != 0,
}


# ----------------------------------------------------------------- exact real points
@dataclass(frozen=True)
class ExactPoint:
    """A real algebraic number: ``value`` (exact), its irreducible polynomial and an isolating interval."""

    value: sp.Expr
    poly: sp.Poly  # irreducible over Q, in a dummy variable; degree 1 for a rational
    lo: sp.Rational
    hi: sp.Rational

    @property
    def rational(self) -> bool:
        return self.poly.degree() == 1

    def refined(self, width) -> ExactPoint:
        if self.rational or self.hi - self.lo <= width:
            return self
        lo, hi = self.poly.refine_root(self.lo, self.hi, eps=width)
        return ExactPoint(self.value, self.poly, sp.Rational(lo), sp.Rational(hi))

    def __float__(self) -> float:
        return float(sp.N(self.value, 20))

    def sign_of(self, g: sp.Poly) -> int:
        """Exact sign of the univariate polynomial ``g`` at this point."""
        g = sp.Poly(g.as_expr().xreplace({g.gen: self.poly.gen}), self.poly.gen)
        if self.rational:
            v = g.eval(self.lo)
            return _sgn(v)
        if g.rem(self.poly).is_zero:
            return 0
        pt, width = self, (self.hi - self.lo) / 2
        for _ in range(200):  # g has no root at this irrational point: refine until none is near
            if g.count_roots(pt.lo, pt.hi) == 0:
                v = g.eval(pt.lo)
                return _sgn(v)
            width /= 1024
            pt = pt.refined(width)
        raise ParameterError(f"could not decide the sign of {g.as_expr()} at {self.value}")  # pragma: no cover


def _sgn(v) -> int:
    return int(bool(v > 0)) - int(bool(v < 0))


def real_points(poly: sp.Poly) -> list[ExactPoint]:
    """Distinct real roots of a univariate polynomial as sorted ``ExactPoint`` records."""
    x = poly.gen
    if poly.is_zero or poly.degree() <= 0:
        return []
    out = []
    for fac, _ in sp.factor_list(poly)[1]:
        f = sp.Poly(fac, x)
        if f.degree() < 1:
            continue
        if f.degree() == 1:
            v = -f.nth(0) / f.nth(1)
            out.append(ExactPoint(v, f, v, v))
            continue
        ivals = f.intervals()
        explicit = sorted(sp.roots(f, x, filter="R").keys(), key=lambda v: float(v)) if f.degree() == 2 else None
        for i, ((lo, hi), _k) in enumerate(ivals):
            value = explicit[i] if explicit else sp.CRootOf(f, i)
            out.append(ExactPoint(value, f, sp.Rational(lo), sp.Rational(hi)))
    return sorted(out, key=point_key)


def point_key(p: ExactPoint):
    """Sort key of an exact point: its value to 40 digits."""
    return float(sp.N(p.value, 40))


def rational_between(a: ExactPoint | None, b: ExactPoint | None) -> sp.Rational:
    """A simple rational strictly between two points (either may be None: -oo / +oo)."""
    if a is None and b is None:
        return sp.Integer(0)
    if a is None:
        return sp.floor(b.lo) - 1
    if b is None:
        return sp.ceiling(a.hi) + 1
    gap = sp.Rational(1, 2)
    for _ in range(200):
        a, b = a.refined(gap), b.refined(gap)
        if a.hi < b.lo:
            lo, hi = a.hi, b.lo
            for den in (1, 2, 4, 8, 10, 16, 100, 1000):  # prefer short rationals
                c = sp.floor(lo * den + 1) / sp.Integer(den)
                if lo < c < hi:
                    return c
            return (lo + hi) / 2
        gap /= 64
    raise ParameterError("could not separate two critical points")  # pragma: no cover


# ----------------------------------------------------------------- intervals
def _endpoint_json(v) -> dict:
    if v is None:
        return {"exact": None, "value": None}
    if v.is_infinite:
        return {"exact": sstr(v), "value": float(v)}
    return {"exact": sstr(v), "value": float(sp.N(v, 20))}


def _show(v) -> str:
    if not v.has(sp.CRootOf):
        return sstr(v)
    return f"{sstr(v)} ~ {float(sp.N(v, 20)):.15g}"


@dataclass(frozen=True)
class Interval(Record):
    """An interval with exact endpoints; ``lo_open``/``hi_open`` say whether the ends are excluded.

    ``component`` says how it was picked from a union (``"contains 0"``, ``"adjacent to 0"``,
    ``"nearest to 0"``, ``"empty"``) or is empty when it is just a piece.
    """

    lo: sp.Expr
    hi: sp.Expr
    lo_open: bool = True
    hi_open: bool = True
    component: str = ""

    @classmethod
    def empty(cls) -> Interval:
        return cls(sp.Integer(0), sp.Integer(0), True, True, "empty")

    @property
    def is_empty(self) -> bool:
        return self.component == "empty" or bool(self.lo > self.hi) or (
            self.lo == self.hi and (self.lo_open or self.hi_open))

    @property
    def lo_value(self) -> float | None:
        return None if self.is_empty else float(sp.N(self.lo, 20))

    @property
    def hi_value(self) -> float | None:
        return None if self.is_empty else float(sp.N(self.hi, 20))

    def contains(self, value) -> bool:
        """Exact membership of a real number."""
        if self.is_empty:
            return False
        v = to_exact(value)
        above = bool(v > self.lo) if self.lo_open else bool(v >= self.lo)
        below = bool(v < self.hi) if self.hi_open else bool(v <= self.hi)
        return above and below

    def as_set(self) -> sp.Set:
        if self.is_empty:
            return sp.S.EmptySet
        return sp.Interval(self.lo, self.hi, self.lo_open, self.hi_open)

    def to_json(self) -> dict:
        if self.is_empty:
            return {"empty": True, "lo": _endpoint_json(None), "hi": _endpoint_json(None),
                    "lo_open": True, "hi_open": True, "component": self.component}
        return {"empty": False, "lo": _endpoint_json(self.lo), "hi": _endpoint_json(self.hi),
                "lo_open": self.lo_open, "hi_open": self.hi_open, "component": self.component}

    def _text(self) -> str:
        if self.is_empty:
            return "empty"
        if self.lo == self.hi:
            return f"{{{_show(self.lo)}}}"
        left, right = "(" if self.lo_open else "[", ")" if self.hi_open else "]"
        return f"{left}{_show(self.lo)}, {_show(self.hi)}{right}"

    def _latex(self) -> str:
        if self.is_empty:
            return "\\emptyset"
        return sp.latex(self.as_set())


@dataclass(frozen=True)
class IntervalUnion(Record):
    """A union of disjoint intervals, sorted, for the real parameter ``variable``."""

    intervals: tuple
    variable: str = "x"
    method: str = field(default="", compare=False)

    def contains(self, value) -> bool:
        return any(iv.contains(value) for iv in self.intervals)

    @property
    def is_empty(self) -> bool:
        return not self.intervals

    def as_set(self) -> sp.Set:
        return sp.Union(*(iv.as_set() for iv in self.intervals)) if self.intervals else sp.S.EmptySet

    def component(self, near=0) -> Interval:
        """The interval containing ``near``, else one whose closure contains it, else the nearest."""
        near = to_exact(near)
        if not self.intervals:
            return Interval.empty()
        for iv in self.intervals:
            if iv.contains(near):
                return Interval(iv.lo, iv.hi, iv.lo_open, iv.hi_open, f"contains {near}")
        adjacent = [iv for iv in self.intervals if iv.lo == near or iv.hi == near]
        if adjacent:
            if len(adjacent) == 2:  # (a, near) and (near, b): one interval with the point itself marginal
                a, b = adjacent
                return Interval(a.lo, b.hi, a.lo_open, b.hi_open, f"adjacent to {near} on both sides")
            iv = adjacent[0]
            return Interval(iv.lo, iv.hi, iv.lo_open, iv.hi_open, f"adjacent to {near}")

        def dist(iv):
            return min(abs(float(sp.N(e - near, 20))) for e in (iv.lo, iv.hi) if not e.is_infinite)

        iv = min(self.intervals, key=dist)
        return Interval(iv.lo, iv.hi, iv.lo_open, iv.hi_open, f"nearest to {near}")

    def to_json(self) -> list:
        return [iv.to_json() for iv in self.intervals]

    def inequalities(self, spell=None) -> str:
        """The set as chained inequalities: ``-6/11 < lam < 0``, pieces joined by ``or``.

        ``spell`` prints an exact end (default: SymPy's ``sstr``, with a float beside a
        ``CRootOf``); the command line passes its speller, which shortens long numbers.

        Examples
        --------
        >>> import sympy as sp
        >>> IntervalUnion((Interval(sp.Rational(-6, 11), sp.Integer(0)),), "lam").inequalities()
        '-6/11 < lam < 0'
        >>> IntervalUnion((Interval(-sp.oo, sp.Integer(-1)), Interval(sp.Integer(2), sp.oo, False)),
        ...               "x").inequalities()
        'x < -1 or x >= 2'
        """
        if not self.intervals:
            return f"no real {self.variable}"
        return " or ".join(_inequality(iv, self.variable, spell or _show) for iv in self.intervals)

    def _text(self) -> str:
        body = " U ".join(str(iv) for iv in self.intervals) if self.intervals else "empty"
        return f"{self.variable} in {body}"

    def _latex(self) -> str:
        return f"{self.variable} \\in {sp.latex(self.as_set())}"


def _inequality(iv: Interval, x: str, show) -> str:
    if iv.lo == iv.hi:
        return f"{x} = {show(iv.lo)}"
    lo = None if iv.lo == -sp.oo else f"{show(iv.lo)} {'<' if iv.lo_open else '<='} "
    hi = None if iv.hi == sp.oo else f" {'<' if iv.hi_open else '<='} {show(iv.hi)}"
    if lo is None and hi is None:
        return f"{x} real"
    if lo is None:
        return f"{x}{hi}"
    if hi is None:
        return f"{x} {'>' if iv.lo_open else '>='} {show(iv.lo)}"
    return f"{lo}{x}{hi}"


# ----------------------------------------------------------------- conditions in one variable
# shared by solve_for (depthdyn.symbolic.solvefor) and its for-all form (depthdyn.symbolic.forall)
def conditions_of(obj) -> list:
    """The list of SymPy conditions in ``obj`` (stability conditions, a conjunction, a relation or
    an iterable of them); text is refused, never evaluated."""
    if isinstance(getattr(obj, "never", None), bool) and isinstance(getattr(obj, "conditions", None), tuple):
        return [sp.false] if obj.never else list(obj.conditions)  # StabilityConditions (which imports this)
    if isinstance(obj, (sp.And,)):
        return list(obj.args)
    if isinstance(obj, str):  # text is never evaluated; relations are built as SymPy objects
        raise ParameterError(f"conditions must be SymPy relations such as m < 1 (sympy.Lt(m, 1)), "
                             f"not text: {obj[:60]!r}")
    if isinstance(obj, (sp.Basic, bool)):
        return [sp.sympify(obj, strict=True)]
    if isinstance(obj, Iterable):
        out = []
        for c in obj:
            out += conditions_of(c)
        return out
    raise ParameterError(f"cannot read conditions from {type(obj).__name__}")


def domain_conditions(x: sp.Symbol, domain: sp.Set) -> list:
    """The interval ``domain`` of ``x`` as conditions ``x - a > 0`` (``>=``) and ``b - x > 0``."""
    if domain is None or domain == REALS:
        return []
    if not isinstance(domain, sp.Interval):
        raise ParameterError(f"the domain of {x} must be an interval, got {domain}")
    out = []
    if domain.start.is_finite:
        out.append((sp.StrictGreaterThan if domain.left_open else sp.GreaterThan)(x - domain.start, 0,
                                                                                  evaluate=False))
    if domain.end.is_finite:
        out.append((sp.StrictGreaterThan if domain.right_open else sp.GreaterThan)(domain.end - x, 0,
                                                                                   evaluate=False))
    return out


def univariate_test(cond, x: sp.Symbol):
    """``(test, polys)``: ``test(sign_fn)`` decides the condition given the signs of its polys."""
    if cond in (sp.true, True):
        return (lambda sign: True), []
    if cond in (sp.false, False):
        return (lambda sign: False), []
    if type(cond) not in _RELS:
        raise ParameterError(f"cannot solve {sstr(cond)}: only (in)equalities of polynomials are supported")
    num, den = sp.fraction(sp.together(sp.expand(cond.lhs - cond.rhs)))
    stray = (num.free_symbols | den.free_symbols) - {x}
    if stray:
        raise ParameterError(
            f"cannot solve {sstr(cond)} for {x}: give values for {sorted(map(str, stray))}")
    try:
        pn, pd = sp.Poly(num, x), sp.Poly(den, x)
    except sp.PolynomialError:
        raise ParameterError(f"cannot solve {sstr(cond)} for {x}: not a rational function of {x}") from None
    rel = _RELS[type(cond)]

    def test(sign):
        sd = sign(pd)
        return sd != 0 and rel(sign(pn) * sd)

    return test, [pn, pd]


def widened(rec, param: str, domain):
    """``rec`` with ``param`` ranging over the reals when ``domain`` leaves its declared domain.

    Stability conditions drop factors whose sign the declared domain fixes, so they are
    only valid inside it; a wider requested domain needs conditions derived without it.
    """
    from ..families import from_coefficients
    from ..recurrence import Param

    par = rec.param(param)
    if domain is None or param == rec.lam or bool(domain.is_subset(par.domain)):
        return rec
    wide = Param(param, REALS, par.description)
    coeffs = [sp.expand(c).xreplace({par.symbol: wide.symbol}) for c in rec.charpoly_coeffs()]
    return from_coefficients(coeffs, [wide if p is par else p for p in rec.params], lam=rec.lam)


def real_domain(param: str, domain) -> sp.Set:
    """``domain`` after checking it is a real SymPy set."""
    if not isinstance(domain, sp.Set) or not bool(domain.is_subset(REALS)):
        raise ParameterError(f"the domain of {param} must be a real sympy Interval, got {domain!r}")
    return domain


def sweep(points: list, at_gap, at_point) -> tuple:
    """Merged intervals from sorted critical points: ``at_gap(rational inside)``, ``at_point(point)``."""
    pieces, bounds = [], [None] + list(points) + [None]
    for i in range(len(bounds) - 1):
        a, b = bounds[i], bounds[i + 1]
        pieces.append(("gap", a, b, at_gap(rational_between(a, b))))
        if b is not None:
            pieces.append(("point", b, b, at_point(b)))
    return tuple(_merge(pieces))


def distinct_points(points: list) -> list:
    """Sorted exact points without repeats (the same polynomial and value)."""
    out = []
    for p in points:
        if out and out[-1].poly == p.poly and math.isclose(point_key(out[-1]), point_key(p), rel_tol=0,
                                                           abs_tol=1e-30):
            continue
        out.append(p)
    return out


def sign_at(g: sp.Poly, v) -> int:
    """The sign (-1, 0, 1) of ``g`` at the exact number ``v``."""
    val = g.eval(v)
    return _sgn(val)


def _merge(pieces: list) -> list:
    out, cur = [], None
    for kind, a, b, ok in pieces:
        if ok:
            if cur is None:
                lo = -sp.oo if a is None else a.value
                cur = [lo, None, kind == "gap"]  # lo, hi, lo_open
            if kind == "point":
                cur[1], hi_open = b.value, False
            else:
                cur[1], hi_open = (sp.oo if b is None else b.value), True
            cur.append(hi_open)
            cur = cur[:3] + [hi_open]
        elif cur is not None:
            out.append(Interval(cur[0], cur[1], cur[2] or cur[0] == -sp.oo, cur[3] or cur[1] == sp.oo))
            cur = None
    if cur is not None:
        out.append(Interval(cur[0], cur[1], cur[2] or cur[0] == -sp.oo, cur[3] or cur[1] == sp.oo))
    return out


def holding_set(conds: list, x: sp.Symbol, domain=None, name: str | None = None) -> IntervalUnion:
    """The exact set of real ``x`` in ``domain`` where every condition of ``conds`` holds.

    Each condition is rational in ``x`` alone; its truth is constant between consecutive
    real roots of the numerators and denominators, so it is decided at one rational point
    in each gap and at each root (:func:`sweep`).
    """
    return _Sweeper(list(conds) + domain_conditions(x, domain), x).union(None, name or x.name)


def reduced_conditions(conds: list, x: sp.Symbol, domain=None) -> tuple[IntervalUnion, tuple]:
    """The set where ``conds`` hold in ``domain`` and the conditions that are needed for it.

    A condition is dropped, in order, when the others (and the domain) give the same set
    without it: what is left has no condition implied by the rest. Returns the set and the
    kept conditions (in their order).

    Examples
    --------
    >>> import sympy as sp
    >>> lam = sp.Symbol("lam", real=True)
    >>> cs = [11*lam + 6 > 0, 6 - lam > 0, 1 - lam > 0, -lam > 0]
    >>> u, kept = reduced_conditions(cs, lam)
    >>> u.inequalities(), kept
    ('-6/11 < lam < 0', (11*lam + 6 > 0, -lam > 0))
    """
    conds = list(conds)
    doms = domain_conditions(x, domain)
    sweeper = _Sweeper(conds + doms, x)
    every = list(range(len(conds) + len(doms)))
    whole = sweeper.union(every, x.name)
    keep = list(every)
    for i in range(len(conds)):
        trial = [j for j in keep if j != i]
        if sweeper.union(trial, x.name).intervals == whole.intervals:
            keep = trial
    return whole, tuple(conds[i] for i in keep if i < len(conds))


class _Sweeper:
    """The tests and critical points of some conditions in ``x``, computed once, for the
    sets of any subset of them."""

    def __init__(self, conds: list, x: sp.Symbol):
        self.tests, self.points = [], []
        for c in conds:
            test, polys = univariate_test(c, x)
            self.tests.append(test)
            self.points.append([pt for p in polys for pt in real_points(p)])

    def union(self, subset, name: str) -> IntervalUnion:
        idx = range(len(self.tests)) if subset is None else subset
        crit: list[ExactPoint] = []
        for i in idx:
            for pt in self.points[i]:
                if not any(pt.poly == q.poly and pt.lo == q.lo and pt.hi == q.hi for q in crit):
                    crit.append(pt)
        crit = distinct_points(sorted(crit, key=point_key))
        tests = [self.tests[i] for i in idx]

        def holds_at(point) -> bool:
            if isinstance(point, ExactPoint):
                return all(t(point.sign_of) for t in tests)
            return all(t(lambda g, v=point: sign_at(g, v)) for t in tests)

        return IntervalUnion(sweep(crit, holds_at, holds_at), name,
                             f"exact sign analysis at {len(crit)} critical points and the gaps between them")
