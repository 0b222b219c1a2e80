"""Bivariate Gaussian moments of smooth activations by their Hermite (Mehler) series, with a bound.

For ``u1 = sqrt(q1) z1`` and ``u2 = sqrt(q2) z2``, standard ``z1, z2`` with correlation
``rho``, Mehler's formula gives

.. math::

    E[\\phi(u_1)\\phi(u_2)] = \\sum_{n \\ge 0} b_n(q_1)\\, b_n(q_2)\\, \\rho^n,
    \\qquad b_n(q) = E[\\phi(\\sqrt q z)\\, h_n(z)],

with ``h_n = He_n / sqrt(n!)`` the orthonormal Hermite polynomials. One one-dimensional
quadrature per variance gives every coefficient at once (a matrix product), so a bivariate
moment costs about as much as a one-variable one.

The truncation after ``N`` terms is bounded by Parseval's identity: with
``T0(q) = E[phi^2] - sum_{n<=N} b_n^2`` (the squared norm left in the tail) and
``T1(q) = q E[phi'^2] - sum_{n<=N} n b_n^2`` (the same for ``d/dz phi(sqrt(q) z)``, whose
coefficients are ``sqrt(n) b_n``), Cauchy-Schwarz gives

* ``|tail of E[phi phi]| <= |rho|^(N+1) sqrt(T0(q1) T0(q2))``;
* ``|tail of E[phi^2] - E[phi(u1) phi(u2)]| <= min(2 T0, eps T1)`` at equal variances, because
  ``0 <= 1 - rho^n <= min(2, n eps)`` with ``eps = 1 - rho``; the difference is summed as
  ``sum b_n^2 (1 - rho^n)`` with ``1 - rho^n = -expm1(n log1p(-eps))``: positive terms, no
  cancellation, so ``1 - c`` keeps its digits as ``c -> 1``;
* ``|tail of E[phi'(u1) phi'(u2)]| <= |rho|^N sqrt(T1(q1) T1(q2)) / sqrt(q1 q2)``.

Away from ``rho = 1`` the difference is also summed as ``E[phi^2] - sum b_n^2 rho^n``, whose
tail is ``|rho|^(N+1) T0``; the smaller bound is taken, and a call uses only as many terms as
its correlations need (``|rho|^N`` below ``RTOL / 100``; 48 at ``|rho| = 0.3``).

The coefficients come from composite Gauss-Legendre rules (20 and 14 nodes on panels of
width 1/2, the two next to the origin graded dyadically for ``q > Q_GRADED``) on ``[-12, 12]``
(for an odd or even ``phi``, sums over the nodes ``z > 0``): their difference, a rounding term
and the window's share, bounded by Cauchy-Schwarz as ``sqrt(E[phi^2; |z| > 12])`` from the
activation's growth bound, make each coefficient's error bound; ``T0`` and ``T1`` are
over-estimated by the same errors.

The series converges geometrically where ``phi(sqrt(q) z)`` is analytic in a strip of fixed
width (tanh: poles at ``z = i pi / (2 sqrt(q))``). A point is accepted when its bound is
below ``RTOL`` times the moment's scale (for tanh near ``c = 1``: ``q`` up to about 2.5; away
from ``c = 1``: every ``q`` up to ``Q_MAX``); every other point (``c`` near 1 at a larger
``q``, or at every ``q`` for SELU, whose kinked derivative makes its coefficients fall only
algebraically; ``q = 0``; activations without a growth bound) is left to the activation's own
method near ``c = 1`` where it has one (SELU's Price integrals), then to the
graded two-dimensional quadrature of :mod:`depthdyn.meanfield.gaussian`, which integrates
``phi(u2) - phi(u1)`` itself.

The rules and orders live in :mod:`depthdyn.meanfield.hermite_rule`; a kernel layer's records of
one variance of an odd or even ``phi`` (Python floats, the parity's degrees only) in
:mod:`depthdyn.meanfield.layer_series`, which :func:`diagonal_moments_scalar` uses.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from . import hermite_rule as rule
from . import layer_series
from .memo import ActivationMemo

__all__ = ["Q_MAX", "RTOL", "TIERS", "Coefficients", "coefficients", "second_moment", "cross_moment",
           "difference_moment", "diagonal_moments", "diagonal_moments_scalar", "cross_difference",
           "derivative_cross_moment"]

#: The largest variance tried, the acceptance threshold and the truncation orders
#: (:mod:`depthdyn.meanfield.hermite_rule`, with the quadrature rules).
Q_MAX, RTOL, TIERS = rule.Q_MAX, rule.RTOL, rule.TIERS
_ULP = np.finfo(float).eps
_CACHE_SIZE = 64
_CACHED_SIZE = 8


@dataclass(frozen=True)
class Coefficients:
    """Hermite coefficients ``b[p, n] = E[phi(sqrt(q_p) z) h_n(z)]`` with their error bounds.

    ``t0`` and ``t1`` are upper bounds of the tails ``sum_{n > N} b_n^2`` and
    ``sum_{n > N} n b_n^2``; ``m0`` is ``E[phi(sqrt(q) z)^2]`` from the same rule, ``m0_err``
    its bound; ``b2[p, 0] = b[p]^2`` and ``b2[p, 1] = 2 |b| b_err + b_err^2`` (its bound), the
    terms of the diagonal's sums.
    """

    q: np.ndarray
    b: np.ndarray
    b_err: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    m0: np.ndarray
    m0_err: np.ndarray
    b2: np.ndarray

    @property
    def order(self) -> int:
        return self.b.shape[-1] - 1


_FIELDS = tuple(f.name for f in dataclasses.fields(Coefficients))
_cache = ActivationMemo(_CACHE_SIZE)
_joined = ActivationMemo(_CACHE_SIZE)  # the records of several variances, as a call asked for them


def coefficients(act, q, order: int | None = None) -> Coefficients:
    """The Hermite coefficients of ``phi(sqrt(q) z)`` for the variances ``q`` (a 1-D array).

    ``act`` needs ``phi``, ``dphi`` and ``growth = (a, b, d)`` with ``|phi(u)| <= a + b |u|``
    and ``|phi'(u)| <= d``. ``order`` is one of :data:`TIERS` (by default the one that the
    largest variance needs near ``c = 1``, or any already computed for these variances). The
    last few results are kept per variance (a kernel recurrence asks for the same variance
    several times per layer, and a dense network's lags in consecutive layers).
    """
    q = np.ascontiguousarray(q, dtype=float).reshape(-1)
    if q.size == 1:  # a kernel layer's usual call: one dictionary look-up per order
        return _one_variance(act, float(q[0]), order)
    levels = rule.levels(float(q.max(initial=0.0)))
    if q.size <= _CACHED_SIZE:  # any order already computed for these variances that is enough
        least = TIERS[0] if order is None else order
        whole = q.tobytes()
        for tier in reversed(TIERS):  # first the record of the same variances, as a call asked before
            if tier < least:
                break
            joined = _joined.get(act, (tier, levels, whole))
            if joined is not None:
                return joined[1]
        order = next((t for t in reversed(TIERS) if t >= least and all(
            _cache.get(act, (t, levels, x)) is not None for x in q.tolist())), order)
    order = rule.tier(float(q.max(initial=0.0))) if order is None else order
    if q.size > _CACHED_SIZE:
        return _compute(act, q, order, levels)
    keys = [(order, levels, x) for x in q.tolist()]
    rows = [_cache.get(act, key) for key in keys]
    missing = [i for i, row in enumerate(rows) if row is None]
    if missing:
        fresh = _compute(act, q[missing], order, levels)
        for j, i in enumerate(missing):
            row = Coefficients(*(getattr(fresh, name)[j: j + 1] for name in _FIELDS))
            rows[i] = _cache.put(act, keys[i], row)
    if len(rows) == 1:
        return rows[0]
    joined_key = (order, levels, q.tobytes())
    joined = _joined.get(act, joined_key)
    if joined is None or any(a is not b for a, b in zip(joined[0], rows, strict=True)):
        record = Coefficients(*(np.concatenate([getattr(p, name) for p in rows]) for name in _FIELDS))
        joined = _joined.put(act, joined_key, (rows, record))
    return joined[1]


def _one_variance(act, x: float, order: int | None) -> Coefficients:
    """:func:`coefficients` of a single variance: the same cache and choice of order, fewer steps."""
    levels = rule.levels(x)
    least = TIERS[0] if order is None else order
    for tier in reversed(TIERS):  # any order already computed that is enough
        if tier < least:
            break
        row = _cache.get(act, (tier, levels, x))
        if row is not None:
            return row
    order = rule.tier(x) if order is None else order
    return _cache.put(act, (order, levels, x), _compute(act, np.array([x]), order, levels))


def _project(act, q: np.ndarray, order: int, levels: int):
    """Both rules' projections of ``phi(sqrt(q) z)``: ``b``, ``E[phi^2]``, ``q E[phi'^2]`` (20-node rule,
    then 14-node rule), and ``phi(0)``. An activation that declares a ``parity`` (tanh is odd) is
    evaluated on the nodes ``z > 0`` only, against the table's rows of its parity."""
    odd = layer_series.parity_of(act)
    if odd is not None:
        return _project_half(act, q, order, levels, odd)
    (_, w_hi, table_hi), (_, w_lo, table_lo) = (rule.tables(n, levels, order) for n in (rule.HI, rule.LO))
    z, cut, _ = rule.nodes(levels)
    u = np.sqrt(q)[:, None] * z  # both rules' nodes in one call of phi and of phi'
    with np.errstate(under="ignore", over="ignore"):
        f, g = act.phi(u), act.dphi(u)
    f_hi, f_lo, g2 = f[:, :cut], f[:, cut:-1], g * g
    b, b_lo = f_hi @ table_hi[: order + 1].T, f_lo @ table_lo[: order + 1].T
    m0, m0_lo = (f_hi * f_hi) @ w_hi, (f_lo * f_lo) @ w_lo
    m1, m1_lo = q * (g2[:, :cut] @ w_hi), q * (g2[:, cut:-1] @ w_lo)
    return b, b_lo, m0, m0_lo, m1, m1_lo, f[:, -1]


