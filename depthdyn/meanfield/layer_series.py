"""The Hermite series of one variance as a kernel layer uses it, by parity, Python floats.

A kernel layer (:mod:`depthdyn.meanfield.kernels`) asks at every layer for ``E[phi^2]`` and the
difference moment ``E[phi^2] - E[phi(u1) phi(u2)]`` at a new variance, and a dense network for
the cross moments of the new lag with the older ones. The series and its bounds are those of
:mod:`depthdyn.meanfield.mehler`; here they are kept for one variance of an activation with a
parity (tanh is odd), at the degrees that can be nonzero only, with every scalar a Python float:
the arrays are a few dozen entries long, so NumPy's cost per call, not the arithmetic, is most
of the work, and fewer calls make a layer faster.

A :class:`LayerSeries` holds ``b_n`` at the degrees of ``phi``'s parity, their bounds ``E_n``
(the two rules' difference plus the window's, the asymptote's and the rounding's share,
``base``), and the products ``b_n^2``, ``|b_n| E_n``, ``E_n^2`` whose sums weighted by
``1 - rho^n``, ``rho^n`` or ``n`` give every value and bound. The coefficients of the other
parity vanish; their bound is ``base``, and their share of each sum is bounded in closed form
(``0 <= 1 - rho^n <= min(2, n (1 - rho))`` and ``|rho|^n <= 1``).

A ``phi`` of neither parity (SELU) has a record of every degree (:data:`BOTH`): its even and odd
parts ``(phi(u) +- phi(-u)) / 2`` are projected on the same nodes ``z > 0`` against their parity's
tables, one evaluation of ``phi`` at ``+-u`` for both, and every sum above runs over all degrees.
"""

from __future__ import annotations

import bisect
import math
from functools import cache
from typing import NamedTuple

import numpy as np

from . import hermite_rule as rule
from .memo import ActivationMemo

__all__ = ["BOTH", "LayerSeries", "Projection", "parity_of", "rows_of", "project_parity", "derivative_square",
           "layer_series", "least_order", "derivative_tail", "diagonal", "cross_moments"]

_ULP = float(np.finfo(float).eps)
_cache = ActivationMemo(64)

#: The ``odd`` of a record of every degree, for a ``phi`` of neither parity (see the module).
BOTH = 2


class LayerSeries(NamedTuple):
    """The Hermite coefficients of ``phi(sqrt(q) z)`` at the degrees of ``phi``'s parity, up to ``order``.

    ``stack`` the rows ``b``, ``|b|`` and ``b_err`` at those degrees; ``terms`` the rows ``b^2``,
    ``|b| b_err`` and ``b_err^2``; ``base`` the bound of every coefficient of the other parity
    (they vanish); ``m0 = E[phi^2]`` and ``m0_err``; ``t0`` the Parseval tail beyond ``order`` (as
    in :class:`~depthdyn.meanfield.mehler.Coefficients`); ``square_sum`` the sum of ``b^2``;
    ``parts`` what the tail ``t1`` of the derivative needs besides ``x E[phi'^2]``
    (:func:`derivative_tail`, computed when asked).
    """

    q: float
    order: int
    odd: int
    stack: np.ndarray
    terms: np.ndarray
    base: float
    m0: float
    m0_err: float
    t0: float
    square_sum: float
    parts: tuple

    @property
    def b(self) -> np.ndarray:
        return self.stack[0]

    @property
    def b_err(self) -> np.ndarray:
        return self.stack[2]


def parity_of(act) -> int | None:
    """1 for an odd ``phi``, 0 for an even one, ``None`` for neither or undeclared (``phi_parity``)."""
    return {"odd": 1, "even": 0}.get(act.phi_parity() if hasattr(act, "phi_parity") else None)


def rows_of(order: int, odd: int) -> int:
    """How many degrees up to ``order`` a record of ``odd`` holds (1, 0: one parity's; :data:`BOTH`: all)."""
    return order + 1 if odd == BOTH else (order + 2 - odd) // 2


@cache
def _other(order: int, odd: int) -> tuple[int, float, int, float]:
    """The other parity's degrees up to ``order``: their count and sum, and the same of those ``>= 1``
    (none for a record of :data:`BOTH`)."""
    degrees = [n for n in range(order + 1) if n % 2 != odd and odd != BOTH]
    positive = [n for n in degrees if n >= 1]
    return len(degrees), float(sum(degrees)), len(positive), float(sum(positive))


