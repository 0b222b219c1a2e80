"""Activations whose moments are computed by certified quadrature.

tanh, sigmoid, SiLU (swish), softplus, SELU and GELU (whose q-map alone has a closed form),
and a user's own function given as a SymPy expression or a (torch) callable. Each named one
computes ``phi(u + h) - phi(u)`` without cancellation, so the c-map keeps its digits as
``c -> 1``; a user's function falls back to the plain difference.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, erfc, erfcx, expit

from ..errors import ParameterError
from .activation import Activation, variance_array
from .reduced import Reduced

__all__ = ["Tanh", "Sigmoid", "SiLU", "Softplus", "SELU", "GELU", "SymbolicActivation",
           "CallableActivation", "tanh_difference", "GELUEvenPart", "SiLUEvenPart", "SoftplusEvenPart"]

_LOG2 = math.log(2.0)
_ULP = np.finfo(float).eps
_GL_T, _GL_W = np.polynomial.legendre.leggauss(8)


def _logcosh(x):
    ax = np.abs(x)
    return ax + np.log1p(np.exp(-2.0 * ax)) - _LOG2


def tanh_difference(u, h):
    """``tanh(u + h) - tanh(u)``: ``sinh(h) sech(u + h) sech(u)`` where ``|h| < 1/2``.

    The product form has no cancellation for small ``h``; for ``|h| >= 1`` the plain
    difference is used (its absolute error is an ulp). A ``cosh`` past float64 gives the
    product 0, which is the difference to far below an ulp.
    """
    u, h = np.broadcast_arrays(np.asarray(u, dtype=float), np.asarray(h, dtype=float))
    out = np.tanh(u + h) - np.tanh(u)
    near = np.abs(h) < 0.5
    un, hn = u[near], h[near]
    with np.errstate(under="ignore", over="ignore"):
        out[near] = np.sinh(hn) / (np.cosh(un + hn) * np.cosh(un))
    return out


def _torch():
    import torch

    return torch


class Tanh(Activation):
    name, bounded, smooth, growth, parity = "tanh", True, True, (1.0, 0.0, 1.0), "odd"
    # 1 - tanh(u) = 2 / (exp(2u) + 1) <= 2 exp(-2u) and sech(u)^2 <= 4 exp(-2u): at u >= 20, below 8.5e-18
    # and 1.7e-17 (rounded up)
    asymptote = (20.0, 1.0, 0.0, 1e-17, 2e-17)

    def phi(self, u):
        return np.tanh(u)

    def dphi(self, u):
        with np.errstate(under="ignore", over="ignore"):
            return 1.0 / np.cosh(u) ** 2

    def diff(self, u, h):
        return tanh_difference(u, h)

    def remainder(self, u):
        return -2.0 * expit(-2.0 * u)  # tanh(u) - 1

    def torch(self, x):
        return _torch().tanh(x)

    def expr(self):
        import sympy as sp

        return sp.tanh(sp.Symbol("x"))


class Sigmoid(Reduced):
    """``1 / (1 + exp(-u)) = 1/2 + tanh(u/2)/2``: its moments are tanh's at a quarter of the variance."""

    name, bounded, smooth, growth = "sigmoid", True, True, (1.0, 0.0, 0.25)
    parts = (0.5, 0.0, 0.5, 0.5)

    def inner_activation(self):
        return Tanh()

    def phi(self, u):
        return expit(u)

    def dphi(self, u):
        with np.errstate(under="ignore", over="ignore"):
            return 0.25 / np.cosh(0.5 * u) ** 2

    def diff(self, u, h):
        return 0.5 * tanh_difference(0.5 * u, 0.5 * h)

    def torch(self, x):
        return _torch().sigmoid(x)

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        return 1 / (1 + sp.exp(-x))