def _project_half(act, q: np.ndarray, order: int, levels: int, odd: int):
    """:func:`_project` of an activation of one parity (``odd``: 1 for odd ``phi``, 0 for even)."""
    rows = layer_series.rows_of(order, odd)  # the degrees of this parity up to the order
    half = rule.parity_rule(levels, odd, rows)
    u = np.sqrt(q)[:, None] * half.z
    with np.errstate(under="ignore", over="ignore"):
        f, g = act.phi(u), act.dphi(u)
    both = np.zeros((q.size, 2, order + 1))
    both[:, 0, odd::2] = f[:, half.middle + 1:] @ half.t_hi
    both[:, 1, odd::2] = f[:, : half.middle] @ half.t_lo
    squares = np.concatenate((f, g))
    squares *= squares
    (m0, m0_lo), (m1, m1_lo) = (squares @ half.weights).reshape(2, q.size, 2).transpose(0, 2, 1)
    return both[:, 0], both[:, 1], m0, m0_lo, q * m1, q * m1_lo, f[:, half.middle]


def _compute(act, q: np.ndarray, order: int, levels: int) -> Coefficients:
    if q.size == 1:
        return _compute_one(act, q, order, levels)
    b, b_lo, m0, m0_lo, m1, m1_lo, phi0 = _project(act, q, order, levels)
    a, slope, d = act.growth
    # |phi(u)| <= a + b |u|, and <= |phi(0)| + d |u| (mean value): the second keeps small q relative
    window = np.minimum(rule.tail_share(q, (a, slope)), rule.tail_share(q, (abs(float(phi0[0])), d)))
    # rounding: sum_m |f_m A_km| <= sqrt(sum f^2 w) sqrt(sum h_k^2 w) = sqrt(m0) (Cauchy-Schwarz)
    b_err = np.abs(b - b_lo) + window[:, None] + 64 * _ULP * np.sqrt(m0)[:, None]
    m0_err = np.abs(m0 - m0_lo) + window**2 + 64 * _ULP * m0
    m1_err = np.abs(m1 - m1_lo) + q * rule.tail_share(q, (d, 0.0)) ** 2 + 64 * _ULP * m1
    n = _degrees_from_zero(order)
    bb, spread = b * b, 2 * np.abs(b) * b_err + b_err**2
    t0 = m0 - bb.sum(-1) + m0_err + spread.sum(-1) + 8 * _ULP * m0
    t1 = m1 - bb @ n + m1_err + spread @ n + 8 * _ULP * order * m1
    return Coefficients(q, b, b_err, np.maximum(t0, 0.0), np.maximum(t1, 0.0), m0, m0_err,
                        np.stack((bb, spread), axis=1))


