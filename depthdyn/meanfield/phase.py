"""The order-to-chaos phase diagram in ``(sw2, sb2)``: the critical line and the depth scale ``xi_c``.

The critical line is parametric in the fixed-point variance ``q``: on it ``chi_1 = 1`` and
``q`` is fixed, so

.. math::

    \\sigma_w^2(q) = \\frac{1}{E[\\phi'(\\sqrt q z)^2]}, \\qquad
    \\sigma_b^2(q) = q - \\frac{E[\\phi(\\sqrt q z)^2]}{E[\\phi'(\\sqrt q z)^2]} .

This is exact where the moments are (erf: a closed-form curve), certified elsewhere (the
quadrature's error bounds are carried to ``sw2`` and ``sb2``), and it follows non-monotone
branches (GELU's ``sw2(q)`` turns back) without any root finding. Where the q-map's slope
``chi_q`` exceeds 1 the variance fixed point repels: that part of the line is not reached
from generic inputs and is flagged.

The heat map of ``xi_c`` solves for ``q*`` and ``c*`` at every grid point at once
(vectorised bisection in ``log q`` and ``log(1 - c)``); the correlation moments of
quadrature activations use a 96 x 96 Gauss-Hermite product rule there (a figure's accuracy,
about 1e-5 in ``c*`` for ``q* <~ 3``; its estimate is kept in the record). Single points get
the certified values from :func:`depthdyn.meanfield.fixed_point`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DomainError, ParameterError
from ..records import Record
from .activation import Activation
from .activations import get_activation
from .gaussian import expect2_hermite

__all__ = ["CriticalLine", "critical_line", "PhaseDiagram", "phase_diagram", "TRAINABLE_FACTOR"]

#: Networks train up to a depth of about this many correlation depth scales (Schoenholz et al. 2017).
TRAINABLE_FACTOR = 6.0


@dataclass(frozen=True, eq=False)
class CriticalLine(Record):
    """The order-to-chaos boundary as arrays over the fixed-point variance ``q``.

    ``sw2_error``, ``sb2_error`` bound the numerical error of each point (rounding for the
    closed forms); ``attracting`` is ``chi_q <= 1`` (the variance fixed point attracts).
    For a homogeneous activation (ReLU, ...) the line is ``sw2 = const`` for every ``sb2``
    and ``q`` is infinite except at ``sb2 = 0``.
    """

    activation: str
    q: np.ndarray
    sw2: np.ndarray
    sb2: np.ndarray
    chi_q: np.ndarray
    sw2_error: np.ndarray
    sb2_error: np.ndarray
    exact: bool

    @property
    def attracting(self) -> np.ndarray:
        return self.chi_q <= 1 + 1e-12

    def _text(self) -> str:
        kind = "closed form" if self.exact else "certified quadrature"
        lines = [f"order-to-chaos line of {self.activation} ({kind}), {len(self.q)} points"]
        for k in np.unique(np.linspace(0, len(self.q) - 1, min(len(self.q), 6)).astype(int)):
            lines.append(f"  q*={self.q[k]:<12.6g} sw2={self.sw2[k]:<14.10g} sb2={self.sb2[k]:<14.10g} "
                         f"(+- {max(self.sw2_error[k], self.sb2_error[k]):.1e})")
        return "\n".join(lines)

    def _latex(self) -> str:
        return (r"\sigma_w^2 = 1/E[\phi'(\sqrt{q}z)^2],\ \sigma_b^2 = q - \sigma_w^2 E[\phi(\sqrt{q}z)^2]"
                rf"\ \text{{({self.activation})}}")


def critical_line(act, *, q=None, points: int = 200, sb2_max: float = 4.0) -> CriticalLine:
    """The order-to-chaos line of ``act`` in ``(sw2, sb2)``, parametric in ``q*``.

    Parameters
    ----------
    act : str, sympy.Expr, callable or Activation
        The activation.
    q : array_like, optional
        The fixed-point variances to trace (default: 0 and ``points - 1`` values from 1e-4
        to 1e3, logarithmically).
    points : int
        Number of points of the default ``q`` grid.
    sb2_max : float
        Upper end of ``sb2`` for a homogeneous activation's vertical line.

    Examples
    --------
    >>> line = critical_line("erf", q=[0.0, 1.0])  # sw2 = pi sqrt(1 + 4q) / 4
    >>> [round(float(v), 12) for v in line.sw2]
    [0.785398163397, 1.75620368276]
    """
    act = get_activation(act)
    if act.homogeneous:
        sw2 = 1.0 / float(act.derivative_second_moment(1.0))
        sb2 = np.linspace(0.0, float(sb2_max), int(points))
        qs = np.where(sb2 > 0, math.inf, 1.0)
        zero = np.zeros_like(sb2)
        return CriticalLine(str(act), qs, np.full_like(sb2, sw2), sb2, np.ones_like(sb2), zero, zero, True)
    if q is None:
        if not (isinstance(points, (int, np.integer)) and 2 <= points <= 1_000_000):
            raise ParameterError(f"points must be an integer in [2, 1e6], got {points!r}")
        q = np.concatenate([[0.0], np.geomspace(1e-4, 1e3, int(points) - 1)])
    q = np.asarray(q, dtype=float)
    m2, m2_err = act.second_moment(q, return_error=True)
    d2, d2_err = act.derivative_second_moment(q, return_error=True)
    if np.any(d2 <= 0):
        raise DomainError(f"E[phi'^2] vanishes for {act} at some q: no critical point there")
    sw2 = 1.0 / d2
    sb2 = q - m2 * sw2
    chi_q = sw2 * act.second_moment_slope(q)
    sw2_err = d2_err * sw2 ** 2
    sb2_err = m2_err * sw2 + m2 * d2_err * sw2 ** 2 + 4 * np.finfo(float).eps * np.abs(q)
    return CriticalLine(str(act), q, sw2, sb2, chi_q, sw2_err, sb2_err, act.closed_form)


# ------------------------------------------------------------------ the heat map
@dataclass(frozen=True, eq=False)
class PhaseDiagram(Record):
    """``q*``, ``chi_1``, ``c*``, ``xi_c`` and the phase on a ``(sw2, sb2)`` grid (arrays ``(n_sb2, n_sw2)``).

    ``phase`` holds 0 ordered, 1 chaotic, 2 exploding (critical points are the line, not
    grid points); ``xi_c`` is ``inf`` where ``q`` explodes. ``estimate`` is the largest
    Gauss-Hermite estimate met in the chaotic part (0 for closed forms).
    """

    activation: str
    sw2: np.ndarray
    sb2: np.ndarray
    q_star: np.ndarray
    chi1: np.ndarray
    c_star: np.ndarray
    xi_c: np.ndarray
    phase: np.ndarray
    estimate: float

    def trainable_depth(self) -> np.ndarray:
        """``TRAINABLE_FACTOR * xi_c``: the depth up to which signals still carry correlations."""
        return TRAINABLE_FACTOR * self.xi_c

    def _text(self) -> str:
        names = ("ordered", "chaotic", "exploding")
        counts = {name: int(np.sum(self.phase == k)) for k, name in enumerate(names)}
        finite = self.xi_c[np.isfinite(self.xi_c)]
        return (f"phase diagram of {self.activation}: {self.sw2.size} x {self.sb2.size} points "
                f"(sw2 {self.sw2[0]:g}..{self.sw2[-1]:g}, sb2 {self.sb2[0]:g}..{self.sb2[-1]:g}); "
                + ", ".join(f"{v} {k}" for k, v in counts.items())
                + (f"; xi_c from {finite.min():.3g} to {finite.max():.3g}" if finite.size else ""))

    def _latex(self) -> str:
        size = rf"{self.sb2.size}\times{self.sw2.size}"
        return rf"\xi_c\ \text{{on a }}{size}\ \text{{grid ({self.activation})}}"


def _grid(spec, name: str) -> np.ndarray:
    if isinstance(spec, tuple) and len(spec) == 3:
        lo, hi, n = spec
        values = np.linspace(float(lo), float(hi), int(n))
    else:
        values = np.asarray(spec, dtype=float).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)):
        raise DomainError(f"the {name} grid must be finite and non-empty")
    return values


def _variance_fixed_points(act: Activation, sw2: np.ndarray, sb2: np.ndarray):
    """Smallest attracting ``q*`` for every point (inf where ``q`` explodes), by vectorised bisection."""
    grid = np.concatenate([[0.0], np.geomspace(1e-10, 1e10, 161)])
    m2 = act.second_moment(grid)
    gap = sw2[..., None] * m2 + sb2[..., None] - grid  # (P, G)
    # q = 0 is fixed (sb2 = 0, phi(0) = 0) and attracts when the map stays below the diagonal above it
    at_zero = (gap[..., 0] <= 0) & (gap[..., 1] <= 0)
    down = (gap[..., :-1] > 0) & (gap[..., 1:] <= 0)  # the first crossing from above reached from q = 0+
    has = at_zero | down.any(axis=-1)
    k = np.argmax(down, axis=-1)
    lo, hi = grid[k].copy(), grid[k + 1].copy()
    for _ in range(80 if np.any(has) else 0):
        mid = np.where(lo > 0, np.sqrt(lo * hi), 0.5 * hi)
        value = sw2 * act.second_moment(mid) + sb2 - mid
        lo, hi = np.where(value > 0, mid, lo), np.where(value > 0, hi, mid)
    q = np.where(has, 0.5 * (lo + hi), math.inf)
    return np.where(at_zero, 0.0, q), has


def _difference_and_slope(act: Activation, q, eps):
    """``(E[phi^2] - E[phi phi], E[phi' phi'], estimate)`` at equal variances ``q``, ``c = 1 - eps``."""
    if act.closed_form:
        return act.difference_moment(q, eps=eps), act.derivative_cross_moment(q, q, eps=eps), 0.0
    d, de = expect2_hermite(lambda u, h: 0.5 * act.diff(u, h) ** 2, q, eps)
    k, ke = expect2_hermite(lambda u, h: act.dphi(u) * act.dphi(u + h), q, eps)
    return d, k, float(max(np.max(de, initial=0.0), np.max(ke, initial=0.0)))


def phase_diagram(act, *, sw2=(0.5, 4.0, 36), sb2=(0.0, 1.0, 21)) -> PhaseDiagram:
    """``xi_c`` and the phase over a grid of ``(sw2, sb2)``.

    Parameters
    ----------
    act : str, sympy.Expr, callable or Activation
        The activation.
    sw2, sb2 : tuple (lo, hi, n) or array_like
        The grid's axes (``sw2 > 0``, ``sb2 >= 0``).
    """
    act = get_activation(act)
    w, b = _grid(sw2, "sw2"), _grid(sb2, "sb2")
    if np.any(w <= 0) or np.any(b < 0):
        raise DomainError("the grid needs sw2 > 0 and sb2 >= 0")
    W, B = np.meshgrid(w, b)
    q, finite = _variance_fixed_points(act, W.ravel(), B.ravel())
    qf = np.where(finite, q, 1.0)
    chi1 = np.where(finite, W.ravel() * act.derivative_second_moment(qf), np.nan)
    eps = np.zeros_like(qf)
    chi_c = np.where(finite, chi1, 1.0)
    estimate = 0.0
    q_next_all = W.ravel() * act.second_moment(qf) + B.ravel()
    chaotic = finite & (chi1 > 1) & (q_next_all > 0)
    if np.any(chaotic):
        wc, bc, qc = W.ravel()[chaotic], B.ravel()[chaotic], qf[chaotic]
        q_next = wc * act.second_moment(qc) + bc
        lo, hi = np.full(qc.shape, math.log(1e-15)), np.full(qc.shape, math.log(2.0))
        for _ in range(32):  # bisection in log(1 - c): the map is above the diagonal below c*
            mid = 0.5 * (lo + hi)
            d, _, est = _difference_and_slope(act, qc, np.exp(mid))
            estimate = max(estimate, est)
            above = wc * d / q_next > np.exp(mid)
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        eps_c = np.exp(0.5 * (lo + hi))
        _, slope, est = _difference_and_slope(act, qc, eps_c)
        eps[chaotic] = eps_c
        chi_c[chaotic] = wc * qc * slope / q_next
        estimate = max(estimate, est)
    with np.errstate(divide="ignore"):
        xi = np.where(np.abs(chi_c) < 1, -1.0 / np.log(np.abs(np.where(chi_c == 0, 1e-300, chi_c))), math.inf)
    phase = np.where(~finite, 2, np.where(chi1 > 1, 1, 0))
    shape = W.shape
    return PhaseDiagram(str(act), w, b, q.reshape(shape), np.nan_to_num(chi1, nan=math.inf).reshape(shape),
                        (1.0 - eps).reshape(shape), xi.reshape(shape), phase.reshape(shape), estimate)
