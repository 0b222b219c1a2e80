"""Independent references for the mean-field tests: adaptive quadrature and mpmath.

Nothing here uses depthdyn's quadrature: one- and two-dimensional Gaussian integrals are
done by QUADPACK (``scipy.integrate.quad``, adaptive Gauss-Kronrod) on intervals split at the
activation's feature (the origin, and ``1/sqrt(q)`` around it), or by mpmath at 30 digits.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
from scipy.integrate import quad

Z = 12.0


def _npdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def _breakpoints(center: float, width: float) -> list[float]:
    points = {-Z, Z, 0.0, -1.0, 1.0, -3.0, 3.0}
    for k in (0, 1, 10, 60):
        for sign in (-1, 1):
            points.add(center + sign * k * width)
    return sorted(p for p in points if -Z <= p <= Z)


def _gauss_quad(f, center: float, width: float) -> float:
    points = _breakpoints(center, width)
    total = 0.0
    with warnings.catch_warnings():  # QUADPACK's round-off notices at 1e-17 requested accuracy
        warnings.simplefilter("ignore")
        for a, b in zip(points[:-1], points[1:], strict=True):
            total += quad(f, a, b, epsabs=1e-17, epsrel=1e-14, limit=200)[0]
    return total


def expect1(f, q: float) -> float:
    """``E[f(sqrt(q) z)]`` by adaptive quadrature."""
    r = math.sqrt(q)
    return _gauss_quad(lambda z: f(r * z) * _npdf(z), 0.0, 1.0 / r if r > 0 else 1.0)


def expect2(f, g, q1: float, q2: float, c: float) -> float:
    """``E[f(u1) g(u2)]`` with variances ``q1, q2`` and correlation ``c``, by nested adaptive quadrature."""
    r1, r2 = math.sqrt(q1), math.sqrt(q2)
    s = math.sqrt(max(0.0, 1.0 - c * c))

    def inner(z1):
        m = r2 * c * z1
        if r2 * s < 1e-300:
            return g(m)
        return _gauss_quad(lambda z2: g(m + r2 * s * z2) * _npdf(z2), -c * z1 / s, 1.0 / (r2 * s))

    return _gauss_quad(lambda z1: f(r1 * z1) * _npdf(z1) * inner(z1), 0.0, 1.0 / max(r1, r2, 1e-300))


def mp_expect1(f, q, dps: int = 30):
    """``E[f(sqrt(q) z)]`` with mpmath at ``dps`` digits (``f`` takes and returns mpf)."""
    with mp.workdps(dps):
        q = mp.mpf(q)
        r = mp.sqrt(q)
        cuts = sorted({mp.mpf(0), *(k / r for k in (-30, -3, -1, 1, 3, 30) if abs(k / r) < 14)})
        points = [mp.mpf(-14), *cuts, mp.mpf(14)]
        return mp.quad(lambda z: f(r * z) * mp.npdf(z), points)
