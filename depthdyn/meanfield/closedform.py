"""Activations whose Gaussian moments have closed forms.

* piecewise linear ``max(x, alpha x)``: linear (``alpha = 1``), ReLU (``0``), leaky ReLU,
  abs (``-1``); the arc-cosine kernel of Cho & Saul (2009);
* ``erf``: Williams' arcsine kernel (1997), in :mod:`depthdyn.meanfield.erf`;
* ``sin``, ``cos``, ``exp`` and the Gaussian bump ``exp(-x^2/2)``: Gaussian integrals of
  exponentials;
* polynomials (Hermite polynomials among them): Mehler's expansion in the Hermite basis.

Every formula is written in ``eps = 1 - c`` where ``c -> 1`` would cancel: the difference
moment ``E[phi^2] - E[phi(u1) phi(u2)]`` is formed without subtracting nearly equal numbers.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import DegreeTooLargeError, DomainError
from ..limits import MAX_POLYNOMIAL_DEGREE
from .activation import Activation, variance_array
from .gaussian import correlation_parts

__all__ = ["PiecewiseLinear", "Sin", "Cos", "Exp", "GaussianBump", "Polynomial", "pair_parts",
           "checked_moment", "arcsin_near_one"]

_ULP = np.finfo(float).eps


def checked_moment(value, return_error: bool, scale=None):
    """``value`` as a float array (a :class:`DomainError` where it is not finite), with its rounding bound
    ``32 ulp`` of ``scale`` (default the value) when ``return_error``."""
    value = np.asarray(value, dtype=float)
    if not np.isfinite(value).all():
        raise DomainError("a Gaussian moment overflows float64 at this variance; use a smaller q")
    if not return_error:
        return value
    return value, 32 * _ULP * np.abs(value if scale is None else scale)


def _overflow_checked(moment):
    """A moment method whose overflow ``checked_moment`` reports as a ``DomainError``: no NumPy
    warning on the way."""

    @functools.wraps(moment)
    def quiet(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore"):
            return moment(*args, **kwargs)

    return quiet


def pair_parts(q1, q2, c, eps):
    """``(q1, q2, c, eps, 1 - c^2)`` checked and broadcast; ``1 - c^2 = eps (2 - eps)`` without
    cancellation."""
    c, eps = correlation_parts(c, eps)
    q1, q2 = variance_array(q1, "q1"), variance_array(q2, "q2")
    if not q1.shape == q2.shape == c.shape:
        q1, q2, c, eps = np.broadcast_arrays(q1, q2, c, eps)
    return q1, q2, c, eps, eps * (2.0 - eps)  # 1 - c^2 without cancellation


def _angle(eps):
    """``arccos(1 - eps) = 2 asin(sqrt(eps / 2))``: all digits near ``c = 1``."""
    return 2.0 * np.arcsin(np.sqrt(0.5 * eps))


def _series_minus_sin(t):
    """``t - sin t`` by its Taylor series (``t < 0.1``: no cancellation; the next term is below 1 ulp)."""
    return t ** 3 / 6 - t ** 5 / 120 + t ** 7 / 5040 - t ** 9 / 362880 + t ** 11 / 39916800


def _theta_minus_sin(t):
    return np.where(t < 0.1, _series_minus_sin(t), t - np.sin(t))


def _finite(value: float) -> float:
    """:func:`checked_moment` of one Python float."""
    if not math.isfinite(value):
        raise DomainError("a Gaussian moment overflows float64 at this variance; use a smaller q")
    return value


def arcsin_near_one(x, one_minus_x):
    """``asin(x)``, with ``1 - x`` given separately: ``pi/2 - 2 asin(sqrt((1 - x)/2))`` for ``x > 1/2``."""
    near = np.pi / 2 - 2 * np.arcsin(np.sqrt(np.minimum(np.maximum(0.5 * one_minus_x, 0.0), 1.0)))
    return np.where(x > 0.5, near, np.arcsin(np.minimum(np.maximum(x, -1.0), 1.0)))


def _torch():
    import torch

    return torch


class PiecewiseLinear(Activation):
    """``max(x, alpha x) = (1 - alpha) relu(x) + alpha x`` for ``alpha <= 1``."""

    closed_form = homogeneous = True

    def __init__(self, name: str, slope: float, **params):
        super().__init__(**params)
        self.name, self.alpha = name, float(slope)

    def phi(self, u):
        return np.maximum(u, self.alpha * u) if self.alpha <= 1 else np.minimum(u, self.alpha * u)

    def dphi(self, u):
        return np.where(u > 0, 1.0, self.alpha)

    def diff(self, u, h):
        a = self.alpha
        return (1 - a) * (np.maximum(u + h, 0.0) - np.maximum(u, 0.0)) + a * h

    def torch(self, x):
        return _torch().maximum(x, self.alpha * x)

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        if self.alpha == 1:
            return x
        return sp.Piecewise((x, x > 0), (sp.nsimplify(self.alpha) * x, True))

    def mean(self, q, *, return_error=False):
        return checked_moment((1 - self.alpha) * np.sqrt(variance_array(q) / (2 * np.pi)), return_error)

    def second_moment(self, q, *, return_error=False):
        return checked_moment(variance_array(q) * (1 + self.alpha ** 2) / 2, return_error)

    def derivative_second_moment(self, q, *, return_error=False):
        q = variance_array(q)
        return checked_moment(np.full_like(q, (1 + self.alpha ** 2) / 2), return_error)

    def second_moment_slope(self, q, *, return_error=False):
        return self.derivative_second_moment(q, return_error=return_error)

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, s2 = pair_parts(q1, q2, c, eps)
        t, a = _angle(eps), self.alpha
        root = np.sqrt(q1 * q2)
        relu = root / (2 * np.pi) * (np.sqrt(s2) + (np.pi - t) * c)
        return checked_moment((1 - a) ** 2 * relu + a * root * c, return_error, root)

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        a = self.alpha
        return checked_moment(a + (1 - a) ** 2 * (np.pi - _angle(eps)) / (2 * np.pi), return_error, 1.0)

    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        q, _, c, eps, _ = pair_parts(q, q, c, eps)
        t, a = _angle(eps), self.alpha
        # relu: q/(2 pi) (pi eps + theta c - sin theta);
        # theta c - sin theta = (theta - sin theta) - theta eps
        relu = q / (2 * np.pi) * (np.pi * eps + _theta_minus_sin(t) - t * eps)
        return checked_moment((1 - a) ** 2 * relu + a * q * eps, return_error, q * eps)

    def layer_moments(self, q: float, eps: float) -> tuple[float, float]:
        """:meth:`second_moment` and :meth:`difference_moment` at one ``q > 0`` and ``0 <= eps <= 2``
        (Python floats, the same formulas): what a kernel layer with one branch input needs, without
        NumPy's cost per call."""
        t, a = 2.0 * math.asin(math.sqrt(0.5 * eps)), self.alpha
        minus_sin = _series_minus_sin(t) if t < 0.1 else t - math.sin(t)
        relu = q / (2 * math.pi) * (math.pi * eps + minus_sin - t * eps)
        return _finite(q * (1 + a * a) / 2), _finite((1 - a) ** 2 * relu + a * q * eps)

    def pair_moment(self, q1: float, q2: float, eps: float) -> float:
        """:meth:`cross_moment` at one pair ``q1, q2 > 0`` and ``0 <= eps <= 2`` (Python floats, the same
        formulas): what a dense kernel layer needs for each new pair of lags."""
        c, t, a = 1.0 - eps, 2.0 * math.asin(math.sqrt(0.5 * eps)), self.alpha
        root = math.sqrt(q1 * q2)
        relu = root / (2 * math.pi) * (math.sqrt(eps * (2.0 - eps)) + (math.pi - t) * c)
        return _finite((1 - a) ** 2 * relu + a * root * c)

    def exact_moments(self) -> dict:
        import sympy as sp

        q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
        c = sp.Symbol("c")
        a = sp.nsimplify(self.alpha)
        t = sp.acos(c)
        relu = sp.sqrt(q1 * q2) / (2 * sp.pi) * (sp.sqrt(1 - c ** 2) + (sp.pi - t) * c)
        return {"second_moment": q * (1 + a ** 2) / 2,
                "cross_moment": (1 - a) ** 2 * relu + a * sp.sqrt(q1 * q2) * c,
                "derivative_second_moment": (1 + a ** 2) / 2,
                "derivative_cross_moment": a + (1 - a) ** 2 * (sp.pi - t) / (2 * sp.pi)}