@cache
def _columns(order: int, odd: int) -> tuple[np.ndarray, np.ndarray]:
    """The parity's degrees up to ``order`` (every degree for :data:`BOTH`) and the columns ``(1, n)`` of
    their sums."""
    n = np.arange(order + 1.0) if odd == BOTH else np.arange(odd, order + 1, 2, dtype=float)
    return n, np.ascontiguousarray(np.stack((np.ones(n.size), n), axis=1))


class Projection(NamedTuple):
    """Both rules' projections of ``phi(sqrt(x) z)`` (:func:`project_parity`); floats but ``hi``, ``lo``.

    ``hi``, ``lo`` the coefficients at the parity's degrees; ``m0``, ``m0_lo`` ``E[phi^2]`` and ``m1``,
    ``m1_lo`` ``x E[phi'^2]`` of each rule; ``phi0 = phi(0)``; ``window`` the share of each coefficient
    from ``|z| > Z`` where the projection knows it (``None``: from the growth bound, as the caller
    does); ``errors`` the asymptote's share ``(of b, of E[phi^2], of x E[phi'^2])``; ``scale`` and
    ``m0_scale`` what the sums' rounding is relative to (``sum f^2 w`` of the function summed, and of
    ``E[phi^2]``'s terms); ``exact`` the error of the asymptote's exact coefficients (per degree).
    """

    hi: np.ndarray
    lo: np.ndarray
    m0: float
    m0_lo: float
    m1: float
    m1_lo: float
    phi0: float
    window: float | None
    errors: tuple[float, float, float]
    scale: float
    m0_scale: float
    exact: np.ndarray | float


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def project_parity(act, x: float, order: int, level: int, odd: int, derivative: bool = True) -> Projection:
    """Both rules' coefficients of ``phi(sqrt(x) z)`` at the degrees ``odd, odd + 2, ..`` up to ``order``,
    ``E[phi^2]`` and ``x E[phi'^2]`` of each rule (the latter ``0.0`` without ``derivative``), and what
    their bounds need (:class:`Projection`).

    For an activation that declares an asymptote ``(U, limit, slope, s, d)`` and a variance with
    nodes beyond ``U`` (``sqrt(x) z >= U``), ``phi = A + r`` with ``A(u) = limit + slope u`` for
    ``u > 0`` (extended by the parity): ``A``'s coefficients are exact
    (:func:`~depthdyn.meanfield.hermite_rule.asymptote_coefficients`), ``E[A^2]`` is a closed form,
    and only the remainder ``r`` (:meth:`~depthdyn.meanfield.activation.Activation.phi_remainder`) is
    summed, on the nodes with ``sqrt(x) z < U``: beyond, ``|r| <= s`` stands as 0. Per rule that
    changes ``b_k`` by at most ``s`` (Cauchy-Schwarz against ``sum h_k^2 w <= 1``), ``E[phi^2]`` by
    ``s (2 E|A| + s)``, and ``x E[phi'^2]`` (``phi'`` taken as ``slope`` there) by ``x d (2 slope + d)``;
    the rules' difference by twice as much. The sums' rounding is then relative to ``r``'s size,
    not ``phi``'s (``sqrt(x) / 2`` for GELU's even part at a large variance). Likewise an even ``phi``
    with ``phi(0) != 0`` elsewhere: ``phi(0)`` is the exact part, ``phi(u) - phi(0)`` (``act.diff``)
    the summed one.
    """
    rows = rows_of(order, odd)
    half = rule.parity_rule(level, odd, rows, x <= rule.WIDE_Q)
    mid, root = half.middle, math.sqrt(x)
    declared, phi0 = _profile(act)
    start, stop, asymptote = _span(declared, x, half)
    m_lo, m_hi = mid - start, stop - mid - 1
    cut = asymptote is not None
    u = half.z[start:stop] * root
    weights = half.weights[start:stop]
    m1, m1_lo, derivative_error = derivative_square(act, x, level, odd) if derivative else (0.0, 0.0, 0.0)
    # an even phi with phi(0) != 0 (softplus's even part: log 2) is summed as phi(u) - phi(0), from its
    # accurate difference: the constant's coefficient is exact, and the rounding is the rest's
    offset = 0.0 if odd or cut else phi0
    if cut:  # only u in [0, U) is evaluated: nothing to guard (NumPy's errstate costs as much as phi)
        f = act.phi_remainder(u)
    elif declared is not None:  # no node reaches U: the same
        f = act.diff(0.0, u) if offset else act.phi(u)  # phi(0 + u) - phi(0)
    else:
        with np.errstate(under="ignore", over="ignore"):
            f = act.diff(0.0, u) if offset else act.phi(u)
    hi, lo = f[m_lo + 1:] @ half.t_hi[:m_hi], f[:m_lo] @ half.t_lo[start:mid]
    if not cut and not offset:
        m0, m0_lo = ((f * f) @ weights).tolist()
        return Projection(hi, lo, m0, m0_lo, m1, m1_lo, float(f[m_lo]), None, (0.0, 0.0, 0.0), m0, m0, 0.0)
    if not cut:  # E[phi^2] = phi(0)^2 + 2 phi(0) E[f] + E[f^2], f = phi - phi(0)
        mean, mean_lo = float(hi[0]), float(lo[0])  # E[f] by each rule: the coefficient of h_0 = 1
        hi[0] += offset
        lo[0] += offset
        m0, m0_lo = ((f * f) @ weights).tolist()
        a, slope, d = act.growth  # |f| <= a + |phi(0)| + slope |u| and <= d |u|
        window = min(rule.share(x, a + abs(offset), slope), rule.share(x, 0.0, d))
        exact = np.zeros(hi.size)
        exact[0] = 4 * _ULP * abs(offset)
        square = offset * offset
        # the terms' size: sum |2 phi(0) f + f^2| w <= 2 |phi(0)| sqrt(sum f^2 w) + sum f^2 w (Cauchy-Schwarz)
        size = 2 * abs(offset) * math.sqrt(m0) + m0 + square / 16
        return Projection(hi, lo, square + 2 * offset * mean + m0, square + 2 * offset * mean_lo + m0_lo, m1,
                          m1_lo, offset, window, (0.0, 0.0, 0.0), m0, size, exact)
    scale = float((f * f) @ weights[:, 0])  # sum r^2 w of the 20-node rule
    _, limit, slope, s, d = asymptote
    exact = rule.asymptote_coefficients(odd, rows) * (limit if odd else slope * root)
    exact[0] += slope * root if odd else limit  # the constant (even) or the line (odd)
    hi += exact
    lo += exact
    mean_a = abs(limit) + slope * root * _SQRT_2_OVER_PI  # E|A|
    square_a = limit * limit + 2 * limit * slope * root * _SQRT_2_OVER_PI + slope * slope * x  # E[A^2]
    f *= 2 * (limit + slope * u) + f  # r (2 A + r): E[phi^2] = E[A^2] + E[r (2 A + r)]
    (cross, cross_lo), (size, _) = (f @ weights).tolist(), (np.abs(f) @ weights).tolist()
    errors = (3 * s, 3 * s * (2 * mean_a + s), derivative_error)
    return Projection(hi, lo, square_a + cross, square_a + cross_lo, m1, m1_lo, phi0,
                      rule.share(x, s, 0.0), errors, scale, size + square_a / 16, 4 * _ULP * np.abs(exact))


