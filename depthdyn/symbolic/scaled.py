"""The depth limit of a scaled recurrence through its principal root, and a check by iteration.

With every ``lam`` replaced by ``lam / L``, the roots of ``p(r, lam / L)`` tend to the roots
of ``p0(r) = p(r, 0)`` as ``L -> oo``. When ``r = 1`` is a simple root of ``p0`` and every
other root of ``p0`` is strictly inside the unit circle (a consistent, strongly
zero-stable multistep method: BDF3, Adams), the principal root is
``r1(mu) = 1 + a mu + O(mu^2)`` with ``a = -p_lam(1, 0) / p_r(1, 0)`` (implicit
function theorem), so ``r1(lam / L)^L -> exp(a lam)``. From ``x_0 = ... = x_{p-1} = 1``
(at ``lam = 0`` exactly the principal mode) the weight of the principal mode tends to 1
and every other weight is ``O(1/L)``: the spectral projection onto a simple root is
analytic in ``mu`` and vanishes on that start at ``mu = 0``. Modes strictly inside decay
geometrically; a *simple* root on the circle at ``lam = 0`` (leapfrog's ``r = -1``) has
``|r_i(lam / L)|^L`` bounded, so its weight ``O(1/L)`` still sends it to 0. Hence
``x_L -> exp(a lam)``; a repeated root on the circle other than 1 is refused. This needs no closed form of the
roots (BDF3's cubic has none that SymPy can take the limit of).

:func:`iterate_scaled` runs the recurrence itself at large ``L`` (float64, one Python loop
over layers, a few points ``lam``): the independent check of any claimed limit.
"""

from __future__ import annotations

import cmath
import math

import sympy as sp

from ..errors import ParameterError
from ..recurrence import r
from .circle import circle_roots, exact_poly

__all__ = ["principal_limit", "iterate_scaled", "check_depth_limit"]


def principal_limit(rec) -> sp.Expr:
    """``lim x_L`` (``lam -> lam / L``, ``x_0 = ... = x_{p-1} = 1``) when the principal root argument applies.

    Raises
    ------
    ParameterError
        ``r = 1`` is not a simple root of ``p(r, 0)``, another root is on or outside the
        circle, or the degree drops at ``lam = 0``.
    """
    lam = rec.lam_symbol
    p = sp.expand(rec.charpoly())
    p0 = sp.Poly(p.xreplace({lam: 0}), r)
    if p0.degree() != sp.degree(p, r):
        raise ParameterError("the degree drops at lam = 0: no principal root")
    if p0.eval(1) != 0:
        raise ParameterError("r = 1 is not a root at lam = 0 (not consistent): no depth limit of this form")
    rest = sp.quo(p0, sp.Poly(r - 1, r))
    if rest.eval(1) == 0:
        raise ParameterError("r = 1 is a repeated root at lam = 0: the modes scale like L^(-1/k)")
    if rest.degree() > 0 and not all(c.where < 0 or (c.where == 0 and c.multiplicity == 1)
                                     for c in circle_roots(exact_poly(rest.as_expr()))):
        raise ParameterError("another root of p(r, 0) is outside the unit circle, or repeated on it")
    dr = sp.diff(p, r).xreplace({r: 1, lam: 0})
    dl = sp.diff(p, lam).xreplace({r: 1, lam: 0})
    return sp.exp(sp.simplify(-dl / dr) * lam)


def iterate_scaled(rec, lams, L: int) -> list:
    """``x_L`` of the scaled recurrence from ``x_0 = ... = x_{p-1} = 1`` for each ``lam`` (float64).

    A value beyond ``1e100`` in modulus is returned as ``inf`` (divergence, not an overflow).
    """
    lam = rec.lam_symbol
    coeffs = sp.Poly(sp.expand(rec.charpoly()), r).all_coeffs()
    stray = set().union(*(c.free_symbols for c in coeffs)) - {lam}
    if stray:
        raise ParameterError(f"give values for {sorted(map(str, stray))} to iterate the recurrence")
    out = []
    for value in lams:
        mu = sp.nsimplify(value) / L
        c = [complex(sp.N(ci.xreplace({lam: mu}), 20)) for ci in coeffs]
        if c[0] == 0:
            raise ParameterError(f"the leading coefficient vanishes at lam = {value}/{L}")
        a = [-ci / c[0] for ci in c[1:]]  # x_{n+p} = a_1 x_{n+p-1} + ... + a_p x_n
        p = len(a)
        xs = [1.0 + 0j] * p
        for _ in range(L - p + 1):
            nxt = sum(ai * xs[-1 - i] for i, ai in enumerate(a))
            if not abs(nxt) < 1e100:
                nxt = complex(math.inf)
                xs = [nxt]
                break
            xs = xs[1:] + [nxt] if p > 1 else [nxt]
        out.append(xs[-1])
    return out


def check_depth_limit(rec, limit: sp.Expr | None, lams=(-1, 0.5j)) -> str:
    """``""`` when iterating at ``L = 10^3, 10^4`` (``10^5`` for "no limit") agrees with the claim.

    A finite ``limit`` (expression in ``lam``) agrees when ``|x_L - limit| <= 2e-2 max(1, |limit|)`` at
    ``L = 10^4`` and the error did not grow from ``L = 10^3`` (the error is ``O(1/L)``). ``None``
    (no finite limit claimed) disagrees when the iterates settle: successive differences
    below ``1e-2`` and shrinking by a factor 3 or more.
    """
    lam = rec.lam_symbol
    depths = (1000, 10000) if limit is not None else (1000, 10000, 100000)
    xs = {L: iterate_scaled(rec, lams, L) for L in depths}
    bad = []
    for k, v in enumerate(lams):
        x3, x4 = xs[1000][k], xs[10000][k]
        if limit is not None:
            want = complex(sp.N(limit.xreplace({lam: sp.nsimplify(v)}), 20))
            e3, e4 = abs(x3 - want), abs(x4 - want)
            if not (cmath.isfinite(x4) and (e4 <= 2e-2 * max(1.0, abs(want))) and e4 <= e3 + 1e-12):
                bad.append(f"at lam = {v}: limit {want:.6g}, iteration x_L = {x3:.6g} (L = 1e3), "
                           f"{x4:.6g} (L = 1e4)")
        else:
            x5 = xs[100000][k]
            if all(map(cmath.isfinite, (x3, x4, x5))):
                d1, d2 = abs(x4 - x3), abs(x5 - x4)
                if d1 < 1e-2 * max(1.0, abs(x5)) and d2 <= d1 / 3:
                    bad.append(f"at lam = {v}: no finite limit claimed, but iteration settles at {x5:.6g}")
    return "; ".join(bad)