def _exponents(q1, q2, eps):
    """``(S12, S12 - (q1 + q2)/2)`` with ``S12 = sqrt(q1 q2) c``; the second without cancellation."""
    root = np.sqrt(q1 * q2)
    return root * (1 - eps), -0.5 * (np.sqrt(q1) - np.sqrt(q2)) ** 2 - root * eps


def _sinh_scaled(s, s_minus_m, m):
    """``exp(-m) sinh(s)`` without overflow, accurate for small ``s``."""
    with np.errstate(over="ignore", under="ignore"):
        small = np.sinh(np.clip(s, -1.0, 1.0)) * np.exp(-m)
        large = 0.5 * (np.exp(s_minus_m) - np.exp(-s - m))
    return np.where(np.abs(s) < 1.0, small, large)


def _cosh_scaled(s, s_minus_m, m):
    with np.errstate(under="ignore"):
        return 0.5 * (np.exp(s_minus_m) + np.exp(-s - m))


def _trig_difference(q, eps, sign):
    """``E[f^2] - E[f(u1) f(u2)]`` for ``f = sin`` (``sign = +1``) or ``cos`` (``-1``)."""
    x = q * eps
    with np.errstate(under="ignore", over="ignore"):
        tail = np.where(x < 700, np.exp(-2 * q) * np.expm1(np.minimum(x, 700.0)),
                        np.exp(x - 2 * q) - np.exp(-2 * q))
        large = -0.5 * np.expm1(-x) + sign * 0.5 * tail
        # for q <= 1 the product form: cos's two terms above cancel to O(q)
        qs = np.minimum(q, 1.0)
        hyper = np.cosh if sign > 0 else np.sinh
        small = 2 * np.exp(-qs) * hyper(qs * (2 - eps) / 2) * np.sinh(qs * eps / 2)
    return np.where(q <= 1.0, small, large)


