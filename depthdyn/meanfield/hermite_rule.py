"""The quadrature rules and truncation orders of the Hermite series (:mod:`depthdyn.meanfield.mehler`).

Composite Gauss-Legendre rules (:data:`HI` and :data:`LO` nodes on panels of width
:data:`PANEL`, or :data:`COARSE` for the parity records of degree up to :data:`COARSE_DEGREE`,
the two next to the origin graded dyadically for ``q > Q_GRADED``) on
``[-Z, Z]``, their weights times the normal density, and the tables
``A[k, m] = h_k(z_m) w_m`` of the orthonormal Hermite polynomials ``h_k = He_k / sqrt(k!)``
up to degree :data:`TOP_DEGREE`. The difference of the two rules' results is their error
estimate.

:func:`parity_rule` lays out the nodes ``z > 0`` of both rules for an odd or even ``phi``
so that the nodes where ``phi(sqrt(q) z)`` is not yet at its asymptote (``sqrt(q) z`` below
the activation's point ``U``) form one contiguous slice: the 14-node rule's nodes in
descending order, the origin, the 20-node rule's in ascending order. Beyond, the asymptote
``limit + slope u`` stands for ``phi``; its coefficients are exact
(:func:`asymptote_coefficients`).

A series is truncated at one of :data:`TIERS` (:func:`order_of`), and a point is accepted when
its error bound is below :data:`RTOL` times the moment's scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
from scipy.special import erfc

__all__ = ["Q_MAX", "RTOL", "TIERS", "Q_GRADED", "Z", "PANEL", "HI", "LO", "COARSE", "COARSE_DEGREE",
           "WIDE_DEGREE", "WIDE_Q", "TOP_DEGREE", "ParityRule", "BothRule", "levels", "tables", "nodes",
           "parity_rule", "both_rule", "asymptote_coefficients", "tail_share", "share", "tier", "order_of"]

#: Largest variance the series is tried at.
Q_MAX = 1e8
#: A point is accepted when its error bound is below ``RTOL`` times the moment's scale.
RTOL = 1e-12

#: Beyond this variance the panels next to the origin are graded dyadically down to a fraction
#: of ``phi(sqrt(q) z)``'s width ``1/sqrt(q)``.
Q_GRADED = 8.0
#: The window ``[-Z, Z]``, the panel width and the two rules' node counts per panel.
Z = 12.0
PANEL = 0.5
HI, LO = 20, 14
#: Panels twice as wide for the parity records of degree up to ``COARSE_DEGREE`` (half the nodes: the
#: records of a kernel layer far from ``c = 1``): a Hermite function of degree 48 turns about three
#: times a unit, and the two rules' difference, the coefficients' bound, stays small (tanh, GELU,
#: SiLU, softplus, SELU at ``q`` from 1e-4 to 1e4: at most 1.1 times the usual panels', except tanh
#: near ``q = 8``, whose poles come closer: 1.6e-13 against 5e-15). Up to ``WIDE_DEGREE`` too where
#: the variance is at most ``WIDE_Q`` (:func:`parity_rule`'s ``wide``): tanh's bound at degree 96 is
#: then at most 1.3 times the usual panels' (2.5 times at ``q = 4``, 6 at 4.5).
COARSE, COARSE_DEGREE, WIDE_DEGREE, WIDE_Q = 1.0, 48, 96, 3.5
#: Truncation orders: by default the one for the largest variance of a call (about ``96 q + 48``
#: terms: tanh's difference moment at ``c -> 1`` then reaches ``RTOL`` up to ``q = 2.5``), at most
#: 384; 768 and 1536 where a large variance's slowly decaying coefficients need them for
#: ``E[phi^2] - sum b_n^2 rho^n`` at a correlation ``rho`` near 1 (:func:`order_of`).
TIERS = (48, 96, 192, 384, 768, 1536)
#: The highest degree of the tables (the largest truncation order of the series): a property of
#: the method, not a size limit a user meets (those are in :mod:`depthdyn.limits`).
TOP_DEGREE = TIERS[-1]
_DEFAULT_TIERS = TIERS[:4]  # up to 384: the orders a call gets without asking for more

_OUTSIDE = float(erfc(Z / math.sqrt(2.0)))  # P(|z| > Z)
_Z2_OUTSIDE = 2.0 * Z * math.exp(-0.5 * Z * Z) / math.sqrt(2.0 * math.pi) + _OUTSIDE  # E[z^2; |z| > Z]


def levels(q_max: float) -> int:
    """Dyadic levels below the panel width next to the origin (0 up to ``Q_GRADED``)."""
    if q_max <= Q_GRADED:
        return 0
    return 3 + int(math.ceil(math.log2(PANEL * math.sqrt(q_max))))


def _rule(n: int, level: int, panel: float = PANEL) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes on ``[-Z, Z]`` (panels of width ``panel``) and weights times the
    normal density."""
    t, w = np.polynomial.legendre.leggauss(n)
    graded = PANEL * np.exp2(-np.arange(1, level + 1, dtype=float))
    breaks = np.unique(np.concatenate([np.arange(-Z, Z + panel / 2, panel), graded, -graded]))
    left, width = breaks[:-1], np.diff(breaks)
    z = (left[:, None] + 0.5 * width[:, None] * (t + 1.0)).ravel()
    weight = (0.5 * width[:, None] * w).ravel()
    return z, weight * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def tables(n: int, level: int, degree: int = TOP_DEGREE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(z, w, A)`` of the ``n``-node rule with ``A[k, m] = h_k(z_m) w_m`` for ``k <= degree``: the
    table of the lowest of :data:`TIERS` that covers ``degree`` (a cheap look-up at the orders
    that a call needs, instead of all 384 rows at every graded level)."""
    return _tables(n, level, next((t for t in TIERS if t >= degree), TOP_DEGREE))


@cache
def _tables(n: int, level: int, degree: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tables` to exactly ``degree``. The recurrence runs on the Hermite functions
    ``h_k sqrt(density)`` (bounded by 1), so nothing overflows at ``|z| = 12``."""
    z, w = _rule(n, level)
    return z, w, np.ascontiguousarray(_table(z, w, degree))


def _table(z: np.ndarray, w: np.ndarray, degree: int) -> np.ndarray:
    """``A[k, m] = h_k(z_m) w_m`` for ``k <= degree``, by the recurrence of ``h_k sqrt(w)`` (bounded by 1)."""
    root = np.sqrt(w)
    rows = np.empty((degree + 1, z.size))
    rows[0] = root
    if degree >= 1:
        rows[1] = z * root
    for k in range(1, degree):
        rows[k + 1] = (z * rows[k] - math.sqrt(k) * rows[k - 1]) / math.sqrt(k + 1)
    rows *= root
    return rows


@cache
def nodes(level: int) -> tuple[np.ndarray, int, np.ndarray]:
    """Both rules' nodes and a trailing 0 (one call of ``phi`` gives ``phi(0)`` too), how many are the
    20-node rule's, and the degrees ``0..TOP_DEGREE``."""
    z = np.concatenate([tables(HI, level, 0)[0], tables(LO, level, 0)[0], [0.0]])
    return z, tables(HI, level, 0)[0].size, np.arange(TOP_DEGREE + 1)


@dataclass(frozen=True, eq=False)
class ParityRule:
    """Both rules' nodes ``z > 0`` for a ``phi`` of one parity, laid out for a cut at an asymptote.

    ``z`` is ``[z_lo descending, 0, z_hi ascending]``; ``middle`` the index of the origin.
    ``z_hi`` and ``z_lo`` list each rule's nodes ascending (Python floats, for a cut by bisection),
    ``sizes`` their lengths.
    Each rule's table rows of the parity's degrees ``parity + 2 i`` (``i < rows``), doubled (the
    sums over ``z > 0`` are half of the whole), in the layout's order: ``t_hi`` (the 20-node
    rule's nodes ``middle + 1 ..``) and ``t_lo`` (the 14-node rule's, ``.. middle - 1``).
    ``weights`` is ``(len(z), 2)``, each rule's doubled weights in its column, ``totals`` their sums.
    """

    z: np.ndarray
    middle: int
    z_hi: list
    z_lo: list
    sizes: tuple[int, int]
    rows: int
    t_hi: np.ndarray
    t_lo: np.ndarray
    weights: np.ndarray
    totals: tuple[float, float]


def _half(n: int, level: int, parity: int, degree: int, panel: float
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(z, 2 w, 2 A^T)``: the nodes ``z > 0`` of a rule and its table's rows of degrees ``parity + 2 i``.

    The panels, their nodes and weights are symmetric about 0 and ``h_k(-z) = (-1)^k h_k(z)``: for
    ``phi`` of parity ``(-1)^parity`` the coefficients of the other parity vanish and the rest are
    twice the sums over ``z > 0`` (the doubling is exact).
    """
    z, w = _rule(n, level, panel)
    right = z > 0
    z, w = z[right], w[right]  # the table on these nodes alone (degrees past 384 are asked for this way only)
    return z, 2.0 * w, np.ascontiguousarray(2.0 * _table(z, w, degree)[parity::2].T)


@cache
def parity_rule(level: int, parity: int, rows: int, wide: bool = False) -> ParityRule:
    """The :class:`ParityRule` of ``rows`` degrees of parity ``parity`` (1: odd ``phi``, 0: even), on panels
    of width :data:`COARSE` up to degree :data:`COARSE_DEGREE` (with ``wide``, a variance at most
    :data:`WIDE_Q`: up to :data:`WIDE_DEGREE`), else :data:`PANEL`."""
    degree = parity + 2 * (rows - 1)
    coarse = degree <= COARSE_DEGREE or (wide and degree <= WIDE_DEGREE)
    (z_hi, w_hi, t_hi), (z_lo, w_lo, t_lo) = (_half(n, level, parity, degree, COARSE if coarse else PANEL)
                                              for n in (HI, LO))
    t_hi, t_lo = np.ascontiguousarray(t_hi[:, :rows]), np.ascontiguousarray(t_lo[::-1, :rows])
    n_lo = z_lo.size
    z = np.concatenate([z_lo[::-1], [0.0], z_hi])
    weights = np.zeros((z.size, 2))
    weights[n_lo + 1:, 0], weights[:n_lo, 1] = w_hi, w_lo[::-1]
    return ParityRule(z, n_lo, z_hi.tolist(), z_lo.tolist(), (z_hi.size, n_lo), rows, t_hi, t_lo, weights,
                      tuple(weights.sum(axis=0).tolist()))


@dataclass(frozen=True, eq=False)
class BothRule:
    """:func:`parity_rule`'s of both parities for a ``phi`` of neither, every degree up to an order.

    ``z`` is the 20-node rule's nodes ``z > 0`` (its first ``split``) then the 14-node rule's, in the
    order of the rows of ``even``'s and ``odd``'s tables (:class:`ParityRule`, the same nodes). A
    caller evaluates ``phi`` at ``u = sqrt(x) z`` and at ``-u`` as the rows of a ``(2, len(z))`` array;
    ``weights`` ``(2 len(z), 2)`` gives each rule's ``E[phi^2]`` from its squares read flat.
    """

    z: np.ndarray
    split: int
    weights: np.ndarray
    even: ParityRule
    odd: ParityRule


@cache
def both_rule(level: int, order: int, wide: bool = False) -> BothRule:
    """The :class:`BothRule` of the degrees ``0..order`` (the panels of :func:`parity_rule`'s, the same for
    both parities: their highest degrees differ by one)."""
    even, odd = (parity_rule(level, parity, (order + 2 - parity) // 2, wide) for parity in (0, 1))
    mid, split = even.middle, even.sizes[0]
    weights = np.zeros((even.z.size - 1, 2))  # each node's doubled weight, shared by u and -u
    weights[:split, 0], weights[split:, 1] = 0.5 * even.weights[mid + 1:, 0], 0.5 * even.weights[:mid, 1]
    weights = np.concatenate([weights, weights])
    return BothRule(np.concatenate([even.z[mid + 1:], even.z[:mid]]), split, weights, even, odd)


@cache
def asymptote_coefficients(parity: int, rows: int) -> np.ndarray:
    """The Hermite coefficients ``E[f(z) h_k(z)]`` of ``f = |z|`` (``parity`` 0) or ``sign(z)`` (1) at the
    degrees ``parity + 2 i`` (``i < rows``), each within 2 ulp.

    ``|z|``: ``(-1)^(k/2 + 1) sqrt(2/pi) (k - 3)!! / sqrt(k!)`` (``k`` even; ``(-3)!! = -1``);
    ``sign(z)``: ``(-1)^((k - 1)/2) sqrt(2/pi) (k - 2)!! / sqrt(k!)`` (``k`` odd). Their squares over
    ``2/pi`` are exact rationals ``F_k``, rounded once to a float
    (``F_{k+2} / F_k = (k - 1)^2 / ((k + 1)(k + 2))`` for ``|z|``, ``k^2 / ((k + 1)(k + 2))`` for ``sign``).
    """
    out = np.empty(rows)
    square = Fraction(1)  # (k - 3)!!^2 / k! at k = 0, or (k - 2)!!^2 / k! at k = 1
    k = parity
    for i in range(rows):
        sign = (-1) ** ((k - 1) // 2) if parity else (1 if k == 0 else (-1) ** (k // 2 + 1))
        out[i] = sign * math.sqrt(_TWO_OVER_PI * float(square))
        shift = k - 1 if parity == 0 else k  # (k - 1)!!/(k - 3)!! or k!!/(k - 2)!!
        square *= Fraction(shift * shift, (k + 1) * (k + 2))
        k += 2
    return out


_TWO_OVER_PI = 2.0 / math.pi


def tail_share(q: np.ndarray, growth: tuple[float, float]) -> np.ndarray:
    """``sqrt(E[f(sqrt(q) z)^2; |z| > Z])`` for ``|f(u)| <= a + b |u|`` (the window's share)."""
    a, b = growth
    return np.sqrt(2.0 * a * a * _OUTSIDE + 2.0 * b * b * q * _Z2_OUTSIDE)


def share(x: float, a: float, b: float) -> float:
    """:func:`tail_share` of one variance, in Python floats."""
    return math.sqrt(2.0 * a * a * _OUTSIDE + 2.0 * b * b * x * _Z2_OUTSIDE)


def tier(q_max: float) -> int:
    """The default truncation order for variances up to ``q_max`` (what ``c -> 1`` needs there)."""
    want = 96.0 * q_max + 48.0
    for t in _DEFAULT_TIERS:
        if t >= want:
            return t
    return _DEFAULT_TIERS[-1]


_LOG_TOLERANCE = math.log(RTOL / 100)


def order_of(q_max: float, top: float, more: bool = False) -> int:
    """The order of a call from its largest variance and largest ``|rho|``: the default, or fewer terms
    where ``|rho|^N`` is below ``RTOL / 100`` (the tail ``|rho|^(N+1) T0`` of
    ``E[phi^2] - sum b_n^2 rho^n``); with ``more`` (an activation of one parity, whose tables are half
    as large) and where the default is the largest (``q > 3.5``) also more, up to ``TOP_DEGREE``, if that
    many make ``|rho|^N`` small enough (a small variance's coefficients decay fast: its default is enough)."""
    default = tier(q_max)
    if top >= 1.0:
        return default
    need = _LOG_TOLERANCE / math.log(max(top, 1e-300))
    for t in TIERS:
        if t >= need:
            return t if more and default == _DEFAULT_TIERS[-1] else min(default, t)
    return default
