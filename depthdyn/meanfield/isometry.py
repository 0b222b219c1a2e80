"""The spectrum of ``J J^T`` at initialisation by free probability (dynamical isometry).

For the plain chain ``h_{l+1} = W_l phi(h_l) + b_l`` the input-output Jacobian is
``J = W_L D_{L-1} ... W_1 D_0`` with ``D_l = diag(phi'(h_l))``. In the wide limit the factors
are asymptotically free and the S-transforms multiply (Pennington, Schoenholz & Ganguli 2017):

.. math::

    S_{JJ^T}(w) = \\prod_l S_{W_l^T W_l}(w) \\, S_{D_l^2}(w),

with ``S = 1 / (sw2 (1 + w))`` for Gaussian ``W`` (entries ``N(0, sw2/N)``: Marchenko–Pastur
at ratio 1) and ``S = 1/sw2`` for ``sqrt(sw2)`` times a Haar orthogonal ``W``. Everything
here is a truncated power series with exact rational coefficients (``fractions.Fraction``)
when the inputs are rational: the moment series ``psi(z) = sum_k m_k z^k``, its
compositional inverse ``chi``, ``S(w) = chi(w) (1 + w) / w``. The moments of ``D^2`` at the
fixed point, ``mu_k = E[phi'(sqrt(q*) z)^(2k)]``, are the input.

:func:`jacobian_density` gives the density for ``D^2`` with two values ``{0, 1}`` (ReLU:
``p = 1/2``; linear: ``p = 1``; hard tanh: ``p = P(|u| < 1)``), where ``chi`` is rational
and ``chi(psi) = 1/x`` a polynomial equation of degree ``<= L + 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import DomainError, ParameterError
from ..records import Record
from .checks import as_count, as_real, as_variance

__all__ = ["JacobianMoments", "jacobian_moments", "isometry_score", "jacobian_density", "WEIGHTS"]

#: The weight ensembles.
WEIGHTS = ("gaussian", "orthogonal")


def _mul(a, b, n):
    out = [0] * n
    for i, x in enumerate(a[:n]):
        if x:
            for j, y in enumerate(b[: n - i]):
                out[i + j] += x * y
    return out


def _inv(a, n):
    """1 / a for a power series with a[0] != 0."""
    out = [0] * n
    out[0] = 1 / a[0] if not isinstance(a[0], int) else Fraction(1, a[0])
    for k in range(1, n):
        s = sum(a[j] * out[k - j] for j in range(1, min(k, len(a) - 1) + 1))
        out[k] = -s * out[0]
    return out


def _revert(f, n):
    """Compositional inverse g of f(z) = f1 z + f2 z^2 + ... (list f[0] = 0), to order n - 1."""
    g = [0] * n
    g[1] = 1 / f[1] if not isinstance(f[1], int) else Fraction(1, f[1])
    # g(f(z)) = z, solved order by order: compose g with f using powers of f.
    powers = [[1] + [0] * (n - 1)]
    for _ in range(1, n):
        powers.append(_mul(powers[-1], f, n))
    for k in range(2, n):
        s = sum(g[j] * powers[j][k] for j in range(1, k))
        g[k] = -s * g[1] ** k
    return g


def _s_from_moments(m, n):
    """S-transform series (coefficients of w^0..w^(n-2)) from moments m[1..n-1]."""
    psi = [0] + list(m[1:n])
    chi = _revert(psi, n)  # chi[1] w + chi[2] w^2 ...
    over_w = chi[1:] + [0]  # chi(w) / w
    return _mul(over_w, [1, 1], n - 1)


def _moments_from_s(s, n):
    """Moments m[1..n-1] from an S-transform series."""
    chi_over_w = _mul(s, _inv([1, 1], n - 1), n - 1)  # S(w) / (1 + w)
    chi = [0] + chi_over_w[: n - 1]
    return _revert(chi, n)


def _exact(value, name, *, positive=True):
    """Integers, Fractions and SymPy rationals stay exact; anything else becomes a checked float."""
    exact = None
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
        exact = Fraction(value)
    elif type(value).__module__.startswith("sympy") and getattr(value, "is_Rational", False):
        exact = Fraction(int(value.p), int(value.q))
    if exact is None:
        return as_real(value, name, low=0, low_open=positive)
    if exact < 0 or (positive and exact == 0):
        raise DomainError(f"{name} must be {'> 0' if positive else '>= 0'}, got {value}")
    return exact


@dataclass(frozen=True)
class JacobianMoments(Record):
    """Moments ``m_k = tr((J J^T)^k) / N``, ``k = 1..order``, of the Jacobian at initialisation."""

    weights: str
    depth: int
    sw2: object
    moments: tuple

    @property
    def score(self):
        """``m_2 / m_1^2 - 1``: the normalised spectral variance (0 for exact dynamical isometry)."""
        return self.moments[1] / self.moments[0] ** 2 - 1

    def _text(self) -> str:
        ms = ", ".join(f"m{k + 1} = {m}" for k, m in enumerate(self.moments))
        return f"J J^T moments ({self.weights} weights, depth {self.depth}, sw2 = {self.sw2}): {ms}"

    def _latex(self) -> str:
        return ",\\; ".join(f"m_{{{k + 1}}} = {m}" for k, m in enumerate(self.moments))


def jacobian_moments(d2_moments, sw2, *, depth: int, weights: str = "gaussian", order: int | None = None):
    """Moments of ``J J^T`` for ``depth`` layers at a fixed point (free multiplicative convolution).

    Parameters
    ----------
    d2_moments : sequence
        ``mu_1, ..., mu_K``: ``mu_k = E[phi'(h)^(2k)]`` at the fixed point (``mu_1 > 0``).
        Integers, ``Fraction`` or SymPy rationals give exact moments.
    sw2 : number
        Weight variance (``> 0``).
    depth : int
        Number of layers ``L`` (factors ``W D``).
    weights : {"gaussian", "orthogonal"}
    order : int, optional
        How many moments (at most ``K``, the default).

    Returns
    -------
    JacobianMoments

    Examples
    --------
    Linear network (``phi' = 1``), two Gaussian layers: the Fuss–Catalan numbers 1, 3, 12.

    >>> jacobian_moments([1, 1, 1], 1, depth=2).moments
    (Fraction(1, 1), Fraction(3, 1), Fraction(12, 1))
    """
    if weights not in WEIGHTS:
        raise ParameterError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    depth = as_count(depth, "depth", 10**6)
    mu = [_exact(m, f"d2_moments[{i}]") for i, m in enumerate(d2_moments)]  # mu_k > 0
    if not mu:
        raise ParameterError("d2_moments must hold at least mu_1 = E[phi'^2]")
    K = len(mu) if order is None else as_count(order, "order", len(mu))
    sw2 = _exact(sw2, "sw2")
    n = K + 1
    s_d = _s_from_moments([0] + mu[:K], n)
    # S-transform of W^T W: 1 / (sw2 (1 + w)) (Gaussian) or 1 / sw2 (orthogonal)
    s_w = [1 / sw2] + [0] * (n - 2) if weights == "orthogonal" else [(-1) ** j / sw2 for j in range(n - 1)]
    layer = _mul(s_d, s_w, n - 1)
    total = [1] + [0] * (n - 2)
    for _ in range(depth):
        total = _mul(total, layer, n - 1)
    m = _moments_from_s(total, n)
    return JacobianMoments(weights, depth, sw2, tuple(m[1 : K + 1]))


def isometry_score(d2_moments, sw2, *, depth: int, weights: str = "gaussian"):
    """``m_2 / m_1^2 - 1`` of ``J J^T`` (0 for perfect dynamical isometry; grows with depth).

    Closed form (from the series): ``L (mu_2 / mu_1^2 - 1 + s)`` with ``s = 1`` for Gaussian
    and ``s = 0`` for orthogonal weights, plus nothing else: the score is linear in depth.
    """
    return jacobian_moments(list(d2_moments)[:2], sw2, depth=depth, weights=weights, order=2).score


def jacobian_density(x, *, p, sw2, depth: int, weights: str = "gaussian", eta: float = 1e-9):
    """Density of the eigenvalues of ``J J^T`` for ``D^2 in {0, 1}`` with ``P(D^2 = 1) = p``.

    Solves ``chi(psi) = 1/x`` (a polynomial of degree ``L + 1`` for Gaussian, ``L`` for
    orthogonal weights) for all ``x`` at once (batched companion eigenvalues) and returns
    ``rho(x) = -Im psi(1/(x + i eta)) / (pi x)`` on the physical branch, followed down from
    far above the real axis (where ``psi ~ m_1 / zeta`` is the root nearest 0). An atom
    at 0 (mass ``1 - p`` and more, for ``p < 1``) is not part of the returned density.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise ParameterError("x must be a 1-d array of positive numbers")
    p = as_real(p, "p", low=0, high=1, low_open=True)
    sw2 = as_variance(sw2, "sw2", positive=True)
    depth = as_count(depth, "depth", 64)
    if weights not in WEIGHTS:
        raise ParameterError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    P = np.polynomial.Polynomial
    # per layer S = (1 + psi) / (sw2 (p + psi)) [orthogonal] or 1 / (sw2 (p + psi)) [Gaussian];
    # chi = S_total psi / (1 + psi) = w  <=>  psi (1 + psi)^a - w sw2^L (p + psi)^L = 0
    a = depth - 1 if weights == "orthogonal" else 0
    left = P([0, 1]) * P([1, 1]) ** a
    right = sw2**depth * P([p, 1]) ** depth
    if weights == "gaussian":
        right = right * P([1, 1])
    deg = max(left.degree(), right.degree())
    lc = np.zeros(deg + 1)
    lc[: left.degree() + 1] = left.coef
    rc = np.zeros(deg + 1)
    rc[: right.degree() + 1] = right.coef

    def all_roots(w):
        coef = lc[None, :] - w[:, None] * rc[None, :]  # ascending powers, one row per x
        comp = np.zeros((w.size, deg, deg), dtype=complex)
        comp[:, 0, :] = -coef[:, -2::-1] / coef[:, -1:]
        comp[:, 1:, :-1] = np.eye(deg - 1)
        return np.linalg.eigvals(comp)

    # Continuation in the height above the axis: far above it w = 1/zeta is small and the
    # physical root is the one near psi = m_1 w ~ 0; each lower step keeps the root nearest
    # the previous one (a loop over heights, vectorised over x).
    rows = np.arange(x.size)
    psi = None
    for height in np.geomspace(10 * (1 + x.max()), eta, 40):
        roots = all_roots(1 / (x + 1j * height))
        ref = 0.0 if psi is None else psi[:, None]
        psi = roots[rows, np.argmin(np.abs(roots - ref), axis=1)]
    rho = np.clip(-psi.imag / (np.pi * x), 0.0, None)
    if not np.all(np.isfinite(rho)):
        raise DomainError("the density could not be evaluated at some x (near a root collision); move x")
    return rho