class Sin(Activation):
    name, closed_form, bounded = "sin", True, True

    def phi(self, u):
        return np.sin(u)

    def dphi(self, u):
        return np.cos(u)

    def diff(self, u, h):
        return 2 * np.cos(u + 0.5 * h) * np.sin(0.5 * h)

    def torch(self, x):
        return _torch().sin(x)

    def expr(self):
        import sympy as sp

        return sp.sin(sp.Symbol("x"))

    def mean(self, q, *, return_error=False):
        return checked_moment(np.zeros_like(variance_array(q)), return_error, 1.0)

    def second_moment(self, q, *, return_error=False):
        return checked_moment(-0.5 * np.expm1(-2 * variance_array(q)), return_error)

    def derivative_second_moment(self, q, *, return_error=False):
        with np.errstate(under="ignore"):
            return checked_moment(0.5 * (1 + np.exp(-2 * variance_array(q))), return_error)

    def second_moment_slope(self, q, *, return_error=False):
        with np.errstate(under="ignore"):
            return checked_moment(np.exp(-2 * variance_array(q)), return_error, 1.0)

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        return checked_moment(_sinh_scaled(*_exponents(q1, q2, eps), (q1 + q2) / 2), return_error, 1.0)

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        return checked_moment(_cosh_scaled(*_exponents(q1, q2, eps), (q1 + q2) / 2), return_error, 1.0)

    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        q, _, c, eps, _ = pair_parts(q, q, c, eps)
        return checked_moment(_trig_difference(q, eps, +1.0), return_error)

    def exact_moments(self) -> dict:
        import sympy as sp

        q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
        c = sp.Symbol("c")
        m = sp.exp(-(q1 + q2) / 2)
        return {"second_moment": (1 - sp.exp(-2 * q)) / 2, "cross_moment": m * sp.sinh(sp.sqrt(q1 * q2) * c),
                "derivative_second_moment": (1 + sp.exp(-2 * q)) / 2,
                "derivative_cross_moment": m * sp.cosh(sp.sqrt(q1 * q2) * c)}


