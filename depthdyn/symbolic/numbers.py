"""Stability numbers of a method or block: intervals, A(alpha) angle, zero-stability, order.

For ``p(r) = rho(r) - lam sigma(r)`` a root crosses the unit circle only where ``lam``
lies on the *boundary locus* ``lam(theta) = rho(e^{i theta}) / sigma(e^{i theta})``. With
``c = cos(theta)``,

.. math::

    \\rho(e^{i\\theta}) \\overline{\\sigma(e^{i\\theta})} = R(c) + i \\sin\\theta\\, I(c),
    \\qquad |\\sigma(e^{i\\theta})|^2 = S(c),

``R, I, S`` real polynomials (Chebyshev expansions), so the locus meets the real axis at
``lam = R(c)/S(c)`` for ``c = +-1`` and the roots of ``I`` in ``(-1, 1)``, and the imaginary
axis at ``lam = +- i sqrt(1 - c^2) I(c)/S(c)`` for the roots of ``R`` in ``[-1, 1]``.
These finitely many algebraic points (plus the points where the degree drops) cut an
axis into open gaps with no root on the circle, so strict stability is constant on each
gap and is decided exactly at one rational point by the Schur–Cohn recursion; the
crossing points themselves are never strictly stable (a root is on the circle). The root
condition (``marginal``) is decided at every crossing point too (exactly, except at
``CRootOf`` points of degree >= 3: 60 digits there), so weakly stable segments such as
leapfrog's ``i (-1, 1)`` come out exactly. A factor common to ``rho`` and ``sigma`` is
cancelled before the locus is traced (its roots never move).

Characteristic polynomials not of this shape (Runge-Kutta blocks ``Q(lam) r - P(lam)``,
coefficients with radicals, the oscillator in ``beta``) go to :mod:`.onestep`.

A(alpha): ``tan^2 |arg(-lam(theta))| = (1 - c^2) I(c)^2 / R(c)^2`` on the locus in the
left half-plane; its minimum over the stationary points (and the limits ``c -> +-1``) is
an algebraic number ``T``, and ``alpha = atan(sqrt(T))``: the open sector of that angle
contains no locus point, so it is stable throughout once one point in it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import mpmath
import sympy as sp

from ..budget import bounded
from ..errors import ParameterError
from ..parse import as_sympy
from ..printing import sstr
from ..records import Record
from ..recurrence import r
from .circle import circle_roots, exact_poly, verdicts
from .floats import from_floats, near_circle, near_simple_ends
from .intervals import ExactPoint, Interval, IntervalUnion, real_points, sweep
from .multistep_numbers import multistep_l_stable
from .onestep import general_numbers, only_free, scaled_out, unique_points
from .solvefor import solve_for

__all__ = ["StabilityNumbers", "stability_numbers", "schur_stable", "axis_sets"]

_c = sp.Symbol("c", real=True)
_T = sp.Symbol("T")


# ----------------------------------------------------------------- exact point deciders
def schur_stable(coeffs) -> bool:
    """Exact Schur–Cohn recursion: all roots of ``coeffs`` (highest first, numbers) in ``|r| < 1``.

    ``p -> (conj(a_n) p(z) - a_0 p*(z)) / z`` keeps the count of roots inside the disc
    while ``|a_0| < |a_n|``; a numeric polynomial is Schur-stable iff that holds at every
    step. A vanishing leading coefficient (degree drop) counts as not stable.

    Examples
    --------
    >>> schur_stable([1, 0, sp.Rational(1, 4)]), schur_stable([1, 0, 1])
    (True, False)
    """
    p = [as_sympy(c, scalar=True) for c in coeffs]  # exact; text parsed, never evaluated
    if p[0] == 0:
        return False
    while len(p) > 1:
        an, a0 = p[0], p[-1]
        if sp.expand(a0 * sp.conjugate(a0) - an * sp.conjugate(an)) >= 0:
            return False
        star = [sp.conjugate(c) for c in reversed(p)]
        p = [sp.expand(sp.conjugate(an) * x - a0 * y) for x, y in zip(p, star, strict=True)][:-1]
    return True


def _coeffs_at(P: sp.Poly, lam: sp.Symbol, value) -> list:
    return [sp.expand(c.xreplace({lam: value})) for c in P.all_coeffs()]


def _marginal_at(P: sp.Poly, lam, value) -> bool:
    """Root condition at an exact point: certified (:mod:`.circle`), or 60 digits at a ``CRootOf``.

    At a rational, Gaussian-rational or surd point the verdict is exact
    (:func:`~depthdyn.symbolic.circle.circle_roots`). At a ``CRootOf`` point (an endpoint
    where an irreducible factor of degree >= 3 crosses) exact arithmetic over that number
    field costs seconds per point, so the roots are computed at 60 digits from 80-digit
    coefficients: a root within ``1e-30`` of the circle is on it (the point is a
    boundary-locus crossing, so one is), roots within ``1e-20`` of each other are one
    repeated root.
    """
    coeffs = _coeffs_at(P, lam, value)
    if coeffs[0] == 0:
        return False
    if not any(c.has(sp.CRootOf) for c in coeffs):
        return verdicts(circle_roots(exact_poly(sp.Add(*(c * r ** (len(coeffs) - 1 - j)
                                                          for j, c in enumerate(coeffs))))))[1]
    with mpmath.workdps(80):
        mc = [mpmath.mpc(*(str(sp.N(part, 80)) for part in sp.expand(c).as_real_imag())) for c in coeffs]
        found = mpmath.polyroots(mc, maxsteps=400, extraprec=200)
        for i, z in enumerate(found):
            mod = abs(z)
            if mod > 1 + mpmath.mpf("1e-30"):
                return False
            if abs(mod - 1) <= mpmath.mpf("1e-30") and any(
                    abs(z - w) < mpmath.mpf("1e-20") for j, w in enumerate(found) if j != i):
                return False
    return True


# ----------------------------------------------------------------- the boundary locus
def _cheb(m: int, kind: str) -> sp.Expr:
    return sp.chebyshevt_poly(m, _c) if kind == "T" else sp.chebyshevu_poly(m, _c)


def _trig(rho: sp.Poly, sigma: sp.Poly) -> tuple[sp.Poly, sp.Poly, sp.Poly]:
    """``R, I, S`` with ``rho(z) conj(sigma(z)) = R + i sin(theta) I`` and ``|sigma|^2 = S`` on ``|z| = 1``.

    A factor common to ``rho`` and ``sigma`` is cancelled first: its roots are roots of
    ``rho - lam sigma`` for every ``lam`` and never move, and left in place it would hide
    the locus points where it vanishes on the circle (``S = R = 0`` there, a finite limit).
    """
    g = sp.gcd(rho, sigma)
    if g.degree() > 0:
        rho, sigma = sp.quo(rho, g), sp.quo(sigma, g)
    a = {m[0]: c for m, c in rho.terms()}
    b = {m[0]: c for m, c in sigma.terms()}
    R = I = S = sp.S.Zero
    for j, aj in a.items():
        for k, bk in b.items():
            m = j - k
            R += aj * bk * _cheb(abs(m), "T")
            if m:
                I += (1 if m > 0 else -1) * aj * bk * _cheb(abs(m) - 1, "U")
    for j, bj in b.items():
        for k, bk in b.items():
            S += bj * bk * _cheb(abs(j - k), "T")
    return tuple(sp.Poly(sp.expand(e), _c) for e in (R, I, S))


def _inside(pt: ExactPoint, closed: bool = True) -> bool:
    """``-1 <= c <= 1`` (or strictly) for an exact point."""
    up, down = pt.sign_of(sp.Poly(_c - 1, _c)), pt.sign_of(sp.Poly(_c + 1, _c))
    return (up <= 0 and down >= 0) if closed else (up < 0 and down > 0)


def _value_point(c0: ExactPoint, target: sp.Poly, numeric) -> ExactPoint:
    """The real root of ``target`` (a polynomial in ``_T``) equal to a value computed at ``c0``.

    ``target`` comes from a resultant, so the value is one of its roots; the isolating
    intervals are exact and the 50-digit value only picks which one.
    """
    cands = real_points(target)
    best = min(cands, key=lambda p: abs(sp.N(p.value, 50) - numeric))
    if abs(sp.N(best.value, 50) - numeric) > sp.Float("1e-25", 50):
        raise ParameterError("could not identify an algebraic crossing point")  # pragma: no cover
    return best


def _crossings(R, I, S, axis: str) -> list[ExactPoint]:
    """Exact axis coordinates where the boundary locus meets the real (``lam``) or imaginary (``t``) axis."""
    out = []
    if axis == "real":
        along, value = I, lambda cc: R.as_expr().subs(_c, cc) / S.as_expr().subs(_c, cc)
        target = lambda h: sp.Poly(sp.resultant(h, _T * S.as_expr() - R.as_expr(), _c), _T)  # noqa: E731
        ends = [sp.Integer(1), sp.Integer(-1)]
    else:
        along = R
        target = lambda h: sp.Poly(  # noqa: E731
            sp.resultant(h, _T**2 * S.as_expr() ** 2 - (1 - _c**2) * I.as_expr() ** 2, _c), _T)
        ends = []
    if along.is_zero:  # the whole locus lies on this axis: its extreme points bound the segments
        return _degenerate_crossings(R, I, S, axis)
    for cc in ends:
        s = S.eval(cc)
        if s != 0:
            v = R.eval(cc) / s
            out.append(ExactPoint(v, sp.Poly(_T - v, _T), v, v))
    for fac, _ in sp.factor_list(along.as_expr(), _c)[1]:
        h = sp.Poly(fac, _c)
        if h.degree() < 1 or S.rem(h).is_zero:  # sigma vanishes there: the locus goes to infinity
            continue
        if axis == "real" and sp.Poly(_c**2 - 1, _c).rem(h).is_zero:
            continue  # c = +-1 handled above
        tpoly = target(h.as_expr())
        for c0 in real_points(h):
            if not _inside(c0, closed=True) or c0.sign_of(S) == 0:
                continue
            cn = sp.N(c0.value, 60)
            if axis == "real":
                out.append(_value_point(c0, tpoly, value(cn)))
            else:
                tv = sp.sqrt(1 - cn**2) * I.as_expr().subs(_c, cn) / S.as_expr().subs(_c, cn)
                out += [_value_point(c0, tpoly, tv), _value_point(c0, tpoly, -tv)]
    return out


def _degenerate_crossings(R, I, S, axis):
    """Extreme values of the locus coordinate when the locus lies on the axis itself."""
    if axis == "real":
        F, num = R.as_expr() / S.as_expr(), None
        d = sp.Poly(sp.numer(sp.together(sp.diff(F, _c))), _c)
        val = lambda cc: F.subs(_c, cc)  # noqa: E731
        target = lambda h: sp.Poly(sp.resultant(h, _T * S.as_expr() - R.as_expr(), _c), _T)  # noqa: E731
    else:  # t(theta) = sin(theta) I/S: stationary where c I S - (1 - c^2)(I' S - I S') = 0
        Ie, Se = I.as_expr(), S.as_expr()
        num = sp.expand(_c * Ie * Se - (1 - _c**2) * (sp.diff(Ie, _c) * Se - Ie * sp.diff(Se, _c)))
        d = sp.Poly(num, _c)
        val = lambda cc: sp.sqrt(1 - cc**2) * Ie.subs(_c, cc) / Se.subs(_c, cc)  # noqa: E731
        target = lambda h: sp.Poly(sp.resultant(h, _T**2 * Se**2 - (1 - _c**2) * Ie**2, _c), _T)  # noqa: E731
    out = []
    for cc in (sp.Integer(1), sp.Integer(-1)):
        if S.eval(cc) != 0:
            v = val(cc)
            out.append(ExactPoint(v, sp.Poly(_T - v, _T), v, v))
    for fac, _ in sp.factor_list(d.as_expr(), _c)[1]:
        h = sp.Poly(fac, _c)
        if h.degree() < 1:
            continue
        tpoly = target(h.as_expr())
        for c0 in real_points(h):
            if not _inside(c0, closed=False) or c0.sign_of(S) == 0:
                continue
            v = sp.N(val(sp.N(c0.value, 60)), 50)
            out.append(_value_point(c0, tpoly, v))
            if axis != "real":
                out.append(_value_point(c0, tpoly, -v))
    return out


def _unique(points: list) -> list:
    """Sorted and without duplicates, compared exactly (``0`` and ``-3/10^300`` are two points)."""
    return unique_points(points)


def axis_sets(rec, axis: str = "real", *, param: str = "lam") -> tuple[IntervalUnion, IntervalUnion]:
    """Strict and marginal (root-condition) sets of ``rec`` on the real or imaginary ``param`` axis.

    ``rec`` must be scalar with ``charpoly = rho(r) - param * sigma(r)``, real rational
    ``rho, sigma`` and no other free parameter. The imaginary axis is ``param = i t``,
    and the sets are in ``t``.
    """
    rho, sigma, lam, P = _lmm_shape(rec, param)
    R, I, S = _trig(rho, sigma)
    pts = _crossings(R, I, S, axis)
    lc_lam = sp.Poly(P.LC(), lam)  # degree drop where the leading coefficient vanishes
    for pt in real_points(lc_lam):
        v = pt.value if axis == "real" else (sp.Integer(0) if pt.value == 0 else None)  # i t real only at 0
        if v is not None:
            pts.append(ExactPoint(v, sp.Poly(_T - v, _T), v, v))
    pts = _unique(pts)
    at = (lambda v: v) if axis == "real" else (lambda v: sp.I * v)

    def strict(x) -> bool:
        return schur_stable(_coeffs_at(P, lam, at(x)))

    # off the locus no root is on the circle, so the root condition is the strict one, unless a
    # root that never moves (a factor of rho and sigma) or a locus along this axis keeps one there
    exact_gaps = (I if axis == "real" else R).is_zero or sp.gcd(rho, sigma).degree() > 0

    def marginal(x) -> bool:
        return strict(x) or (exact_gaps and _marginal_at(P, lam, at(x)))

    strict_set = sweep(pts, strict, lambda b: False)  # a crossing has a root on the circle
    marginal_set = sweep(pts, marginal, lambda b: _marginal_at(P, lam, at(b.value)))
    var = param if axis == "real" else f"{param}_im"
    how = f"boundary locus meets the {axis} axis at {len(pts)} exact points; Schur-Cohn in each gap"
    return (IntervalUnion(strict_set, var, how),
            IntervalUnion(marginal_set, var, how + "; root condition at each point"))


def _lmm_shape(rec, param: str):
    lam = only_free(rec, param)
    P = sp.Poly(sp.expand(rec.charpoly()), r)
    expr = sp.expand(P.as_expr())
    try:
        sp.Poly(expr, r, lam)
    except sp.PolynomialError:
        raise ParameterError(f"the characteristic polynomial of {rec.name} is not polynomial in r and "
                             f"rational in {param}") from None
    if sp.degree(expr, lam) > 1:
        raise ParameterError(f"the characteristic polynomial is not linear in {param}; use solve_for")
    sigma = sp.Poly(-expr.coeff(lam, 1), r)
    rho = sp.Poly(expr.coeff(lam, 0), r)
    if not all(c.is_rational for c in rho.all_coeffs() + sigma.all_coeffs()):
        raise ParameterError("stability numbers need rational coefficients rho, sigma")
    if sigma.is_zero:
        raise ParameterError(f"the characteristic polynomial does not depend on {param}")
    return rho, sigma, lam, P


# ----------------------------------------------------------------- A(alpha)
def _sign_inside(R: sp.Poly, cc: int) -> int:
    """Sign of ``R`` just inside ``[-1, 1]`` next to the end ``cc`` (first nonzero Taylor term)."""
    m, d = 0, R
    while d.eval(cc) == 0:
        d, m = d.diff(_c), m + 1
    v = d.eval(cc)
    return (1 if v > 0 else -1) * (-1 if cc == 1 else 1) ** m


def _a_alpha(R, I, S):
    """``tan^2 alpha`` as an exact number; ``None`` when no locus point has ``Re lam < 0``.

    On the locus ``tan^2 |arg(-lam)| = f(c) = (1 - c^2) I^2 / R^2`` where ``R < 0``. Each
    component of ``{R < 0}`` ends where ``R = 0`` (``f -> oo``) or at ``c = +-1``, so the
    infimum is attained at a stationary point of ``f`` or is its limit at ``c = +-1``.
    """
    Re, Ie = R.as_expr(), I.as_expr()
    if solve_for([Re < 0, _c > -1, _c < 1], "c").is_empty:
        return None
    if any(R.eval(cc) < 0 for cc in (1, -1)):
        return sp.Integer(0)  # the locus meets the negative real axis at theta = 0 or pi
    for root_c in real_points(I):
        if _inside(root_c, closed=False) and root_c.sign_of(R) < 0:
            return sp.Integer(0)  # ... or at an interior theta
    f = (1 - _c**2) * Ie**2 / Re**2
    cands = [sp.limit(f, _c, cc, "-" if cc == 1 else "+") for cc in (1, -1)
             if R.eval(cc) == 0 and _sign_inside(R, cc) < 0]
    N = sp.Poly(sp.expand((-_c * Ie + (1 - _c**2) * sp.diff(Ie, _c)) * Re
                          - (1 - _c**2) * Ie * sp.diff(Re, _c)), _c)  # numerator of f'(c) / 2
    for fac, _ in (sp.factor_list(N.as_expr(), _c)[1] if not N.is_zero else []):
        h = sp.Poly(fac, _c)
        tpoly = None
        for c0 in real_points(h) if h.degree() > 0 else []:
            if _inside(c0, closed=False) and c0.sign_of(R) < 0:
                tpoly = tpoly or sp.Poly(sp.resultant(h.as_expr(), _T * Re**2 - (1 - _c**2) * Ie**2, _c), _T)
                cands.append(_value_point(c0, tpoly, sp.N(f.subs(_c, sp.N(c0.value, 60)), 50)).value)
    return min(cands, key=lambda v: sp.N(v, 50))


# ----------------------------------------------------------------- the record
def _cond_text(union: IntervalUnion):
    x = sp.Symbol(union.variable, real=True)
    if not union.intervals:
        return sp.false
    return union.as_set().as_relational(x)


def _piece(iv: Interval, whole: IntervalUnion) -> str:
    """The component with how it was picked; the whole set when none contains or touches 0
    (BDF3's imaginary set ``|t| > 1.936`` has two such pieces, neither is "the" interval)."""
    if iv.component.startswith("nearest"):
        body = " U ".join(str(piece) for piece in whole.intervals)
        return f"{body}  [the whole set: no piece contains or touches 0]"
    return f"{iv}  [{iv.component}]"


@dataclass(frozen=True)
class StabilityNumbers(Record):
    """The classical stability numbers of a scalar recurrence ``rho(r) = lam sigma(r)``.

    ``real_interval`` / ``imag_interval``: the component of the strict stability set on
    the real axis (``lam``) / imaginary axis (``lam = i t``, the interval in ``t``) that
    contains 0, touches 0 (``0`` itself has the consistent root ``r = 1`` on the circle),
    or else the nearest one; ``real_set`` / ``imag_set`` are the whole sets.
    ``marginal_conditions`` gives the exact root-condition sets on both axes. ``kind``:
    ``"multistep"`` (``rho - lam sigma``; ``order`` and ``error_constant`` of the method),
    ``"one-step"`` (``Q x' = P x``; ``order`` of ``R = P/Q`` against ``e^z``, ``l_stable``,
    ``tableau_order`` of a Runge-Kutta block's tableau) or ``"general"`` (sets only; ``note``).
    """

    family: str
    real_interval: Interval
    imag_interval: Interval
    real_set: IntervalUnion
    imag_set: IntervalUnion
    a_alpha_degrees: float | None
    a_alpha_exact: sp.Expr | None
    a_stable: bool
    a0_stable: bool
    zero_stable: bool
    order: int | None
    error_constant: sp.Expr | None
    conditions: dict
    marginal_conditions: dict
    marginal_sets: dict = field(repr=False, compare=False, default_factory=dict)
    variable: str = field(default="lam", compare=False)  # the free parameter the intervals are in
    l_stable: bool | None = None  # A-stable and every root -> 0 as lam -> oo (one-step: R(oo) = 0)
    kind: str = field(default="multistep", compare=False)  # rho - lam sigma; "one-step" or "general"
    note: str = field(default="", compare=False)
    tableau_order: int | None = None  # a Runge-Kutta block (named or own tableau): its order conditions
    tolerance_note: str = field(default="", compare=False)  # float data: what rests on a residue

    def to_json(self) -> dict:
        exact = None if self.a_alpha_exact is None else sstr(self.a_alpha_exact)
        return {
            "family": self.family,
            "real_interval": self.real_interval.to_json(),
            "imag_interval": self.imag_interval.to_json(),
            "real_set": self.real_set.to_json(),
            "imag_set": self.imag_set.to_json(),
            "a_alpha_degrees": {"exact": exact, "value": self.a_alpha_degrees},
            "a_stable": self.a_stable,
            "l_stable": self.l_stable,
            "a0_stable": self.a0_stable,
            "kind": self.kind,
            "zero_stable": self.zero_stable,
            "order": self.order,
            "tableau_order": self.tableau_order,
            "error_constant": None if self.error_constant is None else sstr(self.error_constant),
            "conditions": {k: sstr(v) for k, v in self.conditions.items()},
            "marginal_conditions": {k: sstr(v) for k, v in self.marginal_conditions.items()},
            "tolerance_note": self.tolerance_note,
        }

    def _alpha_text(self) -> str:
        if self.a_alpha_degrees is None:
            return f"not computed: {self.note}" if self.note and self.a0_stable else \
                "not A(0)-stable: no sector"
        verdict = ("L-stable" if self.l_stable else "A-stable") if self.a_stable else \
            "A(alpha)-stable" if self.a_alpha_degrees > 0 else "A(0)-stable"
        exact = "" if self.a_alpha_exact is None else f" = {sstr(self.a_alpha_exact)}"
        return f"{self.a_alpha_degrees:.10f} degrees{exact} ({verdict})"

    def _text(self) -> str:
        v = self.variable
        lines = [
            f"{self.family}:",
            f"  real interval:      {v} in {_piece(self.real_interval, self.real_set)}",
            f"  imaginary interval: {v} = i t, t in {_piece(self.imag_interval, self.imag_set)}",
            f"  A(alpha):           {self._alpha_text()}",
            f"  zero-stable:        {self.zero_stable}" if not self.tolerance_note else
            "  zero-stable:        not decided (float data; see the note below)",
        ]
        if self.order and self.kind == "one-step":
            lines.append(f"  order {self.order} (R({v}) = exp({v}) + C {v}^{self.order + 1} + ...), "
                         f"C = {sstr(self.error_constant)}")
        if self.tableau_order is not None:
            lines.append(f"  Runge-Kutta order {self.tableau_order} (the tableau's order conditions)")
        if self.order and self.kind != "one-step":
            lines.append(f"  order {self.order}, error constant {sstr(self.error_constant)}")
        elif self.order == 0 and self.kind == "one-step":
            lines.append(f"  order 0: R({v}) - exp({v}) = O({v}), not consistent")
        elif self.order == 0:
            lines.append("  order 0: not consistent as a method (rho(1) != 0 or rho'(1) != sigma(1))")
        lines.append(f"  root condition, real axis:      {self.marginal_sets.get('real', '')}")
        lines.append(f"  root condition, imaginary axis: {self.marginal_sets.get('imaginary', '')}")
        lines += [f"  {n}" for n in self.tolerance_note.splitlines()]
        return "\n".join(lines)

    def _latex(self) -> str:
        v = "\\lambda" if self.variable == "lam" else sp.latex(sp.Symbol(self.variable))
        return f"{v} \\in {self.real_interval._latex()},\\ {v} \\in i\\,{self.imag_interval._latex()}"


@bounded("stability numbers")
def stability_numbers(rec, *, param: str = "lam", **values) -> StabilityNumbers:
    """Real and imaginary stability intervals, A(alpha), zero-stability, order and error constant.

    Parameters
    ----------
    rec : Recurrence
        Scalar, with only ``param`` free once ``values`` are substituted. Multistep
        shape ``charpoly = rho(r) - param * sigma(r)`` (``rho, sigma`` rational): the
        boundary locus below. Any other polynomial or rational dependence on ``param``
        (Runge-Kutta blocks ``Q(lam) x' = P(lam) x``, coefficients with radicals, the
        oscillator in ``beta``): :mod:`~depthdyn.symbolic.onestep`, with ``A(alpha)``,
        L-stability and the order of ``R = P/Q`` for one-step recurrences. When the one
        other parameter enters only through ``param * h`` (or ``param / L``) it is set
        to 1 and the intervals are in that product (``variable`` says which).
    param : str
        The free complex parameter (``lam``, i.e. ``z = h lam`` for a multistep method).
    **values
        Exact values of the other parameters (``m="1/2", eta=1`` for the momentum block).

    Returns
    -------
    StabilityNumbers

    Raises
    ------
    ParameterError, UnknownParameterError
        Other parameters left free, matrix recurrences, a polynomial not linear in ``param``.

    Examples
    --------
    >>> from depthdyn.families import adams_bashforth
    >>> sn = stability_numbers(adams_bashforth(k=2))
    >>> print(sn.real_interval)
    (-1, 0)
    >>> sn.zero_stable, sn.order, sn.error_constant
    (True, 2, 5/12)
    """
    from ..families.multistep import order_and_error_constant
    from ..recurrence import Recurrence

    if not isinstance(rec, Recurrence):
        raise ParameterError(f"stability_numbers needs a Recurrence (e.g. bdf(k=3)), got {type(rec).__name__}")
    rec = rec.subs(values) if values else rec
    rec, label = scaled_out(rec, param)
    if not _is_lmm(rec, param):
        return _general(rec, param, label)
    rho, sigma, lam, P = _lmm_shape(rec, param)
    real_set, real_marg = axis_sets(rec, "real", param=param)
    imag_set, imag_marg = axis_sets(rec, "imaginary", param=param)
    if label != param:  # h*lam: name the sets by the variable they are in
        real_set, real_marg = (replace(u, variable=label) for u in (real_set, real_marg))
        imag_set, imag_marg = (replace(u, variable=f"{label}_im") for u in (imag_set, imag_marg))
    R, I, S = _trig(rho, sigma)
    a0 = any(iv.lo == -sp.oo and bool(iv.hi >= 0) for iv in real_set.intervals)
    T = _a_alpha(R, I, S) if a0 else None
    if not a0:
        deg, exact, a_stable = None, None, False
    elif T is None:  # no locus point in the open left half-plane, and lam = -1 is stable
        deg, exact, a_stable = 90.0, sp.Integer(90), True
    else:
        exact = 180 / sp.pi * sp.atan(sp.sqrt(T))
        with mpmath.workdps(40):  # T is exact; its 40-digit value gives the angle far below 1e-9 degrees
            deg = float(mpmath.degrees(mpmath.atan(mpmath.sqrt(mpmath.mpf(str(sp.N(T, 40)))))))
        a_stable = False
    zero_stable = _marginal_at(sp.Poly(rho.as_expr(), r), lam, 0)
    note = _float_note(rho, real_set)
    alpha = [rho.coeff_monomial(r**j) for j in range(rec.order + 1)]
    beta = [sigma.coeff_monomial(r**j) for j in range(rec.order + 1)]
    oe = order_and_error_constant(alpha, beta)
    consistent = oe.order >= 1
    l_stable = multistep_l_stable(a_stable, beta)  # A-stable, every root -> 0 as z -> oo: sigma = beta_k r^k
    return StabilityNumbers(
        rec.name, real_set.component(0), imag_set.component(0), real_set, imag_set, deg, exact, a_stable, a0,
        zero_stable, oe.order if consistent else 0, oe.error_constant if consistent else None,
        {"real": _cond_text(real_set), "imaginary": _cond_text(imag_set)},
        {"real": _cond_text(real_marg), "imaginary": _cond_text(imag_marg)},
        {"real": real_marg, "imaginary": imag_marg}, label, l_stable,
        tableau_order=_tableau_order(rec), tolerance_note=note,
    )


def _float_note(rho: sp.Poly, real_set: IntervalUnion) -> str:
    """What rests on a float residue when ``rho`` comes from floats: roots of ``rho`` within
    ``FLOAT_TOLERANCE`` of the circle (zero-stability) and interval ends near simple numbers."""
    P = sp.Poly(rho.as_expr(), r)
    if not from_floats([P]):
        return ""
    notes = [near_circle(circle_roots(exact_poly(P.as_expr()))), near_simple_ends(real_set)]
    return "\n".join(n for n in notes if n)


def _is_lmm(rec, param: str) -> bool:
    """``charpoly = rho - param sigma``, ``rho, sigma`` rational (else the path of :mod:`.onestep`)."""
    try:
        _lmm_shape(rec, param)
    except ParameterError as exc:
        if any(why in str(exc) for why in ("not linear in", "rational coefficients", "not polynomial in r")):
            return False
        raise
    return True


def _general(rec, param: str, label: str) -> StabilityNumbers:
    """The numbers of a recurrence rational in ``param`` of any degree (:func:`.onestep.general_numbers`)."""
    g = general_numbers(rec, param, label)
    real_set, real_marg = g["real"]
    imag_set, imag_marg = g["imaginary"]
    if not g["a0"]:
        deg, exact = None, None
    elif g["tan"] is None and g["a_stable"]:
        deg, exact = 90.0, sp.Integer(90)
    elif g["tan"] is None:
        deg, exact = None, None
    else:
        exact = 180 / sp.pi * sp.atan(g["tan"])
        with mpmath.workdps(40):
            deg = float(mpmath.degrees(mpmath.atan(mpmath.mpf(str(sp.N(g["tan"], 40))))))
    one_step = g["order"] is not None
    return StabilityNumbers(
        rec.name, real_set.component(0), imag_set.component(0), real_set, imag_set, deg, exact, g["a_stable"],
        g["a0"], g["zero_stable"], g["order"], g["error_constant"],
        {"real": _cond_text(real_set), "imaginary": _cond_text(imag_set)},
        {"real": _cond_text(real_marg), "imaginary": _cond_text(imag_marg)},
        {"real": real_marg, "imaginary": imag_marg}, label, g["l_stable"],
        "one-step" if one_step else "general", g["note"], _tableau_order(rec),
    )


def _tableau_order(rec) -> int | None:
    """The order of a Runge-Kutta block's tableau, named or given by ``A`` and ``b``."""
    from .butcher import recurrence_tableau_order

    return recurrence_tableau_order(rec)