def _compute_one(act, q: np.ndarray, order: int, levels: int) -> Coefficients:
    """:func:`_compute` of one variance (a kernel layer's call), the per-variance numbers as Python floats:
    NumPy's cost per call on one-element arrays would be most of the work."""
    x, (a, slope, d) = float(q[0]), act.growth
    odd = layer_series.parity_of(act)
    b2 = np.empty((1, 2, order + 1))
    square, spread = b2[0]
    if odd is None:
        b, b_lo, *scalars = _project(act, q, order, levels)
        s0, s0_lo, s1, s1_lo, phi0 = (float(v[0]) for v in scalars)
        window, asymptotic, scale, s0_scale, exact = None, (0.0, 0.0, 0.0), s0, s0, 0.0
    else:  # the other parity's coefficients vanish (their bound is the common part of the errors)
        p = layer_series.project_parity(act, x, order, levels, odd)
        s0, s0_lo, s1, s1_lo, phi0 = p.m0, p.m0_lo, p.m1, p.m1_lo, p.phi0
        window, asymptotic, scale, s0_scale = p.window, p.errors, p.scale, p.m0_scale
        b, b_lo = _scatter(p.hi, order, odd), _scatter(p.lo, order, odd)
        exact = _scatter(p.exact, order, odd) if isinstance(p.exact, np.ndarray) else p.exact
    if window is None:
        window = min(rule.share(x, a, slope), rule.share(x, abs(phi0), d))
    b_err = np.subtract(b, b_lo, out=b_lo)  # in place: each temporary costs as much as its arithmetic
    np.abs(b_err, out=b_err)
    b_err += window + asymptotic[0] + 64 * _ULP * math.sqrt(scale)
    b_err += exact
    e0 = abs(s0 - s0_lo) + window * window + asymptotic[1] + 64 * _ULP * s0_scale
    tail = rule.share(x, d, 0.0)
    e1 = abs(s1 - s1_lo) + x * (tail * tail) + asymptotic[2] + 64 * _ULP * s1
    np.multiply(b[0], b[0], out=square)
    np.abs(b[0], out=spread)
    spread *= 2.0
    spread += b_err[0]
    spread *= b_err[0]  # (2 |b| + b_err) b_err
    (s_b, n_b), (s_e, n_e) = (b2[0] @ _ones_and_degrees(order)).tolist()
    t0 = s0 - s_b + e0 + s_e + 8 * _ULP * s0
    t1 = s1 - n_b + e1 + n_e + 8 * _ULP * order * s1
    m0, t0, t1, e0 = np.array([s0, max(t0, 0.0), max(t1, 0.0), e0])[:, None]  # one array, four rows
    return Coefficients(q, b, b_err, t0, t1, m0, e0, b2)