class SiLUEvenPart(Activation):
    """``u sigmoid(u) - u/2 = u tanh(u/2) / 2``, SiLU's even part."""

    # |psi(u)| <= |u|/2, |psi'| = |SiLU' - 1/2| <= 0.5999
    name, smooth, growth, parity = "silu_even_part", True, (0.0, 0.5, 0.6), "even"
    # psi(u) - u/2 = -u sigmoid(-u): |.| <= u exp(-u) < 6e-25 at u >= 60, and |psi' - 1/2| <= (1 + u) exp(-u)
    asymptote = (60.0, 0.0, 0.5, 6e-25, 6e-25)

    def phi(self, u):
        return 0.5 * u * np.tanh(0.5 * u)

    def dphi(self, u):
        with np.errstate(under="ignore", over="ignore"):
            return 0.5 * np.tanh(0.5 * u) + 0.25 * u / np.cosh(0.5 * u) ** 2

    def diff(self, u, h):
        return 0.5 * (u * tanh_difference(0.5 * u, 0.5 * h) + h * np.tanh(0.5 * (u + h)))

    def remainder(self, u):
        return -u * expit(-u)


class SiLU(Reduced):
    """``u sigmoid(u) = u/2 + u tanh(u/2) / 2``: its moments are those of the even part plus ``u/2``'s."""

    name, smooth, growth = "silu", True, (0.0, 1.0, 1.1)  # |SiLU'| <= 1.0999
    parts = (0.0, 0.5, 1.0, 1.0)

    def inner_activation(self):
        return SiLUEvenPart()

    def phi(self, u):
        return u * expit(u)

    def dphi(self, u):
        s = expit(u)
        return s + u * s * (1.0 - s)

    def diff(self, u, h):
        return u * 0.5 * tanh_difference(0.5 * u, 0.5 * h) + h * expit(u + h)

    def torch(self, x):
        return _torch().nn.functional.silu(x)

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        return x / (1 + sp.exp(-x))


class SoftplusEvenPart(Activation):
    """``log(1 + exp(u)) - u/2 = log(2 cosh(u/2))``, softplus's even part."""

    # |psi(u)| <= log 2 + |u|/2, |psi'| = |sigmoid(u) - 1/2| < 1/2
    name, smooth, growth, parity = "softplus_even_part", True, (_LOG2, 0.5, 0.5), "even"
    # psi(u) - u/2 = log1p(exp(-u)) <= exp(-u) < 9e-27 at u >= 60, and |psi' - 1/2| = sigmoid(-u) <= exp(-u)
    asymptote = (60.0, 0.0, 0.5, 1e-26, 1e-26)

    def phi(self, u):
        a = np.abs(u)
        with np.errstate(under="ignore"):
            return 0.5 * a + np.log1p(np.exp(-a))

    def dphi(self, u):
        return 0.5 * np.tanh(0.5 * u)

    def diff(self, u, h):
        # log(cosh((u+h)/2) / cosh(u/2)) = log1p(2 sinh(h/4)^2 + tanh(u/2) sinh(h/2)): no cancellation where
        # |h| <= 1, nor at u = 0 (psi(h) - psi(0), the kernel layers' sums) up to |h| = 1000 (2 sinh(h/4)^2
        # overflows past 1419); direct elsewhere
        u, h = np.asarray(u, dtype=float), np.asarray(h, dtype=float)
        if (u.shape in (h.shape, ()) and np.count_nonzero(u) == 0
                and np.maximum.reduce(np.abs(h), axis=None, initial=0.0) <= 1000.0):
            t = np.sinh(0.25 * h)  # psi(h) - psi(0): the kernel layers' sums (in place: their hot path)
            t *= t
            t *= 2.0
            return np.log1p(t, out=t)
        u, h = np.broadcast_arrays(u, h)
        hn = np.clip(h, -1.0, 1.0)
        near = np.log1p(2.0 * np.sinh(0.25 * hn) ** 2 + np.tanh(0.5 * u) * np.sinh(0.5 * hn))
        return np.where(np.abs(h) <= 1.0, near, self.phi(u + h) - self.phi(u))

    def remainder(self, u):
        with np.errstate(under="ignore"):
            return np.log1p(np.exp(-u))


