"""Stability numbers when the characteristic polynomial is not ``rho(r) - lam sigma(r)``.

Runge-Kutta blocks (``Q(lam) r - P(lam)``, ``R = P/Q`` the stability function), the
oscillator toy in ``beta``, or any scalar recurrence whose coefficients are polynomial
or rational in the one free parameter ``x`` (coefficients: rationals, radicals such as
``sqrt(3)`` of an SDIRK tableau, ``I``).

**Axis sets.** With the Cayley map ``r = (1 + i t)/(1 - i t)`` the circle ``|r| = 1``
(less ``r = -1``) becomes the real ``t`` line: ``G(t, x) = (1 - i t)^n p(r(t), x)``. A
root is on the circle iff ``Re G = Im G = 0`` at a real ``t`` (``x`` and ``t`` real;
on the imaginary axis ``lam = i x``), or ``p(-1, x) = 0``. The places in ``x`` where the
configuration of roots (inside / on / outside, multiplicities on the circle) can change
are therefore real roots of a finite list of univariate polynomials: the resultant
``Res_t`` of ``Re G``, ``Im G`` after removing their gcd ``g``; the leading coefficient
and discriminant in ``t`` of ``g`` (a whole curve of roots on the circle, as for the
oscillator) and its resultants with the rest; ``p(-1, x)``; the leading coefficient of
``p`` in ``r`` (degree drop) and the denominators. Coefficients with radicals are
replaced by their norm (product over conjugates, rational), a superset of places. In
each gap strict stability and the root condition are decided exactly at one rational
point (:func:`~depthdyn.symbolic.circle.circle_roots`); at each place exactly when it is
rational or a surd, with 60 digits at a ``CRootOf`` place (as in :mod:`.numbers`).

**A-stability of ``R = P/Q``** (first order in ``r``), exactly: ``R`` has no pole in
``Re z < 0`` (the roots of ``Q`` mapped to the disc by ``w = (1 + z)/(1 - z)``,
decided by :func:`~depthdyn.symbolic.circle.circle_roots`) and ``E(y) = |Q(iy)|^2 -
|P(iy)|^2 >= 0`` on the real line (the imaginary-axis root-condition set is the whole
line); then ``|R| < 1`` in the open left half-plane by the maximum principle, and
``A(alpha) = 90`` degrees exactly. Otherwise ``A(alpha)`` from ``H(rho, s) = |Q(z)|^2 -
|P(z)|^2`` on the rays ``z = rho(-1 + i s)``: the first ``s = tan(alpha) >= 0`` where
``H(., s)`` gains a positive root is a real root of ``disc_rho H``, ``lc_rho H`` or
``H(0, s)``.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from ..errors import ParameterError, UnknownParameterError
from ..recurrence import r
from .circle import circle_roots, exact_poly, verdicts
from .intervals import ExactPoint, IntervalUnion, real_points, sweep

__all__ = ["general_shape", "general_axis_sets", "rational_r", "a_stability", "linear_order"]

_t = sp.Symbol("t", real=True)
_x = sp.Symbol("x", real=True)
_rho = sp.Symbol("rho", real=True)
_s = sp.Symbol("s", real=True)
_T = sp.Dummy("T")


# ----------------------------------------------------------------- shape
def only_free(rec, param: str):
    """The symbol of ``param``, refusing a matrix recurrence or other free parameters."""
    if not rec.is_scalar:
        raise ParameterError("stability numbers need a scalar recurrence (one eigenmode)")
    names = rec.param_names
    if param not in names:
        raise UnknownParameterError(f"{rec.name} has no free parameter {param!r}; free: {list(names)}")
    left = [n for n in names if n != param]
    if left:
        raise ParameterError(f"give values for {left} (e.g. {left[0]}=1/2): stability numbers "
                             f"need {param} as the only free parameter")
    return rec.param(param).symbol


def general_shape(rec, param: str):
    """``(num, den, lam)``: ``charpoly = num(r, lam) / den(lam)``, numerator a polynomial in ``r``."""
    lam = only_free(rec, param)
    num, den = sp.fraction(sp.together(sp.expand(rec.charpoly())))
    if den.has(r) or not num.has(lam):
        raise ParameterError(f"the characteristic polynomial of {rec.name} does not depend on {param} "
                             "polynomially or rationally")
    try:
        sp.Poly(num, r, lam)
        sp.Poly(den, lam)
    except sp.PolynomialError:
        raise ParameterError(f"the characteristic polynomial of {rec.name} is not rational in "
                             f"{param}") from None
    coeffs = sp.Poly(num, r, lam).coeffs() + sp.Poly(den, lam).coeffs()
    if any(c.free_symbols or not c.is_algebraic for c in coeffs):
        raise ParameterError("stability numbers need exact algebraic coefficients (rationals, radicals, I)")
    return sp.expand(num), sp.expand(den), lam


# ----------------------------------------------------------------- exact real places
def _split(expr) -> tuple[sp.Expr, sp.Expr]:
    """Real and imaginary parts of a polynomial in real symbols with algebraic coefficients."""
    expr = sp.expand(expr)
    gens = sorted(expr.free_symbols, key=str)
    if not gens:
        re, im = expr.as_real_imag()
        return sp.expand(re), sp.expand(im)
    P = sp.Poly(expr, *gens)
    re = sum((sp.expand(sp.re(c)) * sp.Mul(*[g**e for g, e in zip(gens, m, strict=True)])
              for m, c in P.terms()), sp.S.Zero)
    im = sum((sp.expand(sp.im(c)) * sp.Mul(*[g**e for g, e in zip(gens, m, strict=True)])
              for m, c in P.terms()), sp.S.Zero)
    return sp.expand(re), sp.expand(im)


def _rational_poly(expr, x) -> sp.Poly | None:
    """A rational polynomial whose real roots include those of ``expr`` (the norm over its field)."""
    expr = sp.expand(expr)
    if expr == 0 or not expr.has(x):
        return None
    P = sp.Poly(expr, x)
    if P.domain.is_ZZ or P.domain.is_QQ:
        return P
    P = sp.Poly(expr, x, extension=True)
    N = P.norm()
    return sp.Poly(N.as_expr(), x)


def _places(exprs, x) -> list[ExactPoint]:
    out: list[ExactPoint] = []
    for e in exprs:
        P = _rational_poly(e, x)
        if P is None:
            continue
        for pt in real_points(P):
            out.append(pt)
    return unique_points(out)


def same_point(p: ExactPoint, q: ExactPoint) -> bool:
    """Exact equality of two real algebraic numbers given by isolating intervals."""
    if p.rational and q.rational:
        return p.lo == q.lo
    if p.poly.degree() != q.poly.degree():
        return False
    a = sp.Poly(p.poly.as_expr(), p.poly.gen).monic()
    b = sp.Poly(q.poly.as_expr().xreplace({q.poly.gen: p.poly.gen}), p.poly.gen).monic()
    if a != b:
        return False
    lo, hi = max(p.lo, q.lo), min(p.hi, q.hi)
    return bool(lo <= hi) and a.count_roots(lo, hi) >= 1


def unique_points(points: list) -> list:
    """Sorted, without exact duplicates (near-equal values are compared exactly, never by digits)."""
    out: list[ExactPoint] = []
    # 50-digit keys with SymPy's unbounded exponent: a float would tie 0 and -3/10^400
    for p in sorted(points, key=lambda q: sp.N(q.value, 50)):
        if any(same_point(p, q) for q in out[-3:]):
            continue
        out.append(p)
    return out


# ----------------------------------------------------------------- deciding one point
def _verdict_exact(num, den, lam, value) -> tuple[bool, bool]:
    if sp.expand(den.xreplace({lam: value})) == 0:
        return False, False
    P = exact_poly(num.xreplace({lam: value}))
    if P.degree() < sp.degree(num, r):  # degree drop: a root went to infinity
        return False, False
    return verdicts(circle_roots(P))


def _verdict_digits(num, den, lam, value) -> tuple[bool, bool]:
    """At a ``CRootOf`` place: roots at 60 digits; within ``1e-30`` of the circle is on it."""
    if abs(sp.N(den.xreplace({lam: value}), 60)) < sp.Float("1e-40", 60):
        return False, False
    cs = [sp.expand(c) for c in sp.Poly(num, r).all_coeffs()]
    with mpmath.workdps(80):
        mc = [mpmath.mpc(*(str(sp.N(part, 80)) for part in sp.N(c.xreplace({lam: value}), 90).as_real_imag()))
              for c in cs]
        if abs(mc[0]) < mpmath.mpf("1e-40"):
            return False, False
        found = mpmath.polyroots(mc, maxsteps=400, extraprec=200) if len(mc) > 2 else [-mc[1] / mc[0]]
        found = found if isinstance(found, list) else [found]
        tol = mpmath.mpf("1e-30")
        strict = all(abs(z) < 1 - tol for z in found)
        marginal = True
        for i, z in enumerate(found):
            if abs(z) > 1 + tol:
                marginal = False
            elif abs(abs(z) - 1) <= tol and any(abs(z - w) < mpmath.mpf("1e-20")
                                                for j, w in enumerate(found) if j != i):
                marginal = False
    return strict, marginal


def _verdict(num, den, lam, value) -> tuple[bool, bool]:
    if value.has(sp.CRootOf):
        return _verdict_digits(num, den, lam, value)
    return _verdict_exact(num, den, lam, value)


# ----------------------------------------------------------------- the axis sets
def _place_polys(num, den, lam, axis: str) -> list:
    """Polynomials in ``_x`` whose real roots contain every place where the verdicts can change."""
    at = _x if axis == "real" else sp.I * _x
    p = sp.expand(num.xreplace({lam: at}))
    n = sp.degree(p, r)
    cs = sp.Poly(p, r).all_coeffs()
    polys = [*_split(cs[0]), *_split(den.xreplace({lam: at})), *_split(p.xreplace({r: -1}))]
    G = sp.expand(sum((c * (1 + sp.I * _t) ** (n - j) * (1 - sp.I * _t) ** j
                       for j, c in enumerate(cs)), sp.S.Zero))
    A, B = _split(G)
    g = sp.gcd(A, B)  # a factor of both: a curve of roots on the circle (the oscillator), or a degree drop
    if sp.degree(g, _t) > 0:
        A1, B1 = sp.cancel(A / g), sp.cancel(B / g)
        gP = sp.Poly(g, _t)
        polys += [sp.expand(gP.LC()), sp.discriminant(gP)]
        polys += [sp.resultant(g, A1, _t) if sp.degree(A1, _t) > 0 else A1,
                  sp.resultant(g, B1, _t) if sp.degree(B1, _t) > 0 else B1]
        polys.append(gP.TC())  # where t = 0 (r = 1) joins that curve
    else:
        A1, B1 = A, B
        polys.append(g)
    if sp.degree(A1, _t) > 0 and sp.degree(B1, _t) > 0:
        polys.append(sp.resultant(A1, B1, _t))
    else:  # one part is free of t: its roots in x, and the other one's leading coefficient
        polys += [A1 if not A1.has(_t) else sp.Poly(A1, _t).LC(),
                  B1 if not B1.has(_t) else sp.Poly(B1, _t).LC()]
    return [sp.expand(q) for q in polys if q != 0 and not sp.expand(q).has(_t)]


def general_axis_sets(num, den, lam, axis: str, var: str):
    """Strict and root-condition sets of ``num(r, lam)/den(lam)`` on the real axis or ``lam = i x``."""
    pts = _places(_place_polys(num, den, lam, axis), _x)
    at = (lambda v: v) if axis == "real" else (lambda v: sp.I * v)
    memo: dict = {}

    def gap(v, which):
        if v not in memo:
            memo[v] = _verdict(num, den, lam, at(v))
        return memo[v][which]

    def point(b, which):
        key = ("pt", b.value)
        if key not in memo:
            memo[key] = _verdict(num, den, lam, at(b.value))
        return memo[key][which]

    strict = sweep(pts, lambda v: gap(v, 0), lambda b: point(b, 0))
    marginal = sweep(pts, lambda v: gap(v, 1), lambda b: point(b, 1))
    how = (f"roots on the circle possible at {len(pts)} exact places on the {axis} axis (Cayley "
           "resultants); exact verdicts in each gap and at each place")
    return IntervalUnion(strict, var, how), IntervalUnion(marginal, var, how)


# ----------------------------------------------------------------- one-step methods
def rational_r(num, den, lam):
    """``(P, Q)`` in ``lam`` with ``charpoly ~ Q r - P`` (first order in ``r``), else None."""
    if sp.degree(num, r) != 1:
        return None
    Pn = sp.Poly(num, r)
    Q, P = sp.expand(Pn.coeff_monomial(r)), sp.expand(-Pn.coeff_monomial(1))
    g = sp.gcd(P, Q)
    if sp.degree(g, lam) > 0:
        P, Q = sp.cancel(P / g), sp.cancel(Q / g)
    return sp.expand(P), sp.expand(Q)


def _no_left_poles(Q, lam) -> bool:
    """No root of ``Q`` in ``Re z <= 0``: ``w = (1 + z)/(1 - z)`` maps those into ``|w| <= 1``."""
    d = sp.degree(Q, lam)
    if d <= 0:
        return True
    w = sp.Symbol("w")
    Qw = sp.expand(sp.cancel(Q.xreplace({lam: (w - 1) / (w + 1)}) * (w + 1) ** d))
    found = circle_roots(exact_poly(Qw.xreplace({w: r})))
    return all(c.where > 0 for c in found)


def a_stability(P, Q, lam, imag_marginal: IntervalUnion) -> dict:
    """A-stability, L-stability and ``A(alpha)`` of ``R = P/Q`` (real coefficients), exactly.

    Returns ``{"a_stable", "l_stable", "tan"}``: ``tan(alpha)`` exact, None for 90 degrees.
    """
    whole = len(imag_marginal.intervals) == 1 and imag_marginal.intervals[0].lo == -sp.oo and \
        imag_marginal.intervals[0].hi == sp.oo
    dp, dq = int(sp.degree(P, lam)), int(sp.degree(Q, lam))
    a_stable = bool(whole and dp <= dq and max(dp, dq) > 0 and _no_left_poles(Q, lam))
    l_stable = bool(a_stable and dp < dq)
    s_star = _sector(P, Q, lam)
    if a_stable != (s_star is None):  # two exact arguments: they must agree
        raise ParameterError(  # pragma: no cover - a contradiction is a bug
            "A-stability by the maximum principle and by the sector scan disagree")
    return {"a_stable": a_stable, "l_stable": l_stable, "tan": s_star}


def _sector(P, Q, lam):
    """``tan(alpha)`` (exact) of the largest stable open sector ``|arg(-z)| < alpha``; None: 90 degrees."""
    z = _rho * (-1 + sp.I * _s)
    Hr, _ = _split(sp.expand(Q.xreplace({lam: z}) * Q.xreplace({lam: sp.conjugate(z)})
                             - P.xreplace({lam: z}) * P.xreplace({lam: sp.conjugate(z)})))
    H = sp.Poly(Hr, _rho)
    while not H.is_zero and H.eval(0) == 0:  # rho = 0 is lam = 0, where R = 1: divide it out
        H = sp.Poly(sp.quo(H, sp.Poly(_rho, _rho)), _rho)
    if H.is_zero:
        return sp.Integer(0)
    cands = [sp.Poly(H.LC(), _s), sp.Poly(H.eval(0), _s)]
    if H.degree() > 1:
        cands.append(sp.Poly(sp.discriminant(H), _s))
    pts = [p for p in _places([c.as_expr() for c in cands], _s) if p.sign_of(sp.Poly(_s, _s)) >= 0]

    def bad(sval) -> bool:  # H(., s) has a root rho > 0: a root on the circle inside the sector
        h = sp.Poly(sp.expand(H.as_expr().xreplace({_s: sval})), _rho)
        if h.is_zero:
            return True
        if not (h.domain.is_QQ or h.domain.is_ZZ):
            with mpmath.workdps(60):
                cs = [mpmath.mpf(str(sp.N(c, 70))) for c in h.all_coeffs()]
                return any(abs(mpmath.im(v)) < 1e-40 and mpmath.re(v) > 0
                           for v in (mpmath.polyroots(cs, maxsteps=400, extraprec=200) if len(cs) > 2
                                     else [-cs[1] / cs[0]] if len(cs) == 2 else []))
        return h.count_roots(0, sp.oo) - (1 if h.eval(0) == 0 else 0) > 0

    from .intervals import rational_between

    zero = ExactPoint(sp.Integer(0), sp.Poly(_T, _T), sp.Integer(0), sp.Integer(0))
    bounds = [zero] + [p for p in pts if p.sign_of(sp.Poly(_s, _s)) > 0]
    if bad(sp.Integer(0)):
        return sp.Integer(0)
    for k, p in enumerate(bounds):
        if k and bad(p.value):  # the ray at this angle itself meets the locus
            return p.value
        if bad(rational_between(p, bounds[k + 1] if k + 1 < len(bounds) else None)):
            return p.value
    return None


def linear_order(P, Q, lam, cap: int = 30):
    """``(p, C)``: ``R(z) = e^z + C z^(p+1) + O(z^(p+2))``; ``(0, None)`` if ``R(0) != 1``."""
    N = sp.degree(P, lam) + sp.degree(Q, lam) + 2
    N = min(max(N, 2), cap)
    series = sp.expand(P - Q * sum(lam**k / sp.factorial(k) for k in range(N + 2)))
    q0 = Q.xreplace({lam: 0})
    for k in range(N + 2):
        c = sp.radsimp(sp.expand(series.coeff(lam, k)))
        if c != 0 and sp.minimal_polynomial(c, _T) != sp.Poly(_T, _T).as_expr():
            if k == 0:
                return 0, None
            return k - 1, sp.radsimp(c / q0)
    return N + 1, None  # pragma: no cover - a rational R never equals e^z


# ----------------------------------------------------------------- all numbers of one recurrence
def _restrict(union: IntervalUnion, domain) -> IntervalUnion:
    """``union`` intersected with a real parameter domain (``beta >= 0``); unchanged for complex ones."""
    if domain is None or not domain.is_subset(sp.Reals) or domain == sp.Reals:
        return union
    from .intervals import Interval

    out = []
    for iv in union.intervals:
        s = iv.as_set().intersect(domain)
        for piece in (s.args if isinstance(s, sp.Union) else (s,)):
            if isinstance(piece, sp.Interval):
                out.append(Interval(piece.start, piece.end, bool(piece.left_open), bool(piece.right_open)))
            elif isinstance(piece, sp.FiniteSet):
                out += [Interval(v, v, False, False) for v in piece]
    return IntervalUnion(tuple(out), union.variable, union.method + f"; restricted to the domain {domain}")


def general_numbers(rec, param: str, label: str | None = None) -> dict:
    """Sets, A-stability and order of a scalar recurrence rational in ``param`` (see the module)."""
    num, den, lam = general_shape(rec, param)
    dom = rec.param(param).domain
    sets = general_axis_sets(num, den, lam, "real", label or param)
    real_set, real_marg = (_restrict(u, dom) for u in sets)
    imag_set, imag_marg = general_axis_sets(num, den, lam, "imaginary", f"{label or param}_im")
    a0 = any(iv.lo == -sp.oo and bool(iv.hi >= 0) for iv in real_set.intervals)
    out = {"real": (real_set, real_marg), "imaginary": (imag_set, imag_marg), "a0": a0,
           "zero_stable": _verdict(num, den, lam, sp.Integer(0))[1], "a_stable": False, "l_stable": None,
           "tan": None, "order": None, "error_constant": None, "note": ""}
    PQ = rational_r(num, den, lam)
    real_coeffs = all(sp.im(c) == 0 for c in sp.Poly(num * den, r, lam).coeffs())
    if PQ is None or not real_coeffs:
        out["note"] = ("A(alpha) and the order are given for one-step recurrences Q(lam) x' = P(lam) x "
                       "with real coefficients only")
        return out
    P, Q = PQ
    out["order"], out["error_constant"] = linear_order(P, Q, lam)
    if a0:
        out.update(a_stability(P, Q, lam, imag_marg))
    else:
        out["l_stable"] = False
    return out


def scaled_out(rec, param: str):
    """``(rec, label)``: when the one other parameter ``q`` enters only as ``param * q`` (``z = h lam``)
    or ``param / q`` (``beta / L``), set ``q = 1`` and name the variable accordingly; else unchanged."""
    left = [n for n in rec.param_names if n != param]
    if len(left) != 1 or param not in rec.param_names:
        return rec, param
    x, q = rec.param(param).symbol, rec.param(left[0]).symbol
    poly = sp.expand(rec.charpoly())
    for e, label in ((-1, f"{left[0]}*{param}"), (1, f"{param}/{left[0]}")):
        if not sp.simplify(poly.xreplace({x: x * q**e})).has(q):
            try:
                return rec.subs({left[0]: 1}), label
            except ValueError:  # 1 outside the parameter's domain
                return rec, param
    return rec, param
