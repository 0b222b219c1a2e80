"""Fixed points of the mean-field maps, their slopes and depth scales, and the critical point.

The fixed point ``q*`` of the q-map and ``c*`` of the c-map are found by bracketing a sign
change on a grid and refining it with Brent's method, never by iterating the maps: at the
edge of chaos the iteration converges only like ``1/l`` and stalls. The phase is decided by
``chi_1 = sw2 E[phi'(sqrt(q*) z)^2]``: ordered (``chi_1 < 1``, ``c* = 1`` attracts),
critical (``chi_1 = 1`` within ``tol``; depth scales infinite) or chaotic (``chi_1 > 1``,
``c* < 1``). An unbounded activation whose variance grows without bound is reported as
exploding, with the growth factor of ``q`` per layer.

The critical point is solved on the smooth equations themselves: with ``sw2 = 1 / E[phi'^2](q)``
the fixed-point equation ``q = sw2 E[phi^2](q) + sb2`` becomes
``sb2 = q - E[phi^2](q) / E[phi'^2](q)``, one equation in ``q``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..errors import DomainError, ParameterError
from ..records import Record
from .activation import Activation
from .activations import get_activation
from .checks import as_variance, check_weights

__all__ = ["FixedPoint", "CriticalPoint", "fixed_point", "critical_point", "critical_points", "depth_scale"]

#: Variances scanned for sign changes (8 points per decade) and the stand-in for ``q -> inf``.
_Q_GRID = np.geomspace(1e-10, 1e10, 161)
_Q_BIG = 1e10
#: ``eps = 1 - c`` scanned for the chaotic fixed point ``c* < 1``.
_EPS_GRID = np.concatenate([np.geomspace(1e-15, 1.0, 31), [1.5, 2.0]])
PHASES = ("ordered", "critical", "chaotic", "exploding")
_ULP = float(np.finfo(float).eps)


def depth_scale(chi: float) -> float:
    """``-1 / log|chi|``: layers over which a perturbation decays by ``e`` (``inf`` at ``|chi| >= 1``)."""
    chi = abs(float(chi))
    if chi >= 1.0:
        return math.inf
    if chi == 0.0:
        return 0.0
    return -1.0 / math.log(chi)


@dataclass(frozen=True)
class FixedPoint(Record):
    """The mean-field fixed point of ``(act, sw2, sb2)`` with its slopes, depth scales and phase.

    Attributes
    ----------
    q_star : float
        The variance fixed point reached from ``q0`` (``inf`` when ``q`` grows without bound).
    c_star : float
        The correlation fixed point (1 in the ordered and critical phases).
    eps_star : float
        ``1 - c_star``, with all its digits.
    chi1, chi_c, chi_q : float
        ``sw2 E[phi'^2](q*)``; the c-map's slope at ``c*``; the q-map's slope at ``q*``.
    xi_q, xi_c : float
        Depth scales ``-1 / log|chi|`` (``inf`` at criticality).
    xi_grad : float
        Depth scale of the gradients' growth or decay, ``1 / |log chi1|``.
    phase : str
        ``"ordered"``, ``"critical"``, ``"chaotic"`` or ``"exploding"``.
    growth : float
        Growth factor of ``q`` per layer in the exploding phase (1 where ``q*`` is finite).
    """

    activation: str
    sw2: float
    sb2: float
    q_star: float
    c_star: float
    eps_star: float
    chi1: float
    chi_c: float
    chi_q: float
    xi_q: float
    xi_c: float
    xi_grad: float
    phase: str
    growth: float = 1.0
    note: str = ""

    def _text(self) -> str:
        def scale(x):
            return "inf (critical)" if math.isinf(x) and self.phase == "critical" else f"{x:.6g}"

        # no fixed point on the critical line (homogeneous activations, sb2 > 0): q grows by sb2 a layer
        growth = (f"  (q grows by sb2 = {self.sb2:.6g} per layer)" if self.phase == "critical" else
                  f"  (q grows by {self.growth:.6g} per layer)")
        lines = [f"mean-field fixed point of {self.activation} at sw2={self.sw2:.12g}, sb2={self.sb2:.12g}: "
                 f"{self.phase}",
                 f"  q*    = {self.q_star:.12g}" + (growth if math.isinf(self.q_star) else ""),
                 f"  c*    = {self.c_star:.15g}  (1 - c* = {self.eps_star:.6g})",
                 f"  chi_1 = {self.chi1:.12g}   chi_c = {self.chi_c:.12g}   chi_q = {self.chi_q:.12g}",
                 f"  xi_c  = {scale(self.xi_c)}   xi_q = {scale(self.xi_q)}   "
                 f"xi_grad = {scale(self.xi_grad)}"]
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)

    def _latex(self) -> str:
        def tex(x):
            return r"\infty" if math.isinf(x) else f"{x:.6g}"

        return (rf"q^* = {tex(self.q_star)},\ c^* = {self.c_star:.12g},\ \chi_1 = {self.chi1:.12g},\ "
                rf"\xi_c = {tex(self.xi_c)}\ \text{{({self.phase})}}")


@dataclass(frozen=True)
class CriticalPoint(Record):
    """A point ``(sw2, sb2)`` on the order-to-chaos boundary (``chi_1 = 1`` at ``q*``).

    ``chi_q`` is the q-map's slope there: above 1 the variance fixed point repels (GELU and
    SiLU at small ``sb2``), and the point is not reached from generic inputs. ``branches``
    lists every solution ``(sw2, sb2, q_star, chi_q)`` found for the given coordinate (a
    non-monotone activation may have several).
    """

    activation: str
    sw2: float
    sb2: float
    q_star: float
    chi_q: float = 1.0
    branches: tuple = ()
    note: str = ""

    def _text(self) -> str:
        text = (f"order-to-chaos boundary of {self.activation}: sw2 = {self.sw2:.15g}, "
                f"sb2 = {self.sb2:.15g}, q* = {self.q_star:.15g}")
        if len(self.branches) > 1:
            text += f"\n  {len(self.branches)} branches: " + "; ".join(
                f"(sw2={a:.10g}, sb2={b:.10g}, q*={q:.10g}, chi_q={x:.6g})" for a, b, q, x in self.branches)
        return text + (f"\n  {self.note}" if self.note else "")

    def _latex(self) -> str:
        return rf"\sigma_w^2 = {self.sw2:.12g},\ \sigma_b^2 = {self.sb2:.12g},\ q^* = {self.q_star:.12g}"


# ------------------------------------------------------------------ roots by bracketing
def _roots(func, grid: np.ndarray, values: np.ndarray, *, log: bool = True, bound=None) -> list[float]:
    """Every root of ``func`` bracketed by a sign change of ``values`` on ``grid`` (Brent's method).

    With ``bound`` (the error bound of each value), sign changes inside a run of grid points whose
    values are zero within their bounds are one root, not several: the function is
    indistinguishable from zero there, so they are the same point within the stated tolerance.
    """
    found = [(float(grid[k]), k, k) for k in np.flatnonzero(values == 0)]
    change = np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)
    for k in change:
        found.append((_bracketed(func, float(grid[k]), float(grid[k + 1]), log), k, k + 1))
    found.sort(key=lambda item: (item[1], item[2]))
    if bound is None or len(found) < 2:
        return sorted(root for root, _, _ in found)
    confident = np.abs(values) > bound
    groups = [[found[0]]]
    for item in found[1:]:
        if confident[groups[-1][-1][2]: item[1] + 1].any():
            groups.append([item])
        else:
            groups[-1].append(item)
    return sorted(_merged(func, grid, values, confident, group, log) for group in groups)


def _bracketed(func, a: float, b: float, log: bool) -> float:
    fa, fb = func(a), func(b)
    if fa == 0 or fb == 0 or fa * fb > 0:  # a scalar evaluation rounded differently from the grid's
        return a if abs(fa) <= abs(fb) else b
    if log and a > 0:
        ta, tb = math.log(a), math.log(b)

        def along(t):  # at the ends a and b themselves: exp(log(a)) may round across a root at a or b
            return fa if t == ta else fb if t == tb else func(math.exp(t))

        return math.exp(brentq(along, ta, tb, xtol=1e-15, rtol=1e-15))
    return brentq(func, a, b, xtol=1e-300, rtol=1e-15)


def _merged(func, grid, values, confident, group, log: bool) -> float:
    """One root for a run of candidates inside the noise: an exact zero, else the sign change of
    the confident values around the run, else (the run touches zero without crossing) its first."""
    if len(group) == 1:
        return group[0][0]
    exact = [root for root, left, right in group if left == right]
    if exact:
        return exact[0]
    before = np.flatnonzero(confident[: group[0][1]])
    after = np.flatnonzero(confident[group[-1][2]:])
    if before.size and after.size:
        left, right = int(before[-1]), group[-1][2] + int(after[0])
        if np.sign(values[left]) != np.sign(values[right]):
            return _bracketed(func, float(grid[left]), float(grid[right]), log)
    return group[0][0]


def _variance_fixed_point(act: Activation, sw2: float, sb2: float, q0: float | None) -> tuple[float, float]:
    """``(q*, growth)``: the fixed point reached from ``q0`` (``inf`` and the growth factor if none).

    ``q0 = None`` stands for small inputs: the fixed point reached from ``q = 1e-12``.
    """
    if act.homogeneous:
        g = sw2 * float(act.second_moment(1.0))
        if abs(g - 1.0) <= 1e-14:
            return (math.inf, 1.0) if sb2 > 0 else (1.0 if q0 is None else q0, 1.0)
        if g > 1.0:
            return (math.inf, g) if (sb2 > 0 or q0 != 0) else (0.0, 1.0)
        return sb2 / (1.0 - g), 1.0
    q0 = 1e-12 if q0 is None else q0

    def gap(q):
        return float(sw2 * act.second_moment(q) + sb2 - q)

    grid = np.unique(np.concatenate([[0.0], _Q_GRID, [q0]]))
    values = sw2 * act.second_moment(grid) + sb2 - grid
    roots = _roots(gap, grid, values, log=False)
    g0 = gap(q0)
    if g0 == 0:
        return q0, 1.0
    if g0 > 0:
        above = [r for r in roots if r > q0]
        if above:
            return above[0], 1.0
        if act.bounded:  # q' <= sw2 sup phi^2 + sb2: the fixed point lies past the grid, not at infinity
            hi = _Q_BIG
            while gap(hi) > 0 and hi < 1e300:
                hi *= 10.0
            if gap(hi) <= 0:
                return _bracketed(gap, hi / 10.0, hi, log=True), 1.0
        big = float(sw2 * act.second_moment(_Q_BIG) + sb2) / _Q_BIG
        return math.inf, big
    below = [r for r in roots if r < q0]
    return (below[-1] if below else 0.0), 1.0


def _correlation_fixed_point(act: Activation, sw2: float, sb2: float, q: float) -> float:
    """``eps* = 1 - c*`` of the chaotic phase: the sign change of ``eps_map(eps) - eps`` nearest ``c = 1``."""
    q_next = sw2 * float(act.second_moment(q)) + sb2

    def gap(eps):
        return float(sw2 * act.difference_moment(q, eps=eps)) / q_next - eps

    values = sw2 * act.difference_moment(np.full(_EPS_GRID.shape, q), eps=_EPS_GRID) / q_next - _EPS_GRID
    negative = np.flatnonzero(values <= 0)
    if negative.size == 0:
        return 2.0
    k = int(negative[0])
    if k == 0:  # the chaotic fixed point lies below 1e-15 (chi_1 within rounding of 1)
        return 0.0
    return _roots(gap, _EPS_GRID[k - 1: k + 1], values[k - 1: k + 1])[0]


def fixed_point(act, sw2, sb2, *, q0: float | None = None, tol: float = 1e-10) -> FixedPoint:
    """The mean-field fixed point, its slopes, depth scales and phase.

    Parameters
    ----------
    act : str, sympy.Expr, callable or Activation
        The activation (see :func:`get_activation`).
    sw2, sb2 : float
        Weight variance (``> 0``) and bias variance (``>= 0``).
    q0 : float, optional
        Where the variance starts; the fixed point reported is the one reached from it. By
        default, small inputs: the first attracting fixed point above ``q = 0``.
    tol : float
        ``|chi_1 - 1| <= tol`` counts as critical.

    Examples
    --------
    >>> fp = fixed_point("relu", 1.0, 0.5)
    >>> fp.q_star, fp.phase
    (1.0, 'ordered')
    >>> fixed_point("relu", 2.0, 0.0).xi_c
    inf
    """
    act = get_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    if q0 is not None:
        q0 = as_variance(q0, "q0")
    q_star, growth = _variance_fixed_point(act, sw2, sb2, q0)
    name = str(act)
    if math.isinf(q_star):
        return _unbounded(act, name, sw2, sb2, growth, tol)
    chi1 = float(sw2 * act.derivative_second_moment(q_star))
    chi_q = float(sw2 * act.second_moment_slope(q_star)) if not act.homogeneous else sw2 * float(
        act.second_moment(1.0))
    note = ""
    if act.homogeneous and sb2 == 0 and abs(chi_q - 1) <= tol:
        note = "every q is a fixed point (homogeneous activation, sb2 = 0); q* is q0"
    if abs(chi1 - 1.0) <= tol:
        phase, eps_star, chi_c = "critical", 0.0, chi1
    elif chi1 < 1.0:
        phase, eps_star, chi_c = "ordered", 0.0, chi1
    else:
        phase = "chaotic"
        eps_star = _correlation_fixed_point(act, sw2, sb2, q_star)
        chi_c = float(_slope_at(act, q_star, sw2, sb2, eps_star))
    critical = phase == "critical"
    # at criticality c* = 1 is marginal (xi_c infinite) while q* still attracts geometrically
    xi_q, xi_c = depth_scale(chi_q), (math.inf if critical else depth_scale(chi_c))
    xi_grad = math.inf if critical else _gradient_scale(chi1)
    return FixedPoint(name, sw2, sb2, q_star, 1.0 - eps_star, eps_star, chi1, chi_c, chi_q, xi_q, xi_c,
                      xi_grad, phase, 1.0, note)


def _slope_at(act: Activation, q: float, sw2: float, sb2: float, eps: float) -> float:
    q_next = sw2 * float(act.second_moment(q)) + sb2
    return sw2 * (q / q_next) * float(act.derivative_cross_moment(q, q, eps=eps))  # sw2 q alone may overflow


def _gradient_scale(chi1: float) -> float:
    return math.inf if chi1 == 1.0 or chi1 <= 0 else 1.0 / abs(math.log(chi1))


def _unbounded(act: Activation, name: str, sw2: float, sb2: float, growth: float, tol: float) -> FixedPoint:
    """The record of a variance that grows without bound (exploding phase, or the critical ReLU edge)."""
    if act.homogeneous:
        chi1 = sw2 * float(act.derivative_second_moment(1.0))
        critical = abs(chi1 - 1.0) <= tol
        note = ("q grows linearly (by sb2 per layer)" if critical else
                f"q grows geometrically by {growth:.6g} per layer; correlations approach 1 only polynomially")
        return FixedPoint(name, sw2, sb2, math.inf, 1.0, 0.0, chi1, 1.0, growth, math.inf, math.inf,
                          math.inf if critical else _gradient_scale(chi1),
                          "critical" if critical else "exploding", growth, note)
    chi1 = float(sw2 * act.derivative_second_moment(_Q_BIG))
    note = (f"q grows without bound (by about {growth:.6g} per layer at q = {_Q_BIG:g}); "
            f"chi_1 is its limit, estimated at q = {_Q_BIG:g}")
    return FixedPoint(name, sw2, sb2, math.inf, 1.0, 0.0, chi1, 1.0, growth, math.inf, math.inf,
                      _gradient_scale(chi1), "exploding", growth, note)


# ------------------------------------------------------------------ the critical point
def critical_points(act, *, sw2=None, sb2=None) -> tuple[CriticalPoint, ...]:
    """Every point on the order-to-chaos boundary with the given ``sb2`` (or the given ``sw2``).

    The equation is bracketed on a grid of ``q``; sign changes inside a run of grid points
    where it is zero within its error bound (the moments' quadrature bounds and rounding) are
    one point, not several: tanh at ``sb2 = 0``, where ``q - E[phi^2] / E[phi'^2] = O(q^3)``
    is below its rounding for ``q < 1e-6``, has the one branch ``(sw2, q*) = (1, 0)``.
    """
    act = get_activation(act)
    if (sw2 is None) == (sb2 is None):
        raise ParameterError("give exactly one of sw2= and sb2= to locate the critical point")
    if sw2 is not None:
        sw2, _ = check_weights(sw2, 0.0)
    else:
        _, sb2 = check_weights(1.0, sb2)
    name = str(act)
    if act.homogeneous:
        critical_sw2 = 1.0 / float(act.derivative_second_moment(1.0))
        if sw2 is not None and abs(sw2 - critical_sw2) > 1e-12 * critical_sw2:
            raise DomainError(f"{name} is critical only at sw2 = {critical_sw2:.15g} (any sb2); "
                              f"got sw2={sw2:g}")
        sb2 = 0.0 if sb2 is None else sb2
        q = math.inf if sb2 > 0 else 1.0
        note = ("q* diverges on the boundary (q grows by sb2 per layer)" if sb2 > 0
                else "every q is a fixed point at sb2 = 0")
        return (CriticalPoint(name, critical_sw2, sb2, q, 1.0, ((critical_sw2, sb2, q, 1.0),), note),)
    if sb2 is not None:
        def excess(q):
            return float(q - act.second_moment(q) / act.derivative_second_moment(q)) - sb2

        grid = np.concatenate([[0.0], _Q_GRID])
        m2, m2_err = act.second_moment(grid, return_error=True)
        d2, d2_err = act.derivative_second_moment(grid, return_error=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = m2 / d2
            values = grid - ratio - sb2
            bound = (m2_err + np.abs(ratio) * d2_err) / np.abs(d2) + 8 * _ULP * (grid + np.abs(ratio) + sb2)
        # E[phi'^2] = 0 with E[phi^2] > 0 (cos at q = 0): the excess is -inf there, a sign; 0 / 0
        # (phi(0) = phi'(0) = 0, x^2 at q = 0) has none, and brackets no root
        qs = _roots(excess, grid, np.where(np.isneginf(values), -1.0, values), log=False,
                    bound=np.nan_to_num(bound, nan=0.0, posinf=0.0))
        found = [(1.0 / float(act.derivative_second_moment(q)), sb2, q) for q in qs]
    else:
        target = 1.0 / sw2

        def excess(q):
            return float(act.derivative_second_moment(q)) - target

        grid = np.concatenate([[0.0], _Q_GRID])
        d2, d2_err = act.derivative_second_moment(grid, return_error=True)
        qs = _roots(excess, grid, d2 - target, log=False, bound=d2_err + 8 * _ULP * target)
        found = [(sw2, float(q - sw2 * act.second_moment(q)), q) for q in qs]
        found = [f for f in found if f[1] >= -1e-15 * max(1.0, f[2])]
        found = [(a, max(b, 0.0), q) for a, b, q in found]
    if not found:
        given = f"sb2={sb2:g}" if sw2 is None else f"sw2={sw2:g}"
        raise DomainError(f"{name} has no order-to-chaos point with {given} (and q* in [0, {_Q_BIG:g}])")
    found = [(a, b, q, float(a * act.second_moment_slope(q))) for a, b, q in found]
    branches = tuple(found)
    unstable = "the variance fixed point repels here (chi_q > 1): not reached from generic inputs"
    return tuple(CriticalPoint(name, a, b, q, x, branches, unstable if x > 1 + 1e-12 else "")
                 for a, b, q, x in found)


def critical_point(act, *, sw2=None, sb2=None) -> CriticalPoint:
    """The point on the order-to-chaos boundary with the given ``sb2`` (or ``sw2``).

    Solved by bracketing ``sb2 = q - E[phi^2](q) / E[phi'^2](q)`` in ``q`` (or
    ``E[phi'^2](q) = 1 / sw2``), then ``sw2 = 1 / E[phi'^2](q*)``; with several solutions,
    the one with the smallest ``q*`` whose variance fixed point attracts (``chi_q <= 1``),
    else the one with the smallest ``q*`` (all of them in ``branches``).

    Examples
    --------
    >>> cp = critical_point("erf", sb2=0.0)
    >>> round(cp.sw2, 12), cp.q_star
    (0.785398163397, 0.0)
    """
    points = critical_points(act, sw2=sw2, sb2=sb2)
    return next((p for p in points if p.chi_q <= 1 + 1e-12), points[0])