class Cos(Activation):
    name, closed_form, bounded = "cos", True, True

    def phi(self, u):
        return np.cos(u)

    def dphi(self, u):
        return -np.sin(u)

    def diff(self, u, h):
        return -2 * np.sin(u + 0.5 * h) * np.sin(0.5 * h)

    def torch(self, x):
        return _torch().cos(x)

    def expr(self):
        import sympy as sp

        return sp.cos(sp.Symbol("x"))

    def mean(self, q, *, return_error=False):
        with np.errstate(under="ignore"):
            return checked_moment(np.exp(-variance_array(q) / 2), return_error, 1.0)

    def second_moment(self, q, *, return_error=False):
        with np.errstate(under="ignore"):
            return checked_moment(0.5 * (1 + np.exp(-2 * variance_array(q))), return_error)

    def derivative_second_moment(self, q, *, return_error=False):
        return checked_moment(-0.5 * np.expm1(-2 * variance_array(q)), return_error)

    def second_moment_slope(self, q, *, return_error=False):
        with np.errstate(under="ignore"):
            return checked_moment(-np.exp(-2 * variance_array(q)), return_error, 1.0)

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        return checked_moment(_cosh_scaled(*_exponents(q1, q2, eps), (q1 + q2) / 2), return_error, 1.0)

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        return checked_moment(_sinh_scaled(*_exponents(q1, q2, eps), (q1 + q2) / 2), return_error, 1.0)

    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        q, _, c, eps, _ = pair_parts(q, q, c, eps)
        return checked_moment(_trig_difference(q, eps, -1.0), return_error)

    def exact_moments(self) -> dict:
        import sympy as sp

        q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
        c = sp.Symbol("c")
        m = sp.exp(-(q1 + q2) / 2)
        return {"second_moment": (1 + sp.exp(-2 * q)) / 2, "cross_moment": m * sp.cosh(sp.sqrt(q1 * q2) * c),
                "derivative_second_moment": (1 - sp.exp(-2 * q)) / 2,
                "derivative_cross_moment": m * sp.sinh(sp.sqrt(q1 * q2) * c)}


class Exp(Activation):
    """``exp(x)``: ``E[exp(u1 + u2)] = exp((q1 + q2)/2 + S12)``; overflows float64 past ``q ~ 354``."""

    name, closed_form = "exp", True

    def phi(self, u):
        with np.errstate(over="ignore"):
            return np.exp(u)

    dphi = phi

    def diff(self, u, h):
        with np.errstate(over="ignore"):
            return np.exp(u) * np.expm1(h)

    def torch(self, x):
        return _torch().exp(x)

    def expr(self):
        import sympy as sp

        return sp.exp(sp.Symbol("x"))

    def mean(self, q, *, return_error=False):
        with np.errstate(over="ignore"):
            return checked_moment(np.exp(variance_array(q) / 2), return_error)

    def second_moment(self, q, *, return_error=False):
        with np.errstate(over="ignore"):
            return checked_moment(np.exp(2 * variance_array(q)), return_error)

    derivative_second_moment = second_moment

    def second_moment_slope(self, q, *, return_error=False):
        with np.errstate(over="ignore"):
            return checked_moment(2 * np.exp(2 * variance_array(q)), return_error)

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        with np.errstate(over="ignore"):
            return checked_moment(np.exp((q1 + q2) / 2 + np.sqrt(q1 * q2) * c), return_error)

    derivative_cross_moment = cross_moment

    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        q, _, c, eps, _ = pair_parts(q, q, c, eps)
        with np.errstate(over="ignore"):
            return checked_moment(-np.exp(2 * q) * np.expm1(-q * eps), return_error)

    def exact_moments(self) -> dict:
        import sympy as sp

        q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
        c = sp.Symbol("c")
        cross = sp.exp((q1 + q2) / 2 + sp.sqrt(q1 * q2) * c)
        return {"second_moment": sp.exp(2 * q), "cross_moment": cross,
                "derivative_second_moment": sp.exp(2 * q), "derivative_cross_moment": cross}