def _profile(act) -> tuple[tuple | None, float]:
    """The activation's asymptote (or ``None``) and ``phi(0)``, kept per activation (asked for at every
    projection)."""
    profile = _cache.get(act, "profile")
    if profile is None:
        asymptote = act.phi_asymptote() if hasattr(act, "phi_asymptote") else None
        profile = _cache.put(act, "profile", (asymptote, float(act.phi(np.zeros(1))[0])))
    return profile


def _project_both(act, x: float, order: int, level: int) -> Projection:
    """:func:`project_parity` of a ``phi`` of neither parity: both rules' coefficients of every degree up
    to ``order``, the even ones from ``(phi(u) + phi(-u)) / 2`` and the odd ones from
    ``(phi(u) - phi(-u)) / 2`` on the nodes ``z > 0`` (the same for both parities' tables), and
    ``E[phi^2] = E[(phi(u)^2 + phi(-u)^2) / 2]`` (no asymptote, no derivative), from one evaluation
    of ``phi`` at ``+-u`` (:meth:`~depthdyn.meanfield.activation.Activation.phi_mirrored`)."""
    both = rule.both_rule(level, order, x <= rule.WIDE_Q)
    f = act.phi_mirrored(both.z * math.sqrt(x))  # the rows phi(u), phi(-u)
    parts = _HALVES @ f  # (phi(u) + phi(-u)) / 2 and (phi(u) - phi(-u)) / 2
    split, even, odd = both.split, both.even, both.odd
    hi, lo = np.empty(order + 1), np.empty(order + 1)
    hi[0::2], hi[1::2] = parts[0, :split] @ even.t_hi, parts[1, :split] @ odd.t_hi
    lo[0::2], lo[1::2] = parts[0, split:] @ even.t_lo, parts[1, split:] @ odd.t_lo
    f = f.reshape(-1)
    f *= f
    m0, m0_lo = (f @ both.weights).tolist()
    return Projection(hi, lo, m0, m0_lo, 0.0, 0.0, _profile(act)[1], None, (0.0, 0.0, 0.0), m0, m0, 0.0)