def _scatter(values: np.ndarray, order: int, odd: int) -> np.ndarray:
    """``values`` at the degrees ``odd, odd + 2, ..`` of a ``(1, order + 1)`` row, zeros elsewhere."""
    row = np.zeros((1, order + 1))
    row[0, odd::2] = values
    return row


@cache
def _degrees_from_zero(order: int) -> np.ndarray:
    return np.arange(order + 1.0)


@cache
def _ones_and_degrees(order: int) -> np.ndarray:
    """The columns ``1`` and ``n`` for ``n = 0..order``: both sums of a row of ``b2`` in one product."""
    return np.ascontiguousarray(np.stack((np.ones(order + 1), np.arange(order + 1.0)), axis=1))


def second_moment(act, q):
    """``(value, bound, ok)`` of ``E[phi(sqrt(q) z)^2]`` from the coefficients' rule (flat arrays)."""
    ok = (q >= 0) & (q <= Q_MAX)
    value, bound = np.zeros(q.shape), np.full(q.shape, np.inf)
    if not ok.any():
        return value, bound, ok
    co = coefficients(act, q[ok])
    value[ok], bound[ok] = co.m0, co.m0_err
    ok[ok] = co.m0_err <= RTOL * np.maximum(co.m0, 1e-300)
    return value, bound, ok