class GaussianBump(Activation):
    """``exp(-x^2 / 2)``: ``E[phi(u1) phi(u2)] = det(I + S)^(-1/2)``."""

    name, closed_form, bounded = "gaussian", True, True

    def phi(self, u):
        with np.errstate(under="ignore"):
            return np.exp(-0.5 * u * u)

    def dphi(self, u):
        return -u * self.phi(u)

    def torch(self, x):
        return _torch().exp(-0.5 * x * x)

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        return sp.exp(-x ** 2 / 2)

    def mean(self, q, *, return_error=False):
        return checked_moment(1 / np.sqrt(1 + variance_array(q)), return_error)

    def second_moment(self, q, *, return_error=False):
        return checked_moment(1 / np.sqrt(1 + 2 * variance_array(q)), return_error)

    def derivative_second_moment(self, q, *, return_error=False):
        q = variance_array(q)
        return checked_moment(q / (1 + 2 * q) ** 1.5, return_error)

    def second_moment_slope(self, q, *, return_error=False):
        return checked_moment(-(1 + 2 * variance_array(q)) ** -1.5, return_error)

    def _det(self, q1, q2, s2):
        return 1 + q1 + q2 + q1 * q2 * s2

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, s2 = pair_parts(q1, q2, c, eps)
        return checked_moment(1 / np.sqrt(self._det(q1, q2, s2)), return_error)

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, s2 = pair_parts(q1, q2, c, eps)
        return checked_moment(np.sqrt(q1 * q2) * c / self._det(q1, q2, s2) ** 1.5, return_error, 1.0)

    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        q, _, c, eps, s2 = pair_parts(q, q, c, eps)
        a, b = 1 + 2 * q, self._det(q, q, s2)
        return checked_moment(q * q * s2 / (np.sqrt(a * b) * (np.sqrt(a) + np.sqrt(b))), return_error)

    def exact_moments(self) -> dict:
        import sympy as sp

        q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
        c = sp.Symbol("c")
        det = (1 + q1) * (1 + q2) - q1 * q2 * c ** 2
        return {"second_moment": 1 / sp.sqrt(1 + 2 * q), "cross_moment": 1 / sp.sqrt(det),
                "derivative_second_moment": q / (1 + 2 * q) ** sp.Rational(3, 2),
                "derivative_cross_moment": sp.sqrt(q1 * q2) * c / det ** sp.Rational(3, 2)}


