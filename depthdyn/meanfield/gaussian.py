"""Gaussian expectations of activations by graded Gauss-Legendre quadrature, with an error bound.

Mean-field maps are expectations ``E[g(sqrt(q) z)]`` and ``E[g(u1, u2)]`` over Gaussians whose
variance ``q`` ranges over many decades (1e-8 to 1e8 and beyond). Gauss-Hermite quadrature
fails there: ``tanh(sqrt(q) z)`` has a transition of width ``1/sqrt(q)`` in ``z``. Here the
standard normal variable ``z`` is integrated on ``[-Z, Z]`` (``Z = 10``; the Gaussian tail
beyond it is below ``1e-22`` times any polynomially bounded integrand) with panels graded
dyadically towards the activation's feature (the origin ``u = 0``), so every scale from
``Z`` down to a fraction of ``1/sqrt(q)`` has panels of its own size. Each panel gets
Gauss-Legendre rules of two orders (16 and 10 nodes); the value is the higher order's and the
error bound is the difference of the two plus a rounding term. Where the integrand is
analytic on a panel (every activation here is analytic on each side of the origin) the
higher order is many digits better than the lower, so the bound is conservative; the tests
check it against mpmath at 50 digits.

For two correlated Gaussians ``u1 = sqrt(q1) z1``, ``u2 = sqrt(q2) (c z1 + s z2)``
(``s = sqrt(1 - c^2)``), the inner integral over ``z2`` is graded around the point where
``u2`` crosses zero, ``z2 = -c z1 / s``, which moves with ``z1``: its breakpoints are merged
with the fixed ones and sorted row by row, so the whole computation stays vectorised.
Integrands receive ``u1`` and ``delta = u2 - u1`` (computed without cancellation from
``eps = 1 - c``), so that differences ``phi(u2) - phi(u1)`` can be formed accurately.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DomainError

__all__ = ["Z_MAX", "expect", "expect2", "expect2_hermite", "correlation_parts"]

#: Half-width of the integration window in the standard normal variable.
Z_MAX = 10.0
#: Extra dyadic levels below the feature scale ``1/sqrt(q)``.
_EXTRA_LEVELS = 3
_HI, _LO = 16, 10
_RULES = {n: np.polynomial.legendre.leggauss(n) for n in (_HI, _LO)}
#: Points per chunk of the two-dimensional rule (bounds the memory of one batch).
_CHUNK_NODES = 1_000_000
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _levels(scale_max: float, extent: float) -> int:
    """Dyadic levels from ``extent`` down to a fraction of the feature scale ``1/scale_max``."""
    reach = max(1.0, extent * float(scale_max))
    return _EXTRA_LEVELS + int(math.ceil(math.log2(reach)))


def _dyadic(extent: float, levels: int) -> np.ndarray:
    """Breakpoints ``-extent .. -extent 2^-levels, 0, extent 2^-levels .. extent`` (sorted)."""
    pos = extent * np.exp2(-np.arange(levels, -1, -1, dtype=float))
    return np.concatenate([-pos[::-1], [0.0], pos])


def _panel_nodes(breaks: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights (times the standard normal density) on consecutive panels.

    ``breaks`` has shape ``(..., B)`` sorted along the last axis; the result has shape
    ``(..., (B - 1) * n)``. Empty panels (equal breakpoints) get zero weight.
    """
    t, w = _RULES[n]
    a, b = breaks[..., :-1, None], breaks[..., 1:, None]
    half = 0.5 * (b - a)
    z = a + half * (t + 1.0)
    weight = half * w * np.exp(-0.5 * z * z) / _SQRT_2PI
    shape = z.shape[:-2] + (-1,)
    return z.reshape(shape), weight.reshape(shape)