class Softplus(Reduced):
    """``log(1 + exp(u)) = u/2 + log(2 cosh(u/2))``: its moments are the even part's plus ``u/2``'s."""

    name, smooth, growth = "softplus", True, (_LOG2, 1.0, 1.0)
    parts = (0.0, 0.5, 1.0, 1.0)

    def inner_activation(self):
        return SoftplusEvenPart()

    def phi(self, u):
        return np.logaddexp(0.0, u)

    def dphi(self, u):
        return expit(u)

    def diff(self, u, h):
        # log((1 + e^(u+h)) / (1 + e^u)) = log1p(sigmoid(u) expm1(h)); direct where |h| > 1
        near = np.log1p(expit(u) * np.expm1(np.clip(h, -1.0, 1.0)))
        return np.where(np.abs(h) <= 1.0, near, self.phi(u + h) - self.phi(u))

    def torch(self, x):
        return _torch().nn.functional.softplus(x)

    def expr(self):
        import sympy as sp

        return sp.log(1 + sp.exp(sp.Symbol("x")))


class SELU(Activation):
    """``lam * x`` for ``x > 0``, ``lam * alpha * (exp(x) - 1)`` otherwise (Klambauer et al. 2017)."""

    name = "selu"
    ALPHA = 1.6732632423543772848170429916717
    SCALE = 1.0507009873554804934193349852946
    # |selu(u)| <= lam alpha + lam |u|, |selu'| <= lam alpha. The kink of selu' at 0 makes the
    # Hermite series converge slowly near c = 1 (Price's theorem takes those points: the *_near_one
    # methods); away from c = 1 its terms fall like |rho|^n and it serves as for the smooth ones.
    growth = (SCALE * ALPHA, SCALE, SCALE * ALPHA)

    def phi(self, u):
        with np.errstate(over="ignore"):
            return self.SCALE * np.where(u > 0, u, self.ALPHA * np.expm1(np.minimum(u, 0.0)))

    def dphi(self, u):
        return self.SCALE * np.where(u > 0, 1.0, self.ALPHA * np.exp(np.minimum(u, 0.0)))

    def mirrored(self, v):
        """``(selu(v), selu(-v))`` for ``v >= 0`` (:meth:`~depthdyn.meanfield.activation.Activation.
        phi_mirrored`): the line and the exponential, each on its half alone, rounded as :meth:`phi`."""
        out = np.empty((2, v.size))
        np.multiply(v, self.SCALE, out=out[0])
        left = out[1]
        np.expm1(-v, out=left)
        left *= self.ALPHA
        left *= self.SCALE
        return out

    def diff(self, u, h):
        y = u + h
        # both non-positive: alpha (e^y - e^u), written with the smaller exponential outside
        neg = np.where(h > 0, -np.exp(np.minimum(y, 0.0)) * np.expm1(-np.abs(h)),
                       np.exp(np.minimum(u, 0.0)) * np.expm1(-np.abs(h)))
        same_neg = (u <= 0) & (y <= 0)
        same_pos = (u > 0) & (y > 0)
        direct = self.phi(y) - self.phi(u)
        return np.where(same_pos, self.SCALE * h, np.where(same_neg, self.SCALE * self.ALPHA * neg, direct))

    def torch(self, x):
        return _torch().nn.functional.selu(x)

    def difference_near_one(self, q, eps):
        """``(value, bound)`` of the difference moment near ``c = 1`` (:func:`_selu_price`)."""
        value, bound, _ = _selu_price(q, q, eps, same=True)
        return value, bound

    def cross_near_one(self, q1, q2, eps):
        """``(value, bound)`` of ``E[phi(u1) phi(u2)]`` near ``c = 1``: its value at ``c = 1`` (a closed
        form) less :func:`_selu_price`."""
        one, one_size = _selu_at_one(q1, q2)
        drop, bound, size = _selu_price(q1, q2, eps)
        return one - drop, bound + 8 * _ULP * (one_size + size)

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        # the constants to all their published digits, not their float64 roundings
        lam = sp.Float("1.0507009873554804934193349852946", 32)
        alpha = sp.Float("1.6732632423543772848170429916717", 32)
        return sp.Piecewise((lam * x, x > 0), (lam * alpha * (sp.exp(x) - 1), True))


def _normal_cdf(u):
    return 0.5 * erfc(-u / math.sqrt(2.0))


def _normal_pdf(u):
    with np.errstate(under="ignore"):
        return np.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi)


