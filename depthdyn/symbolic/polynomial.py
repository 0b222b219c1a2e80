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

import random
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from ..budget import REFINE_SECONDS, at_most, bounded, part, require
from ..recurrence import REALS, r
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
    K = factor.get_domain()
    if deg == 1 and K in (sp.ZZ, sp.QQ, sp.ZZ_I, sp.QQ_I):
        # exact division in the coefficient field (sympy.roots simplifies a complex root,
        # which costs ~1 s on first use)
        c1, c0 = (K.get_field().convert_from(c, K) for c in factor.rep.to_list())
        return [Root(K.get_field().to_sympy(-c0 / c1), mult, expr, True)]
    if deg == 2:
        a, b, c = factor.all_coeffs()
        disc = _tidy(b**2 - 4 * a * c)
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
    return [Root(_Implicit(expr, i), mult, expr, False) for i in range(deg)]


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
    return _roots_cached(rec)


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

# ----------------------------------------------------------- sparse polynomial algebra
#: Largest discriminant (in top-level terms) that is factored and tidied for printing.
TIDY_TERMS = 400


def _sparse(rec):
    """``(ring element, gens)``: the charpoly in the sparse ring ``K[r, params]``.

    Built from the coefficient list in ``r`` (no expression-level expansion); a denominator
    in the parameters (``lam/L``) is cleared, which keeps the roots.
    """
    return _sparse_cached(rec)


@lru_cache(maxsize=32)
def _sparse_cached(rec):
    coeffs = list(rec.charpoly_coeffs())
    syms = sorted(set().union(*(c.free_symbols for c in coeffs)), key=str)
    try:
        ring, elems = _ring(coeffs, syms, expand=False)
    except sp.PolynomialError:  # rational in a parameter: clear the common denominator
        den = sp.lcm_list([sp.fraction(sp.together(c))[1] for c in coeffs])
        coeffs = [sp.expand(sp.cancel(c * den)) for c in coeffs]
        try:
            ring, elems = _ring(coeffs, syms)
        except sp.PolynomialError:  # sqrt(m) and the like: parameters stay in the domain
            n = len(coeffs) - 1
            _, P = sp.sring(sp.Add(*[c * r ** (n - j) for j, c in enumerate(coeffs)]), r)
            return P, [r]
    n = len(coeffs) - 1
    gens = [r] + syms
    big = sp.polys.rings.PolyRing(gens, ring.domain)
    if not syms:  # the ring was built in r alone: each element is a constant
        elems = [e.as_expr() for e in elems]
        P = big.from_dict({(n - j,): big.domain.convert(c) for j, c in enumerate(elems) if c})
    else:
        P = big.from_dict({(n - j,) + m: v for j, e in enumerate(elems) for m, v in e.items()})
    return P, gens


def _ring(coeffs: list, syms: list, **options):
    """``sring`` of the coefficients over the smallest exact domain.

    Numbers such as ``sqrt(2)*I/2`` (a complex ``lam`` given with a radical) would land in
    ``EX``, where SymPy can neither factor nor take gcds; the algebraic field they generate
    (``QQ<sqrt(2) + I>``) can. Gaussian rationals already get ``QQ_I``; a linear polynomial
    stays in ``EX`` (square-free already, and its root is read off).
    """
    gens = syms or [r]
    ring, elems = sp.sring(coeffs, *gens, **options)
    # a linear polynomial needs no factoring, and the field of 14**(3/4) and I alone costs seconds
    if ring.domain.is_EX and len(coeffs) > 2:
        try:
            ring, elems = sp.sring(coeffs, *gens, extension=True, **options)
        except (sp.PolynomialError, NotImplementedError, sp.polys.polyerrors.CoercionFailed):
            pass  # not algebraic (sin(1)): stays in EX
    return ring, elems


@lru_cache(maxsize=32)
def _sqf(rec):
    """Square-free factorisation of :func:`_sparse` (cached: several analyses need it).

    A square-free specialisation that keeps the degree proves the polynomial square-free
    (a square factor would survive specialisation), which skips the multivariate gcd.
    """
    P, gens = _sparse(rec)
    if len(gens) > 1 and _specialisation_squarefree(P, gens, random.Random(20240612)):
        return P.ring.domain.one, [(P, 1)]
    return P.sqf_list()


def _specialisation_squarefree(P, gens, rng) -> bool:
    n = _degree_r(P)
    for _ in range(3):
        point = {g: rng.randint(-97, 97) for g in gens[1:]}
        sub = sp.Poly(P.as_expr().xreplace(point), r) if len(P) < 64 else _evaluate(P, gens, point)
        if sub.degree() == n:
            return sp.gcd(sub, sub.diff(r)).degree() == 0
    return False


