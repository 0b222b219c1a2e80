"""Where the roots of an exact polynomial lie relative to the unit circle, decided exactly.

Used by :func:`~depthdyn.symbolic.stability.root_condition`. For a square-free factor
``h`` (coefficients: rationals, Gaussian rationals, radicals, any algebraic numbers):

1. **On the circle, counted exactly.** A root with ``|z| = 1`` is a root of
   ``g = gcd(h, h*)``, ``h*(r) = r^n conj(h)(1/r)``, and ``g`` is self-inversive. After
   removing a root at ``-1``, the Cayley map ``r = (1 + i s)/(1 - i s)`` turns the circle
   into the real line: ``G(s) = (1 - i s)^m g(r(s))`` takes values of one fixed phase there,
   so its real roots are the real roots of ``gcd(Re G, Im G)`` (coefficient-wise real and
   imaginary parts), counted exactly by a Sturm sequence.
2. **Everything else, by certified inclusion disks.** Approximate roots ``z_i`` at ``dps``
   digits and the disks ``|z - z_i| <= n |h(z_i)| / |lc prod_{j != i} (z_i - z_j)|``
   (enlarged by a bound on the rounding error of ``h(z_i)``): when the disks are pairwise
   disjoint each holds exactly one root (Smith, Braess-Hadeler). A disk inside or outside
   the circle decides its root. When the number of disks that meet the circle equals the
   exact count of step 1, those are the roots on the circle; otherwise the digits double.

No float comparison decides anything: a root ``1 - 10**-40`` is inside, a root at ``1`` is
on the circle, at any distance. The only way to fail is a precision cap
(:class:`~depthdyn.errors.ParameterError`), which roots at distance ``10**-1000`` reach.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import sympy as sp

from ..errors import ParameterError
from ..limits import MAX_DPS
from ..recurrence import r

__all__ = ["CircleRoot", "circle_roots", "certified_roots", "verdicts"]

_s = sp.Dummy("s")


@dataclass(frozen=True)
class CircleRoot:
    """One distinct root: ``value`` (exact when linear or a rational quadratic, else 30 digits),
    ``multiplicity``, ``modulus`` (float; exactly ``1.0`` on the circle) and ``where``:
    ``-1`` inside, ``0`` on, ``+1`` outside the unit circle."""

    value: sp.Expr
    multiplicity: int
    modulus: float
    where: int


def _field_poly(expr, x) -> sp.Poly:
    """A polynomial over the smallest cheap exact field: QQ, then QQ(i), then an algebraic field."""
    if isinstance(expr, list):
        expr = sp.Add(*[c * x ** (len(expr) - 1 - j) for j, c in enumerate(expr)])
    P = sp.Poly(expr, x)
    if P.domain.is_ZZ or P.domain.is_QQ:
        return P
    try:
        return sp.Poly(expr, x, gaussian=True)
    except sp.polys.polyerrors.CoercionFailed:  # radicals beyond I
        return sp.Poly(expr, x, extension=True)


def exact_poly(expr: sp.Expr) -> sp.Poly:
    """``expr`` as a polynomial in ``r`` over its exact coefficient field (floats read exactly)."""
    expr = sp.expand(expr).xreplace({f: sp.Rational(f) for f in sp.expand(expr).atoms(sp.Float)})
    P = _field_poly(expr, r)
    if P.domain.is_EX or P.domain.is_Composite or P.free_symbols - {r}:
        raise ParameterError(
            f"cannot decide the roots of {expr} exactly: the coefficients must be algebraic numbers "
            "(rationals, radicals, I); use the numeric layer (stability_mask) for other values")
    return P


def _real_root_count(D: sp.Poly) -> int:
    """Distinct real roots of a real polynomial ``D`` (Sturm sequence, signs at +-infinity)."""
    if D.degree() <= 0:
        return 0
    if D.domain.is_QQ or D.domain.is_ZZ:
        return D.count_roots()
    seq = sp.sturm(D)

    def changes(at_plus: bool) -> int:
        signs = []
        for q in seq:
            if q.is_zero:
                continue
            sg = int(sp.sign(q.LC()))
            signs.append(sg if at_plus or q.degree() % 2 == 0 else -sg)
        return sum(a != b for a, b in zip(signs, signs[1:], strict=False))

    return changes(False) - changes(True)


def on_circle_count(h: sp.Poly) -> int:
    """Exact number of distinct roots of the square-free ``h`` on the unit circle."""
    star = _field_poly([sp.conjugate(c) for c in reversed(h.all_coeffs())], r)
    g = sp.gcd(h, star)
    count = 0
    if g.degree() > 0 and g.eval(-1) == 0:
        count, g = 1, sp.quo(g, sp.Poly(r + 1, r))
    m = g.degree()
    if m <= 0:
        return count
    cs = g.all_coeffs()
    G = sp.expand(sum((c * (1 + sp.I * _s) ** (m - j) * (1 - sp.I * _s) ** j for j, c in enumerate(cs)),
                      sp.S.Zero))
    # re/im of the expanded coefficients; expand_complex would also rewrite the arguments of a
    # CRootOf coefficient (its polynomial's variable) and fail
    parts = [sp.expand(c) for c in sp.Poly(G, _s).all_coeffs()]
    A = _field_poly([sp.re(c) for c in parts], _s)
    B = _field_poly([sp.im(c) for c in parts], _s)
    D = sp.gcd(A, B)
    return count + _real_root_count(D)


def _mpc(c: sp.Expr, dps: int):
    v = sp.N(c, dps + 10)
    re, im = v.as_real_imag()
    return mpmath.mpc(mpmath.mpf(sp.Float(re, dps + 10)._mpf_), mpmath.mpf(sp.Float(im, dps + 10)._mpf_))


def _polyroots(cs: list, dps: int):
    try:
        zs = mpmath.polyroots(cs, maxsteps=100 + 20 * len(cs), extraprec=dps)
    except mpmath.libmp.NoConvergence:
        return None
    return zs if isinstance(zs, list) else [zs]


def _approx_roots(cs: list, dps: int):
    """Approximate roots (highest coefficient first), also for coefficients of wildly
    different sizes, where Durand-Kerner alone does not converge: the Newton polygon of
    ``log |a_e|`` splits the roots into groups of one magnitude ``t``; each group is found
    from the terms that dominate at ``|r| ~ t`` (rescaled to ``r = t s``), then polished
    by Newton steps on the whole polynomial. None if that fails."""
    n = len(cs) - 1
    if n == 2 and cs[-1] != 0:  # the quadratic formula, without cancellation
        d = mpmath.sqrt(cs[1] ** 2 - 4 * cs[0] * cs[2])
        q = -(cs[1] + (d if mpmath.re(mpmath.conj(cs[1]) * d) >= 0 else -d)) / 2
        return [q / cs[0], cs[2] / q] if q != 0 else None
    if cs[-1] == 0:
        rest = _approx_roots(cs[:-1], dps) if n > 1 else []
        return None if rest is None else rest + [mpmath.mpc(0)]
    pts = [(e, mpmath.log(abs(cs[n - e]))) for e in range(n + 1) if cs[n - e] != 0]
    if max(p[1] for p in pts) - min(p[1] for p in pts) < 40:  # moderate scaling
        return _polyroots(cs, dps)
    hull = []
    for pt in pts:  # upper convex hull, left to right
        while len(hull) >= 2 and (hull[-1][1] - hull[-2][1]) * (pt[0] - hull[-2][0]) <= \
                (pt[1] - hull[-2][1]) * (hull[-1][0] - hull[-2][0]):
            hull.pop()
        hull.append(pt)
    groups = []  # (e_lo, e_hi, log t)
    for (e1, l1), (e2, l2) in zip(hull, hull[1:], strict=False):
        logt = -(l2 - l1) / (e2 - e1)
        if groups and abs(groups[-1][2] - logt) < 14:  # close magnitudes: one group
            g = groups.pop()
            e1, logt = g[0], (g[2] * (g[1] - g[0]) + logt * (e2 - e1)) / (e2 - g[0])
        groups.append((e1, e2, logt))
    zs = []
    for e1, e2, logt in groups:
        t = mpmath.exp(logt)
        part = [cs[n - e] * t**e for e in range(e2, e1 - 1, -1)]
        big = max(abs(c) for c in part)
        found = _polyroots([c / big for c in part], dps)
        if found is None:
            return None
        zs += [z * t for z in found]
    for _ in range(8):  # Newton on the whole polynomial
        zs = [z - mpmath.polyval(cs, z) / d if (d := mpmath.polyval(cs, z, derivative=True)[1]) != 0 else z
              for z in zs]
    return zs


def _disks(h: sp.Poly, dps: int, want: float | None = None):
    """Approximate roots and their places at ``dps`` digits; None if the disks are not
    disjoint (or, with ``want``, some radius exceeds ``want * |z|``)."""
    with mpmath.workdps(dps):
        cs = [_mpc(c, dps) for c in h.all_coeffs()]
        zs = _approx_roots(cs, dps)
        found = None if zs is None else _certify(cs, zs, want)
        if found is None and zs is not None and len(cs) > 3:
            # a cluster in a group of the Newton polygon (roots 1e-30 and 1 +- 1e-40): the group's
            # truncated polynomial puts it off by sqrt(1e-30), and Newton's steps, one bit each near a
            # cluster, keep a conjugate pair conjugate; Durand-Kerner on the whole polynomial separates it
            zs = _polyroots(cs, dps)
            found = None if zs is None else _certify(cs, zs, want)
        return found


def _certify(cs: list, zs: list, want: float | None):
    """:func:`_disks` for the approximations ``zs`` of the roots of ``cs`` (at the working precision)."""
    n = len(cs) - 1
    eps = mpmath.mpf(2) ** (-mpmath.mp.prec + 4)
    rads = []
    for i, z in enumerate(zs):
        value, bound, az = mpmath.polyval(cs, z), mpmath.mpf(0), abs(z)
        for c in cs:
            bound = bound * az + abs(c)
        prod = abs(cs[0])
        for j, w in enumerate(zs):
            if j != i:
                prod *= abs(z - w)
        if prod == 0:
            return None
        rads.append(n * (abs(value) + 4 * (n + 1) * eps * bound) / prod * (1 + eps * 100 * n))
    for i in range(n):
        if want is not None and rads[i] > want * abs(zs[i]):
            return None
        for j in range(i):
            if abs(zs[i] - zs[j]) <= rads[i] + rads[j]:
                return None
    where = [-1 if abs(z) + d < 1 else 1 if abs(z) - d > 1 else 0 for z, d in zip(zs, rads, strict=True)]
    return zs, where


def _display(h: sp.Poly, zs: list, dps: int) -> list:
    if h.degree() == 1:
        return [-h.nth(0) / h.nth(1)]
    if h.degree() == 2 and (h.domain.is_QQ or h.domain.is_ZZ):  # radicals of a complex one are slow
        exact = list(sp.roots(h, multiple=True))
        if len(exact) == 2:
            with mpmath.workdps(dps):
                near = [min(exact, key=lambda e, z=z: abs(_mpc(e, dps) - z)) for z in zs]
            if len(set(near)) == 2:
                return near
    with mpmath.workdps(dps):
        return [sp.Float(z.real, 30) + sp.I * sp.Float(z.imag, 30) if z.imag else sp.Float(z.real, 30)
                for z in zs]


def certified_roots(h: sp.Poly, rel: float = 2.0**-60, dps: int = 30) -> list:
    """Roots of a square-free exact ``h`` as Python complex numbers, each certified (inclusion
    disk, see the module) to relative accuracy ``rel``, whatever the scaling of ``h``.

    ``dps`` is the starting precision (doubled until the disks certify); raises
    :class:`~depthdyn.errors.ParameterError` past 2000 digits.
    """
    if h.degree() == 1:
        return [complex(sp.N(-h.nth(0) / h.nth(1), 30))]
    while dps <= MAX_DPS:
        found = _disks(h, dps, want=rel)
        if found is not None:
            with mpmath.workdps(dps):
                return [complex(z) for z in found[0]]
        dps *= 2
    raise ParameterError(f"cannot isolate the roots of {h.as_expr()} at {MAX_DPS} digits")


def circle_roots(P: sp.Poly) -> list[CircleRoot]:
    """Every distinct root of ``P`` with its multiplicity and its exact place (see the module)."""
    out = []
    for h, k in sp.sqf_list(P)[1]:
        on = on_circle_count(h)
        dps = 30
        while True:
            found = _disks(h, dps)
            if found is not None and sum(w == 0 for w in found[1]) == on:
                break
            dps *= 2
            if dps > MAX_DPS:
                raise ParameterError(
                    f"cannot separate the roots of {h.as_expr()} from the unit circle at {MAX_DPS} digits")
        zs, where = found
        with mpmath.workdps(dps):
            mods = [1.0 if w == 0 else float(abs(z)) for z, w in zip(zs, where, strict=True)]
        out += [CircleRoot(v, k, m, w) for v, m, w in zip(_display(h, zs, dps), mods, where, strict=True)]
    return out


def verdicts(found: list[CircleRoot]) -> tuple[bool, bool]:
    """``(strict, marginal)`` from :func:`circle_roots`: all inside; inside or simple on the circle."""
    strict = all(c.where < 0 for c in found)
    return strict, all(c.where < 0 or (c.where == 0 and c.multiplicity == 1) for c in found)