def _cdf_difference(u, h):
    """``Phi(u + h) - Phi(u)``: 8-node Gauss-Legendre on ``[u, u + h]`` where ``|h| <= 0.25``, else direct."""
    out = _normal_cdf(u + h) - _normal_cdf(u)
    near = np.abs(h) <= 0.25
    un, hn = u[near][:, None], h[near][:, None]
    out[near] = 0.5 * hn[:, 0] * (_normal_pdf(un + 0.5 * hn * (_GL_T + 1.0)) * _GL_W).sum(axis=-1)
    return out


def _price_rules():
    """Gauss-Legendre rules of 16 and 10 nodes on ``[0, 1]``, side by side: the outer nodes (26) and each
    rule's weights as a column (26, 2); and every outer node's inner rule, its own, as rows of 16
    (the 10-node rule's padded with nodes 0 of weight 0): nodes and weights, (26, 16) each."""
    (x16, w16), (x10, w10) = (np.polynomial.legendre.leggauss(n) for n in (16, 10))
    v16, v10 = (x16 + 1.0) / 2.0, (x10 + 1.0) / 2.0
    weights = np.zeros((26, 2))
    weights[:16, 0], weights[16:, 1] = w16 / 2.0, w10 / 2.0
    inner, inner_weights = np.zeros((26, 16)), np.zeros((26, 16))
    inner[:16], inner_weights[:16] = v16, w16 / 2.0
    inner[16:, :10], inner_weights[16:, :10] = v10, w10 / 2.0
    return np.concatenate((v16, v10)), weights, inner, inner_weights


_PRICE_NODES, _PRICE_WEIGHTS, _INNER_NODES, _INNER_WEIGHTS = _price_rules()