def _evaluate(P, gens, point: dict) -> sp.Poly:
    """``P`` at exact parameter values, as a univariate :class:`~sympy.Poly` in ``r``."""
    dom = P.ring.domain  # ZZ, or ZZ_I under a Gaussian lam: rational points need the field
    if not dom.is_Field and any(not v.is_Integer for v in (sp.sympify(v, strict=True) for v in point.values())):
        P = P.set_ring(P.ring.clone(domain=dom.get_field()))
    sub = P.evaluate([(P.ring.gens[i], P.ring.domain.convert(point[g])) for i, g in enumerate(gens) if i])
    return sp.Poly(sub.as_expr(), r)


def _degree_r(f) -> int:
    return f.degree(0) if f else -1


def _specialisation_irreducible(f, gens, rng) -> bool:
    """True if ``f`` is proven irreducible in ``r``: one exact specialisation of the
    parameters that keeps the degree and is irreducible over the rationals proves it."""
    if len(gens) == 1:
        return False
    n = _degree_r(f)
    for _ in range(4):
        point = {g: rng.randint(-97, 97) for g in gens[1:]}
        sub = _evaluate(f, gens, point)
        if sub.degree() != n:
            continue
        _, facs = sub.factor_list()
        return len(facs) == 1 and facs[0][1] == 1
    return False


@lru_cache(maxsize=64)
def factors_in_r(rec) -> tuple[tuple[sp.Expr, int], ...]:
    """Factors of the characteristic polynomial that involve ``r``, with multiplicities.

    Square-free factorisation in the sparse ring ``QQ[r, params]``; a square-free part of
    degree >= 3 is factored further only if one specialisation of the parameters does not
    already prove it irreducible (multivariate factorisation is the slow step).
    """
    _, gens = _sparse(rec)
    rng = random.Random(20240611)
    out = []
    for f, k in _sqf(rec)[1]:
        if _degree_r(f) < 1:
            continue
        if _degree_r(f) <= 1 or (len(gens) > 1 and _specialisation_irreducible(f, gens, rng)):
            pieces = [(f, 1)]
        elif len(gens) == 1 and _degree_r(f) == 2 and f.ring.domain in (sp.QQ_I, sp.ZZ_I):
            # SymPy factors over the Gaussian rationals through an algebraic field (slow);
            # a quadratic needs no factoring: its roots come from the formula, with the
            # square root of the discriminant exact when it lies in QQ(i)
            pieces = [(f, 1)]
        else:
            pieces = f.factor_list()[1]
        out += [(g.as_expr(), k * j) for g, j in pieces if _degree_r(g) >= 1]
    return tuple(out)  # cached: immutable


@lru_cache(maxsize=8)
def _generic_discriminant(n: int):
    """The discriminant of ``a_0 x^n + ... + a_n`` as a polynomial in the ``a_i``."""
    a = sp.symbols(f"a0:{n + 1}")
    x = sp.Dummy("x")
    return sp.Poly(sp.Poly(list(a), x).discriminant(), *a)


#: Degrees up to which the generic discriminant formula is evaluated (it is cheap to make).
GENERIC_DEGREE = 5


def _discriminant_of(f, gens):
    """``disc_r(f)`` of one ring element ``f`` (a ring element), by the cheaper of two
    exact methods: the generic formula evaluated in the ring (low degree, many symbols) or
    the subresultant discriminant."""
    n = _degree_r(f)
    ring = f.ring
    if n < 2:
        return ring.one  # disc of a linear factor
    coeffs = [f.coeff_wrt(0, n - j) for j in range(n + 1)]
    if len(gens) > 4 and n <= GENERIC_DEGREE:
        generic = _generic_discriminant(n)
        sizes = [max(1, len(c)) for c in coeffs]
        cost = sum(sp.prod([sizes[i] ** e for i, e in enumerate(mon)]) for mon in generic.monoms())
        require("discriminant", float(cost), f"{len(generic.monoms())} generic terms over "
                f"coefficients of {max(sizes)} terms in {len(gens) - 1} symbols")
        total = ring.zero
        for mon, c in generic.terms():
            term = ring(c)
            for i, e in enumerate(mon):
                if e:
                    term *= coeffs[i] ** e
            total += term
        return total
    return f.discriminant()


def _product_discriminant(parts: list, gens):
    """``disc(prod f_i) = prod disc(f_i) * prod_{i<j} res(f_i, f_j)^2`` for coprime ``f_i``."""
    def expr(x):  # a ring element, or a bare coefficient when r was the only generator
        return x.as_expr() if hasattr(x, "as_expr") else parts[0].ring.domain.to_sympy(x)

    pieces = []  # each from its own ring (a resultant drops r): multiplied as expressions
    for i, f in enumerate(parts):
        pieces.append(expr(_discriminant_of(f, gens)))
        pieces += [expr(f.resultant(g)) ** 2 for g in parts[i + 1:]]
    return sp.Mul(*pieces)


