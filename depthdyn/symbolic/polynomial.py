"""Characteristic polynomial, roots with multiplicities, Vieta relations, discriminant.

Roots are explicit (radicals) when SymPy can give them cheaply: always for degree <= 2,
for cubics, and for any degree once the coefficients are numbers (``CRootOf`` for what
has no radicals). Otherwise a factor's roots stay implicit (``RootOf(factor, i)``), which
every analysis handles without pretending to know them.

Everything about a symbolic polynomial is decided by polynomial algebra in SymPy's sparse
polynomial rings (``r`` and every parameter as generators), never by numeric root finding:
multiplicities from the square-free factorisation, irreducibility first tested on one
exact specialisation of the parameters (a polynomial whose specialisation is irreducible,
with its degree kept, is irreducible), discriminants as ``disc(f g) = disc(f) disc(g)
res(f, g)^2`` over the factors, with the generic discriminant formula evaluated in the ring
for polynomials of low degree in many symbols. Work whose size can explode runs as a
budgeted part (:mod:`depthdyn.budget`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import sympy as sp

from ..budget import REFINE_SECONDS, at_most, bounded, part
from ..limits import MAX_DPS
from ..printing import sstr, tex
from ..printing import symbol as _symbol  # lam prints as \lambda in sympy.latex
from ..records import Record
from ..recurrence import REALS, r
from .sparse import (
    degree_r,
    discriminant,
    evaluate,
    factors_in_r,
    reduced_discriminant,
    small_factor,
    sparse_poly,
    squarefree_factors,
    tidy,
)

__all__ = [
    "charpoly",
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


def real_lam(rec, expr):
    """Replace ``lam`` in ``expr`` by a real symbol of the same name (for real-mode work)."""
    lam = rec.lam_symbol
    if lam is None or lam.is_real:
        return expr
    return expr.xreplace({lam: _symbol(lam.name, real=True)})


@dataclass(frozen=True)
class Root(Record):
    """One distinct root: its value (or ``RootOf`` placeholder), multiplicity, factor."""

    value: sp.Expr
    multiplicity: int
    factor: sp.Expr
    explicit: bool

    def _sympy_(self) -> sp.Expr:
        """``sympy.sympify(root)`` and SymPy arithmetic with a root use its value."""
        return self.value

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

    def __getitem__(self, index):
        """The ``index``-th distinct root (a :class:`Root`; a tuple of them for a slice), as iteration gives."""
        return self.roots[index]

    def _sympy_(self) -> sp.Tuple:
        """``sympy.sympify(roots)``: the distinct root values, in order (multiplicities in the records)."""
        return sp.Tuple(*(rt.value for rt in self.roots))

    def _text(self) -> str:
        return "\n".join(f"r = {rt}" for rt in self.roots)

    def _latex(self) -> str:
        return ",\\ ".join(f"r = {rt._latex()}" for rt in self.roots)


class ImplicitRoot(sp.Function):
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
    K = factor.get_domain()
    if deg == 1 and K in (sp.ZZ, sp.QQ, sp.ZZ_I, sp.QQ_I):
        # exact division in the coefficient field (sympy.roots simplifies a complex root,
        # which costs ~1 s on first use)
        c1, c0 = (K.get_field().convert_from(c, K) for c in factor.rep.to_list())
        return [Root(K.get_field().to_sympy(-c0 / c1), mult, expr, True)]
    if deg == 2:
        a, b, c = factor.all_coeffs()
        disc = tidy(b**2 - 4 * a * c)
        if disc == 0:
            return [Root(sp.factor(-b / (2 * a)), 2 * mult, expr, True)]
        root_d = _sqrt(disc)
        pair = [sp.factor_terms((-b - root_d) / (2 * a)), sp.factor_terms((-b + root_d) / (2 * a))]
        return [Root(v, mult, expr, True) for v in pair]
    if deg == 3 and not numeric:  # factors_in_r already split it: no second factorisation
        from sympy.polys.polyroots import roots_cubic

        vals = roots_cubic(factor)
        if len(set(vals)) == 3:
            return [Root(v, mult, expr, True) for v in vals]
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
    return [Root(ImplicitRoot(expr, i), mult, expr, False) for i in range(deg)]


def _sqrt(d: sp.Expr) -> sp.Expr:
    """``sqrt(d)``, written as a Gaussian rational where ``d`` is the square of one
    (SymPy leaves ``sqrt(-3 + 4*I)`` unevaluated; it is ``1 + 2*I``)."""
    p, q = d.as_real_imag() if d.is_number and d.has(sp.I) else (d, sp.Integer(0))
    if q.is_Rational and q != 0 and p.is_Rational:
        m = sp.sqrt(p**2 + q**2)
        x, y = sp.sqrt((m + p) / 2), sp.sqrt((m - p) / 2)
        if m.is_Rational and x.is_Rational and y.is_Rational:
            return x + sp.sign(q) * y * sp.I
    return sp.sqrt(d)


@bounded("roots")
def roots(rec, **values) -> Roots:
    """Roots of the characteristic polynomial with multiplicities (parameter ``values``, if
    given, substituted first, as ``rec.subs(**values)``).

    The polynomial is factored over the rationals in the parameters first, so
    repeated factors (e.g. ``(r - 1)^k`` of the ``C^k`` net at ``lam = 0``) give exact
    multiplicities.

    Examples
    --------
    >>> from depthdyn import smooth
    >>> print(roots(smooth(k=3, lam=0)))
    r = 1 (multiplicity 3)
    """
    return _roots_cached(rec.subs(values) if values else rec)


@lru_cache(maxsize=64)
def _roots_cached(rec) -> Roots:
    # cached: check, closed_form and the printing of one recurrence all ask for its roots
    found: list[Root] = []
    with part("roots"):
        for fac, mult in factors_in_r(rec):
            found += _factor_roots(sp.Poly(fac, r), mult)
    merged: dict[sp.Expr, Root] = {}
    for rt in found:  # the same root may come from two factors only if they were not coprime
        if rt.value in merged:
            old = merged[rt.value]
            merged[rt.value] = Root(rt.value, old.multiplicity + rt.multiplicity, old.factor, old.explicit)
        else:
            merged[rt.value] = rt
    return Roots(rec.charpoly(), tuple(merged.values()))

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


@bounded("Vieta relations")
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
    coeffs = list(rec.charpoly_coeffs())
    p = len(coeffs) - 1
    rts = roots(rec)
    values = rts.values()
    rng = random.Random(1234)  # noqa: S311 - sample points, not secrets
    with part("Vieta relations"):
        return _vieta_relations(rec, coeffs, p, rts, values, samples, digits, rng)


def _vieta_relations(rec, coeffs, p, rts, values, samples, digits, rng) -> Vieta:
    relations, points = [], None
    for k in range(1, p + 1):
        rhs = small_factor((-1) ** k * coeffs[k] / coeffs[0])
        holds, method = False, ""
        if rts.explicit and (p <= 2 or all(v.is_Rational for v in values)):
            # radicals of degree >= 3 do not simplify reliably; those are checked numerically
            diff = sp.expand(_elementary(values, k) - rhs)
            if diff == 0 or sp.simplify(diff) == 0:
                holds, method = True, "exact"
        if not method:
            points = points if points is not None else _vieta_points(rec, samples, digits, rng)
            holds = _numeric_vieta(points, k, rhs, digits)
            method = f"numeric at {samples} random points, {digits} digits"
        relations.append(VietaRelation(k, sp.Symbol(f"e_{k}"), rhs, holds, method))
    return Vieta(tuple(relations))


def _distinct_nroots(poly: sp.Poly, digits: int) -> list:
    """Roots with multiplicity at ``digits`` digits: ``nroots`` only ever sees square-free
    pieces (it does not converge on repeated roots)."""
    vals = []
    for base, k in sp.sqf_list(poly)[1]:
        base = sp.Poly(base, r)
        if base.degree() > 0:
            vals += [v for v in _balanced_nroots(base, digits) for _ in range(k)]
    return vals


def _balanced_nroots(poly: sp.Poly, digits: int) -> list:
    """``nroots`` of ``poly(10^t s)``, ``10^t`` the geometric mean size of the roots: coefficients
    of very different sizes (1e-300 r^3 - 1) keep nroots from converging."""
    c = poly.all_coeffs()
    t = 0
    if c[-1] != 0 and all(v.is_Rational for v in c):
        ratio = abs(c[-1] / c[0])
        t = round((math.log10(ratio.p) - math.log10(ratio.q)) / poly.degree())
    scaled = sp.Poly(sp.expand(poly.as_expr().xreplace({r: r * sp.Integer(10) ** t})), r) if t else poly
    try:
        found = scaled.nroots(n=digits, maxsteps=200)
    except mpmath.libmp.NoConvergence:
        found = [sp.N(root, digits) for root in scaled.all_roots()]  # isolated exactly first
    return [sp.N(v * sp.Integer(10) ** t, digits) for v in found] if t else found


def _vieta_points(rec, samples: int, digits: int, rng) -> list:
    """``samples`` random rational parameter points with the roots there (``digits`` digits).

    The polynomial is specialised in the sparse ring (cheap even with many symbols).
    """
    P, gens = sparse_poly(rec)
    symbols, n = sorted(set().union(*(c.free_symbols for c in rec.charpoly_coeffs())), key=str), degree_r(P)
    out = []
    for _ in range(samples):
        for _attempt in range(20):
            point = _random_point(symbols, rng)
            sub = evaluate(P, gens, point) if len(gens) > 1 else sp.Poly(P.as_expr().xreplace(point), r)
            if sub.degree() == n:
                break
        extra = _spread(sub)
        out.append((point, _distinct_nroots(sub, digits + extra), digits + extra))
    return out


def _spread(poly: sp.Poly) -> int:
    """Decimal orders between the largest and smallest non-zero coefficient (capped at MAX_DPS):
    the extra digits that keep sums of roots of very different sizes exact to ``digits``."""
    sizes = [abs(c) for c in poly.all_coeffs() if c != 0]
    if len(sizes) < 2 or not all(c.is_Rational for c in sizes):
        return 0
    ratio = max(sizes) / min(sizes)
    return min(int(math.log10(ratio.p) - math.log10(ratio.q)) + 1, MAX_DPS) if ratio > 1 else 0


def _numeric_vieta(points: list, k: int, rhs: sp.Expr, digits: int) -> bool:
    for point, vals, precision in points:
        e_k = sp.N(_elementary(vals, k), precision)
        target = sp.N(rhs.xreplace(point), precision)
        # the sum of products cancels down to e_k: its rounding scales with e_k of |roots|, far
        # above |e_k| when roots of very different sizes meet; the roots carry the extra digits
        # of the coefficients' spread, so this term stays below the target's own tolerance
        rounding = sp.N(_elementary([abs(v) for v in vals], k), 15) * sp.Float(10) ** (5 - precision)
        tol = sp.Float(10) ** (-(digits // 2)) * (1 + abs(target)) + rounding
        if sp.N(abs(e_k - target), precision) > tol:
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


@bounded("root structure")
def root_structure(rec) -> RootStructure:
    """Classify the roots (real distinct / complex pair / repeated) by the discriminant.

    The classification assumes real coefficients (``lam`` real). For degree ``n``:
    ``disc > 0`` means distinct roots with an even number of complex pairs (all real for
    ``n <= 3``), ``disc < 0`` an odd number of complex pairs (exactly one for
    ``n <= 3``), ``disc = 0`` a repeated root. A factor repeated for every parameter value
    (``(r - lam - 1 + gamma)^7`` of an entangled map) makes the discriminant vanish
    identically; the cases then classify the distinct roots by the discriminant of the
    square-free part. Cases that cannot occur on the parameters' domains (``gamma**2 < 0``
    for a real ``gamma``) are dropped, decided exactly. With non-real coefficients (a
    complex value given for ``lam``) roots do not come in conjugate pairs and the
    discriminant is complex: the cases are then ``disc != 0`` (distinct roots) and
    ``disc = 0`` (a repeated root), decided exactly when the discriminant is a number.

    Examples
    --------
    >>> from depthdyn import entangled
    >>> print(root_structure(entangled(n=3)))
    gamma**2 > 0: a repeated root ((r + gamma - lam - 1)**2), the distinct roots real
    Eq(gamma**2, 0): further roots collide
    >>> import sympy
    >>> from depthdyn import momentum
    >>> print(root_structure(momentum(lam=sympy.I, m=sympy.Rational(1, 2), eta=1)))
    True: distinct roots (non-real coefficients)
    """
    n = len(rec.charpoly_coeffs()) - 1
    real = _real_coefficients(rec)
    if n < 2:
        return RootStructure(sp.Integer(1), ((sp.true, "one real root" if real else "one root"),))
    full, reduced, repeated = reduced_discriminant(rec)
    full, reduced = (real_lam(rec, tidy(e)) for e in (full, reduced))
    domains = {_symbol(p.name, real=True) if p.name == rec.lam else p.symbol:
               (p.domain.intersect(REALS) if p.name == rec.lam else p.domain) for p in rec.params}
    distinct = sum(sp.degree(f, r) for f, _ in repeated) + _squarefree_rest(rec, repeated)
    if repeated:
        what = ", ".join(f"({sstr(f)})**{k}" for f, k in repeated)
        head = f"a repeated root ({what}), the distinct roots"
        if not real:
            pos = neg = f"a repeated root ({what}), the other roots distinct"
        elif distinct <= 3:
            pos, neg = f"{head} real", f"{head} with one complex pair"
        else:
            pos, neg = f"{head} with an even number of complex pairs", f"{head} with an odd number of complex pairs"
        zero = "further roots collide" if distinct > 1 else "one distinct root"
        return RootStructure(full, _cases(reduced, domains, pos, zero, neg, distinct, real))
    if not real:
        pos = neg = "distinct roots (non-real coefficients)"
    elif n == 2:
        pos, neg = "two distinct real roots", "a complex-conjugate pair"
    elif n == 3:
        pos, neg = "three distinct real roots", "one real root and a complex-conjugate pair"
    else:
        pos = "distinct roots, an even number of complex-conjugate pairs"
        neg = "distinct roots, an odd number of complex-conjugate pairs"
    return RootStructure(full, _cases(full, domains, pos, "a repeated root", neg, n, real))


def _real_coefficients(rec) -> bool:
    """Whether the characteristic polynomial has real coefficients for real parameters (``lam`` real)."""
    coeffs = [real_lam(rec, c) for c in rec.charpoly_coeffs()]
    return all(sp.expand(c - sp.conjugate(c)) == 0 for c in coeffs)


def _squarefree_rest(rec, repeated) -> int:
    """Degree of the part of the square-free part that is not a repeated factor."""
    return sum(degree_r(f) for f, k in squarefree_factors(rec)[1] if k == 1)


def _number_sign(x: sp.Expr) -> int | None:
    """Exact sign of a real algebraic number; ``None`` if SymPy cannot decide it."""
    if x == 0 or x.is_zero:
        return 0
    return 1 if x.is_positive else -1 if x.is_negative else None


def _can_vanish(disc: sp.Expr, domains: dict) -> bool:
    """False if the complex ``disc`` is proven nonzero on the (real) domains.

    ``disc = c * prod f_i``; a factor vanishes only where its real and imaginary parts
    both do, so one part of constant sign on the domains rules that factor out
    (``27 + 4*I*h**3`` never vanishes for a real ``h``), and so does one part that keeps a
    constant sign on the zeros of the other (:func:`_apart`).
    """
    from .signs import cheap_to_factor, sign

    if not cheap_to_factor(disc):
        return True
    try:
        facs = at_most(REFINE_SECONDS, "factoring the discriminant", lambda: sp.factor_list(disc)[1],
                        [(disc, 1)])
    except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.DomainError):
        facs = [(disc, 1)]
    for f, _ in facs:
        re_, im_ = sp.expand((f + sp.conjugate(f)) / 2), sp.expand((f - sp.conjugate(f)) / (2 * sp.I))
        if not any(part.is_number and part != 0 or sign(part, domains) is not None for part in (re_, im_)):
            if not (_apart(re_, im_, domains) or _apart(im_, re_, domains)):
                return True
    return False


def _apart(a: sp.Expr, b: sp.Expr, domains: dict) -> bool:
    """True if ``a`` is proven nonzero wherever ``b`` vanishes on the domains.

    Each factor of ``b`` either has a strict sign there (no zeros) or is linear in a
    parameter ``v`` with a numeric slope: on its zeros ``v = -b_0 / c``, and ``a`` with that
    substituted must have a strict sign (over all values of the others, a superset of the
    zeros that lie in ``v``'s domain). The ``eta * (m + 1)`` of the momentum block's
    discriminant at ``lam = i`` is the case: ``eta = 0`` leaves ``(m - 1)**2 > 0`` for ``m < 1``.
    """
    from .signs import sign

    if b == 0:  # vanishes everywhere
        return False
    facs = at_most(REFINE_SECONDS, "factoring a part of the discriminant",
                   lambda: sp.factor_list(b)[1], None)
    if facs is None:
        return False
    for g, _ in facs:
        if sign(g, domains) is not None:
            continue
        for v in sorted(g.free_symbols, key=str):
            if sp.degree(g, v) == 1 and (c := g.coeff(v, 1)).is_number and c != 0:
                at_zero = sp.expand(a.subs(v, -g.coeff(v, 0) / c))
                if at_zero.is_number and at_zero != 0 or sign(at_zero, domains) is not None:
                    break
        else:
            return False
    return True


def _cases(disc, domains, pos: str, zero: str, neg: str, distinct: int, real: bool = True) -> tuple:
    """The cases ``disc > 0 / = 0 / < 0`` that can occur on the domains.

    With non-real coefficients (``real`` false) the discriminant is complex and only
    ``disc != 0`` (``pos``) and ``disc = 0`` (``zero``) are told apart.
    """
    from .signs import sign

    if distinct < 2:
        return ((sp.true, pos.split(", the ")[0]),)
    if not real:
        if disc.is_number:
            return ((sp.true, zero if disc == 0 or disc.is_zero else pos),)
        cases = [(sp.Ne(disc, 0, evaluate=False), pos)]
        return tuple(cases + ([(sp.Eq(disc, 0, evaluate=False), zero)] if _can_vanish(disc, domains) else []))
    if disc.is_number:
        sg = _number_sign(disc)
        if sg is not None:
            return ((sp.true, {1: pos, 0: zero, -1: neg}[sg]),)
        strict = weak = None  # an algebraic number SymPy cannot place: all three cases
    else:
        strict, weak = sign(disc, domains), sign(disc, domains, strict=False)
    cases = []
    if strict != -1 and weak != -1:
        cases.append((sp.StrictGreaterThan(disc, 0, evaluate=False), pos))
    if strict is None:
        cases.append((sp.Eq(disc, 0, evaluate=False), zero))
    if strict != 1 and weak != 1:
        cases.append((sp.StrictLessThan(disc, 0, evaluate=False), neg))
    return tuple(cases)