_SIGNS = np.array([1.0, -1.0])
_HALVES = np.array([[0.5, 0.5], [0.5, -0.5]])


def _span(asymptote: tuple | None, x: float, half: rule.ParityRule) -> tuple[int, int, tuple | None]:
    """The slice ``[start, stop)`` of ``half``'s layout below the asymptote point ``U`` (all of it where no
    node of variance ``x`` reaches ``U``, or there is no asymptote), and the asymptote where some does."""
    m_hi, m_lo = half.sizes
    root = math.sqrt(x)
    if asymptote is None or root * half.z[-1] < asymptote[0]:
        return half.middle - m_lo, half.middle + 1 + m_hi, None
    at = asymptote[0] / root
    m_hi, m_lo = bisect.bisect_left(half.z_hi, at), bisect.bisect_left(half.z_lo, at)
    return half.middle - m_lo, half.middle + 1 + m_hi, asymptote


def derivative_square(act, x: float, level: int, odd: int) -> tuple[float, float, float]:
    """``x E[phi'(sqrt(x) z)^2]`` by each rule, and the asymptote's share of its error (``phi'`` taken
    as ``slope`` beyond ``U``: ``x d (2 slope + d)`` per rule, the rules' difference twice as much)."""
    if odd == BOTH:  # E[(phi'(u)^2 + phi'(-u)^2) / 2] on the nodes z > 0
        half = rule.parity_rule(level, 0, 1)
        with np.errstate(under="ignore", over="ignore"):
            g = act.dphi(np.multiply.outer(_SIGNS, half.z * math.sqrt(x)))  # u and -u: one evaluation
        g *= g
        (a, a_lo), (b, b_lo) = (g @ half.weights).tolist()
        return 0.5 * x * (a + b), 0.5 * x * (a_lo + b_lo), 0.0
    half = rule.parity_rule(level, odd, 1)  # the nodes and weights alone
    start, stop, asymptote = _span(_profile(act)[0], x, half)
    weights = half.weights[start:stop]
    u = half.z[start:stop] * math.sqrt(x)
    if asymptote is None:
        with np.errstate(under="ignore", over="ignore"):
            g = act.dphi(u)
    else:  # only u in [0, U) is evaluated: nothing to guard
        g = act.dphi(u)
    m1, m1_lo = ((g * g) @ weights).tolist()
    if asymptote is None:
        return x * m1, x * m1_lo, 0.0
    _, _, slope, _, d = asymptote
    if slope:  # phi' = slope beyond U, where the weights are the rule's less those summed
        m1 += slope * slope * (half.totals[0] - weights[:, 0].sum())
        m1_lo += slope * slope * (half.totals[1] - weights[:, 1].sum())
    return x * m1, x * m1_lo, 3 * x * d * (2 * abs(slope) + d)


