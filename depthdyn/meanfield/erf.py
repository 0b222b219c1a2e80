"""``erf``: Williams' arcsine kernel (1997), vectorised and, for a kernel layer, in Python floats.

``E[erf(u1) erf(u2)] = (2/pi) asin(2 S12 / sqrt((1 + 2 q1)(1 + 2 q2)))``, written in
``eps = 1 - c`` where ``c -> 1`` would cancel (see :mod:`depthdyn.meanfield.closedform`).
"""

from __future__ import annotations

import math

import numpy as np

from .activation import Activation, variance_array
from .closedform import arcsin_near_one, checked_moment, pair_parts

__all__ = ["Erf"]


def _torch():
    import torch

    return torch


class Erf(Activation):
    """``erf(x)``: ``E[erf(u1) erf(u2)] = (2/pi) asin(2 S12 / sqrt((1 + 2 q1)(1 + 2 q2)))``."""

    name, closed_form, bounded = "erf", True, True

    def phi(self, u):
        from scipy.special import erf

        return erf(u)

    def dphi(self, u):
        with np.errstate(under="ignore"):
            return 2 / math.sqrt(math.pi) * np.exp(-u * u)

    def torch(self, x):
        return _torch().erf(x)

    def expr(self):
        import sympy as sp

        return sp.erf(sp.Symbol("x"))

    def mean(self, q, *, return_error=False):
        return checked_moment(np.zeros_like(variance_array(q)), return_error, 1.0)

    def second_moment(self, q, *, return_error=False):
        q = variance_array(q)
        return checked_moment(2 / np.pi * arcsin_near_one(2 * q / (1 + 2 * q), 1 / (1 + 2 * q)), return_error)

    def derivative_second_moment(self, q, *, return_error=False):
        return checked_moment(4 / np.pi / np.sqrt(1 + 4 * variance_array(q)), return_error)

    def second_moment_slope(self, q, *, return_error=False):
        q = variance_array(q)  # d/dq (2/pi) asin(2q/(1+2q)) = 4 / (pi (1+2q) sqrt(1+4q))
        return checked_moment(4 / (np.pi * (1 + 2 * q) * np.sqrt(1 + 4 * q)), return_error)

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, s2 = pair_parts(q1, q2, c, eps)
        root, norm = 2 * np.sqrt(q1 * q2), np.sqrt((1 + 2 * q1) * (1 + 2 * q2))
        arg = root * c / norm
        # 1 - arg = (norm^2 - root^2 c^2) / (norm (norm + root c)), the numerator without cancellation
        one_minus = (1 + 2 * q1 + 2 * q2 + root * root * s2) / (norm * (norm + root * np.abs(c)))
        value = 2 / np.pi * np.sign(c) * arcsin_near_one(np.abs(arg), one_minus)
        return checked_moment(value, return_error, 1.0)

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error=False):
        q1, q2, c, eps, s2 = pair_parts(q1, q2, c, eps)
        return checked_moment(4 / np.pi / np.sqrt(1 + 2 * q1 + 2 * q2 + 4 * q1 * q2 * s2), return_error)

    def difference_moment(self, q, c=None, *, eps=None, return_error=False):
        q, _, c, eps, s2 = pair_parts(q, q, c, eps)
        a = 2 * q / (1 + 2 * q)
        one_minus_a2 = (1 + 4 * q) / (1 + 2 * q) ** 2
        # asin(a) - asin(a c) = asin(a (1 - c^2) / (sqrt(1 - a^2 c^2) + c sqrt(1 - a^2))) for c >= 0
        denom = np.sqrt(one_minus_a2 + a * a * s2) + np.abs(c) * np.sqrt(one_minus_a2)
        near = np.arcsin(np.minimum(np.maximum(a * s2 / denom, -1.0), 1.0))
        far = np.arcsin(a) - np.arcsin(a * c)
        return checked_moment(2 / np.pi * np.where(c >= 0, near, far), return_error)

    def layer_moments(self, q: float, eps: float) -> tuple[float, float]:
        """:meth:`second_moment` and :meth:`difference_moment` at one ``q > 0`` and ``eps`` (Python floats,
        the same formulas): what a kernel layer with one branch input needs, without NumPy's cost per call."""
        a, c, s2 = 2 * q / (1 + 2 * q), 1.0 - eps, eps * (2.0 - eps)
        second = np.arcsin(min(max(a, -1.0), 1.0)) if a <= 0.5 else (
            np.pi / 2 - 2 * np.arcsin(math.sqrt(min(max(0.5 * (1 / (1 + 2 * q)), 0.0), 1.0))))
        one_minus_a2 = (1 + 4 * q) / ((1 + 2 * q) * (1 + 2 * q))
        if c >= 0:
            denom = math.sqrt(one_minus_a2 + a * a * s2) + abs(c) * math.sqrt(one_minus_a2)
            difference = np.arcsin(min(max(a * s2 / denom, -1.0), 1.0))
        else:
            difference = np.arcsin(a) - np.arcsin(a * c)
        return float(2 / np.pi * second), float(2 / np.pi * difference)

    def pair_moment(self, q1: float, q2: float, eps: float) -> float:
        """:meth:`cross_moment` at one pair ``q1, q2 > 0`` and ``eps`` (Python floats, the same formulas):
        what a dense kernel layer needs for each new pair of lags, without NumPy's cost per call."""
        c, s2 = 1.0 - eps, eps * (2.0 - eps)
        root, norm = 2 * math.sqrt(q1 * q2), math.sqrt((1 + 2 * q1) * (1 + 2 * q2))
        arg = abs(root * c / norm)
        if arg > 0.5:  # asin(x) = pi/2 - 2 asin(sqrt((1 - x)/2)), 1 - x without cancellation
            one_minus = (1 + 2 * q1 + 2 * q2 + root * root * s2) / (norm * (norm + root * abs(c)))
            angle = math.pi / 2 - 2 * math.asin(math.sqrt(min(max(0.5 * one_minus, 0.0), 1.0)))
        else:
            angle = math.asin(arg)
        return math.copysign(2 / math.pi * angle, c) if c != 0 else 0.0

    def exact_moments(self) -> dict:
        import sympy as sp

        q, q1, q2 = sp.symbols("q q1 q2", nonnegative=True)
        c = sp.Symbol("c")
        return {"second_moment": 2 / sp.pi * sp.asin(2 * q / (1 + 2 * q)),
                "cross_moment": 2 / sp.pi * sp.asin(2 * sp.sqrt(q1 * q2) * c
                                                    / sp.sqrt((1 + 2 * q1) * (1 + 2 * q2))),
                "derivative_second_moment": 4 / (sp.pi * sp.sqrt(1 + 4 * q)),
                "derivative_cross_moment": 4 / (sp.pi * sp.sqrt((1 + 2 * q1) * (1 + 2 * q2)
                                                               - 4 * q1 * q2 * c ** 2))}
