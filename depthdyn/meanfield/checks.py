"""Checked arguments of the mean-field functions: numbers in a range, counts, matrices of a shape.

Each returns the plain value or raises a typed error of :mod:`depthdyn.errors` that names the
argument.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DomainError, ParameterError, ShapeError
from ..limits import MAX_VARIANCE

__all__ = ["as_real", "as_count", "as_matrix", "check_weights", "as_variance"]


def as_real(value, name: str, *, low=None, high=None, low_open=False, high_open=False) -> float:
    """``value`` as a finite float inside the given bounds, or a typed error naming ``name``."""
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a real number, got {value!r}") from None
    # the bounds are the domain: nan lies in none, an infinity past a bound outside it; with no
    # bound on its side (or none at all, for nan) it is no number here
    if math.isnan(v) and low is None and high is None or (v == math.inf and high is None) \
            or (v == -math.inf and low is None):
        raise ParameterError(f"{name} must be finite, got {value!r}")
    bad_low = low is not None and not (v > low if low_open else v >= low)
    bad_high = high is not None and not (v < high if high_open else v <= high)
    if bad_low or bad_high:
        lo = "" if low is None else f"{'(' if low_open else '['}{low:g}"
        hi = "" if high is None else f"{high:g}{')' if high_open else ']'}"
        raise DomainError(f"{name} must lie in {lo or '(-inf'}, {hi or 'inf)'}; got {value!r}")
    return v


def as_count(value, name: str, upper: int) -> int:
    """``value`` as an integer in ``1..upper``, or a typed error naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= upper:
        raise ParameterError(f"{name} must be an integer in 1..{upper}, got {value!r}")
    return int(value)


def as_matrix(value, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as a finite float array of ``shape``, or a typed error naming ``name``."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be numeric, got {value!r}") from None
    if a.shape != shape:
        raise ShapeError(f"{name} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite")
    return a


def as_variance(value, name: str, *, positive: bool = False) -> float:
    """A variance: ``value`` as a float in ``[0, MAX_VARIANCE]`` (``(0, ...]`` with ``positive``)."""
    return as_real(value, name, low=0, high=MAX_VARIANCE, low_open=positive)


def check_weights(sw2, sb2) -> tuple[float, float]:
    """``(sw2, sb2)`` as floats: ``0 < sw2 <= MAX_VARIANCE``, ``0 <= sb2 <= MAX_VARIANCE``
    (:data:`depthdyn.limits.MAX_VARIANCE`), else a typed error naming the one out of range."""
    return as_variance(sw2, "sw2", positive=True), as_variance(sb2, "sb2")