class Polynomial(Activation):
    """``sum_k a_k x^k``: Mehler's formula ``E[phi(u1) phi(u2)] = sum_j j! b_j(q1) b_j(q2) c^j``.

    ``b_j(q)`` are the coefficients of ``phi(sqrt(q) z)`` in the Hermite polynomials
    ``He_j(z)`` (exact for a polynomial; no truncation).
    """

    closed_form = True

    def __init__(self, name: str, coefficients, **params):
        super().__init__(**params)
        herme = np.polynomial.hermite_e
        self.name = name
        self.coefficients = np.trim_zeros(np.asarray(coefficients, dtype=float), "b")
        if self.coefficients.size == 0:
            self.coefficients = np.zeros(1)
        n = self.coefficients.size
        if n - 1 > MAX_POLYNOMIAL_DEGREE:
            raise DegreeTooLargeError(f"a polynomial activation of degree {n - 1} is past the highest "
                                      f"depthdyn takes, {MAX_POLYNOMIAL_DEGREE} (its moments' factorial "
                                      "weights leave float64)")
        self._to_hermite = np.stack([np.pad(herme.poly2herme(np.eye(n)[k]), (0, n - 1))[:n]
                                     for k in range(n)])
        self._fact = np.array([math.factorial(j) for j in range(n)], dtype=float)
        self._derivative = None if n == 1 else np.polynomial.polynomial.polyder(self.coefficients)
        # a x (no constant): positively homogeneous of degree one, its q-map a line through 0
        self.homogeneous = n == 2 and self.coefficients[0] == 0

    def _hermite(self, q, coefficients):
        q = variance_array(q)
        k = np.arange(coefficients.size)
        powers = coefficients * np.sqrt(q)[..., None] ** k  # coefficients of phi(sqrt(q) z) in z^k
        return powers @ self._to_hermite[: coefficients.size, : coefficients.size]

    def phi(self, u):
        return np.polynomial.polynomial.polyval(u, self.coefficients)

    def dphi(self, u):
        if self._derivative is None:
            return np.zeros_like(np.asarray(u, dtype=float))
        return np.polynomial.polynomial.polyval(u, self._derivative)

    def torch(self, x):
        out = x * 0
        for a in self.coefficients[::-1]:
            out = out * x + float(a)
        return out

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        return sum(sp.nsimplify(a) * x ** k for k, a in enumerate(self.coefficients))

    def _moments(self, coefficients, q1, q2, c, eps, kind: str):
        if coefficients is None:
            q1 = variance_array(q1)
            return np.zeros(np.broadcast_shapes(np.shape(q1), np.shape(q2), np.shape(c) if c is not None
                                                else np.shape(eps)))
        q1, q2, c, eps, _ = pair_parts(q1, q2, c, eps)
        b1, b2 = self._hermite(q1, coefficients), self._hermite(q2, coefficients)
        j = np.arange(coefficients.size)
        fact = self._fact[: coefficients.size]
        if kind == "cross":
            return (fact * b1 * b2 * c[..., None] ** j).sum(axis=-1)
        # 1 - c^j = -expm1(j log1p(-eps)) for c > 0 keeps its digits near c = 1
        with np.errstate(divide="ignore"):
            one_minus = np.where(c[..., None] > 0, -np.expm1(j * np.log1p(-np.minimum(eps, 0.5))[..., None]),
                                 1 - c[..., None] ** j)
        return (fact * b1 * b1 * one_minus).sum(axis=-1)

    @_overflow_checked
    def mean(self, q, *, return_error=False):
        return checked_moment(self._hermite(q, self.coefficients)[..., 0], return_error)

    @_overflow_checked
    def second_moment(self, q, *, return_error=False):
        b = self._hermite(q, self.coefficients)
        return checked_moment((self._fact * b * b).sum(axis=-1), return_error)

    @_overflow_checked
    def derivative_second_moment(self, q, *, return_error=False):
        if self._derivative is None:
            return checked_moment(np.zeros_like(variance_array(q)), return_error, 1.0)
        b = self._hermite(q, self._derivative)
        return checked_moment((self._fact[: b.shape[-1]] * b * b).sum(axis=-1), return_error)

    @_overflow_checked
    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        return checked_moment(self._moments(self.coefficients, q1, q2, c, eps, "cross"), return_error, 1.0)

    @_overflow_checked
    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        return checked_moment(self._moments(self._derivative, q1, q2, c, eps, "cross"), return_error, 1.0)

    @_overflow_checked
    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        return checked_moment(self._moments(self.coefficients, q, q, c, eps, "difference"), return_error)

    def exact_moments(self) -> dict:
        import sympy as sp

        q = sp.Symbol("q", nonnegative=True)
        z = sp.Symbol("z")
        phi = self.expr().subs(sp.Symbol("x"), sp.sqrt(q) * z)
        gauss = sp.exp(-z ** 2 / 2) / sp.sqrt(2 * sp.pi)
        second = sp.integrate(sp.expand(phi ** 2) * gauss, (z, -sp.oo, sp.oo))
        return {"second_moment": sp.expand(second)}