def _compute(act, x: float, order: int, odd: int) -> LayerSeries:
    level = rule.levels(x)
    a, slope, d = act.growth
    if odd == BOTH:
        p = _project_both(act, x, order, level)
    else:
        p = project_parity(act, x, order, level, odd, False)
    b, lo, m0, m0_lo = p.hi, p.lo, p.m0, p.m0_lo
    window = p.window if p.window is not None else min(rule.share(x, a, slope), rule.share(x, abs(p.phi0), d))
    # rounding: sum_m |f_m A_km| <= sqrt(sum f^2 w) sqrt(sum h_k^2 w) = sqrt(scale) (Cauchy-Schwarz)
    base = window + p.errors[0] + 64 * _ULP * math.sqrt(p.scale)
    stack = np.empty((3, b.size))  # b, |b|, its bound: one array for the pairs of lags
    stack[0] = b
    np.abs(b, out=stack[1])
    err = np.subtract(b, lo, out=stack[2])  # in place: each temporary costs as much as its arithmetic
    np.abs(err, out=err)
    err += base
    if isinstance(p.exact, np.ndarray) or p.exact:
        err += p.exact
    e0 = abs(m0 - m0_lo) + window * window + p.errors[1] + 64 * _ULP * p.m0_scale
    terms = stack * stack[_PICK]  # b^2, |b| E, E^2
    (s_b, n_b), (s_x, n_x), (s_e, n_e) = (terms @ _columns(order, odd)[1]).tolist()
    count, total, _, _ = _other(order, odd)
    # the spreads (2 |b| + E) E of every degree, the other parity's base^2 included
    spread, n_spread = 2 * s_x + s_e + count * base * base, 2 * n_x + n_e + total * base * base
    t0 = max(m0 - s_b + e0 + spread + 8 * _ULP * m0, 0.0)
    return LayerSeries(x, order, odd, stack, terms, base, m0, e0, t0, s_b, (n_b, n_spread))


_PICK = [0, 2, 2]  # the rows b, E, E: times b, |b|, E


def derivative_tail(act, series: LayerSeries, known: bool = False) -> float | None:
    """``T1``: the Parseval tail beyond the order of ``d/dz phi(sqrt(q) z)``, whose coefficients are
    ``sqrt(n) b_n`` (``q E[phi'^2] - sum n b_n^2`` with its bounds). Computed only when a bound asks
    for it (a correlation near 1), from a second pass over the nodes, and kept; with ``known``, the
    kept value or ``None``."""
    x, order, odd = series.q, series.order, series.odd
    key = (order, odd, x, "t1")
    kept = _cache.get(act, key)
    if kept is not None or known:
        return kept
    m1, m1_lo, error = derivative_square(act, x, rule.levels(x), odd)
    tail = rule.share(x, act.growth[2], 0.0)
    e1 = abs(m1 - m1_lo) + x * (tail * tail) + error + 64 * _ULP * m1
    n_b, n_spread = series.parts
    t1 = max(m1 - n_b + e1 + n_spread + 8 * _ULP * order * m1, 0.0)
    return _cache.put(act, key, t1)


def layer_series(act, x: float, order: int, odd: int) -> LayerSeries:
    """The :class:`LayerSeries` of ``phi(sqrt(x) z)`` (``0 < x <= Q_MAX``) to at least ``order``, for an
    activation of parity ``odd`` (1: odd, 0: even, :data:`BOTH`) with a growth bound: the record of
    ``order`` itself where one was computed, else of the next order computed, else a new one. The last
    variances' records are kept, by order (a kernel recurrence asks for the same variance several
    times, and a dense network for its lags in consecutive layers): one look-up per variance."""
    records = _cache.get(act, (odd, x))
    if records is None:
        records = _cache.put(act, (odd, x), {})
    for tier in _ENOUGH[order]:  # a layer mostly asks again for the order it asked for before
        record = records.get(tier)
        if record is not None:
            return record
    record = records[order] = _compute(act, x, order, odd)
    return record


#: The tiers at least as high as each, itself first.
_ENOUGH = {t: [t] + [u for u in rule.TIERS if u > t] for t in rule.TIERS}


def least_order(act, x: float, odd: int, rho: float, order: int) -> int:
    """The least of :data:`~depthdyn.meanfield.hermite_rule.TIERS` up to ``order`` at which the kept record
    of variance ``x`` makes the tail ``|rho|^(N+1) T0(N)`` a hundredth of ``RTOL E[phi^2]``; ``order``
    where none is kept. A variance close to ``x`` (a dense network's new lag beside the one before)
    has a tail about as small: the criterion ``|rho|^N <= RTOL / 100`` of :func:`~depthdyn.meanfield.
    hermite_rule.order_of` ignores how fast the coefficients fall (a caller checks the bounds)."""
    records = _cache.get(act, (odd, x))
    if not records:
        return order
    series = records[max(records)]
    limit = rule.RTOL * 1e-2 * series.m0
    for tier in rule.TIERS:
        if tier >= order or tier > series.order:
            return order
        root = _cut(series, tier, rows_of(tier, odd))[1][0]  # sqrt(T0) at that order
        if abs(rho) ** (tier + 1) * root * root <= limit:
            return tier
    return order


