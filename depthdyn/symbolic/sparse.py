"""Sparse polynomial algebra for the characteristic polynomial: factors in ``r`` and the
discriminant.

Large symbolic characteristic polynomials are handled in SymPy's sparse polynomial rings
(:func:`sparse_poly`): their square-free part and irreducible factors in ``r``
(:func:`factors_in_r`), and the discriminant (:func:`discriminant`), reduced by the
factors' own discriminants and resultants so that a product of small pieces is never
expanded. :func:`tidy` keeps large results readable. :mod:`~depthdyn.symbolic.polynomial`
builds the roots' structure and the Vieta relations on these.
"""

from __future__ import annotations

import random
from functools import lru_cache

import sympy as sp

from ..budget import REFINE_SECONDS, at_most, bounded, part, require
from ..limits import TIDY_TERMS
from ..recurrence import r
from .floats import at_data_scale

__all__ = [
    "degree_r",
    "discriminant",
    "evaluate",
    "factors_in_r",
    "reduced_discriminant",
    "small_factor",
    "sparse_poly",
    "squarefree_factors",
    "tidy",
]

# ----------------------------------------------------------- sparse polynomial algebra


def sparse_poly(rec):
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
def squarefree_factors(rec):
    """Square-free factorisation of :func:`sparse_poly` (cached: several analyses need it).

    A square-free specialisation that keeps the degree proves the polynomial square-free
    (a square factor would survive specialisation), which skips the multivariate gcd.
    """
    P, gens = sparse_poly(rec)
    if len(gens) > 1 and _specialisation_squarefree(P, gens, random.Random(20240612)):
        return P.ring.domain.one, [(P, 1)]
    return P.sqf_list()


def _specialisation_squarefree(P, gens, rng) -> bool:
    n = degree_r(P)
    for _ in range(3):
        point = {g: rng.randint(-97, 97) for g in gens[1:]}
        sub = sp.Poly(P.as_expr().xreplace(point), r) if len(P) < 64 else evaluate(P, gens, point)
        if sub.degree() == n:
            return sp.gcd(sub, sub.diff(r)).degree() == 0
    return False


def evaluate(P, gens, point: dict) -> sp.Poly:
    """``P`` at exact parameter values, as a univariate :class:`~sympy.Poly` in ``r``."""
    dom = P.ring.domain  # ZZ, or ZZ_I under a Gaussian lam: rational points need the field
    if not dom.is_Field and any(not v.is_Integer for v in (sp.sympify(v, strict=True) for v in point.values())):
        P = P.set_ring(P.ring.clone(domain=dom.get_field()))
    sub = P.evaluate([(P.ring.gens[i], P.ring.domain.convert(point[g])) for i, g in enumerate(gens) if i])
    return sp.Poly(sub.as_expr(), r)


def degree_r(f) -> int:
    return f.degree(0) if f else -1


def _specialisation_irreducible(f, gens, rng) -> bool:
    """True if ``f`` is proven irreducible in ``r``: one exact specialisation of the
    parameters that keeps the degree and is irreducible over the rationals proves it."""
    if len(gens) == 1:
        return False
    n = degree_r(f)
    for _ in range(4):
        point = {g: rng.randint(-97, 97) for g in gens[1:]}
        sub = evaluate(f, gens, point)
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
    _, gens = sparse_poly(rec)
    rng = random.Random(20240611)
    out = []
    for f, k in squarefree_factors(rec)[1]:
        if degree_r(f) < 1:
            continue
        if degree_r(f) <= 1 or (len(gens) > 1 and _specialisation_irreducible(f, gens, rng)):
            pieces = [(f, 1)]
        elif len(gens) == 1 and degree_r(f) == 2 and f.ring.domain in (sp.QQ_I, sp.ZZ_I):
            # SymPy factors over the Gaussian rationals through an algebraic field (slow);
            # a quadratic needs no factoring: its roots come from the formula, with the
            # square root of the discriminant exact when it lies in QQ(i)
            pieces = [(f, 1)]
        else:
            pieces = f.factor_list()[1]
        out += [(g.as_expr(), k * j) for g, j in pieces if degree_r(g) >= 1]
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
    n = degree_r(f)
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
def reduced_discriminant(rec):
    """``(disc of the charpoly, disc of its square-free part, repeated factors)``.

    The first is zero exactly when the polynomial has a repeated factor for all parameters;
    the second then says where further roots collide.
    """
    P, gens = sparse_poly(rec)
    content, sqf = squarefree_factors(rec)
    content = P.ring.domain.to_sympy(content)  # a domain element (GaussianRational over QQ_I)
    parts = [f for f, _ in sqf if degree_r(f) >= 1]
    repeated = tuple((f.as_expr(), k) for f, k in sqf if degree_r(f) >= 1 and k > 1)
    with part("discriminant"):
        reduced = _product_discriminant(parts, gens)
        if repeated:
            return sp.Integer(0), reduced, repeated
        # P = d * charpoly with d the parameter-only content (a cleared denominator, signs):
        # disc(c * prod f) = c^(2n-2) disc(prod f), and disc(d p) = d^(2n-2) disc(p)
        n = degree_r(P)
        scale = content * sp.Mul(*[f.as_expr() ** k for f, k in sqf if degree_r(f) < 1])
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
    disc, _, _ = reduced_discriminant(rec)
    return tidy(disc)


def _large(expr: sp.Expr) -> bool:
    """Too large to factor and tidy quickly (see :func:`.signs.cheap_to_factor`)."""
    from .signs import cheap_to_factor

    return len(sp.Add.make_args(expr)) > TIDY_TERMS or not cheap_to_factor(expr)


def small_factor(expr: sp.Expr) -> sp.Expr:
    """``factor(expr)`` for expressions small enough to factor quickly, else as given."""
    return expr if _large(expr) else sp.factor(expr)


def tidy(expr: sp.Expr) -> sp.Expr:
    if _large(expr):  # printed as it is: factoring and collecting are slow at this size
        return expr
    # tidying only chooses a shorter form: past a few seconds the expression is printed as it is
    return at_most(REFINE_SECONDS, "tidying", lambda: _tidier(expr), expr)


def _tidier(expr: sp.Expr) -> sp.Expr:
    factored = at_data_scale(sp.factor(expr))  # float data: (1e32*lam + ...)**2 at the data's scale
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