def _finish(hi: np.ndarray, lo: np.ndarray, absolute: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(invalid="ignore"):  # inf - inf where a moment is not finite: _check_finite says so
        bound = np.abs(hi - lo) + 64 * np.finfo(float).eps * absolute
    return hi, bound


def expect(func, scale, *, return_error: bool = False):
    """``E[func(scale * z)]`` for ``z ~ N(0, 1)``, vectorised over the array ``scale >= 0``.

    Parameters
    ----------
    func : callable
        Vectorised ``func(u)``, finite on the real line.
    scale : array_like
        Standard deviations ``sqrt(q)``.
    return_error : bool
        Also return the error bound (same shape).

    Examples
    --------
    >>> import numpy as np
    >>> float(expect(lambda u: u * u, 3.0))
    9.0
    """
    scale = np.asarray(scale, dtype=float)
    flat = scale.reshape(-1)
    levels = _levels(flat.max(initial=0.0), Z_MAX)
    breaks = _dyadic(Z_MAX, levels)
    out = []
    for n in (_HI, _LO):
        z, w = _panel_nodes(breaks, n)
        u = flat[:, None] * z[None, :]
        with np.errstate(all="ignore"):  # a moment that is not finite is reported by _check_finite
            values = func(u)
        values = np.broadcast_to(values, (flat.size, z.size))
        out.append((values * w).sum(axis=-1))
        if n == _HI:
            absolute = (np.abs(values) * w).sum(axis=-1)
            first = (u, values)
    value, bound = _finish(out[0], out[1], absolute)
    value, bound = value.reshape(scale.shape), bound.reshape(scale.shape)
    if not np.isfinite(value).all():
        _check_finite(value, _not_finite_at(*first))
    return (value, bound) if return_error else value


def _not_finite_at(u: np.ndarray, values: np.ndarray) -> tuple[float, float] | None:
    """``(u, f(u))`` at the node nearest 0 where the integrand is not finite (``None``: nowhere)."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size == 0:
        return None
    k = bad[np.argmin(np.abs(u.reshape(-1)[bad]))]
    return float(u.reshape(-1)[k]), float(values.reshape(-1)[k])


def correlation_parts(c=None, eps=None) -> tuple[np.ndarray, np.ndarray]:
    """``(c, eps)`` as float arrays from either one, checked to lie in ``[-1, 1]`` / ``[0, 2]``.

    Give ``eps = 1 - c`` directly to keep its digits when ``c`` is close to 1.
    """
    if (c is None) == (eps is None):
        raise DomainError("give exactly one of the correlation c and eps = 1 - c")
    if eps is None:
        c = np.asarray(c, dtype=float)
        if not (c.min(initial=0.0) >= -1 and c.max(initial=0.0) <= 1):  # a NaN fails either comparison
            raise DomainError("the correlation c must lie in [-1, 1]")
        return c, 1.0 - c
    eps = np.asarray(eps, dtype=float)
    if not (eps.min(initial=0.0) >= 0 and eps.max(initial=0.0) <= 2):  # a NaN fails either comparison
        raise DomainError("eps = 1 - c must lie in [0, 2]")
    return 1.0 - eps, eps


def expect2(func, q1, q2, c=None, *, eps=None, sharp: bool = False, return_error: bool = False):
    """``E[func(u1, u2 - u1)]`` over jointly Gaussian ``(u1, u2)`` with variances ``q1, q2``.

    The correlation is ``c`` or ``1 - eps``; everything broadcasts. ``func(u1, delta)``
    receives ``delta = u2 - u1`` computed without cancellation, so that an integrand such as
    ``(phi(u1 + delta) - phi(u1))**2`` keeps its digits as ``c -> 1``.

    ``sharp=True`` declares a jump in the integrand or its derivative at ``u = 0`` (a kink of
    the activation): the inner integral then changes on the scale ``s = sqrt(1 - c^2)`` in
    ``z1``, and the outer panels are graded down to it (at most 64 dyadic levels).
    """
    c, eps = correlation_parts(c, eps)
    q1, q2, c, eps = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (q1, q2, c, eps)))
    shape = q1.shape
    r1, r2 = np.sqrt(q1.reshape(-1)), np.sqrt(q2.reshape(-1))
    cc, ee = c.reshape(-1), eps.reshape(-1)
    s = np.sqrt(ee * (2.0 - ee))
    # u2 - u1 = (r2 c - r1) z1 + r2 s z2, with r2 c - r1 = (r2 - r1) - r2 eps
    slope = (q2.reshape(-1) - q1.reshape(-1)) / np.where(r1 + r2 > 0, r1 + r2, 1.0) - r2 * ee
    levels1 = _levels(max(r1.max(initial=0.0), r2.max(initial=0.0)), Z_MAX)
    if sharp and np.any(s > 0):
        levels1 = min(64, max(levels1, _levels(1.0 / s[s > 0].min(), Z_MAX)))
    levels2 = _levels((r2 * s).max(initial=0.0), 2 * Z_MAX)
    outer = _dyadic(Z_MAX, levels1)
    window = np.linspace(-Z_MAX, Z_MAX, 11)  # the Gaussian weight alone: panels of width 2
    graded = _dyadic(2 * Z_MAX, levels2)
    per_point = (outer.size * _HI) * (window.size + graded.size) * _HI
    step = max(1, _CHUNK_NODES // per_point)
    value = np.empty(r1.size)
    bound = np.empty(r1.size)
    for start in range(0, r1.size, step):
        sl = slice(start, start + step)
        value[sl], bound[sl] = _expect2_chunk(func, r1[sl], r2[sl], cc[sl], s[sl], slope[sl],
                                              outer, window, graded)
    value, bound = value.reshape(shape), bound.reshape(shape)
    _check_finite(value)
    return (value, bound) if return_error else value


def _expect2_chunk(func, r1, r2, c, s, slope, outer, window, graded):
    results, absolute = [], None
    for n in (_HI, _LO):
        z1, w1 = _panel_nodes(outer, n)  # (N1,)
        z1 = z1[None, :]
        # where u2 crosses zero; far outside the window when s -> 0 (clipped: only its side matters)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            kink = np.where(s[:, None] > 0, -c[:, None] * z1 / s[:, None], 0.0)
        kink = np.clip(np.nan_to_num(kink), -3 * Z_MAX, 3 * Z_MAX)
        moving = np.clip(kink[..., None] + graded, -Z_MAX, Z_MAX)
        breaks = np.sort(np.concatenate([np.broadcast_to(window, moving.shape[:-1] + window.shape), moving],
                                        axis=-1), axis=-1)
        z2, w2 = _panel_nodes(breaks, n)  # (P, N1, N2)
        u1 = (r1[:, None] * z1)[..., None]
        delta = slope[:, None, None] * z1[..., None] + (r2 * s)[:, None, None] * z2
        with np.errstate(all="ignore"):  # a moment that is not finite is reported by _check_finite
            values = func(np.broadcast_to(u1, delta.shape), delta)
        weights = w1[None, :, None] * w2
        results.append((values * weights).sum(axis=(-1, -2)))
        if absolute is None:
            absolute = (np.abs(values) * weights).sum(axis=(-1, -2))
    return _finish(results[0], results[1], absolute)


def _check_finite(value: np.ndarray, point: tuple[float, float] | None = None) -> None:
    """A typed error where a moment is not finite; ``point`` ``(u, f(u))``: where the integrand
    itself is not (the node nearest 0), which tells an activation undefined at a point (``1/x``
    at 0, ``sqrt(x)`` below 0) from one that overflows far out (``exp`` at a large variance)."""
    if np.isfinite(value).all():
        return
    if point is not None and (math.isnan(point[1]) or abs(point[0]) < 1.0):
        u = point[0] + 0.0  # no -0
        raise DomainError(f"a Gaussian moment is not finite: the integrand is {point[1]} at u = {u:.6g} "
                          "(the activation must be a finite real number on the whole line)")
    raise DomainError("a Gaussian moment is not finite in float64 (the activation grows too fast "
                      "for this variance); use smaller q or the mpmath path")


def expect2_hermite(func, q, eps, n: int = 96):
    """``E[func(u1, u2 - u1)]`` at equal variances ``q`` by an ``n x n`` Gauss-Hermite product rule.

    A fast rule for figures over many parameter points where ``q`` is moderate (``q <~ 10``)
    and the activation smooth; returns ``(value, estimate)`` with the estimate
    ``|rule(n) - rule(n // 2)|`` (not a bound). The certified moments use :func:`expect2`.
    """
    q, eps = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(eps, dtype=float))
    out = []
    for m in (n, n // 2):
        z, w = np.polynomial.hermite_e.hermegauss(m)
        w = w / w.sum()
        r = np.sqrt(q)[..., None, None]
        e = eps[..., None, None]
        s = np.sqrt(e * (2.0 - e))
        z1, z2 = z[:, None], z[None, :]
        with np.errstate(under="ignore"):
            u1 = np.broadcast_to(r * z1, np.broadcast_shapes(r.shape, (m, m)))
            values = func(u1, r * (-e * z1 + s * z2))
        out.append((values * (w[:, None] * w[None, :])).sum(axis=(-1, -2)))
    return out[0], np.abs(out[0] - out[1])