def _pair(act, q1, q2, order=None):
    """Coefficients of both variances from one call (a shared variance is computed once)."""
    joint = np.concatenate([q1, q2])
    if joint.size > 64:
        both, inverse = np.unique(joint, return_inverse=True)
    else:  # np.unique's sort costs more than a set of a few floats
        values = sorted(set(joint.tolist()))
        place = {x: i for i, x in enumerate(values)}
        both, inverse = np.array(values), np.array([place[x] for x in joint.tolist()], dtype=np.intp)
    co = coefficients(act, both, order)
    i1, i2 = inverse[: q1.size], inverse[q1.size:]
    return co, i1, i2


def _usable(q1, q2, *more):
    ok = (q1 > 0) & (q2 > 0) & (q1 <= Q_MAX) & (q2 <= Q_MAX)
    for x in more:
        ok &= np.isfinite(x)
    return ok


def cross_moment(act, q1, q2, rho):
    """``(value, bound, ok)`` of ``E[phi(u1) phi(u2)]`` (flat arrays; ``ok``: bound within ``RTOL``)."""
    ok = _usable(q1, q2)
    value, bound = np.zeros(q1.shape), np.full(q1.shape, np.inf)
    if not ok.any():
        return value, bound, ok
    co, i1, i2 = _pair(act, q1[ok], q2[ok], _far_order(act, np.maximum(q1[ok], q2[ok]), rho[ok]))
    r = rho[ok][:, None]
    n = np.arange(co.order + 1)
    power = r**n
    b1, b2, e1, e2 = co.b[i1], co.b[i2], co.b_err[i1], co.b_err[i2]
    terms = b1 * b2 * power
    v = terms.sum(axis=-1)
    err = ((np.abs(b1) * e2 + np.abs(b2) * e1 + e1 * e2) * np.abs(power)).sum(axis=-1)
    err += np.abs(r[:, 0]) ** (co.order + 1) * np.sqrt(co.t0[i1] * co.t0[i2])
    err += 64 * _ULP * np.abs(terms).sum(-1)
    scale = np.sqrt((co.b[i1] ** 2).sum(-1) * (co.b[i2] ** 2).sum(-1))
    value[ok], bound[ok] = v, err
    ok[ok] = err <= RTOL * np.maximum(scale, 1e-300)
    return value, bound, ok