def _selu_price(q1: np.ndarray, q2: np.ndarray, eps: np.ndarray, same: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(value, bound, size)`` of ``sqrt(q1 q2) int_0^theta E[phi'(u1) phi'(u2)] sin t dt`` for SELU,
    ``u1, u2`` of variances ``q1, q2`` and correlation ``cos t``, ``cos theta = 1 - eps``.

    By Price's theorem that is ``E[phi(u1) phi(u2)]`` at ``c = 1`` less at ``c = 1 - eps`` (at equal
    variances the difference moment itself). With ``r_i = sqrt(q_i)``, ``c = cos t``, ``s = sin t``,
    ``E[phi' phi'] / lam^2`` is ``P(u1, u2 > 0) + alpha (E[e^u1; u1 < 0 < u2] + E[e^u2; u2 < 0 < u1])
    + alpha^2 E[e^(u1 + u2); u1, u2 < 0]``; tilting by the exponentials turns the last two into
    bivariate normal probabilities, and those into Owen's ``T(h, tan a) = int_0^a exp(-h^2 / (2
    cos^2 x)) dx / (2 pi)``:

    * ``P(u1, u2 > 0) = 1/2 - t / (2 pi)``;
    * ``E[e^u1; u1 < 0 < u2] = int_0^t e^((q1/2) (sin^2 t - sin^2 x) / cos^2 x) dx / (2 pi)
      - int_(c r1)^(r1) e^((q1 - y^2)/2) dy / (2 sqrt(2 pi))`` (and with ``q2``);
    * ``E[e^(u1 + u2); u1, u2 < 0] = sum over (i, j) = (1, 2), (2, 1) of erfcx(h_i / sqrt 2)
      e^(q_j s^2 / 2) / 4 - int_0^(atan(r_j s / h_i)) e^((q_j s^2 - N sin^2 x) / (2 cos^2 x)) dx
      / (2 pi)``, with ``h_i = r_i + c r_j`` and ``N = q1 + q2 + 2 c r1 r2``.

    Every exponent lies in ``[0, q s^2 / 2]`` and is formed from ``eps`` and angles, not from
    ``1 - c``, so the digits of a small ``eps`` are kept. The integrands are analytic:
    Gauss-Legendre rules of 16 and 10 nodes (a tensor rule for the inner integrals); the bound is
    their difference plus 64 ulp of ``size``, the same sum of the terms' magnitudes. It holds where
    ``q s^2`` is moderate (the exponentials vary little); where it is not, the bound says so.
    ``same`` declares ``q1 == q2`` (a difference moment): the terms of ``u1`` and ``u2`` are then equal.
    """
    # a variance 0 (h_i = 0) or an exponential past float64 gives a non-finite value: refused below
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        r1, r2 = np.sqrt(q1)[:, None], np.sqrt(q2)[:, None]
        theta = 2.0 * np.arcsin(np.sqrt(0.5 * eps))[:, None]
        t = theta * _PRICE_NODES  # both rules' outer nodes, (points, 26)
        half = np.sin(0.5 * t)
        e = 2.0 * half * half  # 1 - cos t
        sin_t = np.sin(t)
        s2 = sin_t * sin_t
        h1 = r1 + (1.0 - e) * r2
        h2 = h1 if same else r2 + (1.0 - e) * r1
        limits = (t, np.arctan(r2 * sin_t / h1))
        limits = limits if same else limits + (np.arctan(r1 * sin_t / h2),)
        # sin^2 x at each outer node's inner nodes x = limit v (sin(a - x) sin(a + x) = sin^2 a - sin^2 x,
        # cos^2 x = 1 - sin^2 x: each exponent off by a few ulp of its largest value)
        inner = np.empty((len(limits),) + t.shape + (16,))  # (2 or 3, points, 26, 16)
        for k, limit in enumerate(limits):  # (np.stack costs more than these products)
            np.multiply(limit[..., None], _INNER_NODES, out=inner[k])
        np.sin(inner, out=inner)
        inner *= inner
        cos2 = 1.0 - inner
        s2p, ep = s2[..., None], e[..., None]
        one = ep * (1.0 - _INNER_NODES)  # eps (1 - w): y = r (c + eps w) on [c r, r]
        norm = 0.5 * ((r1 + r2) ** 2)[..., None] - ep * (r1 * r2)[..., None]  # (q1 + q2 + 2 c r1 r2) / 2
        orders = ((q1, q2),) if same else ((q1, q2), (q2, q1))
        exponents = np.empty((3 * len(orders),) + inner.shape[1:])
        for k, (q, qj) in enumerate(orders):
            half_q, half_qj = 0.5 * q[:, None, None], 0.5 * qj[:, None, None]
            np.divide(half_q * (s2p - inner[0]), cos2[0], out=exponents[3 * k])
            np.multiply(half_q, one * (2.0 - one), out=exponents[3 * k + 1])
            np.divide(half_qj * s2p - norm * inner[1 + k], cos2[1 + k], out=exponents[3 * k + 2])
        exponents = np.exp(exponents, out=exponents)
        exponents *= _INNER_WEIGHTS
        sums = exponents.sum(axis=-1)  # the inner integrals at the outer nodes, (3 or 6, points, 26)
        # the terms of E[phi' phi'] / lam^2 (see above): P(u1, u2 > 0), then alpha times the tilted
        # probabilities' two parts and alpha^2 times the corner's, each part non-negative
        terms = np.empty((5,) + t.shape)
        np.subtract(0.5, t / (2 * np.pi), out=terms[0])
        alpha = SELU.ALPHA
        if same:  # the terms of u1 and u2 are equal
            a1, b1, t1 = sums
            np.multiply(a1 * t, alpha / np.pi, out=terms[1])
            np.multiply(r1 * b1 * e, alpha / math.sqrt(2 * np.pi), out=terms[2])
            np.multiply(erfcx(h1 / math.sqrt(2.0)) * np.exp(0.5 * q1[:, None] * s2), 0.5 * alpha * alpha,
                        out=terms[3])
            np.multiply(limits[1] * t1, alpha * alpha / np.pi, out=terms[4])
        else:
            a1, b1, t1, a2, b2, t2 = sums
            np.multiply((a1 + a2) * t, alpha / (2 * np.pi), out=terms[1])
            np.multiply(r1 * b1 + r2 * b2, e * (alpha / (2 * math.sqrt(2 * np.pi))), out=terms[2])
            np.multiply(erfcx(h1 / math.sqrt(2.0)) * np.exp(0.5 * q2[:, None] * s2)
                        + erfcx(h2 / math.sqrt(2.0)) * np.exp(0.5 * q1[:, None] * s2), 0.25 * alpha * alpha,
                        out=terms[3])
            np.multiply(limits[1] * t1 + limits[2] * t2, alpha * alpha / (2 * np.pi), out=terms[4])
        terms *= SELU.SCALE ** 2 * r1 * r2 * theta * sin_t
        # (the value, the terms' size) by both rules: (2, points, 2)
        both = (_SIGNS @ terms.reshape(5, -1)).reshape(2, -1, 26) @ _PRICE_WEIGHTS
        (hi, lo), (size, _) = both.transpose(0, 2, 1)
        bound = np.abs(hi - lo) + 64 * _ULP * size
    if np.isfinite(bound).all():  # a non-finite value makes its bound non-finite
        return hi, bound, size
    bad = ~np.isfinite(bound)
    return np.where(bad, 0.0, hi), np.where(bad, np.inf, bound), np.where(bad, 0.0, size)


#: The value ``p1 + (tilt - tilt') + (corner - corner')`` and the size (every sign ``+``) from the terms.
_SIGNS = np.array([[1.0, 1.0, -1.0, 1.0, -1.0], [1.0, 1.0, 1.0, 1.0, 1.0]])


def _selu_at_one(q1: np.ndarray, q2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``E[selu(r1 z) selu(r2 z)]`` and the sum of its terms' magnitudes: ``lam^2 (r1 r2 / 2 + alpha^2
    E[(e^(r1 z) - 1)(e^(r2 z) - 1); z < 0])``, with ``E[e^(a z); z < 0] = erfcx(a / sqrt 2) / 2``."""
    r1, r2 = np.sqrt(q1), np.sqrt(q2)
    x = 1.0 / math.sqrt(2.0)
    parts = 0.5 * erfcx(x * (r1 + r2)), 0.5 * erfcx(x * r1), 0.5 * erfcx(x * r2)
    lam2, alpha2 = SELU.SCALE ** 2, SELU.ALPHA ** 2
    value = lam2 * (0.5 * r1 * r2 + alpha2 * (parts[0] - parts[1] - parts[2] + 0.5))
    return value, lam2 * (0.5 * r1 * r2 + alpha2 * (parts[0] + parts[1] + parts[2] + 0.5))


