"""Activations that are an affine function plus a scaled activation of a parity.

``phi(u) = a + b u + s psi(k u)`` where either ``psi`` is odd and ``b = 0`` (sigmoid is
``1/2 + tanh(u/2)/2``) or ``psi`` is even and ``a = 0`` (GELU, SiLU and softplus are ``u/2``
plus an even function). Over a centred Gaussian pair ``(u1, u2)`` the cross terms vanish:
``E[psi(k u)] = 0`` for an odd ``psi``, and ``E[u1 psi(k u2)] = 0`` for an even one (the law is
the same under ``(u1, u2) -> (-u1, -u2)``). So, with ``C = cov(u1, u2)``,

    E[phi(u1) phi(u2)]    = a^2 + b^2 C + s^2 E[psi(k u1) psi(k u2)],
    E[phi'(u1) phi'(u2)]  = b^2 + s^2 k^2 E[psi'(k u1) psi'(k u2)],

and every moment is ``psi``'s at the variances ``k^2 q`` plus a closed form, each part
non-negative where the moment is (``E[phi^2]`` and the difference moment), so the inner bound
scaled by ``s^2`` bounds the result. ``psi``'s parity then lets the kernel layers use its
parity records (:mod:`depthdyn.meanfield.layer_series`): half the quadrature nodes, and the
asymptote of tanh (sigmoid's) or of the even part summed exactly.
"""

from __future__ import annotations

import numpy as np

from .activation import Activation, variance_array
from .gaussian import correlation_parts

__all__ = ["Reduced"]

_ULP = float(np.finfo(float).eps)


class Reduced(Activation):
    """An activation ``a + b u + s psi(k u)`` whose moments are those of ``psi`` (see the module).

    Subclasses set :attr:`parts` ``(a, b, s, k)`` and implement :meth:`inner_activation`; ``phi``,
    ``dphi`` and ``diff`` remain their own (the quadrature and the torch harness use them).
    """

    #: ``(a, b, s, k)`` of ``phi(u) = a + b u + s psi(k u)``.
    parts: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)

    def __init__(self, **params):
        super().__init__(**params)
        # one instance per activation: the moment caches are kept per activation object
        self.inner = self.inner_activation()
        a, b, _, _ = self.parts
        parity = self.inner.phi_parity()
        if not ((parity == "odd" and b == 0) or (parity == "even" and a == 0)):
            raise TypeError(f"{type(self).__name__}: psi must be odd with b = 0 or even with a = 0")

    def inner_activation(self) -> Activation:  # pragma: no cover - every subclass overrides
        """``psi``, an activation that declares its parity."""
        raise NotImplementedError

    def _scaled(self, value, bound, affine, return_error):
        """``affine + s^2 value``, and its bound ``s^2 bound`` plus the rounding of the sum."""
        s2 = self.parts[2] ** 2
        out = affine + s2 * value
        if not return_error:
            return out
        return out, s2 * bound + 4 * _ULP * (np.abs(affine) + s2 * np.abs(value))

    def mean(self, q, *, return_error: bool = False):
        a, _, s, k = self.parts
        q = variance_array(q)
        if self.inner.phi_parity() == "odd":  # E[psi] = 0 exactly
            value = np.full(q.shape, a)
            return (value, np.zeros(q.shape)) if return_error else value
        value, bound = self.inner.mean(k * k * q, return_error=True)
        return (a + s * value, abs(s) * bound + 4 * _ULP * abs(s * value)) if return_error else a + s * value

    def second_moment(self, q, *, return_error: bool = False):
        a, b, _, k = self.parts
        q = variance_array(q)
        value, bound = self.inner.second_moment(k * k * q, return_error=True)
        return self._scaled(value, bound, a * a + b * b * q, return_error)

    def derivative_second_moment(self, q, *, return_error: bool = False):
        _, b, _, k = self.parts
        q = variance_array(q)
        value, bound = self.inner.derivative_second_moment(k * k * q, return_error=True)
        return self._scaled(k * k * value, k * k * bound, b * b + 0 * q, return_error)

    def second_moment_slope(self, q, *, return_error: bool = False):
        _, b, _, k = self.parts
        q = variance_array(q)
        value, bound = self.inner.second_moment_slope(k * k * q, return_error=True)
        return self._scaled(k * k * value, k * k * bound, b * b + 0 * q, return_error)

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error: bool = False):
        a, b, _, k = self.parts
        q1, q2 = variance_array(q1, "q1"), variance_array(q2, "q2")
        rho, e = correlation_parts(c, eps)
        value, bound = self.inner.cross_moment(k * k * q1, k * k * q2, eps=e, return_error=True)
        return self._scaled(value, bound, a * a + b * b * rho * np.sqrt(q1 * q2), return_error)

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error: bool = False):
        _, b, _, k = self.parts
        q1, q2 = variance_array(q1, "q1"), variance_array(q2, "q2")
        _, e = correlation_parts(c, eps)
        value, bound = self.inner.derivative_cross_moment(k * k * q1, k * k * q2, eps=e, return_error=True)
        return self._scaled(k * k * value, k * k * bound, b * b + 0 * value, return_error)

    def difference_moment(self, q, c=None, *, eps=None, return_error: bool = False):
        _, b, _, k = self.parts
        q = variance_array(q)
        _, e = correlation_parts(c, eps)
        value, bound = self.inner.difference_moment(k * k * q, eps=e, return_error=True)
        return self._scaled(value, bound, b * b * q * e, return_error)