@lru_cache(maxsize=32)
def _reduced_discriminant(rec):
    """``(disc of the charpoly, disc of its square-free part, repeated factors)``.

    The first is zero exactly when the polynomial has a repeated factor for all parameters;
    the second then says where further roots collide.
    """
    P, gens = _sparse(rec)
    content, sqf = _sqf(rec)
    content = P.ring.domain.to_sympy(content)  # a domain element (GaussianRational over QQ_I)
    parts = [f for f, _ in sqf if _degree_r(f) >= 1]
    repeated = tuple((f.as_expr(), k) for f, k in sqf if _degree_r(f) >= 1 and k > 1)
    with part("discriminant"):
        reduced = _product_discriminant(parts, gens)
        if repeated:
            return sp.Integer(0), reduced, repeated
        # P = d * charpoly with d the parameter-only content (a cleared denominator, signs):
        # disc(c * prod f) = c^(2n-2) disc(prod f), and disc(d p) = d^(2n-2) disc(p)
        n = _degree_r(P)
        scale = content * sp.Mul(*[f.as_expr() ** k for f, k in sqf if _degree_r(f) < 1])
        d = sp.cancel(P.coeff_wrt(0, n).as_expr() / rec.charpoly_coeffs()[0])
        ratio = sp.cancel(sp.sympify(scale, strict=True) / d)
        if ratio == 1:
            return reduced, reduced, repeated
        return sp.expand(reduced * ratio ** (2 * n - 2)), reduced, repeated


@bounded("discriminant")
def discriminant(rec) -> sp.Expr:
    """Discriminant of the characteristic polynomial in ``r`` (factored).

    Examples
    --------
    >>> from depthdyn import momentum
    >>> discriminant(momentum())
    -4*m + (eta*lam + m + 1)**2
    """
    if len(rec.charpoly_coeffs()) < 3:
        return sp.Integer(1)
    disc, _, _ = _reduced_discriminant(rec)
    return _tidy(disc)


def _large(expr: sp.Expr) -> bool:
    """Too large to factor and tidy quickly (see :func:`.signs.cheap_to_factor`)."""
    from .signs import cheap_to_factor

    return len(sp.Add.make_args(expr)) > TIDY_TERMS or not cheap_to_factor(expr)


def _small_factor(expr: sp.Expr) -> sp.Expr:
    """``factor(expr)`` for expressions small enough to factor quickly, else as given."""
    return expr if _large(expr) else sp.factor(expr)


def _tidy(expr: sp.Expr) -> sp.Expr:
    if _large(expr):  # printed as it is: factoring and collecting are slow at this size
        return expr
    # tidying only chooses a shorter form: past a few seconds the expression is printed as it is
    return at_most(REFINE_SECONDS, "tidying", lambda: _tidier(expr), expr)


def _tidier(expr: sp.Expr) -> sp.Expr:
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
        rhs = _small_factor((-1) ** k * coeffs[k] / coeffs[0])
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
        if sp.Poly(base, r).degree() > 0:
            vals += [v for v in sp.Poly(base, r).nroots(n=digits, maxsteps=200) for _ in range(k)]
    return vals


def _vieta_points(rec, samples: int, digits: int, rng) -> list:
    """``samples`` random rational parameter points with the roots there (``digits`` digits).

    The polynomial is specialised in the sparse ring (cheap even with many symbols).
    """
    P, gens = _sparse(rec)
    symbols, n = sorted(set().union(*(c.free_symbols for c in rec.charpoly_coeffs())), key=str), _degree_r(P)
    out = []
    for _ in range(samples):
        for _attempt in range(20):
            point = _random_point(symbols, rng)
            sub = _evaluate(P, gens, point) if len(gens) > 1 else sp.Poly(P.as_expr().xreplace(point), r)
            if sub.degree() == n:
                break
        out.append((point, _distinct_nroots(sub, digits)))
    return out


def _numeric_vieta(points: list, k: int, rhs: sp.Expr, digits: int) -> bool:
    for point, vals in points:
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
    gamma**2 > 0: a repeated root ((gamma - lam + r - 1)**2), the distinct roots real
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
    full, reduced, repeated = _reduced_discriminant(rec)
    full, reduced = (real_lam(rec, _tidy(e)) for e in (full, reduced))
    domains = {sp.Symbol(p.name, real=True) if p.name == rec.lam else p.symbol:
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
    return sum(_degree_r(f) for f, k in _sqf(rec)[1] if k == 1)


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