def diagonal(act, x: float, e: float, odd: int) -> tuple[float, bool, float, bool]:
    """``(E[phi^2], ok, E[phi^2] - E[phi(u1) phi(u2)], ok)`` at variance ``0 < x <= Q_MAX`` and correlation
    ``1 - e`` (``0 <= e <= 2``), each ``ok`` where its bound is within ``RTOL`` of the value.

    The difference is summed as ``sum b_n^2 (1 - rho^n)`` (positive terms) with the tail
    ``min(2 T0, e T1)``, or, where that bound is worse (``rho`` away from 1), as
    ``E[phi^2] - sum b_n^2 rho^n`` with the tail ``|rho|^(N+1) T0``; ``T1`` (a second pass over
    the nodes) is computed only where neither is within ``RTOL`` without it.

    The order is the default one (at most 384), and more (up to 1536, where ``|rho|^N`` then is small
    enough) only where that is not within ``RTOL``: the criterion ``|rho|^N <= RTOL / 100`` ignores
    how fast the coefficients fall, and asks for 1536 terms where 384 often do. A call that needed
    more says so to the next (a kernel's layers move slowly), which then starts there, until the
    note leaves the activation's cache.
    """
    rho = abs(1.0 - e)
    order, top = rule.order_of(x, rho), rule.order_of(x, rho, more=True)
    if order < top and _cache.get(act, "more") is not None:
        order = top
    result = _diagonal(act, x, e, odd, order)
    if not result[3] and order < top:
        result = _diagonal(act, x, e, odd, top)
        if result[3]:
            _cache.put(act, "more", True)
    return result


def _diagonal(act, x: float, e: float, odd: int, order: int) -> tuple[float, bool, float, bool]:
    """:func:`diagonal` at the truncation ``order``."""
    series = layer_series(act, x, order, odd)
    order, m0, m0_err, t0, base = series.order, series.m0, series.m0_err, series.t0, series.base
    m0_ok = m0_err <= rule.RTOL * max(m0, 1e-300)
    n = _columns(order, odd)[0]
    # (1 - e)^n - 1 = -(1 - rho^n), without cancellation near e = 0 (rho <= 0: none to avoid)
    power = np.expm1(n * math.log1p(-e)) if e < 1.0 else np.power(1.0 - e, n) - 1.0
    near, cross, squares = (series.terms @ power).tolist()
    near, cross, squares = -near, -cross, -squares
    _, _, count, total = _other(order, odd)
    # 0 <= 1 - rho^n <= min(2, n e): the other parity's share, and the tail
    near_err = 2 * cross + squares + base * base * min(2.0 * count, e * total) + 64 * _ULP * near
    limit = rule.RTOL * max(near, 1e-300)
    if near_err + 2 * t0 <= limit:
        return m0, m0_ok, near, True
    t1 = derivative_tail(act, series, known=True)  # kept from a layer before (a converged q)
    if t1 is not None and near_err + e * t1 <= limit:
        return m0, m0_ok, near, True
    rho = 1.0 - e
    power += 1.0  # rho^n
    if rho >= 0:
        far_sum, cross, squares = (series.terms @ power).tolist()
    else:
        far_sum = float(series.terms[0] @ power)
        cross, squares = (series.terms[1:] @ np.abs(power)).tolist()
    # the sums run over degree 0 too (rho^0 = 1: b_0^2 and its bound), or leave it to the other parity
    far = m0 - far_sum
    far_err = (m0_err + 2 * cross + squares + base * base * _other(order, odd)[0]
               + abs(rho) ** (order + 1) * t0 + 64 * _ULP * m0)
    if far_err > rule.RTOL * max(far, 1e-300):  # then the near sum's bound with the derivative's tail
        near_err += min(2 * t0, e * derivative_tail(act, series))
    else:
        near_err += 2 * t0
    difference, err = (far, far_err) if far_err < near_err else (near, near_err)
    return m0, m0_ok, difference, err <= rule.RTOL * max(difference, 1e-300)