class GELUEvenPart(Activation):
    """``u Phi(u) - u/2 = u erf(u / sqrt 2) / 2``, GELU's even part."""

    # |psi(u)| <= |u|/2, |psi'| = |GELU' - 1/2| <= 0.629
    name, smooth, growth, parity = "gelu_even_part", True, (0.0, 0.5, 0.63), "even"
    # psi(u) - u/2 = -u Phi(-u): |.| <= pdf(u) (Mills' ratio) and |psi' - 1/2| <= Phi(-u) + u pdf(u), below
    # 1e-190 at u >= 30
    asymptote = (30.0, 0.0, 0.5, 1e-190, 1e-190)

    def phi(self, u):
        return 0.5 * u * erf(u / math.sqrt(2.0))

    def dphi(self, u):
        return 0.5 * erf(u / math.sqrt(2.0)) + u * _normal_pdf(u)

    def diff(self, u, h):
        u, h = (np.array(x, dtype=float) for x in np.broadcast_arrays(u, h))
        return u * _cdf_difference(u, h) + 0.5 * h * erf((u + h) / math.sqrt(2.0))

    def remainder(self, u):
        return -0.5 * u * erfc(u / math.sqrt(2.0))


class GELU(Reduced):
    """``x Phi(x)`` (the exact, erf-based GELU), ``x/2`` plus an even part. Its q-map has a closed form;
    the rest is the even part's moments (Hermite series or quadrature)."""

    name, smooth, growth = "gelu", True, (0.0, 1.0, 1.13)  # |GELU'| <= 1.129
    parts = (0.0, 0.5, 1.0, 1.0)

    def inner_activation(self):
        return GELUEvenPart()

    def phi(self, u):
        return u * _normal_cdf(u)

    def dphi(self, u):
        return _normal_cdf(u) + u * _normal_pdf(u)

    def diff(self, u, h):
        u, h = (np.array(x, dtype=float) for x in np.broadcast_arrays(u, h))
        return u * _cdf_difference(u, h) + h * _normal_cdf(u + h)

    def second_moment(self, q, *, return_error: bool = False):
        # E[(x Phi(x))^2] = q/4 + q/(2 pi) (asin(q/(1+q)) + 2q / ((1+q) sqrt(1+2q))), by Stein's lemma
        q = variance_array(q)
        x = q / (1 + q)  # asin(x) near 1 from 1 - x = 1 / (1 + q)
        angle = np.where(x > 0.5, np.pi / 2 - 2 * np.arcsin(np.sqrt(0.5 / (1 + q))), np.arcsin(x))
        value = q / 4 + q / (2 * np.pi) * (angle + 2 * q / ((1 + q) * np.sqrt(1 + 2 * q)))
        return (value, 8 * np.finfo(float).eps * value) if return_error else value

    def torch(self, x):
        return _torch().nn.functional.gelu(x)

    def expr(self):
        import sympy as sp

        x = sp.Symbol("x")
        return x * (1 + sp.erf(x / sp.sqrt(2))) / 2

    def exact_moments(self) -> dict:
        import sympy as sp

        q = sp.Symbol("q", nonnegative=True)
        return {"second_moment": q / 4 + q / (2 * sp.pi) * (sp.asin(q / (1 + q))
                                                           + 2 * q / ((1 + q) * sp.sqrt(1 + 2 * q)))}


