"""Depth limits from the characteristic polynomial itself: Puiseux series of the roots near 1.

:func:`~depthdyn.symbolic.solve.depth_limit` expands each mode ``c_i(L) r_i^L`` of a
recurrence whose coefficients scale with ``eps = 1/L``. Through the radical formulas of the
roots that fails for cubics and beyond: SymPy cannot expand Cardano's nested cube roots of
``lam*eps`` (``Pow._eval_nseries`` raises ``NotImplementedError``), and a principal cube
root may jump between branches as the parameters move. Here the roots are expanded from
``P(r, eps)`` directly, which needs neither formula nor branch choice.

Near ``r = 1`` write ``r = 1 + s``. The Newton polygon of ``Q(s, eps) = P(1 + s, eps)``
(the lower convex hull of the points ``(i, v_i)``, ``v_i`` the order in ``eps`` of the
coefficient of ``s^i``) has one edge per speed ``s ~ eps^(p/q)``; on an edge, the leading
coefficients ``c`` of its branches are the roots of the edge polynomial. With
``eps = t^q`` and ``s = t^p (c + u(t))``, the implicit function theorem gives ``u`` as a
power series in ``t`` (``c`` a simple root), computed term by term. All arithmetic is exact,
with ``c`` kept as a symbol modulo its irreducible factor ``sigma(c)`` of the edge polynomial,
so one computation serves every root of ``sigma`` (its conjugate branches included) and the
sum over them is taken at the end: through the explicit roots of ``sigma`` where SymPy gives
them, else as a :class:`sympy.RootSum`.

With ``x_l = sum_i N(r_i) / P'(r_i) r_i^(l - s)`` (simple roots; see
:mod:`depthdyn.symbolic.solve`), each branch contributes

.. math::

    \\frac{N(r)}{P'(r)}\\, r^{-s}\\, e^{\\log(r)/\\varepsilon}
    = e^{a_1}\\, \\frac{N(r)}{P'(r)}\\, r^{-s}\\,
      \\exp\\Big(\\sum_{k > q} a_k t^{k-q}\\Big), \\qquad \\log r = \\sum_k a_k t^k,

a series in ``t``; a branch with ``a_k != 0`` for some ``k < q`` tends to 1 slower than
``1/L`` (``r^L ~ exp(c L^(1 - k/q))``), and ``x_L`` has no limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..errors import DegreeTooLargeError, ParameterError
from ..recurrence import r as _r
from .modes import initial_data

__all__ = ["Branch", "branches_at_one", "limit_terms", "expansion", "scaled_polynomials"]

_t = sp.Symbol("t")
_c = sp.Symbol("c")
_s = sp.Symbol("s")


@dataclass(frozen=True)
class Branch:
    """The roots ``r = 1 + t^p (c + u(t))``, ``eps = t^q``, one for each root ``c`` of ``sigma``.

    ``series`` is ``r`` as a polynomial in ``t`` (truncated after ``t^order``) whose
    coefficients are polynomials in ``c`` reduced modulo ``sigma`` (a polynomial in the
    symbol ``c``); ``sigma = c`` with ``p = 0`` stands for the exact root ``r = 1``.
    """

    p: int
    q: int
    sigma: sp.Expr
    series: sp.Expr
    order: int

    @property
    def count(self) -> int:
        """How many roots of ``P`` this branch stands for."""
        return int(sp.degree(self.sigma, _c))


def _reduce(expr: sp.Expr, sigma: sp.Expr, order: int) -> sp.Expr:
    """``expr`` (polynomial in ``t`` and ``c``) modulo ``sigma(c)``, truncated after ``t^order``."""
    expr = sp.expand(expr)
    kept = sp.Add(*[term for term in sp.Add.make_args(expr) if sp.degree(term, _t) <= order])
    if sp.degree(sigma, _c) < 1:
        return kept
    return sp.expand(sp.rem(kept, sigma, _c))


def _coeff(expr: sp.Expr, k: int) -> sp.Expr:
    return sp.expand(expr).coeff(_t, k)


def _invert(value: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """``1/value`` modulo ``sigma(c)`` (``value`` free of ``t`` and not 0 there)."""
    if sp.degree(sigma, _c) <= 1 or not value.has(_c):
        value = sp.rem(value, sigma, _c) if sp.degree(sigma, _c) == 1 else value
        return sp.cancel(1 / value)
    return sp.expand(sp.invert(value, sigma, _c))


def _valuations(Q: sp.Poly, eps: sp.Symbol, m: int) -> list:
    """``v_i``: the order in ``eps`` of the coefficient of ``s^i`` (None where it is 0), ``i <= m``."""
    out = []
    for i in range(m + 1):
        coeff = sp.Poly(Q.as_expr().coeff(_s, i), eps)
        out.append(None if coeff.is_zero else min(e for (e, ) in coeff.monoms()))
    return out


def _edges(v: list) -> list[tuple[int, int]]:
    """The edges ``(a, b)`` of the lower convex hull of the points ``(i, v_i)`` from the first to the last."""
    pts = [(i, vi) for i, vi in enumerate(v) if vi is not None]
    edges, at = [], pts[0]
    while at != pts[-1]:
        slopes = [(Fraction(vi - at[1], i - at[0]), -i) for i, vi in pts if i > at[0]]
        best, far = min(slopes)
        edges.append((at[0], -far))
        at = next(pt for pt in pts if pt[0] == -far)
    return edges


def _slow(sigma: sp.Expr, gamma: Fraction) -> ParameterError:
    return ParameterError(
        f"roots near r = 1 move like L**(-{gamma}) (r - 1 ~ c*L**(-{gamma}) with "
        f"{sp.sstr(sp.Eq(sigma, 0))}), slower than 1/L: r**L grows or turns like exp(c*L**({1 - gamma})), "
        "so x_L has no limit")


def branches_at_one(P: sp.Expr, r: sp.Symbol, eps: sp.Symbol, terms: int) -> list[Branch]:
    """Every root of ``P(r, eps)`` that tends to 1 as ``eps -> 0+``, one :class:`Branch` per factor of an edge polynomial.

    ``P`` is a polynomial in ``r`` and ``eps`` (coefficients in the other parameters); each
    series is long enough for ``terms`` corrections in ``eps``.

    Raises
    ------
    ParameterError
        A branch tends to 1 slower than ``eps`` (``s ~ eps^gamma``, ``gamma < 1``): no limit.
    DegreeTooLargeError
        An edge polynomial has a repeated factor (branches that separate only at a higher
        order), or ``r = 1`` is a repeated root for every ``eps``.
    """
    Q = sp.Poly(sp.expand(P.xreplace({r: 1 + _s})), _s, eps)
    at0 = sp.Poly(Q.as_expr().xreplace({eps: 0}), _s)
    if at0.is_zero:
        raise ParameterError("the characteristic polynomial vanishes at L = oo; divide out the common power "
                             "of 1/L")
    m = min(i for (i, ) in at0.monoms())  # multiplicity of r = 1 at eps = 0
    v = _valuations(Q, eps, m)
    exact = next(i for i, vi in enumerate(v) if vi is not None)  # s^exact divides Q: r = 1 exactly
    if exact > 1:
        raise DegreeTooLargeError("r = 1 is a repeated root for every depth; depth_limit needs it simple")
    Qx = Q.as_expr()
    found = []
    for a, b in _edges(v[exact:]):
        a, b = a + exact, b + exact
        gamma = Fraction(v[a] - v[b], b - a)
        edge = sp.Add(*[Qx.coeff(_s, i).coeff(eps, v[i]) * _c ** (i - a) for i in range(a, b + 1)
                        if v[i] is not None and v[i] - v[b] == gamma * (b - i)])
        for sigma, mult in sp.factor_list(sp.expand(edge), _c)[1]:
            if sp.degree(sigma, _c) < 1:
                continue
            sigma = sp.Poly(sigma, _c, field=True).monic().as_expr()
            if gamma < 1:
                raise _slow(sigma, gamma)
            if mult > 1:
                raise DegreeTooLargeError(
                    f"roots near r = 1 that agree to first order ({sp.sstr(sigma)})**{mult}; depth_limit "
                    "needs them to separate at the first order")
            found.append((gamma, sigma, v[a] * gamma.denominator + gamma.numerator * a))
    out = [Branch(0, 1, _c, sp.Integer(1), terms + 3)] if exact == 1 else []
    for gamma, sigma, w in found:
        p, q = gamma.numerator, gamma.denominator
        order = q * (terms + 3) + 2 * m * p
        out.append(_branch(Qx, eps, p, q, sigma, w, order))
    return out


def _branch(Qx: sp.Expr, eps: sp.Symbol, p: int, q: int, sigma: sp.Expr, w: int, order: int) -> Branch:
    """``r = 1 + t^p (c + u(t))`` with ``u`` to ``t^(order - p)``, term by term from
    ``G(u, t) = Q(t^p (c + u), t^q) / t^w = 0`` (``w``: the order of the edge's terms)."""
    u = sp.Symbol("u")
    G = sp.expand(sp.expand(Qx.xreplace({_s: _t**p * (_c + u), eps: _t**q})) / _t**w)
    g1 = _reduce(G.diff(u).xreplace({u: 0, _t: 0}), sigma, 0)
    if g1 == 0:
        raise DegreeTooLargeError("a branch near r = 1 is not simple; depth_limit needs simple roots")
    inv = _invert(g1, sigma)
    series = sp.Integer(0)
    for k in range(1, order - p + 1):
        residual = _coeff(_reduce(G.xreplace({u: series}), sigma, k), k)
        series = series + _reduce(-residual * inv, sigma, 0) * _t**k
    return Branch(p, q, sigma, sp.expand(1 + _t**p * (_c + series)), order)


# ------------------------------------------------------------ series arithmetic
def _log1p(x: sp.Expr, sigma, order: int) -> sp.Expr:
    out, power = sp.Integer(0), sp.Integer(1)
    low = min(sp.Poly(x, _t).monoms())[0] if x != 0 else order + 1
    for n in range(1, order // max(low, 1) + 1):
        power = _reduce(power * x, sigma, order)
        out += sp.Rational((-1) ** (n + 1), n) * power
    return _reduce(out, sigma, order)


def _exp(x: sp.Expr, sigma, order: int) -> sp.Expr:
    """``exp(x)`` for ``x = O(t)``."""
    out, power = sp.Integer(1), sp.Integer(1)
    for n in range(1, order + 1):
        power = _reduce(power * x, sigma, order)
        out += power / sp.factorial(n)
    return _reduce(out, sigma, order)


def _low(x: sp.Expr, sigma, order: int) -> int | None:
    """The lowest power of ``t`` in ``x`` that is not 0 modulo ``sigma`` (None: none up to ``order``)."""
    return next((k for k in range(order + 1) if _reduce(_coeff(x, k), sigma, 0) != 0), None)


def _divide(num: sp.Expr, den: sp.Expr, sigma, order: int) -> tuple[sp.Expr, int, int]:
    """``(num/den * t^shift, shift, precision)``: the quotient as a series known to ``t^precision``,
    ``shift`` the order of ``den`` minus that of ``num`` (both known to ``t^order``)."""
    vn, vd = _low(num, sigma, order), _low(den, sigma, order)
    if vd is None:
        raise DegreeTooLargeError("a root near r = 1 is repeated for every depth; depth_limit needs simple "
                                  "roots")
    if vn is None:
        return sp.Integer(0), 0, order
    keep = order - max(vn, vd)
    num = _reduce(sp.expand(sp.expand(num) / _t**vn), sigma, keep)
    den = _reduce(sp.expand(sp.expand(den) / _t**vd), sigma, keep)
    inv0 = _invert(_reduce(_coeff(den, 0), sigma, 0), sigma)
    rest = _reduce(1 - den * inv0, sigma, keep)  # den = d0 (1 - rest), rest = O(t)
    inverse, power = sp.Integer(1), sp.Integer(1)
    for _ in range(keep):
        power = _reduce(power * rest, sigma, keep)
        inverse += power
    return _reduce(num * inverse * inv0, sigma, keep), vd - vn, keep


def _sum_over_roots(f: sp.Expr, a1: sp.Expr, sigma: sp.Expr, roots) -> sp.Expr:
    """``sum of f(c) exp(a1(c))`` over the roots ``c`` of ``sigma``."""
    if sp.degree(sigma, _c) <= 1:
        at = {_c: sp.solve(sigma, _c)[0]}
        return (f * sp.exp(a1)).xreplace(at)
    if not a1.has(_c):  # the trace of f: exact in the parameters
        return sp.exp(a1) * sp.RootSum(sp.Poly(sigma, _c), sp.Lambda(_c, f))
    if roots is not None:
        return sp.Add(*[(f * sp.exp(a1)).xreplace({_c: c}) for c in roots])
    return sp.RootSum(sp.Poly(sigma, _c), sp.Lambda(_c, f * sp.exp(a1)))


def limit_terms(branch: Branch, N: sp.Expr, dP: sp.Expr, r: sp.Symbol, eps: sp.Symbol, start: int,
                terms: int) -> dict:
    """Power of ``eps`` (a ``Fraction``) -> the branch's exact contribution to the
    coefficient of that power in ``x_L``, summed over the roots ``c`` of ``sigma``, for the powers
    up to ``eps^terms``; ``N`` and ``dP = P'`` as in the module docstring."""
    sigma, q, order = branch.sigma, branch.q, branch.order
    rt = branch.series
    log = _log1p(_reduce(rt - 1, sigma, order), sigma, order)
    a1 = _reduce(_coeff(log, q), sigma, 0)
    head = sum(_coeff(log, k) * _t**k for k in range(q + 1))
    rest = _reduce(sp.expand(log - head) / _t**q, sigma, order - q)
    at = {r: rt, eps: _t**q}
    weight, shift, keep = _divide(N.xreplace(at), dP.xreplace(at), sigma, order)
    keep = min(keep, order - q)
    if start:
        power = rt if start < 0 else _divide(sp.Integer(1), rt, sigma, keep)[0]
        for _ in range(abs(start)):
            weight = _reduce(weight * power, sigma, keep)
    body = _reduce(weight * _exp(rest, sigma, keep), sigma, keep)
    want = q * terms + shift
    if want > keep:  # the series were made long enough for this; a shortfall is a defect here
        raise DegreeTooLargeError(f"the expansion near r = 1 needs {want} terms, {keep} were computed")
    roots = None
    if sp.degree(sigma, _c) > 1 and a1.has(_c):
        found = sp.roots(sp.Poly(sigma, _c))
        roots = list(found) if sum(found.values()) == sp.degree(sigma, _c) else None
    out = {}
    for k in range(want + 1):
        f = _reduce(_coeff(body, k), sigma, 0)
        if f != 0:
            power = Fraction(k - shift, q)
            out[power] = out.get(power, sp.Integer(0)) + _sum_over_roots(f, a1, sigma, roots)
    return out


def _check_inside(rest: sp.Poly, r: sp.Symbol, depth: str) -> None:
    """Every root of ``rest`` (the roots at ``L = oo`` other than 1) strictly inside the unit circle."""
    from .circle import circle_roots, exact_poly

    if rest.degree() < 1:
        return
    if not rest.free_symbols - {r}:
        outside = [c for c in circle_roots(exact_poly(rest.as_expr())) if c.where >= 0]
        if outside:
            value = sp.sstr(sp.N(outside[0].value, 6))
            raise ParameterError(f"the mode r = {value} at {depth} = oo is not inside the unit circle: "
                                 "x_L has no limit")
        return
    found = sp.roots(rest, r)
    if sum(found.values()) != rest.degree():
        raise ParameterError(f"cannot decide whether the roots of {sp.sstr(rest.as_expr())} at {depth} = oo "
                             "lie inside the unit circle; substitute values")
    for r0 in found:
        small = sp.Abs(r0) < 1
        if small is not sp.true:
            raise ParameterError(f"the mode r = {sp.sstr(r0)} at {depth} = oo: "
                                 + ("x_L has no limit" if small is sp.false else
                                    "cannot decide |r| < 1; substitute values"))


def expansion(P: sp.Expr, N: sp.Expr, r: sp.Symbol, eps: sp.Symbol, start: int, terms: int,
              depth: str = "L") -> dict:
    """``x_L`` as ``{power of eps: coefficient}`` (powers up to ``terms``, fractions included),
    from ``x_l = sum_i N(r_i) / P'(r_i) r_i^(l - start)`` at ``l = L = 1/eps``.

    ``P`` is the characteristic polynomial with ``L = 1/eps``, a polynomial in ``r`` and
    ``eps``; ``N`` the numerator of the generating function (see
    :mod:`depthdyn.symbolic.solve`), rational in ``eps``. Roots that tend to a point strictly
    inside the unit circle are dropped (exponentially small); a root tending to any other
    point than 1 on or outside it raises :class:`~depthdyn.errors.ParameterError`.
    """
    num, den = sp.fraction(sp.together(N))
    if den.has(r):
        raise ParameterError("the initial data depend on r")  # never: N is a polynomial in r
    P0 = sp.Poly(sp.expand(P).xreplace({eps: 0}), r)
    if P0.degree() != sp.degree(P, r):
        raise ParameterError(f"the degree in r drops as {depth} -> oo: a root escapes to infinity")
    m = 0
    while P0.eval(1) == 0:
        P0, m = sp.quo(P0, sp.Poly(r - 1, r)), m + 1
    _check_inside(P0, r, depth)
    out: dict = {}
    if m == 0:
        return out
    dP = sp.expand(sp.diff(P, r) * den)
    for branch in branches_at_one(P, r, eps, terms):
        for power, value in limit_terms(branch, sp.expand(num), dP, r, eps, start, terms).items():
            out[power] = out.get(power, sp.Integer(0)) + value
    return out


def scaled_polynomials(rec, initial, realisation, sub: dict) -> tuple[sp.Expr, sp.Expr, int]:
    """``(P, N, first)`` of a scalar recurrence with ``sub`` (``L -> 1/eps``) put in: ``P`` the
    characteristic polynomial with its denominators in ``eps`` cleared, ``N`` the numerator of
    the generating function from the initial data (:func:`~depthdyn.symbolic.modes.initial_data`,
    with the same coefficients), ``first`` the index of the first initial value."""
    first, vals, _ = initial_data(rec, initial, 0, realisation)
    a = [sp.together(c.xreplace(sub)) for c in sp.Poly(rec.charpoly(), _r).all_coeffs()]
    scale = sp.lcm([sp.fraction(c)[1] for c in a])
    a = [sp.cancel(c * scale) for c in a]
    D = len(a) - 1
    P = sp.expand(sp.Add(*[c * _r ** (D - j) for j, c in enumerate(a)]))
    xs = [sp.sympify(v, strict=True).xreplace(sub) for v in vals]
    N = sp.Add(*[sp.Add(*[a[j] * xs[k - j] for j in range(k + 1)]) * _r ** (D - 1 - k) for k in range(D)])
    return P, N, first
