"""Characteristic polynomial, roots with multiplicities, Vieta relations, discriminant.

Roots are explicit (radicals) when SymPy can give them cheaply: always for degree <= 2,
for cubics, and for any degree once the coefficients are numbers (``CRootOf`` for what
has no radicals). Otherwise a factor's roots stay implicit (``RootOf(factor, i)``), which
every analysis handles without pretending to know them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import sympy as sp

from ..recurrence import r
from .records import Record, sstr, tex

__all__ = [
    "charpoly",
    "char_poly",
    "Root",
    "Roots",
    "roots",
    "discriminant",
    "VietaRelation",
    "Vieta",
    "vieta",
    "RootStructure",
    "root_structure",
    "real_lam",
]

# cubic formulas are fast; quartic ones blow up on symbolic coefficients
_RADICAL_DEGREE = 3


def charpoly(rec) -> sp.Expr:
    """Characteristic polynomial of ``rec`` in ``r`` (``det`` form for matrices).

    Examples
    --------
    >>> from depthdyn import momentum
    >>> charpoly(momentum())
    m + r**2 + r*(-eta*lam - m - 1)
    """
    return rec.charpoly()


def char_poly(rec) -> sp.Poly:
    """The characteristic polynomial as a :class:`sympy.Poly` in ``r``."""
    return sp.Poly(rec.charpoly(), r)


def real_lam(rec, expr):
    """Replace ``lam`` in ``expr`` by a real symbol of the same name (for real-mode work)."""
    lam = rec.lam_symbol
    if lam is None or lam.is_real:
        return expr
    return expr.xreplace({lam: sp.Symbol(lam.name, real=True)})


@dataclass(frozen=True)
class Root(Record):
    """One distinct root: its value (or ``RootOf`` placeholder), multiplicity, factor."""

    value: sp.Expr
    multiplicity: int
    factor: sp.Expr
    explicit: bool

    def _text(self) -> str:
        return f"{sstr(self.value)} (multiplicity {self.multiplicity})"

    def _latex(self) -> str:
        return f"{tex(self.value)}\\ (\\times {self.multiplicity})"


@dataclass(frozen=True)
class Roots(Record):
    """All roots of the characteristic polynomial, with multiplicities."""

    charpoly: sp.Expr
    roots: tuple[Root, ...]

    @property
    def explicit(self) -> bool:
        return all(rt.explicit for rt in self.roots)

    @property
    def degree(self) -> int:
        return sum(rt.multiplicity for rt in self.roots)

    def values(self) -> list[sp.Expr]:
        """Roots repeated by multiplicity."""
        return [rt.value for rt in self.roots for _ in range(rt.multiplicity)]

    def __iter__(self):
        return iter(self.roots)

    def __len__(self) -> int:
        return len(self.roots)

    def _text(self) -> str:
        return "\n".join(f"r = {rt}" for rt in self.roots)

    def _latex(self) -> str:
        return ",\\ ".join(f"r = {rt._latex()}" for rt in self.roots)


class _Implicit(sp.Function):
    """Placeholder ``RootOf(factor, i)`` for roots with no cheap closed form."""

    nargs = 2

    def _sympystr(self, printer):
        return f"RootOf({printer.doprint(self.args[0])}, {self.args[1]})"

    def _latex(self, printer):
        return f"\\operatorname{{RootOf}}\\left({printer.doprint(self.args[0])}, {self.args[1]}\\right)"


def _factor_roots(factor: sp.Poly, mult: int) -> list[Root]:
    deg = factor.degree()
    expr = factor.as_expr()
    # CRootOf needs real (rational) coefficients; complex numeric factors are treated like
    # symbolic ones (radicals up to cubics, placeholders above)
    numeric = not (factor.free_symbols - {r}) and all(c.is_real for c in factor.all_coeffs())
    if deg == 2:
        a, b, c = factor.all_coeffs()
        disc = _tidy(b**2 - 4 * a * c)
        if disc == 0:
            return [Root(sp.factor(-b / (2 * a)), 2 * mult, expr, True)]
        root_d = sp.sqrt(disc)
        pair = [sp.factor_terms((-b - root_d) / (2 * a)), sp.factor_terms((-b + root_d) / (2 * a))]
        return [Root(v, mult, expr, True) for v in pair]
    if deg <= _RADICAL_DEGREE or numeric:
        # numeric factors of degree >= 3 get CRootOf (exact, cheap to evaluate) instead of radicals
        found = sp.roots(factor, r, cubics=not numeric, quartics=False, quintics=False)
        if sum(found.values()) == deg:
            return [Root(v, mult * k, expr, True) for v, k in found.items()]
        if numeric:
            sqf = sp.Poly(factor, r)
            out = []
            for v, k in found.items():
                out.append(Root(v, mult * k, expr, True))
                sqf = sp.Poly(sp.quo(sqf, sp.Poly((r - v) ** k, r)), r)
            for base, k in sp.sqf_list(sqf)[1]:
                out += [
                    Root(sp.CRootOf(base, i), mult * k, base.as_expr(), True) for i in range(base.degree())
                ]
            return out
    return [Root(_Implicit(expr, i), mult, expr, False) for i in range(deg)]


def roots(rec) -> Roots:
    """Roots of the characteristic polynomial with multiplicities.

    The polynomial is factored over the rationals in the parameters first, so
    repeated factors (e.g. ``(r - 1)^k`` of the ``C^k`` net at ``lam = 0``) give exact
    multiplicities.

    Examples
    --------
    >>> from depthdyn import smooth
    >>> print(roots(smooth(k=3, lam=0)))
    r = 1 (multiplicity 3)
    """
    poly = char_poly(rec)
    _, factors = sp.factor_list(poly.as_expr(), r)
    found: list[Root] = []
    for fac, mult in factors:
        fpoly = sp.Poly(fac, r)
        if fpoly.degree() == 0:
            continue
        found += _factor_roots(fpoly, mult)
    merged: dict[sp.Expr, Root] = {}
    for rt in found:  # the same root may come from two factors only if they were not coprime
        if rt.value in merged:
            old = merged[rt.value]
            merged[rt.value] = Root(rt.value, old.multiplicity + rt.multiplicity, old.factor, old.explicit)
        else:
            merged[rt.value] = rt
    return Roots(rec.charpoly(), tuple(merged.values()))


def discriminant(rec) -> sp.Expr:
    """Discriminant of the characteristic polynomial in ``r`` (factored).

    Examples
    --------
    >>> from depthdyn import momentum
    >>> discriminant(momentum())
    -4*m + (eta*lam + m + 1)**2
    """
    poly = char_poly(rec)
    if poly.degree() < 2:
        return sp.Integer(1)
    disc = sp.discriminant(poly.as_expr(), r)
    return _tidy(disc)


def _tidy(expr: sp.Expr) -> sp.Expr:
    factored = sp.factor(expr)
    candidates = [factored, sp.expand(expr)]
    # prefer a visible perfect square (eta*lam + m + 1)**2 - 4*m over the expanded form
    for sym in sorted(expr.free_symbols, key=str):
        candidates.append(sp.collect(sp.expand(expr), sym))
    completed = _complete_square(expr)
    if completed is not None:
        candidates.append(completed)
    return min(candidates, key=sp.count_ops)


def _complete_square(expr: sp.Expr) -> sp.Expr | None:
    """Write ``expr`` as ``(linear)**2 + rest`` when that shortens it (quadratic discriminants)."""
    expanded = sp.expand(expr)
    syms = sorted(expanded.free_symbols, key=str)
    best = None
    for s in syms:
        try:
            poly = sp.Poly(expanded, s)
        except sp.PolynomialError:  # rational in s (e.g. 1/L**2): no square to complete
            continue
        if poly.degree() != 2:
            continue
        a, b, c = poly.all_coeffs()
        # try expr = (sqrt(a) s + b/(2 sqrt(a)))^2 + c - b^2/(4a) with a a perfect square
        root_a = sp.sqrt(a)
        if root_a.is_Pow or root_a.has(sp.sqrt(2)):
            continue
        lin = sp.factor(root_a * s + b / (2 * root_a))
        rest = sp.factor(sp.expand(c - b**2 / (4 * a)))
        cand = lin**2 + rest
        if sp.expand(cand - expanded) == 0 and (best is None or sp.count_ops(cand) < sp.count_ops(best)):
            best = cand
    return best


@dataclass(frozen=True)
class VietaRelation(Record):
    """``e_k(roots) = (-1)^k a_k / a_0`` with the check that was made."""

    k: int
    symmetric_function: sp.Expr
    coefficient: sp.Expr
    holds: bool
    method: str

    def _text(self) -> str:
        name = {1: "sum of roots", 2: "sum of pairwise products"}.get(self.k, f"e_{self.k}(roots)")
        return f"{name} = {sstr(self.coefficient)}  [{'holds' if self.holds else 'FAILS'}, {self.method}]"

    def _latex(self) -> str:
        return f"e_{{{self.k}}} = {tex(self.coefficient)}"


@dataclass(frozen=True)
class Vieta(Record):
    """All Vieta relations of the characteristic polynomial, each checked."""

    relations: tuple[VietaRelation, ...]

    @property
    def holds(self) -> bool:
        return all(v.holds for v in self.relations)

    @property
    def product(self) -> sp.Expr:
        return self.relations[-1].coefficient

    @property
    def sum(self) -> sp.Expr:
        return self.relations[0].coefficient

    def _text(self) -> str:
        return "\n".join(str(v) for v in self.relations)

    def _latex(self) -> str:
        return ",\\ ".join(v._latex() for v in self.relations)


def _elementary(values: list, k: int) -> sp.Expr:
    from itertools import combinations

    return sp.Add(*[sp.Mul(*c) for c in combinations(values, k)])


def _random_point(symbols, rng: random.Random) -> dict:
    point = {}
    for s in symbols:
        v = sp.Rational(rng.randint(-40, 40), rng.randint(1, 9))
        if s.is_nonnegative or s.is_positive:
            v = abs(v) + sp.Rational(1, 7)
        point[s] = v
    return point


def vieta(rec, *, samples: int = 3, digits: int = 40) -> Vieta:
    """Vieta relations ``e_k = (-1)^k a_k / a_0``, each verified.

    With explicit roots the identity is checked exactly (``simplify(e_k - rhs) == 0``);
    when that cannot be decided symbolically, or the roots are implicit, it is checked
    at ``samples`` random rational parameter points with ``digits``-digit roots, and
    the method says so.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> v = vieta(momentum())
    >>> v.product, v.sum, v.holds
    (m, eta*lam + m + 1, True)
    """
    poly = char_poly(rec)
    coeffs = poly.all_coeffs()
    p = poly.degree()
    rts = roots(rec)
    values = rts.values()
    rng = random.Random(1234)
    relations = []
    for k in range(1, p + 1):
        rhs = sp.factor((-1) ** k * coeffs[k] / coeffs[0])
        holds, method = False, ""
        if rts.explicit and (p <= 2 or all(v.is_Rational for v in values)):
            # radicals of degree >= 3 do not simplify reliably; those are checked numerically
            diff = sp.expand(_elementary(values, k) - rhs)
            if diff == 0 or sp.simplify(diff) == 0:
                holds, method = True, "exact"
        if not method:
            holds = _numeric_vieta(poly, k, rhs, samples, digits, rng)
            method = f"numeric at {samples} random points, {digits} digits"
        relations.append(VietaRelation(k, sp.Symbol(f"e_{k}"), rhs, holds, method))
    return Vieta(tuple(relations))


def _numeric_vieta(poly: sp.Poly, k: int, rhs: sp.Expr, samples: int, digits: int, rng) -> bool:
    symbols = sorted(poly.free_symbols - {r}, key=str)
    for _ in range(samples):
        for _attempt in range(20):
            point = _random_point(symbols, rng)
            sub = sp.Poly(poly.as_expr().xreplace(point), r)
            if sub.degree() == poly.degree():
                break
        vals = sub.nroots(n=digits, maxsteps=200)
        e_k = sp.N(_elementary(vals, k), digits)
        target = sp.N(rhs.xreplace(point), digits)
        if abs(complex(sp.N(e_k - target, digits))) > 10 ** (-(digits // 2)) * (1 + abs(complex(target))):
            return False
    return True


@dataclass(frozen=True)
class RootStructure(Record):
    """Root structure as conditions on the parameters (``lam`` taken real)."""

    discriminant: sp.Expr
    cases: tuple[tuple[sp.Basic, str], ...]

    def _text(self) -> str:
        return "\n".join(f"{sstr(cond)}: {what}" for cond, what in self.cases)

    def _latex(self) -> str:
        return ",\\ ".join(f"{tex(c)}: \\text{{{w}}}" for c, w in self.cases)


def root_structure(rec) -> RootStructure:
    """Classify the roots (real distinct / complex pair / repeated) by the discriminant.

    The classification assumes real coefficients (``lam`` real). For degree ``n``:
    ``disc > 0`` means distinct roots with an even number of complex pairs (all real for
    ``n <= 3``), ``disc < 0`` an odd number of complex pairs (exactly one for
    ``n <= 3``), ``disc = 0`` a repeated root.
    """
    poly = char_poly(rec)
    disc = real_lam(rec, discriminant(rec))
    n = poly.degree()
    if n < 2:
        return RootStructure(disc, ((sp.true, "one real root"),))
    if n == 2:
        pos, neg = "two distinct real roots", "a complex-conjugate pair"
    elif n == 3:
        pos, neg = "three distinct real roots", "one real root and a complex-conjugate pair"
    else:
        pos = "distinct roots, an even number of complex-conjugate pairs"
        neg = "distinct roots, an odd number of complex-conjugate pairs"
    cases = (
        (sp.StrictGreaterThan(disc, 0, evaluate=False), pos),
        (sp.Eq(disc, 0, evaluate=False), "a repeated root"),
        (sp.StrictLessThan(disc, 0, evaluate=False), neg),
    )
    return RootStructure(disc, cases)