def _one_minus_power(eps: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``1 - (1 - eps)^n`` for ``n >= 1`` without cancellation near ``eps = 0``."""
    e = eps[:, None]
    if (eps < 1.0).all():  # np.errstate costs more than the sums of a kernel layer
        return -np.expm1(n * np.log1p(-e))
    with np.errstate(divide="ignore"):
        near = -np.expm1(n * np.log1p(-np.minimum(e, 1.0)))
    if (eps <= 1.0).all():
        return near
    return np.where(e <= 1.0, near, 1.0 - (1.0 - e) ** n)


def _far_order(act, q: np.ndarray, rho: np.ndarray) -> int:
    """The order of a call: :func:`~depthdyn.meanfield.hermite_rule.order_of` of its largest variance
    and correlation (more than the default only for an activation of one parity)."""
    return rule.order_of(float(q.max(initial=0.0)), float(np.abs(rho).max(initial=0.0)),
                         more=layer_series.parity_of(act) is not None)


def difference_moment(act, q, eps):
    """``(value, bound, ok)`` of ``E[phi^2] - E[phi(u1) phi(u2)]`` at equal variances ``q``.

    Two sums of the same series, the better bound taken per point: near ``rho = 1`` the
    positive terms ``b_n^2 (1 - rho^n)`` with the tail ``min(2 T0, eps T1)``; where ``|rho|^N``
    is negligible (a large ``q`` with ``c`` away from 1) ``E[phi^2] - sum b_n^2 rho^n``, whose
    tail is ``|rho|^(N+1) T0``.
    """
    ok = _usable(q, q)
    value, bound = np.zeros(q.shape), np.full(q.shape, np.inf)
    if not ok.any():
        return value, bound, ok
    e = eps[ok]
    co = coefficients(act, q[ok], _far_order(act, q[ok], 1.0 - e))
    v, err = _difference_sums(co, e)
    value[ok], bound[ok] = v, err
    # relative to the value, or (for eps so small that it underflows) to eps times its slope
    ok[ok] = err <= RTOL * np.maximum(v, 1e-300)
    return value, bound, ok


@cache
def _degrees(order: int) -> np.ndarray:
    return np.arange(1.0, order + 1)


def _difference_sums(co: Coefficients, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The value and bound of :func:`difference_moment` from the coefficients, the better sum per point."""
    n = _degrees(co.order)
    weight = _one_minus_power(e, n)
    square, spread = co.b2[:, 0, 1:], co.b2[:, 1, 1:]
    near = (square * weight).sum(-1)
    near_err = (spread * weight).sum(-1) + np.minimum(2 * co.t0, e * co.t1) + 64 * _ULP * near
    if (near_err <= RTOL * np.maximum(near, 1e-300)).all():
        return near, near_err
    rho = 1.0 - e
    power = np.abs(rho)[:, None] ** n
    far = co.m0 - co.b[:, 0] ** 2 - (square * (1 - weight)).sum(-1)
    far_err = (co.m0_err + (2 * np.abs(co.b[:, 0]) * co.b_err[:, 0] + co.b_err[:, 0] ** 2)
               + (spread * power).sum(-1) + np.abs(rho) ** (co.order + 1) * co.t0 + 64 * _ULP * co.m0)
    use_far = far_err < near_err
    return np.where(use_far, far, near), np.where(use_far, far_err, near_err)


def diagonal_moments(act, q: np.ndarray, eps: np.ndarray):
    """:func:`second_moment` and :func:`difference_moment` of the same variances from one record.

    ``(second, second_ok, difference, difference_ok)``: the values of the two functions (to be
    replaced where not ``ok``) with one look-up of the coefficients, for a kernel layer's
    same-lag pairs.
    """
    if not _usable(q, q).all():
        s, _, s_ok = second_moment(act, q)
        d, _, d_ok = difference_moment(act, q, eps)
        return s, s_ok, d, d_ok
    order = _far_order(act, q, 1.0 - eps)
    if q.size == 1:
        co = coefficients(act, q, order)
    else:  # several lags: the record of the sorted variances, which their pairs' moments used
        co, i, _ = _pair(act, q, q[:0], order)
        co = Coefficients(*(getattr(co, name)[i] for name in _FIELDS))
    s_ok = co.m0_err <= RTOL * np.maximum(co.m0, 1e-300)
    difference, err = _difference_sums(co, eps)
    return co.m0.copy(), s_ok, difference, err <= RTOL * np.maximum(difference, 1e-300)


def diagonal_moments_scalar(act, q: float, eps: float) -> tuple[float, bool, float, bool]:
    """:func:`diagonal_moments` of one variance ``q`` and ``eps = 1 - rho``, Python floats in and out
    (what a kernel layer with one branch input asks for)."""
    if not 0.0 < q <= Q_MAX:
        s, s_ok, d, d_ok = diagonal_moments(act, np.array([q]), np.array([eps]))
        return float(s[0]), bool(s_ok[0]), float(d[0]), bool(d_ok[0])
    # the record of the parity's degrees (of every degree for neither parity), in fewer NumPy calls
    odd = layer_series.parity_of(act)
    return layer_series.diagonal(act, q, eps, layer_series.BOTH if odd is None else odd)


def _power_difference(x: np.ndarray, delta: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``x^n - (x - delta)^n`` for ``n >= 1``, without cancellation where both have one sign."""
    y = (x - delta)[:, None]
    x, d = x[:, None], delta[:, None]
    same = x * y > 0
    ay = np.abs(np.where(same, y, 1.0))
    sign = np.where(x < 0, (-1.0) ** n, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        near = sign * ay**n * np.expm1(n * np.log1p(np.sign(x) * d / ay))
    return np.where(same, near, x**n - y**n)


def cross_difference(act, q1, q2, rho, delta):
    """``(value, bound, ok)`` of ``E[phi phi](rho) - E[phi phi](rho - delta)`` for a small ``delta``.

    Summed as ``sum b_n(q1) b_n(q2) (rho^n - (rho - delta)^n)`` with each power difference formed
    without cancellation; the tail is at most ``|delta| sqrt(T1(q1) T1(q2))`` (mean value theorem:
    ``|x^n - y^n| <= n |x - y|`` on ``[-1, 1]``).
    """
    ok = _usable(q1, q2) & (np.abs(rho) <= 1) & (np.abs(rho - delta) <= 1)
    value, bound = np.zeros(q1.shape), np.full(q1.shape, np.inf)
    if not ok.any():
        return value, bound, ok
    co, i1, i2 = _pair(act, q1[ok], q2[ok])
    n = np.arange(1, co.order + 1)
    weight = _power_difference(rho[ok], delta[ok], n)
    b1, b2, e1, e2 = co.b[i1, 1:], co.b[i2, 1:], co.b_err[i1, 1:], co.b_err[i2, 1:]
    terms = b1 * b2 * weight
    v = terms.sum(-1)
    err = ((np.abs(b1) * e2 + np.abs(b2) * e1 + e1 * e2) * np.abs(weight)).sum(-1)
    err += np.abs(delta[ok]) * np.sqrt(co.t1[i1] * co.t1[i2]) + 64 * _ULP * np.abs(terms).sum(-1)
    value[ok], bound[ok] = v, err
    ok[ok] = err <= RTOL * np.maximum(np.abs(v), 1e-300)
    return value, bound, ok


def derivative_cross_moment(act, q1, q2, rho):
    """``(value, bound, ok)`` of ``E[phi'(u1) phi'(u2)]`` from the coefficients ``sqrt(n) b_n / sqrt(q)``."""
    ok = _usable(q1, q2)
    value, bound = np.zeros(q1.shape), np.full(q1.shape, np.inf)
    if not ok.any():
        return value, bound, ok
    co, i1, i2 = _pair(act, q1[ok], q2[ok])
    r = rho[ok][:, None]
    n = np.arange(1, co.order + 1)
    power = r ** (n - 1)
    root = np.sqrt(q1[ok] * q2[ok])
    b1, b2, e1, e2 = co.b[i1, 1:], co.b[i2, 1:], co.b_err[i1, 1:], co.b_err[i2, 1:]
    terms = n * b1 * b2 * power
    v = terms.sum(-1) / root
    err = (n * (np.abs(b1) * e2 + np.abs(b2) * e1 + e1 * e2) * np.abs(power)).sum(-1)
    err += np.abs(r[:, 0]) ** co.order * np.sqrt(co.t1[i1] * co.t1[i2]) + 64 * _ULP * np.abs(terms).sum(-1)
    err /= root
    scale = np.sqrt((n * b1 * b1).sum(-1) * (n * b2 * b2).sum(-1)) / root
    value[ok], bound[ok] = v, err
    ok[ok] = err <= RTOL * np.maximum(scale, 1e-300)
    return value, bound, ok
