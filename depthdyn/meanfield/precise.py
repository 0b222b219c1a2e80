"""Gaussian moments in arbitrary precision (mpmath), for checks and for ill-conditioned points.

The float64 moments of :class:`~depthdyn.meanfield.activation.Activation` are fast and carry an
error bound; these give the same quantities to ``dps`` digits, with mpmath's own error
estimate, for any activation that has a SymPy expression (every named one does, and so does a
user's expression). The integrals are split where the activation changes (the origin and
``+-1/sqrt(q)`` around it), so that tanh at ``q = 1e8`` is as accurate as at ``q = 1``.
"""

from __future__ import annotations

import mpmath as mp

from ..errors import DomainError, ParameterError
from .activation import Activation
from .activations import get_activation

__all__ = ["mp_moment", "mp_cross_moment"]

_KINDS = ("mean", "second_moment", "derivative_second_moment")


def _functions(act: Activation):
    import sympy as sp

    expr = act.expr()
    if expr is None:
        raise ParameterError(f"{act} has no SymPy expression: the mpmath path needs one")
    (x,) = expr.free_symbols or {sp.Symbol("x")}
    return sp.lambdify(x, expr, "mpmath"), sp.lambdify(x, sp.diff(expr, x), "mpmath")


def _cuts(r, extent):
    inner = {mp.mpf(0)}
    if r > 0:
        inner |= {k / r for k in (-30, -3, -1, 1, 3, 30) if abs(k / r) < extent}
    return [mp.mpf(-extent), *sorted(inner), mp.mpf(extent)]


def mp_moment(act, q, kind: str = "second_moment", *, dps: int = 30):
    """``E[phi(sqrt(q) z)]``, ``E[phi^2]`` or ``E[phi'^2]`` to ``dps`` digits: ``(value, error)``.

    ``error`` is mpmath's estimate for the quadrature (the Gaussian tail beyond 14 standard
    deviations, below ``1e-43`` times a polynomially bounded integrand, is added to it).

    Examples
    --------
    >>> value, error = mp_moment("relu", 2, dps=25)
    >>> print(mp.nstr(value, 20), error < 1e-20)
    1.0 True
    """
    if kind not in _KINDS:
        raise ParameterError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    act = get_activation(act)
    phi, dphi = _functions(act)
    with mp.workdps(dps + 5):
        q = mp.mpf(q)
        if not (mp.isfinite(q) and q >= 0):
            raise DomainError("the variance q must be finite and >= 0")
        r = mp.sqrt(q)
        f = {"mean": lambda z: phi(r * z), "second_moment": lambda z: phi(r * z) ** 2,
             "derivative_second_moment": lambda z: dphi(r * z) ** 2}[kind]
        value, error = mp.quad(lambda z: f(z) * mp.npdf(z), _cuts(r, 14), error=True)
        return +value, error + mp.mpf(10) ** (-43) * (1 + abs(value))


def mp_cross_moment(act, q1, q2, c, *, dps: int = 20, derivative: bool = False):
    """``E[phi(u1) phi(u2)]`` (or of ``phi'``) to about ``dps`` digits by nested mpmath quadrature.

    Slow (minutes at 20 digits for a transcendental activation): meant for single points.
    Returns ``(value, error)`` with the outer integral's error estimate.
    """
    act = get_activation(act)
    phi, dphi = _functions(act)
    g = dphi if derivative else phi
    with mp.workdps(dps + 5):
        q1, q2, c = mp.mpf(q1), mp.mpf(q2), mp.mpf(c)
        if not (-1 <= c <= 1) or q1 < 0 or q2 < 0:
            raise DomainError("need q1, q2 >= 0 and c in [-1, 1]")
        r1, r2, s = mp.sqrt(q1), mp.sqrt(q2), mp.sqrt(1 - c * c)

        def inner(z1):
            m = r2 * c * z1
            if r2 * s == 0:
                return g(m)
            k = -c * z1 / s
            width = 1 / (r2 * s)
            points = sorted({mp.mpf(-14), mp.mpf(14), *(p for p in (k - width, k, k + width) if abs(p) < 14)})
            return mp.quad(lambda z2: g(m + r2 * s * z2) * mp.npdf(z2), points)

        value, error = mp.quad(lambda z1: g(r1 * z1) * mp.npdf(z1) * inner(z1), _cuts(max(r1, r2), 14),
                               error=True)
        return +value, error