class SymbolicActivation(Activation):
    """A user's activation given as a SymPy expression in one symbol (moments by quadrature)."""

    def __init__(self, expression, symbol):
        import sympy as sp

        super().__init__()
        self._expression, self._symbol = expression, symbol
        self.name = str(expression)
        self._phi = sp.lambdify(symbol, expression, "numpy")
        self._dphi = sp.lambdify(symbol, sp.diff(expression, symbol), "numpy")
        self.bounded = False

    def _eval(self, fn, u):
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            return np.broadcast_to(np.asarray(fn(u), dtype=float), np.shape(u))

    def phi(self, u):
        return self._eval(self._phi, u)

    def dphi(self, u):
        return self._eval(self._dphi, u)

    def expr(self):
        return self._expression

    def __eq__(self, other) -> bool:
        return isinstance(other, SymbolicActivation) and self._expression == other._expression

    def __hash__(self) -> int:
        return hash(("sym", self._expression))


class CallableActivation(Activation):
    """A user's activation given as a function of a torch tensor (or of a NumPy array).

    The derivative comes from torch's autograd when the function accepts a tensor, else from
    a central difference (documented accuracy about 1e-10).
    """

    def __init__(self, func):
        super().__init__()
        self._func = func
        self.name = getattr(func, "__name__", type(func).__name__)
        self._uses_torch = self._accepts_torch()

    def _accepts_torch(self) -> bool:
        try:
            import torch
        except ImportError:
            return False
        try:
            out = self._func(torch.zeros(2, dtype=torch.float64))
        except Exception:  # a NumPy-only function
            return False
        return isinstance(out, torch.Tensor)

    def phi(self, u):
        u = np.asarray(u, dtype=float)
        if self._uses_torch:
            import torch

            with torch.no_grad():
                return self._func(torch.from_numpy(np.ascontiguousarray(u))).numpy()
        return np.asarray(self._func(u), dtype=float)

    def dphi(self, u):
        u = np.asarray(u, dtype=float)
        if self._uses_torch:
            import torch

            x = torch.from_numpy(np.ascontiguousarray(u)).requires_grad_(True)
            (grad,) = torch.autograd.grad(self._func(x).sum(), x)
            return grad.detach().numpy()
        h = 1e-5 * np.maximum(1.0, np.abs(u))
        return (self.phi(u + h) - self.phi(u - h)) / (2 * h)

    def torch(self, x):
        if not self._uses_torch:
            raise ParameterError(f"{self.name} does not accept torch tensors")
        return self._func(x)

    def __eq__(self, other) -> bool:
        return isinstance(other, CallableActivation) and self._func is other._func

    def __hash__(self) -> int:
        return hash(("callable", id(self._func)))