def cross_moments(act, q: list, odd: int, order: int, i: list, j: list, rho: list):
    """``(values, errors, ok)`` of ``E[phi(u_i) phi(u_j)]`` for pairs of the variances ``q`` (each in
    ``(0, Q_MAX]``; ``i, j`` their indices) at correlations ``rho`` (lists of one length), from every
    variance's :class:`LayerSeries` cut to ``order``.

    Summed as ``sum b_n(q_i) b_n(q_j) rho^n`` with the bound of
    :func:`~depthdyn.meanfield.mehler.cross_moment`: the coefficients' errors, the tail
    ``|rho|^(N+1) sqrt(T0_i T0_j)``, the vanishing parity's ``base_i base_j`` per degree, rounding;
    ``ok`` where that is within ``RTOL`` of the scale ``sqrt(E[phi(u_i)^2] E[phi(u_j)^2])``.
    """
    rows = rows_of(order, odd)
    cut = {x: _cut(layer_series(act, q[x], order, odd), order, rows) for x in set(i + j)}
    r = np.array(rho)
    n = _columns(order, odd)[0]
    if min(rho) > 0:  # |rho|^n = exp(n log rho): off by at most (1 + 1/e) ulp of the largest power
        power = np.exp(n * np.log(r)[:, None])
        signed = power
    else:
        signed = np.power(r[:, None], n)
        power = np.abs(signed)
    # the rows b, |b|, E of each point's two variances: (points, 3, rows)
    second = np.empty((len(j), 3, rows))
    for k, x in enumerate(j):
        second[k] = cut[x][0]
    if len(set(i)) == 1:  # a dense layer's new lag against each older one: no copies of its rows
        first = cut[i[0]][0] * power[:, None, :]
    else:
        first = np.empty((len(i), 3, rows))
        for k, x in enumerate(i):
            np.multiply(cut[x][0], power[k], out=first[k])
    values = None if signed is power else [  # a correlation <= 0: the signed powers for the values
        float((cut[a][0][0] * cut[c][0][0]) @ signed[k]) for k, (a, c) in enumerate(zip(i, j, strict=True))]
    # every product of the rows of the two variances, summed with the weights |rho|^n: one product
    sums = np.matmul(first, second.transpose(0, 2, 1)).tolist()
    count, rtol, top = _other(order, odd)[0], rule.RTOL, order + 1
    out, errors, ok = [], [], []
    for k, (a, c) in enumerate(zip(i, j, strict=True)):
        (root_a, scale_a, base_a), (root_c, scale_c, base_c) = cut[a][1], cut[c][1]
        m = sums[k]  # m[x][y] = sum_n row_x(b_a) row_y(b_c) |rho|^n
        # |b_a| E_c + E_a |b_c| + E_a E_c, rounding, the tail and the other parity
        error = (m[1][2] + m[2][1] + m[2][2] + 64 * _ULP * m[1][1] + abs(rho[k]) ** top * root_a * root_c
                 + count * base_a * base_c)
        out.append(m[0][0] if values is None else values[k])
        errors.append(error)
        ok.append(error <= rtol * max(scale_a * scale_c, 1e-300))
    return out, errors, ok


def _cut(series: LayerSeries, order: int, rows: int) -> tuple[np.ndarray, tuple[float, float, float]]:
    """``series`` truncated at ``order <= series.order``: the first ``rows`` columns of its stack, and
    ``(sqrt(T0), sqrt(sum b^2), base)`` with the dropped degrees' ``b^2`` moved into ``T0`` (less
    their spreads, the other parity's ``base^2`` included, as :func:`_compute` would count them)."""
    if series.order == order:
        return series.stack, (math.sqrt(series.t0), math.sqrt(series.square_sum), series.base)
    d_square, d_cross, d_squares = series.terms[:, rows:].sum(axis=1).tolist()
    dropped = _other(series.order, series.odd)[0] - _other(order, series.odd)[0]
    t0 = series.t0 + d_square - 2 * d_cross - d_squares - dropped * series.base * series.base
    square = max(series.square_sum - d_square, 0.0)
    return series.stack[:, :rows], (math.sqrt(max(t0, 0.0)), math.sqrt(square), series.base)


